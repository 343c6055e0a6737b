//! The parser: a GGUF header read field by field from any `Read`, every size checked against
//! [`Limits`] and against the bytes the file still has before anything is allocated.
//!
//! The reader is sequential (no seek), so a local file, a buffer and the Hub's ranged reads
//! (the main crate's block reader) go through the same code; it stops at the end of the tensor
//! table and never asks for a byte of tensor data.

use std::io::Read;

use super::ggml;
use super::value::{self, Array, Strings, Value};
use super::{GgufHeader, Limits, TensorInfo, DEFAULT_ALIGNMENT};
use crate::{Error, Result};

/// Where in the header a field is, for messages: `key 3 (`general.name`)`, `tensor 7`.
#[derive(Clone, Copy)]
enum At<'a> {
    Preamble,
    Key(u64, Option<&'a str>),
    Tensor(u64, Option<&'a str>),
}

impl std::fmt::Display for At<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            At::Preamble => f.write_str("the file's preamble (magic, version, counts)"),
            At::Key(i, None) => write!(f, "metadata key {i}"),
            At::Key(i, Some(k)) => write!(f, "metadata key {i} (`{k}`)"),
            At::Tensor(i, None) => write!(f, "tensor {i} of the tensor table"),
            At::Tensor(i, Some(n)) => write!(f, "tensor {i} (`{n}`) of the tensor table"),
        }
    }
}

/// The file's bytes, read a block ([`READ_BLOCK`](super::READ_BLOCK)) at a time, so the bytes
/// read are the header plus at most one block; fields are sliced out of the buffer.
struct Blocks<R> {
    r: R,
    buf: Vec<u8>,
    /// Consumed bytes at the front of `buf`.
    at: usize,
    eof: bool,
}

impl<R: Read> Blocks<R> {
    /// Makes `n` unconsumed bytes available; `false` when the reader ends first. `n` was
    /// checked against the caps and the file size by the caller, so the buffer stays bounded.
    fn fill(&mut self, n: usize) -> std::io::Result<bool> {
        if self.buf.len() - self.at >= n {
            return Ok(true);
        }
        self.buf.drain(..self.at);
        self.at = 0;
        while self.buf.len() < n && !self.eof {
            let old = self.buf.len();
            self.buf.resize(old + super::READ_BLOCK, 0);
            let mut got = 0;
            // Up to a block, but no more reads once `n` bytes are in: a reader that fetches on
            // demand (the Hub's ranges) is asked only for what the parser needs.
            while old + got < self.buf.len() && old + got < n {
                match self.r.read(&mut self.buf[old + got..]) {
                    Ok(0) => {
                        self.eof = true;
                        break;
                    }
                    Ok(k) => got += k,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        self.buf.truncate(old + got);
                        return Err(e);
                    }
                }
            }
            self.buf.truncate(old + got);
        }
        Ok(self.buf.len() - self.at >= n)
    }

    /// The next `n` bytes, consumed (after a successful `fill(n)`).
    fn take(&mut self, n: usize) -> &[u8] {
        let s = &self.buf[self.at..self.at + n];
        self.at += n;
        s
    }
}

pub(super) struct Parser<'a, R> {
    r: Blocks<R>,
    display: &'a str,
    file_size: u64,
    limits: Limits,
    /// Bytes consumed so far: the position in the file.
    pos: u64,
}

const HINT_CORRUPT: &str =
    "the file is truncated, corrupt or not GGUF: download it again, or convert it again with llama.cpp's convert_hf_to_gguf.py";
const HINT_CAP: &str = "check that the path names a GGUF model file; a real header is far smaller (a 150,000-token vocabulary takes a few MB)";

impl<'a, R: Read> Parser<'a, R> {
    pub(super) fn new(r: R, display: &'a str, file_size: u64, limits: Limits) -> Self {
        Parser {
            r: Blocks {
                r,
                buf: Vec::new(),
                at: 0,
                eof: false,
            },
            display,
            file_size,
            limits,
            pos: 0,
        }
    }

