//! `weights`: the drafter's safetensors header(s) against its config and target, local or on
//! the Hub, without downloading the weights. (Being built; see issue 12.)

crate::declare_codes! {
    /// Codes of the weights checks.
    pub enum WeightsCode {}
}
