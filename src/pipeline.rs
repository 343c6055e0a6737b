//! One drafter through every stage, once: its authority, its target, the comparison, lint and
//! its weights. `check`, `doctor`, `lint` and `launch` each run a drafter through
//! [`Pipeline::run`] and differ only in what they report of the [`DrafterRun`]: which stages
//! they ask for ([`DrafterInput`]) and how they turn each outcome into findings.
//!
//! Why one pipeline: each command used to put the stages together itself, and each did it a
//! little differently — the target read up to three times in one `doctor` run (one of them with
//! its error dropped), the weights rules skipped for want of a fact forgotten everywhere but
//! `weights`. Here each input is read once, through the command's [`Resolver`] (which counts the
//! targets it resolves), every stage's outcome is kept, errors included, and every rule skipped
//! is returned for the command to list.
//!
//! [`is_drafter`] is the one rule of what `check` treats as a drafter, and [`discover`] the
//! walk that finds the configs it is asked of.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::analysis::{self, AuthorityChoice, DiffReport, TargetChoice, TargetContext};
use crate::config::{self, ConfigFile};
use crate::diagnostic::codes::DiffCode;
use crate::diagnostic::Diagnostic;
use crate::hub::RepoRef;
use crate::input::Resolver;
use crate::rules::{self, family, Family, LintOptions, LintReport};
use crate::source::choose::{self, TargetIdentity};
use crate::source::Authority;
use crate::weights::{self, WeightsHeaders};
use crate::{Error, Result};
use dflash_check_core::launch::files;

mod walk;
use walk::walk;

/// How the drafter's authority is found.
#[derive(Debug, Clone)]
pub enum AuthorityPick {
    /// Not compared (`lint` has no authority; a drafter served from the Hub as published is
    /// its own).
    Skip,
    /// Named by the user or a pin; the error when the choice itself could not be made.
    Named(Result<AuthorityChoice>),
    /// Chosen by the one rule, [`choose::choose`], narrowed by the target's identity.
    Choose(Option<TargetIdentity>),
}

/// How the drafter is linted.
pub enum LintWith<'a> {
    Skip,
    Options(Box<LintOptions>),
    /// The command's own call of lint (launch: with the engine's flags, the codes its own rules
    /// supersede dropped).
    Custom(&'a dyn Fn(&ConfigFile, &TargetContext) -> Result<Vec<Diagnostic>>),
}

/// Where the drafter's weights are read.
#[derive(Debug, Clone)]
pub enum WeightsFrom {
    Skip,
    /// The safetensors beside the local config; with none there, a pinned Hub repo's at its
    /// revision (`ORG/NAME`, revision), read when the Hub answers.
    Local {
        pinned_hub: Option<(String, String)>,
        /// The directory's listing, when a walk read it, showed neither `model.safetensors`
        /// nor its index: none is looked for (two failed `statx` a drafter in `check`, issue
        /// 44). False when the directory was not listed: they are looked for.
        none_listed: bool,
    },
    /// Headers the caller read with the config (a Hub drafter for `lint`); `None`: none.
    Given(Option<Box<WeightsHeaders>>),
    /// A model the deployment loads from the Hub (`ORG/NAME` at the commit it resolved to):
    /// its headers by range requests, as `weights hf://` reads them. When the Hub cannot
    /// answer (offline, gated, down) the weights are not checked, and the run says why.
    Hub {
        repo: String,
        sha: String,
    },
}

/// What to run on one drafter.
pub struct DrafterInput<'a> {
    pub config: &'a ConfigFile,
    pub authority: AuthorityPick,
    /// Read a chosen built-in snapshot's repo fresh from the Hub when it answers (`doctor`:
    /// the served repo as it is now), else compare with the snapshot and say why.
    pub fresh_authority: bool,
    /// The target: a directory, a Hub repo, built-in facts; its error when it could not be
    /// chosen (a pinned Hub target and settings that cannot be resolved).
    pub target: Result<TargetChoice>,
    /// The target's name when drafters of one run share it (a pinned target): it is read once
    /// per set of token ids, not once per drafter (a real tokenizer.json is 11–30 MB).
    pub shared_target: Option<String>,
    /// A target whose files cannot be read falls back to built-in facts (`launch`) instead of
    /// none.
    pub builtin_fallback: bool,
    pub lint: LintWith<'a>,
    pub weights: WeightsFrom,
    /// The engine release that will load the weights (a launch line's, `--engine`): the
    /// weights rules where engines load a checkpoint differently judge it.
    pub engine: Option<crate::engine::EngineRelease>,
}

/// What lint said.
#[derive(Debug, Clone)]
pub enum Linted {
    NotRun,
    Report(Box<LintReport>),
    /// Findings of a command's own lint call.
    Findings(Vec<Diagnostic>),
    /// Lint could not run (the config is no family it knows).
    Failed(Error),
}

