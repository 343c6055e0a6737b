//! Reading a launch command: from a shell script, Dockerfile, compose file or Kubernetes
//! manifests (`-` is stdin), or the words given after `--`. The file is read up to a cap
//! (`--max-file-size`, [`DEFAULT_MAX_FILE_BYTES`] unless raised) and must be UTF-8 text; a file
//! over the cap is an error that names the cap and how to raise it, never skipped.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::parse::Launch;
use crate::{config, Error, Result};
use dflash_check_core::launch::Deployments;

/// A parsed launch command, its notes, and the directory its relative paths resolve in.
pub type LaunchInput = (Launch, Vec<String>, Option<PathBuf>);

/// Largest launch script, Dockerfile, compose file, manifest file or engine options file read
/// unless `--max-file-size` raises it: 16 MiB, three times the largest `helm template
/// --include-crds` render measured (KServe's kserve-llmisvc-crd v0.20.0, 5,376,865 bytes;
/// docs/launch.md, "Size cap").
pub const DEFAULT_MAX_FILE_BYTES: u64 = 16 << 20;

/// The option of `launch` and `check` that raises [`DEFAULT_MAX_FILE_BYTES`].
pub const MAX_FILE_FLAG: &str = "--max-file-size";

/// `bytes` as people read a file size: `16 MiB`, `5.1 MiB`, `300 KiB`, `12 bytes`.
pub fn shown_size(bytes: u64) -> String {
    let unit = |shift: u32, name: &str| match bytes % (1 << shift) {
        0 => format!("{} {name}", bytes >> shift),
        _ => format!("{:.1} {name}", bytes as f64 / (1u64 << shift) as f64),
    };
    match bytes {
        b if b >= 1 << 20 => unit(20, "MiB"),
        b if b >= 1 << 10 => unit(10, "KiB"),
        b => format!("{b} bytes"),
    }
}

/// The message about a launch file over the cap: its size, the cap, and the option that
/// raises it (`check`'s finding and `launch`'s error say the same).
pub fn too_large_message(file: &str, size: u64, cap: u64) -> String {
    // A cap that fits the file, rounded up to a whole MiB.
    let fits = size.div_ceil(1 << 20).max(1);
    format!(
        "`{file}` is {size} bytes ({}), over the {} cap on a launch file (script, Dockerfile, \
         compose file, manifests): it was not read, so nothing it deploys was checked; raise the \
         cap with `{MAX_FILE_FLAG} {fits}MiB` (or more)",
        shown_size(size),
        shown_size(cap)
    )
}

fn too_large(file: &str, size: u64, cap: u64) -> Error {
    Error::new(too_large_message(file, size, cap)).with_hint(
        "the cap keeps a wrong file from being read whole; a Helm render with its CRDs is about 5 MiB (docs/launch.md, \"Size cap\")",
    )
}

/// A size given to [`MAX_FILE_FLAG`]: bytes, or a number with `K`/`KiB`, `M`/`MiB`,
/// `G`/`GiB` (powers of 1024; case and a space before the unit do not matter).
pub fn parse_size(given: &str) -> std::result::Result<u64, String> {
    let s = given.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" => 10,
        "m" | "mib" => 20,
        "g" | "gib" => 30,
        _ => {
            return Err(format!(
                "`{given}` is not a size: write bytes or a number with KiB, MiB or GiB (`32MiB`)"
            ))
        }
    };
    let n: u64 = number.parse().map_err(|_| {
        format!("`{given}` is not a size: write bytes or a number with KiB, MiB or GiB (`32MiB`)")
    })?;
    n.checked_mul(1 << shift)
        .filter(|&b| b > 0)
        .ok_or_else(|| format!("`{given}` is not a size a file can have"))
}

/// What a launch file is, said when it is not UTF-8.
const LAUNCH_TEXT: &str = "save the file as UTF-8 (for example `iconv -f latin1 -t utf-8`); a launch script, Dockerfile, compose file or manifest is text";

