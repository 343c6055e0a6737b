//! The `dflash-check` commands an acceptance finding suggests running next (lint the drafter
//! against the served target and engine, compare it with its authority), written as a shell
//! would read them.

use crate::engine::Engine;

/// The served model as a `--target` argument: a path as it is, a Hub repo id in the explicit
/// `hf://` form (a bare `ORG/NAME` is read as a local path; see `input`).
fn target_arg(target: Option<&str>) -> String {
    match target {
        None => "TARGET".to_string(),
        Some(t) if t.starts_with('/') || t.starts_with('.') => shell_word(t),
        Some(t) => shell_word(&format!("hf://{t}")),
    }
}

pub fn lint_command(engine: Engine, target: Option<&str>) -> String {
    format!(
        "dflash-check lint DRAFTER_DIR --target {} --engine {}",
        target_arg(target),
        engine.as_str()
    )
}

/// The checks of an MTP head inside the target: its weights (the head's tensors, dtypes and
/// the exclude list, as the engine builds them) and lint on the target's config (the head's
/// depth, its keys).
pub fn head_commands(engine: Engine, target: Option<&str>) -> Vec<String> {
    let target = target_arg(target);
    vec![
        format!("dflash-check weights {target} --engine {}", engine.as_str()),
        format!("dflash-check lint {target} --engine {}", engine.as_str()),
    ]
}

pub fn diff_command(snapshots: &[String], target: Option<&str>) -> String {
    let authority = match snapshots {
        [one] => format!(" --snapshot {}", shell_word(one)),
        _ => " --from-hub DRAFTER_REPO".to_string(),
    };
    format!(
        "dflash-check diff DRAFTER_DIR{authority} --target {}",
        target_arg(target)
    )
}

/// Quotes a word for a POSIX shell when it needs it (shell-words, as every command line the
/// tool prints).
pub(crate) fn shell_word(w: &str) -> String {
    shell_words::quote(w).into_owned()
}