/// What the weights check said.
#[derive(Debug, Clone)]
pub enum Weighed {
    NotRun,
    /// No safetensors beside the config (and none pinned that the Hub gave).
    NoWeights,
    Checked(weights::Checked),
    /// Headers that could not be read (truncated, malformed, hostile).
    Unreadable(Error),
    /// Headers on the Hub that could not be had (offline, gated, down): why.
    NotRead(String),
}

/// One drafter, through every stage asked for.
#[derive(Debug, Clone)]
pub struct DrafterRun {
    /// The drafter's config file.
    pub path: PathBuf,
    /// The authority compared with (shared with its comparison's report).
    pub authority: Option<std::sync::Arc<Authority>>,
    /// A named authority that could not be had.
    pub authority_error: Option<Error>,
    /// Several published configs of the drafter's shape, and nothing to pick one.
    pub ambiguity: Option<choose::Ambiguity>,
    /// No published config of the drafter's shape (or none for its target).
    pub no_match: Option<Error>,
    pub diff: Option<DiffReport>,
    /// The target's facts and tokens (none when they could not be read).
    pub target: TargetContext,
    pub target_error: Option<Error>,
    pub lint: Linted,
    pub weights: Weighed,
    /// What could not be checked, and why (`diff: …`, `weights: …`).
    pub not_checked: Vec<String>,
}

impl DrafterRun {
    /// The weights rules skipped for want of a fact.
    pub fn weights_skipped(&self) -> &[weights::Skipped] {
        match &self.weights {
            Weighed::Checked(c) => &c.skipped,
            _ => &[],
        }
    }

    /// What the drafter was compared with, in one line (`none: …` when nothing picks one).
    pub fn authority_line(&self) -> Option<String> {
        match (&self.authority, &self.ambiguity) {
            (Some(a), _) => Some(a.describe()),
            (None, Some(ambiguity)) => Some(format!("none: {}", ambiguity.describe())),
            (None, None) => None,
        }
    }

    /// The comparison's findings (`authority-ambiguous` when nothing picks one authority), with
    /// `diff`'s codes, as every command reports them.
    pub fn diff_findings(&self) -> Vec<Diagnostic> {
        match (&self.diff, &self.ambiguity) {
            (Some(report), _) => diff_findings(report),
            (None, Some(ambiguity)) => vec![ambiguous_finding(ambiguity)],
            (None, None) => Vec::new(),
        }
    }
}

/// Runs drafters through the stages with one command's resolver; targets shared by drafters
/// are kept for the run.
pub struct Pipeline {
    resolver: Option<Resolver>,
    shared: HashMap<(String, Vec<u64>), TargetContext>,
    /// Authority files named by pins, read once per run (a `check` of thousands of drafters
    /// pinned to one file read and parsed it for each, issue 44).
    files: HashMap<PathBuf, Result<std::sync::Arc<Authority>>>,
}

impl Pipeline {
    /// `resolver`: the command's inputs resolver (`None`: local files only).
    pub fn new(resolver: Option<Resolver>) -> Pipeline {
        Pipeline {
            resolver,
            shared: HashMap::new(),
            files: HashMap::new(),
        }
    }

    /// Every stage asked for, each input read once; nothing here fails: each stage's error is
    /// kept in the run for the command to report.
    pub fn run(&mut self, input: DrafterInput<'_>) -> DrafterRun {
        let local = input.config;
        let mut run = DrafterRun {
            path: local.path.clone(),
            authority: None,
            authority_error: None,
            ambiguity: None,
            no_match: None,
            diff: None,
            target: TargetContext::none(),
            target_error: None,
            lint: Linted::NotRun,
            weights: Weighed::NotRun,
            not_checked: Vec::new(),
        };
        let mut target_choice = input.target;
        if let (Ok(choice), LintWith::Options(options)) = (&mut target_choice, &input.lint) {
            // A draft model's vocabulary is compared with the target's: read that with the
            // target's token table, not again.
            choice.vocabulary |= options.family.is_some_and(|f| f.is_draft_model());
        }
        let vocab_dir = target_choice
            .as_ref()
            .ok()
            .and_then(|c| c.tokenizer_dir.clone().or_else(|| c.target_dir.clone()));
        self.authority(&input.authority, input.fresh_authority, local, &mut run);
        if let (Some(a), Ok(choice)) = (&run.authority, &mut target_choice) {
            // A fresh Hub authority's model card may name the target.
            if a.kind == crate::source::AuthorityKind::Hub && input.fresh_authority {
                if let Some(resolver) = &self.resolver {
                    if let Ok(settings) = resolver.settings() {
                        choice.hub.get_or_insert_with(|| Box::new(settings.clone()));
                    }
                }
            }
        }
        let target = target_choice.and_then(|choice| {
            self.target(
                &choice,
                local,
                run.authority.as_deref(),
                input.shared_target.as_deref(),
            )
        });
        run.target = match target {
            Ok(t) => t,
            Err(e) => {
                let fallback = input
                    .builtin_fallback
                    .then(|| {
                        self.target(&TargetChoice::default(), local, None, None)
                            .ok()
                    })
                    .flatten();
                run.target_error = Some(e);
                fallback.unwrap_or_else(TargetContext::none)
            }
        };
        if let Some(a) = &run.authority {
            run.diff = Some(DiffReport::build(
                local.clone(),
                a.clone(),
                run.target.clone(),
            ));
        }
        run.lint = match input.lint {
            LintWith::Skip => Linted::NotRun,
            LintWith::Options(options) => {
                // Borrowed unless the vocabulary comparison adds to it: a copy of the target
                // for every drafter's lint was six allocations a drafter in `check` (issue 44).
                let target = match options.family.filter(|f| f.is_draft_model()) {
                    Some(_) => crate::draft::with_vocab(local, vocab_dir.as_deref(), &run.target)
                        .map(std::borrow::Cow::Owned),
                    None => Ok(std::borrow::Cow::Borrowed(&run.target)),
                };
                match target.and_then(|t| rules::lint(local, &options, &t)) {
                    Ok(r) => Linted::Report(Box::new(r)),
                    Err(e) => Linted::Failed(e),
                }
            }
            LintWith::Custom(lint) => match lint(local, &run.target) {
                Ok(found) => Linted::Findings(found),
                Err(e) => Linted::Failed(e),
            },
        };
        run.weights = self.weights(local, input.weights, &run.target, input.engine);
        if let Some(line) = run.weights.not_checked_line() {
            run.not_checked.push(line);
        }
        run
    }

