//! One drafter, compared: resolves the inputs of `diff` (local config, authority, target,
//! tokenizer), runs the pure comparison, decodes every token id on both sides, and returns a
//! [`DiffReport`] that any renderer can print.

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::config::{self, ConfigFile, TargetFacts};
use crate::diagnostic::{Diagnostic, Severity, Summary};
use crate::diff::{self, DiffKind, Difference};
use crate::hub::{HubError, HubErrorKind, HubSettings, RepoRef, SettingsCell};
use crate::json::Node;
use crate::source::builtin::{self, Snapshot};
use crate::source::SnapshotAuthority;
use crate::source::{self, choose, file, Authority};
use crate::tokens::{DecodedToken, TokenClass, TokenTable};
use crate::{Error, Result};

/// Where the authority comes from, as the user asked.
#[derive(Debug, Clone)]
pub enum AuthorityChoice {
    /// Match a built-in snapshot by fingerprint.
    Auto,
    /// A config file or directory.
    File(PathBuf),
    /// A named built-in snapshot.
    Snapshot(String),
    /// A Hub repo at a revision (`--from-hub`, or inferred from a Hub cache path).
    Hub {
        repo: RepoRef,
        settings: Box<HubSettings>,
        /// Why this repo, when it was inferred rather than named.
        inferred: Option<String>,
    },
    /// Already resolved by the caller.
    Resolved(Box<Authority>),
}

/// Where the target model's facts and tokenizer come from.
#[derive(Debug, Clone, Default)]
pub struct TargetChoice {
    /// A target model directory (`config.json` + tokenizer files).
    pub target_dir: Option<PathBuf>,
    /// A directory with tokenizer files only.
    pub tokenizer_dir: Option<PathBuf>,
    /// Build the full `tokenizers` tokenizer instead of the fast added-token path.
    pub full_tokenizer: bool,
    /// A target model on the Hub (`--target ORG/NAME[@REV]`, or the drafter card's `base_model`).
    pub target_hub: Option<RepoRef>,
    /// Hub settings, for a Hub target or a `base_model` look-up.
    pub hub: Option<Box<HubSettings>>,
    /// Never fall back to built-in target facts or token tables.
    pub no_builtin: bool,
    /// Also read the target's whole vocabulary with its token table, one read of
    /// `tokenizer.json` for both: a classic draft model's check compares it
    /// ([`crate::draft::with_vocab`]; issue 44).
    pub vocabulary: bool,
}

impl AuthorityChoice {
    /// With no authority named, a drafter path inside a Hub cache snapshot names its repo: the
    /// cached commit is compared with what the repo's main branch is now. The Hub settings are
    /// resolved only then, and their error is this call's.
    pub fn infer(local: &std::path::Path, hub: &SettingsCell) -> Result<AuthorityChoice> {
        let Some((repo, sha)) = crate::hub::detect_cache_snapshot(local) else {
            return Ok(AuthorityChoice::Auto);
        };
        let settings = hub.get().map_err(Error::from)?;
        Ok(AuthorityChoice::Hub {
            repo: RepoRef {
                repo: repo.clone(),
                revision: None,
            },
            settings: Box::new(settings.clone()),
            inferred: Some(format!(
                "the path is a Hub cache snapshot of {repo} at commit {sha}; compared with the repo's main branch"
            )),
        })
    }
}

/// A drafter's inputs, resolved: one authority, or several published candidates of its shape
/// and no evidence to pick one (see [`crate::source::choose`]).
#[derive(Debug, Clone)]
pub enum Inputs {
    One(Box<(ConfigFile, Authority, TargetContext)>),
    Ambiguous(Box<AmbiguousDiff>),
}

impl Inputs {
    /// The one authority, or the ambiguity as an error (for `fix`, which needs one).
    pub fn single(self) -> Result<(ConfigFile, Authority, TargetContext)> {
        match self {
            Inputs::One(inputs) => Ok(*inputs),
            Inputs::Ambiguous(a) => Err(a.ambiguity.to_error(&a.local)),
        }
    }
}

