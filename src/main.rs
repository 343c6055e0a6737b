//! The `dflash-check` binary: parse the command line, run, map the outcome to an exit code.
//! Nothing else lives here; see `cli.rs` for the commands and the library for the work.

mod allocator;
mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = match cli::Cli::try_parse() {
        Ok(args) => args,
        Err(e) => return usage_error(e),
    };
    match cli::run(args) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            // A closed pipe (`dflash-check diff … | head`) is not an error.
            if is_broken_pipe(&err) {
                return ExitCode::from(dflash_check::exit::CLEAN);
            }
            cli::say(cli::Level::Error, &cli::error_text(&err));
            ExitCode::from(dflash_check::exit::ERROR)
        }
    }
}

/// clap's own message (help, version, a usage error). clap echoes a bad value as given, and a
/// value may hold a line break and a workflow command: when an argument holds what the display
/// filter escapes, the message is the one clap gives for the arguments as shown (the same
/// mistake, quoted escaped), or, should those parse, the original message on one line.
fn usage_error(e: clap::Error) -> ExitCode {
    use dflash_check::display::shown;
    let args: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if args.iter().all(|a| shown(a) == a.as_str()) {
        e.exit()
    }
    let shown_args = args.iter().map(|a| shown(a).into_owned());
    match cli::Cli::try_parse_from(shown_args) {
        Err(shown_error) => shown_error.exit(),
        Ok(_) => {
            let text = e.render().to_string();
            let text = text.trim_end();
            cli::say(
                cli::Level::Error,
                text.strip_prefix("error: ").unwrap_or(text),
            );
            ExitCode::from(dflash_check::exit::ERROR)
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// The clap definition is consistent (no clashing flags, groups that exist).
    #[test]
    fn cli_definition_is_consistent() {
        super::cli::Cli::command().debug_assert();
    }
}
