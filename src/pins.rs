//! The pin file, `dflash-check.toml`: the reviewed authority of each drafter in a repository.
//!
//! `dflash-check pin` writes it; `dflash-check check` reads it, so CI compares every drafter
//! against exactly the revision a person reviewed (a Hub repo at a commit sha, a file, or a
//! built-in snapshot) instead of whatever a branch points at today. It is small TOML on purpose:
//! it is meant to be read in code review.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::input::{InputRef, Resolver, Role};
use crate::rules::EngineRelease;
use crate::{Error, Result};

pub mod digest;
pub mod repo;

/// The file name searched for from the current directory upwards.
pub const FILE_NAME: &str = "dflash-check.toml";
/// The schema written. Version 2 added the digests (`target_chat_template_sha256`,
/// `d2t_sha256`); version 1 files load unchanged (they simply record no digest) and are
/// written as version 2 the next time `pin` adds to them.
pub const VERSION: u32 = 2;
/// The oldest schema still read.
pub const OLDEST_VERSION: u32 = 1;

/// The whole pin file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PinFile {
    pub version: u32,
    /// The release of each engine the repository serves with, like a toolchain file: one
    /// (`engine = "vllm@0.30"`, which `check` also lints the pinned drafters for) or one per
    /// engine (`engine = ["vllm@0.30", "sglang@0.5.23"]`). A deployment `check`, `launch` and
    /// `doctor` find is judged at the release named for its engine, unless `--engine`, the
    /// server or the line's image names one. Absent: each engine's default window.
    #[serde(
        default,
        skip_serializing_if = "PinEngines::is_empty",
        with = "engines_text"
    )]
    pub engine: PinEngines,
    /// Drafter directory (relative to the pin file, `/`-separated) -> its pin.
    #[serde(default)]
    pub drafters: BTreeMap<String, Pin>,
    /// `[[ignore]]` entries, kept as written: `suppress` validates and applies them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore: Vec<toml::Value>,
}

/// The authority (and target) of one drafter: exactly one authority, by construction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawPin", into = "RawPin")]
pub struct Pin {
    pub authority: PinAuthority,
    /// The target model, when pinned.
    pub target: Option<PinTarget>,
    /// When the pin was written (YYYY-MM-DD), for reviewers.
    pub pinned: Option<String>,
    /// sha256 of the target directory's chat template when pinned ([`digest::chat_template`]).
    pub chat_template: Option<String>,
    /// sha256 of the drafter's `d2t` tensor bytes when pinned ([`digest::d2t`]).
    pub d2t: Option<String>,
    /// The engine (and version) the drafter was reviewed for; `check` lints for it.
    pub engine: Option<EngineRelease>,
}

/// The pin file's `engine`: the releases a repository serves with, at most one per engine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PinEngines(pub Vec<EngineRelease>);

impl PinEngines {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The one engine named, when the file names exactly one: what `check` lints pinned
    /// drafters for (the key's meaning before it took a list).
    pub fn only(&self) -> Option<&EngineRelease> {
        match self.0.as_slice() {
            [one] => Some(one),
            _ => None,
        }
    }
}