/// A drafter compared with every candidate authority, because nothing picks one.
#[derive(Debug, Clone)]
pub struct AmbiguousDiff {
    pub local: ConfigFile,
    pub ambiguity: choose::Ambiguity,
    /// One full comparison per candidate, in the candidates' order.
    pub reports: Vec<DiffReport>,
}

impl AmbiguousDiff {
    /// `local` compared with every candidate of `ambiguity`, each with its target's tokens.
    pub fn build(
        local: ConfigFile,
        ambiguity: choose::Ambiguity,
        target: &TargetChoice,
    ) -> Result<AmbiguousDiff> {
        let mut reports = Vec::new();
        for snap in &ambiguity.candidates {
            let a = snap.authority(Some(format!(
                "one of {} candidates of the same shape",
                ambiguity.candidates.len()
            )));
            let target = resolve_target(target, &[&local, &a.config], Some(&a))?;
            reports.push(DiffReport::build(local.clone(), a.into(), target));
        }
        Ok(AmbiguousDiff {
            local,
            ambiguity,
            reports,
        })
    }

    /// One `authority-ambiguous` error at the top of the file, then every candidate's
    /// differences, each message naming its candidate.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut out = vec![pick_authority(&self.ambiguity, &self.local.path)];
        for r in &self.reports {
            out.extend(r.diagnostics().into_iter().map(|mut d| {
                d.message = format!("against {}: {}", r.authority.id, d.message);
                d
            }));
        }
        // The config's own findings are the same against every candidate: once, last (the
        // differences' notes are found by their place after the first finding).
        if let Some(r) = self.reports.first() {
            out.extend(r.config_findings.iter().cloned());
        }
        out
    }

    /// The counts a person reads, and how many fields differ: each field once, at its worst
    /// severity over the candidates. A field that differs from both candidates is one thing to
    /// settle, not two ("9 errors, 3 warnings" for 7 differing fields, issue 45). The
    /// `authority-ambiguous` error and the config's own findings count once each.
    pub fn field_summary(&self) -> (Summary, usize) {
        let mut worst: std::collections::BTreeMap<String, Severity> = Default::default();
        for d in self.reports.iter().flat_map(|r| r.diagnostics()) {
            let at = worst.entry(d.pointer()).or_insert(d.severity);
            *at = (*at).min(d.severity);
        }
        let fields = worst.len();
        let mut own = vec![pick_authority(&self.ambiguity, &self.local.path)];
        if let Some(r) = self.reports.first() {
            own.extend(r.config_findings.iter().cloned());
        }
        let mut summary = Summary::of(own.iter());
        for severity in worst.values() {
            match severity {
                Severity::Error => summary.errors += 1,
                Severity::Warning => summary.warnings += 1,
                Severity::Info => summary.infos += 1,
            }
        }
        (summary, fields)
    }
}

/// The `authority-ambiguous` error at the top of the drafter's config, naming the flags that
/// pick its authority (`diff` and `doctor` say it so).
pub fn pick_authority(ambiguity: &choose::Ambiguity, config: &std::path::Path) -> Diagnostic {
    let code = crate::diagnostic::codes::DiffCode::Ambiguous;
    Diagnostic::new(
        code,
        diff::info(code),
        "",
        format!(
            "the drafter {}; pick its authority: {}",
            ambiguity.describe(),
            ambiguity.pick_flags()
        ),
    )
    .file(config.display().to_string())
    .span(1, 1)
}

