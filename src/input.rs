//! Every input a command names (a drafter, a target, weights, a tokenizer), resolved in one
//! place: "a local path or a Hub repo at a revision" is decided here, read here, with the one
//! set of Hub settings of the command ([`SettingsCell`]), and every failure is returned.
//!
//! Several arguments accept either (`lint PATH|REPO`, `weights PATH|REPO`, `--target DIR|REPO`).
//! Guessing from the text would send a mistyped folder name (`models/nothing`) to the Hub,
//! leaking a private name and answering "cannot reach the Hub" instead of "no such folder". So
//! a Hub repo is taken only in a form a typo cannot produce:
//!
//! - `hf://ORG/NAME[@REV]` (the prefix `huggingface_hub`'s file system uses), or
//! - `ORG/NAME@REV` with an explicit revision, when no such path exists.
//!
//! Anything else is a local path, and one that does not exist is an error that says so and
//! shows the explicit Hub form. A model named in an engine's command line is read as the engine
//! reads it instead ([`InputRef::engine`]): a bare `ORG/NAME` there is a Hub repo, because vLLM
//! and SGLang load it so.
//!
//! A `--tokenizer` is a local directory only: no command takes a tokenizer from the Hub apart
//! from its target's.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::analysis::{self, AuthorityChoice, Inputs, TargetChoice, TargetContext};
use crate::config::{self, ConfigFile, TargetFacts};
use crate::error::ErrorKind;
use crate::hub::{HubSettings, RepoRef, SettingsCell};
use crate::source::Authority;
use crate::weights::{self, HubOrigin, WeightsHeaders};
use crate::{Error, Result};

/// The prefix that makes an argument a Hub repo.
pub const HUB_PREFIX: &str = "hf://";

/// An input named on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputRef {
    Local(PathBuf),
    Hub(RepoRef),
}

impl InputRef {
    /// Reads `arg`, given for `what` (`the drafter`, `--target`), by the rules of this module.
    pub fn parse(arg: &str, what: &str) -> Result<InputRef> {
        if let Some(rest) = arg.strip_prefix(HUB_PREFIX) {
            return rest.parse::<RepoRef>().map(InputRef::Hub).map_err(|e| {
                Error::new(format!(
                    "{what} `{arg}` is not a Hub repo id: {}",
                    e.message
                ))
                .kind(ErrorKind::Usage)
                .with_hint("write a Hub repo as hf://ORG/NAME or hf://ORG/NAME@REVISION")
            });
        }
        let path = Path::new(arg);
        if path.exists() || path.is_symlink() {
            return Ok(InputRef::Local(path.to_path_buf()));
        }
        if let Ok(repo) = arg.parse::<RepoRef>() {
            if repo.revision.is_some() {
                return Ok(InputRef::Hub(repo));
            }
        }
        let mut hint = "check the path".to_string();
        if arg.parse::<RepoRef>().is_ok() {
            hint = format!(
                "for a Hub repo, write {HUB_PREFIX}{arg} (or {arg}@REVISION); a bare ORG/NAME is \
                 read as a local path so that a mistyped folder is never sent to the Hub"
            );
        }
        Err(Error::new(format!(
            "{what} `{arg}` does not exist (no such file or directory)"
        ))
        .kind(ErrorKind::Usage)
        .with_hint(hint))
    }
}

/// How an engine reads a model name in its command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineName {
    /// A path that exists (as written, or relative to the launch file's directory).
    Local(PathBuf),
    /// Not a path here, and an `ORG/NAME` repo id: the engine downloads it.
    Hub(RepoRef),
    /// Neither; the reason.
    Unreadable(String),
}

impl InputRef {
    /// `given` as an engine reads it: a path that exists (as written, then relative to `base`)
    /// is local; otherwise an `ORG/NAME` repo id is a Hub repo. A name holding a shell
    /// variable the input never assigns is neither.
    pub fn engine(given: &str, base: Option<&Path>) -> EngineName {
        if given.contains('$') {
            return EngineName::Unreadable(format!(
                "`{given}` holds a shell variable the input never assigns"
            ));
        }
        let p = Path::new(given);
        if p.exists() {
            return EngineName::Local(p.to_path_buf());
        }
        if let Some(joined) = base.filter(|_| p.is_relative()).map(|b| b.join(p)) {
            if joined.exists() {
                return EngineName::Local(joined);
            }
        }
        match given.parse::<RepoRef>() {
            Ok(repo) => EngineName::Hub(repo),
            Err(_) => EngineName::Unreadable(format!(
                "no such directory here, and `{given}` is not a Hub repo id (ORG/NAME)"
            )),
        }
    }
}

