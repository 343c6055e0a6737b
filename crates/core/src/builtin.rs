//! Built-in snapshots of known drafters and their targets, compiled into the binary.
//!
//! They make the tool useful where the Hub is not: air-gapped servers, gated repos, CI without
//! a token. A snapshot is never presented as the live Hub; its provenance says where the values
//! were recorded and when. Which snapshot is a drafter's authority when none is named is
//! decided by evidence in the main crate's `source::choose`, which also makes a snapshot an
//! authority (`source::SnapshotAuthority`). Data only, so that the core's checks can name the
//! snapshots (acceptance: the drafters known for a served model) without the Hub.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use crate::config::{ConfigFile, TargetFacts};
use crate::tokens::{AddedToken, TokenTable};

/// The date the built-in values were recorded.
pub const RECORDED: &str = "2026-12-02";

/// A target model the tool knows without its files.
#[derive(Debug)]
pub struct KnownTarget {
    pub repo: &'static str,
    /// The text model's `model_type`, as its config.json has it.
    pub model_type: &'static str,
    pub num_hidden_layers: u64,
    pub hidden_size: u64,
    pub vocab_size: u64,
    /// `len(tokenizer)`: base vocabulary plus added tokens.
    pub tokenizer_len: u64,
    pub bos_token_id: Option<u64>,
    pub eos_token_id: u64,
    pub pad_token_id: Option<u64>,
    /// (id, content, special) of every added token.
    pub added_tokens: &'static [(u64, &'static str, Option<bool>)],
}

/// A drafter whose authoritative config is compiled in.
#[derive(Debug)]
pub struct Snapshot {
    pub repo: &'static str,
    pub config: &'static str,
    pub revision: Option<&'static str>,
    pub provenance: &'static str,
    pub target: &'static KnownTarget,
}

const QWEN3_ADDED: &[(u64, &str, Option<bool>)] = &[
    (151643, "<|endoftext|>", Some(true)),
    (151644, "<|im_start|>", Some(true)),
    (151645, "<|im_end|>", Some(true)),
    (151646, "<|object_ref_start|>", Some(true)),
    (151647, "<|object_ref_end|>", Some(true)),
    (151648, "<|box_start|>", Some(true)),
    (151649, "<|box_end|>", Some(true)),
    (151650, "<|quad_start|>", Some(true)),
    (151651, "<|quad_end|>", Some(true)),
    (151652, "<|vision_start|>", Some(true)),
    (151653, "<|vision_end|>", Some(true)),
    (151654, "<|vision_pad|>", Some(true)),
    (151655, "<|image_pad|>", Some(true)),
    (151656, "<|video_pad|>", Some(true)),
    (151657, "<tool_call>", Some(false)),
    (151658, "</tool_call>", Some(false)),
    (151659, "<|fim_prefix|>", Some(false)),
    (151660, "<|fim_middle|>", Some(false)),
    (151661, "<|fim_suffix|>", Some(false)),
    (151662, "<|fim_pad|>", Some(false)),
    (151663, "<|repo_name|>", Some(false)),
    (151664, "<|file_sep|>", Some(false)),
    (151665, "<tool_response>", Some(false)),
    (151666, "</tool_response>", Some(false)),
    (151667, "<think>", Some(false)),
    (151668, "</think>", Some(false)),
];