    fn invalid(&self, at: At, what: impl std::fmt::Display) -> Error {
        Error::new(format!(
            "`{}`: not a valid GGUF file: {at}: {what} (at byte {})",
            self.display, self.pos
        ))
        .with_hint(HINT_CORRUPT)
    }

    fn over_cap(&self, at: At, what: impl std::fmt::Display) -> Error {
        Error::new(format!(
            "`{}`: GGUF header refused: {at}: {what}",
            self.display
        ))
        .with_hint(HINT_CAP)
    }

    /// Refuses reading `n` more bytes when the file or the header cap has fewer left; said
    /// before the bytes are asked for, so no length from the file ever sizes an allocation
    /// that the file could not fill.
    fn room(&self, at: At, n: u64, what: &str) -> Result<()> {
        let end = u128::from(self.pos) + u128::from(n);
        if end > u128::from(self.file_size) {
            return Err(self.invalid(
                at,
                format_args!(
                    "{what} needs {n} bytes but the file ends at byte {} (truncated)",
                    self.file_size
                ),
            ));
        }
        if end > u128::from(self.limits.max_header_bytes) {
            return Err(self.over_cap(
                at,
                format_args!(
                    "{what} would take the header past {} bytes, the limit of a GGUF header here",
                    self.limits.max_header_bytes
                ),
            ));
        }
        Ok(())
    }

    fn bytes<const N: usize>(&mut self, at: At, what: &str) -> Result<[u8; N]> {
        let mut b = [0u8; N];
        b.copy_from_slice(self.slice(at, N as u64, what)?);
        Ok(b)
    }

    /// The next `n` bytes (checked against the caps and the file size first), consumed.
    fn slice(&mut self, at: At, n: u64, what: &str) -> Result<&[u8]> {
        self.room(at, n, what)?;
        match self.r.fill(n as usize) {
            Ok(true) => {}
            Ok(false) => {
                return Err(
                    self.invalid(at, format_args!("the file ended inside {what} (truncated)"))
                )
            }
            Err(e) => {
                return Err(Error::new(format!(
                    "`{}`: reading the GGUF header failed at {at}: {e}",
                    self.display
                ))
                .with_hint("check that the file is readable and the connection is up, then retry"))
            }
        }
        self.pos += n;
        Ok(self.r.take(n as usize))
    }

