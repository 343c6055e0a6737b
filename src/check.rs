//! The CI gate: every drafter config under some paths, checked in one run.
//!
//! `check` finds each `config.json` (directories recursed, hidden folders such as `.git`
//! skipped, files taken as given), keeps the ones that are drafters ([`pipeline::is_drafter`],
//! the one rule), runs each through the drafter [`Pipeline`] — its pinned authority
//! (`dflash-check.toml`) or a matching built-in snapshot, its target, lint, its weights — and
//! turns everything into located findings (file, line, column, stable code) for the human, JSON,
//! GitHub and SARIF renderers. One bad drafter never stops the others: a drafter that cannot be
//! read or whose authority cannot be had becomes an error finding of its own.
//!
//! The same walk finds the deployments beside the configs — scripts, Dockerfiles, compose
//! files, Kubernetes manifests — and judges each engine command in them as `launch --file`
//! does ([`deployments`]); a target config that one of them serves with its own MTP head is
//! judged as a drafter, with that deployment's engine, and one that nothing here serves is an
//! info (`mtp-not-served`), not a drafter.

mod deployments;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::analysis::{AuthorityChoice, TargetChoice};
use crate::config::ConfigFile;
use crate::diagnostic::codes::CheckCode;
use crate::diagnostic::Code;
use crate::diagnostic::{Diagnostic, Severity};
use crate::hub::RepoRef;
use crate::input::Resolver;
use crate::pins::{LoadedPins, Pin, PinAuthority, PinTarget};
use crate::pipeline::{
    self, AuthorityPick, DrafterInput, DrafterRun, FoundConfig, IsDrafter, LintWith, Linted,
    Pipeline, Weighed, WeightsFrom,
};
use crate::rules::family::Detection;
use crate::rules::{EngineRelease, LintOptions};
use crate::source::choose;
use crate::suppress;
use crate::{Error, Result};

// The documentation of the codes check raises is the registry's (in the core, beside every
// other code's); re-exported so `check::info` reads the same.
pub use crate::registry::check::info;

/// What `check` needs besides the paths.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    pub pins: Option<LoadedPins>,
    pub require_pin: bool,
    /// The lint options, with the run's engine: `--engine`, else the pin file's `engine`.
    pub lint: LintOptions,
    /// The engine came from `--engine`: it wins over the engine a pin was reviewed for.
    pub engine_from_flag: bool,
    /// The command's inputs resolver, for pinned Hub authorities and targets (its settings
    /// are resolved when a pin first needs the Hub; `None`: no Hub).
    pub hub: Option<Resolver>,
    /// Paths in findings are shown relative to this directory (the repository root).
    pub root: PathBuf,
    /// `--volume MOUNT=DIR`: where a container path a gated Kubernetes manifest names is on
    /// this machine (as in `launch`); without it such a model is reported as unavailable.
    pub volumes: Vec<crate::launch::volume::Volume>,
    /// `--max-file-size`: the largest deployment file read; `None`:
    /// [`crate::launch::read::DEFAULT_MAX_FILE_BYTES`].
    pub file_cap: Option<u64>,
}

impl CheckOptions {
    /// The options of a run: the pin file (`--pins`, else found from the working directory
    /// up), whose directory is the root; the engine from `--engine`, else the pin file's
    /// top-level `engine` (a pin's own engine then applies per drafter).
    pub fn new(
        pins: Option<&Path>,
        engine: Option<EngineRelease>,
        require_pin: bool,
        hub: Resolver,
    ) -> Result<CheckOptions> {
        let pins = crate::pins::find(pins)?;
        let root = pins
            .as_ref()
            .map(|p| p.root())
            .unwrap_or_else(|| PathBuf::from("."));
        let engine_from_flag = engine.is_some();
        let run_engine =
            engine.or_else(|| pins.as_ref().and_then(|p| p.file.engine.only().cloned()));
        Ok(CheckOptions {
            pins,
            require_pin,
            lint: LintOptions::default().with_engine(run_engine),
            engine_from_flag,
            // Resolved when a Hub pin first needs them.
            hub: Some(hub),
            root,
            volumes: Vec::new(),
            file_cap: None,
        })
    }

    /// The largest deployment file read (`--max-file-size`, else the default cap).
    pub fn max_file_bytes(&self) -> u64 {
        self.file_cap
            .unwrap_or(crate::launch::read::DEFAULT_MAX_FILE_BYTES)
    }
}

