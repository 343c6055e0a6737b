//! Hub settings resolved once, from flags then the environment then defaults, with the source of
//! each value kept for `dflash-check env`. The environment variables are the ones Python
//! `huggingface_hub` reads, with the same meanings; nothing else reads them for us.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::net::Url;

use super::error::{register_userinfo, shown_url, HubError, HubErrorKind};

/// The public Hub.
pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";
/// Per-request timeout when neither `--timeout` nor `HF_HUB_DOWNLOAD_TIMEOUT` is set.
pub const DEFAULT_TIMEOUT_SECS: u64 = 10;

/// Where a setting came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingSource {
    /// A command-line flag.
    Flag,
    /// An environment variable.
    Env(&'static str),
    /// Built in.
    Default,
    /// Read from a file (the token).
    File(PathBuf),
}

impl fmt::Display for SettingSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SettingSource::Flag => f.write_str("flag"),
            SettingSource::Env(var) => write!(f, "env {var}"),
            SettingSource::Default => f.write_str("default"),
            SettingSource::File(p) => write!(f, "file {}", p.display()),
        }
    }
}

/// A value and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sourced<T> {
    pub value: T,
    pub source: SettingSource,
}

impl<T> Sourced<T> {
    fn new(value: T, source: SettingSource) -> Self {
        Sourced { value, source }
    }
}

/// A Hub token. Its `Debug` and `Display` print `<redacted>`; only the HTTP layer sees the text.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    pub fn new(token: impl Into<String>) -> Self {
        Token(token.into())
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// The Hub-related command-line flags, as parsed (the CLI fills this in).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HubFlags {
    /// `--endpoint URL`
    pub endpoint: Option<String>,
    /// `--cache-dir DIR`
    pub cache_dir: Option<PathBuf>,
    /// `--offline`
    pub offline: bool,
    /// `--timeout SECS`
    pub timeout_secs: Option<u64>,
    /// `--require-fresh`
    pub require_fresh: bool,
}

/// Everything the Hub code needs, resolved before any work starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubSettings {
    /// Base URL without a trailing `/`.
    pub endpoint: Sourced<String>,
    /// The Hub cache (`.../hub`, holding `models--ORG--NAME/`).
    pub cache_dir: Sourced<PathBuf>,
    /// `None` when no token was found (source is then `Default`).
    pub token: Sourced<Option<Token>>,
    /// Never send a request; read the cache only.
    pub offline: Sourced<bool>,
    /// Per-request timeout (connect and whole response).
    pub timeout: Sourced<Duration>,
    /// Refuse a cached copy when the Hub could not be asked.
    pub require_fresh: Sourced<bool>,
    /// Who hears about the progress of large downloads (nobody by default).
    pub progress: super::progress::ProgressSink,
}

/// `HF_HUB_OFFLINE`-style booleans, as Python `huggingface_hub` reads them.
fn env_true(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "on"
    )
}

fn non_empty(v: Option<String>) -> Option<String> {
    v.filter(|s| !s.trim().is_empty())
}

fn expand_home(path: &str, home: Option<&str>) -> PathBuf {
    match (path.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => Path::new(home).join(rest),
        _ if path == "~" && home.is_some() => PathBuf::from(home.unwrap_or_default()),
        _ => PathBuf::from(path),
    }
}

fn read_token_file(path: &Path) -> Option<Token> {
    // A FIFO or device would block or never end: only a regular file holds a token.
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    let token = text.trim();
    (!token.is_empty()).then(|| Token::new(token))
}

fn invalid(message: String) -> HubError {
    HubError::new(HubErrorKind::InvalidInput, message)
}

/// The endpoint as the URL parser writes it (so every message quotes it, and its user
/// information, in one form, which [`register_userinfo`] records for scrubbing), without a
/// trailing `/`. Whitespace and control characters are refused rather than silently dropped
/// by the parser.
fn check_endpoint(url: &str, source: &SettingSource) -> Result<String, HubError> {
    let trimmed = url.trim().trim_end_matches('/');
    let parsed = Url::parse(trimmed).ok().filter(|u| {
        matches!(u.scheme(), "http" | "https")
            && u.host_str().is_some_and(|h| !h.is_empty())
            && !trimmed.chars().any(|c| c.is_whitespace() || c.is_control())
    });
    match parsed {
        Some(u) => {
            register_userinfo(&u);
            Ok(u.as_str().trim_end_matches('/').to_string())
        }
        None => Err(invalid(format!(
            "invalid Hub endpoint `{}` (from {source}): expected an http:// or https:// URL",
            shown_url(url)
        ))
        .with_hint(
            "for example --endpoint https://huggingface.co or HF_ENDPOINT=https://hf-mirror.com",
        )),
    }
}

