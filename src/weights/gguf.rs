//! A `.gguf` file for `weights`: its header read by the core's reader ([`crate::gguf`]), only
//! the header (the bytes read are counted: the header plus at most one read block), turned
//! into the one-shard tensor table every weights report shows, with the GGUF metadata beside
//! it and the GGUF rules run over both.
//!
//! Shapes are shown in ggml's order (`ne[0]` first), as llama.cpp's own messages and
//! `gguf-py`'s reader print them, so a shape in a finding can be compared with llama.cpp's
//! error text; dtypes are the ggml type names (`Q4_K`, `BF16`).

use std::collections::BTreeMap;
use std::path::Path;

use crate::config::{self, ConfigFile};
use crate::gguf::{self, GgufHeader, Value};
use crate::Result;

use super::{Shard, Tensor, WeightsHeaders};

/// Whether `path` names a GGUF file by its extension.
pub fn is_gguf_path(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gguf"))
}

/// The header of a local `.gguf` file, its tensor table as one shard, and a config that stands
/// for "no config.json" (the GGUF's metadata is its config; the GGUF rules read it).
pub fn read_local(path: &Path) -> Result<(WeightsHeaders, ConfigFile, GgufHeader)> {
    let header = gguf::read_path(path, gguf::Limits::default())?;
    let (headers, config) = tables(path, &header)?;
    Ok((headers, config, header))
}

/// A GGUF header already read (a launch line's models, local or from the Hub) as the tables
/// the weights rules read: its tensor table as one shard, and the config that stands for "no
/// config.json".
pub fn tables(path: &Path, header: &GgufHeader) -> Result<(WeightsHeaders, ConfigFile)> {
    let file = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let headers = WeightsHeaders {
        source: path.display().to_string(),
        index: None,
        shards: vec![shard(header, &file)],
        missing_shards: vec![],
        requests: 0,
        body_bytes: 0,
        map_data: Vec::new(),
    };
    let config = config::parse(path, b"{}")?;
    Ok((headers, config))
}

/// The tensor table as a weights shard: offsets from the data section's start, sizes from
/// the ggml type (0 for a type the reader does not know).
pub fn shard(h: &GgufHeader, file: &str) -> Shard {
    Shard {
        file: file.to_string(),
        display: h.display.clone(),
        header_bytes: h.data_start,
        file_size: h.file_size,
        metadata: summary(h),
        tensors: h
            .tensors
            .iter()
            .map(|t| Tensor {
                name: t.name.clone(),
                dtype: t.type_name(),
                shape: t.dims.clone(),
                data_offsets: [t.offset, t.offset + t.bytes.unwrap_or(0)],
                shard: file.to_string(),
            })
            .collect(),
    }
}

/// The metadata as strings: scalars as written, arrays as their type and length (a
/// vocabulary is not printed), long strings (a chat template) by length.
fn summary(h: &GgufHeader) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    m.insert("gguf.version".into(), h.version.to_string());
    for (k, v) in &h.metadata {
        let shown = match v {
            Value::Array(a) if a.len() <= 16 => match a.integers() {
                Some(ints) => format!("{ints:?}"),
                None => format!("{} of {}", v.type_name(), a.len()),
            },
            Value::Array(a) => format!("{} of {}", v.type_name(), a.len()),
            Value::Str(s) if s.len() > 200 => format!("string of {} bytes", s.len()),
            Value::Str(s) => s.clone(),
            Value::F32(x) => x.to_string(),
            Value::F64(x) => x.to_string(),
            Value::Bool(b) => b.to_string(),
            other => other
                .as_u64()
                .map_or_else(|| format!("{other:?}"), |n| n.to_string()),
        };
        m.insert(k.clone(), shown);
    }
    m
}

/// The lines `weights` shows above the table: version, architecture, vocabulary, MTP and the
/// bytes read.
pub fn header_lines(h: &GgufHeader) -> Vec<String> {
    let tok = h.tokenizer();
    let arch = h.architecture().unwrap_or("(no general.architecture)");
    let mut lines = vec![format!(
        "  gguf      version {}, architecture `{arch}`, {} metadata keys, header {} bytes ({} read)",
        h.version,
        h.metadata.len(),
        h.header_bytes,
        h.bytes_read
    )];
    if let Some(n) = tok.vocab_size() {
        lines.push(format!(
            "  vocab     {n} tokens, model `{}`, pre `{}`, bos {}, eos {}",
            tok.model.unwrap_or("?"),
            tok.pre.unwrap_or("?"),
            tok.bos().map_or("-".into(), |v| v.to_string()),
            tok.eos().map_or("-".into(), |v| v.to_string()),
        ));
    }
    if let Some(n) = h.arch_key("nextn_predict_layers").and_then(Value::as_u64) {
        lines.push(format!("  mtp       {arch}.nextn_predict_layers = {n}"));
    }
    lines
}