/// Loads a drafter and resolves its authority and target. Only a Hub authority's model card
/// can name a target, so Hub look-ups for the target happen only then (or when the target is
/// a Hub repo itself).
///
/// `hub` is the command's Hub settings, for inferring the authority from a Hub cache path
/// (see [`AuthorityChoice::infer`]) when `authority` is `Auto`. A Hub authority's settings
/// are the target's too (its model card may name the target).
pub fn resolve_inputs(
    path: &std::path::Path,
    authority: &AuthorityChoice,
    target: &TargetChoice,
    hub: &SettingsCell,
) -> Result<Inputs> {
    let local = crate::config::load(path)?;
    let authority_choice = match authority {
        AuthorityChoice::Auto => AuthorityChoice::infer(&local.path, hub)?,
        other => other.clone(),
    };
    let mut target_choice = target.clone();
    match &authority_choice {
        AuthorityChoice::Hub { settings, .. } if target_choice.hub.is_none() => {
            target_choice.hub = Some(settings.clone());
        }
        AuthorityChoice::Hub { .. } => {}
        _ if target_choice.target_hub.is_none() => target_choice.hub = None,
        _ => {}
    }
    let authority = match authority_choice {
        AuthorityChoice::Auto => {
            let (identity, facts) = target_identity(&target_choice);
            match choose::choose_with_facts(&local, identity.as_ref(), facts.as_ref()) {
                choose::Choice::One(a) => *a,
                choose::Choice::NoMatch(e) => return Err(e),
                choose::Choice::Ambiguous(ambiguity) => {
                    let report = AmbiguousDiff::build(local, ambiguity, &target_choice)?;
                    return Ok(Inputs::Ambiguous(Box::new(report)));
                }
            }
        }
        other => resolve_authority(&local, &other)?,
    };
    let target = resolve_target(
        &target_choice,
        &[&local, &authority.config],
        Some(&authority),
    )?;
    Ok(Inputs::One(Box::new((local, authority, target))))
}

/// What the target choice says of the target's identity (and, for a directory, its facts).
pub fn target_identity(
    choice: &TargetChoice,
) -> (Option<choose::TargetIdentity>, Option<TargetFacts>) {
    if let Some(repo) = &choice.target_hub {
        let identity = choose::TargetIdentity {
            name: repo.repo.clone(),
            from: format!("--target {}", repo.repo),
        };
        return (Some(identity), None);
    }
    if let Some(dir) = &choice.target_dir {
        let facts = config::load(&dir.join("config.json"))
            .ok()
            .map(|c| TargetFacts::from_config(&c));
        let shown = dir.display().to_string();
        return (choose::TargetIdentity::of_dir(dir, &shown), facts);
    }
    (None, None)
}

/// Resolves the authority for `local`.
pub fn resolve_authority(local: &ConfigFile, choice: &AuthorityChoice) -> Result<Authority> {
    match choice {
        AuthorityChoice::Auto => match choose::choose(local, None) {
            choose::Choice::One(a) => Ok(*a),
            choose::Choice::Ambiguous(a) => Err(a.to_error(local)),
            choose::Choice::NoMatch(e) => Err(e),
        },
        AuthorityChoice::File(path) => file::load(path),
        AuthorityChoice::Snapshot(repo) => Snapshot::find(repo)
            .map(|s| s.authority(Some("named with --snapshot".into())))
            .ok_or_else(|| {
                let names: Vec<&str> = builtin::SNAPSHOTS.iter().map(|s| s.repo).collect();
                Error::new(format!("no built-in snapshot named `{repo}`"))
                    .with_hint(format!("built-in snapshots: {}", names.join(", ")))
            }),
        AuthorityChoice::Hub {
            repo,
            settings,
            inferred,
        } => {
            let mut why = inferred.clone();
            if let Some(sha) = crate::hub::detect_local_dir_download(&local.path) {
                let note = format!(
                    "the local files were downloaded at commit {sha} (hf download metadata)"
                );
                why = Some(match why {
                    Some(w) => format!("{w}; {note}"),
                    None => note,
                });
            }
            source::hub::load_named(settings, repo, why)
        }
        AuthorityChoice::Resolved(a) => Ok((**a).clone()),
    }
}

pub use crate::target::{DecodedWith, InputWarning, TargetContext};

/// An error that must stop the command even for an input the user did not name: with
/// `--require-fresh`, "the Hub could not be asked" keeps failing.
fn must_fail(e: &HubError) -> bool {
    e.kind == HubErrorKind::NotFresh
}

