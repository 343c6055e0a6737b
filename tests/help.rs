//! `--help` of every command, snapshotted: a changed flag or wording shows up in review.

/// `dflash-check CMD --help` at 100 columns.
fn help_text(cmd: &str) -> String {
    let mut args: Vec<&str> = cmd.split_whitespace().collect();
    args.push("--help");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args(&args)
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{cmd} --help");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn help_of_every_command() {
    for cmd in [
        "",
        "diff",
        "fix",
        "lint",
        "explain",
        "check",
        "pin",
        "env",
        "snapshots",
        "launch",
        "acceptance",
        "doctor",
        "weights",
    ] {
        let text = help_text(cmd);
        let name = if cmd.is_empty() {
            "top".to_string()
        } else {
            cmd.to_string()
        };
        insta::assert_snapshot!(format!("help_{name}"), text);
    }
}

/// Every example in every `--help` pastes as it is printed (issue 45): an example line is a
/// command (`dflash-check …`, or a pipe into it) or the continuation of one ending in `\`,
/// never a command wrapped mid-way (`--against` on one line, its path on the next).
#[test]
fn examples_are_never_split_mid_command() {
    for cmd in [
        "",
        "diff",
        "fix",
        "lint",
        "check",
        "pin",
        "launch",
        "acceptance",
        "doctor",
        "weights",
    ] {
        let text = help_text(cmd);
        let examples = text
            .split("Examples:\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{cmd} --help has no examples"));
        let mut continued = false;
        for line in examples.lines().take_while(|l| !l.is_empty()) {
            let starts_command =
                line.starts_with("  dflash-check ") || line.starts_with("  helm template ");
            assert!(
                starts_command || (continued && line.starts_with("      ")),
                "{cmd} --help: an example split mid-command at `{line}`:\n{examples}"
            );
            continued = line.ends_with('\\');
        }
    }
}

/// `check --help` says it checks deployments (manifests), `launch --help` names llama.cpp.
#[test]
fn check_and_launch_help_name_what_they_read() {
    let help = help_text;
    let check = help("check");
    assert!(
        check.contains("deployment") && check.contains("manifests"),
        "{check}"
    );
    assert!(help("launch").contains("llama.cpp"));
}
