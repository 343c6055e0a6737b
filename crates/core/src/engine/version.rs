//! An engine and the release that serves a line ([`EngineRelease`]), with where the release came
//! from ([`VersionFrom`]): `--engine vllm@0.28`, the pin file's `engine` key, a container
//! image's tag, or what the server says. Releases are compared by their line ([`Line`]:
//! `(major, minor)`, or `(build, 0)` for engines numbered by build); the text as written is
//! kept for output. A release the tool has not read is judged as the nearest it has, and says
//! so ([`EngineRelease::reading`]).

use serde::Serialize;

use super::{Engine, Scheme};

/// A release: `(major, minor, patch)`, or `(build, 0, 0)` for an engine numbered by build. A
/// patch of [`ANY_PATCH`] stands for the newest patch of its line: `--engine vllm@0.26` and a
/// row that holds "until 0.26" mean every 0.26.x.
pub type Line = (u32, u32, u32);

/// The patch of a release given as `MAJOR.MINOR`: the line's newest.
pub const ANY_PATCH: u32 = u32::MAX;

/// Where the release of a line came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "text")]
pub enum VersionFrom {
    /// `--engine ENGINE@X`.
    Flag,
    /// The `engine` key of `dflash-check.toml`.
    PinFile,
    /// A container image's tag (the image as written).
    Image(String),
    /// What the running server answered (the URL asked).
    Server(String),
    /// An environment variable only a platform reads (`VLLM_ASCEND_…`): it names the platform
    /// that serves a line, not its release.
    Environment(String),
}

impl VersionFrom {
    /// `--engine`, `dflash-check.toml`, `image vllm/vllm-openai:v0.28.0`, `the server (URL)`.
    pub fn shown(&self) -> String {
        match self {
            VersionFrom::Flag => "--engine".to_string(),
            VersionFrom::PinFile => "dflash-check.toml".to_string(),
            VersionFrom::Image(image) => format!("image {image}"),
            VersionFrom::Server(url) => format!("the server, {url}"),
            VersionFrom::Environment(name) => format!("environment {name}"),
        }
    }
}

/// An engine and, when known, the release that serves the line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EngineRelease {
    pub engine: Engine,
    /// The release line (`None`: not known, judged across the engine's default window).
    pub version: Option<Line>,
    /// The release as written (`0.28.0`, `b6000`), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written: Option<String>,
    /// Where the release came from; `None` when no release is known (or only the engine is). A
    /// platform with no release known keeps what named it (its image, an environment variable).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<VersionFrom>,
}

impl From<Engine> for EngineRelease {
    fn from(engine: Engine) -> Self {
        EngineRelease {
            engine,
            version: None,
            written: None,
            from: None,
        }
    }
}

impl EngineRelease {
    /// Parses `vllm`, `sglang`, `vllm@0.26`, `vllm@v0.26.1`, `llama.cpp@b6000`: the form
    /// `--engine` and `dflash-check.toml` take. A release given is recorded as from `--engine`
    /// (the pin file's reader says otherwise).
    pub fn parse(text: &str) -> std::result::Result<EngineRelease, String> {
        let (name, version) = match text.split_once('@') {
            Some((n, v)) => (n, Some(v)),
            None => (text, None),
        };
        let engine = Engine::named(name).ok_or_else(|| {
            format!(
                "unknown engine `{}` ({})",
                name.to_ascii_lowercase(),
                Engine::names_listed()
            )
        })?;
        let mut release = EngineRelease::from(engine);
        if let Some(v) = version {
            let line = read_line(engine.spec().releases.scheme, v).ok_or_else(|| {
                match engine.spec().releases.scheme {
                    Scheme::Semver => format!(
                        "engine version `{v}` is not MAJOR.MINOR (e.g. {}@{})",
                        engine.as_str(),
                        example(engine)
                    ),
                    Scheme::Build => format!(
                        "engine version `{v}` is not a build number (e.g. {}@{})",
                        engine.as_str(),
                        example(engine)
                    ),
                }
            })?;
            release.version = Some(line);
            release.written = Some(v.trim_start_matches('v').to_string());
            release.from = Some(VersionFrom::Flag);
        }
        Ok(release)
    }