/// An environment variable by name, `None` when unset or empty.
type Var<'a> = &'a dyn Fn(&str) -> Option<String>;

/// `--endpoint`, `HF_ENDPOINT`, `https://huggingface.co`.
fn resolve_endpoint(flags: &HubFlags, var: Var<'_>) -> Result<Sourced<String>, HubError> {
    Ok(match (&flags.endpoint, var("HF_ENDPOINT")) {
        (Some(e), _) => Sourced::new(
            check_endpoint(e, &SettingSource::Flag)?,
            SettingSource::Flag,
        ),
        (None, Some(e)) => Sourced::new(
            check_endpoint(&e, &SettingSource::Env("HF_ENDPOINT"))?,
            SettingSource::Env("HF_ENDPOINT"),
        ),
        (None, None) => Sourced::new(DEFAULT_ENDPOINT.to_string(), SettingSource::Default),
    })
}

/// `$HF_HOME`, as Python resolves it; `None` when there is no home directory at all.
fn resolve_hf_home(var: Var<'_>, home: Option<&str>) -> Option<(PathBuf, SettingSource)> {
    if let Some(h) = var("HF_HOME") {
        Some((expand_home(&h, home), SettingSource::Env("HF_HOME")))
    } else if let Some(x) = var("XDG_CACHE_HOME") {
        Some((
            expand_home(&x, home).join("huggingface"),
            SettingSource::Env("XDG_CACHE_HOME"),
        ))
    } else {
        home.map(|h| {
            (
                Path::new(h).join(".cache").join("huggingface"),
                SettingSource::Default,
            )
        })
    }
}

/// `HF_TOKEN`, the file named by `HF_TOKEN_PATH`, `$HF_HOME/token`.
fn resolve_token(
    var: Var<'_>,
    home: Option<&str>,
    hf_home: Option<&(PathBuf, SettingSource)>,
) -> Sourced<Option<Token>> {
    if let Some(t) = var("HF_TOKEN") {
        return Sourced::new(Some(Token::new(t.trim())), SettingSource::Env("HF_TOKEN"));
    }
    let from_path = var("HF_TOKEN_PATH").map(|p| expand_home(&p, home));
    let from_home = hf_home.map(|(h, _)| h.join("token"));
    from_path
        .into_iter()
        .chain(from_home)
        .find_map(|p| read_token_file(&p).map(|t| (t, p)))
        .map(|(t, p)| Sourced::new(Some(t), SettingSource::File(p)))
        .unwrap_or(Sourced::new(None, SettingSource::Default))
}

/// `--cache-dir`, `HF_HUB_CACHE`, `$HF_HOME/hub`.
fn resolve_cache_dir(
    flags: &HubFlags,
    var: Var<'_>,
    home: Option<&str>,
    hf_home: Option<(PathBuf, SettingSource)>,
) -> Result<Sourced<PathBuf>, HubError> {
    if let Some(dir) = &flags.cache_dir {
        Ok(Sourced::new(dir.clone(), SettingSource::Flag))
    } else if let Some(dir) = var("HF_HUB_CACHE") {
        Ok(Sourced::new(
            expand_home(&dir, home),
            SettingSource::Env("HF_HUB_CACHE"),
        ))
    } else if let Some((h, source)) = hf_home {
        Ok(Sourced::new(h.join("hub"), source))
    } else {
        Err(invalid(
            "cannot locate the Hub cache: none of HF_HUB_CACHE, HF_HOME, XDG_CACHE_HOME, HOME is set"
                .to_string(),
        )
        .with_hint("pass --cache-dir DIR or set HF_HUB_CACHE"))
    }
}

/// `--timeout`, `HF_HUB_DOWNLOAD_TIMEOUT` (seconds), 10 s.
fn resolve_timeout(flags: &HubFlags, var: Var<'_>) -> Result<Sourced<Duration>, HubError> {
    Ok(if let Some(secs) = flags.timeout_secs {
        if secs == 0 {
            return Err(invalid(
                "invalid --timeout `0`: must be at least 1 second".into(),
            ));
        }
        Sourced::new(Duration::from_secs(secs), SettingSource::Flag)
    } else if let Some(v) = var("HF_HUB_DOWNLOAD_TIMEOUT") {
        let secs: f64 = v
            .trim()
            .parse()
            .ok()
            .filter(|s: &f64| s.is_finite() && *s > 0.0)
            .ok_or_else(|| {
                invalid(format!(
                    "invalid HF_HUB_DOWNLOAD_TIMEOUT `{v}`: expected a positive number of seconds"
                ))
            })?;
        Sourced::new(
            Duration::from_secs_f64(secs.min(86_400.0)),
            SettingSource::Env("HF_HUB_DOWNLOAD_TIMEOUT"),
        )
    } else {
        Sourced::new(
            Duration::from_secs(DEFAULT_TIMEOUT_SECS),
            SettingSource::Default,
        )
    })
}

