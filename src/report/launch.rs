//! Renderers for a [`LaunchReport`]: the parsed launch (engine, target, drafter, K) and then the
//! diagnostics; the notes and what was not checked as a section.

use std::borrow::Cow;

use serde_json::Value;

use super::human::{Status, Verdict};
use super::style::Painter;
use super::{RenderOptions, Report};
use crate::diagnostic::Diagnostic;
use crate::launch::{LaunchReport, Location, LocationKind};

fn describe(loc: &Location) -> String {
    let given = loc.given.clone().unwrap_or_else(|| "-".into());
    match loc.kind {
        LocationKind::Local => match loc.note.as_deref() {
            Some(flag @ ("--drafter" | "--target")) => format!(
                "{given}  (read from {} given with {flag})",
                loc.path.clone().unwrap_or_default()
            ),
            _ => format!("{given}  (local: {})", loc.path.clone().unwrap_or_default()),
        },
        LocationKind::Hub => format!(
            "{given}  (Hub{}, commit {}, {})",
            // A llama.cpp GGUF: the file of the repo that was chosen and read.
            loc.path
                .as_deref()
                .filter(|p| p.starts_with("hf://"))
                .map(|p| format!(": {p}"))
                .unwrap_or_default(),
            loc.sha.clone().unwrap_or_default(),
            match loc.freshness.as_deref() {
                Some("hub") => "asked now",
                _ => "from the cache",
            }
        ),
        LocationKind::Fused => format!("none named: {}", loc.note.clone().unwrap_or_default()),
        LocationKind::None => loc.note.clone().unwrap_or_else(|| "not named".into()),
        LocationKind::Unavailable => format!("{given}  (could not be read; see below)"),
    }
}

/// The header: what was parsed and found.
fn header(report: &LaunchReport, p: Painter) -> Vec<String> {
    let mut lines = Vec::new();
    let l = &report.launch;
    let from = match &report.file {
        Some(f) if l.origin.line > 1 => format!("  ({f}:{})", l.origin.line),
        Some(f) => format!("  ({f})"),
        None => String::new(),
    };
    lines.push(format!("{}{from}", p.bold("dflash-check launch")));
    lines.push(format!(
        "  engine    {}",
        report.release.header_started(Some(&l.entrypoint))
    ));
    lines.push(format!("  target    {}", describe(&report.target)));
    lines.push(format!("  drafter   {}", describe(&report.drafter)));
    if let Some(f) = &report.drafter_facts {
        let mut facts = vec![format!("{} drafter", f.kind_str())];
        if let Some(b) = f.block_size {
            facts.push(format!("block_size {b}"));
        }
        if let Some(t) = &f.layer_types {
            facts.push(format!("layer_types {t}"));
        }
        lines.push(format!("            {}", facts.join("; ")));
    }
    if let Some(a) = &report.authority {
        lines.push(format!("  authority {a}"));
    }
    lines.push(format!("  spec      {}", l.engine.code().spec_line(l)));
    if !l.env.is_empty() {
        let env: Vec<String> = l
            .env
            .iter()
            .map(|e| format!("{}={}", e.name, e.value))
            .collect();
        lines.push(format!("  env       {}", env.join(" ")));
    }
    lines
}

/// `launch` renders in every format.
impl Report for LaunchReport {
    fn command(&self) -> &'static str {
        "launch"
    }

    fn diagnostics(&self) -> Cow<'_, [Diagnostic]> {
        Cow::Borrowed(&self.diagnostics)
    }

    fn fails(&self, deny_warnings: bool) -> bool {
        LaunchReport::fails(self, deny_warnings)
    }

    fn header(&self, p: Painter) -> Vec<String> {
        header(self, p)
    }

    fn sections(&self, _options: &RenderOptions) -> Vec<Vec<String>> {
        let notes = self.notes.iter().map(|n| format!("note: {n}"));
        let not_checked = self.not_checked.iter().map(|n| format!("not checked: {n}"));
        vec![notes.chain(not_checked).collect()]
    }

    /// `OK` only for what was verified: a drafter or target that could not be read, or checks
    /// listed under "not checked", make it `OK (unverified: …)`.
    fn verdict(&self, options: &RenderOptions) -> Verdict {
        if options.fails {
            return Verdict::new(Status::Fail);
        }
        let what = crate::launch::manifest::unverified(self);
        if what.is_empty() {
            Verdict::new(Status::Ok)
        } else {
            Verdict::new(Status::Unverified(format!(
                "unverified: {}",
                what.join("; ")
            )))
        }
    }

    fn engine_dependent(&self) -> bool {
        true
    }

    /// The engine the command starts, at the release that serves it when known.
    fn engine(&self) -> Option<crate::rules::EngineRelease> {
        Some(self.release.clone())
    }

    fn json_body(&self) -> Value {
        let mut body = serde_json::to_value(self).unwrap_or_default();
        if let Value::Object(map) = &mut body {
            // The envelope carries the diagnostics and the summary.
            map.remove("diagnostics");
            map.remove("summary");
        }
        body
    }
}