    /// The same release, stated elsewhere than `--engine` (the pin file, a server).
    pub fn stated_in(mut self, from: VersionFrom) -> EngineRelease {
        if self.version.is_some() {
            self.from = Some(from);
        }
        self
    }

    /// The same engine at the release an image tag names (`v0.28.0`, `server-b6000`), when the
    /// tag names one.
    pub fn from_tag(engine: Engine, image: &str, tag: &str) -> Option<EngineRelease> {
        let scheme = engine.spec().releases.scheme;
        let (line, written) = tag_release(scheme, tag)?;
        Some(EngineRelease {
            engine,
            version: Some(line),
            written: Some(written),
            from: Some(VersionFrom::Image(image.to_string())),
        })
    }

    /// The release as written, else its line (`0.28.0`, `0.28`, `b6000`).
    pub fn version_text(&self) -> Option<String> {
        let line = self.version?;
        Some(
            self.written
                .clone()
                .unwrap_or_else(|| line_text(self.engine, line)),
        )
    }

    /// What the verdict's header says of the engine: `vllm 0.28.0 (image vllm/vllm-openai:v0.28.0)`;
    /// `vllm 0.35 (--engine): newer than the releases read, judged as 0.34`; `vllm, release not
    /// known: judged across 0.28–0.34, the default window (pin it with --engine vllm@X)`.
    pub fn header(&self) -> String {
        self.header_started(None)
    }

    /// [`EngineRelease::header`], with how the line starts the engine (`vllm serve`) beside the
    /// engine's name.
    pub fn header_started(&self, started: Option<&str>) -> String {
        let name = self.engine.as_str();
        let mut said: Vec<String> = started.map(str::to_string).into_iter().collect();
        let line = match self.version_text() {
            Some(v) => {
                said.extend(self.from.as_ref().map(VersionFrom::shown));
                let said = if said.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", said.join("; "))
                };
                let reading = self.reading().map_or(String::new(), |r| format!(": {r}"));
                format!("{name} {v}{said}{reading}")
            }
            None => {
                // What named a platform, when one did (its image, its environment).
                said.extend(self.from.as_ref().map(VersionFrom::shown));
                let (a, b) = self.engine.spec().releases.window;
                let said = if said.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", said.join("; "))
                };
                let window = range_text(self.engine, a, b);
                // A window of one release is that release, not a range to be judged across.
                let how = if window.contains('–') {
                    "judged across"
                } else {
                    "judged as"
                };
                format!(
                    "{name}{said}, release not known: {how} {window}, its default window (pin it with --engine {name}@X or the `engine` key of dflash-check.toml)"
                )
            }
        };
        format!("{line}{}", self.platform_note(started.is_some()))
    }

    /// For a platform, whose rows stand where it has none of its own (`; vLLM 0.18 where it has
    /// no rows of its own`); for a line of an engine platforms are built on, that it is judged
    /// as that engine itself and how a platform is named.
    fn platform_note(&self, a_line: bool) -> String {
        if let Some(p) = self.engine.platform() {
            let base = p.base.display();
            return match self.version {
                Some(v) => {
                    let pin = p.pinned(v);
                    // vLLM's rows were read from 0.25.1: an older pin is judged by their ranges.
                    let (oldest, _) = read_span(p.base);
                    let older = if pin < oldest {
                        format!(
                            ", older than the {base} releases read ({}): judged by what is known of it",
                            line_text(p.base, oldest)
                        )
                    } else {
                        String::new()
                    };
                    format!(
                        "; {base} {} (the release it pins{older}) where it has no rows of its own",
                        line_text(p.base, pin)
                    )
                }
                None => format!(
                    "; where it has no rows of its own, {base} at the release each of its releases pins"
                ),
            };
        }
        let platforms: Vec<&str> = self.engine.platforms().map(Engine::as_str).collect();
        if !a_line || platforms.is_empty() {
            return String::new();
        }
        format!(
            "; upstream {}, not {} (named by an image, --engine {}@X, the pin file's engine key or the environment)",
            self.engine.display(),
            platforms.join(" or "),
            platforms[0]
        )
    }

    /// How the release relates to those read: `None` when read (or between two read, judged by
    /// the rows that hold it); else that it is newer or older than every release read, and the
    /// release it is judged as.
    pub fn reading(&self) -> Option<String> {
        let line = self.version?;
        let spec = self.engine.spec();
        let (oldest, newest) = read_span(self.engine);
        // A release given as MAJOR.MINOR is compared by its line alone.
        let key = |l: Line| {
            if line.2 == ANY_PATCH {
                (l.0, l.1, 0)
            } else {
                l
            }
        };
        let line = key(line);
        if line > key(newest) {
            return Some(format!(
                "newer than the releases read; judged as {}",
                line_text(self.engine, newest)
            ));
        }
        if line < key(oldest) {
            return Some(format!(
                "older than the releases read ({} is the oldest); judged by what is known of it",
                line_text(self.engine, oldest)
            ));
        }
        let read = spec
            .releases
            .read
            .iter()
            .filter_map(|r| read_line(spec.releases.scheme, r))
            .any(|l| key(l) == line);
        (!read).then(|| "not read itself; judged by the releases read around it".to_string())
    }

    /// `{"engine": "vllm", "version": "0.26" | null}` (and where the release came from): what
    /// JSON and SARIF say a verdict assumed.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "engine": self.engine.as_str(),
            // As written (`0.28.0` from an image tag, `1.2.0rc8`), else the line read.
            "version": self
                .version
                .map(|l| self.written.clone().unwrap_or_else(|| line_text(self.engine, l))),
            "from": self.from.as_ref().map(VersionFrom::shown),
        })
    }
}