/// The target a Hub authority's model card names, and how it was found.
struct CardTarget {
    repo: RepoRef,
    /// `base_model in the model card of ORG/NAME`.
    how: String,
}

/// Fetches a Hub target's small files into the cache. A target the user named (`--target
/// ORG/NAME`) that cannot be had is an error; one found through the model card becomes a
/// warning (`Ok(None)`). Tokenizer files found through the target are always optional.
fn fetch_hub_target(
    settings: &HubSettings,
    repo: &RepoRef,
    found_by: Option<&str>,
    wanted: &BTreeSet<u64>,
    warnings: &mut Vec<InputWarning>,
) -> Result<Option<(PathBuf, String)>> {
    let target = match source::hub::fetch_target_config(settings, repo) {
        Ok(t) => t,
        Err(e) => match found_by {
            Some(how) if !must_fail(&e) => {
                warnings.push(InputWarning {
                    input: format!("target {} ({how})", repo.repo),
                    reason: e.message,
                    // Said once the fallback is known (built-in table or undecoded).
                    instead: String::new(),
                    flag: "--target",
                });
                return Ok(None);
            }
            _ => return Err(e.into()),
        },
    };
    let note = format!(
        "{} at {} ({})",
        target.repo,
        target.sha,
        target.freshness.label()
    );
    let optional = |name: &str, e: HubError, instead: &str, warnings: &mut Vec<InputWarning>| {
        if must_fail(&e) {
            return Err(crate::Error::from(e));
        }
        warnings.push(InputWarning {
            input: format!("{name} of target {}", target.repo),
            reason: e.message,
            instead: instead.into(),
            flag: "--tokenizer",
        });
        Ok(())
    };
    if let Err(e) = source::hub::fetch_target_file(settings, &target, "tokenizer_config.json") {
        optional(
            "tokenizer_config.json",
            e,
            "its added-token table is not used",
            warnings,
        )?;
    }
    // The added-token tables settle nearly every id; fetch the vocabulary only if not.
    // (A repo without tokenizer_config.json may still have tokenizer.json.)
    let probe = TokenTable::from_dir(&target.dir, wanted, None).ok();
    let needs_vocab = !wanted.is_empty()
        && probe.is_none_or(|t| {
            !t.has_vocab
                && wanted
                    .iter()
                    .any(|&id| matches!(t.decode(id).class, TokenClass::Unknown))
        });
    if needs_vocab {
        if let Err(e) = source::hub::fetch_target_file(settings, &target, "tokenizer.json") {
            optional(
                "tokenizer.json",
                e,
                "ids that are not added tokens are shown undecoded",
                warnings,
            )?;
        }
    }
    Ok(Some((target.dir, note)))
}

/// The token ids of every token field of `configs`: what the target's tokenizer is asked to
/// decode (no path built per field, issue 44).
fn wanted_ids(configs: &[&ConfigFile]) -> BTreeSet<u64> {
    let mut ids = Vec::new();
    for c in configs {
        diff::token_field_ids(c.root(), &mut ids);
    }
    ids.into_iter().collect()
}

/// Loads the target context: explicit directories first, then the authority's built-in
/// target, then a known target matching the drafter's fingerprint.
pub fn resolve_target(
    choice: &TargetChoice,
    configs: &[&ConfigFile],
    authority: Option<&Authority>,
) -> Result<TargetContext> {
    let wanted = wanted_ids(configs);
    let mut choice = choice.clone();
    let mut hub_note = None;
    let mut warnings = Vec::new();
    if choice.target_dir.is_none() && choice.tokenizer_dir.is_none() {
        if let Some(settings) = choice.hub.as_deref() {
            let named = choice.target_hub.clone().map(|repo| (repo, None));
            let found = match named {
                Some(n) => Some(n),
                None => {
                    card_target(settings, authority, &mut warnings)?.map(|c| (c.repo, Some(c.how)))
                }
            };
            if let Some((repo, how)) = found {
                if let Some((dir, note)) =
                    fetch_hub_target(settings, &repo, how.as_deref(), &wanted, &mut warnings)?
                {
                    hub_note = Some(note);
                    choice.target_dir = Some(dir);
                }
            }
        }
    }
    let mut context = resolve_local_target(&choice, configs, authority, hub_note, wanted)?;
    for w in &mut warnings {
        if w.instead.is_empty() {
            w.instead = match context.decoded_with {
                DecodedWith::Builtin => {
                    format!("token ids decoded with the {}", context.tokens.source)
                }
                DecodedWith::Tokenizer => {
                    format!("token ids decoded with {}", context.tokens.source)
                }
                DecodedWith::None => "token ids are shown undecoded".into(),
            };
        }
    }
    context.warnings = warnings;
    Ok(context)
}

