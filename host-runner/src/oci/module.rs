//! The parts of a WebAssembly binary a host looks at before instantiating it: whether it is a
//! core module (binary format version 1) rather than a component, its export names, and its
//! custom sections (WebAssembly core spec, "Binary Format", sections 5.5.2 to 5.5.10).

/// A core module's export names and custom sections, or why it is not one.
pub(super) struct Module<'a> {
    pub(super) exports: Vec<String>,
    pub(super) custom: Vec<(String, &'a [u8])>,
}

const HEADER: [u8; 8] = [0, b'a', b's', b'm', 1, 0, 0, 0];

pub(super) fn parse(wasm: &[u8]) -> Result<Module<'_>, String> {
    match wasm.get(..8) {
        Some(header) if header == HEADER => {}
        Some([0, b'a', b's', b'm', ..]) => {
            return Err("a WebAssembly component, not a core module".into());
        }
        _ => return Err("not WebAssembly (no \\0asm header)".into()),
    }
    let mut module = Module { exports: Vec::new(), custom: Vec::new() };
    let mut rest = &wasm[8..];
    while let Some((&id, after)) = rest.split_first() {
        let (size, after) = leb128(after)?;
        let body = after.get(..size).ok_or("a section runs past the end of the module")?;
        match id {
            0 => {
                let (len, name) = leb128(body)?;
                let text = name.get(..len).ok_or("a custom section name runs past its section")?;
                let text = std::str::from_utf8(text).map_err(|_| "a section name is not UTF-8")?;
                module.custom.push((text.to_owned(), &name[len..]));
            }
            7 => {
                let (count, mut items) = leb128(body)?;
                for _ in 0..count {
                    let (len, after) = leb128(items)?;
                    let name = after.get(..len).ok_or("an export name runs past its section")?;
                    module.exports.push(String::from_utf8_lossy(name).into_owned());
                    // The export's kind byte, then its index.
                    let (_, after) = leb128(after.get(len + 1..).ok_or("a truncated export")?)?;
                    items = after;
                }
            }
            _ => {}
        }
        rest = &after[size..];
    }
    Ok(module)
}

/// An unsigned LEB128 number (at most 32 bits) and what follows it.
fn leb128(bytes: &[u8]) -> Result<(usize, &[u8]), String> {
    let mut value: u64 = 0;
    for (i, byte) in bytes.iter().take(5).enumerate() {
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            let value = usize::try_from(value).map_err(|_| "a LEB128 number too large")?;
            return Ok((value, &bytes[i + 1..]));
        }
    }
    Err("a truncated or oversized LEB128 number".into())
}