impl HubSettings {
    /// Resolves flags first, then the environment (`env` is `std::env::var(..).ok()` in the
    /// binary, a fake in tests), then defaults:
    ///
    /// - endpoint: `--endpoint`, `HF_ENDPOINT`, `https://huggingface.co`
    /// - token: `HF_TOKEN`, the file named by `HF_TOKEN_PATH`, `$HF_HOME/token`
    /// - cache: `--cache-dir`, `HF_HUB_CACHE`, `$HF_HOME/hub`, `$XDG_CACHE_HOME/huggingface/hub`,
    ///   `~/.cache/huggingface/hub`
    /// - offline: `--offline`, `HF_HUB_OFFLINE` = `1`/`true`/`yes`/`on`
    /// - timeout: `--timeout`, `HF_HUB_DOWNLOAD_TIMEOUT` (seconds), 10 s
    /// - require fresh: `--require-fresh`
    pub fn resolve(
        flags: &HubFlags,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, HubError> {
        let var = |name: &str| non_empty(env(name));
        let home = var("HOME");
        let endpoint = resolve_endpoint(flags, &var)?;
        let hf_home = resolve_hf_home(&var, home.as_deref());
        let token = resolve_token(&var, home.as_deref(), hf_home.as_ref());
        let cache_dir = resolve_cache_dir(flags, &var, home.as_deref(), hf_home)?;
        let offline = if flags.offline {
            Sourced::new(true, SettingSource::Flag)
        } else if let Some(v) = var("HF_HUB_OFFLINE") {
            Sourced::new(env_true(&v), SettingSource::Env("HF_HUB_OFFLINE"))
        } else {
            Sourced::new(false, SettingSource::Default)
        };

        let timeout = resolve_timeout(flags, &var)?;

        let require_fresh = if flags.require_fresh {
            Sourced::new(true, SettingSource::Flag)
        } else {
            Sourced::new(false, SettingSource::Default)
        };

        Ok(HubSettings {
            endpoint,
            cache_dir,
            token,
            offline,
            timeout,
            require_fresh,
            progress: super::progress::ProgressSink::default(),
        })
    }

    /// Rows `(name, value, source)` for `dflash-check env`. The token shows only as
    /// `set (from HF_TOKEN)` / `set (from file PATH)` / `not set`, and a password in the
    /// endpoint as `***`.
    pub fn describe(&self) -> Vec<(String, String, String)> {
        let row = |name: &str, value: String, source: &SettingSource| {
            (name.to_string(), value, source.to_string())
        };
        let token_value = match &self.token.value {
            Some(_) => format!("set (from {})", self.token.source),
            None => "not set".to_string(),
        };
        vec![
            row(
                "endpoint",
                shown_url(&self.endpoint.value),
                &self.endpoint.source,
            ),
            row(
                "cache_dir",
                self.cache_dir.value.display().to_string(),
                &self.cache_dir.source,
            ),
            row("token", token_value, &self.token.source),
            row(
                "offline",
                self.offline.value.to_string(),
                &self.offline.source,
            ),
            row(
                "timeout",
                format!("{} s", self.timeout.value.as_secs_f64()),
                &self.timeout.source,
            ),
            row(
                "require_fresh",
                self.require_fresh.value.to_string(),
                &self.require_fresh.source,
            ),
        ]
    }

    pub(crate) fn token_text(&self) -> Option<&str> {
        self.token.value.as_ref().map(Token::expose)
    }
}

/// The environment a command resolves its Hub settings from (`std::env::var` in the binary,
/// a fake in tests).
pub type Env = dyn Fn(&str) -> Option<String> + Send + Sync;

/// One command's Hub settings: resolved from its flags and the environment the first time an
/// input needs the Hub, then shared by every input of the command (clones share the result).
///
/// Why lazily: a command whose inputs are all local must run with no `HOME` and with a bad
/// `HF_ENDPOINT`. Why once: every part of a command (the authority, the target, a model card's
/// target) must see the same settings, and the token file is read once. A resolution error is
/// kept and returned to every caller that needs the Hub; nothing turns it into "no Hub".
#[derive(Clone)]
pub struct SettingsCell(std::sync::Arc<CellInner>);

struct CellInner {
    flags: HubFlags,
    env: Box<Env>,
    progress: super::progress::ProgressSink,
    resolved: std::sync::OnceLock<Result<HubSettings, HubError>>,
}

impl SettingsCell {
    /// Settings from `flags`, then the process environment, reporting downloads to `progress`.
    pub fn from_env(flags: HubFlags, progress: super::progress::ProgressSink) -> SettingsCell {
        SettingsCell::with_env(flags, Box::new(|name| std::env::var(name).ok()), progress)
    }

