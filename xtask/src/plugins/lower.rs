//! Rewrites every `memory.copy` and `memory.fill` of a core module into a call of an appended
//! function that does the same with plain loads and stores, so the module runs correctly in
//! Traefik 3.7, whose wazero calls Go's `runtime.memmove` for them.
//!
//! The defect, proved in Traefik 3.7.15 with the probe `tests/data/wasm/bulk-memory-probe.wat`
//! (`GET /<op>/<n>` runs the instruction on `n` bytes with values live across it and answers
//! `ok`, `registers` or `memory`): Traefik 3.7.15 embeds wazero 1.8.0 and is built with
//! Go 1.26. wazero's optimizing compiler lowers `memory.copy`, `memory.fill` (copy-doubling),
//! `memory.init`, `table.copy`, `table.fill` and `table.init` into calls of Go's
//! `runtime.memmove` (`frontend/lower.go`, `callMemmove`), and its amd64 backend keeps values in
//! RDX across those calls (RDX is callee-saved in its ABI, `isa/amd64/abi.go`). Since Go 1.24
//! `memmove` uses DX on its forward path for copies of 2 KiB and more
//! (`runtime/memmove_amd64.s`), so whatever the compiled guest kept in RDX is garbage afterwards:
//! wazero #2375, fixed in wazero 1.9.0 by #2378 ("reserve dx when calling memmove"), which
//! Traefik 3.7 does not have. Measured on an AVX-512/ERMS/FSRM Xeon:
//! - `memory.copy` of 2 047 bytes: `ok`; of 2 048 bytes and more (forward, aligned
//!   destination): the Traefik process dies (SIGSEGV / `runtime: newstack`) because the round
//!   counter the probe keeps in RDX is lost. Overlapping copies with the destination above the
//!   source take memmove's backward path and come out right.
//! - `memory.fill` of 4 097 bytes and more: `memory` (its third doubling copy is 2 048 bytes and
//!   the loop variable wazero kept in RDX is lost), or a crash, depending on register allocation.
//! - The earlier fix, lowering only `memory.fill` into doubling `memory.copy`s (op `d` of the
//!   probe), fails the same way at 4 097 bytes: `memory.copy` is the defect, not `memory.fill`.
//! - Every op and size up to 1 MiB answers `ok` once lowered here.
//!
//! Rust's wasm32 standard library (prebuilt with bulk memory) and LLVM emit `memory.copy` for
//! every `memcpy`/`memmove` and `memory.fill` for every `memset`, so the guest hit this as soon as
//! it moved a request body of 2 KiB or more: `dlmalloc` traps on a corrupted heap, or Traefik
//! faults. The appended functions take the operands in the instruction's order, check bounds
//! first as the instruction does (trapping before any byte is written), copy eight bytes at a
//! time (forward when the destination is below the source, backward otherwise, as `memmove`),
//! and never leave WebAssembly, so no host register convention is involved.

use std::convert::Infallible;

use anyhow::{Context, ensure};
use wasm_encoder::reencode::{Error, Reencode, utils};
use wasm_encoder::{
    BlockType, CodeSection, Function, FunctionSection, Instruction, MemArg, MemArgTarget,
    TypeSection, ValType,
};
use wasmparser::{CodeSectionReader, FunctionSectionReader, Operator, Payload, TypeSectionReader};

/// The module with every `memory.copy` and `memory.fill` of memory 0 lowered. Fails on the other
/// bulk instructions wazero also runs through `memmove` (`memory.init`, `table.*`): Rust guests
/// do not emit them, and a module that does needs a lowering of its own.
pub(crate) fn lower_bulk_memory(module: &[u8]) -> anyhow::Result<Vec<u8>> {
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
    let unsupported = bulk_instructions(module)?.unsupported;
    ensure!(unsupported == 0, "{unsupported} memory.init or table bulk instructions to lower");
    let mut lower = Lower { ty: types, copy: functions, fill: functions + 1 };
    let mut out = wasm_encoder::Module::new();
    lower
        .parse_core_module(&mut out, wasmparser::Parser::new(0), module)
        .map_err(|err| anyhow::anyhow!("cannot rewrite the module: {err:?}"))?;
    let lowered = out.finish();
    wasmparser::validate(&lowered).context("the rewritten module does not validate")?;
    let left = bulk_instructions(&lowered)?;
    ensure!(left.lowered == 0, "{} memory.copy or memory.fill left after lowering", left.lowered);
    Ok(lowered)
}

/// Counts of bulk instructions that wazero 1.8 compiles into `memmove` calls.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct BulkInstructions {
    /// `memory.copy` and `memory.fill`.
    pub(crate) lowered: usize,
    /// `memory.init`, `table.copy`, `table.fill`, `table.init`.
    pub(crate) unsupported: usize,
}

