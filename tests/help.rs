//! `--help` of every command, snapshotted: a changed flag or wording shows up in review.

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
        let mut args: Vec<&str> = cmd.split_whitespace().collect();
        args.push("--help");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_dflash-check"))
            .args(&args)
            .env("COLUMNS", "100")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{cmd} --help");
        let text = String::from_utf8(out.stdout).unwrap();
        let name = if cmd.is_empty() {
            "top".to_string()
        } else {
            cmd.to_string()
        };
        insta::assert_snapshot!(format!("help_{name}"), text);
    }
}
