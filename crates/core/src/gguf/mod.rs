//! GGUF headers: version, metadata key-values and the tensor table of a llama.cpp model file,
//! read without touching the tensor data.
//!
//! A GGUF file is `GGUF`, a u32 version, u64 tensor and metadata counts, the metadata (a
//! string key, a u32 type, a value: twelve scalar types, strings with a u64 length, arrays of
//! one scalar type with a u64 length), the tensor table (name, dimension count, dimensions,
//! ggml type, offset into the data), padding to `general.alignment` (default 32), then the
//! data. Nothing says how long the header is, so it is read field by field from a `Read`
//! ([`parse`]): a local file through a buffer of [`READ_BLOCK`] bytes ([`read_path`]), the
//! Hub through the main crate's block reader of ranged requests, so the bytes read are the
//! header plus at most one block, however large the file.
//!
//! Every count and length from the file is checked before it sizes anything: against
//! [`Limits`] (header bytes, metadata and tensor counts, string and array lengths) and against
//! the bytes the file still has, so a count of 2^63 or a string of 2^63 bytes is refused
//! before allocation, with the key or tensor index, the byte position and what to do. What
//! llama.cpp's own reader (`ggml/src/gguf.cpp`, `gguf_init_from_file_impl`) refuses is refused
//! here too: versions other than 2 and 3, a nested array, an empty or duplicate key, a
//! duplicate tensor name, a name of 64 bytes or more, more than 4 dimensions, a row that is not
//! whole blocks, an alignment that is not a u32 power of two, a tensor offset other than the
//! previous tensor's padded end, and data past the end of the file.
//!
//! Crates evaluated first (their sources read from the crates.io registry, December 2026):
//! `gguf` 0.1.2 (nom; needs the whole header in one slice, no caps, recursive nested arrays),
//! `ggus` 0.5.1 (the whole file as one slice, version 3 only, `Layout::array(..).unwrap()`
//! panics on a 2^63 length, errors without the key or tensor), `gguf-rs-lib` 0.3.3 (caps, but
//! a 256 MiB decoded budget, nested arrays up to depth 64 accepted, errors that name neither
//! key nor tensor index), candle's `quantized::gguf_file` (pulls candle-core; reads each
//! string with a `vec![0; len]` sized by the file). None met the rules above, so the reader is
//! this module's own (about 400 lines).

mod ggml;
mod read;
mod tokenizer;
mod value;

use std::io::Read;
use std::path::Path;

use serde::Serialize;

pub use ggml::{by_id as ggml_type, name as ggml_type_name, GgmlType};
pub use read::MAX_NAME;
pub use tokenizer::Tokenizer;
pub use value::{Array, Strings, Value};

use crate::Result;

/// `general.alignment`: the data's alignment, a u32 power of two.
pub const ALIGNMENT_KEY: &str = "general.alignment";
/// The alignment when the file does not say (`GGUF_DEFAULT_ALIGNMENT`).
pub const DEFAULT_ALIGNMENT: u64 = 32;
/// Bytes read from a local file (and asked of the Hub) at a time; the bytes read are the
/// header's plus at most one block.
pub const READ_BLOCK: usize = 1 << 20;

/// The caps on what one header may hold, checked before allocation.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The header (preamble, metadata, tensor table) in bytes.
    pub max_header_bytes: u64,
    pub max_kv: u64,
    pub max_tensors: u64,
    /// A metadata string value or string array element (a chat template is tens of KB).
    pub max_string_bytes: u64,
    /// A key or tensor name.
    pub max_key_bytes: u64,
    /// Elements of one array (a vocabulary is 32,000–262,144 tokens; merges up to ~500,000).
    pub max_array: u64,
}

impl Default for Limits {
    /// A real header is a few MB (a 150,000-token vocabulary with its merges); the largest
    /// models list a few thousand tensors.
    fn default() -> Self {
        Limits {
            max_header_bytes: 64 << 20,
            max_kv: 65_536,
            max_tensors: 200_000,
            max_string_bytes: 16 << 20,
            max_key_bytes: 65_535,
            max_array: 1 << 21,
        }
    }
}