/// `vllm`, `vllm@0.26`: the form `--engine` and `dflash-check.toml` take.
impl std::fmt::Display for EngineRelease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.engine.as_str())?;
        match self.version {
            Some(line) => write!(f, "@{}", line_text(self.engine, line)),
            None => Ok(()),
        }
    }
}

/// The oldest and newest line the tool has read for `engine`.
fn read_span(engine: Engine) -> (Line, Line) {
    let r = &engine.spec().releases;
    let lines: Vec<Line> = r
        .read
        .iter()
        .filter_map(|v| read_line(r.scheme, v))
        .collect();
    (
        lines.iter().copied().min().unwrap_or(r.window.0),
        lines.iter().copied().max().unwrap_or(r.window.1),
    )
}

/// `0.28`, `0.5.23`, `b6000`: a line's start (patch 0) and its newest patch print as the line.
pub fn line_text(engine: Engine, (a, b, c): Line) -> String {
    match engine.spec().releases.scheme {
        Scheme::Semver if c == 0 || c == ANY_PATCH => format!("{a}.{b}"),
        Scheme::Semver => format!("{a}.{b}.{c}"),
        Scheme::Build => format!("b{a}"),
    }
}

/// `0.28–0.34`, `0.5.23` (one line: the line alone).
pub fn range_text(engine: Engine, from: Line, to: Line) -> String {
    let (a, mut b) = (line_text(engine, from), line_text(engine, to));
    // `0.5.23–0.5.x`: a window from a patch release to the rest of its line.
    if to.2 == ANY_PATCH && (from.0, from.1) == (to.0, to.1) && from.2 != 0 && from.2 != ANY_PATCH {
        b.push_str(".x");
    }
    if a == b {
        a
    } else {
        format!("{a}–{b}")
    }
}

/// An example release for messages: the newest read.
fn example(engine: Engine) -> String {
    line_text(engine, engine.spec().releases.newest())
}

/// A release as `--engine` takes it: `0.26`, `v0.26.1`, `0.26rc1` (semver); `b6000`, `6000`
/// (build).
pub fn read_line(scheme: Scheme, text: &str) -> Option<Line> {
    let t = text.trim();
    match scheme {
        Scheme::Semver => {
            let t = t.strip_prefix('v').unwrap_or(t);
            let mut parts = t.split('.');
            let major = parts.next()?.parse().ok()?;
            let number =
                |p: &str| -> String { p.chars().take_while(char::is_ascii_digit).collect() };
            let minor = number(parts.next()?).parse().ok()?;
            let patch = match parts.next().map(number) {
                Some(p) if !p.is_empty() => p.parse().ok()?,
                _ => ANY_PATCH,
            };
            Some((major, minor, patch))
        }
        Scheme::Build => {
            let t = t.strip_prefix('b').unwrap_or(t);
            t.parse().ok().map(|b| (b, 0, 0))
        }
    }
}

