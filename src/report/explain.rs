//! `explain`: the list of every code (lint, diff, check, weights, launch, acceptance) with its
//! severity and summary, and the full explanation of one code with its cited source.

use std::io::{self, Write};

use crate::diagnostic::Code;
use crate::registry;

/// Every code, grouped by family: `code  severity  summary`.
pub fn write_code_list(out: &mut dyn Write) -> io::Result<()> {
    let codes = Code::all();
    let width = codes.iter().map(|c| c.as_str().len()).max().unwrap_or(0);
    let mut family = "";
    for code in codes {
        if code.family() != family {
            family = code.family();
            writeln!(out, "{family}:")?;
        }
        let info = registry::info(code);
        writeln!(
            out,
            "  {:<width$}  {:<7}  {}",
            code.as_str(),
            info.severity.as_str(),
            info.summary
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "Run `dflash-check explain CODE` for the details of one code."
    )
}

/// The full explanation of one code.
/// The line `explain OLD-CODE` starts with: the old name is an alias of `code` until the next
/// release (docs/rules.md, "Renamed codes").
pub fn write_alias_note(out: &mut dyn Write, old: &str, code: Code) -> io::Result<()> {
    writeln!(
        out,
        "`{old}` is an alias of `{}` until the next release, which removes it: use `{}` (in \
         [[ignore]] entries too).\n",
        code.as_str(),
        code.as_str()
    )
}

pub fn write_explanation(out: &mut dyn Write, code: Code) -> io::Result<()> {
    let info = registry::info(code);
    writeln!(
        out,
        "{} ({}, {})",
        code.as_str(),
        code.family(),
        info.severity.as_str()
    )?;
    writeln!(out, "{}", info.summary)?;
    writeln!(out)?;
    writeln!(out, "{}", info.explanation)?;
    writeln!(out)?;
    if let Some(rule) = registry::rule(code) {
        writeln!(out, "Applies to: {}", rule.scope())?;
        let needs = rule.needs();
        let needs = if needs.is_empty() {
            "its input alone".to_string()
        } else {
            needs.join("; ")
        };
        writeln!(out, "Needs: {needs}")?;
    }
    let tables = registry::by_engine(code);
    if !tables.is_empty() {
        writeln!(
            out,
            "Severity by engine (--engine ENGINE[@RELEASE] picks a row; with no release, the \
             engine's default window):"
        )?;
        for line in tables.iter().flat_map(|b| b.lines()) {
            writeln!(out, "  {line}")?;
        }
    }
    writeln!(
        out,
        "Source: {}",
        crate::evidence::source_text(code.as_str())
    )?;
    write!(out, "{}", crate::evidence::describe(code.as_str()))
}

/// One code as JSON: everything the human page says, as fields — code, family, severity,
/// summary, explanation, where it applies and what it needs (rules only), the severity rows by
/// engine, the source, and the evidence (`tests/help.rs` checks that nothing of the page is
/// missing).
fn code_json(code: Code) -> serde_json::Value {
    let info = registry::info(code);
    let rule = registry::rule(code);
    let tables = registry::by_engine(code);
    let table_json = |by: &crate::rules::ByEngine| {
        let rows: Vec<serde_json::Value> = by
            .rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "engine": r.engine.as_str(),
                    "versions": r.versions(),
                    "since": r.since.map(|l| crate::engine::line_text(r.engine, l)),
                    "until": r.until.map(|l| crate::engine::line_text(r.engine, l)),
                    "severity": r.severity.map(|s| s.as_str()),
                    "does": r.does,
                })
            })
            .collect();
        serde_json::json!({
            "rows": rows,
            "no_engine": by.no_engine.map(|s| s.as_str()),
            "case": by.case,
        })
    };
    // The rule's one table (or its first case's), and the tables of its other cases.
    let by_engine = tables.first().map(|by| table_json(by));
    let cases: Vec<serde_json::Value> = tables.iter().skip(1).map(|by| table_json(by)).collect();
    serde_json::json!({
        "code": code.as_str(),
        "family": code.family(),
        "severity": info.severity.as_str(),
        "summary": info.summary,
        "explanation": info.explanation,
        "applies_to": rule.map(|r| r.scope()),
        "needs": rule.map(|r| r.needs()),
        "by_engine": by_engine,
        "by_engine_cases": cases,
        "source": crate::evidence::source_text(code.as_str()),
        "evidence": crate::evidence::json(code.as_str()),
    })
}

/// The codes as JSON, in the envelope every command uses: [`code_json`] of each.
pub fn write_json(out: &mut dyn Write, codes: &[Code]) -> io::Result<()> {
    let list: Vec<serde_json::Value> = codes.iter().map(|&code| code_json(code)).collect();
    serde_json::to_writer_pretty(
        &mut *out,
        &serde_json::json!({
            "schema_version": super::SCHEMA_VERSION,
            "command": "explain",
            "codes": list,
        }),
    )?;
    writeln!(out)
}