/// `engine = "vllm@0.30"` or `engine = ["vllm@0.30", "sglang@0.5.23"]`, each in the
/// `--engine` form; an engine named twice is refused.
mod engines_text {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::PinEngines;
    use crate::engine::{EngineRelease, VersionFrom};

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }

    pub fn serialize<S: Serializer>(engines: &PinEngines, s: S) -> Result<S::Ok, S::Error> {
        let texts: Vec<String> = engines.0.iter().map(ToString::to_string).collect();
        match texts.as_slice() {
            [one] => s.serialize_str(one),
            _ => texts.serialize(s),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<PinEngines, D::Error> {
        let texts = match OneOrMany::deserialize(d).map_err(|_| {
            serde::de::Error::custom(
                "`engine`: give a string (`\"vllm@0.30\"`) or a list of strings, one per engine",
            )
        })? {
            OneOrMany::One(t) => vec![t],
            OneOrMany::Many(ts) => ts,
        };
        let mut out: Vec<EngineRelease> = Vec::new();
        for t in texts {
            let e = EngineRelease::parse(&t)
                .map_err(|e| serde::de::Error::custom(format!("`engine`: {e}")))?
                .stated_in(VersionFrom::PinFile);
            if out.iter().any(|o| o.engine == e.engine) {
                return Err(serde::de::Error::custom(format!(
                    "`engine`: {} is named twice; give one release per engine",
                    e.engine
                )));
            }
            out.push(e);
        }
        Ok(PinEngines(out))
    }
}

/// An engine as TOML spells it: the `--engine` form, `vllm` or `vllm@0.26`.
mod engine_text {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::engine::{EngineRelease, VersionFrom};

    pub fn serialize<S: Serializer>(
        engine: &Option<EngineRelease>,
        s: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        match engine {
            Some(e) => s.serialize_str(&e.to_string()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> std::result::Result<Option<EngineRelease>, D::Error> {
        let text = String::deserialize(d)?;
        EngineRelease::parse(&text)
            .map(|e| Some(e.stated_in(VersionFrom::PinFile)))
            .map_err(|e| serde::de::Error::custom(format!("`engine`: {e}")))
    }
}

/// Where a drafter's authoritative config comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PinAuthority {
    /// A Hub repo at a resolved 40-hex commit sha.
    Hub { repo: String, revision: String },
    /// A built-in snapshot.
    Snapshot(String),
    /// An authoritative config file, relative to the pin file.
    File(String),
}

/// The target model: a Hub repo (at a resolved sha when known) or a directory relative to the
/// pin file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinTarget {
    pub target: String,
    pub revision: Option<String>,
}

/// The pin as the TOML file spells it: flat optional keys, validated into a [`Pin`].
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPin {
    /// Hub repo of the authoritative config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hub: Option<String>,
    /// The resolved commit sha of `hub`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    revision: Option<String>,
    /// Or: a built-in snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    snapshot: Option<String>,
    /// Or: an authoritative config file, relative to the pin file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    against: Option<String>,
    /// Target model: a Hub repo, or a directory relative to the pin file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    target: Option<String>,
    /// The resolved commit sha of a Hub `target`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    target_revision: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pinned: Option<String>,
    /// sha256 of the target's chat template (version 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    target_chat_template_sha256: Option<String>,
    /// sha256 of the drafter's `d2t` tensor (version 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    d2t_sha256: Option<String>,
    /// The engine the drafter was reviewed for (`vllm`, `vllm@0.26`).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "engine_text")]
    engine: Option<EngineRelease>,
}

impl TryFrom<RawPin> for Pin {
    type Error = String;

    fn try_from(raw: RawPin) -> std::result::Result<Pin, String> {
        let authority = match (raw.hub, raw.snapshot, raw.against) {
            (Some(repo), None, None) => match raw.revision {
                Some(revision) if is_sha(&revision) => PinAuthority::Hub { repo, revision },
                _ => {
                    return Err(
                        "a `hub` pin needs `revision`, a 40-hex commit sha (write pins with `dflash-check pin`, which resolves the sha)"
                            .into(),
                    )
                }
            },
            (None, Some(s), None) => PinAuthority::Snapshot(s),
            (None, None, Some(f)) => PinAuthority::File(f),
            _ => return Err("a drafter must have exactly one of `hub`, `snapshot`, `against`".into()),
        };
        if raw.target.is_none() && raw.target_revision.is_some() {
            return Err("`target_revision` without `target`".into());
        }
        if raw.target.is_none() && raw.target_chat_template_sha256.is_some() {
            return Err("`target_chat_template_sha256` without `target`".into());
        }
        for (key, value) in [
            (
                "target_chat_template_sha256",
                &raw.target_chat_template_sha256,
            ),
            ("d2t_sha256", &raw.d2t_sha256),
        ] {
            if value.as_deref().is_some_and(|v| !digest::is_sha256(v)) {
                return Err(format!(
                    "`{key}` must be a sha256: 64 lower-case hex digits (write pins with `dflash-check pin`)"
                ));
            }
        }
        Ok(Pin {
            authority,
            target: raw.target.map(|target| PinTarget {
                target,
                revision: raw.target_revision,
            }),
            pinned: raw.pinned,
            chat_template: raw.target_chat_template_sha256,
            d2t: raw.d2t_sha256,
            engine: raw.engine,
        })
    }
}

impl From<Pin> for RawPin {
    fn from(pin: Pin) -> RawPin {
        let mut raw = RawPin {
            pinned: pin.pinned,
            target_chat_template_sha256: pin.chat_template,
            d2t_sha256: pin.d2t,
            engine: pin.engine,
            ..RawPin::default()
        };
        match pin.authority {
            PinAuthority::Hub { repo, revision } => {
                raw.hub = Some(repo);
                raw.revision = Some(revision);
            }
            PinAuthority::Snapshot(s) => raw.snapshot = Some(s),
            PinAuthority::File(f) => raw.against = Some(f),
        }
        if let Some(t) = pin.target {
            raw.target = Some(t.target);
            raw.target_revision = t.revision;
        }
        raw
    }
}

/// A loaded pin file and where it lives.
#[derive(Debug, Clone)]
pub struct LoadedPins {
    pub path: PathBuf,
    pub file: PinFile,
    /// The text the file was parsed from: what `[[ignore]]` entries and the lines of pins are
    /// read from, so nothing reads the file a second time (and no read error is dropped).
    pub text: String,
}

impl LoadedPins {
    /// The directory pins are relative to.
    pub fn root(&self) -> PathBuf {
        match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        }
    }

    /// The pin of the drafter whose config file or directory is `drafter`.
    pub fn find(&self, drafter: &Path) -> Option<(&String, &Pin)> {
        let key = self.key_for(drafter)?;
        self.file.drafters.get_key_value(&key)
    }

    /// The pin key of a drafter path: its directory relative to the pin file.
    pub fn key_for(&self, drafter: &Path) -> Option<String> {
        let dir = std::path::absolute(drafter_dir(drafter)?).ok()?;
        let root = std::path::absolute(self.root()).ok()?;
        key_under(&normalize(&dir), &normalize(&root))
    }

    /// A [`PinFinder`]: [`LoadedPins::find`] for the many drafters of one run.
    pub fn finder(&self) -> PinFinder<'_> {
        let cwd = crate::config::working_dir().map(Path::to_path_buf);
        let root = std::path::absolute(self.root())
            .ok()
            .map(|r| normalize(&r).into_owned());
        let plain = |p: &Option<PathBuf>| {
            p.as_deref()
                .filter(|p| p.is_absolute() && crate::config::plain_unix_text(p))
                .and_then(Path::to_str)
                .map(str::to_string)
        };
        PinFinder {
            pins: self,
            plain: plain(&cwd).zip(plain(&root)),
            cwd,
            root,
        }
    }
}

