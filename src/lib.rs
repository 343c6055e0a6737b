//! `dflash-check`: checks speculative-decoding drafter configs before they are deployed.
//!
//! The library never prints: it reads configs, compares them, lints them and rewrites them, and
//! returns data that the binary's renderers turn into text, JSON, GitHub annotations or SARIF.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod acceptance;
pub mod analysis;
pub mod check;
pub mod doctor;
pub mod draft;
pub mod exit;
pub mod fix;
pub mod hub;
pub mod input;
pub mod launch;
pub mod net;
pub mod pins;
pub mod pipeline;
pub mod report;
pub mod source;
pub mod suppress;
pub mod weights;

// The no-network core, re-exported under the same module names so that `crate::config`,
// `crate::rules`, … read the same everywhere.
pub use dflash_check_core::{
    builtin, config, deployment, diagnostic, diff, display, engine, error, evidence, family, gguf,
    json, registry, rules, target, text, tokens, vocab,
};
pub use error::{Error, Result};
