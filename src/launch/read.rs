//! Reading a launch command: from a shell script, Dockerfile or compose file (`-` is stdin),
//! or the words given after `--`. The file is read up to a cap and must be UTF-8 text.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::parse::Launch;
use crate::{config, Error, Result};

/// A parsed launch command, its notes, and the directory its relative paths resolve in.
pub type LaunchInput = (Launch, Vec<String>, Option<PathBuf>);

/// Largest launch script, Dockerfile or compose file read.
const MAX_FILE_BYTES: u64 = 1 << 20;

/// The launch command from `--file` (a script, Dockerfile or compose file; `-` is stdin) or the
/// words after `--`, parsed; with the notes and the directory relative paths resolve in.
/// `None` when neither was given.
pub fn read_launch(
    file: Option<&Path>,
    command: &[String],
    stdin: &mut dyn Read,
) -> Result<Option<LaunchInput>> {
    let file = match file {
        None => None,
        Some(path) if path.as_os_str() == "-" => {
            let mut text = String::new();
            stdin
                .take(MAX_FILE_BYTES + 1)
                .read_to_string(&mut text)
                .map_err(|e| Error::new(format!("reading stdin: {e}")))?;
            if text.len() as u64 > MAX_FILE_BYTES {
                return Err(Error::new(format!(
                    "stdin holds more than {} MiB: not a launch script",
                    MAX_FILE_BYTES >> 20
                )));
            }
            Some(("<stdin>".to_string(), text, None))
        }
        Some(path) => {
            let bytes = config::read_capped(path, MAX_FILE_BYTES)?;
            let text = String::from_utf8(bytes).map_err(|e| {
                Error::new(format!(
                    "`{}` is not UTF-8 text (byte {})",
                    path.display(),
                    e.utf8_error().valid_up_to()
                ))
                .with_hint("save the file as UTF-8 (for example `iconv -f latin1 -t utf-8`); a launch script, Dockerfile or compose file is text")
            })?;
            Some((
                path.display().to_string(),
                text,
                path.parent().map(PathBuf::from),
            ))
        }
    };
    if file.is_none() && command.is_empty() {
        return Ok(None);
    }
    let base = file.as_ref().and_then(|(_, _, dir)| dir.clone());
    // An options file the line names is read like `--file`: beside the file the line came
    // from (or the working directory), capped, UTF-8.
    let reader = |given: &str| -> Result<(String, String)> {
        let path = PathBuf::from(given);
        let path = match &base {
            Some(dir) if path.is_relative() => dir.join(path),
            _ => path,
        };
        let bytes = config::read_capped(&path, MAX_FILE_BYTES)?;
        let text = String::from_utf8(bytes).map_err(|e| {
            Error::new(format!(
                "`{}` is not UTF-8 text (byte {})",
                path.display(),
                e.utf8_error().valid_up_to()
            ))
            .with_hint("the engine's options file is YAML or JSON text")
        })?;
        Ok((path.display().to_string(), text))
    };
    let (parsed, notes) = super::parse_input_with(
        command,
        file.as_ref().map(|(n, t, _)| (n.as_str(), t.as_str())),
        &reader,
    )?;
    Ok(Some((parsed, notes, base)))
}
