//! `dflash-check`: checks speculative-decoding drafter configs before they are deployed.
//!
//! The library never prints: it reads configs, compares them, lints them and rewrites them, and
//! returns data that the binary's renderers turn into text, JSON, GitHub annotations or SARIF.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod acceptance;
pub mod analysis;
pub mod check;
pub mod config;
pub mod diagnostic;
pub mod diff;
pub mod doctor;
pub mod error;
pub mod evidence;
pub mod exit;
pub mod fix;
pub mod hub;
pub mod input;
pub mod json;
pub mod launch;
pub mod pins;
pub mod registry;
pub mod report;
pub mod rules;
pub mod source;
pub mod suppress;
pub mod target;
pub mod text;
pub mod tokens;
pub mod weights;

pub use error::{Error, Result};
