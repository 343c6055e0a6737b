//! A small in-process imitation of the Hub for tests: plain HTTP/1.1 on 127.0.0.1, one thread
//! per connection, `Connection: close`. It answers what hf-hub 1.0 asks (logged and checked in
//! `tests/hub_server.rs`):
//!
//! - `HEAD`/`GET /{org}/{name}/resolve/{rev}/{path}` with `ETag: "<git blob sha1>"`,
//!   `X-Repo-Commit`, `Content-Length`, `Accept-Ranges: bytes` (206 for `Range`);
//! - `GET /api/models/{org}/{name}[/revision/{rev}]` with `{id, sha, siblings, ...}`;
//! - `GET /api/models/{org}/{name}/refs` with `{branches: [{name, ref, targetCommit}]}` and
//!   `GET /api/models/{org}/{name}/tree/{rev}[?recursive=true]` with `[{type, oid, size, path}]`
//!   (what llama.cpp's `-hf` asks, `common/hf-cache.cpp`);
//! - 404s with `X-Error-Code: RepoNotFound | RevisionNotFound | EntryNotFound`, as the Hub sends;
//!
//! plus scripted faults (statuses, stalls, truncated or corrupt bodies, huge lengths, redirects),
//! each consumed by the next matching request, and a log of every request.
#![allow(dead_code)]

