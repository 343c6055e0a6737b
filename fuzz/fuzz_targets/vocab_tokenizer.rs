//! bytes -> the draft-vocabulary reader (`vocab::hf`) that `lint --family draft` and the
//! draft-model launch checks run on both `tokenizer.json` files. Invariant: no panic; the bytes
//! read whole and read from a file in pieces of 1 to 64 bytes (the fast entry loop and the
//! general walker meet at every piece boundary; the size follows from the input's length) give
//! the same answer; and every id of an accepted vocabulary reads back as text (the keys' UTF-8 is
//! checked once for the whole text, then sliced by span).
#![no_main]

use dflash_check::vocab;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The piece size from the length, so a seed is a tokenizer.json as it is.
    let piece = data.len() % 64 + 1;
    let whole = vocab::hf::parse_tokenizer(data);
    let dir = std::env::temp_dir().join(format!("dflash-fuzz-vocab-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tokenizer.json"), data).unwrap();
    let chunked = vocab::hf::from_dir_in_pieces(&dir, piece);
    match (&whole, &chunked) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a.tokens, b.tokens);
            for id in 0..a.tokens.len() {
                let _ = (a.tokens.get(id), a.readable(id));
            }
            let _ = vocab::compare(a, b);
        }
        (Err(_), Err(_)) => {}
        (a, b) => panic!("whole {:?} vs chunked {:?}", a.is_ok(), b.is_ok()),
    }
});