/// The authority a drafter was compared against.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuthoritySummary {
    pub kind: &'static str,
    pub id: String,
    pub sha: Option<String>,
    /// `pin` (dflash-check.toml) or `builtin-match`.
    pub chosen_by: &'static str,
}

/// One drafter's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DrafterCheck {
    /// The config file, relative to the root when possible, `/`-separated.
    pub file: String,
    pub family: Option<String>,
    pub authority: Option<AuthoritySummary>,
    /// The engine and version this drafter's severities assumed (a pin's own engine may differ
    /// from the run's).
    #[serde(serialize_with = "serialize_assumed")]
    pub assumed: Option<EngineRelease>,
    pub findings: Vec<Diagnostic>,
    /// The weights rules not run for want of a fact (the target's or the draft's vocabulary
    /// size), as `weights` lists them.
    pub weights_skipped: Vec<crate::weights::Skipped>,
    /// A deployment's engine command as judged (`vLLM serving TARGET`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deployment: Option<String>,
    /// What a deployment's check could not verify (a model not read, checks not made): the
    /// run's verdict is then `OK (N unverified)`, never `OK`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unverified: Vec<String>,
}

fn serialize_assumed<S: serde::Serializer>(
    engine: &Option<EngineRelease>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    engine
        .as_ref()
        .map_or(serde_json::Value::Null, |e| e.json())
        .serialize(s)
}

impl DrafterCheck {
    pub fn count(&self, level: Severity) -> usize {
        self.findings.iter().filter(|f| f.severity == level).count()
    }
}

/// The whole run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckReport {
    pub drafters: Vec<DrafterCheck>,
    /// Config files found that are not drafters (target models and the like).
    pub skipped: Vec<String>,
    pub pins: Option<String>,
    /// Findings about the run rather than one drafter: no drafter found, a pin whose drafter
    /// directory is gone.
    pub run_findings: Vec<Diagnostic>,
    /// What the pin file's `[[ignore]]` entries suppressed, and their own findings.
    pub suppressions: suppress::Outcome,
    /// The run's engine (the envelope's `assumed`); each drafter says its own.
    #[serde(skip)]
    pub engine: Option<EngineRelease>,
}

impl CheckReport {
    /// Every finding: the run's, the `[[ignore]]` entries' own, then each drafter's.
    pub fn all_findings(&self) -> Vec<Diagnostic> {
        self.findings().cloned().collect()
    }

    /// [`CheckReport::all_findings`], where they are (the renderers walk them uncopied).
    pub fn findings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.run_findings
            .iter()
            .chain(&self.suppressions.findings)
            .chain(self.drafters.iter().flat_map(|d| &d.findings))
    }

    pub fn count(&self, level: Severity) -> usize {
        self.drafters.iter().map(|d| d.count(level)).sum::<usize>()
            + self
                .run_findings
                .iter()
                .chain(&self.suppressions.findings)
                .filter(|f| f.severity == level)
                .count()
    }

    /// Drafters nothing could be compared with (no pin, no built-in snapshot of their shape),
    /// and deployments whose check could not verify everything (a model not read).
    pub fn unverified(&self) -> usize {
        self.drafters
            .iter()
            .filter(|d| {
                !d.unverified.is_empty()
                    || d.findings
                        .iter()
                        .any(|f| f.code == Code::Check(CheckCode::NoAuthority))
            })
            .count()
    }

    /// How many of [`CheckReport::drafters`] are deployments (engine commands judged as
    /// `launch` judges them).
    pub fn deployments(&self) -> usize {
        self.drafters
            .iter()
            .filter(|d| d.family.as_deref() == Some(DEPLOYMENT))
            .count()
    }

    pub fn fails(&self, deny_warnings: bool) -> bool {
        self.count(Severity::Error) > 0 || (deny_warnings && self.count(Severity::Warning) > 0)
    }
}

pub use crate::pipeline::discover;