pub(crate) fn bulk_instructions(module: &[u8]) -> anyhow::Result<BulkInstructions> {
    let mut counts = BulkInstructions::default();
    for payload in wasmparser::Parser::new(0).parse_all(module) {
        if let Payload::CodeSectionEntry(body) = payload? {
            for operator in body.get_operators_reader()? {
                match operator? {
                    Operator::MemoryCopy { .. } | Operator::MemoryFill { .. } => {
                        counts.lowered += 1;
                    }
                    Operator::MemoryInit { .. }
                    | Operator::TableCopy { .. }
                    | Operator::TableFill { .. }
                    | Operator::TableInit { .. } => counts.unsupported += 1,
                    _ => {}
                }
            }
        }
    }
    Ok(counts)
}

struct Lower {
    /// Index of the appended `(i32, i32, i32) -> ()` type.
    ty: u32,
    /// Index of the appended copy function (after every imported and defined one).
    copy: u32,
    /// Index of the appended fill function, right after the copy function.
    fill: u32,
}

impl Reencode for Lower {
    type Error = Infallible;

    fn instruction<'a>(
        &mut self,
        arg: Operator<'a>,
    ) -> Result<Instruction<'a>, Error<Self::Error>> {
        match arg {
            // Same operands in the same order: (destination, source, length) and
            // (destination, value, length).
            Operator::MemoryCopy { dst_mem: 0, src_mem: 0 } => Ok(Instruction::Call(self.copy)),
            Operator::MemoryFill { mem: 0 } => Ok(Instruction::Call(self.fill)),
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
        functions.function(self.ty);
        functions.function(self.ty);
        Ok(())
    }

    fn parse_code_section(
        &mut self,
        code: &mut CodeSection,
        section: CodeSectionReader<'_>,
    ) -> Result<(), Error<Self::Error>> {
        utils::parse_code_section(self, code, section)?;
        code.function(&copy_body());
        code.function(&fill_body());
        Ok(())
    }
}

use Instruction as I;

// The parameters of both functions, then their locals.
const DEST: u32 = 0;
const SRC_OR_VALUE: u32 = 1;
const LEN: u32 = 2;
const AT: u32 = 3;
const PATTERN: u32 = 4;

fn mem() -> MemArg {
    MemArg { offset: 0, align: 0, target: MemArgTarget::Memory(0), ordering: None }
}

/// `unreachable` unless `[address, address + len)` lies in memory 0 (computed in 64 bits).
fn bounds_check(address: u32) -> Vec<Instruction<'static>> {
    vec![
        I::LocalGet(address),
        I::I64ExtendI32U,
        I::LocalGet(LEN),
        I::I64ExtendI32U,
        I::I64Add,
        I::MemorySize(0),
        I::I64ExtendI32U,
        I::I64Const(16),
        I::I64Shl,
        I::I64GtU,
        I::If(BlockType::Empty),
        I::Unreachable,
        I::End,
    ]
}

/// `local.get a; local.get b; i32.add`.
fn add(a: u32, b: u32) -> [Instruction<'static>; 3] {
    [I::LocalGet(a), I::LocalGet(b), I::I32Add]
}

/// A `block { loop { br_if 1 (exit); body; br 0 } }`.
fn while_not(
    exit: impl IntoIterator<Item = Instruction<'static>>,
    body: impl IntoIterator<Item = Instruction<'static>>,
) -> Vec<Instruction<'static>> {
    let mut out = vec![I::Block(BlockType::Empty), I::Loop(BlockType::Empty)];
    out.extend(exit);
    out.push(I::BrIf(1));
    out.extend(body);
    out.extend([I::Br(0), I::End, I::End]);
    out
}

/// `i = i + step` (or `- step`).
fn step(by: i32) -> [Instruction<'static>; 4] {
    [I::LocalGet(AT), I::I32Const(by), I::I32Add, I::LocalSet(AT)]
}

/// Moves the word (or byte) at `src + i` to `dest + i`.
fn move_at(word: bool) -> Vec<Instruction<'static>> {
    let mut out = add(DEST, AT).to_vec();
    out.extend(add(SRC_OR_VALUE, AT));
    if word {
        out.extend([I::I64Load(mem()), I::I64Store(mem())]);
    } else {
        out.extend([I::I32Load8U(mem()), I::I32Store8(mem())]);
    }
    out
}