    fn u32(&mut self, at: At, what: &str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.bytes(at, what)?))
    }

    fn u64(&mut self, at: At, what: &str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.bytes(at, what)?))
    }

    /// A string: its u64 length, checked against the string cap and the bytes left, then its
    /// bytes.
    fn string(&mut self, at: At, what: &str, cap: u64) -> Result<String> {
        let n = self.string_len(at, what, cap)?;
        let b = self.slice(at, n, what)?;
        Ok(String::from_utf8_lossy(b).into_owned())
    }

    /// A string's u64 length, checked against `cap`.
    fn string_len(&mut self, at: At, what: &str, cap: u64) -> Result<u64> {
        let n = self.u64(at, what)?;
        if n > cap {
            return Err(self.over_cap(
                at,
                format_args!("{what} is {n} bytes long, over the {cap}-byte limit"),
            ));
        }
        Ok(n)
    }

    /// The magic, version and the two counts, each count checked against its cap.
    pub(super) fn preamble(&mut self) -> Result<(u32, u64, u64)> {
        let at = At::Preamble;
        let magic: [u8; 4] = self.bytes(at, "the 4-byte magic")?;
        if &magic != b"GGUF" {
            return Err(self.invalid(at, format_args!("the magic is {magic:02x?}, not `GGUF`")));
        }
        let version = self.u32(at, "the version")?;
        if version & 0xffff == 0 && version != 0 {
            return Err(self.invalid(
                at,
                format_args!("version {version} is big-endian or corrupt; llama.cpp reads little-endian GGUF only"),
            ));
        }
        if !(2..=3).contains(&version) {
            return Err(self.invalid(
                at,
                format_args!("version {version}; llama.cpp reads GGUF versions 2 and 3 (version 1 is no longer supported)"),
            ));
        }
        let n_tensors = self.u64(at, "the tensor count")?;
        let n_kv = self.u64(at, "the metadata count")?;
        if n_tensors > self.limits.max_tensors {
            return Err(self.over_cap(
                at,
                format_args!(
                    "the file says it has {n_tensors} tensors, over the limit of {}",
                    self.limits.max_tensors
                ),
            ));
        }
        if n_kv > self.limits.max_kv {
            return Err(self.over_cap(
                at,
                format_args!(
                    "the file says it has {n_kv} metadata keys, over the limit of {}",
                    self.limits.max_kv
                ),
            ));
        }
        Ok((version, n_tensors, n_kv))
    }

    /// One metadata key-value pair, the `i`th.
    pub(super) fn kv(&mut self, i: u64) -> Result<(String, Value)> {
        let key = self.string(At::Key(i, None), "the key", self.limits.max_key_bytes)?;
        if key.is_empty() {
            return Err(self.invalid(At::Key(i, None), "the key is empty"));
        }
        let at = At::Key(i, Some(&key));
        let ty = self.u32(at, "the value type")?;
        let value = if ty == value::ARRAY {
            let elem = self.u32(at, "the array's element type")?;
            let n = self.u64(at, "the array's length")?;
            Value::Array(self.array(at, elem, n)?)
        } else {
            self.scalar(at, ty)?
        };
        Ok((key, value))
    }

    fn array(&mut self, at: At, elem: u32, n: u64) -> Result<Array> {
        if elem == value::ARRAY {
            return Err(self.invalid(
                at,
                "an array of arrays; GGUF (llama.cpp's reader) has no nested arrays",
            ));
        }
        let Some(min) = value::min_size(elem) else {
            return Err(self.invalid(at, format_args!("unknown array element type {elem}")));
        };
        if n > self.limits.max_array {
            return Err(self.over_cap(
                at,
                format_args!(
                    "an array of {n} elements, over the limit of {}",
                    self.limits.max_array
                ),
            ));
        }
        // Each element takes at least `min` bytes: a length the rest of the file cannot hold is
        // refused here, before the vector is sized by it.
        self.room(at, n.saturating_mul(min), "the array")?;
        let n = n as usize;
        // A numeric array is one slice of `n * size` bytes, converted in place.
        macro_rules! nums {
            ($variant:ident, $t:ty) => {{
                const SIZE: usize = std::mem::size_of::<$t>();
                let b = self.slice(at, (n * SIZE) as u64, "the array")?;
                let v = b
                    .chunks_exact(SIZE)
                    .map(|c| <$t>::from_le_bytes(c.try_into().expect("chunks of SIZE")))
                    .collect();
                Array::$variant(v)
            }};
        }
        Ok(match elem {
            0 => nums!(U8, u8),
            1 => nums!(I8, i8),
            2 => nums!(U16, u16),
            3 => nums!(I16, i16),
            4 => nums!(U32, u32),
            5 => nums!(I32, i32),
            6 => nums!(F32, f32),
            7 => {
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    v.push(self.boolean(at)?);
                }
                Array::Bool(v)
            }
            value::STRING => {
                let mut v = Strings::with_capacity(n);
                for _ in 0..n {
                    let len =
                        self.string_len(at, "an array element", self.limits.max_string_bytes)?;
                    let b = self.slice(at, len, "an array element")?;
                    v.push(&String::from_utf8_lossy(b));
                }
                Array::Str(v)
            }
            10 => nums!(U64, u64),
            11 => nums!(I64, i64),
            _ => nums!(F64, f64),
        })
    }

    fn boolean(&mut self, at: At) -> Result<bool> {
        match self.bytes::<1>(at, "a bool")?[0] {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(self.invalid(at, format_args!("a bool of {b}, not 0 or 1"))),
        }
    }

    fn scalar(&mut self, at: At, ty: u32) -> Result<Value> {
        Ok(match ty {
            0 => Value::U8(u8::from_le_bytes(self.bytes(at, "the value")?)),
            1 => Value::I8(i8::from_le_bytes(self.bytes(at, "the value")?)),
            2 => Value::U16(u16::from_le_bytes(self.bytes(at, "the value")?)),
            3 => Value::I16(i16::from_le_bytes(self.bytes(at, "the value")?)),
            4 => Value::U32(self.u32(at, "the value")?),
            5 => Value::I32(i32::from_le_bytes(self.bytes(at, "the value")?)),
            6 => Value::F32(f32::from_le_bytes(self.bytes(at, "the value")?)),
            7 => Value::Bool(self.boolean(at)?),
            value::STRING => {
                Value::Str(self.string(at, "the value", self.limits.max_string_bytes)?)
            }
            10 => Value::U64(self.u64(at, "the value")?),
            11 => Value::I64(i64::from_le_bytes(self.bytes(at, "the value")?)),
            12 => Value::F64(f64::from_le_bytes(self.bytes(at, "the value")?)),
            _ => return Err(self.invalid(at, format_args!("unknown value type {ty}"))),
        })
    }

    /// One entry of the tensor table, the `i`th: name, dimensions, ggml type, offset. Refused
    /// as llama.cpp's `gguf_init_from_file_impl` refuses it: a name of 64 bytes or more
    /// (`GGML_MAX_NAME`), more than 4 dimensions, a negative dimension, an element count
    /// past `i64::MAX`, a row not a whole number of blocks.
    pub(super) fn tensor(&mut self, i: u64) -> Result<TensorInfo> {
        let name = self.string(
            At::Tensor(i, None),
            "the tensor name",
            self.limits.max_key_bytes,
        )?;
        let at = At::Tensor(i, Some(&name));
        if name.len() >= MAX_NAME {
            return Err(self.invalid(at, format_args!(
                "the name is {} bytes; llama.cpp refuses names of {MAX_NAME} bytes or more (GGML_MAX_NAME)", name.len())));
        }
        let n_dims = self.u32(at, "the dimension count")?;
        if n_dims > 4 {
            return Err(self.invalid(
                at,
                format_args!("{n_dims} dimensions; ggml tensors have at most 4"),
            ));
        }
        let mut dims = Vec::with_capacity(n_dims as usize);
        let mut elements: u64 = 1;
        for _ in 0..n_dims {
            let d = i64::from_le_bytes(self.bytes(at, "a dimension")?);
            let Ok(d) = u64::try_from(d) else {
                return Err(self.invalid(at, format_args!("a dimension of {d}, below 0")));
            };
            elements = elements
                .checked_mul(d)
                .filter(|&e| e <= i64::MAX as u64)
                .ok_or_else(|| {
                    self.invalid(
                        at,
                        format_args!("dimensions {dims:?} × {d}: more than 2^63 - 1 elements"),
                    )
                })?;
            dims.push(d);
        }
        let ggml_type = self.u32(at, "the ggml type")?;
        let offset = self.u64(at, "the data offset")?;
        let bytes = match ggml::by_id(ggml_type) {
            Some(t) => {
                let row = dims.first().copied().unwrap_or(1);
                if row % t.block_elements != 0 {
                    return Err(self.invalid(
                        at,
                        format_args!(
                            "rows of {row} elements, not a multiple of {}'s block of {}",
                            t.name, t.block_elements
                        ),
                    ));
                }
                // elements < 2^63 and block_bytes ≤ 292: the product fits in u128.
                let b = u128::from(elements / t.block_elements) * u128::from(t.block_bytes);
                Some(u64::try_from(b).map_err(|_| self.invalid(at, "a byte size past 2^64"))?)
            }
            None => None,
        };
        Ok(TensorInfo {
            name,
            dims,
            ggml_type,
            offset,
            bytes,
        })
    }

    /// Skips the padding between the tensor table and the data, and returns where the data
    /// starts; the padding is not read (it may be past a truncated end).
    pub(super) fn data_start(&self, alignment: u64) -> u64 {
        self.pos.div_ceil(alignment).saturating_mul(alignment)
    }

    pub(super) fn pos(&self) -> u64 {
        self.pos
    }

    pub(super) fn display(&self) -> &str {
        self.display
    }
}