/// Checks every drafter and every deployment under `paths`.
pub fn run(paths: &[PathBuf], options: &CheckOptions) -> Result<CheckReport> {
    // A bad [[ignore]] entry stops the run before anything is checked.
    let entries = match &options.pins {
        Some(pins) => suppress::entries(pins)?,
        None => Vec::new(),
    };
    let found = discover(paths, options.max_file_bytes())?;
    let mut report = CheckReport {
        drafters: Vec::new(),
        skipped: Vec::new(),
        pins: options
            .pins
            .as_ref()
            .map(|p| display(&p.path, &options.root)),
        run_findings: Vec::new(),
        suppressions: suppress::Outcome::default(),
        engine: options.lint.assumed(),
    };
    // A directory that could not be read may hold a drafter: a finding, never a silent pass.
    let unreadable = found.unreadable.iter();
    report
        .run_findings
        .extend(unreadable.map(|(dir, e)| unreadable_dir(dir, e, &options.root)));
    let (pins_found, authorities) = config_pins(options, &found.configs)?;
    // The deployments first: which local targets they serve with MTP decides which target
    // configs are drafters. Listed after the configs, as they always were.
    let mut served = deployments::ServedHeads::default();
    let mut judged = Vec::new();
    let mut no_engine = Vec::new();
    for file in &found.deployments {
        let shown = display(file, &options.root);
        match deployments::check_file(file, &shown, options, &mut served) {
            lines if lines.is_empty() => no_engine.push(shown),
            lines => judged.extend(lines),
        }
    }
    for (file, size) in &found.too_large {
        judged.push(deployments::too_large(file, *size, options));
    }
    let mut pipeline = Pipeline::new(options.hub.clone());
    // Pins whose drafter was found: their directories exist, and are not looked at again.
    let mut found_pins = std::collections::HashSet::new();
    let (mut unserved, displayer) = (0, crate::config::Displayer::new(&options.root));
    let mut target_dirs = HashMap::new();
    for (file, pin) in found.configs.iter().zip(pins_found) {
        let shown = displayer.show(&file.path);
        let mut config = ConfigRun {
            pipeline: &mut pipeline,
            found_pins: &mut found_pins,
            served: &served,
            authorities: &authorities,
            target_dirs: &mut target_dirs,
        };
        match check_file(file, pin, &shown, options, &mut config) {
            Judged::Drafter(drafter) => report.drafters.push(*drafter),
            Judged::UnservedHead => {
                unserved += 1;
                report.run_findings.push(deployments::unserved_head(&shown));
            }
            Judged::Skipped => report.skipped.push(shown),
        }
    }
    if let Some(pins) = &options.pins {
        // First among the run's findings, as before the directories were read.
        let stale = stale_pins(pins, &options.root, &found_pins);
        report.run_findings.splice(0..0, stale);
    }
    report.drafters.extend(judged);
    report.skipped.extend(no_engine);
    report
        .skipped
        .extend(found.other_files.iter().map(|f| display(f, &options.root)));
    // A target whose MTP head nothing here serves is said as such (`mtp-not-served`), not as
    // a run without drafters.
    if report.drafters.is_empty() && unserved == 0 {
        report
            .run_findings
            .push(nothing_checked(paths, report.skipped.len()));
    }
    if !entries.is_empty() {
        let checked: Vec<String> = report.drafters.iter().map(|d| d.file.clone()).collect();
        let pin_file = report.pins.clone().unwrap_or_default();
        report.suppressions = suppress::apply(
            &entries,
            report.drafters.iter_mut().map(|d| &mut d.findings),
            &checked,
            &pin_file,
            &crate::pins::today(),
        );
    }
    Ok(report)
}

/// Each config's pin (looked up once) and the pins' authority files, checked
/// ([`pinned_authority_files`]).
fn config_pins<'p>(
    options: &'p CheckOptions,
    configs: &[FoundConfig],
) -> Result<(Vec<FoundPin<'p>>, HashMap<String, PathBuf>)> {
    let finder = options.pins.as_ref().map(LoadedPins::finder);
    let found: Vec<FoundPin> = configs
        .iter()
        .map(|file| finder.as_ref().and_then(|f| f.find(&file.path)))
        .collect();
    let authorities = pinned_authority_files(options, &found)?;
    Ok((found, authorities))
}

