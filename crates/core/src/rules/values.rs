//! Values no config should hold, whatever the field: a number Python reads as NaN or an
//! infinity. Python's `json` (and so transformers) accepts `NaN`, `Infinity` and `-Infinity`,
//! which JSON does not have, and reads a float past a double's range as infinity; the drafter
//! then loads with it and computes with it. The finding has its own code in every command:
//! lint raises it here, `diff` beside its differences (`non_finite_findings`), and `check`,
//! `launch` and `doctor` keep it beside the comparison (issue 44: after the comparison learned
//! that `NaN` equals `NaN`, a config holding one read as clean in `lint`).

use super::{Applies, Ctx, LintCode, Rule};
use crate::config::ConfigFile;
use crate::diagnostic::{CodeInfo, Diagnostic, Severity};

pub(super) const RULES: &[Rule] = &[NON_FINITE_NUMBER];

const NON_FINITE_NUMBER: Rule = Rule {
    code: LintCode::NonFiniteNumber,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "a number is NaN or infinite (NaN, Infinity, -Infinity, or a float past a double's range)",
        explanation: "Python's json module, and so transformers, reads `NaN`, `Infinity` and `-Infinity` (which \
JSON does not have) as floats, and a float literal past a double's range (`1e400`) as infinity; the config loads \
and the model computes with the value. No field of a drafter or target config is meant to hold one: NaN in \
`rope_theta` makes every rotary frequency NaN, and NaN or an infinity spreads through every sum it enters, so the \
drafter's hidden states and its proposals are garbage, with no error from the engine. It is an error at the field, \
whatever the field (an integer field also gets `field-type`), in every command that reads the config, even when \
the authority holds the same value. Write the finite value the published config has. An integer literal is never \
one: Python's integers have no range.",
    },
    applies: Applies::All,
    needs: &[],
    check: non_finite_number,
};

fn non_finite_number(cx: &mut Ctx) {
    for (path, text) in cx.config.non_finite_numbers() {
        cx.emit(&path, message(&text));
    }
}

fn message(text: &str) -> String {
    format!(
        "`{text}`: Python reads it as {} and the model computes with it, so every value it \
         enters becomes NaN or infinite; write the finite value the published config has",
        if text.contains("NaN") {
            "NaN"
        } else {
            "an infinity"
        }
    )
}

/// The `non-finite-number` findings of `config` on its own, located in it: what lint raises,
/// for the commands that report a config without linting it (`diff`).
pub fn non_finite_findings(config: &ConfigFile) -> Vec<Diagnostic> {
    let file = config.path_text();
    config
        .non_finite_numbers()
        .into_iter()
        .map(|(path, text)| {
            let (line, column) = config.doc.position_of(&path);
            let shown = path.to_text();
            Diagnostic::new(
                NON_FINITE_NUMBER.code,
                &NON_FINITE_NUMBER.info,
                shown.clone(),
                message(&text),
            )
            .file(file.clone())
            .span(line, column)
        })
        .collect()
}
