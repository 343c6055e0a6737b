//! Renderers: one per output format, for every command alike.
//!
//! A command's result implements [`Report`]: its diagnostics (the one model every command
//! shares), the parts of its human page (header lines, sections, the verdict's detail), its JSON
//! body, and whether it fails the gate. [`render`] then writes any report in any [`Format`]:
//! `human` (one layout for every command, [`human`]: header, one line per finding, sections,
//! one summary line), `json` (a versioned envelope around the report's body), `github`
//! (workflow annotations and the summary line, plus a step summary table under it), `sarif`
//! (2.1.0) and `gitlab` (Code Quality JSON); each takes any report. Renderers write to any `io::Write`
//! and never choose exit codes: the caller asks the report whether it fails and passes that in.

pub mod acceptance;
pub mod check;
pub mod diff;
pub mod doctor;
pub mod explain;
pub mod fix;
pub mod github;
pub mod gitlab;
pub mod human;
pub mod launch;
pub mod lint;
pub mod location;
pub mod sarif;
pub mod style;
pub mod weights;

use std::borrow::Cow;
use std::io::{self, Write};

use serde_json::{json, Value};

use crate::diagnostic::{Diagnostic, Summary};
use crate::rules::EngineRelease;

pub use human::{Status, Verdict};
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
///
/// The human page is laid out by [`human::write`] alone, from the parts a report provides:
/// [`header`](Report::header), the findings (one line each, [`human::finding_line`], with
/// [`finding_notes`](Report::finding_notes) indented under it),
/// [`sections`](Report::sections), then one summary line from [`verdict`](Report::verdict).
pub trait Report {
    /// The command's name (`diff`, `lint`, `check`, …), for the envelope and the header.
    fn command(&self) -> &'static str;
    /// Everything found, as diagnostics: borrowed when the report holds them, built when it
    /// derives them (a comparison's differences, a fix's edits).
    fn diagnostics(&self) -> Cow<'_, [Diagnostic]>;
    /// The command-specific JSON fields, merged into the envelope.
    fn json_body(&self) -> Value;
    /// The counts of the diagnostics when the report knows them without building the list;
    /// the envelope's `diagnostics` are then written by [`Report::write_json_entry`] (key
    /// `diagnostics`) instead of copied out of [`Report::diagnostics`] first (`check` of 10,000
    /// drafters held a second copy of every finding, issue 44). `None`: the list is built once.
    fn summary(&self) -> Option<Summary> {
        None
    }
    /// Whether the report fails the gate (exit 1): by default any error, or any warning when
    /// warnings are denied.
    fn fails(&self, deny_warnings: bool) -> bool {
        Summary::of(self.diagnostics().iter()).fails(deny_warnings)
    }
    /// The header block: `dflash-check COMMAND SUBJECT`, then `  key  value` lines saying what
    /// was read and compared.
    fn header(&self, p: Painter) -> Vec<String>;
    /// The findings listed one per line (by default every diagnostic; a report that shows
    /// them inside a section of its own, as doctor's causes, lists none here).
    fn human_findings(&self) -> Cow<'_, [Diagnostic]> {
        self.diagnostics()
    }
    /// Calls `each` with every human finding in order (by default those of
    /// [`Report::human_findings`]); a report that holds its findings in several lists walks
    /// them where they are instead of copying them into one (`check`, issue 44).
    fn for_each_human_finding(
        &self,
        each: &mut dyn FnMut(usize, &Diagnostic) -> io::Result<()>,
    ) -> io::Result<()> {
        for (i, f) in self.human_findings().iter().enumerate() {
            each(i, f)?;
        }
        Ok(())
    }
    /// Lines indented under the `index`-th human finding (after its location).
    fn finding_notes(&self, _index: usize, _finding: &Diagnostic) -> Vec<String> {
        Vec::new()
    }
    /// Blocks between the findings and the summary line (a table, a fix line, the ranked
    /// causes), each separated from the next by a blank line.
    fn sections(&self, _options: &RenderOptions) -> Vec<Vec<String>> {
        Vec::new()
    }
    /// The summary line's status and detail; by default `FAIL` or `OK` as the caller decided.
    fn verdict(&self, options: &RenderOptions) -> Verdict {
        Verdict::new(Status::of(options.fails))
    }
    /// Writes the body's entry `key` straight into the envelope, instead of `json_body`'s value
    /// for it (then a placeholder that keeps the key's place): for a list too long to copy into
    /// a `Value` first (`diff`'s differences, one per key of a large config, cost over a
    /// kilobyte each as `Value`s). `None`: `json_body`'s value is written.
    fn write_json_entry(
        &self,
        _key: &str,
        _map: &mut JsonMap<'_, '_, '_>,
    ) -> Option<serde_json::Result<()>> {
        None
    }
    /// Whether the command's verdict depends on the engine (lint rules run): then JSON and SARIF
    /// say which engine it assumed, even none.
    fn engine_dependent(&self) -> bool {
        false
    }
    /// The engine and version the verdict assumed (`None`: no engine, the statement that holds
    /// for every engine).
    fn engine(&self) -> Option<EngineRelease> {
        None
    }
}

