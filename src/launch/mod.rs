//! `launch`: the engine command line (vLLM, SGLang) against the drafter it serves. (Being
//! built; see issue 13.)

use crate::diagnostic::codes::LaunchCode;
use crate::diagnostic::CodeInfo;

/// The documentation of each code this family raises.
pub fn info(code: LaunchCode) -> &'static CodeInfo {
    match code {}
}