/// [`LoadedPins::find`] with the working directory and the pin file's folder made absolute
/// once: `check` asked the kernel for the working directory twice for each of thousands of
/// drafters (issue 44). The process never changes its working directory.
pub struct PinFinder<'p> {
    pins: &'p LoadedPins,
    cwd: Option<PathBuf>,
    /// The pin file's folder, absolute and normalized.
    root: Option<PathBuf>,
    /// The working directory and the pin file's folder as text, when both are plain
    /// ([`crate::config::plain_unix_text`]): a plain relative drafter path's key is then told
    /// from the texts ([`plain_key`]).
    plain: Option<(String, String)>,
}

impl<'p> PinFinder<'p> {
    /// The pin of the drafter whose config file or directory is `drafter`: what
    /// [`LoadedPins::find`] answers.
    pub fn find(&self, drafter: &Path) -> Option<(&'p String, &'p Pin)> {
        let dir = drafter_dir(drafter)?;
        if let (Some((cwd, root)), Some(text)) = (&self.plain, dir.to_str()) {
            if !dir.is_absolute() && crate::config::plain_unix_text(&dir) {
                if let Some(key) = plain_key(text, cwd, root) {
                    return self.pins.file.drafters.get_key_value(key.as_ref());
                }
            }
        }
        // `std::path::absolute` of a relative path is the working directory joined with it;
        // `normalize` drops the `.` components either keeps.
        let dir = match dir.is_absolute() {
            true => std::path::absolute(&dir).ok()?,
            false => self.cwd.as_ref()?.join(&dir),
        };
        let key = key_under(&normalize(&dir), self.root.as_ref()?)?;
        self.pins.file.drafters.get_key_value(&key)
    }
}

/// The pin key of the relative drafter directory `dir` under the pin file's folder `root`,
/// told from the texts alone: `dir`, the working directory `cwd` and `root` are all plain
/// ([`crate::config::plain_unix_text`]; `cwd` and `root` absolute), so `cwd/dir` is normal as
/// written and lies under `root` exactly when its text does. No path is built or walked by
/// components (5 k instructions a drafter in `check`, issue 44). `None`: not told so (an empty
/// `dir`, or a `dir` not under `root`): [`PinFinder::find`] takes the components' way, which
/// answers the same.
fn plain_key<'d>(dir: &'d str, cwd: &str, root: &str) -> Option<Cow<'d, str>> {
    if dir.is_empty() || dir.starts_with('/') {
        return None;
    }
    if cwd == root {
        return Some(Cow::Borrowed(dir));
    }
    if let Some(below) = cwd.strip_prefix(root).and_then(|r| r.strip_prefix('/')) {
        return Some(Cow::Owned(format!("{below}/{dir}")));
    }
    let rel = root.strip_prefix(cwd)?.strip_prefix('/')?;
    if dir == rel {
        return Some(Cow::Borrowed("."));
    }
    dir.strip_prefix(rel)?.strip_prefix('/').map(Cow::Borrowed)
}

/// The directory a drafter path names: the folder of its `config.json` (or of another file),
/// else the path itself.
fn drafter_dir(drafter: &Path) -> Option<PathBuf> {
    Some(
        if drafter.file_name().is_some_and(|n| n == "config.json") || drafter.is_file() {
            drafter.parent()?.to_path_buf()
        } else {
            drafter.to_path_buf()
        },
    )
}