/// The authority file each found pin names (`against`), by pin key, checked before
/// anything is: inside the pin file's repository with links resolved, and a model config
/// ([`crate::pins::repo`]). One that is not stops the run (exit 2), naming the file and
/// showing none of its values: a pin file from a pull request could otherwise print any file
/// on the runner as `only-authority` lines (issue 44).
fn pinned_authority_files(
    options: &CheckOptions,
    pins_found: &[FoundPin],
) -> Result<HashMap<String, PathBuf>> {
    let mut out = HashMap::new();
    let Some(pins) = &options.pins else {
        return Ok(out);
    };
    // Checked once per file named: thousands of pins naming one authority resolved, read and
    // parsed it for each (5 % of `check` at 1,000 drafters, issue 44). The first pin to
    // name a file is the one a refusal names, as when each was checked.
    let mut checked: HashMap<&str, PathBuf> = HashMap::new();
    for found in pins_found.iter().copied() {
        if let Some((
            key,
            Pin {
                authority: PinAuthority::File(against),
                ..
            },
        )) = found
        {
            if !out.contains_key(key) {
                let real = match checked.get(against.as_str()) {
                    Some(real) => real.clone(),
                    None => {
                        let real = crate::pins::repo::authority_file(&pins.path, key, against)?;
                        checked.insert(against, real.clone());
                        real
                    }
                };
                out.insert(key.clone(), real);
            }
        }
    }
    Ok(out)
}

/// What the config walk shares across configs: the one pipeline, the pins found, the targets
/// the deployments serve with MTP.
struct ConfigRun<'a> {
    pipeline: &'a mut Pipeline,
    found_pins: &'a mut std::collections::HashSet<String>,
    served: &'a deployments::ServedHeads,
    /// The pins' authority files, checked ([`pinned_authority_files`]).
    authorities: &'a HashMap<String, PathBuf>,
    /// Whether each pinned target folder seen so far is a directory: asked once a run, not
    /// once a drafter (a `statx` of its whole path for every drafter pinned to it, issue 44).
    target_dirs: &'a mut HashMap<PathBuf, bool>,
}

/// What became of one `config.json`.
enum Judged {
    Drafter(Box<DrafterCheck>),
    /// A target's MTP head that no deployment here serves (`mtp-not-served`).
    UnservedHead,
    /// No drafter ([`pipeline::is_drafter`]): listed as skipped.
    Skipped,
}

/// What is known of a drafter's config before its checks run: its pin and the pin's checked
/// authority file, the release a deployment here serves it with, and whether the walk saw
/// weights beside it ([`FoundConfig`]).
struct Known<'a> {
    pin: Option<&'a Pin>,
    authority_file: Option<&'a PathBuf>,
    served: Option<&'a EngineRelease>,
    no_weights_listed: bool,
    target_dirs: &'a mut HashMap<PathBuf, bool>,
}

/// A config's pin in the pin file, by its key.
type FoundPin<'p> = Option<(&'p String, &'p Pin)>;

/// One `config.json` (`found`: its pin): its result as a drafter, or why it is none
/// ([`pipeline::is_drafter`]).
fn check_file(
    file: &FoundConfig,
    found: FoundPin,
    shown: &str,
    options: &CheckOptions,
    run: &mut ConfigRun,
) -> Judged {
    let local = match file.load() {
        Ok(local) => local,
        Err(e) => {
            return Judged::Drafter(Box::new(DrafterCheck {
                findings: vec![whole_file(CheckCode::ConfigUnreadable, &e).file(shown)],
                file: shown.to_string(),
                family: None,
                authority: None,
                assumed: options.lint.assumed(),
                weights_skipped: Vec::new(),
                deployment: None,
                unverified: Vec::new(),
            }))
        }
    };
    if let Some((key, _)) = found {
        run.found_pins.insert(key.clone());
    }
    let pinned = found.map(|(_, pin)| pin.clone());
    let authority_file = found.and_then(|(key, _)| run.authorities.get(key));
    let served = run.served.release(&local.path);
    let (family, detected) = match pipeline::is_drafter(
        &local,
        options.lint.family,
        pinned.is_some(),
        served.is_some(),
    ) {
        IsDrafter::Yes(family, detected) => (family, detected),
        IsDrafter::UnservedHead => return Judged::UnservedHead,
        IsDrafter::No => return Judged::Skipped,
    };
    let known = Known {
        pin: pinned.as_ref(),
        authority_file,
        served,
        no_weights_listed: file.no_weights_listed,
        target_dirs: run.target_dirs,
    };
    let mut result = check_one(&local, detected, known, options, run.pipeline);
    let config_file = local.path_text();
    for f in &mut result.findings {
        // Findings in the config take its shown path; those in other files (the weights'
        // shards) are shown relative to the root too.
        f.file = Some(match f.file.as_deref() {
            Some(other) if other != config_file => display(Path::new(other), &options.root),
            _ => shown.to_string(),
        });
    }
    result.file = shown.to_string();
    result.family = family.map(|f| f.as_str().to_string());
    Judged::Drafter(Box::new(result))
}

