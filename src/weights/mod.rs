//! `weights`: the drafter's safetensors header(s) against its config and target, local or on
//! the Hub, without downloading the weights. (Being built; see issue 12.)

use crate::diagnostic::codes::WeightsCode;
use crate::diagnostic::CodeInfo;

/// The documentation of each code this family raises.
pub fn info(code: WeightsCode) -> &'static CodeInfo {
    match code {}
}
