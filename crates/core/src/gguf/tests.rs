//! The reader on headers built here byte by byte (the hostile ones cannot be written by
//! llama.cpp's `gguf` package; tests/gguf.rs reads files that package wrote).

use super::*;

/// A little-endian GGUF builder for tests.
#[derive(Default)]
struct B(Vec<u8>);

impl B {
    fn u32(mut self, v: u32) -> Self {
        self.0.extend(v.to_le_bytes());
        self
    }
    fn u64(mut self, v: u64) -> Self {
        self.0.extend(v.to_le_bytes());
        self
    }
    fn s(self, s: &str) -> Self {
        let mut b = self.u64(s.len() as u64);
        b.0.extend(s.as_bytes());
        b
    }
    fn pre(n_tensors: u64, n_kv: u64) -> Self {
        let mut b = B::default();
        b.0.extend(b"GGUF");
        b.u32(3).u64(n_tensors).u64(n_kv)
    }
    fn pad(mut self, to: usize) -> Self {
        while self.0.len() % to != 0 {
            self.0.push(0);
        }
        self
    }
}

fn parse_bytes(b: &[u8]) -> Result<GgufHeader> {
    parse(b, "t.gguf", b.len() as u64, Limits::default())
}

fn err(b: &[u8]) -> String {
    let e = parse_bytes(b).unwrap_err();
    assert!(e.message.contains("`t.gguf`"), "{}", e.message);
    assert!(e.hint.is_some(), "{}", e.message);
    e.message
}

/// A two-key, two-tensor file: an F32 [4] and a Q8_0 [32, 2] tensor, back to back.
fn valid() -> Vec<u8> {
    let b = B::pre(2, 3)
        .s("general.architecture")
        .u32(8)
        .s("qwen3")
        .s("tokenizer.ggml.tokens")
        .u32(9)
        .u32(8)
        .u64(3)
        .s("a")
        .s("b")
        .s("<|im_end|>")
        .s("tokenizer.ggml.bos_token_id")
        .u32(4)
        .u32(2)
        .s("x")
        .u32(1)
        .u64(4)
        .u32(0)
        .u64(0)
        .s("blk.0.w")
        .u32(2)
        .u64(32)
        .u64(2)
        .u32(8)
        .u64(32)
        .pad(32);
    let mut v = b.0;
    v.extend([0u8; 32 + 68]);
    v
}

#[test]
fn reads_a_valid_header() {
    let h = parse_bytes(&valid()).unwrap();
    assert_eq!(h.version, 3);
    assert_eq!(h.architecture(), Some("qwen3"));
    assert_eq!(h.tokenizer().tokens.unwrap().get(2).unwrap(), "<|im_end|>");
    assert_eq!(h.tokenizer().bos(), Some(2));
    assert_eq!(h.tensors[1].type_name(), "Q8_0");
    assert_eq!(h.tensors[1].bytes, Some(68));
    assert_eq!(h.tensors[1].torch_shape(), vec![2, 32]);
    assert_eq!(h.data_start % 32, 0);
}

#[test]
fn refuses_hostile_headers_with_where_and_why() {
    let huge = 1u64 << 63;
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (B::pre(0, huge).0, "metadata keys, over the limit"),
        (B::pre(huge, 0).0, "tensors, over the limit"),
        (
            B::pre(0, 1).u64(huge).0,
            "metadata key 0: the key is 9223372036854775808 bytes long",
        ),
        (
            B::pre(0, 1).s("k").u32(8).u64(huge).0,
            "metadata key 0 (`k`): the value is 9223372036854775808 bytes long",
        ),
        (
            B::pre(0, 1).s("k").u32(9).u32(9).u64(1).0,
            "no nested arrays",
        ),
        (
            B::pre(0, 1).s("k").u32(9).u32(4).u64(1 << 20).0,
            "the array needs 4194304 bytes but the file ends",
        ),
        (
            B::pre(0, 1).s("k").u32(9).u32(8).u64(huge).0,
            "an array of 9223372036854775808 elements, over the limit",
        ),
        (valid()[..40].to_vec(), "truncated"),
        (B::pre(0, 1).s("k").u32(99).0, "unknown value type 99"),
        (b"GGML\x03\0\0\0".to_vec(), "not `GGUF`"),
        (
            B::pre(0, 0).0[..4]
                .iter()
                .copied()
                .chain([0, 0, 0, 3])
                .collect(),
            "big-endian",
        ),
        (
            B::pre(0, 2).s("k").u32(4).u32(1).s("k").u32(4).u32(1).0,
            "duplicate key",
        ),
        (
            B::pre(1, 0).s("t").u32(1).u64(4).u32(0).u64(4096).pad(32).0,
            "past the end of the file",
        ),
        (B::pre(1, 0).s("t").u32(5).0, "5 dimensions"),
        (B::pre(1, 0).s(&"n".repeat(64)).0, "GGML_MAX_NAME"),
    ];
    for (bytes, want) in cases {
        let m = err(&bytes);
        assert!(m.contains(want), "want {want:?} in {m}");
    }
}

#[test]
fn header_over_the_cap_is_refused_before_reading_it() {
    let b = B::pre(0, 1).s("k").u32(8).u64(1000).0;
    let mut bytes = b;
    bytes.extend([b'x'; 1000]);
    let limits = Limits {
        max_header_bytes: 512,
        ..Limits::default()
    };
    let e = parse(&bytes[..], "t.gguf", bytes.len() as u64, limits).unwrap_err();
    assert!(e.message.contains("past 512 bytes"), "{}", e.message);
}

#[test]
fn a_lying_file_size_is_a_truncation_not_a_panic() {
    let v = valid();
    let e = parse(&v[..50], "t.gguf", 1 << 40, Limits::default()).unwrap_err();
    assert!(e.message.contains("truncated"), "{}", e.message);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
    /// A valid header with one byte changed, and any claimed size: an answer whose tensors lie
    /// in the file, or an error naming the file; never a panic.
    #[test]
    fn never_panics_on_a_mutated_header(at in 0usize..400, to in proptest::prelude::any::<u8>(), extra in 0u64..3) {
        let mut bytes = valid();
        let i = at % bytes.len();
        bytes[i] = to;
        let size = bytes.len() as u64 + extra * (1 << 30);
        match parse(&bytes[..], "t.gguf", size, Limits::default()) {
            Ok(h) => for t in &h.tensors {
                proptest::prop_assert!(h.data_start + t.offset + t.bytes.unwrap_or(0) <= size);
            },
            Err(e) => proptest::prop_assert!(e.message.contains("`t.gguf`")),
        }
    }
}

/// A reader that hands out one byte per call: fields that span reads (and the block buffer's
/// refills) parse the same as from one slice.
#[test]
fn one_byte_reads_parse_the_same() {
    struct Trickle<'a>(&'a [u8]);
    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let Some((&b, rest)) = self.0.split_first() else {
                return Ok(0);
            };
            if let Some(first) = buf.first_mut() {
                *first = b;
                self.0 = rest;
                return Ok(1);
            }
            Ok(0)
        }
    }
    let v = valid();
    let whole = parse_bytes(&v).unwrap();
    let trickled = parse(Trickle(&v), "t.gguf", v.len() as u64, Limits::default()).unwrap();
    assert_eq!(whole, trickled);
    let toks = trickled.tokenizer().tokens.unwrap();
    assert_eq!(
        toks.iter().collect::<Vec<_>>(),
        vec!["a", "b", "<|im_end|>"]
    );
    assert_eq!(toks.get(3), None);
}
