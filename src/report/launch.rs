//! Renderers for a [`LaunchReport`]: the parsed launch (engine, target, drafter, K) and then the
//! diagnostics, as text or JSON. They write to any `io::Write`.

use std::io::{self, Write};

use serde_json::Value;

use super::style::Painter;
use super::{RenderOptions, Report};
use crate::diagnostic::{Diagnostic, Severity};
use crate::launch::{LaunchReport, Location, LocationKind};
use crate::rules::Engine;

fn level(p: Painter, s: Severity) -> String {
    match s {
        Severity::Error => p.red("error"),
        Severity::Warning => p.yellow("warning"),
        Severity::Info => p.dim("info"),
    }
}

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
            "{given}  (Hub, commit {}, {})",
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

/// The header (what was parsed and found), the diagnostics, what was not checked, the verdict.
pub fn write_human(
    out: &mut dyn Write,
    report: &LaunchReport,
    deny_warnings: bool,
    p: Painter,
) -> io::Result<()> {
    let l = &report.launch;
    let from = match &report.file {
        Some(f) if l.origin.line > 1 => format!("  ({f}:{})", l.origin.line),
        Some(f) => format!("  ({f})"),
        None => String::new(),
    };
    writeln!(out, "{}{from}", p.bold("dflash-check launch"))?;
    writeln!(out, "  engine    {} ({})", l.engine.as_str(), l.entrypoint)?;
    writeln!(out, "  target    {}", describe(&report.target))?;
    writeln!(out, "  drafter   {}", describe(&report.drafter))?;
    if let Some(f) = &report.drafter_facts {
        let mut facts = vec![format!("{} drafter", f.kind.as_str())];
        if let Some(b) = f.block_size {
            facts.push(format!("block_size {b}"));
        }
        if let Some(t) = &f.layer_types {
            facts.push(format!("layer_types {t}"));
        }
        writeln!(out, "            {}", facts.join("; "))?;
    }
    match l.engine {
        Engine::Vllm => {
            let method = l.method().unwrap_or_else(|| "(none)".into());
            let k = l
                .spec("num_speculative_tokens")
                .map_or_else(|| "(none)".into(), Value::to_string);
            let mut line = format!("method {method}; K (num_speculative_tokens) {k}");
            if let Some(s) = l.max_num_seqs {
                line.push_str(&format!("; max_num_seqs {s}"));
            }
            if let Some(t) = l.max_num_batched_tokens {
                line.push_str(&format!("; max_num_batched_tokens {t}"));
            }
            writeln!(out, "  spec      {line}")?;
        }
        Engine::Sglang => {
            let s = &l.sglang;
            let mut parts = vec![format!(
                "algorithm {}",
                s.algorithm.clone().unwrap_or_else(|| "(none)".into())
            )];
            for (name, v) in [
                ("num_steps", s.num_steps),
                ("eagle_topk", s.eagle_topk),
                ("num_draft_tokens", s.num_draft_tokens),
                ("dflash_block_size", s.dflash_block_size),
                ("draft_window_size", s.draft_window_size),
            ] {
                if let Some(v) = v {
                    parts.push(format!("{name} {v}"));
                }
            }
            writeln!(out, "  spec      {}", parts.join("; "))?;
        }
    }
    if !l.env.is_empty() {
        let env: Vec<String> = l
            .env
            .iter()
            .map(|e| format!("{}={}", e.name, e.value))
            .collect();
        writeln!(out, "  env       {}", env.join(" "))?;
    }
    writeln!(out)?;
    for d in &report.diagnostics {
        write_diagnostic(out, d, p)?;
    }
    if !report.diagnostics.is_empty() {
        writeln!(out)?;
    }
    for n in &report.notes {
        writeln!(out, "note: {n}")?;
    }
    for n in &report.not_checked {
        writeln!(out, "not checked: {n}")?;
    }
    if !report.notes.is_empty() || !report.not_checked.is_empty() {
        writeln!(out)?;
    }
    let s = report.summary;
    let verdict = if report.fails(deny_warnings) {
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
        if deny_warnings && s.warnings > 0 {
            " (warnings denied)"
        } else {
            ""
        }
    )
}

fn write_diagnostic(out: &mut dyn Write, d: &Diagnostic, p: Painter) -> io::Result<()> {
    let expected = d
        .expected
        .as_ref()
        .map_or(String::new(), |e| format!(" (expected {e})"));
    let path = if d.path.is_empty() {
        String::new()
    } else {
        format!(" {}:", d.path)
    };
    writeln!(
        out,
        "{}[{}]{path} {}{expected}",
        level(p, d.severity),
        d.code,
        d.message
    )?;
    if let Some(file) = &d.file {
        match d.span {
            Some(s) => writeln!(out, "  {} {file}:{}:{}", p.dim("-->"), s.line, s.column)?,
            None => writeln!(out, "  {} {file}", p.dim("-->"))?,
        }
    }
    Ok(())
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// `launch` renders in every format.
impl Report for LaunchReport {
    fn command(&self) -> &'static str {
        "launch"
    }

    fn diagnostics(&self) -> Vec<Diagnostic> {
        self.diagnostics.clone()
    }

    fn write_human(&self, out: &mut dyn Write, options: &RenderOptions) -> io::Result<()> {
        write_human(out, self, options.deny_warnings, options.painter)
    }

    fn engine_dependent(&self) -> bool {
        true
    }

    /// The engine the command starts; its version is not in the command.
    fn engine(&self) -> Option<crate::rules::EngineSpec> {
        Some(self.launch.engine.into())
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