// The Qwen3.5/3.6 table was recorded without the `special` flag, so none is claimed.
const QWEN3_5_ADDED: &[(u64, &str, Option<bool>)] = &[
    (248044, "<|endoftext|>", None),
    (248045, "<|im_start|>", None),
    (248046, "<|im_end|>", None),
    (248047, "<|object_ref_start|>", None),
    (248048, "<|object_ref_end|>", None),
    (248049, "<|box_start|>", None),
    (248050, "<|box_end|>", None),
    (248051, "<|quad_start|>", None),
    (248052, "<|quad_end|>", None),
    (248053, "<|vision_start|>", None),
    (248054, "<|vision_end|>", None),
    (248055, "<|vision_pad|>", None),
    (248056, "<|image_pad|>", None),
    (248057, "<|video_pad|>", None),
    (248058, "<tool_call>", None),
    (248059, "</tool_call>", None),
    (248060, "<|fim_prefix|>", None),
    (248061, "<|fim_middle|>", None),
    (248062, "<|fim_suffix|>", None),
    (248063, "<|fim_pad|>", None),
    (248064, "<|repo_name|>", None),
    (248065, "<|file_sep|>", None),
    (248066, "<tool_response>", None),
    (248067, "</tool_response>", None),
    (248068, "<think>", None),
    (248069, "</think>", None),
    (248070, "<|audio_start|>", None),
    (248071, "<|audio_end|>", None),
    (248072, "<tts_pad>", None),
    (248073, "<tts_text_bos>", None),
    (248074, "<tts_text_eod>", None),
    (248075, "<tts_text_bos_single>", None),
    (248076, "<|audio_pad|>", None),
];

pub static QWEN3_6_27B: KnownTarget = KnownTarget {
    repo: "Qwen/Qwen3.6-27B",
    model_type: "qwen3_5_text",
    num_hidden_layers: 64,
    hidden_size: 5120,
    vocab_size: 248320,
    tokenizer_len: 248077,
    bos_token_id: None,
    eos_token_id: 248044,
    pad_token_id: None,
    added_tokens: QWEN3_5_ADDED,
};

pub static QWEN3_5_27B: KnownTarget = KnownTarget {
    repo: "Qwen/Qwen3.5-27B",
    ..QWEN3_6_27B
};

pub static QWEN3_8B: KnownTarget = KnownTarget {
    repo: "Qwen/Qwen3-8B",
    model_type: "qwen3",
    num_hidden_layers: 36,
    hidden_size: 4096,
    vocab_size: 151936,
    tokenizer_len: 151669,
    bos_token_id: Some(151643),
    eos_token_id: 151645,
    pad_token_id: None,
    added_tokens: QWEN3_ADDED,
};

pub static QWEN3_4B: KnownTarget = KnownTarget {
    repo: "Qwen/Qwen3-4B",
    hidden_size: 2560,
    ..QWEN3_8B
};

pub static SNAPSHOTS: &[Snapshot] = &[
    Snapshot {
        repo: "z-lab/Qwen3.6-27B-DFlash",
        config: include_str!("../snapshots/z-lab__Qwen3.6-27B-DFlash.json"),
        revision: None,
        provenance: "values of the Hub repo's config.json (transformers 5.5.3 revision) as recorded by the dflash-check team; commit sha not recorded",
        target: &QWEN3_6_27B,
    },
    Snapshot {
        repo: "z-lab/Qwen3.5-27B-DFlash",
        config: include_str!("../snapshots/z-lab__Qwen3.5-27B-DFlash.json"),
        revision: None,
        provenance: "values of the Hub repo's config.json (transformers 4.57.1 revision) as recorded by the dflash-check team; commit sha not recorded",
        target: &QWEN3_5_27B,
    },
    Snapshot {
        repo: "z-lab/Qwen3-8B-DFlash-b16",
        config: include_str!("../snapshots/z-lab__Qwen3-8B-DFlash-b16.json"),
        revision: None,
        provenance: "critical values as published for the z-lab Qwen3-8B b16 drafter and the matching SpecForge template; metadata fields not verified against a Hub commit",
        target: &QWEN3_8B,
    },
    Snapshot {
        repo: "z-lab/Qwen3-4B-DFlash-b16",
        config: include_str!("../snapshots/z-lab__Qwen3-4B-DFlash-b16.json"),
        revision: None,
        provenance: "critical values as published for the z-lab Qwen3-4B b16 drafter and the matching SpecForge template; metadata fields not verified against a Hub commit",
        target: &QWEN3_4B,
    },
];