/// What a model is read for: a target is read with its `tokenizer_config.json` (lint decodes
/// token ids with it); a drafter's config is its own authority.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Drafter,
    Target,
}

/// Where a model's config was read from the Hub.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubRead {
    pub repo: String,
    /// The commit the Hub (or its cache) resolved the revision to.
    pub sha: Option<String>,
    /// `hub` (asked now), `pinned` or `cache`.
    pub freshness: String,
    /// `ORG/NAME@SHA/config.json (…)`: what was read, and how fresh.
    pub provenance: String,
}

/// A model's config, and where it came from (`None`: a local path).
#[derive(Debug, Clone)]
pub struct Model {
    pub config: ConfigFile,
    pub hub: Option<HubRead>,
}

/// A drafter for `lint`: its config and, when asked, the safetensors headers beside it (on the
/// Hub, read with range requests at the config's sha).
#[derive(Debug, Clone)]
pub struct Drafter {
    pub config: ConfigFile,
    pub headers: Option<WeightsHeaders>,
    /// Named by a local path (a local drafter can be compared with published configs).
    pub local: bool,
}

/// A drafter's weights for `weights`: the headers, the config beside them when there is one,
/// and the commit they were read at for a Hub repo.
#[derive(Debug, Clone)]
pub struct Weights {
    pub headers: WeightsHeaders,
    pub config: Option<ConfigFile>,
    pub hub: Option<HubOrigin>,
    /// The GGUF header, when the weights are one `.gguf` file.
    pub gguf: Option<crate::gguf::GgufHeader>,
}

/// The authority the user named, as the command line gives it (at most one is set).
#[derive(Debug, Clone, Default)]
pub struct AuthoritySpec {
    /// `--against PATH`
    pub against: Option<PathBuf>,
    /// `--snapshot REPO`
    pub snapshot: Option<String>,
    /// `--from-hub ORG/NAME[@REV]` (a Hub repo by the flag's name: no path is tried).
    pub from_hub: Option<String>,
}

/// The target and tokenizer, as the command line gives them.
#[derive(Debug, Clone, Default)]
pub struct TargetSpec {
    /// `--target DIR|REPO`
    pub target: Option<String>,
    /// `--tokenizer DIR`
    pub tokenizer: Option<PathBuf>,
    pub full_tokenizer: bool,
    pub no_builtin: bool,
}

/// Resolves one command's inputs with one set of Hub settings (resolved when an input first
/// needs the Hub; clones share them, and share the count of targets resolved).
#[derive(Debug, Clone)]
pub struct Resolver {
    hub: SettingsCell,
    /// How many times a target was resolved (facts and tokens read): once per drafter per
    /// run is the rule (`pipeline`), and tests hold the commands to it.
    targets: Arc<AtomicUsize>,
}

impl Resolver {
    pub fn new(hub: SettingsCell) -> Resolver {
        Resolver {
            hub,
            targets: Arc::default(),
        }
    }

    /// A local config (a directory holding `config.json`, or the file), read as every command
    /// reads one. Needs no Hub, so it is also there for runs without a resolver.
    pub fn local_config(path: &Path) -> Result<ConfigFile> {
        config::load(path)
    }

    /// The target's facts and tokens for `configs` (the token ids they name), counted.
    pub fn target(
        &self,
        choice: &TargetChoice,
        configs: &[&ConfigFile],
        authority: Option<&Authority>,
    ) -> Result<TargetContext> {
        self.targets.fetch_add(1, Ordering::SeqCst);
        analysis::resolve_target(choice, configs, authority)
    }

    /// How many targets this command has resolved so far.
    pub fn target_resolutions(&self) -> usize {
        self.targets.load(Ordering::SeqCst)
    }

