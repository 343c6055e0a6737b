//! bytes -> the safetensors header reader (length prefix, JSON, offsets) as `weights` and the Hub
//! range reader use it. Invariant: no panic; a header is either refused with an error or every
//! tensor it names lies inside the file.
#![no_main]

use dflash_check::weights::header;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let size = data.len() as u64;
    if data.len() >= 8 {
        let _ = header::header_length("fuzz.safetensors", &data[..8]);
    }
    if let Ok(shard) = header::parse_prefix("fuzz.safetensors", "model.safetensors", data, size) {
        for t in &shard.tensors {
            assert!(t.data_offsets[1] >= t.data_offsets[0], "{t:?}");
        }
    }
});
