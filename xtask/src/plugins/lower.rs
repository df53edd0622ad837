//! Rewrites every `memory.fill` of a core module into a call of an appended function that
//! fills with one byte store and doubling `memory.copy`s.
//!
//! Why: Traefik 3.7 runs http-wasm guests on wazero 1.8.0, whose compiled `memory.fill` is
//! broken (found with `.wat` probes in Traefik 3.7.15: a fill of 198 976 bytes leaves every
//! byte past the first 4 KiB untouched, a fill of 4 097 bytes and more at a higher address
//! segfaults the whole Traefik process), while `memory.copy` works. Rust's wasm32 standard
//! library and LLVM emit `memory.fill` for every `memset` (bulk memory is on by default), and
//! the corrupted heap that follows traps in `dlmalloc` on the first request body of about
//! 2 KiB. The replacement takes the instruction's operands in the same order and has the same
//! effect, so nothing else changes.

use std::convert::Infallible;

use anyhow::Context;
use wasm_encoder::reencode::{Error, Reencode, utils};
use wasm_encoder::{
    BlockType, CodeSection, Function, FunctionSection, Instruction, MemArg, MemArgTarget,
    TypeSection, ValType,
};
use wasmparser::{CodeSectionReader, FunctionSectionReader, Operator, Payload, TypeSectionReader};

/// The module with every `memory.fill` of memory 0 lowered.
pub(crate) fn lower_memory_fill(module: &[u8]) -> anyhow::Result<Vec<u8>> {
    let (mut types, mut functions) = (0u32, 0u32);
    for payload in wasmparser::Parser::new(0).parse_all(module) {
        match payload.context("not a WebAssembly module")? {
            Payload::TypeSection(section) => types = section.count(),
            Payload::ImportSection(section) => {
                for import in section.into_imports() {
                    if matches!(import?.ty, wasmparser::TypeRef::Func(_)) {
                        functions += 1;
                    }
                }
            }
            Payload::FunctionSection(section) => functions += section.count(),
            _ => {}
        }
    }
    let mut lower = Lower { fill_type: types, fill_function: functions };
    let mut out = wasm_encoder::Module::new();
    lower
        .parse_core_module(&mut out, wasmparser::Parser::new(0), module)
        .map_err(|err| anyhow::anyhow!("cannot rewrite the module: {err:?}"))?;
    let lowered = out.finish();
    wasmparser::validate(&lowered).context("the rewritten module does not validate")?;
    Ok(lowered)
}

/// How many `memory.fill` instructions a module has.
pub(crate) fn memory_fills(module: &[u8]) -> anyhow::Result<usize> {
    let mut fills = 0;
    for payload in wasmparser::Parser::new(0).parse_all(module) {
        if let Payload::CodeSectionEntry(body) = payload? {
            for operator in body.get_operators_reader()? {
                fills += usize::from(matches!(operator?, Operator::MemoryFill { .. }));
            }
        }
    }
    Ok(fills)
}

struct Lower {
    /// Index of the appended `(i32, i32, i32) -> ()` type.
    fill_type: u32,
    /// Index of the appended fill function (after every imported and defined one).
    fill_function: u32,
}

impl Reencode for Lower {
    type Error = Infallible;

    fn instruction<'a>(
        &mut self,
        arg: Operator<'a>,
    ) -> Result<Instruction<'a>, Error<Self::Error>> {
        match arg {
            // Same operands (destination, value, length), same order.
            Operator::MemoryFill { mem: 0 } => Ok(Instruction::Call(self.fill_function)),
            other => utils::instruction(self, other),
        }
    }

    fn parse_type_section(
        &mut self,
        types: &mut TypeSection,
        section: TypeSectionReader<'_>,
    ) -> Result<(), Error<Self::Error>> {
        utils::parse_type_section(self, types, section)?;
        types.ty().function([ValType::I32, ValType::I32, ValType::I32], []);
        Ok(())
    }

    fn parse_function_section(
        &mut self,
        functions: &mut FunctionSection,
        section: FunctionSectionReader<'_>,
    ) -> Result<(), Error<Self::Error>> {
        utils::parse_function_section(self, functions, section)?;
        functions.function(self.fill_type);
        Ok(())
    }

    fn parse_code_section(
        &mut self,
        code: &mut CodeSection,
        section: CodeSectionReader<'_>,
    ) -> Result<(), Error<Self::Error>> {
        utils::parse_code_section(self, code, section)?;
        code.function(&fill_body());
        Ok(())
    }
}

/// `fill(dest, value, len)`: store the first byte, then copy what is filled onto what follows,
/// doubling each time.
fn fill_body() -> Function {
    use Instruction as I;
    const DEST: u32 = 0;
    const VALUE: u32 = 1;
    const LEN: u32 = 2;
    const DONE: u32 = 3;
    let mut f = Function::new([(1, ValType::I32)]);
    for instruction in [
        // A fill of nothing writes nothing.
        I::LocalGet(LEN),
        I::I32Eqz,
        I::If(BlockType::Empty),
        I::Return,
        I::End,
        I::LocalGet(DEST),
        I::LocalGet(VALUE),
        I::I32Store8(MemArg {
            offset: 0,
            align: 0,
            target: MemArgTarget::Memory(0),
            ordering: None,
        }),
        I::I32Const(1),
        I::LocalSet(DONE),
        I::Block(BlockType::Empty),
        I::Loop(BlockType::Empty),
        // while done < len
        I::LocalGet(DONE),
        I::LocalGet(LEN),
        I::I32GeU,
        I::BrIf(1),
        // memory.copy(dest + done, dest, min(done, len - done))
        I::LocalGet(DEST),
        I::LocalGet(DONE),
        I::I32Add,
        I::LocalGet(DEST),
        I::LocalGet(DONE),
        I::LocalGet(LEN),
        I::LocalGet(DONE),
        I::I32Sub,
        I::LocalGet(DONE),
        I::LocalGet(LEN),
        I::LocalGet(DONE),
        I::I32Sub,
        I::I32LtU,
        I::Select,
        I::MemoryCopy { src_mem: 0, dst_mem: 0 },
        // done = min(2 * done, len)
        I::LocalGet(DONE),
        I::LocalGet(DONE),
        I::I32Add,
        I::LocalGet(LEN),
        I::LocalGet(DONE),
        I::LocalGet(DONE),
        I::I32Add,
        I::LocalGet(LEN),
        I::I32LtU,
        I::Select,
        I::LocalSet(DONE),
        I::Br(0),
        I::End,
        I::End,
        I::End,
    ] {
        f.instruction(&instruction);
    }
    f
}
