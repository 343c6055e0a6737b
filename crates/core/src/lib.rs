//! `dflash-check-core`: the part of dflash-check that needs no network.
//!
//! JSON with source positions ([`json`]), the display filter for input text ([`display`]), drafter and target configs ([`config`]), token
//! tables ([`tokens`]), a draft model's vocabulary against its target's ([`vocab`]), the built-in snapshots of known drafters ([`builtin`]), the drafter
//! families ([`family`]: one table, as data), the one diagnostic model and rule engine ([`diagnostic`]), the field-by-field comparison ([`diff`]),
//! the engines that serve drafters ([`engine`]: one table, as data, with the releases read), one deployment of a drafter ([`deployment`]), the lint rules ([`rules`]), the weights rules over parsed safetensors headers ([`weights`]), GGUF headers ([`gguf`]),
//! the acceptance rules over a measured window ([`acceptance`]), an engine command line and its
//! rules ([`launch`]), the evidence behind every engine claim ([`evidence`]) and every code's
//! documentation ([`registry`]). It reads files (configs, tokenizer files) but never opens a
//! socket: the crate has no network or async dependency, so a forbidden import does not
//! compile. The `dflash-check` crate re-exports every module under the same name and adds the
//! Hub, reading weights and scraping metrics, the engines' command lines and the renderers.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod acceptance;
pub mod builtin;
pub mod config;
pub mod deployment;
pub mod diagnostic;
pub mod diff;
pub mod display;
pub mod engine;
pub mod error;
pub mod evidence;
pub mod family;
pub mod gguf;
pub mod json;
pub mod launch;
pub mod registry;
pub mod rules;
pub mod target;
pub mod text;
pub mod tokens;
pub mod vocab;
pub mod weights;
pub mod yaml;

pub use error::{Error, Result};