use std::collections::{BTreeMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use sha1::{Digest, Sha1};

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Logged {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    /// Body bytes sent back (0 for HEAD and errors).
    pub body_bytes: usize,
}

impl Logged {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What to do to the next matching request instead of (or while) answering it.
#[derive(Debug, Clone)]
pub enum Fault {
    /// Answer with this status and headers, empty body (or `body`).
    Status {
        code: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Send the headers, then wait this long before the body.
    StallBody(Duration),
    /// Send the headers, then wait this long before anything (no status line).
    StallHead(Duration),
    /// Announce the full length, send half the body, close.
    Truncate,
    /// Send a body that differs from the file (same length).
    Corrupt,
    /// Announce this Content-Length (HEAD).
    HugeLength(u64),
    /// 302 to the same path on another base URL.
    Redirect(String),
    /// The normal answer (a placeholder that consumes one request).
    Pass,
    /// The normal answer, altered as described.
    Tweak(Tweak),
}

/// Alterations of a normal answer, for hostile-server tests.
#[derive(Debug, Clone, Default)]
pub struct Tweak {
    /// Headers replacing those of the same name (or added).
    pub headers: Vec<(String, String)>,
    /// Flip a bit of the body (same length).
    pub corrupt: bool,
    /// Send the body one byte at a time, this long apart.
    pub drip: Option<Duration>,
    /// Instead of the body, this many bytes of `x` with no `Content-Length` (the end of the
    /// body is the end of the connection). For HEAD: no `Content-Length`, no body.
    pub flood: Option<u64>,
}

#[derive(Debug, Clone)]
struct ScriptedFault {
    method: Option<&'static str>,
    fault: Fault,
}

/// A repo: commits (sha → files) and refs (branch → sha).
#[derive(Debug, Clone, Default)]
pub struct FakeRepo {
    pub commits: BTreeMap<String, BTreeMap<String, Vec<u8>>>,
    pub refs: BTreeMap<String, String>,
}

impl FakeRepo {
    /// Adds a commit with these files and points `main` at it; returns its sha.
    pub fn commit(&mut self, files: &[(&str, &[u8])]) -> String {
        let mut h = Sha1::new();
        h.update(format!("commit {}", self.commits.len()).as_bytes());
        for (name, bytes) in files {
            h.update(name.as_bytes());
            h.update(bytes);
        }
        let sha = hex(&h.finalize());
        self.commits.insert(
            sha.clone(),
            files
                .iter()
                .map(|(n, b)| (n.to_string(), b.to_vec()))
                .collect(),
        );
        self.refs.insert("main".into(), sha.clone());
        sha
    }
}

#[derive(Default)]
struct State {
    repos: BTreeMap<String, FakeRepo>,
    faults: VecDeque<ScriptedFault>,
    log: Vec<Logged>,
    /// Answer every `Range` request with the whole file (200), as olah does for a git mirror.
    ignore_ranges: bool,
    /// Wait this long before answering each request (a distant server).
    delay: Option<Duration>,
    /// Wait this long before answering each `Range` request only (a slow file store).
    range_delay: Option<Duration>,
    /// Requests being answered now, and the most at once so far.
    in_flight: usize,
    peak_in_flight: usize,
}

pub struct HubServer {
    pub url: String,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    port: u16,
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `git hash-object` of `bytes`: the ETag the Hub gives a regular (non-LFS) file.
pub fn git_blob_sha1(bytes: &[u8]) -> String {
    let mut h = Sha1::new();
    h.update(format!("blob {}\0", bytes.len()).as_bytes());
    h.update(bytes);
    hex(&h.finalize())
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl HubServer {
    pub fn start() -> HubServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(State::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (st, sp) = (state.clone(), stop.clone());
        thread::spawn(move || {
            for conn in listener.incoming() {
                if sp.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let st = st.clone();
                thread::spawn(move || {
                    let _ = handle(conn, &st, port);
                });
            }
        });
        HubServer {
            url: format!("http://127.0.0.1:{port}"),
            state,
            stop,
            port,
        }
    }

    /// This server's base URL under another host name (`localhost`): another origin for the
    /// client, the same server.
    pub fn url_as(&self, host: &str) -> String {
        format!("http://{host}:{}", self.port)
    }

    pub fn add_repo(&self, id: &str, repo: FakeRepo) {
        self.state
            .lock()
            .unwrap()
            .repos
            .insert(id.to_string(), repo);
    }

    pub fn set_ref(&self, id: &str, branch: &str, sha: &str) {
        let mut st = self.state.lock().unwrap();
        st.repos
            .get_mut(id)
            .unwrap()
            .refs
            .insert(branch.into(), sha.into());
    }

    /// From now on, wait `delay` before answering each request.
    #[allow(dead_code)]
    pub fn delay_each(&self, delay: Duration) {
        self.state.lock().unwrap().delay = Some(delay);
    }

    /// From now on, wait `delay` before answering each `Range` request (the others at once).
    #[allow(dead_code)]
    pub fn delay_ranges(&self, delay: Duration) {
        self.state.lock().unwrap().range_delay = Some(delay);
    }

    /// The most requests this server was answering at once.
    #[allow(dead_code)]
    pub fn peak_in_flight(&self) -> usize {
        self.state.lock().unwrap().peak_in_flight
    }

    /// From now on, answer `Range` requests with the whole file and 200 (olah's git-mirror way).
    #[allow(dead_code)]
    pub fn ignore_ranges(&self) {
        self.state.lock().unwrap().ignore_ranges = true;
    }

    /// The next request with this method (any method if `None`) gets `fault`.
    pub fn fault(&self, method: Option<&'static str>, fault: Fault) {
        self.state
            .lock()
            .unwrap()
            .faults
            .push_back(ScriptedFault { method, fault });
    }

    pub fn status_fault(&self, method: Option<&'static str>, code: u16, headers: &[(&str, &str)]) {
        self.fault(
            method,
            Fault::Status {
                code,
                headers: headers
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                body: String::new(),
            },
        );
    }

    pub fn log(&self) -> Vec<Logged> {
        self.state.lock().unwrap().log.clone()
    }

    pub fn requests(&self) -> usize {
        self.state.lock().unwrap().log.len()
    }

    pub fn clear_log(&self) {
        self.state.lock().unwrap().log.clear();
    }
}

impl Drop for HubServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// A base URL where nothing listens.
pub fn dead_endpoint() -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    format!("http://127.0.0.1:{port}")
}

struct Response {
    code: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn reason(code: u16) -> &'static str {
    match code {
        200 => "OK",
        206 => "Partial Content",
        302 => "Found",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Other",
    }
}

fn not_found(code: &str, commit: Option<&str>) -> Response {
    let mut headers = vec![
        ("X-Error-Code".to_string(), code.to_string()),
        (
            "X-Error-Message".to_string(),
            format!("{code} (test server)"),
        ),
    ];
    if let Some(c) = commit {
        headers.push(("X-Repo-Commit".into(), c.into()));
    }
    Response {
        code: 404,
        headers,
        body: format!("{{\"error\":\"{code}\"}}").into_bytes(),
    }
}

fn route(st: &State, port: u16, method: &str, path: &str, range: Option<&str>) -> Response {
    let path = path.split('?').next().unwrap_or("");
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    // /api/models/{org}/{name}[/revision/{rev}]
    if segs.len() >= 4 && segs[0] == "api" && segs[1] == "models" {
        let id = format!("{}/{}", segs[2], segs[3]);
        let rev = if segs.len() >= 6 && segs[4] == "revision" {
            percent_decode(&segs[5..].join("/"))
        } else {
            "main".to_string()
        };
        let Some(repo) = st.repos.get(&id) else {
            return not_found("RepoNotFound", None);
        };
        let rev = if segs.len() >= 6 && segs[4] == "tree" {
            percent_decode(segs[5])
        } else {
            rev
        };
        let Some(sha) = resolve(repo, &rev) else {
            return not_found("RevisionNotFound", None);
        };
        if let Some(answer) = refs_or_tree(repo, &segs, &sha) {
            return answer;
        }
        let siblings: Vec<String> = repo.commits[&sha]
            .keys()
            .map(|f| format!("{{\"rfilename\":\"{f}\"}}"))
            .collect();
        if segs.len() >= 6 && segs[4] == "xet-read-token" {
            // What the Hub answers before a xet download: a token for its CAS server. Ours
            // points at `/cas` on this server, which never answers (see `handle`).
            let body = format!(
                "{{\"accessToken\":\"xet-test\",\"exp\":4102444800,\"casUrl\":\"http://127.0.0.1:{port}/cas\"}}"
            );
            return Response {
                code: 200,
                headers: vec![("Content-Type".into(), "application/json".into())],
                body: body.into_bytes(),
            };
        }
        let body = format!(
            "{{\"id\":\"{id}\",\"modelId\":\"{id}\",\"sha\":\"{sha}\",\"siblings\":[{}],\"lastModified\":\"2026-01-01T00:00:00.000Z\",\"private\":false,\"gated\":false}}",
            siblings.join(",")
        );
        return Response {
            code: 200,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: body.into_bytes(),
        };
    }
    // /{org}/{name}/resolve/{rev}/{path...}
    if segs.len() >= 5 && segs[2] == "resolve" {
        let id = format!("{}/{}", segs[0], segs[1]);
        let rev = percent_decode(segs[3]);
        let file = percent_decode(&segs[4..].join("/"));
        let Some(repo) = st.repos.get(&id) else {
            return not_found("RepoNotFound", None);
        };
        let Some(sha) = resolve(repo, &rev) else {
            return not_found("RevisionNotFound", None);
        };
        let Some(bytes) = repo.commits[&sha].get(&file) else {
            return not_found("EntryNotFound", Some(&sha));
        };
        let mut headers = vec![
            ("ETag".to_string(), format!("\"{}\"", git_blob_sha1(bytes))),
            ("X-Repo-Commit".to_string(), sha.clone()),
            ("Accept-Ranges".to_string(), "bytes".to_string()),
            ("Content-Type".to_string(), "application/json".to_string()),
        ];
        let (code, body) = match range.and_then(|r| parse_range(r, bytes.len())) {
            Some((a, b)) if method == "GET" => {
                headers.push((
                    "Content-Range".into(),
                    format!("bytes {a}-{b}/{}", bytes.len()),
                ));
                (206, bytes[a..=b].to_vec())
            }
            _ => (200, bytes.clone()),
        };
        return Response {
            code,
            headers,
            body,
        };
    }
    Response {
        code: 404,
        headers: vec![],
        body: b"not found".to_vec(),
    }
}

fn json_answer(body: String) -> Response {
    Response {
        code: 200,
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: body.into_bytes(),
    }
}

/// `/api/models/{org}/{name}/refs` and `/api/models/{org}/{name}/tree/{rev}`, as the Hub answers.
fn refs_or_tree(repo: &FakeRepo, segs: &[&str], sha: &str) -> Option<Response> {
    match segs.get(4).copied() {
        Some("refs") => {
            let branches: Vec<String> = repo
                .refs
                .iter()
                .map(|(name, sha)| {
                    format!("{{\"name\":\"{name}\",\"ref\":\"refs/heads/{name}\",\"targetCommit\":\"{sha}\"}}")
                })
                .collect();
            Some(json_answer(format!(
                "{{\"branches\":[{}],\"tags\":[],\"converts\":[]}}",
                branches.join(",")
            )))
        }
        Some("tree") => {
            let entries: Vec<String> = repo.commits[sha]
                .iter()
                .map(|(path, bytes)| {
                    format!(
                        "{{\"type\":\"file\",\"oid\":\"{}\",\"size\":{},\"path\":\"{path}\"}}",
                        git_blob_sha1(bytes),
                        bytes.len()
                    )
                })
                .collect();
            Some(json_answer(format!("[{}]", entries.join(","))))
        }
        _ => None,
    }
}

fn parse_range(r: &str, len: usize) -> Option<(usize, usize)> {
    let spec = r.strip_prefix("bytes=")?;
    let (a, b) = spec.split_once('-')?;
    let a: usize = a.parse().ok()?;
    let last = len.checked_sub(1)?;
    // As the Hub (and RFC 9110) does: an end past the file is clamped to its last byte.
    let b: usize = if b.is_empty() {
        last
    } else {
        b.parse::<usize>().ok()?.min(last)
    };
    (a <= b).then_some((a, b))
}

fn resolve(repo: &FakeRepo, rev: &str) -> Option<String> {
    if repo.commits.contains_key(rev) {
        return Some(rev.to_string());
    }
    repo.refs.get(rev).cloned()
}

fn handle(conn: TcpStream, st: &Mutex<State>, port: u16) -> std::io::Result<()> {
    conn.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let (Some(method), Some(path)) = (parts.next(), parts.next()) else {
        return Ok(());
    };
    let (method, path) = (method.to_string(), path.to_string());
    let mut headers = vec![];
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h == "\r\n" || h == "\n" {
            break;
        }
        if let Some((k, v)) = h.trim_end().split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let content_length: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut sink = vec![0; content_length];
    reader.read_exact(&mut sink)?;
    let range = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("range"))
        .map(|(_, v)| v.clone());

    if path.starts_with("/cas/") {
        // A xet CAS server that accepts the connection and never answers.
        log(st, &method, &path, &headers, 0);
        thread::sleep(Duration::from_secs(600));
        return Ok(());
    }
    let delay = {
        let mut s = st.lock().unwrap();
        s.in_flight += 1;
        s.peak_in_flight = s.peak_in_flight.max(s.in_flight);
        s.delay.or(s.range_delay.filter(|_| range.is_some()))
    };
    if let Some(d) = delay {
        thread::sleep(d);
    }
    st.lock().unwrap().in_flight -= 1;
    let (fault, mut resp) = {
        let mut s = st.lock().unwrap();
        let idx = s
            .faults
            .iter()
            .position(|f| f.method.is_none_or(|m| m == method));
        let fault = idx.and_then(|i| s.faults.remove(i)).map(|f| f.fault);
        let range = range.filter(|_| !s.ignore_ranges);
        let resp = route(&s, port, &method, &path, range.as_deref());
        (fault, resp)
    };
    let mut conn = conn;
    let mut declared_len = resp.body.len() as u64;
    let mut send_len = resp.body.len();
    let mut stall_body = None;
    let mut drip = None;
    let mut flood = None;
    match fault {
        Some(Fault::Status {
            code,
            headers: h,
            body,
        }) => {
            resp = Response {
                code,
                headers: h,
                body: body.into_bytes(),
            };
            declared_len = resp.body.len() as u64;
            send_len = resp.body.len();
        }
        Some(Fault::StallHead(d)) => {
            log(st, &method, &path, &headers, 0);
            thread::sleep(d);
            return Ok(());
        }
        Some(Fault::StallBody(d)) => stall_body = Some(d),
        Some(Fault::Truncate) => send_len = resp.body.len() / 2,
        Some(Fault::Corrupt) => {
            if let Some(b) = resp.body.first_mut() {
                *b ^= 0x20;
            }
        }
        Some(Fault::HugeLength(n)) => declared_len = n,
        Some(Fault::Redirect(base)) => {
            resp = Response {
                code: 302,
                headers: vec![("Location".into(), format!("{base}{path}"))],
                body: vec![],
            };
            declared_len = 0;
            send_len = 0;
        }
        Some(Fault::Tweak(t)) => {
            for (k, v) in t.headers {
                resp.headers
                    .retain(|(name, _)| !name.eq_ignore_ascii_case(&k));
                resp.headers.push((k, v));
            }
            if t.corrupt {
                if let Some(b) = resp.body.first_mut() {
                    *b ^= 0x20;
                }
            }
            drip = t.drip;
            flood = t.flood;
        }
        Some(Fault::Pass) | None => {}
    }
    let head_only = method == "HEAD";
    if let Some(n) = flood {
        return send_flood(conn, st, (&method, &path, &headers), &resp, n, head_only);
    }
    let body_bytes = if head_only { 0 } else { send_len };
    log(st, &method, &path, &headers, body_bytes);

    let mut out = format!("HTTP/1.1 {} {}\r\n", resp.code, reason(resp.code));
    for (k, v) in &resp.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str(&format!(
        "Content-Length: {declared_len}\r\nConnection: close\r\n\r\n"
    ));
    conn.write_all(out.as_bytes())?;
    conn.flush()?;
    if !head_only {
        if let Some(d) = stall_body {
            thread::sleep(d);
        }
        match drip {
            Some(gap) => {
                for b in &resp.body[..send_len] {
                    conn.write_all(std::slice::from_ref(b))?;
                    conn.flush()?;
                    thread::sleep(gap);
                }
            }
            None => conn.write_all(&resp.body[..send_len])?,
        }
    }
    conn.flush()?;
    let _ = conn.shutdown(Shutdown::Both);
    Ok(())
}

/// Headers without `Content-Length`, then `n` bytes until the client hangs up; the log entry
/// (written last) records how many bytes the client took.
fn send_flood(
    mut conn: TcpStream,
    st: &Mutex<State>,
    (method, path, headers): (&str, &str, &[(String, String)]),
    resp: &Response,
    n: u64,
    head_only: bool,
) -> std::io::Result<()> {
    let mut out = format!("HTTP/1.1 {} {}\r\n", resp.code, reason(resp.code));
    for (k, v) in &resp.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("Connection: close\r\n\r\n");
    let mut sent = 0u64;
    let result = (|| {
        conn.write_all(out.as_bytes())?;
        if head_only {
            return Ok(());
        }
        let chunk = vec![b'x'; 64 << 10];
        while sent < n {
            let len = (n - sent).min(chunk.len() as u64) as usize;
            conn.write_all(&chunk[..len])?;
            sent += len as u64;
        }
        conn.flush()
    })();
    log(st, method, path, headers, sent as usize);
    let _ = conn.shutdown(Shutdown::Both);
    result
}

fn log(
    st: &Mutex<State>,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body_bytes: usize,
) {
    st.lock().unwrap().log.push(Logged {
        method: method.to_string(),
        path: path.to_string(),
        headers: headers.to_vec(),
        body_bytes,
    });
}
pub mod metrics;
pub mod olah;