    /// The authority stage: a named choice read, or the one rule's choice (fresh from the Hub
    /// when asked).
    fn authority(
        &mut self,
        pick: &AuthorityPick,
        fresh: bool,
        local: &ConfigFile,
        run: &mut DrafterRun,
    ) {
        match pick {
            AuthorityPick::Skip => {}
            AuthorityPick::Named(Err(e)) => run.authority_error = Some(e.clone()),
            AuthorityPick::Named(Ok(AuthorityChoice::File(path))) => {
                let read = self
                    .files
                    .entry(path.clone())
                    .or_insert_with(|| crate::source::file::load(path).map(Into::into));
                match read {
                    Ok(a) => run.authority = Some(a.clone()),
                    Err(e) => run.authority_error = Some(e.clone()),
                }
            }
            AuthorityPick::Named(Ok(choice)) => match analysis::resolve_authority(local, choice) {
                Ok(a) => run.authority = Some(a.into()),
                Err(e) => run.authority_error = Some(e),
            },
            AuthorityPick::Choose(identity) => match choose::choose(local, identity.as_ref()) {
                choose::Choice::One(a) if fresh => {
                    run.authority = Some(self.fresh(*a, &mut run.not_checked).into());
                }
                choose::Choice::One(a) => run.authority = Some((*a).into()),
                choose::Choice::Ambiguous(ambiguity) => run.ambiguity = Some(ambiguity),
                choose::Choice::NoMatch(e) => {
                    run.not_checked.push(format!("diff: {}", e.message));
                    run.no_match = Some(e);
                }
            },
        }
    }

    /// The served repo at its current commit when the Hub answers; else the snapshot itself,
    /// and a line saying why.
    fn fresh(&self, chosen: Authority, not_checked: &mut Vec<String>) -> Authority {
        let Some(resolver) = &self.resolver else {
            return chosen;
        };
        let Ok(repo) = chosen.id.parse::<RepoRef>() else {
            return chosen;
        };
        match resolver.hub_authority(&repo, chosen.matched_by.clone()) {
            Ok(a) => a,
            // Offline, gated, unreachable, or settings that cannot be resolved: say so, the
            // conclusion first (doctor's human report cuts a line at 150 characters, and the
            // reason, a Hub error, is long).
            Err(e) => {
                not_checked.push(format!(
                    "diff: compared with the built-in snapshot, not the live Hub, which was not read ({})",
                    e.message
                ));
                chosen
            }
        }
    }

    /// The target stage, through the resolver (counted); a shared target once per set of
    /// token ids.
    fn target(
        &mut self,
        choice: &TargetChoice,
        local: &ConfigFile,
        authority: Option<&Authority>,
        shared: Option<&str>,
    ) -> Result<TargetContext> {
        let mut configs = vec![local];
        if let Some(a) = authority {
            configs.push(&a.config);
        }
        let key = shared.map(|name| {
            // The ids sorted and distinct, as a set would give them; no path built per field.
            let mut wanted = Vec::new();
            for c in &configs {
                crate::diff::token_field_ids(c.root(), &mut wanted);
            }
            wanted.sort_unstable();
            wanted.dedup();
            (name.to_string(), wanted)
        });
        if let Some(t) = key.as_ref().and_then(|k| self.shared.get(k)) {
            return Ok(t.clone());
        }
        let resolved = match &self.resolver {
            Some(r) => r.target(choice, &configs, authority),
            None => analysis::resolve_target(choice, &configs, authority),
        }?;
        if let Some(k) = key {
            self.shared.insert(k, resolved.clone());
        }
        Ok(resolved)
    }