/// A launch file's text: at most `cap` bytes (a larger one is [`too_large_message`]'s error),
/// UTF-8 (else an error with `hint`).
pub fn read_text(path: &Path, cap: u64, hint: &'static str) -> Result<String> {
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.is_file() && meta.len() > cap {
            return Err(too_large(&path.display().to_string(), meta.len(), cap));
        }
    }
    let bytes = config::read_capped(path, cap)?;
    String::from_utf8(bytes).map_err(|e| {
        Error::new(format!(
            "`{}` is not UTF-8 text (byte {})",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
        .with_hint(hint)
    })
}

/// The launch command from `--file` (a script, Dockerfile or compose file; `-` is stdin) or the
/// words after `--`, parsed; with the notes and the directory relative paths resolve in.
/// `None` when neither was given. Read up to [`DEFAULT_MAX_FILE_BYTES`].
pub fn read_launch(
    file: Option<&Path>,
    command: &[String],
    stdin: &mut dyn Read,
) -> Result<Option<LaunchInput>> {
    read_launch_capped(file, command, stdin, DEFAULT_MAX_FILE_BYTES)
}

/// [`read_launch`], files read up to `cap` bytes (`--max-file-size`).
pub fn read_launch_capped(
    file: Option<&Path>,
    command: &[String],
    stdin: &mut dyn Read,
    cap: u64,
) -> Result<Option<LaunchInput>> {
    let file = match file {
        None => None,
        Some(path) if path.as_os_str() == "-" => {
            let mut text = String::new();
            stdin
                .take(cap + 1)
                .read_to_string(&mut text)
                .map_err(|e| Error::new(format!("reading stdin: {e}")))?;
            if text.len() as u64 > cap {
                return Err(too_large("<stdin>", text.len() as u64, cap));
            }
            Some(("<stdin>".to_string(), text, None))
        }
        Some(path) => Some((
            path.display().to_string(),
            read_text(path, cap, LAUNCH_TEXT)?,
            path.parent().map(PathBuf::from),
        )),
    };
    if file.is_none() && command.is_empty() {
        return Ok(None);
    }
    let base = file.as_ref().and_then(|(_, _, dir)| dir.clone());
    let reader = options_reader(base.clone(), cap);
    let (parsed, notes) = super::parse_input_with(
        command,
        file.as_ref().map(|(n, t, _)| (n.as_str(), t.as_str())),
        &reader,
    )?;
    Ok(Some((parsed, notes, base)))
}

/// Every engine command of the deployment file `path` that configures speculative decoding
/// (`check` judges each as `launch --file` judges the first), read up to `cap` bytes; with the
/// file's notes and the directory relative paths resolve in.
pub fn read_deployments(path: &Path, cap: u64) -> Result<(Deployments, Option<PathBuf>)> {
    let text = read_text(path, cap, LAUNCH_TEXT)?;
    let base = path.parent().map(PathBuf::from);
    let reader = options_reader(base.clone(), cap);
    let found = dflash_check_core::launch::parse_deployments_with(
        &path.display().to_string(),
        &text,
        &reader,
    )?;
    Ok((found, base))
}

/// Reads an options file a line names like `--file`: beside the file the line came from (or
/// the working directory), capped, UTF-8.
fn options_reader(base: Option<PathBuf>, cap: u64) -> impl Fn(&str) -> Result<(String, String)> {
    move |given: &str| {
        let path = PathBuf::from(given);
        let path = match &base {
            Some(dir) if path.is_relative() => dir.join(path),
            _ => path,
        };
        let text = read_text(&path, cap, "the engine's options file is YAML or JSON text")?;
        Ok((path.display().to_string(), text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_bytes_or_binary_units() {
        assert_eq!(parse_size("1024"), Ok(1024));
        assert_eq!(parse_size("32MiB"), Ok(32 << 20));
        assert_eq!(parse_size("32 m"), Ok(32 << 20));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("512K"), Ok(512 << 10));
        assert!(parse_size("0").is_err());
        assert!(parse_size("MiB").is_err());
        assert!(parse_size("2 MB!").is_err());
        assert!(parse_size("99999999999G").is_err());
    }

    #[test]
    fn the_message_names_the_cap_and_the_option() {
        let m = too_large_message("chart.yaml", (17 << 20) + 1, DEFAULT_MAX_FILE_BYTES);
        assert!(
            m.contains("17825793 bytes (17.0 MiB)") && m.contains("the 16 MiB cap"),
            "{m}"
        );
        assert!(m.contains("--max-file-size 18MiB"), "{m}");
    }
}
