//! Exit codes, named once. Like diff(1): 0 = nothing wrong, 1 = something wrong found,
//! 2 = could not answer. An error never exits 1, so a CI gate never mistakes a crash for a
//! finding or a finding for a crash.

/// No critical difference and no error-level finding (minor ones may be listed).
pub const CLEAN: u8 = 0;
/// At least one critical difference or error-level finding (with `--strict` / `--deny
/// warnings`: any difference or warning); for `fix --dry-run`: something would change.
pub const FINDINGS: u8 = 1;
/// The command could not run: bad usage, unreadable or invalid input, Hub failure.
pub const ERROR: u8 = 2;
