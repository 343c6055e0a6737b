//! GitHub Actions workflow commands: `::error file=F,line=L,col=C,title=CODE::message`, so each
//! finding is annotated on the line of the offending key in the pull request.

use std::io::{self, Write};

use crate::check::CheckReport;
use crate::rules::Severity;

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

pub fn write(out: &mut dyn Write, report: &CheckReport) -> io::Result<()> {
    for d in &report.drafters {
        for f in &d.findings {
            let command = match f.level {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Info => "notice",
            };
            let title = if f.path.is_empty() {
                f.code.clone()
            } else {
                format!("{} ({})", f.code, f.path)
            };
            writeln!(
                out,
                "::{command} file={},line={},col={},title={}::{}",
                escape_property(&d.file),
                f.line,
                f.column,
                escape_property(&title),
                escape_data(&f.message)
            )?;
        }
    }
    let (e, w) = (
        report.count(Severity::Error),
        report.count(Severity::Warning),
    );
    writeln!(
        out,
        "dflash-check: {} drafter(s), {e} error(s), {w} warning(s)",
        report.drafters.len()
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
