//! What each release of each engine can do, as data: one [`Capability`] row per engine, fact and
//! release range — a drafter architecture its registry serves, a speculative method it accepts,
//! a target architecture llama.cpp serves with `draft-mtp`, how it reads a field where engines
//! differ — each with the evidence code it is cited under (evidence/evidence.toml). Rules ask
//! [`Capabilities::of`] for the release that serves the line ([`Holds`]): a known release gets
//! yes or no; an unknown one gets every release of the engine's default window, so a rule can
//! say which releases do and which do not.
//!
//! A fact no row names for an engine is [`Holds::Unknown`] there, unless the engine's rows of
//! that kind were read as a whole list ([`complete`]): then a name missing from them is "no".

use super::version::{range_text, Line};
use super::{Engine, EngineRelease};

/// A fact about an engine release (the rows' names are `'static`; a question's may borrow).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum What<'a> {
    /// Its drafter registry serves this architecture (vLLM's `_SPECULATIVE_DECODING_MODELS`).
    DrafterArchitecture(&'a str),
    /// It accepts this speculative method (vLLM's `method`, SGLang's algorithm).
    Method(&'a str),
    /// It serves `--spec-type draft-mtp` on a target of this GGUF architecture (llama.cpp).
    DraftMtpArchitecture(&'a str),
    /// It reads a `null` `target_layer_ids` as absent and falls back to the formula.
    NullLayerIdsAbsent,
    /// It maps ids between a draft model's tokenizer and the target's when the speculative
    /// config sets `use_heterogeneous_vocab`.
    HeterogeneousVocab,
    /// It starts with async scheduling asked for explicitly (vLLM's `--async-scheduling`) and
    /// this speculative method; without the flag it only turns async scheduling off.
    AsyncScheduling(&'a str),
    /// It starts with async scheduling asked for explicitly and the speculative config's
    /// `disable_padded_drafter_batch: true`.
    AsyncSchedulingUnpaddedDrafts,
    /// Its V2 model runner, asked for explicitly (vLLM's `VLLM_USE_V2_MODEL_RUNNER=1`), runs
    /// this speculative method.
    V2Runner(&'a str),
    /// Its model class for a target of this architecture hands a hidden-state drafter (EAGLE-3,
    /// DFlash, DSpark) the target's intermediate hidden states (vLLM's `SupportsEagle3`).
    AuxHiddenStates(&'a str),
    /// Its model class for a target of this architecture (the second name) has the hook that
    /// captures the hidden states a drafter of this method (the first: eagle3, dflash, dspark)
    /// reads (SGLang's `set_eagle3_layers_to_capture`, `set_dflash_layers_to_capture`, …).
    LayerCapture(&'a str, &'a str),
    /// It honours an EAGLE-3 head's `use_aux_hidden_state: false` (feeds it the last hidden
    /// state alone, through an `fc` built for one), instead of concatenating three.
    AuxHiddenStatesOff,
    /// It loads a native checkpoint of this `model_type` (a target that bundles its MTP
    /// layers), named as the drafter, as an MTP drafter: mlx-vlm splits the head out in memory
    /// (`load_drafter` through its `MTP_SPLITTERS` registry).
    NativeMtpCheckpoint(&'a str),
}

impl<'a> What<'a> {
    /// Whether two facts are of one kind (the same variant).
    fn kind_of(self, other: What) -> bool {
        std::mem::discriminant(&self) == std::mem::discriminant(&other)
    }

    /// What to do when the release that serves the line lacks the fact.
    pub fn remedy(self) -> &'static str {
        match self {
            What::AsyncScheduling(_) | What::AsyncSchedulingUnpaddedDrafts => {
                "drop --async-scheduling (the engine then turns async scheduling off itself), or serve \
                 the line with a release that has it"
            }
            What::LayerCapture(..) => {
                "serve the target with a release whose model class has the hook, or use a drafter \
                 that does not read the target's hidden states"
            }
            What::NativeMtpCheckpoint(_) => {
                "split the MTP head into a drafter directory first (`python -m mlx_vlm.split_mtp`) and \
                 name that as --draft-model, or serve the line with a release that loads the checkpoint \
                 itself"
            }
            What::AuxHiddenStates(_) => {
                "serve the target with a release whose model class has it, with `--model-impl \
                 transformers` (vLLM's transformers backend implements it), or use a drafter that \
                 does not read the target's hidden states"
            }
            What::AuxHiddenStatesOff => {
                "serve the head where its use_aux_hidden_state is read (upstream vLLM), or use a \
                 head trained on the three auxiliary hidden states"
            }
            What::V2Runner(_) => {
                "unset VLLM_USE_V2_MODEL_RUNNER (the engine then picks the runner itself), or serve \
                 the line with a release that has it"
            }
            _ => "serve the line with a release that has it",
        }
    }

    /// The name the fact is about (an architecture, a method), for lists; empty for the facts
    /// about no name.
    pub fn name(self) -> &'a str {
        match self {
            What::DrafterArchitecture(n)
            | What::Method(n)
            | What::DraftMtpArchitecture(n)
            | What::AsyncScheduling(n)
            | What::V2Runner(n)
            | What::AuxHiddenStates(n)
            | What::LayerCapture(_, n)
            | What::NativeMtpCheckpoint(n) => n,
            What::NullLayerIdsAbsent
            | What::HeterogeneousVocab
            | What::AsyncSchedulingUnpaddedDrafts
            | What::AuxHiddenStatesOff => "",
        }
    }

    /// How the fact reads after "does not": `register the drafter architecture X`.
    pub fn describe(self) -> String {
        match self {
            What::DrafterArchitecture(a) => format!("register the drafter architecture {a}"),
            What::Method(m) => format!("accept the speculative method {m:?}"),
            What::DraftMtpArchitecture(a) => format!("build a draft-mtp graph for {a} targets"),
            What::NullLayerIdsAbsent => "read a null target_layer_ids as absent".to_string(),
            What::HeterogeneousVocab => {
                "map ids between two tokenizers (use_heterogeneous_vocab)".to_string()
            }
            What::AsyncScheduling(m) => {
                format!("schedule asynchronously (--async-scheduling) with the method {m:?}")
            }
            What::AuxHiddenStates(a) => format!(
                "hand the hidden states of a {a} target to an EAGLE-3, DFlash or DSpark drafter \
                 (its model class's SupportsEagle3 interface)"
            ),
            What::LayerCapture(m, a) => format!(
                "find the hook a {m} drafter needs (set_{}_layers_to_capture) on a {a} target's model class",
                if m == "dspark" { "dspark or set_dflash" } else { m }
            ),
            What::V2Runner(m) => format!(
                "run the method {m:?} on the V2 model runner it was asked for (VLLM_USE_V2_MODEL_RUNNER=1)"
            ),
            What::AsyncSchedulingUnpaddedDrafts => {
                "schedule asynchronously (--async-scheduling) with disable_padded_drafter_batch"
                    .to_string()
            }
            What::NativeMtpCheckpoint(t) => format!(
                "load a {t} checkpoint that bundles its MTP layers as the drafter (it loads the whole \
                 target model, which has no drafter methods: the first request raises AttributeError)"
            ),
            What::AuxHiddenStatesOff => "honour an EAGLE-3 head's use_aux_hidden_state: false (its \
                 EAGLE-3 model always concatenates three hidden states; the head's fc does not \
                 match)"
                .to_string(),
        }
    }
}

/// One fact about an engine, at a range of its releases (both ends inclusive; `None`: as far
/// as read).
#[derive(Debug, Clone, Copy)]
pub struct Capability {
    pub engine: Engine,
    pub what: What<'static>,
    pub since: Option<Line>,
    pub until: Option<Line>,
    /// Whether the fact holds over the range (`false`: a row read as "does not", for kinds
    /// whose unread releases are unknown rather than "no": [`explicit`]).
    pub holds: bool,
    /// The code whose evidence cites it (evidence/evidence.toml).
    pub evidence: &'static str,
}

impl Capability {
    /// The releases the row covers, as text (`0.28 and later`, `up to 0.32`, `0.28–0.33`).
    pub fn span(&self) -> String {
        let engine = self.engine;
        match (self.since, self.until) {
            (None, None) => "every release read".to_string(),
            (Some(a), None) => format!("{} and later", super::line_text(engine, a)),
            (None, Some(b)) => format!("up to {}", super::line_text(engine, b)),
            (Some(a), Some(b)) => range_text(engine, a, b),
        }
    }
}

/// Whether `engine`'s rows of `what`'s kind say "no" only where a row says so: a release no
/// row covers is unknown (the data's `EXPLICIT`; vLLM's architectures served through its
/// transformers backend when its registry lacks them, so an unlisted one is not refused).
pub fn explicit(engine: Engine, what: What) -> bool {
    super::capability_kinds_explicit()
        .iter()
        .any(|(e, w)| *e == engine && w.kind_of(what))
}

/// Whether `engine`'s rows of `what`'s kind list every name read (the data's `COMPLETE`).
pub fn complete(engine: Engine, what: What) -> bool {
    super::capability_lists_read_whole()
        .iter()
        .any(|(e, w)| *e == engine && w.kind_of(what))
}

/// Whether a fact holds for the release that serves a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holds {
    Yes,
    No,
    /// The release is not known and the window's releases disagree: those where it holds and
    /// those where it does not, as text (`0.28–0.34`).
    Partly {
        yes: String,
        no: String,
    },
    /// Nothing was read about it for this engine.
    Unknown,
}

/// The capability rows (the table's module holds them; see [`rows`]).
pub struct Capabilities;

impl Capabilities {
    /// Where `what` holds for `engine`, among the releases read, as text (`0.28 and later`,
    /// `up to 0.32`, `0.28–0.33`); `None` where it holds at none.
    pub fn where_held(engine: Engine, what: What) -> Option<String> {
        let own = rows().iter().any(|c| c.engine == engine && c.what == what);
        if let Some(p) = engine
            .platform()
            .filter(|_| !own && !complete(engine, what))
        {
            return Self::where_held(p.base, what)
                .map(|w| format!("where the {} release it pins does: {w}", p.base.display()));
        }
        let parts: Vec<String> = rows()
            .iter()
            .filter(|c| c.engine == engine && c.what == what && c.holds)
            .map(Capability::span)
            .collect();
        (!parts.is_empty()).then(|| parts.join(", "))
    }

    /// Whether `what` holds for `release` (a known release: its row; an unknown one: across the
    /// engine's default window). A platform with no row of the fact's name (and no whole list
    /// of its kind) holds what its base engine holds at the release it pins.
    pub fn of(release: &EngineRelease, what: What) -> Holds {
        let engine = release.engine;
        let rows: Vec<&Capability> = rows()
            .iter()
            .filter(|c| c.engine == engine && c.what == what)
            .collect();
        let own = !rows.is_empty() || complete(engine, what);
        let explicit = explicit(engine, what);
        let holds_at = |v: Line| {
            if own {
                let covering = || rows.iter().filter(|c| within(c, v));
                if explicit && covering().next().is_none() {
                    return None;
                }
                Some(covering().any(|c| c.holds))
            } else {
                let p = engine.platform()?;
                base_holds(p.base, p.pinned(v), what)
            }
        };
        if let Some(v) = release.version {
            // A release newer than every row: as the newest read.
            let v = v.min(table_newest(engine));
            return match holds_at(v) {
                Some(true) => Holds::Yes,
                Some(false) => Holds::No,
                None => Holds::Unknown,
            };
        }
        let lines = window_lines(engine);
        let known: Vec<(Line, bool)> = lines
            .iter()
            .filter_map(|v| holds_at(*v).map(|h| (*v, h)))
            .collect();
        if known.is_empty() {
            return Holds::Unknown;
        }
        let yes: Vec<Line> = known.iter().filter(|(_, h)| *h).map(|(v, _)| *v).collect();
        let no: Vec<Line> = known.iter().filter(|(_, h)| !*h).map(|(v, _)| *v).collect();
        match (yes.is_empty(), no.is_empty()) {
            (false, true) => Holds::Yes,
            (true, _) => Holds::No,
            (false, false) => Holds::Partly {
                yes: spans(engine, &yes),
                no: spans(engine, &no),
            },
        }
    }
}

/// Whether `what` holds for `base` at its release `v` (`None`: nothing read about it there).
fn base_holds(base: Engine, v: Line, what: What) -> Option<bool> {
    let release = EngineRelease {
        version: Some(v),
        ..EngineRelease::from(base)
    };
    match Capabilities::of(&release, what) {
        Holds::Yes => Some(true),
        Holds::No => Some(false),
        Holds::Partly { .. } | Holds::Unknown => None,
    }
}

/// Whether row `c` holds at `v`.
fn within(c: &Capability, v: Line) -> bool {
    c.since.is_none_or(|s| s <= v) && c.until.is_none_or(|u| v <= u)
}

/// The newest release read of `engine`, as a line every row compares with.
fn table_newest(engine: Engine) -> Line {
    let (_, b) = engine.spec().releases.window;
    b
}

/// The releases read that lie in `engine`'s default window, as lines.
fn window_lines(engine: Engine) -> Vec<Line> {
    super::releases::window_read(engine)
}

/// `0.28–0.30, 0.33`: consecutive releases read as ranges.
fn spans(engine: Engine, lines: &[Line]) -> String {
    let all = window_lines(engine);
    let mut out: Vec<String> = Vec::new();
    let mut run: Option<(Line, Line)> = None;
    for v in &all {
        if lines.contains(v) {
            run = Some(match run {
                Some((s, _)) => (s, *v),
                None => (*v, *v),
            });
        } else if let Some((s, e)) = run.take() {
            out.push(range_text(engine, s, e));
        }
    }
    if let Some((s, e)) = run {
        out.push(range_text(engine, s, e));
    }
    out.join(", ")
}

/// Every capability row.
pub fn rows() -> &'static [Capability] {
    super::capability_rows()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_release_gets_its_row_and_an_unknown_one_the_window() {
        let at = |v: &str| EngineRelease::parse(&format!("vllm@{v}")).unwrap();
        let dflash2 = What::DrafterArchitecture("DFlash2DraftModel");
        assert_eq!(Capabilities::of(&at("0.27"), dflash2), Holds::No);
        assert_eq!(Capabilities::of(&at("0.28"), dflash2), Holds::Yes);
        assert_eq!(Capabilities::of(&at("0.99"), dflash2), Holds::Yes);
        assert_eq!(Capabilities::of(&Engine::Vllm.into(), dflash2), Holds::Yes);
        // A name the whole list does not have: no, at every release.
        let made_up = What::DrafterArchitecture("NoSuchDraftModel");
        assert_eq!(Capabilities::of(&Engine::Vllm.into(), made_up), Holds::No);
        // Nothing read about SGLang's registry: unknown.
        assert_eq!(
            Capabilities::of(&Engine::Sglang.into(), dflash2),
            Holds::Unknown
        );
    }

    #[test]
    fn every_row_cites_evidence_and_holds_somewhere() {
        for c in rows() {
            assert!(!c.evidence.is_empty(), "{c:?}");
            if let (Some(s), Some(u)) = (c.since, c.until) {
                assert!(s <= u, "{c:?}");
            }
        }
    }
}
