//! The metrics test server (tests/acceptance/metrics_server.py, vLLM's and SGLang's metrics
//! rendered by Python's `prometheus_client`) for tests other than tests/acceptance.rs.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// The Python that imports `prometheus_client` (`.venv-hf`, or `DFLASH_ACCEPTANCE_PYTHON`);
/// `None` outside CI when there is none (under CI a missing package fails).
pub fn python() -> Option<PathBuf> {
    let path = std::env::var_os("DFLASH_ACCEPTANCE_PYTHON")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv-hf/bin/python"));
    let ok = Command::new(&path)
        .args(["-c", "import prometheus_client"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        return Some(path);
    }
    assert!(
        !std::env::var("CI").is_ok_and(|v| v == "true" || v == "1"),
        "{} cannot import prometheus_client: run scripts/acceptance-setup.sh",
        path.display()
    );
    println!("skipped: no Python with prometheus_client (scripts/acceptance-setup.sh)");
    None
}

/// One running scenario; killed on drop.
pub struct MetricsServer {
    child: Child,
    pub port: u16,
}

impl MetricsServer {
    pub fn start(scenario: &str, extra: &[&str]) -> Option<MetricsServer> {
        let python = python()?;
        let script =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/acceptance/metrics_server.py");
        let mut child = Command::new(python)
            .arg(script)
            .arg(scenario)
            .args(["--lifetime", "120"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the metrics server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .strip_prefix("PORT ")
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("metrics server for {scenario} printed {line:?}"));
        Some(MetricsServer { child, port })
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
