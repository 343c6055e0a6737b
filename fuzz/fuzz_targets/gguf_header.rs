//! bytes -> the GGUF header reader (preamble, metadata of every type, tensor table, layout) as
//! `weights FILE.gguf` uses it. Invariant: no panic; a header is either refused with an error
//! naming the file, or its counts are within the caps and every tensor of a known type lies
//! inside the file. The same bytes are also read as a file whose size is claimed far larger
//! (a truncated download or a lying server: lengths then pass the file-size check and must be
//! stopped by the caps or by the end of the bytes), and under tight caps.
#![no_main]

use dflash_check::gguf::{self, Limits};
use libfuzzer_sys::fuzz_target;

fn check(data: &[u8], size: u64, limits: Limits) {
    match gguf::parse(data, "fuzz.gguf", size, limits) {
        Err(e) => assert!(e.message.contains("`fuzz.gguf`"), "{}", e.message),
        Ok(h) => {
            assert!(h.metadata.len() as u64 <= limits.max_kv);
            assert!(h.tensors.len() as u64 <= limits.max_tensors);
            assert!(h.header_bytes <= limits.max_header_bytes);
            assert!(h.header_bytes <= data.len() as u64);
            for t in &h.tensors {
                let end = u128::from(h.data_start)
                    + u128::from(t.offset)
                    + u128::from(t.bytes.unwrap_or(0));
                assert!(end <= u128::from(size), "{t:?} ends past {size}");
                let _ = (t.type_name(), t.torch_shape());
            }
            let tok = h.tokenizer();
            let _ = (
                tok.vocab_size(),
                tok.token_types(),
                tok.bos(),
                tok.add_bos(),
            );
        }
    }
}

fuzz_target!(|data: &[u8]| {
    check(data, data.len() as u64, Limits::default());
    check(data, u64::MAX, Limits::default());
    let tight = Limits {
        max_header_bytes: 4096,
        max_kv: 8,
        max_tensors: 8,
        max_string_bytes: 256,
        max_key_bytes: 64,
        max_array: 64,
    };
    check(data, u64::MAX, tight);
});