/// [`resolve_target`] once every Hub input is in the cache (or given up on).
fn resolve_local_target(
    choice: &TargetChoice,
    configs: &[&ConfigFile],
    authority: Option<&Authority>,
    hub_note: Option<String>,
    // The configs' token ids, as [`resolve_target`] gathered them (gathering them again was a
    // hundredth of `check`, issue 44).
    wanted: BTreeSet<u64>,
) -> Result<TargetContext> {
    let mut facts = None;
    if let Some(dir) = &choice.target_dir {
        let cfg = config::config_path(dir).and_then(|p| config::load(&p)).map_err(|e| {
            Error::new(format!("--target: {}", e.message))
                .with_hint("--target names the target model's directory (its config.json and tokenizer files)")
        })?;
        facts = Some(TargetFacts::from_config(&cfg));
    }
    let known = if choice.no_builtin {
        None
    } else {
        known_target_for(configs, authority)
    };
    let authority =
        authority.filter(|a| !(choice.no_builtin && a.kind == source::AuthorityKind::Builtin));
    if facts.is_none() {
        facts = authority
            .and_then(|a| a.target.clone())
            .or_else(|| known.map(|k| k.facts()));
    }
    let vocab_size = facts.as_ref().and_then(|f| f.vocab_size);
    // Shared by every run that keeps this context: `check` clones it for each drafter.
    let facts = facts.map(std::sync::Arc::new);
    let context = |tokens: std::sync::Arc<TokenTable>, decoded_with, hint| TargetContext {
        facts: facts.clone(),
        tokens,
        decoded_with,
        hint,
        warnings: Vec::new(),
        vocab: None,
        vocabulary: None,
    };
    let tokenizer_dir = choice.tokenizer_dir.as_ref().or(choice.target_dir.as_ref());
    if let Some(dir) = tokenizer_dir {
        let has_files = config::regular_file_present(&dir.join("tokenizer.json"))?
            | config::regular_file_present(&dir.join("tokenizer_config.json"))?;
        if has_files || choice.tokenizer_dir.is_some() {
            let (mut tokens, vocabulary) = if choice.full_tokenizer {
                (TokenTable::from_dir_full(dir, &wanted, vocab_size)?, None)
            } else if choice.vocabulary {
                let read = crate::vocab::target::read(dir, &wanted, vocab_size)?;
                (read.table, read.vocabulary.map(std::sync::Arc::new))
            } else {
                (TokenTable::from_dir(dir, &wanted, vocab_size)?, None)
            };
            if let Some(note) = &hub_note {
                tokens.source = format!("{note}: {}", tokens.source);
            }
            let mut target = context(tokens.into(), DecodedWith::Tokenizer, None);
            target.vocabulary = vocabulary;
            return Ok(target);
        }
    }
    if let Some(tokens) = authority.and_then(|a| a.tokens.clone()) {
        return Ok(context(tokens, DecodedWith::Builtin, None));
    }
    if let Some(k) = known {
        return Ok(context(k.tokens(), DecodedWith::Builtin, None));
    }
    Ok(context(
        TokenTable::empty(vocab_size).into(),
        DecodedWith::None,
        Some(
            "token ids are not decoded: pass --target DIR (the target model) or --tokenizer DIR"
                .into(),
        ),
    ))
}

