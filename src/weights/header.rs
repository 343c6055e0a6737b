//! One safetensors header, read without touching the tensor data.
//!
//! A safetensors file is an 8-byte little-endian header length `n`, `n` bytes of JSON
//! (`{"__metadata__": {..}, "NAME": {"dtype", "shape", "data_offsets"}, ..}`), then the tensor
//! data. The JSON is parsed and validated by the `safetensors` crate's own metadata type (the
//! code `SafeTensors::read_metadata` runs: dtypes, offsets that tile the data with no gap or
//! overlap, sizes that match shapes); only the last check of `read_metadata`, that the data ends
//! exactly at the end of the file, is done here, because `read_metadata` wants the whole file in
//! memory and we only ever hold its first `8 + n` bytes.

use std::io::Read;
use std::path::Path;

use super::{Shard, Tensor};
use crate::{Error, Result};

/// Headers over this many bytes are refused before they are read, as Python `huggingface_hub`
/// does (`SAFETENSORS_MAX_HEADER_LENGTH`); the `safetensors` crate itself allows 100 MB.
pub const MAX_HEADER_BYTES: u64 = crate::hub::MAX_SAFETENSORS_HEADER_BYTES;

/// The byte count of the length prefix.
pub const LENGTH_BYTES: u64 = 8;

/// Most tensors one header may list. A drafter holds tens to a few hundred (DFlash: about ten
/// a layer over a few layers; EAGLE-3: one layer), a shard of the largest MoE checkpoints a few
/// thousand. The header's byte cap alone let through about 360,000 minimal entries, which cost
/// 660 MB and 2.8 s in `weights` (a finding per unknown tensor); at this cap the command stays
/// under 200 MB and a second (BENCHMARKS.md, "Hostile shapes").
pub const MAX_TENSORS: usize = 50_000;

/// The number of top-level entries of a header's JSON (tensors and `__metadata__`), counted
/// without building anything; `None` when it is not a JSON object (the full parse says why).
fn count_entries(json: &[u8]) -> Option<usize> {
    use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
    struct Count;
    impl<'de> Visitor<'de> for Count {
        type Value = usize;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<usize, A::Error> {
            let mut n = 0;
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {
                n += 1;
            }
            Ok(n)
        }
    }
    serde_json::Deserializer::from_slice(json)
        .deserialize_map(Count)
        .ok()
}

fn invalid(display: &str, what: impl std::fmt::Display) -> Error {
    Error::new(format!("`{display}`: not a valid safetensors file: {what}"))
        .with_hint("the file is truncated, corrupt or not safetensors; download it again")
}

/// Reads the 8-byte length prefix, refusing a header over [`MAX_HEADER_BYTES`].
pub fn header_length(display: &str, first8: &[u8]) -> Result<u64> {
    let Some(bytes) = first8.get(..LENGTH_BYTES as usize) else {
        return Err(invalid(
            display,
            format_args!(
                "it is {} bytes long, shorter than the 8-byte header length",
                first8.len()
            ),
        ));
    };
    let mut arr = [0u8; 8];
    arr.copy_from_slice(bytes);
    let n = u64::from_le_bytes(arr);
    if n > MAX_HEADER_BYTES {
        return Err(invalid(
            display,
            format_args!(
                "its header length is {n} bytes, over the {MAX_HEADER_BYTES}-byte limit (huggingface_hub's) \
                 for a safetensors header"
            ),
        ));
    }
    Ok(n)
}

