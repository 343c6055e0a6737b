//! `launch`: the engine command line (vLLM, SGLang) against the drafter it serves. (Being
//! built; see issue 13.)

crate::declare_codes! {
    /// Codes of the launch-command checks.
    pub enum LaunchCode {}
}
