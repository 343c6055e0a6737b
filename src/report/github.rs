//! GitHub Actions workflow commands: `::error file=F,line=L,col=C,title=CODE::message`, so each
//! diagnostic is annotated on the line of the offending key in the pull request. Any command's
//! diagnostics, alike.

use std::io::{self, Write};

use crate::diagnostic::{Diagnostic, Severity, Summary};

/// Escapes a message (`%`, CR, LF), as the runner's parser expects.
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a property value: as data, plus `:` and `,`.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

pub fn write(out: &mut dyn Write, diagnostics: &[Diagnostic]) -> io::Result<()> {
    for f in diagnostics {
        let command = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        let title = if f.path.is_empty() {
            f.code.to_string()
        } else {
            format!("{} ({})", f.code, f.path)
        };
        let mut props = Vec::new();
        if let Some(file) = &f.file {
            props.push(format!("file={}", escape_property(file)));
            if let Some(span) = f.span {
                props.push(format!("line={},col={}", span.line, span.column));
            }
        }
        props.push(format!("title={}", escape_property(&title)));
        writeln!(
            out,
            "::{command} {}::{}",
            props.join(","),
            escape_data(&f.message)
        )?;
    }
    let s = Summary::of(diagnostics);
    writeln!(
        out,
        "dflash-check: {} error(s), {} warning(s), {} info",
        s.errors, s.warnings, s.infos
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_as_the_runner_expects() {
        assert_eq!(escape_data("50% a\nb\r"), "50%25 a%0Ab%0D");
        assert_eq!(escape_property("a:b,c"), "a%3Ab%2Cc");
    }
}
