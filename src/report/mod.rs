//! Renderers: one per output format, for every command alike.
//!
//! A command's result implements [`Report`]: its diagnostics (the one model every command
//! shares), its human rendering, and its JSON body. [`render`] then writes any report in any
//! [`Format`]: `human` (the report's own), `json` (a versioned envelope around the report's
//! body), `github` (workflow annotations, plus a step summary table), `sarif` (2.1.0) and
//! `gitlab` (Code Quality JSON), the last three built from the diagnostics alone. Renderers write to any `io::Write` and never choose exit codes: the
//! caller decides whether the report fails and passes that in.

pub mod acceptance;
pub mod check;
pub mod diff;
pub mod doctor;
pub mod explain;
pub mod fix;
pub mod github;
pub mod gitlab;
pub mod launch;
pub mod lint;
pub mod sarif;
pub mod style;
pub mod weights;

use std::io::{self, Write};

use serde_json::{json, Value};

use crate::diagnostic::{Diagnostic, Summary};
use crate::rules::EngineSpec;

pub use style::Painter;

/// Version of the machine-readable output. Bumped on any incompatible change: 2 brought one
/// diagnostic shape (`code`, `severity`, `file`, `path`, `line`, `column`, …) to every command.
pub const SCHEMA_VERSION: u32 = 2;

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Human,
    Json,
    Github,
    Sarif,
    Gitlab,
}

/// How to render: colours, and the verdict the caller reached.
#[derive(Debug, Clone, Copy)]
pub struct RenderOptions {
    pub painter: Painter,
    /// Whether warnings fail the gate (`--deny warnings`, `--strict`), for the human verdict.
    pub deny_warnings: bool,
    /// Whether the report fails the gate, decided by the caller.
    pub fails: bool,
}

/// A command's result, renderable in every format.
pub trait Report {
    /// The command's name (`diff`, `lint`, `check`, …), for the JSON envelope.
    fn command(&self) -> &'static str;
    /// Everything found, as diagnostics.
    fn diagnostics(&self) -> Vec<Diagnostic>;
    /// The human rendering.
    fn write_human(&self, out: &mut dyn Write, options: &RenderOptions) -> io::Result<()>;
    /// The command-specific JSON fields, merged into the envelope.
    fn json_body(&self) -> Value;
    /// Whether the command's verdict depends on the engine (lint rules run): then JSON and SARIF
    /// say which engine it assumed, even none.
    fn engine_dependent(&self) -> bool {
        false
    }
    /// The engine and version the verdict assumed (`None`: no engine, the statement that holds
    /// for every engine).
    fn engine(&self) -> Option<EngineSpec> {
        None
    }
}

/// The envelope's `assumed`: `{engine, version}` or `null`.
pub fn assumed_json(engine: Option<EngineSpec>) -> Value {
    engine.map_or(Value::Null, |e| e.json())
}

/// Writes `report` in `format`.
pub fn render(
    report: &dyn Report,
    format: Format,
    options: &RenderOptions,
    out: &mut dyn Write,
) -> io::Result<()> {
    match format {
        Format::Human => report.write_human(out, options),
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, &envelope(report, options))?;
            writeln!(out)
        }
        Format::Github => github::write(out, &report.diagnostics()),
        Format::Sarif => {
            let engine = report.engine_dependent().then(|| report.engine());
            sarif::write(out, report.command(), &report.diagnostics(), engine)
        }
        Format::Gitlab => gitlab::write(out, &report.diagnostics()),
    }
}

/// `{schema_version, command, assumed (engine-dependent commands), …body, diagnostics, summary}`.
pub fn envelope(report: &dyn Report, options: &RenderOptions) -> Value {
    let diagnostics = report.diagnostics();
    let summary = Summary::of(&diagnostics);
    let mut value = json!({
        "schema_version": SCHEMA_VERSION,
        "command": report.command(),
    });
    if report.engine_dependent() {
        value["assumed"] = assumed_json(report.engine());
    }
    if let (Some(map), Value::Object(body)) = (value.as_object_mut(), report.json_body()) {
        map.extend(body);
    }
    value["diagnostics"] = json!(diagnostics);
    let mut s = json!(summary);
    s["deny_warnings"] = json!(options.deny_warnings);
    s["fails"] = json!(options.fails);
    value["summary"] = s;
    value
}

/// `s` for plurals.
pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
