//! `check`'s report: per drafter (its authority, then its findings), then a total. JSON: the
//! drafters with their authorities and findings, the files skipped and the pin file, beside the
//! diagnostics of every drafter.

use std::io::{self, Write};

use serde_json::json;

use super::{RenderOptions, Report};
use crate::check::{CheckReport, DrafterCheck};
use crate::diagnostic::{Diagnostic, Severity};

impl Report for CheckReport {
    fn command(&self) -> &'static str {
        "check"
    }

    fn diagnostics(&self) -> Vec<Diagnostic> {
        self.run_findings
            .iter()
            .chain(&self.suppressions.findings)
            .cloned()
            .chain(
                self.drafters
                    .iter()
                    .flat_map(|d| d.findings.iter().cloned()),
            )
            .collect()
    }

    fn write_human(&self, out: &mut dyn Write, options: &RenderOptions) -> io::Result<()> {
        let p = options.painter;
        if let Some(pins) = &self.pins {
            writeln!(out, "pins: {pins}")?;
        }
        for d in &self.drafters {
            write_drafter(out, d, options)?;
        }
        for f in &self.run_findings {
            write_finding(out, f, f.file.as_deref().unwrap_or(""), options)?;
        }
        if !self.skipped.is_empty() {
            writeln!(out, "not drafters (skipped): {}", self.skipped.join(", "))?;
        }
        for f in &self.suppressions.findings {
            let at = f.span.map_or(String::new(), |s| format!(":{}", s.line));
            let file = f.file.as_deref().unwrap_or("");
            writeln!(
                out,
                "{}[{}] {file}{at} {}",
                p.level(f.severity),
                f.code,
                f.message
            )?;
        }
        if !self.suppressions.suppressed.is_empty() {
            writeln!(
                out,
                "suppressed by [[ignore]]: {}",
                self.suppressions
                    .suppressed
                    .iter()
                    .map(|s| format!(
                        "{} {}{} ({})",
                        s.code,
                        s.file.as_deref().unwrap_or(""),
                        s.pointer,
                        s.reason
                    ))
                    .collect::<Vec<_>>()
                    .join("; ")
            )?;
        }
        let (e, w, i) = (
            self.count(Severity::Error),
            self.count(Severity::Warning),
            self.count(Severity::Info),
        );
        let unverified = self.unverified();
        // `OK` only for what was verified: an unverified drafter or an empty run says so.
        let verdict = if options.fails {
            p.red("FAIL")
        } else if self.drafters.is_empty() {
            p.yellow("NOTHING CHECKED")
        } else if unverified > 0 {
            p.yellow(&format!("OK ({unverified} unverified)"))
        } else {
            p.green("OK")
        };
        let unverified_note = if unverified > 0 && options.fails {
            format!(" ({unverified} unverified)")
        } else {
            String::new()
        };
        writeln!(
            out,
            "{verdict}: {} drafter(s) checked{unverified_note}: {e} error(s), {w} warning(s), {i} info",
            self.drafters.len()
        )
    }

    fn engine_dependent(&self) -> bool {
        true
    }

    fn engine(&self) -> Option<crate::rules::EngineSpec> {
        self.engine
    }

    fn json_body(&self) -> serde_json::Value {
        json!({
            "drafters": self.drafters,
            "skipped": self.skipped,
            "pins": self.pins,
            "unverified": self.unverified(),
            "suppressed": self.suppressions.suppressed,
        })
    }
}

fn write_drafter(out: &mut dyn Write, d: &DrafterCheck, options: &RenderOptions) -> io::Result<()> {
    let p = options.painter;
    let against = match &d.authority {
        Some(a) => format!(
            "against {} {}{} ({})",
            a.kind,
            a.id,
            a.sha.as_ref().map(|s| format!("@{s}")).unwrap_or_default(),
            a.chosen_by
        ),
        None if d.findings.iter().any(|f| {
            f.code == crate::diagnostic::Code::Diff(crate::diagnostic::codes::DiffCode::Ambiguous)
        }) =>
        {
            "no single authority: several published configs of its shape".into()
        }
        None => "no authority: lint only".into(),
    };
    let family = d.family.as_deref().unwrap_or("?");
    writeln!(out, "{}  [{family}] {against}", p.bold(&d.file))?;
    for f in &d.findings {
        write_finding(out, f, &d.file, options)?;
    }
    if d.findings.is_empty() {
        writeln!(out, "  {}", p.green("clean"))?;
    }
    Ok(())
}

/// One line per finding: `  error[code] file:line:col message`.
fn write_finding(
    out: &mut dyn Write,
    f: &Diagnostic,
    file: &str,
    options: &RenderOptions,
) -> io::Result<()> {
    let at = f
        .span
        .map_or(String::new(), |s| format!(":{}:{}", s.line, s.column));
    writeln!(
        out,
        "  {}[{}] {file}{at} {}",
        options.painter.level(f.severity),
        f.code,
        f.message
    )
}