/// The target named by a Hub authority's model card (`base_model:`), if any. A card that
/// cannot be had is a warning: the target is then unknown, nothing else.
fn card_target(
    settings: &HubSettings,
    authority: Option<&Authority>,
    warnings: &mut Vec<InputWarning>,
) -> Result<Option<CardTarget>> {
    let Some(a) = authority else {
        return Ok(None);
    };
    if !matches!(
        a.kind,
        source::AuthorityKind::Hub | source::AuthorityKind::Cache
    ) {
        return Ok(None);
    }
    let (Ok(repo), Some(sha)) = (a.id.parse::<RepoRef>(), a.sha.as_deref()) else {
        return Ok(None);
    };
    match source::hub::base_model(settings, &repo, sha) {
        Ok(name) => Ok(name.and_then(|n| n.parse().ok()).map(|target| CardTarget {
            repo: target,
            how: format!("base_model in the model card of {}", repo.repo),
        })),
        Err(e) if must_fail(&e) => Err(e.into()),
        Err(e) => {
            warnings.push(InputWarning {
                input: format!("the model card (README.md) of {}", repo.repo),
                reason: e.message,
                instead: String::new(),
                flag: "--target",
            });
            Ok(None)
        }
    }
}

/// A built-in target whose fingerprint the drafter (or its authority) matches.
fn known_target_for(
    configs: &[&ConfigFile],
    authority: Option<&Authority>,
) -> Option<&'static builtin::KnownTarget> {
    let roots = authority
        .map(|a| a.config.root())
        .into_iter()
        .chain(configs.iter().map(|c| c.root()));
    for root in roots {
        let get = |k: &str| root.get(k).and_then(Node::as_u64);
        for t in builtin::known_targets() {
            if get("vocab_size") == Some(t.vocab_size)
                && get("hidden_size") == Some(t.hidden_size)
                && get("num_target_layers") == Some(t.num_hidden_layers)
            {
                return Some(t);
            }
        }
    }
    None
}

/// A difference with its tokens decoded.
#[derive(Debug, Clone)]
pub struct ReportedDifference {
    pub diff: Difference,
    pub local_tokens: Vec<DecodedToken>,
    pub authority_tokens: Vec<DecodedToken>,
}

/// The result of comparing one drafter with its authority.
#[derive(Debug, Clone)]
pub struct DiffReport {
    pub local: ConfigFile,
    /// Shared with the drafter's run (not a copy per report).
    pub authority: std::sync::Arc<Authority>,
    pub target: TargetContext,
    pub differences: Vec<ReportedDifference>,
    /// What is wrong with the local config on its own, whatever the authority holds: a
    /// number that is NaN or infinite (`non-finite-number`, the lint rule's finding).
    pub config_findings: Vec<Diagnostic>,
    pub summary: Summary,
}

impl DiffReport {
    /// Compares `local` with `authority`, decoding ids with `target`.
    pub fn build(
        local: ConfigFile,
        authority: std::sync::Arc<Authority>,
        target: TargetContext,
    ) -> DiffReport {
        let mut diffs =
            diff::compare_with(local.root(), authority.config.root(), Some(&target.tokens));
        diff::sort_for_display(&mut diffs);
        let differences: Vec<ReportedDifference> = diffs
            .into_iter()
            .map(|d| {
                let tokenish = diff::is_token_field(&d.path);
                ReportedDifference {
                    local_tokens: if tokenish {
                        diff::decode_node(&target.tokens, d.local.as_ref())
                    } else {
                        vec![]
                    },
                    authority_tokens: if tokenish {
                        diff::decode_node(&target.tokens, d.authority.as_ref())
                    } else {
                        vec![]
                    },
                    diff: d,
                }
            })
            .collect();
        let config_findings = crate::rules::values::non_finite_findings(&local);
        let mut summary = Summary::default();
        let severities = differences.iter().map(|d| d.diff.severity);
        for severity in severities.chain(config_findings.iter().map(|d| d.severity)) {
            match severity {
                Severity::Error => summary.errors += 1,
                Severity::Warning => summary.warnings += 1,
                Severity::Info => summary.infos += 1,
            }
        }
        DiffReport {
            local,
            authority,
            target,
            differences,
            config_findings,
            summary,
        }
    }