/// One entry of the tensor table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TensorInfo {
    pub name: String,
    /// ggml's order: `ne[0]` (the row length) first, the reverse of PyTorch's shape.
    pub dims: Vec<u64>,
    /// The ggml type id ([`ggml_type_name`] names it).
    pub ggml_type: u32,
    /// Offset from the start of the data section.
    pub offset: u64,
    /// Bytes of data, when the type is one the table knows.
    pub bytes: Option<u64>,
}

impl TensorInfo {
    pub fn type_name(&self) -> String {
        ggml::name(self.ggml_type)
    }

    /// The shape as PyTorch and safetensors write it (outermost first).
    pub fn torch_shape(&self) -> Vec<u64> {
        self.dims.iter().rev().copied().collect()
    }
}

/// One parsed GGUF header.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GgufHeader {
    /// How messages name the file.
    pub display: String,
    pub version: u32,
    pub alignment: u64,
    /// In file order.
    pub metadata: Vec<(String, Value)>,
    /// In file order.
    pub tensors: Vec<TensorInfo>,
    /// Bytes of the header (preamble, metadata, tensor table).
    pub header_bytes: u64,
    /// Where the tensor data starts (the header padded to the alignment).
    pub data_start: u64,
    pub file_size: u64,
    /// Bytes actually read from the file or the network (the header plus at most one block);
    /// 0 when the caller parsed a buffer.
    pub bytes_read: u64,
}

impl GgufHeader {
    /// The value of a metadata key.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.metadata.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn str(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
    }

    /// An integer key of any integer type.
    pub fn u64(&self, key: &str) -> Option<u64> {
        self.get(key).and_then(Value::as_u64)
    }

    /// `general.architecture` (`llama`, `qwen3`, `qwen35`), the prefix of the model's own keys.
    pub fn architecture(&self) -> Option<&str> {
        self.str("general.architecture")
    }

    /// A key of the architecture's own namespace: `arch_key("block_count")` reads
    /// `qwen3.block_count` in a `qwen3` file.
    pub fn arch_key(&self, suffix: &str) -> Option<&Value> {
        self.get(&format!("{}.{suffix}", self.architecture()?))
    }

    /// The `tokenizer.ggml.*` keys, as llama.cpp's vocabulary loader reads them.
    pub fn tokenizer(&self) -> Tokenizer<'_> {
        Tokenizer::of(self)
    }
}

/// Parses a header from `r`, a reader positioned at the file's first byte, for a file of
/// `file_size` bytes (used to refuse lengths the file cannot hold, before reading them).
pub fn parse<R: Read>(r: R, display: &str, file_size: u64, limits: Limits) -> Result<GgufHeader> {
    read::parse(read::Parser::new(r, display, file_size, limits))
}

/// A reader that counts the bytes it hands out: what [`read_path`] and the Hub reader report
/// as [`GgufHeader::bytes_read`].
pub struct Counted<R> {
    pub inner: R,
    pub count: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}

/// Reads the header of a local `.gguf` file, [`READ_BLOCK`] bytes at a time; never the tensor
/// data. A FIFO or device is refused before any read, as for config files.
pub fn read_path(path: &Path, limits: Limits) -> Result<GgufHeader> {
    let (file, meta) = crate::config::open_regular(path)?;
    let mut counted = Counted {
        inner: file,
        count: 0,
    };
    let display = path.display().to_string();
    let mut header = parse(&mut counted, &display, meta.len(), limits)?;
    header.bytes_read = counted.count;
    Ok(header)
}

/// Whether `bytes` (a file's first bytes) start like a GGUF file.
pub fn is_gguf(bytes: &[u8]) -> bool {
    bytes.starts_with(b"GGUF")
}

#[cfg(test)]
mod tests;