/// The `config-unreadable` finding of a directory the walk could not list.
fn unreadable_dir(dir: &Path, e: &std::io::Error, root: &Path) -> Diagnostic {
    let shown = display(dir, root);
    check_diagnostic(
        CheckCode::ConfigUnreadable,
        "",
        format!(
            "the directory `{shown}` could not be read ({e}): a drafter in it would not be checked; \
             give the CI user read access, or leave it out of the PATHs"
        ),
    )
    .file(shown)
}

/// The `family` of a [`DrafterCheck`] that is a deployment: an engine command of a script,
/// Dockerfile, compose file or Kubernetes manifest (JSON: `"family": "deployment"`).
pub const DEPLOYMENT: &str = "deployment";

/// Pins whose drafter directory no longer exists, located at their table in the pin file.
/// `found`: pins whose drafter the run read (one `statx` a pin fewer, issue 44).
fn stale_pins(
    pins: &LoadedPins,
    root: &Path,
    found: &std::collections::HashSet<String>,
) -> Vec<Diagnostic> {
    let pin_root = pins.root();
    let text = &pins.text;
    pins.file
        .drafters
        .keys()
        .filter(|key| !found.contains(*key) && !pin_root.join(key.as_str()).exists())
        .map(|key| {
            let line = text
                .lines()
                .position(|l| l.contains(&format!("\"{key}\"")) || l.contains(&format!("[drafters.{key}]")))
                .map_or(1, |i| i + 1);
            check_diagnostic(
                CheckCode::PinPathMissing,
                "",
                format!("the pin `{key}` names a drafter directory that does not exist; move the pin with the drafter or remove it"),
            )
            .file(display(&pins.path, root))
            .span(line, 1)
        })
        .collect()
}

/// The `no-drafters` warning of a run that found nothing to check.
pub fn nothing_checked(paths: &[PathBuf], skipped: usize) -> Diagnostic {
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    check_diagnostic(
        CheckCode::NoDrafters,
        "",
        format!(
            "no drafter config under {} ({skipped} config.json file(s) that are not drafters skipped)",
            shown.join(", ")
        ),
    )
}

/// A finding about the whole file, placed where the error says (a JSON syntax error names its
/// line and column), else at the top.
fn whole_file(code: CheckCode, e: &Error) -> Diagnostic {
    let (line, column) = e.line.zip(e.column).unwrap_or((1, 1));
    check_diagnostic(code, "", e.to_string()).span(line, column)
}

/// A diagnostic of one of `check`'s own codes.
fn check_diagnostic(code: CheckCode, path: &str, message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(code, info(code), path, message)
}

