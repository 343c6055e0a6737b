//! The `dflash-check` binary: parse the command line, run, map the outcome to an exit code.
//! Nothing else lives here; see `cli.rs` for the commands and the library for the work.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
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
