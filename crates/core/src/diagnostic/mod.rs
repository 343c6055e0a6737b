//! The one diagnostic model every command shares.
//!
//! `diff`, `lint`, `check`, `weights`, `launch` and `acceptance` all report what they find as
//! [`Diagnostic`]s: a typed [`Code`], one [`Severity`], where (file, JSON path or tensor name or
//! flag, line and column), what (message, the expected value, the decoded token ids) and the
//! rule's cited source. Renderers (human, JSON, GitHub annotations, SARIF) take diagnostics and
//! nothing else, so a new check gets every output format for free.
//!
//! Codes are enums, one per command family, under one [`Code`] (`codes.rs`): a typo in a code
//! does not compile. This module is the bottom layer, so it holds only the codes' names; each
//! family documents its own codes ([`CodeInfo`]) next to the code that raises them (lint: each
//! rule in the registry of `rules`), and `registry` gathers them for `explain` and the docs.

use std::fmt;

use serde::Serialize;

use crate::tokens::DecodedToken;

/// How bad a diagnostic is. One meaning everywhere (see docs/rules.md, "Severity policy"):
/// - **error**: the engine refuses to load, crashes, or acceptance collapses (the rule cites the
///   code path or a public report);
/// - **warning**: a likely mistake, or a convention that engines do not enforce;
/// - **info**: worth knowing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The documentation of one code: what `explain` prints and docs/rules.md lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CodeInfo {
    /// The default severity; a check may raise or lower it for one family or engine (the
    /// explanation says when).
    pub severity: Severity,
    /// One line: what the code catches.
    pub summary: &'static str,
    /// Why it matters, what engines do, how to fix it.
    pub explanation: &'static str,
}

pub mod codes;
pub mod rule;

pub use codes::Code;

/// A 1-based line and column in a text file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Span {
    pub line: usize,
    pub column: usize,
}

/// One thing found, by any command.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnostic {
    pub code: Code,
    pub severity: Severity,
    /// The file the diagnostic is about (a config, a safetensors shard, a launch script), as
    /// the user named it; `None` for inputs that are not files (a pasted command, a URL).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Where inside it: a JSON path (`dflash_config.target_layer_ids`), a tensor name
    /// (`layers.0.self_attn.q_proj.weight`), a flag (`--speculative-config.method`), a metric.
    /// Empty for the whole input.
    pub path: String,
    /// Line and column of `path` in `file`, when it is a text file (flattened in JSON to
    /// `line` and `column`).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub span: Option<Span>,
    pub message: String,
    /// The value the field should have, when it can be computed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<serde_json::Value>,
    /// The token ids the diagnostic is about, decoded through the target's tokenizer.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tokens: Vec<DecodedToken>,
    /// The code's provenance, rendered from evidence/evidence.toml (`evidence::source_text`).
    pub source: &'static str,
    /// When the release that serves the line is not known and the engine's releases disagree
    /// about this finding: which releases give its severity and how to pin the release
    /// (`engine::ByEngine::judge`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub releases: Option<String>,
}

impl Diagnostic {
    /// A diagnostic with the code's default severity, from its documentation, and its source,
    /// from the evidence file.
    pub fn new(
        code: impl Into<Code>,
        info: &'static CodeInfo,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> Diagnostic {
        let code: Code = code.into();
        let code_str = code.as_str();
        Diagnostic {
            code,
            severity: info.severity,
            file: None,
            path: path.into(),
            span: None,
            message: message.into(),
            expected: None,
            tokens: Vec::new(),
            source: crate::evidence::source_text(code_str),
            releases: None,
        }
    }

    pub fn severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    pub fn file(mut self, file: impl Into<String>) -> Self {
        self.file = Some(file.into());
        self
    }

    pub fn span(mut self, line: usize, column: usize) -> Self {
        self.span = Some(Span { line, column });
        self
    }

    pub fn expected(mut self, expected: serde_json::Value) -> Self {
        self.expected = Some(expected);
        self
    }

    pub fn tokens(mut self, tokens: Vec<DecodedToken>) -> Self {
        self.tokens = tokens;
        self
    }

    /// The message, then the releases that give its severity when the release serving the line
    /// is not known (one line, for the renderers that have one text per finding).
    pub fn full_message(&self) -> String {
        match &self.releases {
            Some(r) => format!("{} [{r}]", self.message),
            None => self.message.clone(),
        }
    }

    /// The file as a repository path: `/` separators, no leading `./`; `None` for inputs that
    /// are not files. The file is named relative to where the command ran (the repository root
    /// in CI), so this is the path SARIF, GitLab and suppressions compare.
    pub fn repo_path(&self) -> Option<String> {
        self.file.as_deref().map(|f| {
            let f = f.replace('\\', "/");
            let mut s = f.as_str();
            while let Some(rest) = s.strip_prefix("./") {
                s = rest.trim_start_matches('/');
            }
            s.to_string()
        })
    }

    /// Where inside the file, as an RFC 6901 JSON pointer (`/dflash_config/mask_token_id`).
    pub fn pointer(&self) -> String {
        if self.path.is_empty() {
            String::new()
        } else {
            crate::json::pointer(&self.path)
        }
    }

    /// A fingerprint that survives edits elsewhere in the file: the sha256 (hex) of the code,
    /// the repository path and the JSON pointer, never the line. Two findings of one code at one
    /// place share it, as they should: they are the same finding.
    pub fn fingerprint(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        for part in [
            self.code.as_str(),
            self.repo_path().as_deref().unwrap_or(""),
            &self.pointer(),
        ] {
            // Length-prefixed, so ("ab", "c") and ("a", "bc") differ.
            h.update((part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// Counts by severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
}

impl Summary {
    pub fn of<'a>(diagnostics: impl IntoIterator<Item = &'a Diagnostic>) -> Summary {
        let mut s = Summary::default();
        for d in diagnostics {
            match d.severity {
                Severity::Error => s.errors += 1,
                Severity::Warning => s.warnings += 1,
                Severity::Info => s.infos += 1,
            }
        }
        s
    }

    /// Whether these counts fail a gate: any error, or any warning with `deny_warnings`.
    pub fn fails(&self, deny_warnings: bool) -> bool {
        self.errors > 0 || (deny_warnings && self.warnings > 0)
    }
}

/// Sorts diagnostics the way every renderer shows them: by file, severity, position, code.
pub fn sort(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by(|a, b| {
        (&a.file, a.severity, a.span, a.code, &a.path)
            .cmp(&(&b.file, b.severity, b.span, b.code, &b.path))
    });
}