/// One loaded drafter through the pipeline (its pin's authority and target, or the built-in
/// snapshot the one rule picks), turned into `check`'s findings.
fn check_one(
    local: &ConfigFile,
    detected: Option<Detection>,
    known: Known,
    options: &CheckOptions,
    pipeline: &mut Pipeline,
) -> DrafterCheck {
    let Known {
        pin,
        authority_file,
        served,
        no_weights_listed,
        target_dirs,
    } = known;
    let mut findings = Vec::new();
    let pin_root = options
        .pins
        .as_ref()
        .map(LoadedPins::root)
        .unwrap_or_else(|| PathBuf::from("."));
    let (authority, chosen_by) = match pin {
        Some(pin) => (
            AuthorityPick::Named(pin_choice(pin, authority_file, options)),
            "pin",
        ),
        None => {
            if options.require_pin {
                findings.push(
                    check_diagnostic(
                        CheckCode::PinMissing,
                        "",
                        "no pin for this drafter in dflash-check.toml (--require-pin); add one with `dflash-check pin`",
                    )
                    .span(1, 1),
                );
            }
            (AuthorityPick::Choose(None), "builtin-match")
        }
    };
    let pinned_target = pin.and_then(|p| p.target.as_ref());
    // A pin reviewed for an engine is linted for it, and a target served with its MTP head
    // for the release of the deployment that serves it, unless `--engine` says otherwise.
    let own_engine = pin
        .and_then(|p| p.engine.clone())
        .or_else(|| served.cloned());
    let mut lint_options = match own_engine {
        Some(spec) if !options.engine_from_flag => options.lint.with_engine(Some(spec)),
        _ => options.lint.clone(),
    };
    // The family `check_file` detected to tell a drafter: lint does not detect it again.
    lint_options.detected = detected;
    let mut run = pipeline.run(DrafterInput {
        config: local,
        authority,
        fresh_authority: false,
        // A pinned target that could not be chosen (Hub settings) fails like one that could
        // not be read.
        target: match pinned_target {
            Some(t) => target_choice(t, &pin_root, options, target_dirs),
            None => Ok(TargetChoice::default()),
        },
        shared_target: pinned_target
            .map(|t| format!("{}@{}", t.target, t.revision.as_deref().unwrap_or_default())),
        builtin_fallback: false,
        lint: LintWith::Options(Box::new(lint_options.clone())),
        engine: lint_options.engine.clone(),
        weights: WeightsFrom::Local {
            pinned_hub: match pin.map(|p| &p.authority) {
                Some(PinAuthority::Hub { repo, revision }) => {
                    Some((repo.clone(), revision.clone()))
                }
                _ => None,
            },
            none_listed: no_weights_listed,
        },
    });
    findings.extend(run_findings(local, pin, &mut run));
    if let Some(pin) = pin {
        findings.extend(digest_findings(local, pin, &pin_root));
    }
    findings.sort_by_key(|f| (f.severity, f.span));
    DrafterCheck {
        file: String::new(),
        family: None,
        authority: run.authority.as_ref().map(|a| AuthoritySummary {
            kind: a.kind.as_str(),
            id: a.id.clone(),
            sha: a.sha.clone(),
            chosen_by,
        }),
        assumed: lint_options.assumed(),
        weights_skipped: run.weights_skipped().to_vec(),
        findings,
        deployment: None,
        unverified: Vec::new(),
    }
}

/// A drafter's run as `check`'s findings: what could not be had, the comparison (or that
/// there was nothing to compare with), lint where the comparison says nothing new, weights.
/// Lint's and the weights' findings are moved out of the run, not copied (each is a message,
/// a path and a file name: copies that were freed with the run a drafter later).
fn run_findings(local: &ConfigFile, pin: Option<&Pin>, run: &mut DrafterRun) -> Vec<Diagnostic> {
    let mut findings = Vec::new();
    let unavailable = [&run.authority_error, &run.target_error];
    for e in unavailable.into_iter().flatten() {
        findings.push(whole_file(CheckCode::AuthorityUnavailable, e));
    }
    findings.extend(run.diff_findings());
    if run.authority.is_none() && pin.is_none() && run.ambiguity.is_none() {
        findings.push(
            check_diagnostic(
                CheckCode::NoAuthority,
                "",
                format!(
                    "unverified: no pin, and no built-in snapshot has its shape ({}); checked by lint rules only \
                     (pin it with `dflash-check pin`)",
                    choose::fingerprint_text(local.root())
                ),
            )
            .span(1, 1),
        );
    }
    match &mut run.lint {
        Linted::Report(lint) => {
            let lint = pipeline::uncovered(std::mem::take(&mut lint.findings), &findings);
            findings.extend(lint);
        }
        Linted::Failed(e) => findings.push(whole_file(CheckCode::ConfigUnreadable, e)),
        Linted::NotRun | Linted::Findings(_) => {}
    }
    match &mut run.weights {
        Weighed::Checked(c) => findings.extend(std::mem::take(&mut c.diagnostics)),
        Weighed::Unreadable(e) => findings.push(whole_file(CheckCode::WeightsUnreadable, e)),
        // Weights that could not be read are the run's `not_checked`, not findings.
        Weighed::NotRun | Weighed::NoWeights | Weighed::NotRead(_) => {}
    }
    findings
}