    /// A drafter's Hub repo as an authority, at the revision's commit; `why` says what chose it.
    pub fn hub_authority(&self, repo: &RepoRef, why: Option<String>) -> Result<Authority> {
        crate::source::hub::load(self.settings()?, repo, why)
    }

    /// The command's Hub settings, for the parts of the library that take them whole.
    pub fn hub(&self) -> &SettingsCell {
        &self.hub
    }

    /// The settings, resolved (once per command); their error when they cannot be.
    pub fn settings(&self) -> Result<&HubSettings> {
        self.hub.get().map_err(Error::from)
    }

    /// A model's config: a local path (a directory or its `config.json`), or a Hub repo's at
    /// the resolved commit (see [`Resolver::hub_model`]).
    pub fn model(&self, input: &InputRef, role: Role) -> Result<Model> {
        match input {
            InputRef::Local(path) => Ok(Model {
                config: config::load(path)?,
                hub: None,
            }),
            InputRef::Hub(repo) => {
                let (config, hub) = self.hub_model(repo, role)?;
                Ok(Model {
                    config,
                    hub: Some(hub),
                })
            }
        }
    }

    /// A Hub repo's config at the resolved commit; a target's `tokenizer_config.json` is
    /// fetched with it.
    pub fn hub_model(&self, repo: &RepoRef, role: Role) -> Result<(ConfigFile, HubRead)> {
        let settings = self.settings()?;
        match role {
            Role::Target => {
                let t = crate::source::hub::fetch_target(settings, repo, false)?;
                let config = config::load(&t.dir)?;
                let freshness = t.freshness.label().to_string();
                let read = HubRead {
                    provenance: format!("{} at commit {} ({freshness})", t.repo, t.sha),
                    repo: t.repo,
                    sha: Some(t.sha),
                    freshness,
                };
                Ok((config, read))
            }
            Role::Drafter => {
                let a = self.hub_authority(repo, None)?;
                let read = HubRead {
                    repo: repo.repo.clone(),
                    sha: a.sha.clone(),
                    freshness: a.kind.as_str().to_string(),
                    provenance: a.provenance.clone(),
                };
                Ok((a.config, read))
            }
        }
    }

    /// The drafter `arg` names (a path, or a Hub repo in an explicit form), with its weights
    /// headers when `with_weights`.
    pub fn drafter(&self, arg: &str, with_weights: bool) -> Result<Drafter> {
        match InputRef::parse(arg, "the drafter")? {
            InputRef::Hub(repo) => {
                let d = weights::read_hub(self.settings()?, &repo)?;
                Ok(Drafter {
                    config: d.config,
                    headers: d.headers.filter(|_| with_weights),
                    local: false,
                })
            }
            InputRef::Local(path) => {
                let config = config::load(&path)?;
                let headers = if with_weights {
                    weights::read_local(&config.path)?
                } else {
                    None
                };
                Ok(Drafter {
                    config,
                    headers,
                    local: true,
                })
            }
        }
    }

    /// The weights `arg` names: a drafter directory, its config file, a `.safetensors` file,
    /// or a Hub repo (headers only, by range requests at the resolved sha).
    pub fn weights(&self, arg: &str) -> Result<Weights> {
        let repo = match InputRef::parse(arg, "the drafter")? {
            InputRef::Local(path) if weights::gguf::is_gguf_path(&path) => {
                let (headers, config, gguf) = weights::gguf::read_local(&path)?;
                return Ok(Weights {
                    headers,
                    config: Some(config),
                    hub: None,
                    gguf: Some(gguf),
                });
            }
            InputRef::Local(path) => {
                let (headers, config) = weights::read_path(&path)?;
                return Ok(Weights {
                    headers,
                    config,
                    hub: None,
                    gguf: None,
                });
            }
            InputRef::Hub(repo) => repo,
        };
        let d = weights::read_hub(self.settings()?, &repo)?;
        let headers = d.headers.ok_or_else(|| {
            Error::new(format!(
                "`{}` at {} has no `model.safetensors` or `model.safetensors.index.json`",
                d.repo, d.sha
            ))
        })?;
        Ok(Weights {
            headers,
            config: Some(d.config),
            hub: Some(HubOrigin {
                repo: d.repo,
                revision: d.revision,
                sha: d.sha,
                freshness: d.freshness.label().to_string(),
            }),
            gguf: None,
        })
    }