    /// The weights stage: every weights rule over the headers, its skipped rules kept.
    fn weights(
        &self,
        local: &ConfigFile,
        from: WeightsFrom,
        target: &TargetContext,
        engine: Option<crate::engine::EngineRelease>,
    ) -> Weighed {
        let headers = match from {
            WeightsFrom::Skip => return Weighed::NotRun,
            WeightsFrom::Given(h) => Ok(h.map(|h| *h)),
            WeightsFrom::Local {
                pinned_hub,
                none_listed,
            } => match none_listed {
                true => self.pinned_weights(pinned_hub),
                false => match weights::read_beside(&local.path) {
                    Ok(None) => self.pinned_weights(pinned_hub),
                    other => other,
                },
            },
            WeightsFrom::Hub { repo, sha } => match self.hub_weights(&repo, &sha) {
                Err(e) if matches!(e.kind, crate::error::ErrorKind::Hub(_)) => {
                    return Weighed::NotRead(format!("`{repo}` at {sha}: {}", e.message));
                }
                other => other,
            },
        };
        match headers {
            Ok(Some(h)) => Weighed::Checked(weights::run_for(
                local,
                &h,
                target.facts.as_deref(),
                engine,
                weights::Purpose::Deployment,
            )),
            Ok(None) => Weighed::NoWeights,
            Err(e) => Weighed::Unreadable(e),
        }
    }

    /// A Hub model's headers at `sha`, through the command's resolver (none: not asked).
    fn hub_weights(&self, repo: &str, sha: &str) -> Result<Option<WeightsHeaders>> {
        let Some(resolver) = &self.resolver else {
            return Err(
                Error::new("the Hub was not asked").kind(crate::error::ErrorKind::Hub(
                    crate::error::HubErrorKind::NotInCache,
                )),
            );
        };
        let settings = resolver.settings()?;
        weights::read_hub_headers(settings, repo, sha)
    }

    /// A pinned Hub repo's headers at its revision (range requests, cached by sha). They are
    /// an input nobody named: when the Hub cannot answer (offline, down, gated, not cached)
    /// they are not checked. A hostile header is still an error.
    fn pinned_weights(&self, pinned: Option<(String, String)>) -> Result<Option<WeightsHeaders>> {
        let (Some((repo, revision)), Some(resolver)) = (pinned, &self.resolver) else {
            return Ok(None);
        };
        let read = resolver
            .settings()
            .and_then(|settings| weights::read_hub_headers(settings, &repo, &revision));
        match read {
            Err(e) if matches!(e.kind, crate::error::ErrorKind::Hub(_)) => Ok(None),
            other => other,
        }
    }
}

impl Weighed {
    /// What the gates list under "not checked" for this outcome: the weights that were not
    /// read, and why (a plain OK means every model's weights were read).
    pub fn not_checked_line(&self) -> Option<String> {
        match self {
            Weighed::NoWeights => Some(
                "weights: no model.safetensors or model.safetensors.index.json beside the config".into(),
            ),
            Weighed::NotRead(why) => Some(format!("weights: not read from the Hub: {why}")),
            Weighed::Checked(c) if c.shards_absent => Some(
                "weights: the index's shards are not here: the tensor names were checked from the index, \
                 their dtypes and shapes were not"
                    .into(),
            ),
            Weighed::NotRun | Weighed::Checked(_) | Weighed::Unreadable(_) => None,
        }
    }
}

/// `lint`'s result: the report (with the published configs of a local drafter's shape) and the
/// weights rules skipped for want of a fact.
#[derive(Debug, Clone)]
pub struct LintRun {
    pub lint: LintReport,
    pub weights_skipped: Vec<weights::Skipped>,
    /// What the target's inputs said (a model card's target not on the Hub, …), for stderr.
    pub warnings: Vec<analysis::InputWarning>,
    /// What a local drafter was compared with: the authority its `--target` picks.
    pub authority: Option<String>,
}

