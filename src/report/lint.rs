//! `lint`'s report: one line per finding (`error[code] path: message (expected …)`) with its
//! `file:line:column`, the rules skipped for want of a fact, then the verdict. JSON: the family
//! and its evidence, the target facts used, and the skipped rules, beside the diagnostics.

use std::io::{self, Write};

use serde_json::json;

use super::{plural, RenderOptions, Report};
use crate::diagnostic::{Diagnostic, Summary};
use crate::rules::{LintReport, TargetSummary};

impl Report for LintReport {
    fn command(&self) -> &'static str {
        "lint"
    }

    fn diagnostics(&self) -> Vec<Diagnostic> {
        self.findings.clone()
    }

    fn write_human(&self, out: &mut dyn Write, options: &RenderOptions) -> io::Result<()> {
        let p = options.painter;
        let evidence = self.family.evidence.join(", ");
        writeln!(
            out,
            "{} {}  ({} drafter: {evidence})",
            p.bold("lint"),
            self.path,
            self.family.name.as_str()
        )?;
        let matched = self
            .target
            .matched_by
            .as_ref()
            .map_or(String::new(), |why| format!(", matched by {why}"));
        writeln!(
            out,
            "target: {}{matched}{}; tokens: {}",
            self.target.source,
            target_numbers(&self.target),
            self.target.tokens
        )?;
        writeln!(out)?;
        write_diagnostics(out, &self.findings, options)?;
        if !self.skipped.is_empty() {
            let codes: Vec<&str> = self.skipped.iter().map(|s| s.code.as_str()).collect();
            writeln!(
                out,
                "skipped (no target facts; pass --target DIR): {}",
                codes.join(", ")
            )?;
        }
        write_published(out, &self.published)?;
        write_verdict(out, &self.summary, options)
    }

    fn engine_dependent(&self) -> bool {
        true
    }

    fn engine(&self) -> Option<crate::rules::EngineSpec> {
        self.assumed
    }

    fn json_body(&self) -> serde_json::Value {
        json!({
            "path": self.path,
            "family": self.family,
            "target": self.target,
            "skipped": self.skipped,
            "published": self.published,
        })
    }
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

/// Each diagnostic as `severity[code] path: message (expected …)` and its location.
pub fn write_diagnostics(
    out: &mut dyn Write,
    diagnostics: &[Diagnostic],
    options: &RenderOptions,
) -> io::Result<()> {
    let p = options.painter;
    for f in diagnostics {
        let expected = f
            .expected
            .as_ref()
            .map_or(String::new(), |e| format!(" (expected {e})"))
            .replace(',', ", ");
        let path = if f.path.is_empty() {
            String::new()
        } else {
            format!("{}: ", f.path)
        };
        writeln!(
            out,
            "{}[{}] {path}{}{expected}",
            p.level(f.severity),
            f.code,
            f.message
        )?;
        if let Some(file) = &f.file {
            let at = f
                .span
                .map_or(String::new(), |s| format!(":{}:{}", s.line, s.column));
            writeln!(out, "  {} {file}{at}", p.dim("-->"))?;
        }
    }
    if !diagnostics.is_empty() {
        writeln!(out)?;
    }
    Ok(())
}

/// `ok: 0 errors, 2 warnings, 1 info` or `FAIL: …`.
/// What lint knows of published configs of the drafter's shape, and the `diff` that settles it.
fn write_published(out: &mut dyn Write, published: &[crate::rules::Published]) -> io::Result<()> {
    if published.is_empty() {
        return Ok(());
    }
    if let Some(p) = published.iter().find(|p| p.equal) {
        return writeln!(
            out,
            "published: equal in every field that matters to {} (for {}); `{}` shows the rest",
            p.repo, p.target, p.diff_command
        );
    }
    let names: Vec<String> = published
        .iter()
        .map(|p| format!("{} (for {})", p.repo, p.target))
        .collect();
    writeln!(
        out,
        "published: {} of this shape, and this config equals none of them; the diff that settles it:",
        names.join(", ")
    )?;
    for p in published {
        writeln!(out, "  {}", p.diff_command)?;
    }
    Ok(())
}

pub fn write_verdict(out: &mut dyn Write, s: &Summary, options: &RenderOptions) -> io::Result<()> {
    let p = options.painter;
    let verdict = if options.fails {
        p.red("FAIL")
    } else {
        p.green("ok")
    };
    writeln!(
        out,
        "{verdict}: {} error{}, {} warning{}, {} info{}",
        s.errors,
        plural(s.errors),
        s.warnings,
        plural(s.warnings),
        s.infos,
        if options.deny_warnings && s.warnings > 0 {
            " (warnings denied)"
        } else {
            ""
        }
    )
}