/// `GGML_MAX_NAME`: llama.cpp refuses a tensor name this long or longer.
pub const MAX_NAME: usize = 64;

/// Reads a whole header: preamble, metadata, tensor table; then checks the alignment and that
/// every tensor lies in the file, laid out as llama.cpp expects.
pub(super) fn parse<R: Read>(mut p: Parser<R>) -> Result<GgufHeader> {
    let (version, n_tensors, n_kv) = p.preamble()?;
    let mut metadata: Vec<(String, Value)> = Vec::with_capacity(n_kv.min(1024) as usize);
    let mut seen = std::collections::HashSet::new();
    for i in 0..n_kv {
        let (k, v) = p.kv(i)?;
        if !seen.insert(k.clone()) {
            return Err(p.invalid(
                At::Key(i, Some(&k)),
                "a duplicate key (llama.cpp refuses the file)",
            ));
        }
        metadata.push((k, v));
    }
    let alignment = match metadata.iter().position(|(k, _)| k == super::ALIGNMENT_KEY) {
        None => DEFAULT_ALIGNMENT,
        Some(i) => match &metadata[i].1 {
            Value::U32(a) if a.is_power_of_two() => u64::from(*a),
            v => {
                let at = At::Key(i as u64, Some(super::ALIGNMENT_KEY));
                let ty = v.type_name();
                return Err(p.invalid(
                    at,
                    format_args!("the alignment is {ty} {v:?}; llama.cpp wants a u32 power of two"),
                ));
            }
        },
    };
    let mut tensors = Vec::with_capacity(n_tensors.min(4096) as usize);
    let mut names = std::collections::HashSet::new();
    for i in 0..n_tensors {
        let t = p.tensor(i)?;
        if !names.insert(t.name.clone()) {
            return Err(p.invalid(
                At::Tensor(i, Some(&t.name)),
                "a duplicate tensor name (llama.cpp refuses the file)",
            ));
        }
        tensors.push(t);
    }
    let data_start = if n_tensors > 0 {
        p.data_start(alignment)
    } else {
        p.pos()
    };
    check_layout(&p, &tensors, alignment, data_start)?;
    Ok(GgufHeader {
        display: p.display().to_string(),
        version,
        alignment,
        metadata,
        tensors,
        header_bytes: p.pos(),
        data_start,
        file_size: p.file_size,
        bytes_read: 0,
    })
}