/// `copy(dest, src, len)` with `memory.copy`'s semantics (overlap included).
fn copy_body() -> Function {
    let mut body = bounds_check(DEST);
    body.extend(bounds_check(SRC_OR_VALUE));
    // Destination below the source: forward, words then the tail bytes; a write never reaches
    // a byte still to be read.
    body.extend([I::LocalGet(DEST), I::LocalGet(SRC_OR_VALUE), I::I32LeU, I::If(BlockType::Empty)]);
    body.extend(while_not(
        // len - i < 8
        [I::LocalGet(LEN), I::LocalGet(AT), I::I32Sub, I::I32Const(8), I::I32LtU],
        move_at(true).into_iter().chain(step(8)),
    ));
    body.extend(while_not(
        [I::LocalGet(AT), I::LocalGet(LEN), I::I32GeU],
        move_at(false).into_iter().chain(step(1)),
    ));
    // Otherwise backward from the end, words then the head bytes.
    body.extend([I::Else, I::LocalGet(LEN), I::LocalSet(AT)]);
    body.extend(while_not(
        [I::LocalGet(AT), I::I32Const(8), I::I32LtU],
        step(-8).into_iter().chain(move_at(true)),
    ));
    body.extend(while_not(
        [I::LocalGet(AT), I::I32Eqz],
        step(-1).into_iter().chain(move_at(false)),
    ));
    body.extend([I::End, I::End]);
    let mut f = Function::new([(1, ValType::I32)]);
    for instruction in &body {
        f.instruction(instruction);
    }
    f
}

/// `fill(dest, value, len)`: the value's low byte in every byte, eight at a time.
fn fill_body() -> Function {
    let mut body = bounds_check(DEST);
    body.extend([
        I::LocalGet(SRC_OR_VALUE),
        I::I32Const(0xff),
        I::I32And,
        I::I64ExtendI32U,
        I::I64Const(0x0101_0101_0101_0101),
        I::I64Mul,
        I::LocalSet(PATTERN),
    ]);
    let mut store_word = add(DEST, AT).to_vec();
    store_word.extend([I::LocalGet(PATTERN), I::I64Store(mem())]);
    body.extend(while_not(
        [I::LocalGet(LEN), I::LocalGet(AT), I::I32Sub, I::I32Const(8), I::I32LtU],
        store_word.into_iter().chain(step(8)),
    ));
    let mut store_byte = add(DEST, AT).to_vec();
    store_byte.extend([I::LocalGet(SRC_OR_VALUE), I::I32Store8(mem())]);
    body.extend(while_not(
        [I::LocalGet(AT), I::LocalGet(LEN), I::I32GeU],
        store_byte.into_iter().chain(step(1)),
    ));
    body.push(I::End);
    let mut f = Function::new([(1, ValType::I32), (1, ValType::I64)]);
    for instruction in &body {
        f.instruction(instruction);
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A module with one function `(i32, i32, i32)` running `instructions` on its parameters.
    fn module(instructions: &[Instruction<'_>]) -> Vec<u8> {
        let mut types = TypeSection::new();
        types.ty().function([ValType::I32, ValType::I32, ValType::I32], []);
        let mut functions = FunctionSection::new();
        functions.function(0);
        let mut memories = wasm_encoder::MemorySection::new();
        memories.memory(wasm_encoder::MemoryType {
            minimum: 1,
            maximum: None,
            memory64: false,
            shared: false,
            page_size_log2: None,
        });
        let mut code = CodeSection::new();
        let mut f = Function::new([]);
        for instruction in instructions {
            f.instruction(instruction);
        }
        f.instruction(&I::End);
        code.function(&f);
        let mut module = wasm_encoder::Module::new();
        module.section(&types).section(&functions).section(&memories).section(&code);
        module.finish()
    }

    fn check(instructions: &[Instruction<'_>], expected: Result<BulkInstructions, &str>) {
        let lowered = lower_bulk_memory(&module(instructions))
            .map(|lowered| bulk_instructions(&lowered).expect("counts"))
            .map_err(|err| err.to_string());
        assert_eq!(lowered, expected.map_err(str::to_owned));
    }

    #[test]
    fn copies_and_fills_become_calls_other_bulk_instructions_are_refused() {
        let args = [I::LocalGet(0), I::LocalGet(1), I::LocalGet(2)];
        let mut both = args.to_vec();
        both.push(I::MemoryCopy { src_mem: 0, dst_mem: 0 });
        both.extend(args.clone());
        both.push(I::MemoryFill(0));
        check(&both, Ok(BulkInstructions::default()));
        check(&[], Ok(BulkInstructions::default()));
        let init = [
            I::LocalGet(0),
            I::LocalGet(1),
            I::LocalGet(2),
            I::MemoryInit { mem: 0, data_index: 0 },
        ];
        check(&init, Err("1 memory.init or table bulk instructions to lower"));
    }
}
