//! A loopback host never goes through a proxy (issue 32: the scraper sent `[::ffff:127.0.0.1]`
//! through `HTTP_PROXY`; the Hub client sent every loopback endpoint through it): the scraper,
//! and the Hub client, run by the binary with every proxy variable pointing at a fake proxy
//! that records each connection. A host that is not this machine still goes through it, so
//! the test would notice if the proxy variables were ignored altogether.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use support::{FakeRepo, HubServer};

/// A server on 127.0.0.1 that reads each request's head and writes `answer`: its port and the
/// number of connections it has had.
fn serve(answer: &'static [u8]) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(AtomicUsize::new(0));
    let count = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            count.fetch_add(1, Ordering::SeqCst);
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                line.clear();
            }
            let _ = stream.write_all(answer);
        }
    });
    (port, seen)
}

/// A fake proxy: its URL and its connection count; it answers everything `502`.
fn fake_proxy() -> (String, Arc<AtomicUsize>) {
    let (port, seen) = serve(
        b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 10\r\nConnection: close\r\n\r\nfrom-proxy",
    );
    (format!("http://127.0.0.1:{port}"), seen)
}

/// A server that answers everything `404`, reached directly: its port.
fn direct_server() -> u16 {
    serve(b"HTTP/1.1 404 Not Found\r\nContent-Length: 6\r\nConnection: close\r\n\r\ndirect").0
}

/// Runs the binary with every proxy variable set to `proxy` and no `NO_PROXY`.
fn run_proxied(args: &[&str], proxy: &str, env: &[(&str, &str)]) -> (i32, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dflash-check"));
    cmd.args(args).env("HOME", "/nonexistent-home");
    for var in [
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        cmd.env(var, proxy);
    }
    for var in ["NO_PROXY", "no_proxy", "HF_TOKEN", "HF_HUB_OFFLINE"] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let mut all = String::from_utf8_lossy(&out.stdout).into_owned();
    all.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), all)
}

/// Whether this machine can reach an IPv4 listener through an IPv4-mapped IPv6 address.
fn mapped_ipv6_works(port: u16) -> bool {
    std::net::TcpStream::connect(("::ffff:127.0.0.1", port)).is_ok()
}

/// The scraper (and so doctor's questions to the server, which go through it) reaches a server
/// on this machine directly, in every spelling of its address; another host goes through the
/// proxy.
#[test]
fn the_scraper_never_sends_loopback_through_a_proxy() {
    let (proxy, seen) = fake_proxy();
    let port = direct_server();
    let mut hosts = vec![
        "127.0.0.1".to_string(),
        "localhost".to_string(),
        "LocalHost".to_string(),
        "127.1".to_string(),
        "0x7f.0.0.1".to_string(),
        "2130706433".to_string(),
    ];
    if mapped_ipv6_works(port) {
        hosts.push("[::ffff:127.0.0.1]".to_string());
        hosts.push("[::ffff:7f00:1]".to_string());
    }
    for host in &hosts {
        let url = format!("http://{host}:{port}/metrics");
        let (code, out) = run_proxied(&["acceptance", &url, "--window", "0.1"], &proxy, &[]);
        assert_eq!(code, 2, "{url}: {out}");
        assert!(
            out.contains("answered HTTP 404"),
            "{url} did not reach the server directly: {out}"
        );
        assert_eq!(
            seen.load(Ordering::SeqCst),
            0,
            "{url} went through the proxy: {out}"
        );
    }
    // Control: a host that is not this machine goes through the proxy, which answers 502.
    let (code, out) = run_proxied(
        &[
            "acceptance",
            "http://metrics.invalid:8000/metrics",
            "--window",
            "0.1",
        ],
        &proxy,
        &[],
    );
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("answered HTTP 502"), "{out}");
    assert!(seen.load(Ordering::SeqCst) >= 1);
}

/// The Hub client reaches a Hub on this machine (a mirror, a test server) directly, whatever
/// the spelling of its address.
#[test]
fn the_hub_client_never_sends_loopback_through_a_proxy() {
    let (proxy, seen) = fake_proxy();
    let server = HubServer::start();
    let mut repo = FakeRepo::default();
    repo.commit(&[(
        "config.json",
        &std::fs::read("fixtures/incident/authority/config.json").unwrap(),
    )]);
    server.add_repo("z-lab/Qwen3.6-27B-DFlash", repo);
    let port = server.url.rsplit(':').next().unwrap().to_string();
    let mut hosts = vec!["127.0.0.1", "localhost", "127.1"];
    if mapped_ipv6_works(port.parse().unwrap()) {
        hosts.push("[::ffff:127.0.0.1]");
    }
    for host in hosts {
        let cache = tempfile::tempdir().unwrap();
        let endpoint = format!("http://{host}:{port}");
        let (code, out) = run_proxied(
            &[
                "diff",
                "fixtures/incident/Qwen3.6-27B-DFlash",
                "--from-hub",
                "z-lab/Qwen3.6-27B-DFlash",
                "--timeout",
                "5",
                "--cache-dir",
                cache.path().to_str().unwrap(),
            ],
            &proxy,
            &[("HF_ENDPOINT", &endpoint)],
        );
        // The incident's drafter differs from its authority: exit 1, a diff, not a failure.
        assert_eq!(code, 1, "{endpoint}: {out}");
        assert_eq!(
            seen.load(Ordering::SeqCst),
            0,
            "{endpoint} went through the proxy: {out}"
        );
    }
    assert!(server.log().iter().any(|r| r.method == "HEAD"));
}
