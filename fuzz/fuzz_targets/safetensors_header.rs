//! bytes -> the safetensors header reader (length prefix, JSON, offsets) as `weights` and the Hub
//! range reader use it. Invariant: no panic; a header is either refused with an error naming the
//! file or every tensor it names lies inside the file, and the totals add up without overflow.
//! The same bytes are also read as a file whose size a Hub server claims to be far larger.
#![no_main]

use dflash_check::weights::{header, WeightsHeaders};
use libfuzzer_sys::fuzz_target;

fn check(data: &[u8], size: u64) {
    match header::parse_prefix("fuzz.safetensors", "model.safetensors", data, size) {
        Err(e) => assert!(e.message.contains("`fuzz.safetensors`"), "{}", e.message),
        Ok(shard) => {
            for t in &shard.tensors {
                assert!(t.data_offsets[1] >= t.data_offsets[0], "{t:?}");
                let end = 8 + u128::from(shard.header_bytes) + u128::from(t.data_offsets[1]);
                assert!(end <= u128::from(size), "{t:?} ends past {size}");
                let _ = (t.parameters(), t.bytes());
            }
            let headers = WeightsHeaders {
                source: "fuzz".into(),
                index: None,
                shards: vec![shard.clone(), shard],
                missing_shards: vec![],
                requests: 0,
                body_bytes: 0,
                map_data: Vec::new(),
            };
            let _ = headers.totals();
        }
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() >= 8 {
        let _ = header::header_length("fuzz.safetensors", &data[..8]);
    }
    check(data, data.len() as u64);
    check(data, u64::MAX);
});