/// `lint`: the drafter `arg` names (a path or a Hub repo) and, unless `with_weights` is off,
/// its safetensors headers, through the pipeline with no authority: its target, lint, weights.
pub fn lint(
    resolver: &Resolver,
    arg: &str,
    target: &crate::input::TargetSpec,
    options: LintOptions,
    with_weights: bool,
) -> Result<LintRun> {
    if options.family.is_some_and(|f| f.is_draft_model()) {
        crate::draft::require_target(target)?;
    }
    let drafter = resolver.drafter(arg, with_weights)?;
    let choice = resolver.target_choice(target)?;
    let local = drafter.config;
    // A target the user names picks the local drafter's authority, as `diff`, `check` and
    // `launch` pick it, when the drafter's name says it is that published drafter: one that
    // differs from the config published for its target fails lint as it fails them (the
    // incident under `lint --target`, issue 40); another trainer's drafter is linted alone.
    let identity = analysis::target_identity(&choice).0;
    // `--no-builtin`: no built-in facts, so no built-in snapshot as the authority either.
    let authority = match drafter.local && target.target.is_some() && !target.no_builtin {
        true if choose::claims_published(&local, identity.as_ref()) => {
            AuthorityPick::Choose(identity)
        }
        _ => AuthorityPick::Skip,
    };
    // A local drafter's own acceptance profile, beside its config (the profile-* rules).
    let mut options = options;
    if drafter.local {
        options.profile = rules::profile::beside(&local.path)?.map(std::sync::Arc::new);
        let local_target = |t: &String| std::path::Path::new(t).exists();
        options.drafter_name = Some(rules::profile::compared_name(arg, true));
        options.target_name = target
            .target
            .as_ref()
            .map(|t| rules::profile::compared_name(t, local_target(t)));
    }
    let run = Pipeline::new(Some(resolver.clone())).run(DrafterInput {
        config: &local,
        authority,
        fresh_authority: false,
        target: Ok(choice),
        shared_target: None,
        builtin_fallback: false,
        engine: options.engine.clone(),
        lint: LintWith::Options(Box::new(options)),
        weights: match with_weights {
            true => WeightsFrom::Given(drafter.headers.map(Box::new)),
            false => WeightsFrom::Skip,
        },
    });
    if let Some(e) = run.target_error {
        return Err(e);
    }
    let compared = run.diff_findings();
    let authority = run.authority_line();
    let mut report = match run.lint {
        Linted::Report(r) => *r,
        Linted::Failed(e) => return Err(e),
        Linted::NotRun | Linted::Findings(_) => return Err(Error::new("lint did not run")),
    };
    // The comparison's findings, with lint's where the comparison says nothing new.
    if !compared.is_empty() {
        let linted = std::mem::take(&mut report.findings);
        report.add(compared);
        let more = uncovered(linted, &report.findings);
        report.add(more);
    }
    let mut weights_skipped = Vec::new();
    if let Weighed::Checked(c) = run.weights {
        report.add(c.diagnostics);
        weights_skipped = c.skipped;
    }
    if drafter.local {
        report.published = published(&local, arg);
    }
    Ok(LintRun {
        lint: report,
        weights_skipped,
        warnings: run.target.warnings,
        authority,
    })
}

/// The built-in snapshots of the drafter's shape, with the `diff` that compares it with each.
fn published(local: &ConfigFile, path: &str) -> Vec<rules::Published> {
    choose::published(local)
        .into_iter()
        .map(|(snap, equal)| rules::Published {
            repo: snap.repo.to_string(),
            target: snap.target.repo.to_string(),
            equal,
            diff_command: format!(
                "dflash-check diff {} --snapshot {}",
                shell_words::quote(path),
                snap.repo
            ),
        })
        .collect()
}

/// `weights: skipped for want of the draft vocabulary size (…): weights-d2t-missing, …`: the
/// weights rules not run, grouped by what they lacked.
pub fn skipped_lines(skipped: &[weights::Skipped]) -> Vec<String> {
    skipped_by_need(skipped)
        .into_iter()
        .map(|(needs, codes)| format!("weights: skipped for want of {needs}: {}", codes.join(", ")))
        .collect()
}

/// The weights rules not run, grouped by what they lacked (described), in order.
pub fn skipped_by_need(skipped: &[weights::Skipped]) -> Vec<(String, Vec<&'static str>)> {
    crate::diagnostic::rule::by_need(skipped, |c| c.as_str())
}

/// Lint's findings that say something the comparison does not: one finding per problem, so
/// a lint finding at a field a comparison finding reports at least as severely is dropped.
/// A `non-finite-number` finding is kept: it is about the value, not a difference.
pub fn uncovered(
    lint: impl IntoIterator<Item = Diagnostic>,
    compared: &[Diagnostic],
) -> Vec<Diagnostic> {
    let covered: Vec<(&str, crate::diagnostic::Severity)> = compared
        .iter()
        .filter(|f| matches!(f.code, crate::diagnostic::Code::Diff(_)) && !f.path.is_empty())
        .map(|f| (f.path.as_str(), f.severity))
        .collect();
    // A non-finite number is a finding about the value itself, not a difference: kept even
    // where the comparison reports the field (issue 44), so its code is in every command.
    let own = crate::diagnostic::Code::Lint(crate::diagnostic::codes::LintCode::NonFiniteNumber);
    lint.into_iter()
        .filter(|l| {
            l.code == own
                || !covered
                    .iter()
                    .any(|(path, sev)| *path == l.path && *sev <= l.severity)
        })
        .collect()
}

/// Diff differences as located findings, with `diff`'s own codes (one finding, one code, in
/// every command). The authority is named once, in the drafter's header, not in every line.
pub fn diff_findings(report: &DiffReport) -> Vec<Diagnostic> {
    report.located_diagnostics()
}