/// Known targets, for matching a `--target` name and for lint without target files.
pub fn known_targets() -> [&'static KnownTarget; 4] {
    [&QWEN3_6_27B, &QWEN3_5_27B, &QWEN3_8B, &QWEN3_4B]
}

impl KnownTarget {
    /// [`KnownTarget::token_table`], built once per run and shared.
    pub fn tokens(&self) -> Arc<TokenTable> {
        static TABLES: OnceLock<Vec<Arc<TokenTable>>> = OnceLock::new();
        let targets = known_targets();
        let tables =
            TABLES.get_or_init(|| targets.iter().map(|t| Arc::new(t.token_table())).collect());
        match targets.iter().position(|t| std::ptr::eq(*t, self)) {
            Some(at) => tables[at].clone(),
            None => Arc::new(self.token_table()),
        }
    }

    pub fn facts(&self) -> TargetFacts {
        TargetFacts {
            source: format!("built-in facts of {}", self.repo),
            model_type: Some(self.model_type.to_string()),
            max_position_embeddings: None,
            rope: None,
            architectures: Vec::new(),
            quantization: None,
            num_hidden_layers: Some(self.num_hidden_layers),
            hidden_size: Some(self.hidden_size),
            vocab_size: Some(self.vocab_size),
            bos_token_id: self.bos_token_id,
            eos_token_ids: vec![self.eos_token_id],
            pad_token_id: self.pad_token_id,
            origins: Default::default(),
        }
    }

    pub fn token_table(&self) -> TokenTable {
        let added: BTreeMap<u64, AddedToken> = self
            .added_tokens
            .iter()
            .map(|&(id, content, special)| {
                (
                    id,
                    AddedToken {
                        content: content.to_string(),
                        special,
                    },
                )
            })
            .collect();
        TokenTable {
            source: format!("built-in added-token table of {}", self.repo),
            added: added.into(),
            tokenizer_len: Some(self.tokenizer_len),
            vocab_size: Some(self.vocab_size),
            ..TokenTable::default()
        }
    }
}

impl Snapshot {
    /// The snapshot's config, parsed once per run: `check` compared each of its drafters with
    /// every snapshot of its shape, parsing each again (four parses a drafter, issue 44).
    pub fn config_file(&self) -> &'static ConfigFile {
        static PARSED: OnceLock<Vec<ConfigFile>> = OnceLock::new();
        let all = PARSED.get_or_init(|| {
            SNAPSHOTS
                .iter()
                .map(|s| {
                    let label = format!("built-in snapshot {}", s.repo);
                    crate::config::parse(std::path::Path::new(&label), s.config.as_bytes())
                        .expect("built-in snapshots are valid JSON (tested)")
                })
                .collect()
        });
        let at = SNAPSHOTS
            .iter()
            .position(|s| std::ptr::eq(s, self))
            .expect("every snapshot is one of SNAPSHOTS");
        &all[at]
    }

    pub fn find(repo: &str) -> Option<&'static Snapshot> {
        SNAPSHOTS.iter().find(|s| s.repo.eq_ignore_ascii_case(repo))
    }

    pub fn name(&self) -> &'static str {
        self.repo.rsplit('/').next().unwrap_or(self.repo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Node;

    #[test]
    fn every_snapshot_parses_and_has_its_target() {
        for s in SNAPSHOTS {
            let config =
                crate::config::parse(std::path::Path::new(s.repo), s.config.as_bytes()).unwrap();
            let n = config
                .root()
                .get("num_target_layers")
                .and_then(Node::as_u64);
            assert_eq!(n, Some(s.target.num_hidden_layers), "{}", s.repo);
            let h = config.root().get("hidden_size").and_then(Node::as_u64);
            assert_eq!(h, Some(s.target.hidden_size), "{}", s.repo);
        }
    }
}
