//! `launch`: the engine command line (vLLM, SGLang) against the drafter it serves. (Being
//! built; see issue 13.) [`shell`] splits a pasted command, a script, a Dockerfile or a compose
//! file into commands; [`parse`] turns the engine's command into a typed [`Launch`].

pub mod parse;
pub mod shell;

pub use parse::{EnvVar, Flag, Launch, SglangSpec};

crate::declare_codes! {
    /// Codes of the launch-command checks.
    pub enum LaunchCode {}
}