/// The pin key of the drafter directory `dir` under the pin file's folder `root` (both
/// absolute and normalized): `/`-separated, `.` for the folder itself.
fn key_under(dir: &Path, root: &Path) -> Option<String> {
    // Both normalized: no `.` component, no root in what is under `root`.
    let key = crate::config::slash_joined(dir.strip_prefix(root).ok()?);
    Some(if key.is_empty() { ".".into() } else { key })
}

fn normalize(path: &Path) -> Cow<'_, Path> {
    // An absolute path whose text is its plain components is normal already: nothing to
    // rebuild (a push per component, for every drafter, issue 44).
    if path.is_absolute() && crate::config::plain_unix_text(path) {
        return Cow::Borrowed(path);
    }
    Cow::Owned(rebuilt(path))
}

/// `path` rebuilt from its components, `.` dropped and `..` taking its parent away.
fn rebuilt(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Finds `dflash-check.toml` in `start` or its parents: the nearest one that exists in any
/// form. A dangling symlink (a link into a submodule CI did not fetch), a FIFO, a device or a
/// directory of that name is the pin file too, so [`load`] refuses it (exit 2) instead of the
/// search going on to a stray file above the checkout, or to none.
pub fn discover(start: &Path) -> Option<PathBuf> {
    let start = std::path::absolute(start).ok()?;
    start
        .ancestors()
        .map(|d| d.join(FILE_NAME))
        // Not following a link; an error other than "not found" (a directory that cannot be
        // searched) is not proof of absence either, and `load` reports it.
        .find(|p| match std::fs::symlink_metadata(p) {
            Ok(_) => true,
            Err(e) => e.kind() != std::io::ErrorKind::NotFound,
        })
}

/// The pin file of a run: `explicit` (`--pins FILE`), else `dflash-check.toml` in the working
/// directory or a parent; `None` when there is none.
pub fn find(explicit: Option<&Path>) -> Result<Option<LoadedPins>> {
    let path = match explicit {
        Some(p) => Some(p.to_path_buf()),
        None => discover(Path::new(".")),
    };
    path.as_deref().map(load).transpose()
}

/// Reads and validates a pin file. Anything but a regular file (or a link to one) is refused
/// before a byte is read, without blocking on a FIFO.
pub fn load(path: &Path) -> Result<LoadedPins> {
    let bytes = crate::config::read_capped(path, crate::config::MAX_CONFIG_BYTES)
        .map_err(|e| not_readable(path, e))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| Error::new(format!("`{}`: not UTF-8 text", path.display())))?;
    parse(path, text)
}

/// Why the pin file at `path` cannot be read, with what to do: a dangling symlink is named as
/// one (`read_capped` alone would say the file "does not exist", next to a file listing that
/// shows it).
fn not_readable(path: &Path, e: Error) -> Error {
    let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    match std::fs::metadata(path) {
        // Not a loop of links (ELOOP): `read_capped` names that one.
        Err(err) if link && err.kind() == std::io::ErrorKind::NotFound => {
            let target = std::fs::read_link(path)
                .map(|t| t.display().to_string())
                .unwrap_or_default();
            Error::new(format!(
                "`{}` is a symbolic link to `{target}`, which does not exist",
                path.display()
            ))
            .with_hint(
                "fetch what it points into (a git submodule?), or remove the link; a pin file \
                 that cannot be read is never skipped",
            )
        }
        Ok(meta) if !meta.is_file() => e.with_hint(
            "the pin file must be a regular file (or a link to one), and one that is not is \
             never skipped: replace or remove it, or pass --pins FILE",
        ),
        _ => e,
    }
}

/// Validates the text of a pin file read from `path` (what [`load`] does after reading).
pub fn parse(path: &Path, text: String) -> Result<LoadedPins> {
    let file: PinFile = toml::from_str(&text).map_err(|e| {
        Error::new(format!(
            "`{}`: invalid pin file: {}",
            path.display(),
            e.message()
        ))
        .with_hint("fix it by hand or write it again with `dflash-check pin`")
    })?;
    if !(OLDEST_VERSION..=VERSION).contains(&file.version) {
        return Err(Error::new(format!(
            "`{}`: pin file version {} is not supported (this dflash-check reads versions \
             {OLDEST_VERSION} to {VERSION})",
            path.display(),
            file.version
        ))
        .with_hint("a newer dflash-check wrote it: upgrade dflash-check"));
    }
    if file.version < 2 {
        if let Some(key) = file
            .drafters
            .iter()
            .find(|(_, p)| p.chat_template.is_some() || p.d2t.is_some())
            .map(|(k, _)| k)
        {
            return Err(Error::new(format!(
                "`{}`: the pin `{key}` records a digest, which needs `version = 2`",
                path.display()
            ))
            .with_hint("set `version = 2` at the top of the pin file"));
        }
    }
    Ok(LoadedPins {
        path: path.to_path_buf(),
        file,
        text,
    })
}