/// The header's `engine` line: the engine and release the verdict judged and where the release
/// came from (`vllm 0.28.0 (image vllm/vllm-openai:v0.28.0)`), the default window when the
/// release is not known, or that no engine was named.
pub fn engine_line(engine: Option<&EngineRelease>) -> String {
    match engine {
        Some(e) => e.header(),
        None => "none named: engine claims are judged as they hold for every engine (--engine \
                 ENGINE[@RELEASE] judges one)"
            .to_string(),
    }
}

/// The envelope's `assumed`: `{engine, version}` or `null`.
pub fn assumed_json(engine: Option<EngineRelease>) -> Value {
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
        Format::Human => human::write(report, options, out),
        Format::Json => {
            write_envelope(report, options, &mut *out)?;
            writeln!(out)
        }
        Format::Github => github::write(out, report, options),
        Format::Sarif => sarif::write(out, report),
        Format::Gitlab => gitlab::write(out, report),
    }
}

/// The JSON envelope's map while it is being written.
pub type JsonMap<'a, 'w, 'o> =
    serde_json::ser::Compound<'a, &'w mut Chunked<'o>, serde_json::ser::PrettyFormatter<'static>>;

/// The envelope's writer: serde_json writes a few bytes at a time (a quote, a colon, an
/// indent), here into a buffer whose writes are inlined, passed on to the report's writer
/// 64 KiB at a time. Through `dyn Write` each small write was a call or two: a fifth of the
/// rendering of `check --format json` over thousands of drafters (issue 44).
pub struct Chunked<'o> {
    out: &'o mut dyn Write,
    buf: Vec<u8>,
}

impl<'o> Chunked<'o> {
    const CAPACITY: usize = 64 * 1024;

    fn new(out: &'o mut dyn Write) -> Chunked<'o> {
        Chunked {
            out,
            buf: Vec::with_capacity(Self::CAPACITY),
        }
    }

    /// Passes on what is buffered.
    fn drain(&mut self) -> io::Result<()> {
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }
}

impl Write for Chunked<'_> {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.buf.extend_from_slice(buf);
        if self.buf.len() >= Self::CAPACITY {
            self.drain()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.drain()
    }
}

/// Writes `{schema_version, command, assumed (engine-dependent commands), …body, diagnostics,
/// summary}`, pretty-printed. A body key of an envelope key's name replaces it in place. The
/// diagnostics, and the body entries a report writes itself ([`Report::write_json_entry`]),
/// are serialized from the report's own structs, never copied into a `serde_json::Value`:
/// a diff with a difference per key of a 200,000-key config holds 200,000 of each.
fn write_envelope(
    report: &dyn Report,
    options: &RenderOptions,
    out: &mut dyn Write,
) -> io::Result<()> {
    use serde::ser::{SerializeMap, Serializer};
    // Built only when the report cannot count and write its diagnostics itself.
    let (counts, diagnostics) = match report.summary() {
        Some(counts) => (counts, None),
        None => {
            let all = report.diagnostics();
            (Summary::of(all.iter()), Some(all))
        }
    };
    let mut summary = json!(counts);
    summary["deny_warnings"] = json!(options.deny_warnings);
    summary["fails"] = json!(options.fails);
    let mut head = serde_json::Map::new();
    head.insert("schema_version".into(), json!(SCHEMA_VERSION));
    head.insert("command".into(), json!(report.command()));
    if report.engine_dependent() {
        head.insert("assumed".into(), assumed_json(report.engine()));
    }
    if let Value::Object(body) = report.json_body() {
        head.extend(body);
    }
    let mut chunked = Chunked::new(out);
    let mut serializer = serde_json::Serializer::pretty(&mut chunked);
    let mut map = serializer.serialize_map(None)?;
    let write_diagnostics = |map: &mut JsonMap<'_, '_, '_>| match &diagnostics {
        Some(all) => map.serialize_entry("diagnostics", all),
        None => report
            .write_json_entry("diagnostics", map)
            .unwrap_or_else(|| map.serialize_entry("diagnostics", &report.diagnostics())),
    };
    for (key, value) in &head {
        match key.as_str() {
            "diagnostics" => write_diagnostics(&mut map)?,
            "summary" => map.serialize_entry(key, &summary)?,
            _ => match report.write_json_entry(key, &mut map) {
                Some(written) => written?,
                None => map.serialize_entry(key, value)?,
            },
        }
    }
    if !head.contains_key("diagnostics") {
        write_diagnostics(&mut map)?;
    }
    if !head.contains_key("summary") {
        map.serialize_entry("summary", &summary)?;
    }
    map.end()?;
    chunked.drain()
}

/// `s` for plurals.
pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