/// The `authority-ambiguous` error of a drafter equal to none of several published configs of
/// its shape: which matched, what differs from each, and how to pin the right one.
pub fn ambiguous_finding(ambiguity: &choose::Ambiguity) -> Diagnostic {
    let per_candidate: Vec<String> = ambiguity
        .candidates
        .iter()
        .zip(&ambiguity.differing)
        .map(|(snap, fields)| {
            // Short enough for one CI log line: the first few fields, then a count.
            const SHOWN: usize = 3;
            let mut named = fields
                .iter()
                .take(SHOWN)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            if fields.len() > SHOWN {
                named.push_str(&format!(", +{}", fields.len() - SHOWN));
            }
            format!(
                "{} differs in {} field(s) ({named})",
                snap.repo,
                fields.len()
            )
        })
        .collect();
    let code = DiffCode::Ambiguous;
    Diagnostic::new(
        code,
        crate::diff::info(code),
        "",
        format!(
            "equal to none of {} published configs of its shape ({}): {}; `dflash-check diff` shows each, \
             `dflash-check pin DIR --snapshot REPO` pins the one it was trained for",
            ambiguity.candidates.len(),
            ambiguity.fingerprint,
            per_candidate.join(", ")
        ),
    )
    .span(1, 1)
}

/// Whether `check` treats a config as a drafter, and of which family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IsDrafter {
    /// A drafter: of this family (detected, else forced), or of none lint knows but pinned;
    /// and the detection, when the family was detected (lint takes it: `LintOptions::detected`).
    Yes(Option<Family>, Option<family::Detection>),
    /// A target's config that declares an MTP head no deployment under the paths serves with
    /// MTP: not judged, reported (`mtp-not-served`, info).
    UnservedHead,
    /// Not a drafter (a target model, a tokenizer's config): skipped and listed as such.
    No,
}

/// The one rule of what `check` treats as a drafter: a config whose family lint detects
/// (`rules::family::detect`: DFlash, DFlash2, EAGLE-3, the speculators format, …); any config
/// when a family is forced (`lint --family`); any config a pin names. Everything else is
/// skipped and listed (docs/ci.md, "What check treats as a drafter"). A target's config that
/// declares an MTP head (`Detection::in_target`) is a drafter when a deployment under the paths
/// serves it with MTP (`served`: `Deployment::serves_mtp_head`, the line's target) — it is then
/// judged as the engine judges the head —, and otherwise [`IsDrafter::UnservedHead`]: a
/// repository's target checkouts do not become drafters of `check`'s gate on their own (a pin
/// naming one, or a forced family, still makes it one).
pub fn is_drafter(
    config: &ConfigFile,
    forced: Option<Family>,
    pinned: bool,
    served: bool,
) -> IsDrafter {
    let detected = family::detect(config.root());
    if detected
        .as_ref()
        .is_some_and(|d| d.in_target(config.root()))
        && forced.is_none()
        && !pinned
        && !served
    {
        return IsDrafter::UnservedHead;
    }
    match (detected, forced) {
        (Some(d), _) => IsDrafter::Yes(Some(d.name), Some(d)),
        (None, Some(forced)) => IsDrafter::Yes(Some(forced), None),
        (None, None) if pinned => IsDrafter::Yes(None, None),
        (None, None) => IsDrafter::No,
    }
}

/// Every `config.json` under `paths`, sorted: directories recursed (hidden folders,
/// `node_modules` and `target` skipped, linked directories not followed), files taken as given;
/// and, by the same walk, every deployment file that configures speculative decoding — shell
/// scripts, Dockerfiles, compose files, Kubernetes manifests in YAML (any style) or JSON
/// (`launch::files`) — which `check` gates through `launch`. A deployment file over `cap` bytes
/// is not read but scanned for the words of speculative decoding, and one that names them is
/// listed in `too_large` (a finding, never a silent skip). A file given that is no deployment
/// is listed in `other_files` and skipped (a `.json` one is taken as a config, as before).
pub fn discover(paths: &[PathBuf], cap: u64) -> Result<Discovered> {
    let mut found = Discovered::default();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| config::io_error(path, &e))?;
        if meta.is_file() {
            // A file named on the command line (pre-commit passes every one a commit touches).
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            let kind = name.as_deref().and_then(files::candidate);
            match kind.map(|k| deployment(path, k, cap, &mut found)) {
                Some(true) => {}
                Some(false) if kind != Some(files::Candidate::Json) => {
                    found.other_files.push(path.clone())
                }
                _ => found.configs.push(FoundConfig::named(path.clone())),
            }
        } else {
            walk(path, cap, &mut found);
        }
    }
    found.configs.sort();
    found.configs.dedup();
    found.deployments.sort();
    found.deployments.dedup();
    found.too_large.sort();
    found.too_large.dedup();
    Ok(found)
}