/// What `dflash-check pin` was asked to record.
#[derive(Debug, Clone)]
pub enum PinSource {
    /// The drafter's Hub repo at a branch, tag or sha; the resolved sha is recorded.
    Hub(crate::hub::RepoRef),
    /// A built-in snapshot by name.
    Snapshot(String),
    /// An authoritative config file (or directory holding one).
    File(PathBuf),
    /// The built-in snapshot matching the drafter.
    Auto,
}

/// A request to pin one drafter.
#[derive(Debug, Clone)]
pub struct PinRequest {
    /// The drafter directory or config file.
    pub drafter: PathBuf,
    pub source: PinSource,
    /// `--target DIR|REPO`: a directory, or a Hub repo in an explicit form
    /// (`hf://ORG/NAME[@REV]`, its sha is recorded); decided by [`InputRef::parse`].
    pub target: Option<String>,
    /// The pin file; default: found from the drafter upwards, else ./dflash-check.toml.
    pub pins: Option<PathBuf>,
    /// The command's inputs resolver, for Hub authorities and targets (`None`: no Hub).
    pub hub: Option<Resolver>,
    /// The date to record (YYYY-MM-DD); [`today`] in production.
    pub date: String,
    /// The engine (and version) the pin is reviewed for (`pin --engine`).
    pub engine: Option<EngineRelease>,
}

/// What was recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub pin_file: PathBuf,
    /// The drafter's key in the pin file.
    pub key: String,
    /// `z-lab/X@sha (fetched …)`, `built-in snapshot …`, `file …`, with the target.
    pub summary: String,
    /// The file written: `pin_file`, or the file it links to.
    pub written: repo::WriteTarget,
}

/// Resolves the request (Hub revisions to shas) and writes the pin into the pin file.
pub fn record(request: &PinRequest) -> Result<Recorded> {
    let target_input = match request.target.as_deref() {
        Some(t) => Some(InputRef::parse(t, "--target")?),
        None => None,
    };
    let local = Resolver::local_config(&request.drafter)?;
    let pins_path = request
        .pins
        .clone()
        .unwrap_or_else(|| discover(&local.dir()).unwrap_or_else(|| PathBuf::from(FILE_NAME)));
    // Only the path matters until the pins are written: the file is read under the lock.
    let where_ = LoadedPins {
        path: pins_path.clone(),
        file: PinFile::default(),
        text: String::new(),
    };
    let key = where_.key_for(&local.path).ok_or_else(|| {
        Error::new(format!(
            "`{}` is not inside `{}`'s directory",
            local.path.display(),
            pins_path.display()
        ))
        .kind(crate::error::ErrorKind::Usage)
        .with_hint("pass --pins with a pin file at the repository root")
    })?;
    let (authority, mut summary) = pin_authority(
        request,
        &local,
        target_input.as_ref(),
        (&pins_path, &key),
        &where_.root(),
    )?;
    let (target, chat_template) =
        pin_target(request, target_input.as_ref(), &where_.root(), &mut summary)?;
    let d2t = match digest::d2t(&local.path)? {
        digest::D2t::Found(c) => {
            summary.push_str(&format!("; d2t sha256 {} ({})", short(&c.sha256), c.from));
            Some(c.sha256)
        }
        digest::D2t::NoWeights | digest::D2t::Absent => None,
    };
    let pin = Pin {
        authority,
        target,
        pinned: Some(request.date.clone()),
        chat_template,
        d2t,
        engine: request.engine.clone(),
    };
    let written = write_pin(where_, &key, pin)?;
    Ok(Recorded {
        pin_file: pins_path,
        key,
        summary,
        written,
    })
}

/// The command's inputs resolver, needed only to pin a Hub repo (every input of `pin` is read
/// through it).
fn hub_resolver(request: &PinRequest) -> Result<&Resolver> {
    request.hub.as_ref().ok_or_else(|| {
        Error::new("Hub settings are needed to pin a Hub repo").kind(crate::error::ErrorKind::Usage)
    })
}

