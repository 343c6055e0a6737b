//! A [`Vocabulary`] from a GGUF file's `tokenizer.ggml.*` metadata, as plain values.
//!
//! The GGUF reader hands over what it read (the metadata values, never the tensors) and this
//! turns them into the neutral form, so an HF tokenizer and a GGUF one compare with the same
//! [`super::compare`]. The stored token text is the same in both formats (llama.cpp's converter
//! copies `tokenizer.json`'s vocabulary, `Ġ` included), so ids compare by text directly; the
//! model name is mapped to the HF one the converter reads it from (`gpt2` ← `BPE` with
//! byte-level, `llama` ← a SentencePiece-style BPE, `t5` ← `Unigram`, `bert` ← `WordPiece`), and
//! the pre-tokenizer is kept as `ggml:NAME`, which compares only with another GGUF's.

use super::Vocabulary;

/// `tokenizer.ggml.token_type` values that make a token an added one (llama.cpp's
/// `LLAMA_TOKEN_TYPE_CONTROL` = 3, special; `USER_DEFINED` = 4, not special).
const CONTROL: i32 = 3;
const USER_DEFINED: i32 = 4;

/// What a GGUF file says about its tokenizer (`tokenizer.ggml.model`, `.pre`, `.tokens`,
/// `.token_type`, `.bos_token_id`, `.eos_token_id`, `.add_bos_token`, `.add_eos_token`).
#[derive(Debug, Clone, Default)]
pub struct GgufTokenizer<'a> {
    pub source: String,
    pub model: Option<&'a str>,
    pub pre: Option<&'a str>,
    pub tokens: &'a [&'a str],
    pub token_types: &'a [i32],
    pub bos: Option<u32>,
    pub eos: Option<u32>,
    pub add_bos: Option<bool>,
    pub add_eos: Option<bool>,
}

/// The HF tokenizer model llama.cpp's converter writes as `tokenizer.ggml.model`.
pub fn hf_model(ggml: &str) -> String {
    match ggml {
        "gpt2" | "llama" => "BPE".into(),
        "t5" => "Unigram".into(),
        "bert" => "WordPiece".into(),
        other => format!("ggml:{other}"),
    }
}

/// The neutral vocabulary of a GGUF tokenizer.
pub fn from_gguf(g: &GgufTokenizer) -> Vocabulary {
    let mut v = Vocabulary {
        source: g.source.clone(),
        model: g.model.map(hf_model),
        pre_tokenizer: g.pre.map(|p| format!("ggml:{p}")),
        bos: g.bos,
        eos: g.eos,
        add_bos: g.add_bos,
        add_eos: g.add_eos,
        byte_level: g.model == Some("gpt2"),
        ggml_model: g.model.map(str::to_string),
        ..Vocabulary::default()
    };
    v.tokens
        .reserve(g.tokens.len(), g.tokens.iter().map(|t| t.len()).sum());
    for (id, token) in g.tokens.iter().enumerate() {
        v.tokens.set(id as u32, token);
        match g.token_types.get(id) {
            Some(&CONTROL) => {
                v.added.insert(id as u32, (token.to_string(), true));
            }
            Some(&USER_DEFINED) => {
                v.added.insert(id as u32, (token.to_string(), false));
            }
            _ => {}
        }
    }
    v
}

/// The vocabulary a GGUF header carries (`tokenizer.ggml.*`), read as llama.cpp's loader
/// reads it; `source` names the file in messages. `None` when the header has no token list
/// (an MTP-only or DFlash head that shares its target's vocabulary).
pub fn from_header(header: &crate::gguf::GgufHeader, source: String) -> Option<Vocabulary> {
    let t = header.tokenizer();
    let tokens: Vec<&str> = t.tokens?.iter().collect();
    let types: Vec<i32> = t
        .token_types()
        .unwrap_or_default()
        .into_iter()
        .map(|x| i32::try_from(x).unwrap_or(0))
        .collect();
    let id = |v: Option<u64>| v.and_then(|v| u32::try_from(v).ok());
    Some(from_gguf(&GgufTokenizer {
        source,
        model: t.model,
        pre: t.pre,
        tokens: &tokens,
        token_types: &types,
        bos: id(t.bos()),
        eos: id(t.eos()),
        add_bos: t.add_bos(),
        add_eos: t.add_eos(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gguf_tokenizer_compares_with_an_hf_one() {
        let tokens: Vec<&str> = vec!["a", "Ġthe", "<|end|>"];
        let g = from_gguf(&GgufTokenizer {
            source: "draft.gguf".into(),
            model: Some("gpt2"),
            pre: Some("qwen2"),
            tokens: &tokens,
            token_types: &[1, 1, CONTROL],
            eos: Some(2),
            ..GgufTokenizer::default()
        });
        let hf = super::super::hf::parse_tokenizer(
            br#"{"added_tokens":[{"id":2,"content":"<|end|>","special":true}],
            "model":{"type":"BPE","vocab":{"a":0,"\u0120the":1}}}"#,
        )
        .unwrap();
        let mut hf = hf;
        hf.eos = Some(2);
        // The pre-tokenizers are in two forms: not compared; everything else agrees.
        assert_eq!(super::super::compare(&g, &hf).differences, vec![]);
    }
}