    /// The target `arg` names (`--target DIR|REPO`), as facts and where they were read
    /// (the config's path, or `ORG/NAME@SHA`).
    pub fn target_facts(&self, arg: &str) -> Result<(TargetFacts, String)> {
        let model = self.model(&InputRef::parse(arg, "--target")?, Role::Target)?;
        let source = match &model.hub {
            Some(h) => format!("{}@{}", h.repo, h.sha.as_deref().unwrap_or_default()),
            None => model.config.path.display().to_string(),
        };
        Ok((TargetFacts::from_config(&model.config), source))
    }

    /// `--target` (a directory or a Hub repo) and `--tokenizer`, as a target choice. A Hub
    /// target carries the command's settings; their error is this call's.
    pub fn target_choice(&self, spec: &TargetSpec) -> Result<TargetChoice> {
        let mut choice = TargetChoice {
            tokenizer_dir: spec.tokenizer.clone(),
            full_tokenizer: spec.full_tokenizer,
            no_builtin: spec.no_builtin,
            ..TargetChoice::default()
        };
        if let Some(t) = &spec.target {
            match InputRef::parse(t, "--target")? {
                InputRef::Local(dir) => choice.target_dir = Some(dir),
                InputRef::Hub(repo) => {
                    choice.target_hub = Some(repo);
                    choice.hub = Some(Box::new(self.settings()?.clone()));
                }
            }
        }
        Ok(choice)
    }

    /// The authority the user named (`Auto` when none).
    pub fn authority_choice(&self, spec: &AuthoritySpec) -> Result<AuthorityChoice> {
        if let Some(p) = &spec.against {
            return Ok(AuthorityChoice::File(p.clone()));
        }
        if let Some(s) = &spec.snapshot {
            return Ok(AuthorityChoice::Snapshot(s.clone()));
        }
        if let Some(r) = &spec.from_hub {
            let repo: RepoRef = r.parse().map_err(Error::from)?;
            return Ok(AuthorityChoice::Hub {
                repo,
                settings: Box::new(self.settings()?.clone()),
                inferred: None,
            });
        }
        Ok(AuthorityChoice::Auto)
    }

    /// The inputs of `diff` and `fix`: the drafter config at `path`, its authority and its
    /// target, every Hub look-up with this resolver's settings.
    pub fn diff_inputs(
        &self,
        path: &Path,
        authority: &AuthoritySpec,
        target: &TargetSpec,
    ) -> Result<Inputs> {
        let authority = self.authority_choice(authority)?;
        let target = self.target_choice(target)?;
        analysis::resolve_inputs(path, &authority, &target, &self.hub)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_names() {
        assert_eq!(InputRef::engine(".", None), EngineName::Local(".".into()));
        assert!(matches!(
            InputRef::engine("Qwen/Qwen3-8B", None),
            EngineName::Hub(r) if r.repo == "Qwen/Qwen3-8B" && r.revision.is_none()
        ));
        assert!(matches!(
            InputRef::engine("$MODEL", None),
            EngineName::Unreadable(_)
        ));
        assert!(matches!(
            InputRef::engine("no/such/model/dir", None),
            EngineName::Unreadable(_)
        ));
    }

    #[test]
    fn explicit_hub_forms() {
        let hub = |s: &str| match InputRef::parse(s, "x").unwrap() {
            InputRef::Hub(r) => (r.repo, r.revision),
            other => panic!("{other:?}"),
        };
        assert_eq!(hub("hf://Qwen/Qwen3-8B"), ("Qwen/Qwen3-8B".into(), None));
        assert_eq!(
            hub("hf://Qwen/Qwen3-8B@main"),
            ("Qwen/Qwen3-8B".into(), Some("main".into()))
        );
        assert_eq!(
            hub("Qwen/Qwen3-8B@v1"),
            ("Qwen/Qwen3-8B".into(), Some("v1".into()))
        );
    }

    #[test]
    fn a_missing_bare_name_is_a_missing_path() {
        let e = InputRef::parse("models/nothing-here-at-all", "the drafter").unwrap_err();
        assert!(e.message.contains("does not exist"), "{}", e.message);
        assert!(e.hint.unwrap().contains("hf://models/nothing-here-at-all"));
    }

    use crate::hub::{HubFlags, ProgressSink};

    const DRAFTER: &str = "fixtures/incident/Qwen3.6-27B-DFlash";

    /// A resolver whose environment is `vars`, counting how often the settings are resolved
    /// (each resolution reads `HF_ENDPOINT` once).
    fn counting(vars: &[(&str, String)]) -> (Resolver, Arc<AtomicUsize>) {
        let count = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&count);
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        let env = move |name: &str| {
            if name == "HF_ENDPOINT" {
                seen.fetch_add(1, Ordering::SeqCst);
            }
            vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        };
        let cell =
            SettingsCell::with_env(HubFlags::default(), Box::new(env), ProgressSink::default());
        (Resolver::new(cell), count)
    }