/// The authority to pin, as the request names it (a Hub repo at its resolved sha, a built-in
/// snapshot, a file relative to the pin file's `root`, or the snapshot matching the drafter),
/// and its one-line summary.
fn pin_authority(
    request: &PinRequest,
    local: &crate::config::ConfigFile,
    target_input: Option<&InputRef>,
    (pins_path, key): (&Path, &str),
    root: &Path,
) -> Result<(PinAuthority, String)> {
    use crate::source::builtin;
    Ok(match &request.source {
        PinSource::Hub(repo) => {
            let authority = hub_resolver(request)?.hub_authority(repo, None)?;
            let sha = authority.sha.clone().unwrap_or_default();
            let summary = format!("{}@{sha} ({})", authority.id, authority.provenance);
            (
                PinAuthority::Hub {
                    repo: authority.id,
                    revision: sha,
                },
                summary,
            )
        }
        PinSource::Snapshot(name) => {
            let snap = builtin::Snapshot::find(name).ok_or_else(|| {
                Error::new(format!("no built-in snapshot named `{name}`"))
                    .kind(crate::error::ErrorKind::Usage)
                    .with_hint("run `dflash-check snapshots` to list them")
            })?;
            (
                PinAuthority::Snapshot(snap.repo.to_string()),
                format!("built-in snapshot {}", snap.repo),
            )
        }
        PinSource::File(p) => {
            let file = crate::config::config_path(p)?;
            Resolver::local_config(&file)?;
            let rel = crate::config::display(&file, root);
            // What `check` will accept: inside the repository, a model config.
            repo::authority_at(pins_path, key, &file, &rel)?;
            (PinAuthority::File(rel.clone()), format!("file {rel}"))
        }
        PinSource::Auto => {
            let a = auto_snapshot(local, target_input)?;
            let summary = format!(
                "built-in snapshot {} ({})",
                a.id,
                a.matched_by.clone().unwrap_or_default()
            );
            (PinAuthority::Snapshot(a.id), summary)
        }
    })
}

/// The target to pin (a directory relative to `root`, or a Hub repo at its resolved sha) and,
/// for a directory, its chat template's digest: what the drafter must be served with. (A Hub
/// target is pinned at a sha, whose template cannot change, so nothing is recorded for it.)
/// Each adds its part to `summary`.
fn pin_target(
    request: &PinRequest,
    target_input: Option<&InputRef>,
    root: &Path,
    summary: &mut String,
) -> Result<(Option<PinTarget>, Option<String>)> {
    match target_input {
        None => Ok((None, None)),
        Some(InputRef::Local(t)) => {
            let mut chat_template = None;
            if let Some(c) = digest::chat_template(t)? {
                summary.push_str(&format!(
                    "; chat template sha256 {} ({})",
                    short(&c.sha256),
                    c.from
                ));
                chat_template = Some(c.sha256);
            }
            let target = PinTarget {
                target: crate::config::display(t, root),
                revision: None,
            };
            Ok((Some(target), chat_template))
        }
        Some(InputRef::Hub(repo)) => {
            let (_, read) = hub_resolver(request)?.hub_model(repo, Role::Target)?;
            let sha = read.sha.unwrap_or_default();
            summary.push_str(&format!("; target {}@{sha}", read.repo));
            let target = PinTarget {
                target: read.repo,
                revision: Some(sha),
            };
            Ok((Some(target), None))
        }
    }
}

/// Reads, inserts `pin` under `key` and writes the pin file at `where_.path`, under the lock,
/// so concurrent `pin` runs each add their pin to what the others wrote (the Hub is asked
/// before, outside the lock). Returns the file's path.
fn write_pin(where_: LoadedPins, key: &str, pin: Pin) -> Result<repo::WriteTarget> {
    // A link is written through when it leads inside the repository, else refused.
    let target = repo::write_target(&where_.path)?;
    let _lock = crate::fix::write::lock(&target.path)?;
    // Anything at the path (a dangling link, a FIFO) is the pin file, refused by `load`; a
    // FIFO is never opened for a blocking read.
    let mut loaded = if std::fs::symlink_metadata(&target.path).is_ok() {
        load(&target.path)?
    } else {
        LoadedPins {
            file: PinFile {
                version: VERSION,
                ..Default::default()
            },
            ..where_
        }
    };
    // A version-1 file gains version 2's fields, so it is written as version 2.
    loaded.file.version = VERSION;
    loaded.file.drafters.insert(key.to_string(), pin);
    save_pin(&loaded.path, &loaded.file, key)?;
    Ok(target)
}

/// The first 12 hex digits of a digest, for one-line summaries.
fn short(sha256: &str) -> &str {
    sha256.get(..12).unwrap_or(sha256)
}

/// Today's date (UTC), `YYYY-MM-DD`, for the pin file's reviewers.
pub fn today() -> String {
    time::OffsetDateTime::now_utc().date().to_string()
}

