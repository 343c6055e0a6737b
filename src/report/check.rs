//! `check`'s report: a header line per drafter (its authority, clean or how many findings), the
//! findings of every drafter and of the run, what `[[ignore]]` suppressed, then the verdict. JSON: the
//! drafters with their authorities and findings, the files skipped and the pin file, beside the
//! diagnostics of every drafter.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde_json::json;

use super::human::count;
use super::{Painter, RenderOptions, Report, Status, Verdict};
use crate::check::{CheckReport, DrafterCheck};
use crate::diagnostic::Diagnostic;

impl Report for CheckReport {
    fn command(&self) -> &'static str {
        "check"
    }

    fn diagnostics(&self) -> Cow<'_, [Diagnostic]> {
        Cow::Owned(self.all_findings())
    }

    fn fails(&self, deny_warnings: bool) -> bool {
        CheckReport::fails(self, deny_warnings)
    }

    fn for_each_human_finding(
        &self,
        each: &mut dyn FnMut(usize, &Diagnostic) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        for (i, f) in self.findings().enumerate() {
            each(i, f)?;
        }
        Ok(())
    }

    fn summary(&self) -> Option<crate::diagnostic::Summary> {
        use crate::diagnostic::Severity;
        Some(crate::diagnostic::Summary {
            errors: self.count(Severity::Error),
            warnings: self.count(Severity::Warning),
            infos: self.count(Severity::Info),
        })
    }

    fn header(&self, p: Painter) -> Vec<String> {
        let mut lines = vec![p.bold("dflash-check check").into_owned()];
        if let Some(pins) = &self.pins {
            lines.push(format!("  pins     {pins}"));
        }
        lines.push(format!(
            "  engine   {}",
            super::engine_line(self.engine.as_ref())
        ));
        for d in &self.drafters {
            lines.push(drafter_line(d, p));
            // The weights rules not run for this drafter, and what they lacked; what a
            // deployment's check could not verify.
            let unverified = d.unverified.iter().map(|u| format!("unverified: {u}"));
            lines.extend(
                crate::pipeline::skipped_lines(&d.weights_skipped)
                    .into_iter()
                    .chain(unverified)
                    .map(|l| format!("           {l}")),
            );
        }
        if !self.skipped.is_empty() {
            lines.push(format!(
                "  skipped  {} (not drafters)",
                self.skipped.join(", ")
            ));
        }
        lines
    }

    fn sections(&self, _options: &RenderOptions) -> Vec<Vec<String>> {
        if self.suppressions.suppressed.is_empty() {
            return Vec::new();
        }
        let mut lines = vec!["suppressed by [[ignore]]:".to_string()];
        lines.extend(self.suppressions.suppressed.iter().map(|s| {
            format!(
                "  {} {}{} ({})",
                s.code,
                s.file.as_deref().unwrap_or(""),
                s.pointer,
                s.reason
            )
        }));
        vec![lines]
    }

    /// `OK` only for what was verified: an unverified drafter or an empty run says so.
    fn verdict(&self, options: &RenderOptions) -> Verdict {
        let unverified = self.unverified();
        let status = if options.fails {
            Status::Fail
        } else if self.drafters.is_empty() {
            Status::NothingChecked
        } else if unverified > 0 {
            Status::Unverified(format!("{unverified} unverified"))
        } else {
            Status::Ok
        };
        let deployments = self.deployments();
        let drafters = count(self.drafters.len() - deployments, "drafter");
        let mut detail = match deployments {
            0 => format!("{drafters} checked"),
            n => format!("{drafters} and {} checked", count(n, "deployment")),
        };
        if unverified > 0 && options.fails {
            detail.push_str(&format!(", {unverified} unverified"));
        }
        Verdict::new(status).detail(detail)
    }

    fn engine_dependent(&self) -> bool {
        true
    }

    fn engine(&self) -> Option<crate::rules::EngineRelease> {
        self.engine.clone()
    }

    fn json_body(&self) -> serde_json::Value {
        json!({
            // Written by `write_json_entry`; this keeps its place in the envelope.
            "drafters": null,
            "skipped": self.skipped,
            "pins": self.pins,
            "unverified": self.unverified(),
            "suppressed": self.suppressions.suppressed,
        })
    }

    /// The drafters are serialized from their structs as they are written: copied into a
    /// `Value` first, 10,000 drafters took about 100 MB more (issue 32; RELIABILITY.md).
    fn write_json_entry(
        &self,
        key: &str,
        map: &mut super::JsonMap<'_, '_, '_>,
    ) -> Option<serde_json::Result<()>> {
        use serde::ser::SerializeMap;
        match key {
            "drafters" => Some(map.serialize_entry(key, &self.drafters)),
            // Every finding in `all_findings`' order, serialized where it is (not copied).
            "diagnostics" => Some(map.serialize_entry(key, &AllFindings(self))),
            _ => None,
        }
    }
}

/// A check report's findings as one JSON list, in [`CheckReport::all_findings`]' order.
struct AllFindings<'a>(&'a CheckReport);

impl serde::Serialize for AllFindings<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.findings())
    }
}

/// `  drafter  FILE  [family] against AUTHORITY (chosen by)  (clean | N findings)`; a
/// deployment's `  deploy   FILE  [deployment] `LINE` checked as `launch --file`  (…)`.
fn drafter_line(d: &DrafterCheck, p: Painter) -> String {
    let family = d.family.as_deref().unwrap_or("?");
    let found = if d.findings.is_empty() {
        p.green("clean").into_owned()
    } else {
        count(d.findings.len(), "finding")
    };
    let label = match d.family.as_deref() == Some(crate::check::DEPLOYMENT) {
        true => "deploy ",
        false => "drafter",
    };
    let file = p.bold(&d.file);
    // One string, allocated once at about its length: a `format!` for the authority and one
    // for the line grew their strings several times a drafter (issue 44).
    let authority_len = d.authority.as_ref().map_or(0, |a| {
        a.kind.len() + a.id.len() + a.sha.as_ref().map_or(0, String::len) + a.chosen_by.len()
    });
    let mut line =
        String::with_capacity(file.len() + family.len() + authority_len + found.len() + 64);
    let _ = write!(line, "  {label}  {file}  [{family}] ");
    match &d.authority {
        Some(a) => {
            let _ = write!(line, "against {} {}", a.kind, a.id);
            if let Some(sha) = &a.sha {
                let _ = write!(line, "@{sha}");
            }
            let _ = write!(line, " ({})", a.chosen_by);
        }
        // A deployment's engine command, checked as `launch --file` checks it (its drafter
        // compared with the authority its target picks, when the drafter is local).
        None if d.family.as_deref() == Some(crate::check::DEPLOYMENT) => match &d.deployment {
            Some(deployment) => {
                let _ = write!(line, "{deployment}, checked as `launch --file`");
            }
            None => line.push_str("checked as `launch --file`"),
        },
        None if d.findings.iter().any(|f| {
            f.code == crate::diagnostic::Code::Diff(crate::diagnostic::codes::DiffCode::Ambiguous)
        }) =>
        {
            line.push_str("no single authority: several published configs of its shape")
        }
        None => line.push_str("no authority: lint only"),
    }
    let _ = write!(line, "  ({found})");
    line
}
