//! `weights`: the drafter's safetensors headers against its config and target — the pure part.
//!
//! A config can be exactly its authority's and still not fit the weights beside it: a drafter
//! trained with 4 target layers shipped with a 5-id config, a `draft_vocab_size` with no `d2t`
//! tensor, a layer count or head size that differs from the file. Engines find some of these
//! at load, after minutes of download, and some never (vLLM silently keeps a zero `d2t`).
//!
//! This module holds what the checking needs and nothing that reads: the parsed headers
//! ([`headers`], [`index`]), the config's facts (`facts`), the tensors the engine builds
//! (`expected`), the view the rules see (`view`), the family's context (`cx`), the rule list
//! (`rules`: [`run`], [`all_rules`]) and the rules by topic (`files`, `quant`, `shapes`,
//! `presence`, `vocab`, `maps` for the vocabulary maps by value, and `mtp` for an MTP head
//! inside a target checkpoint, over `mtp_head`'s reading of it and `quant_exclude`'s matching
//! of exclude lists, with what engines build otherwise than the list reads in `quark_head`,
//! `quark_nextn` and `eh_proj`). The main crate's `weights` reads the headers from files and the Hub, and
//! the maps' data (the only tensor data read, [`map_tensors`]), into [`WeightsHeaders`] and
//! re-exports everything here under the same paths. See `docs/weights.md`.

mod cx;
mod draft_heads;
mod eh_proj;
mod expected;
mod facts;
mod files;
mod fused_entries;
mod gguf;
mod gguf_dflash;
pub mod headers;
pub mod index;
mod maps;
mod mtp;
mod mtp_head;
mod presence;
mod quant;
mod quark_head;
mod quark_nextn;
mod rules;
mod shapes;
mod text;
mod view;
mod vocab;

/// The exclude-list matching each engine does (engine knowledge, in `engine::exclude`), under
/// the names the weights rules and their callers use.
pub use crate::engine::exclude::{self, int4 as int4_exclude, quant as quant_exclude};
pub use cx::{Applies, Cx, Need, Rule, Skipped, Weights};
pub use gguf_dflash::GgufTarget;
pub use headers::{MapData, Shard, Tensor, Totals, WeightsHeaders};
pub use index::Index;
pub use maps::{wanted as map_tensors, MAX_MAP_BYTES};
pub use mtp::{by_engine, check_inputs};
pub use rules::{all_rules, check, info, rule, run, run_for, run_gguf, Checked};
pub use view::Purpose;

pub use crate::diagnostic::codes::WeightsCode;