/// Every tensor's offset is a multiple of the alignment and is where llama.cpp expects it
/// (the previous tensor's end, padded: `gguf_init_from_file_impl` refuses any other), and its
/// data ends inside the file. Tensors of a type the table does not know stop the layout check
/// at that tensor (their size is unknown); their offsets are still checked against the file.
fn check_layout<R: Read>(
    p: &Parser<R>,
    tensors: &[TensorInfo],
    alignment: u64,
    data_start: u64,
) -> Result<()> {
    if data_start > p.file_size && !tensors.is_empty() {
        return Err(p.invalid(
            At::Preamble,
            format_args!(
                "the tensor data starts at byte {data_start} but the file is {} bytes (truncated)",
                p.file_size
            ),
        ));
    }
    let mut expected = Some(0u64);
    for (i, t) in tensors.iter().enumerate() {
        let at = At::Tensor(i as u64, Some(&t.name));
        if t.offset % alignment != 0 {
            return Err(p.invalid(
                at,
                format_args!(
                    "offset {} is not a multiple of the alignment {alignment}",
                    t.offset
                ),
            ));
        }
        let end = u128::from(data_start) + u128::from(t.offset) + u128::from(t.bytes.unwrap_or(0));
        if end > u128::from(p.file_size) {
            return Err(p.invalid(at, format_args!(
                "its data (offset {}, {} bytes) ends at byte {end}, past the end of the file at {} (truncated, or the offset is wrong)",
                t.offset, t.bytes.unwrap_or(0), p.file_size)));
        }
        if let (Some(want), Some(b)) = (expected, t.bytes) {
            if t.offset != want {
                return Err(p.invalid(at, format_args!(
                    "offset {}, where llama.cpp expects {want} (tensors lie back to back in table order, each padded to the alignment)", t.offset)));
            }
            expected = want.checked_add(b.div_ceil(alignment).saturating_mul(alignment));
        } else {
            expected = None;
        }
    }
    Ok(())
}
