//! `lint`'s report: the drafter, its target and tokens; the findings; the rules skipped for
//! want of a fact (lint's and the weights') and the published configs of the drafter's shape.
//! JSON: the family and its evidence, the target facts used, and the skipped rules
//! (`skipped`, `weights_skipped`), beside the diagnostics.

use std::borrow::Cow;

use serde_json::json;

use super::human::{Status, Verdict};
use super::{Painter, RenderOptions, Report};
use crate::diagnostic::Diagnostic;
use crate::pipeline::LintRun;
use crate::rules::{LintReport, TargetSummary};

impl Report for LintRun {
    fn command(&self) -> &'static str {
        "lint"
    }

    fn diagnostics(&self) -> Cow<'_, [Diagnostic]> {
        Cow::Borrowed(&self.lint.findings)
    }

    fn fails(&self, deny_warnings: bool) -> bool {
        LintReport::fails(&self.lint, deny_warnings)
    }

    fn header(&self, p: Painter) -> Vec<String> {
        let report = &self.lint;
        let matched = report
            .target
            .matched_by
            .as_ref()
            .map_or(String::new(), |why| format!(", matched by {why}"));
        let mut lines = vec![
            format!("{} {}", p.bold("dflash-check lint"), report.path),
            format!(
                "  drafter  {} ({})",
                report.family.name.as_str(),
                report.family.evidence.join(", ")
            ),
            format!(
                "  target   {}{matched}{}",
                report.target.source,
                target_numbers(&report.target)
            ),
            format!("  tokens   {}", report.target.tokens),
            format!("  engine   {}", super::engine_line(report.assumed.as_ref())),
        ];
        if let Some(authority) = &self.authority {
            lines.push(format!("  authority {authority}"));
        }
        // An MTP head in a target config has few rules: say which ran, so a clean page says
        // what was checked.
        if !report.mtp_rules.is_empty() {
            let codes: Vec<&str> = report.mtp_rules.iter().map(|c| c.as_str()).collect();
            lines.push(format!("  mtp      rules run: {}", codes.join(", ")));
        }
        lines
    }

    fn sections(&self, _options: &RenderOptions) -> Vec<Vec<String>> {
        let mut skipped = Vec::new();
        let target = &self.lint.target.source;
        if target == "none" {
            if !self.lint.skipped.is_empty() {
                let codes: Vec<&str> = self.lint.skipped.iter().map(|s| s.code.as_str()).collect();
                skipped.push(format!(
                    "skipped (no target facts; pass --target DIR): {}",
                    codes.join(", ")
                ));
            }
        } else {
            // A target was read: say what it lacked (a tokenizer.json, a layer count), not
            // "pass --target", which the user did.
            skipped.extend(
                lacking(&self.lint.skipped)
                    .into_iter()
                    .map(|(needs, codes)| {
                        format!(
                    "skipped for want of {needs}, which the target ({target}) does not hold: {}",
                    codes.join(", ")
                )
                    }),
            );
        }
        skipped.extend(crate::pipeline::skipped_lines(&self.weights_skipped));
        // Compared with its authority, the findings above are the diff: no other to suggest.
        let published = match &self.authority {
            Some(_) => Vec::new(),
            None => published(&self.lint.published),
        };
        vec![skipped, published]
    }

    /// `OK` only for what lint verified: rules skipped for want of the target's facts, or a
    /// config of a published shape that equals none of the published configs, make it
    /// `OK (unverified: …)`, naming what (the sections above say what settles it).
    fn verdict(&self, options: &RenderOptions) -> Verdict {
        let unverified = unverified(self);
        match (options.fails, unverified.is_empty()) {
            (true, _) => Verdict::new(Status::Fail),
            (false, true) => Verdict::new(Status::Ok),
            (false, false) => Verdict::new(Status::Unverified(format!(
                "unverified: {}",
                unverified.join("; ")
            ))),
        }
    }

    fn engine_dependent(&self) -> bool {
        true
    }

    fn engine(&self) -> Option<crate::rules::EngineRelease> {
        self.lint.assumed.clone()
    }

    fn json_body(&self) -> serde_json::Value {
        let mut body = json!({
            "path": self.lint.path,
            "family": self.lint.family,
            "target": self.lint.target,
            "skipped": self.lint.skipped,
            "weights_skipped": self.weights_skipped,
            "published": self.lint.published,
        });
        // Only when `--target` picked one (other pages are unchanged).
        if let Some(authority) = &self.authority {
            body["authority"] = json!(authority);
        }
        // Only for an MTP head in a target config (other families' pages are unchanged).
        if !self.lint.mtp_rules.is_empty() {
            body["mtp_rules"] = json!(self.lint.mtp_rules);
        }
        body
    }
}

/// What lint could not verify, in the words of the verdict line.
fn unverified(run: &LintRun) -> Vec<String> {
    let report = &run.lint;
    let mut what = Vec::new();
    if !report.skipped.is_empty() {
        what.push(format!(
            "{} skipped without the target's facts",
            super::human::count(report.skipped.len(), "rule")
        ));
    }
    if !run.weights_skipped.is_empty() {
        what.push(format!(
            "{} skipped",
            super::human::count(run.weights_skipped.len(), "weights rule")
        ));
    }
    if run.authority.is_none()
        && !report.published.is_empty()
        && !report.published.iter().any(|p| p.equal)
    {
        // The commands themselves, not "the diff above": the verdict line is all that some
        // formats print (`--format github` quotes it without the sections, issue 45).
        let commands: Vec<String> = report
            .published
            .iter()
            .map(|p| format!("`{}`", p.diff_command))
            .collect();
        what.push(format!(
            "equals none of {} of its shape (settle it with {})",
            super::human::count(report.published.len(), "published config"),
            commands.join(" or ")
        ));
    }
    what
}

/// ` (64 layers from text_config.num_hidden_layers, hidden 5120 from …, vocab 248320 from …)`:
/// the target numbers the rules used and the JSON path each was read from, so a user can check
/// them. Empty when there are no numbers.
fn target_numbers(target: &TargetSummary) -> String {
    let parts: Vec<String> = [
        ("num_hidden_layers", "layers", target.num_hidden_layers),
        ("hidden_size", "hidden", target.hidden_size),
        ("vocab_size", "vocab", target.vocab_size),
    ]
    .into_iter()
    .filter_map(|(key, label, value)| {
        let value = value?;
        Some(match target.from.get(key) {
            Some(path) => format!("{label} {value} from {path}"),
            None => format!("{label} {value}"),
        })
    })
    .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}

/// Lint's rules not run, grouped by what they lacked (described), in order.
fn lacking(skipped: &[crate::rules::Skipped]) -> Vec<(String, Vec<&'static str>)> {
    crate::diagnostic::rule::by_need(skipped, |c| c.as_str())
}

/// What lint knows of published configs of the drafter's shape, and the `diff` that settles it.
fn published(published: &[crate::rules::Published]) -> Vec<String> {
    if published.is_empty() {
        return Vec::new();
    }
    if let Some(p) = published.iter().find(|p| p.equal) {
        return vec![format!(
            "published: equal in every field that matters to {} (for {}); `{}` shows the rest",
            p.repo, p.target, p.diff_command
        )];
    }
    let names: Vec<String> = published
        .iter()
        .map(|p| format!("{} (for {})", p.repo, p.target))
        .collect();
    let mut lines = vec![format!(
        "published: {} of this shape, and this config equals none of them; the diff that settles it:",
        names.join(", ")
    )];
    lines.extend(published.iter().map(|p| format!("  {}", p.diff_command)));
    lines
}