/// The digests the pin recorded (target chat template, drafter `d2t`), recomputed from the
/// files as they are now: a difference is an error, files that cannot be read a warning.
fn digest_findings(local: &ConfigFile, pin: &Pin, root: &Path) -> Vec<Diagnostic> {
    use crate::pins::digest;
    let mut out = Vec::new();
    let unverified = |what: &str, why: String| {
        check_diagnostic(
            CheckCode::PinDigestUnverified,
            "",
            format!("the pinned {what} digest could not be verified: {why}"),
        )
        .span(1, 1)
    };
    if let Some(recorded) = &pin.chat_template {
        let target = pin.target.as_ref().map(|t| root.join(&t.target));
        match target.filter(|d| d.is_dir()) {
            None => out.push(unverified(
                "chat template",
                format!(
                    "the target directory `{}` is not there; run check where the target's files are",
                    pin.target.as_ref().map_or("(none)", |t| t.target.as_str())
                ),
            )),
            Some(dir) => match digest::chat_template(&dir) {
                Err(e) => out.push(unverified("chat template", e.to_string())),
                Ok(now) if now.as_ref().map(|c| &c.sha256) == Some(recorded) => {}
                Ok(now) => out.push(
                    check_diagnostic(
                        CheckCode::PinChatTemplateChanged,
                        "",
                        format!(
                            "the target's chat template changed since the drafter was pinned (sha256 {} now, {} pinned; \
                             target `{}`): a drafter served behind another template than it was distilled with can accept \
                             almost nothing (Luce-Org/lucebox PR 293); measure acceptance, then re-pin with `dflash-check pin`",
                            now.as_ref().map_or("none: no chat template", |c| c.sha256.as_str()),
                            recorded,
                            pin.target.as_ref().map_or("", |t| t.target.as_str())
                        ),
                    )
                    .span(1, 1),
                ),
            },
        }
    }
    if let Some(recorded) = &pin.d2t {
        match digest::d2t(&local.path) {
            Err(e) => out.push(unverified("d2t", e.to_string())),
            Ok(digest::D2t::NoWeights) => out.push(unverified(
                "d2t",
                "no model.safetensors or index beside the config (weights not checked out?)".into(),
            )),
            Ok(digest::D2t::Found(c)) if &c.sha256 == recorded => {}
            Ok(now) => {
                let (sha, from) = match &now {
                    digest::D2t::Found(c) => (c.sha256.as_str(), c.from.as_str()),
                    _ => ("none", "no `d2t` tensor in the weights"),
                };
                out.push(
                    check_diagnostic(
                        CheckCode::PinD2tChanged,
                        "",
                        format!(
                            "the drafter's d2t changed since it was pinned (sha256 {sha} now, {recorded} pinned; {from}): \
                             every lm_head row now maps to another target token, as when fine-tuning regenerates the map \
                             (SpecForge PR 534); restore the pinned d2t, or re-pin after measuring acceptance"
                        ),
                    )
                    .span(1, 1),
                );
            }
        }
    }
    out
}

/// The authority a pin names; `file` is its `against` file as checked before the run.
fn pin_choice(
    pin: &Pin,
    file: Option<&PathBuf>,
    options: &CheckOptions,
) -> Result<AuthorityChoice> {
    match &pin.authority {
        PinAuthority::Snapshot(snapshot) => Ok(AuthorityChoice::Snapshot(snapshot.clone())),
        PinAuthority::File(against) => file.cloned().map(AuthorityChoice::File).ok_or_else(|| {
            Error::new(format!(
                "internal error: the pin's authority `{against}` was not checked before the run"
            ))
        }),
        PinAuthority::Hub { repo, revision } => {
            let settings = options
                .hub
                .as_ref()
                .ok_or_else(|| Error::new("Hub settings are needed for a Hub pin"))?
                .settings()?
                .clone();
            let repo: RepoRef = format!("{repo}@{revision}").parse().map_err(Error::from)?;
            Ok(AuthorityChoice::Hub {
                repo,
                settings: Box::new(settings),
                inferred: Some("pinned in dflash-check.toml".into()),
            })
        }
    }
}

fn target_choice(
    pinned: &PinTarget,
    root: &Path,
    options: &CheckOptions,
    target_dirs: &mut HashMap<PathBuf, bool>,
) -> Result<TargetChoice> {
    let (target, revision) = (pinned.target.as_str(), pinned.revision.as_deref());
    let dir = root.join(target);
    let is_dir = match target_dirs.get(&dir) {
        Some(known) => *known,
        None => *target_dirs.entry(dir.clone()).or_insert(dir.is_dir()),
    };
    if is_dir {
        return Ok(TargetChoice {
            target_dir: Some(dir),
            ..TargetChoice::default()
        });
    }
    let spec = match revision {
        Some(rev) => format!("{target}@{rev}"),
        None => target.to_string(),
    };
    // Not a directory beside the pin file: a Hub repo, read with the run's settings (their
    // error is the target's). A pinned name that is not a repo id is left to the built-in
    // tables, as before.
    let (Ok(repo), Some(inputs)) = (spec.parse::<RepoRef>(), options.hub.as_ref()) else {
        return Ok(TargetChoice::default());
    };
    Ok(TargetChoice {
        target_hub: Some(repo),
        hub: Some(Box::new(inputs.settings()?.clone())),
        ..TargetChoice::default()
    })
}