    /// `diff --from-hub REPO --target hf://REPO`: the authority and the target both need the
    /// Hub, and the settings are resolved once (offline with an empty cache, the authority
    /// then cannot be had: that is the error, and nothing was sent).
    #[test]
    fn a_diff_resolves_the_hub_settings_once() {
        let cache = tempfile::tempdir().unwrap();
        let (resolver, resolutions) = counting(&[
            ("HF_HUB_CACHE", cache.path().display().to_string()),
            ("HF_HUB_OFFLINE", "1".into()),
        ]);
        let authority = AuthoritySpec {
            from_hub: Some("z-lab/Qwen3.6-27B-DFlash".into()),
            ..AuthoritySpec::default()
        };
        let target = TargetSpec {
            target: Some("hf://Qwen/Qwen3.6-27B".into()),
            ..TargetSpec::default()
        };
        let e = resolver
            .diff_inputs(Path::new(DRAFTER), &authority, &target)
            .unwrap_err();
        assert!(matches!(e.kind, ErrorKind::Hub(_)), "{e:?}");
        assert_eq!(resolutions.load(Ordering::SeqCst), 1);
        // Every later need shares the first resolution.
        resolver.settings().unwrap();
        resolver.target_choice(&target).unwrap();
        assert_eq!(resolutions.load(Ordering::SeqCst), 1);
    }

    /// Local inputs never resolve the settings: a bad `HF_ENDPOINT` does not stop them.
    #[test]
    fn local_inputs_do_not_need_the_hub() {
        let (resolver, resolutions) = counting(&[("HF_ENDPOINT", "not a url".into())]);
        let authority = AuthoritySpec {
            snapshot: Some("z-lab/Qwen3.6-27B-DFlash".into()),
            ..AuthoritySpec::default()
        };
        let inputs = resolver.diff_inputs(Path::new(DRAFTER), &authority, &TargetSpec::default());
        assert!(inputs.is_ok(), "{:?}", inputs.err());
        assert_eq!(resolutions.load(Ordering::SeqCst), 0);
    }

    /// Settings that cannot be resolved are the error of whichever input needs the Hub, every
    /// time: never "no Hub" (the drafter in a Hub cache snapshot names its repo).
    #[test]
    fn a_settings_error_is_returned_not_dropped() {
        let cache = tempfile::tempdir().unwrap();
        let snapshot = cache
            .path()
            .join("models--z-lab--Qwen3.6-27B-DFlash/snapshots")
            .join("0123456789abcdef0123456789abcdef01234567");
        std::fs::create_dir_all(&snapshot).unwrap();
        std::fs::copy(
            Path::new(DRAFTER).join("config.json"),
            snapshot.join("config.json"),
        )
        .unwrap();
        let (resolver, _) = counting(&[("HF_ENDPOINT", "ftp://mirror".into())]);
        let e = resolver
            .diff_inputs(&snapshot, &AuthoritySpec::default(), &TargetSpec::default())
            .unwrap_err();
        assert!(e.message.contains("invalid Hub endpoint"), "{}", e.message);
        let e = resolver.target_facts("hf://Qwen/Qwen3.6-27B").unwrap_err();
        assert!(e.message.contains("invalid Hub endpoint"), "{}", e.message);
    }

    #[test]
    fn an_existing_path_is_local() {
        assert_eq!(
            InputRef::parse(".", "x").unwrap(),
            InputRef::Local(".".into())
        );
    }
}