/// Whether `s` is a full commit sha.
pub fn is_sha(s: &str) -> bool {
    s.len() == 40
        && s.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// Writes one drafter's pin (and the file's version) into the pin file **in place**: the
/// people who review the file keep their comments, the `[[ignore]]` entries and every other
/// pin stay as written, byte for byte. A new file is written whole ([`save`]). Callers hold
/// [`crate::fix::write::lock`] across the read and this write.
pub fn save_pin(path: &Path, file: &PinFile, key: &str) -> Result<()> {
    let existing = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return save(path, file),
        Err(e) => return Err(crate::config::io_error(path, &e)),
    };
    let fresh = toml::to_string_pretty(file)
        .map_err(|e| Error::new(format!("cannot serialise the pin file: {e}")))?;
    let fresh: toml_edit::DocumentMut = fresh
        .parse()
        .map_err(|e| Error::new(format!("internal error: the pin file's own TOML: {e}")))?;
    let mut doc: toml_edit::DocumentMut = existing.parse().map_err(|e| {
        Error::new(format!("`{}` is not valid TOML: {e}", path.display()))
            .with_hint("fix the file by hand (it was read a moment ago), then pin again")
    })?;
    doc["version"] = fresh["version"].clone();
    let pin = fresh
        .get("drafters")
        .and_then(|d| d.get(key))
        .cloned()
        .ok_or_else(|| Error::new("internal error: the new pin is missing"))?;
    if doc.get("drafters").is_none_or(|d| !d.is_table()) {
        let mut drafters = toml_edit::Table::new();
        drafters.set_implicit(true);
        doc["drafters"] = toml_edit::Item::Table(drafters);
    }
    // Replace the values; keep the old table's comments and its place in the file.
    let old = doc["drafters"].get(key).and_then(toml_edit::Item::as_table);
    let (decor, position) = (
        old.map(|t| t.decor().clone()),
        old.and_then(toml_edit::Table::position),
    );
    let mut pin = pin;
    if let Some(table) = pin.as_table_mut() {
        if let Some(decor) = decor {
            *table.decor_mut() = decor;
        }
        table.set_position(position);
    }
    doc["drafters"][key] = pin;
    crate::fix::write::write_file(path, doc.to_string().as_bytes())
}

/// Writes the whole pin file (sorted, with a header comment), replacing it atomically. Callers
/// that read it first hold [`crate::fix::write::lock`] across the read and this write.
pub fn save(path: &Path, file: &PinFile) -> Result<()> {
    let body = toml::to_string_pretty(file)
        .map_err(|e| Error::new(format!("cannot serialise the pin file: {e}")))?;
    let text = format!(
        "# dflash-check pins: the reviewed authority of each drafter config.\n\
         # Written by `dflash-check pin`; `dflash-check check` compares against exactly these revisions.\n\n{body}"
    );
    // An unpredictable O_EXCL temp file (a symlink planted beside the pin file is never
    // followed), the existing file's mode kept, then one rename.
    crate::fix::write::write_file(path, text.as_bytes())
}