/// `check --prune-ignores`: removes the stale entries this run reported from the pin file
/// (under its lock, located in the text read there: [`suppress::prune_entries`]), and their
/// findings from the report. An entry changed on disk since the run read it stays, and so does
/// its finding. Returns how many entries were removed, and where the file was written.
pub fn prune_ignores(
    report: &mut CheckReport,
    pins: &LoadedPins,
) -> Result<(usize, crate::pins::repo::WriteTarget)> {
    let outcome = &mut report.suppressions;
    let (removed, target) = suppress::prune_entries(pins, &outcome.stale)?;
    // `stale` and `findings` are parallel: one finding per stale entry. A set, not a scan of
    // `removed` per entry (quadratic in thousands of stale entries).
    let removed_set: std::collections::HashSet<usize> = removed.iter().copied().collect();
    let keep: Vec<bool> = outcome
        .stale
        .iter()
        .map(|i| !removed_set.contains(i))
        .collect();
    let mut kept = keep.iter();
    outcome.findings.retain(|_| *kept.next().unwrap_or(&true));
    outcome.stale.retain(|i| !removed_set.contains(i));
    Ok((removed.len(), target))
}

/// What `check` does to the pin file's `[[ignore]]` entries after the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IgnoreEdit {
    #[default]
    None,
    /// `--baseline`: an entry appended for every error and warning found now.
    Baseline,
    /// `--prune-ignores`: the expired and unused entries this run reported, removed.
    Prune,
}

/// A run of the gate, and what it wrote to the pin file.
#[derive(Debug, Clone)]
pub struct Gate {
    pub report: CheckReport,
    /// What was written to the pin file, in one line for the user.
    pub edited: Option<String>,
    /// The findings were recorded as `[[ignore]]` entries (`--baseline`): the run passes.
    pub baselined: bool,
}

/// `check`: the run, then the pin file's `[[ignore]]` entries edited as asked.
pub fn gate(paths: &[PathBuf], options: &CheckOptions, edit: IgnoreEdit) -> Result<Gate> {
    let mut report = run(paths, options)?;
    let mut edited = None;
    match (edit, &options.pins) {
        (IgnoreEdit::Baseline, pins) => {
            let (target, count) = suppress::append_baseline(&report.all_findings(), pins.as_ref())?;
            edited = Some(format!(
                "{count} [[ignore]] entr{} appended to {} with the reason `{}`: review them like code; `check --prune-ignores` removes each one once its finding is fixed",
                if count == 1 { "y" } else { "ies" },
                target.through(),
                suppress::baseline_reason(&crate::pins::today())
            ));
        }
        (IgnoreEdit::Prune, Some(pins)) => {
            let (removed, target) = prune_ignores(&mut report, pins)?;
            edited = (removed > 0).then(|| {
                format!(
                    "removed {removed} stale [[ignore]] entr{} from {}",
                    if removed == 1 { "y" } else { "ies" },
                    target.through()
                )
            });
        }
        (IgnoreEdit::Prune | IgnoreEdit::None, _) => {}
    }
    Ok(Gate {
        report,
        edited,
        baselined: edit == IgnoreEdit::Baseline,
    })
}

pub use crate::config::display;

#[cfg(test)]
mod tests {
    use super::*;

    /// A JSON syntax error's position travels in the typed error, so the annotation lands on
    /// the broken line without reading it back out of the message.
    #[test]
    fn syntax_errors_point_at_their_line() {
        let err =
            crate::config::parse(Path::new("x/config.json"), b"{\n  \"a\": 1,\n}").unwrap_err();
        let d = whole_file(CheckCode::ConfigUnreadable, &err);
        assert_eq!(d.span.map(|s| (s.line, s.column)), Some((3, 1)));
    }
}
