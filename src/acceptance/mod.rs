//! `acceptance`: a running server's speculative-decoding acceptance, from its Prometheus
//! metrics. (Being built; see issue 13.)

use crate::diagnostic::codes::AcceptanceCode;
use crate::diagnostic::CodeInfo;

/// The documentation of each code this family raises.
pub fn info(code: AcceptanceCode) -> &'static CodeInfo {
    match code {}
}