/// The built-in snapshot `pin` records when no authority is named: chosen by evidence (the
/// target, exact equality), never by the folder name alone.
fn auto_snapshot(
    local: &crate::config::ConfigFile,
    target: Option<&InputRef>,
) -> Result<crate::source::Authority> {
    use crate::source::choose::{self, Choice, TargetIdentity};
    let identity = target.and_then(|t| match t {
        InputRef::Local(path) if path.is_dir() => {
            TargetIdentity::of_dir(path, &path.display().to_string())
        }
        InputRef::Local(path) => Some(TargetIdentity {
            name: path.display().to_string(),
            from: format!("--target {}", path.display()),
        }),
        InputRef::Hub(repo) => Some(TargetIdentity {
            name: repo.repo.clone(),
            from: format!("--target {repo}"),
        }),
    });
    match choose::choose(local, identity.as_ref()) {
        Choice::One(a) => Ok(*a),
        Choice::Ambiguous(a) => Err(a.to_error(local)),
        Choice::NoMatch(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// The key told from the texts is the key the components' way gives, wherever the working
    /// directory sits against the pin file's folder (the same, below, above, beside).
    #[test]
    fn plain_keys_are_the_components_keys() {
        let roots = ["/r", "/r/s", "/rs", "/a/r"];
        let cwds = ["/r", "/r/s", "/r/s/t", "/", "/rs", "/a", "/a/r/x"];
        let dirs = [
            "m", "m/n", "s", "s/m", "s/t", "r", "rs", "x", "x/y", "m..n", "m.n/o", "",
        ];
        for root in roots {
            for cwd in cwds
                .into_iter()
                .filter(|c| crate::config::plain_unix_text(Path::new(c)))
            {
                for dir in dirs {
                    let slow = key_under(&normalize(&Path::new(cwd).join(dir)), Path::new(root));
                    if let Some(fast) = plain_key(dir, cwd, root) {
                        assert_eq!(Some(fast.into_owned()), slow, "{cwd} + {dir} under {root}");
                    }
                }
            }
        }
        assert_eq!(plain_key("m", "/r", "/r").as_deref(), Some("m"));
        assert_eq!(plain_key("t/m", "/r/s", "/r").as_deref(), Some("s/t/m"));
        assert_eq!(plain_key("s", "/r", "/r/s").as_deref(), Some("."));
        assert_eq!(plain_key("s/m", "/r", "/r/s").as_deref(), Some("m"));
        assert_eq!(plain_key("sm", "/r", "/r/s"), None);
        assert_eq!(plain_key("m", "/rs", "/r"), None);
    }

    /// A path taken as normal is what rebuilding it from its components gives.
    #[test]
    fn normalize_is_the_rebuilt_path() {
        for p in [
            "/a/b",
            "/",
            "/a//b",
            "/a/b/",
            "/a/./b",
            "/a/../b",
            "/a/.hidden",
            "/a/b/..",
            "/a/b/.",
            "/x y/ü",
        ] {
            assert_eq!(normalize(Path::new(p)), rebuilt(Path::new(p)), "{p}");
        }
    }

    #[test]
    fn engines_round_trip_and_old_files_load() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        // A file written before engines were recorded still loads, with no engine.
        fs::write(
            &path,
            "version = 1\n[drafters.\"a\"]\nsnapshot = \"z-lab/Qwen3.6-27B-DFlash\"\n",
        )
        .unwrap();
        let old = load(&path).unwrap();
        assert!(old.file.engine.is_empty());
        assert_eq!(old.file.drafters["a"].engine, None);
        let mut file = old.file;
        file.engine = PinEngines(vec![EngineRelease::parse("vllm@0.26")
            .unwrap()
            .stated_in(crate::engine::VersionFrom::PinFile)]);
        file.drafters.get_mut("a").unwrap().engine = Some(EngineRelease::parse("sglang").unwrap());
        save(&path, &file).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.contains("engine = \"vllm@0.26\""), "{text}");
        assert!(text.contains("engine = \"sglang\""), "{text}");
        assert_eq!(load(&path).unwrap().file, file);
        fs::write(&path, "version = 1\nengine = \"tgi\"\n").unwrap();
        let e = load(&path).unwrap_err().message;
        assert!(e.contains("unknown engine `tgi`"), "{e}");
    }

    #[test]
    fn round_trips_and_validates() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let mut file = PinFile {
            version: VERSION,
            ..PinFile::default()
        };
        file.drafters.insert(
            "models/a".into(),
            Pin {
                authority: PinAuthority::Snapshot("z-lab/Qwen3.6-27B-DFlash".into()),
                target: None,
                pinned: Some("2026-12-03".into()),
                chat_template: None,
                d2t: Some("ab".repeat(32)),
                engine: None,
            },
        );
        save(&path, &file).unwrap();
        let loaded = load(&path).unwrap();
        assert_eq!(loaded.file, file);
        let drafter = dir.path().join("models/a/config.json");
        assert_eq!(loaded.key_for(&drafter).as_deref(), Some("models/a"));
        fs::write(&path, "version = 1\n[drafters.\"x\"]\nhub = \"a/b\"\n").unwrap();
        assert!(load(&path).unwrap_err().message.contains("40-hex"));
        fs::write(
            &path,
            "version = 1\n[drafters.\"x\"]\nsnapshot = \"a/b\"\nagainst = \"c.json\"\n",
        )
        .unwrap();
        assert!(load(&path).unwrap_err().message.contains("exactly one"));
    }

    /// Version 1 files (no digests) still load; a digest needs version 2; a newer version is
    /// refused with the reason.
    #[test]
    fn version_one_files_still_load() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        fs::write(
            &path,
            "version = 1\n[drafters.\"m\"]\nsnapshot = \"a/b\"\ntarget = \"t\"\n",
        )
        .unwrap();
        let loaded = load(&path).unwrap();
        assert_eq!(loaded.file.version, 1);
        let pin = &loaded.file.drafters["m"];
        assert_eq!((pin.chat_template.as_ref(), pin.d2t.as_ref()), (None, None));
        let digest = "0".repeat(64);
        fs::write(
            &path,
            format!(
                "version = 1\n[drafters.\"m\"]\nsnapshot = \"a/b\"\nd2t_sha256 = \"{digest}\"\n"
            ),
        )
        .unwrap();
        assert!(load(&path).unwrap_err().message.contains("version = 2"));
        fs::write(
            &path,
            format!(
                "version = 2\n[drafters.\"m\"]\nsnapshot = \"a/b\"\nd2t_sha256 = \"{digest}\"\n"
            ),
        )
        .unwrap();
        assert_eq!(load(&path).unwrap().file.drafters["m"].d2t, Some(digest));
        fs::write(
            &path,
            "version = 2\n[drafters.\"m\"]\nsnapshot = \"a/b\"\nd2t_sha256 = \"ABC\"\n",
        )
        .unwrap();
        assert!(load(&path)
            .unwrap_err()
            .message
            .contains("64 lower-case hex"));
        fs::write(&path, "version = 3\n").unwrap();
        assert!(load(&path).unwrap_err().message.contains("versions 1 to 2"));
    }

    /// The date is ISO `YYYY-MM-DD`, as reviewers read it.
    #[test]
    fn today_is_an_iso_date() {
        let d = today();
        assert_eq!(d.len(), 10, "{d}");
        assert_eq!((&d[4..5], &d[7..8]), ("-", "-"));
        assert!(d[..4].parse::<u32>().unwrap() >= 2024);
    }
}