    /// Settings from `flags`, then `env`.
    pub fn with_env(
        flags: HubFlags,
        env: Box<Env>,
        progress: super::progress::ProgressSink,
    ) -> SettingsCell {
        SettingsCell(std::sync::Arc::new(CellInner {
            flags,
            env,
            progress,
            resolved: std::sync::OnceLock::new(),
        }))
    }

    /// Settings resolved already (by a caller that built them itself).
    pub fn resolved(settings: HubSettings) -> SettingsCell {
        let cell = SettingsCell::with_env(
            HubFlags::default(),
            Box::new(|_| None),
            settings.progress.clone(),
        );
        let _ = cell.0.resolved.set(Ok(settings));
        cell
    }

    /// The settings, resolved on the first call (the only call of [`HubSettings::resolve`] a
    /// command makes); the same error on every call when they cannot be resolved.
    pub fn get(&self) -> Result<&HubSettings, HubError> {
        let inner = &*self.0;
        inner
            .resolved
            .get_or_init(|| {
                HubSettings::resolve(&inner.flags, &*inner.env).map(|mut s| {
                    s.progress = inner.progress.clone();
                    s
                })
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

impl fmt::Debug for SettingsCell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SettingsCell")
            .field("flags", &self.0.flags)
            .field("resolved", &self.0.resolved.get())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const SENTINEL: &str = "hf_SENTINELsettings0000";

    fn resolve(flags: &HubFlags, vars: &[(&str, &str)]) -> HubSettings {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        HubSettings::resolve(flags, &|k| map.get(k).cloned()).unwrap()
    }

    #[test]
    fn defaults_come_from_home() {
        let s = resolve(&HubFlags::default(), &[("HOME", "/home/u")]);
        assert_eq!(s.endpoint.value, DEFAULT_ENDPOINT);
        assert_eq!(s.endpoint.source, SettingSource::Default);
        assert_eq!(
            s.cache_dir.value,
            PathBuf::from("/home/u/.cache/huggingface/hub")
        );
        assert_eq!(s.token.value, None);
        assert!(!s.offline.value);
        assert_eq!(s.timeout.value, Duration::from_secs(DEFAULT_TIMEOUT_SECS));
        assert!(!s.require_fresh.value);
    }

    #[test]
    fn flags_beat_environment_beats_defaults() {
        let env = [
            ("HOME", "/home/u"),
            ("HF_ENDPOINT", "https://hf-mirror.com/"),
            ("HF_HUB_CACHE", "/env/cache"),
            ("HF_HUB_OFFLINE", "0"),
            ("HF_HUB_DOWNLOAD_TIMEOUT", "30"),
        ];
        let s = resolve(&HubFlags::default(), &env);
        assert_eq!(s.endpoint.value, "https://hf-mirror.com");
        assert_eq!(s.endpoint.source, SettingSource::Env("HF_ENDPOINT"));
        assert_eq!(s.cache_dir.value, PathBuf::from("/env/cache"));
        assert_eq!(s.cache_dir.source, SettingSource::Env("HF_HUB_CACHE"));
        assert!(!s.offline.value);
        assert_eq!(s.timeout.value, Duration::from_secs(30));

        let flags = HubFlags {
            endpoint: Some("http://127.0.0.1:9".into()),
            cache_dir: Some("/flag/cache".into()),
            offline: true,
            timeout_secs: Some(3),
            require_fresh: true,
        };
        let s = resolve(&flags, &env);
        assert_eq!(s.endpoint.value, "http://127.0.0.1:9");
        assert_eq!(s.endpoint.source, SettingSource::Flag);
        assert_eq!(s.cache_dir.value, PathBuf::from("/flag/cache"));
        assert_eq!(
            (s.offline.value, s.offline.source),
            (true, SettingSource::Flag)
        );
        assert_eq!(s.timeout.value, Duration::from_secs(3));
        assert!(s.require_fresh.value);
    }

    #[test]
    fn hf_home_and_offline_spellings() {
        let s = resolve(&HubFlags::default(), &[("HF_HOME", "/hf")]);
        assert_eq!(s.cache_dir.value, PathBuf::from("/hf/hub"));
        assert_eq!(s.cache_dir.source, SettingSource::Env("HF_HOME"));
        for v in ["1", "true", "YES", "on"] {
            let s = resolve(
                &HubFlags::default(),
                &[("HF_HOME", "/hf"), ("HF_HUB_OFFLINE", v)],
            );
            assert!(s.offline.value, "{v}");
            assert_eq!(s.offline.source, SettingSource::Env("HF_HUB_OFFLINE"));
        }
        for v in ["0", "false", "no", "off", "maybe"] {
            let s = resolve(
                &HubFlags::default(),
                &[("HF_HOME", "/hf"), ("HF_HUB_OFFLINE", v)],
            );
            assert!(!s.offline.value, "{v}");
        }
    }

    #[test]
    fn token_sources_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("hf");
        fs_write(&home.join("token"), "hf_SENTINELhome0000\n");
        let path_file = dir.path().join("tok");
        fs_write(&path_file, &format!("  {SENTINEL}  \n"));
        let home_s = home.to_str().unwrap();
        let path_s = path_file.to_str().unwrap();

        let s = resolve(&HubFlags::default(), &[("HF_HOME", home_s)]);
        assert_eq!(s.token_text(), Some("hf_SENTINELhome0000"));
        assert_eq!(s.token.source, SettingSource::File(home.join("token")));

        let s = resolve(
            &HubFlags::default(),
            &[("HF_HOME", home_s), ("HF_TOKEN_PATH", path_s)],
        );
        assert_eq!(s.token_text(), Some(SENTINEL));
        assert_eq!(s.token.source, SettingSource::File(path_file.clone()));

        let s = resolve(
            &HubFlags::default(),
            &[
                ("HF_HOME", home_s),
                ("HF_TOKEN_PATH", path_s),
                ("HF_TOKEN", "hf_SENTINELenv0000"),
            ],
        );
        assert_eq!(s.token_text(), Some("hf_SENTINELenv0000"));
        assert_eq!(s.token.source, SettingSource::Env("HF_TOKEN"));

        // A missing HF_TOKEN_PATH file falls through to $HF_HOME/token.
        let s = resolve(
            &HubFlags::default(),
            &[("HF_HOME", home_s), ("HF_TOKEN_PATH", "/nope")],
        );
        assert_eq!(s.token_text(), Some("hf_SENTINELhome0000"));
    }

    #[test]
    fn the_token_never_shows() {
        let s = resolve(
            &HubFlags::default(),
            &[("HOME", "/h"), ("HF_TOKEN", SENTINEL)],
        );
        let rows = s.describe();
        let text = format!("{rows:?} {s:?} {}", s.token.value.as_ref().unwrap());
        assert!(!text.contains(SENTINEL), "{text}");
        let token_row = rows.iter().find(|r| r.0 == "token").unwrap();
        assert_eq!(token_row.1, "set (from env HF_TOKEN)");
        let s = resolve(&HubFlags::default(), &[("HOME", "/h")]);
        assert!(s
            .describe()
            .iter()
            .any(|r| r.0 == "token" && r.1 == "not set"));
    }

    #[test]
    fn bad_values_are_named() {
        let map = |k: &str| match k {
            "HOME" => Some("/h".to_string()),
            "HF_ENDPOINT" => Some("ftp://x".to_string()),
            _ => None,
        };
        let err = HubSettings::resolve(&HubFlags::default(), &map).unwrap_err();
        assert!(
            err.message.contains("ftp://x") && err.message.contains("HF_ENDPOINT"),
            "{err}"
        );
        let map = |k: &str| match k {
            "HOME" => Some("/h".to_string()),
            "HF_HUB_DOWNLOAD_TIMEOUT" => Some("soon".to_string()),
            _ => None,
        };
        let err = HubSettings::resolve(&HubFlags::default(), &map).unwrap_err();
        assert!(err.message.contains("HF_HUB_DOWNLOAD_TIMEOUT"), "{err}");
        let err = HubSettings::resolve(&HubFlags::default(), &|_| None).unwrap_err();
        assert!(err.message.contains("HF_HUB_CACHE"), "{err}");
    }

    fn fs_write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}