/// Whether the file at `path` is a deployment `check` gates: pushed to `found.deployments`, or,
/// over `cap`, to `found.too_large` when it names speculative decoding. A file that cannot be
/// read, or is not UTF-8, is no deployment `launch` would read either.
fn deployment(path: &Path, kind: files::Candidate, cap: u64, found: &mut Discovered) -> bool {
    if kind == files::Candidate::Json && !json_head(path) {
        return false;
    }
    // Followed, as the read would be; a FIFO or a directory named `x.sh` is no deployment.
    let size = match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => meta.len(),
        _ => return false,
    };
    if size > cap {
        let named = scan_names_speculation(path);
        if named {
            found.too_large.push((path.to_path_buf(), size));
        }
        return named;
    }
    let Ok(bytes) = config::read_capped(path, cap) else {
        return false;
    };
    let is = std::str::from_utf8(&bytes).is_ok_and(|text| files::is_deployment(kind, text));
    if is {
        found.deployments.push(path.to_path_buf());
    }
    is
}

/// Whether a JSON file's head may be Kubernetes manifests ([`files::JSON_HEAD_BYTES`] read).
fn json_head(path: &Path) -> bool {
    use std::io::Read;
    let mut head = Vec::with_capacity(files::JSON_HEAD_BYTES);
    let read = std::fs::File::open(path)
        .and_then(|f| f.take(files::JSON_HEAD_BYTES as u64).read_to_end(&mut head));
    read.is_ok() && files::json_head_may_be_manifest(&String::from_utf8_lossy(&head))
}

/// Whether a file too large to read names speculative decoding: read in blocks, each searched
/// with the end of the one before it (a word cut at a block's end is found whole in the next).
fn scan_names_speculation(path: &Path) -> bool {
    use std::io::Read;
    const BLOCK: usize = 1 << 20;
    const OVERLAP: usize = 256;
    let Ok(mut file) = std::fs::File::open(path) else {
        return false;
    };
    let mut window: Vec<u8> = Vec::with_capacity(BLOCK + OVERLAP);
    let mut block = vec![0u8; BLOCK];
    loop {
        let n = match file.read(&mut block) {
            Ok(0) | Err(_) => return false,
            Ok(n) => n,
        };
        let keep = window.len().saturating_sub(OVERLAP);
        window.drain(..keep);
        window.extend_from_slice(&block[..n]);
        if files::names_speculation(&String::from_utf8_lossy(&window)) {
            return true;
        }
    }
}

/// What [`discover`] found: the `config.json` files, the deployment files, and the directories
/// it could not read (permissions): a drafter may be in one, so `check` reports each instead of
/// passing in silence.
#[derive(Debug, Default)]
pub struct Discovered {
    pub configs: Vec<FoundConfig>,
    /// Deployment files that configure speculative decoding (scripts, Dockerfiles, compose
    /// files, Kubernetes manifests), which `check` gates through `launch`.
    pub deployments: Vec<PathBuf>,
    /// Deployment files over the size cap that name speculative decoding, with their size: not
    /// read, each a finding.
    pub too_large: Vec<(PathBuf, u64)>,
    /// Files named on the command line that are no deployment: skipped and listed.
    pub other_files: Vec<PathBuf>,
    pub unreadable: Vec<(PathBuf, std::io::Error)>,
}

/// A `config.json` [`discover`] found, and what the listing of its directory showed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct FoundConfig {
    pub path: PathBuf,
    /// The walk listed the directory and saw neither `model.safetensors` nor its index (under
    /// any kind of entry: a link to one counts as one), so the weights stage does not look
    /// for them. False for a file named on the command line.
    pub no_weights_listed: bool,
    /// The walk's listing showed the config as a regular file (not a link, a FIFO or a
    /// device), so it is read without asking the open file what it is
    /// ([`config::load_listed_file`]). False for a file named on the command line.
    pub listed_file: bool,
}

impl FoundConfig {
    /// A config named on the command line: its directory was not listed.
    fn named(path: PathBuf) -> Self {
        FoundConfig {
            path,
            no_weights_listed: false,
            listed_file: false,
        }
    }