/// Parses the first `8 + n` bytes of a file of `file_size` bytes (more bytes are ignored).
pub fn parse_prefix(display: &str, file: &str, prefix: &[u8], file_size: u64) -> Result<Shard> {
    let n = header_length(display, prefix)?;
    let end = LENGTH_BYTES + n;
    if end > file_size {
        return Err(invalid(
            display,
            format_args!(
                "its header length says {n} bytes of JSON but the file is only {file_size} bytes (truncated)"
            ),
        ));
    }
    let Some(json) = prefix.get(LENGTH_BYTES as usize..end as usize) else {
        return Err(invalid(
            display,
            format_args!(
                "only {} of the header's {end} bytes were read",
                prefix.len()
            ),
        ));
    };
    // Counted before the real parse, which builds every entry.
    if let Some(n) = count_entries(json).filter(|&n| n > MAX_TENSORS + 1) {
        // A valid file may list that many; it is refused as a cap, not as corrupt.
        return Err(Error::new(format!(
            "`{display}`: its header lists {n} entries, over the {MAX_TENSORS}-tensor limit of a \
             safetensors header here (a drafter holds a few hundred)"
        ))
        .with_hint("check that the path names a drafter's weights"));
    }
    let meta: safetensors::tensor::Metadata = serde_json::from_slice(json)
        .map_err(|e| invalid(display, format_args!("invalid header: {e}")))?;
    // Offsets up to 2^64 - 1 are valid u64s; the header's end plus them may not be, so the
    // sum is widened rather than allowed to overflow (a wrapped sum would look like a short
    // header followed by extra bytes).
    let data_end = u128::from(end) + meta.data_len() as u128;
    if data_end != u128::from(file_size) {
        let why = if data_end > u128::from(file_size) {
            "the file is shorter: truncated"
        } else {
            "bytes follow the last tensor"
        };
        return Err(invalid(
            display,
            format_args!(
                "its tensors end at byte {data_end} but the file is {file_size} bytes ({why})"
            ),
        ));
    }
    let mut tensors: Vec<Tensor> = meta
        .tensors()
        .into_iter()
        .map(|(name, info)| Tensor {
            name,
            // The Debug names of `Dtype` are the format's dtype strings (`BF16`, `F8_E4M3`).
            dtype: format!("{:?}", info.dtype),
            shape: info.shape.iter().map(|&d| d as u64).collect(),
            data_offsets: [info.data_offsets.0 as u64, info.data_offsets.1 as u64],
            shard: file.to_string(),
        })
        .collect();
    tensors.sort_by(|a, b| (a.data_offsets, &a.name).cmp(&(b.data_offsets, &b.name)));
    let metadata = meta
        .metadata()
        .as_ref()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    Ok(Shard {
        file: file.to_string(),
        display: display.to_string(),
        header_bytes: n,
        file_size,
        metadata,
        tensors,
    })
}