/// The release an image tag names, and the release as written: the first `MAJOR.MINOR[.PATCH]`
/// (after an optional `v`) of a semver engine's tag (`v0.28.0-cu130` → 0.28.0, `1.2.0rc8`);
/// the `b` + digits part of a build engine's (`server-cuda-b6000` → b6000). `latest`, `nightly`,
/// `server-cuda`: none.
pub fn tag_release(scheme: Scheme, tag: &str) -> Option<(Line, String)> {
    match scheme {
        Scheme::Semver => tag.split(['-', '_']).find_map(|part| {
            let p = part.strip_prefix('v').unwrap_or(part);
            let first = p.split('.').next()?;
            if first.is_empty() || !first.chars().all(|c| c.is_ascii_digit()) || !p.contains('.') {
                return None;
            }
            read_line(Scheme::Semver, p).map(|line| (line, p.to_string()))
        }),
        Scheme::Build => tag.split(['-', '_']).find_map(|part| {
            let n = part.strip_prefix('b')?;
            (!n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
                .then(|| n.parse().ok().map(|b| ((b, 0, 0), part.to_string())))
                .flatten()
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_engines_and_releases() {
        let e = EngineRelease::parse("vllm@0.26.1").unwrap();
        assert_eq!((e.engine, e.version), (Engine::Vllm, Some((0, 26, 1))));
        assert_eq!(e.written.as_deref(), Some("0.26.1"));
        assert_eq!(e.from, Some(VersionFrom::Flag));
        assert_eq!(e.to_string(), "vllm@0.26.1");
        assert_eq!(
            EngineRelease::parse("vllm@0.26").unwrap().version,
            Some((0, 26, ANY_PATCH))
        );
        assert_eq!(EngineRelease::parse("sglang").unwrap().version, None);
        assert_eq!(
            EngineRelease::parse("llama.cpp@b6000").unwrap().version,
            Some((6000, 0, 0))
        );
        assert_eq!(
            EngineRelease::parse("llama.cpp@b6000").unwrap().to_string(),
            "llama.cpp@b6000"
        );
        let e = EngineRelease::parse("tgi").unwrap_err();
        assert!(e.contains("unknown engine `tgi`"), "{e}");
        let e = EngineRelease::parse("vllm@latest").unwrap_err();
        assert!(e.contains("not MAJOR.MINOR"), "{e}");
    }

    #[test]
    fn image_tags_name_releases() {
        assert_eq!(
            tag_release(Scheme::Semver, "v0.28.0-cu130"),
            Some(((0, 28, 0), "0.28.0".to_string()))
        );
        assert_eq!(
            tag_release(Scheme::Semver, "1.2.0rc8"),
            Some(((1, 2, 0), "1.2.0rc8".to_string()))
        );
        assert_eq!(tag_release(Scheme::Semver, "latest"), None);
        assert_eq!(tag_release(Scheme::Semver, "nightly-2026"), None);
        assert_eq!(
            tag_release(Scheme::Build, "server-cuda-b6000"),
            Some(((6000, 0, 0), "b6000".to_string()))
        );
        assert_eq!(tag_release(Scheme::Build, "server-cuda"), None);
    }

    #[test]
    fn a_release_not_read_says_how_it_is_judged() {
        let newer = EngineRelease::parse("vllm@0.99").unwrap();
        assert_eq!(
            newer.reading().unwrap(),
            format!(
                "newer than the releases read; judged as {}",
                line_text(Engine::Vllm, Engine::Vllm.spec().releases.newest())
            )
        );
        let known = EngineRelease::parse("vllm@0.28").unwrap();
        assert_eq!(known.reading(), None);
        assert!(known.header().starts_with("vllm 0.28 (--engine)"));
        let unknown = EngineRelease::from(Engine::Vllm);
        assert!(unknown
            .header()
            .contains("release not known: judged across"));
    }
}
