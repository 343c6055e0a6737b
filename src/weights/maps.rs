//! The data of the vocabulary maps (`d2t`, `t2d`): the only tensor bytes `weights` reads, for
//! the core's value rules (`weights-d2t-values`, `weights-d2t-duplicates`,
//! `weights-t2d-disagrees`).
//!
//! The core says which tensors ([`map_tensors`]: a map's name, an integer or bool dtype, at most
//! [`MAX_MAP_BYTES`]); this reads exactly their bytes at the offsets the header gave: locally one
//! seek and one read per tensor, on the Hub one range request per tensor at the commit the
//! headers were read at, cached per sha (a warm or offline run sends nothing). What cannot be
//! read without a failure the user must hear about (offline with nothing cached) is left out,
//! and the rules then say nothing about it. A file that changed or ends early, or a server that
//! answers another length than the header gave, is an error naming the file.

use std::path::Path;

use super::{map_tensors, read_tensor_in, MapData, WeightsHeaders};
use crate::hub::{self, HubSettings};
use crate::Result;

pub use dflash_check_core::weights::MAX_MAP_BYTES;

/// Reads the maps of `headers`, weights read from the directory `dir`, into its `map_data`.
pub fn read_local(dir: &Path, mut headers: WeightsHeaders) -> Result<WeightsHeaders> {
    let mut data = Vec::new();
    for t in map_tensors(&headers) {
        let Some(shard) = headers.shards.iter().find(|s| s.file == t.shard) else {
            continue;
        };
        data.push(MapData {
            shard: t.shard.clone(),
            name: t.name.clone(),
            bytes: read_tensor_in(dir, shard, t)?,
        });
    }
    headers.map_data = data;
    Ok(headers)
}

/// Reads the maps of `headers`, weights of `repo` read at commit `sha`, into its `map_data`,
/// adding the requests and body bytes to its counts.
pub fn read_hub(
    settings: &HubSettings,
    repo: &str,
    sha: &str,
    mut headers: WeightsHeaders,
) -> Result<WeightsHeaders> {
    let mut data = Vec::new();
    let (mut requests, mut body_bytes) = (0, 0);
    for t in map_tensors(&headers) {
        let Some(shard) = headers.shards.iter().find(|s| s.file == t.shard) else {
            continue;
        };
        let start = super::header::LENGTH_BYTES + shard.header_bytes + t.data_offsets[0];
        let read = hub::fetch_safetensors_bytes(
            settings,
            repo,
            sha,
            &shard.file,
            (start, t.bytes()),
            shard.file_size,
        )?;
        if let Some(r) = read {
            requests += r.requests;
            body_bytes += r.body_bytes;
            data.push(MapData {
                shard: t.shard.clone(),
                name: t.name.clone(),
                bytes: r.bytes,
            });
        }
    }
    headers.requests += requests;
    headers.body_bytes += body_bytes;
    headers.map_data = data;
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `model.safetensors` holding `d2t` (I64 [2]) and a BF16 weight, written by hand.
    fn write(dir: &Path) {
        let header = br#"{"d2t":{"dtype":"I64","shape":[2],"data_offsets":[0,16]},"w":{"dtype":"BF16","shape":[4],"data_offsets":[16,24]}}"#;
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(header);
        bytes.extend(5i64.to_le_bytes());
        bytes.extend((-1i64).to_le_bytes());
        bytes.extend([9u8; 8]);
        std::fs::write(dir.join("model.safetensors"), bytes).unwrap();
    }

    #[test]
    fn reads_exactly_the_maps_and_refuses_a_file_that_changed() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path());
        let headers = super::super::read_local(dir.path()).unwrap().unwrap();
        let want: Vec<u8> = [5i64, -1].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(headers.map_data.len(), 1, "the BF16 weight is not read");
        assert_eq!(headers.map_data[0].name, "d2t");
        assert_eq!(headers.map_data[0].bytes, want);

        // The file grew after its header was read: an error naming it, no panic.
        let mut bare = headers.clone();
        bare.map_data.clear();
        let path = dir.path().join("model.safetensors");
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.push(0);
        std::fs::write(&path, bytes).unwrap();
        let err = read_local(dir.path(), bare).unwrap_err();
        assert!(err.message.contains("changed size"), "{}", err.message);
        assert!(err.message.contains("model.safetensors"), "{}", err.message);
    }
}