    /// Whether the report fails the gate.
    pub fn fails(&self, strict: bool) -> bool {
        self.summary.fails(strict)
    }

    /// The `dflash-check fix <dir> <authority args>` command that repairs the file: with
    /// `--prune` when a key only the local file has is an error (`fix` keeps such keys unless
    /// told to remove them, and would leave the error).
    pub fn fix_command(&self) -> String {
        let mut parts = vec![
            "dflash-check".to_string(),
            "fix".to_string(),
            shell_words::quote(&self.local.dir().display().to_string()).into_owned(),
        ];
        parts.extend(
            self.authority
                .cli_args
                .iter()
                .map(|a| shell_words::quote(a).into_owned()),
        );
        let only_local_error = self
            .differences
            .iter()
            .any(|d| d.diff.kind == DiffKind::OnlyLocal && d.diff.severity == Severity::Error);
        if only_local_error {
            parts.push("--prune".into());
        }
        parts.join(" ")
    }

    /// The differences as diagnostics, located in the local file.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        self.diagnostics_shown(false)
    }

    /// [`DiffReport::diagnostics`] as the pipeline reports them: a difference named by where
    /// the local file holds it (its path, and its message starting with it), a layout line at
    /// no path. Built so at once: prefixing them afterwards wrote every message and path a
    /// second time (issue 44).
    pub fn located_diagnostics(&self) -> Vec<Diagnostic> {
        self.diagnostics_shown(true)
    }

    fn diagnostics_shown(&self, located: bool) -> Vec<Diagnostic> {
        let file = self.local.path_text();
        self.differences
            .iter()
            .map(|d| {
                let diff = &d.diff;
                let path = diff.local_path.clone().unwrap_or_else(|| diff.path.clone());
                let (line, column) = self.local.doc.position_of(&path);
                let code = diff.kind.code();
                // A token field shows every id decoded and anything else as written, so a
                // string or a float in an id list is never hidden behind the decoded ids.
                let show = if diff::is_token_field(&diff.path) {
                    crate::text::short_ids
                } else {
                    crate::text::short_value
                };
                let local = show(diff.local.as_ref(), &d.local_tokens);
                let authority = show(diff.authority.as_ref(), &d.authority_tokens);
                let shown_path = match (located, diff.kind) {
                    (false, _) => diff.path.to_text(),
                    (true, DiffKind::Layout) => String::new(),
                    (true, _) => path.to_text(),
                };
                // Written at its final size: a `format!` of four parts grew its string two or
                // three times (reallocations were a tenth of `check`'s instructions, issue 44).
                let message = match (diff.kind, &diff.note) {
                    (DiffKind::Layout, Some(note)) => note.clone(),
                    (kind, _) => {
                        const HERE: &str = " here, ";
                        const THERE: &str = " in the authority";
                        let mut m = String::with_capacity(
                            shown_path.len()
                                + 2
                                + local.len()
                                + HERE.len()
                                + authority.len()
                                + THERE.len(),
                        );
                        if located && kind != DiffKind::Layout {
                            m.push_str(&shown_path);
                            m.push_str(": ");
                        }
                        m.push_str(&local);
                        m.push_str(HERE);
                        m.push_str(&authority);
                        m.push_str(THERE);
                        m
                    }
                };
                let mut tokens = d.local_tokens.clone();
                tokens.extend(d.authority_tokens.iter().cloned());
                let mut diag = Diagnostic::new(code, diff::info(code), shown_path, message)
                    .severity(diff.severity)
                    .file(file.clone())
                    .span(line, column)
                    .tokens(tokens);
                if let Some(a) = &diff.authority {
                    diag = diag.expected(a.to_serde());
                }
                diag
            })
            .collect()
    }
}
