//! `dflash-check-core`: the part of dflash-check that needs no network.
//!
//! JSON with source positions ([`json`]), the display filter for input text ([`display`]), drafter and target configs ([`config`]), token
//! tables ([`tokens`]), the one diagnostic model and rule engine ([`diagnostic`]), the
//! field-by-field comparison ([`diff`]) and the lint rules ([`rules`]). It reads files (configs,
//! tokenizer files) but never opens a socket: the crate has no network or async dependency, so
//! a forbidden import does not compile. The `dflash-check` crate re-exports every module under
//! the same name and adds the Hub, the engines' command lines, metrics and the renderers.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod config;
pub mod diagnostic;
pub mod diff;
pub mod display;
pub mod error;
pub mod json;
pub mod rules;
pub mod target;
pub mod text;
pub mod tokens;

pub use error::{Error, Result};