    /// The config, read as its listing allows.
    pub fn load(&self) -> Result<ConfigFile> {
        match self.listed_file {
            true => crate::config::load_listed_file(&self.path),
            false => crate::config::load(&self.path),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A config read as its listing showed it (no `statx`) is what `load` reads, and every
    /// error is `load`'s, word for word: an empty file, bad JSON, a file over the cap (16 MiB and
    /// a byte, sparse: refused after a mebibyte is read, not the whole), one at the cap, files a
    /// byte under, at and over the first read's 16 KiB, bad JSON found past the first read, a
    /// directory, a missing file. And the walk says which configs it listed as regular files.
    #[test]
    fn a_listed_config_reads_as_load_reads_it() {
        use crate::config::{load, load_listed_file, MAX_CONFIG_BYTES};
        let dir = tempfile::tempdir().unwrap();
        let cases: Vec<(&str, Option<u64>, &[u8])> = vec![
            (
                "good.json",
                None,
                br#"{"architectures": ["DFlashDraftModel"], "a": [1, 2.5e3, -Infinity]}"#,
            ),
            ("empty.json", None, b""),
            ("bad.json", None, b"{\"a\": 1,}"),
            ("over.json", Some(MAX_CONFIG_BYTES + 1), b""),
            ("at.json", Some(MAX_CONFIG_BYTES), b""),
            ("large.json", None, &[]),
        ];
        for (name, len, text) in &cases {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            if let Some(len) = len {
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .unwrap()
                    .set_len(*len)
                    .unwrap();
            }
        }
        // Over a mebibyte and under the cap: read on after the size is asked for.
        let large = format!("{{\"pad\": \"{}\"}}", "x".repeat(3 << 20));
        std::fs::write(dir.path().join("large.json"), &large).unwrap();
        // One read's size (16 KiB), a byte under and a byte over it: the first read is short,
        // exactly full, or followed by another.
        for (name, len) in [
            ("under.json", 16383),
            ("full.json", 16384),
            ("over-one.json", 16385),
        ] {
            let pad = "y".repeat(len - "{\"pad\": \"\"}".len());
            let text = format!("{{\"pad\": \"{pad}\"}}");
            assert_eq!(text.len(), len);
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        // Bad JSON over one read: the error is found past the first read.
        let late = format!("{{\"pad\": \"{}\", }}", "z".repeat(20_000));
        std::fs::write(dir.path().join("late-error.json"), late).unwrap();
        std::fs::create_dir(dir.path().join("a-directory")).unwrap();
        let names = cases.iter().map(|c| c.0).chain([
            "under.json",
            "full.json",
            "over-one.json",
            "late-error.json",
            "a-directory",
            "missing.json",
        ]);
        for name in names {
            let path = dir.path().join(name);
            match (load(&path), load_listed_file(&path)) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a.doc.text, b.doc.text, "{name}");
                    assert_eq!(a.doc.root, b.doc.root, "{name}");
                }
                (Err(a), Err(b)) => {
                    assert_eq!((&a.message, &a.hint), (&b.message, &b.hint), "{name}");
                }
                (a, b) => panic!("{name}: {:?} / {:?}", a.is_ok(), b.is_ok()),
            }
        }
        assert!(load_listed_file(&dir.path().join("large.json")).is_ok());
        for name in ["regular", "linked"] {
            std::fs::create_dir(dir.path().join(name)).unwrap();
        }
        std::fs::write(dir.path().join("regular/config.json"), "{}").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(
            dir.path().join("regular/config.json"),
            dir.path().join("linked/config.json"),
        )
        .unwrap();
        let found = discover(&[dir.path().to_path_buf()], 1 << 20).unwrap();
        let listed: Vec<bool> = found.configs.iter().map(|c| c.listed_file).collect();
        assert_eq!(
            listed,
            if cfg!(unix) {
                vec![false, true]
            } else {
                vec![true]
            }
        );
        let named = discover(&[dir.path().join("regular/config.json")], 1 << 20).unwrap();
        assert!(!named.configs[0].listed_file);
    }

    /// The walk says a directory holds no weights only when its listing shows neither
    /// `model.safetensors` nor its index, under any kind of entry; a config named on the command
    /// line was not listed, so its weights are looked for.
    #[test]
    fn the_walk_notes_directories_listed_without_weights() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        for (name, beside) in [
            ("bare", None),
            ("single", Some(weights::index::SINGLE_FILE)),
            ("sharded", Some(weights::index::INDEX_FILE)),
            ("linked", None),
        ] {
            let dir = root.join(name);
            std::fs::create_dir(&dir).unwrap();
            std::fs::write(dir.join("config.json"), "{}").unwrap();
            if let Some(file) = beside {
                std::fs::write(dir.join(file), b"").unwrap();
            }
        }
        #[cfg(unix)]
        std::os::unix::fs::symlink(
            root.join("single").join(weights::index::SINGLE_FILE),
            root.join("linked").join(weights::index::SINGLE_FILE),
        )
        .unwrap();
        let found = discover(&[root.to_path_buf()], 1 << 20).unwrap();
        let listed: Vec<(String, bool)> = found
            .configs
            .iter()
            .map(|c| {
                let dir = c.path.parent().unwrap().file_name().unwrap();
                (dir.to_string_lossy().into_owned(), c.no_weights_listed)
            })
            .collect();
        let linked_listed = !cfg!(unix);
        assert_eq!(
            listed,
            [
                ("bare".to_string(), true),
                ("linked".to_string(), linked_listed),
                ("sharded".to_string(), false),
                ("single".to_string(), false),
            ]
        );
        let named = discover(&[root.join("bare").join("config.json")], 1 << 20).unwrap();
        assert!(!named.configs[0].no_weights_listed);
    }
}
