//! What the binary says on stderr besides errors: warnings about inputs the user did not name
//! that could not be had (the library returns them as data), and, on a terminal, a progress bar
//! for large downloads.

use std::io::Write;

use dflash_check::analysis::InputWarning;

/// Writes each warning as `warning: ...` on stderr (for commands whose report has no place for
/// them; `diff` shows them in its header and its JSON).
pub fn warn_inputs(warnings: &[InputWarning]) {
    let mut err = std::io::stderr().lock();
    for w in warnings {
        let _ = writeln!(err, "warning: {w}");
    }
}
