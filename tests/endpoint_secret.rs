//! A password in the Hub endpoint (`HF_ENDPOINT=http://user:secret@host`, issue 20 item 6) is
//! never printed: not by `env` in any format, not in a Hub error's message or hint.

mod support;

use std::process::Command;

use support::HubServer;

const SECRET: &str = "s3cretPASSWORD";

fn run(args: &[&str], endpoint: &str) -> (i32, String) {
    let cache = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .args(args)
        .arg("--cache-dir")
        .arg(cache.path())
        .env("HF_ENDPOINT", endpoint)
        .env_remove("HF_HUB_OFFLINE")
        .env_remove("HF_TOKEN")
        .env("HOME", "/nonexistent-home")
        .output()
        .unwrap();
    let mut all = String::from_utf8_lossy(&out.stdout).into_owned();
    all.push_str(&String::from_utf8_lossy(&out.stderr));
    assert!(!all.contains(SECRET), "the password was printed:\n{all}");
    (out.status.code().unwrap_or(-1), all)
}

#[test]
fn env_redacts_the_endpoint_password_in_every_format() {
    let endpoint = format!("http://alice:{SECRET}@127.0.0.1:9");
    for format in ["human", "json"] {
        let (code, out) = run(&["env", "--format", format], &endpoint);
        assert_eq!(code, 0, "{format}: {out}");
        assert!(out.contains("http://***@127.0.0.1:9"), "{format}: {out}");
    }
    // `env` lists facts, not findings: the formats made of findings are refused (exit 2),
    // still without the password.
    for format in ["github", "sarif", "gitlab"] {
        let (code, out) = run(&["env", "--format", format], &endpoint);
        assert_eq!(code, 2, "{format}: {out}");
    }
    // A malformed endpoint is refused without echoing what may be a password.
    let (code, out) = run(&["env"], &format!("alice:{SECRET}@127.0.0.1:9"));
    assert_eq!(code, 2, "{out}");
}

#[test]
fn hub_errors_redact_the_endpoint_password() {
    let server = HubServer::start();
    let endpoint = server
        .url
        .replacen("://", &format!("://alice:{SECRET}@"), 1);
    let guessed = "fixtures/incident/Qwen3.6-27B-DFlash";
    let (code, out) = run(
        &[
            "diff",
            guessed,
            "--from-hub",
            "z-lab/No-Such-Repo",
            "--timeout",
            "3",
        ],
        &endpoint,
    );
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("z-lab/No-Such-Repo") && out.contains("://***@127.0.0.1"),
        "{out}"
    );
    // Nothing listening: the transport error path.
    let (code, out) = run(
        &["diff", guessed, "--from-hub", "z-lab/X", "--timeout", "3"],
        &format!("http://alice:{SECRET}@127.0.0.1:9"),
    );
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("***@127.0.0.1:9"), "{out}");
}

/// Issue 32: a password holding `"`, `'`, `` ` ``, `<` or `>` was printed whole, because the
/// redaction scanned text for where the URL ended. It is redacted from the parsed URL now, in
/// `env` (every format) and in Hub errors (both the HTTP error path and the transport one).
#[test]
fn a_password_with_quotes_and_brackets_is_redacted_too() {
    let password = "Q\"u'o`t<e>Z";
    let leaked = |out: &str| {
        [
            "Q\"u", "Q%22u", "u'o", "o`t", "o%60t", "t<e", "t%3Ce", "e>Z", "e%3EZ",
        ]
        .iter()
        .find(|part| out.contains(*part))
        .map(|part| format!("`{part}` of the password was printed:\n{out}"))
    };
    let endpoint = format!("http://alice:{password}@127.0.0.1:9");
    for format in ["human", "json"] {
        let (code, out) = run(&["env", "--format", format], &endpoint);
        assert_eq!(code, 0, "{format}: {out}");
        assert_eq!(leaked(&out), None);
        assert!(out.contains("http://***@127.0.0.1:9"), "{format}: {out}");
    }
    let guessed = "fixtures/incident/Qwen3.6-27B-DFlash";
    let (code, out) = run(
        &["diff", guessed, "--from-hub", "z-lab/X", "--timeout", "3"],
        &endpoint,
    );
    assert_eq!(code, 2, "{out}");
    assert_eq!(leaked(&out), None);
    let server = HubServer::start();
    let endpoint = server
        .url
        .replacen("://", &format!("://alice:{password}@"), 1);
    let (code, out) = run(
        &[
            "diff",
            guessed,
            "--from-hub",
            "z-lab/No-Such-Repo",
            "--timeout",
            "3",
        ],
        &endpoint,
    );
    assert_eq!(code, 2, "{out}");
    assert_eq!(leaked(&out), None);
    assert!(out.contains("://***@127.0.0.1"), "{out}");
    // Not a URL at all: not shown, whatever it holds.
    let (code, out) = run(&["env"], &format!("alice:{password}@127.0.0.1:9"));
    assert_eq!(code, 2, "{out}");
    assert_eq!(leaked(&out), None);
}
