//! The one diagnostic model every command shares.
//!
//! `diff`, `lint`, `check`, `weights`, `launch` and `acceptance` all report what they find as
//! [`Diagnostic`]s: a typed [`Code`], one [`Severity`], where (file, JSON path or tensor name or
//! flag, line and column), what (message, the expected value, the decoded token ids) and the
//! rule's cited source. Renderers (human, JSON, GitHub annotations, SARIF) take diagnostics and
//! nothing else, so a new check gets every output format for free.
//!
//! Codes are enums, one per command family, under one [`Code`]: a typo in a code does not
//! compile, and `dflash-check explain CODE` can explain every code because each family's code
//! enum carries (or, for lint rules, is registered with) its [`CodeInfo`].

use std::fmt;

use serde::{Serialize, Serializer};

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
    /// Where the claim comes from: `repo:path@commit`, a release, or a public issue.
    pub source: &'static str,
}

/// Declares a code enum: variants with their stable kebab-case text and their [`CodeInfo`].
///
/// ```ignore
/// declare_codes! {
///     /// Codes of `check` itself.
///     pub enum CheckCode {
///         PinMissing => "pin-missing", CodeInfo { severity: Severity::Error, .. },
///     }
/// }
/// ```
#[macro_export]
macro_rules! declare_codes {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident => $text:literal, $info:expr ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant ),*
        }

        impl $name {
            /// Every code, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// The stable kebab-case text of the code.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),*
                }
            }

            /// The code's documentation.
            pub fn info(self) -> &'static $crate::diagnostic::CodeInfo {
                match self {
                    $($name::$variant => {
                        const INFO: $crate::diagnostic::CodeInfo = $info;
                        &INFO
                    }),*
                }
            }
        }
    };
}

/// Declares a code enum whose documentation lives elsewhere (lint codes: with each rule's
/// function in the rule registry). Only the variants and their kebab-case text.
#[macro_export]
macro_rules! declare_code_names {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident => $text:literal ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant ),*
        }

        impl $name {
            /// Every code, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// The stable kebab-case text of the code.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),*
                }
            }
        }
    };
}

/// Every diagnostic code, by the command family that raises it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Code {
    /// `diff`: a difference from the authority.
    Diff(crate::diff::DiffCode),
    /// `lint`: a rule of the registry in `rules`.
    Lint(crate::rules::LintCode),
    /// `check`: the gate's own findings (pins, authorities).
    Check(crate::check::CheckCode),
    /// `weights`: the safetensors header against the config and target.
    Weights(crate::weights::WeightsCode),
    /// `launch`: the engine command line.
    Launch(crate::launch::LaunchCode),
    /// `acceptance`: a running server's acceptance metrics.
    Acceptance(crate::acceptance::AcceptanceCode),
}

impl Code {
    /// The stable kebab-case text (`target-layer-ids-formula`).
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Diff(c) => c.as_str(),
            Code::Lint(c) => c.as_str(),
            Code::Check(c) => c.as_str(),
            Code::Weights(c) => c.as_str(),
            Code::Launch(c) => c.as_str(),
            Code::Acceptance(c) => c.as_str(),
        }
    }

    /// The family's name, as `explain` and docs/rules.md group codes.
    pub fn family(self) -> &'static str {
        match self {
            Code::Diff(_) => "diff",
            Code::Lint(_) => "lint",
            Code::Check(_) => "check",
            Code::Weights(_) => "weights",
            Code::Launch(_) => "launch",
            Code::Acceptance(_) => "acceptance",
        }
    }

    /// The code's documentation.
    pub fn info(self) -> &'static CodeInfo {
        match self {
            Code::Diff(c) => c.info(),
            Code::Lint(c) => c.info(),
            Code::Check(c) => c.info(),
            Code::Weights(c) => c.info(),
            Code::Launch(c) => c.info(),
            Code::Acceptance(c) => c.info(),
        }
    }

    /// Every code of every family, in a stable order.
    pub fn all() -> Vec<Code> {
        let mut all = Vec::new();
        all.extend(crate::diff::DiffCode::ALL.iter().copied().map(Code::Diff));
        all.extend(crate::rules::LintCode::ALL.iter().copied().map(Code::Lint));
        all.extend(
            crate::check::CheckCode::ALL
                .iter()
                .copied()
                .map(Code::Check),
        );
        all.extend(
            crate::weights::WeightsCode::ALL
                .iter()
                .copied()
                .map(Code::Weights),
        );
        all.extend(
            crate::launch::LaunchCode::ALL
                .iter()
                .copied()
                .map(Code::Launch),
        );
        all.extend(
            crate::acceptance::AcceptanceCode::ALL
                .iter()
                .copied()
                .map(Code::Acceptance),
        );
        all
    }

    /// The code with this text.
    pub fn parse(text: &str) -> Option<Code> {
        Code::all().into_iter().find(|c| c.as_str() == text)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

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
    /// Line and column of `path` in `file`, when it is a text file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub span: Option<Span>,
    pub message: String,
    /// The value the field should have, when it can be computed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<serde_json::Value>,
    /// The token ids the diagnostic is about, decoded through the target's tokenizer.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tokens: Vec<DecodedToken>,
    /// The rule's cited source (`repo:path@commit`, an issue), from its [`CodeInfo`].
    pub source: &'static str,
}

impl Diagnostic {
    /// A diagnostic with the code's default severity and source.
    pub fn new(code: Code, path: impl Into<String>, message: impl Into<String>) -> Diagnostic {
        let info = code.info();
        Diagnostic {
            code,
            severity: info.severity,
            file: None,
            path: path.into(),
            span: None,
            message: message.into(),
            expected: None,
            tokens: Vec::new(),
            source: info.source,
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
