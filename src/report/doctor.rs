//! `doctor`'s report: one screen. What was measured and where the drafter, target and authority
//! came from; then the causes, most likely first, each with the findings that show it and its
//! repair; what was ruled out; the restart; a verdict line. JSON: the same, structured.

use std::io::{self, Write};

use serde_json::json;

use super::{RenderOptions, Report};
use crate::diagnostic::Diagnostic;
use crate::doctor::DoctorReport;

/// Findings shown per cause in human output (JSON has them all).
const SHOWN_PER_CAUSE: usize = 4;

impl Report for DoctorReport {
    fn command(&self) -> &'static str {
        "doctor"
    }

    fn diagnostics(&self) -> Vec<Diagnostic> {
        DoctorReport::diagnostics(self)
    }

    fn write_human(&self, out: &mut dyn Write, options: &RenderOptions) -> io::Result<()> {
        let p = options.painter;
        writeln!(out, "{}", p.bold("dflash-check doctor"))?;
        if let Some(a) = &self.acceptance_summary {
            writeln!(out, "  measured   {a}")?;
        }
        writeln!(out, "  symptom    {}", self.symptom.describe())?;
        let l = &self.located;
        let line = |what: &Option<String>, from: &Option<String>| match (what, from) {
            (Some(w), Some(f)) => format!("{w}  (from {f})"),
            (Some(w), None) => w.clone(),
            _ => "unknown".to_string(),
        };
        writeln!(out, "  drafter    {}", line(&l.drafter, &l.drafter_from))?;
        writeln!(out, "  target     {}", line(&l.target, &l.target_from))?;
        if let Some(a) = &l.authority {
            writeln!(out, "  authority  {a}")?;
            if let Some(why) = &l.authority_chosen_by {
                writeln!(out, "             chosen by {why}")?;
            }
        }
        writeln!(out)?;
        if self.causes.is_empty() {
            writeln!(
                out,
                "No cause found in the drafter, its target, its weights or the launch."
            )?;
        } else {
            writeln!(out, "Causes, most likely first:")?;
        }
        // The same repair (one `fix` line repairs every field that differs) is printed once.
        let mut repairs_seen: Vec<(&String, usize)> = Vec::new();
        for (i, c) in self.causes.iter().enumerate() {
            let tag = if c.explains_symptom {
                " — explains the symptom"
            } else {
                ""
            };
            writeln!(out, "{:>2}. {}{tag}", i + 1, p.bold(c.title))?;
            for f in c.findings.iter().take(SHOWN_PER_CAUSE) {
                writeln!(
                    out,
                    "      {}[{}] {}",
                    p.level(f.severity),
                    f.code,
                    one_line(&f.message, 110)
                )?;
            }
            if c.findings.len() > SHOWN_PER_CAUSE {
                writeln!(
                    out,
                    "      … {} more (--format json lists them)",
                    c.findings.len() - SHOWN_PER_CAUSE
                )?;
            }
            for r in &c.repair {
                match repairs_seen.iter().find(|(seen, _)| *seen == r) {
                    Some((_, n)) => writeln!(out, "      repair: the same as {n}.")?,
                    None => {
                        writeln!(out, "      repair: {}", p.bold(r))?;
                        repairs_seen.push((r, i + 1));
                    }
                }
            }
        }
        if !self.ruled_out.is_empty() {
            writeln!(out)?;
            writeln!(out, "Ruled out: {}", self.ruled_out.join(", "))?;
        }
        for n in &self.not_checked {
            writeln!(out, "Not checked: {}", one_line(n, 150))?;
        }
        if let Some(r) = &self.restart {
            writeln!(out, "Then: {r}")?;
        }
        let verdict = if options.fails {
            p.red("FAIL")
        } else {
            p.green("OK")
        };
        writeln!(
            out,
            "{verdict}: {} cause(s), {} finding(s)",
            self.causes.len(),
            self.causes.iter().map(|c| c.findings.len()).sum::<usize>()
        )
    }

    fn engine_dependent(&self) -> bool {
        true
    }

    /// The engine the server's metrics came from (the one the lint ran for), when measured.
    fn engine(&self) -> Option<crate::rules::EngineSpec> {
        self.acceptance.as_ref().map(|a| {
            match a.measurement.engine() {
                crate::acceptance::ServerEngine::Vllm => crate::rules::Engine::Vllm,
                crate::acceptance::ServerEngine::Sglang => crate::rules::Engine::Sglang,
            }
            .into()
        })
    }

    fn json_body(&self) -> serde_json::Value {
        json!({
            "symptom": self.symptom,
            "acceptance": self.acceptance_summary,
            "server": self.server,
            "located": self.located,
            "causes": self.causes,
            "ruled_out": self.ruled_out,
            "not_checked": self.not_checked,
            "restart": self.restart,
        })
    }
}

/// The first line of `s`, at most `max` characters.
fn one_line(s: &str, max: usize) -> String {
    let first = s.lines().next().unwrap_or("");
    if first.chars().count() <= max {
        first.to_string()
    } else {
        let cut: String = first.chars().take(max - 1).collect();
        format!("{cut}…")
    }
}