/// Reads the header of a local file: 8 bytes, then `n`; never the tensor data.
pub fn read_file(path: &Path, file: &str) -> Result<Shard> {
    let display = path.display().to_string();
    // A FIFO, device or socket is refused before any read (a FIFO with no writer would block
    // a plain open(2) forever), as for config files.
    let (mut f, meta) = crate::config::open_regular(path)?;
    let size = meta.len();
    let mut first8 = Vec::with_capacity(8);
    (&mut f)
        .take(LENGTH_BYTES)
        .read_to_end(&mut first8)
        .map_err(|e| crate::config::io_error(path, &e))?;
    let n = header_length(&display, &first8)?;
    if LENGTH_BYTES + n > size {
        return Err(invalid(
            &display,
            format_args!(
                "its header length says {n} bytes of JSON but the file is only {size} bytes (truncated)"
            ),
        ));
    }
    let mut prefix = first8;
    prefix.reserve(n as usize);
    (&mut f)
        .take(n)
        .read_to_end(&mut prefix)
        .map_err(|e| crate::config::io_error(path, &e))?;
    parse_prefix(&display, file, &prefix, size)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_bytes(json: &str, data: usize) -> Vec<u8> {
        let mut b = (json.len() as u64).to_le_bytes().to_vec();
        b.extend_from_slice(json.as_bytes());
        b.extend(std::iter::repeat_n(0u8, data));
        b
    }

    #[test]
    fn parses_a_valid_header() {
        let json = r#"{"__metadata__":{"format":"pt"},"b":{"dtype":"F16","shape":[2,3],"data_offsets":[8,20]},"a":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}}"#;
        let bytes = file_bytes(json, 20);
        let s = parse_prefix("x.safetensors", "x.safetensors", &bytes, bytes.len() as u64).unwrap();
        assert_eq!(s.tensors.len(), 2);
        assert_eq!(s.tensors[0].name, "a");
        assert_eq!(s.tensors[1].dtype, "F16");
        assert_eq!(s.tensors[1].shape, vec![2, 3]);
        assert_eq!(s.tensors[1].parameters(), 6);
        assert_eq!(s.tensors[1].bytes(), 12);
        assert_eq!(s.metadata.get("format").map(String::as_str), Some("pt"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// Any bytes, any claimed file size: an answer or an error naming the file, never a panic.
        #[test]
        fn never_panics_on_arbitrary_bytes(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300),
            extra in 0u64..1_000_000,
        ) {
            let size = bytes.len() as u64 + extra;
            if let Err(e) = parse_prefix("f.safetensors", "f.safetensors", &bytes, size) {
                proptest::prop_assert!(e.message.contains("`f.safetensors`"));
            }
        }

        /// A valid header with one byte changed: still no panic.
        #[test]
        fn never_panics_on_a_mutated_header(at in 0usize..200, to in proptest::prelude::any::<u8>()) {
            let json = r#"{"__metadata__":{"format":"pt"},"a":{"dtype":"F16","shape":[2,3],"data_offsets":[0,12]},"b":{"dtype":"BF16","shape":[4],"data_offsets":[12,20]}}"#;
            let mut bytes = file_bytes(json, 20);
            let i = at % bytes.len();
            bytes[i] = to;
            let size = bytes.len() as u64;
            let _ = parse_prefix("f.safetensors", "f.safetensors", &bytes, size);
        }
    }

    /// More than [`MAX_TENSORS`] entries is refused before the entries are built (360,000
    /// minimal entries within the byte cap cost 660 MB); at the cap the header is read.
    #[test]
    fn tensor_count_is_capped() {
        let header = |n: usize| {
            let entries: Vec<String> = (0..n)
                .map(|i| {
                    format!(
                        r#""t{i}":{{"dtype":"BF16","shape":[1],"data_offsets":[{},{}]}}"#,
                        2 * i,
                        2 * i + 2
                    )
                })
                .collect();
            file_bytes(&format!("{{{}}}", entries.join(",")), 2 * n)
        };
        let at_cap = header(MAX_TENSORS);
        let shard = parse_prefix("m", "m", &at_cap, at_cap.len() as u64).unwrap();
        assert_eq!(shard.tensors.len(), MAX_TENSORS);
        let over = header(MAX_TENSORS + 2);
        let err = parse_prefix("m", "m", &over, over.len() as u64).unwrap_err();
        assert!(
            err.message
                .contains("50002 entries, over the 50000-tensor limit"),
            "{}",
            err.message
        );
    }

    #[test]
    fn refuses_hostile_headers_naming_the_file() {
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (vec![1, 2, 3], "shorter than the 8-byte"),
            (
                (30_000_000u64).to_le_bytes().to_vec(),
                "over the 25000000-byte limit",
            ),
            (file_bytes("{not json", 0), "invalid header"),
            (
                file_bytes(
                    r#"{"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]},"b":{"dtype":"F16","shape":[2],"data_offsets":[2,6]}}"#,
                    6,
                ),
                "invalid header",
            ),
            (
                file_bytes(
                    r#"{"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}}"#,
                    2,
                ),
                "truncated",
            ),
            (
                file_bytes(
                    r#"{"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}}"#,
                    9,
                ),
                "bytes follow the last tensor",
            ),
        ];
        for (bytes, want) in cases {
            let size = bytes.len() as u64;
            let err = parse_prefix("bad.safetensors", "bad.safetensors", &bytes, size).unwrap_err();
            assert!(err.message.contains("`bad.safetensors`"), "{}", err.message);
            assert!(err.message.contains(want), "{want}: {}", err.message);
        }
    }
}
