//! How each engine matches a quantization config's exclude list against the modules it builds
//! (engine knowledge: which modules vLLM and SGLang build unquantized for each quant method),
//! and the caps every exclude list is read with: shared by the matchers of [`quant`]
//! (compressed-tensors, quark, ModelOpt, fp8) and [`int4`] (AWQ, GPTQ), which both read lists
//! from files that may be hostile. The weights rules (`weights::mtp`) ask them what a release
//! builds.

pub mod int4;
pub mod quant;

use regex::{RegexSet, RegexSetBuilder};

use crate::json::Node;
use crate::{Error, Result};

/// What to do about a list that is not a list of module names.
pub const LIST_HINT: &str = "make it a list of module names (strings), as the quantizer writes it";

/// Entry `i` of the list at `path`, as a module name: a string of at most [`MAX_ENTRY_BYTES`].
pub fn module_name<'n>(item: &'n Node, path: &str, i: usize) -> Result<&'n str> {
    item.as_str()
        .filter(|s| s.len() <= MAX_ENTRY_BYTES)
        .ok_or_else(|| {
            Error::new(format!(
                "`{path}[{i}]` is not a module name (a string of at most {MAX_ENTRY_BYTES} bytes)"
            ))
            .with_hint(LIST_HINT)
        })
}

/// Most entries an exclude list may hold. Real lists name every excluded module one by one
/// (a few thousand for a 60-layer MoE with per-expert entries); 100,000 is not a list a
/// quantizer writes.
pub const MAX_ENTRIES: usize = 65_536;
/// Most `re:` / wildcard entries compiled into one set.
pub const MAX_PATTERNS: usize = 1_024;
/// The compiled size one pattern, and the whole set, may reach (the `regex` crate's limit).
pub const PATTERN_SIZE_LIMIT: usize = 1 << 20;
/// The NFA memory every kept pattern of one list may use together. Real lists use a few
/// kilobytes (a compressed-tensors list's `re:.*mtp\\..*proj$` about 3 KB; a ModelOpt list's
/// wildcards as much); what is over it is left undecided, so a hostile list costs about what
/// this budget costs to compile and match.
pub const PATTERNS_BUDGET: usize = 256 << 10;
/// Longest entry read; a module name is never this long.
pub const MAX_ENTRY_BYTES: usize = 4096;

/// Whether the config leaves a module unquantized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Excluded from quantization, by this entry.
    Excluded(String),
    /// Built unquantized whatever the list says, for this reason (AWQ, GPTQ: a plain linear).
    Plain(String),
    /// Quantized: no entry matches it under the method.
    Quantized,
    /// A pattern the `regex` crate could not compile might match it, or (AWQ, GPTQ) vLLM and
    /// SGLang build it differently: not judged.
    Undecided,
}

/// Patterns compiled for matching: each alone first (as written, so `x)|(y` cannot escape the
/// anchoring group around it, then anchored), then together as one set.
pub struct Compiled {
    pub set: Option<RegexSet>,
    /// For each pattern of the set, its index among the patterns given.
    pub kept: Vec<usize>,
    /// Indices of the patterns the `regex` crate could not compile (Python-only syntax, over
    /// the size limit, or a set over its limit), in order.
    pub uncompiled: Vec<usize>,
}

/// Compiles `patterns`, each `(as written, anchored source)`: each checked as written for
/// syntax only (so `x)|(y` cannot escape the anchoring group around it), its NFA built alone
/// within [`PATTERN_SIZE_LIMIT`], and kept while the kept patterns' NFAs total at most
/// [`PATTERNS_BUDGET`]; the kept ones compiled together as one set. A pattern over a limit,
/// or after the budget is spent, is left uncompiled (its modules undecided): what a hostile
/// list costs is bounded by the budget, not by its length (1,024 patterns of 4 kB took 10 s
/// and 1 GB compiled alone, issue 41).
pub fn compile(patterns: &[(String, String)]) -> Compiled {
    let parses = |p: &str| regex_syntax::Parser::new().parse(p).is_ok();
    // The NFA of `p` alone, built within `limit` bytes: its size, or `None` over the limit or
    // not compilable.
    let nfa_size = |p: &str, limit: usize| {
        let config = regex_automata::nfa::thompson::Config::new()
            .nfa_size_limit(Some(limit))
            .shrink(false);
        regex_automata::nfa::thompson::Compiler::new()
            .configure(config)
            .build(p)
            .ok()
            .map(|nfa| nfa.memory_usage())
    };
    let mut kept = Vec::new();
    let mut uncompiled = Vec::new();
    let mut left = PATTERNS_BUDGET;
    for (i, (written, source)) in patterns.iter().enumerate() {
        if left == 0 || !parses(written) {
            uncompiled.push(i);
            continue;
        }
        // A pattern over what is left of the budget (or over the limit) spends the rest: its
        // compile stopped there, and what follows is not compiled.
        match nfa_size(source, left.min(PATTERN_SIZE_LIMIT)) {
            Some(n) if n <= left => {
                left -= n;
                kept.push(i);
            }
            _ => {
                left = 0;
                uncompiled.push(i);
            }
        }
    }
    if kept.is_empty() {
        return Compiled {
            set: None,
            kept,
            uncompiled,
        };
    }
    let sources = kept.iter().map(|&i| patterns[i].1.as_str());
    match RegexSetBuilder::new(sources)
        .size_limit(PATTERN_SIZE_LIMIT.saturating_mul(4))
        .build()
    {
        Ok(set) => Compiled {
            set: Some(set),
            kept,
            uncompiled,
        },
        Err(_) => {
            uncompiled.extend(kept);
            uncompiled.sort_unstable();
            Compiled {
                set: None,
                kept: Vec::new(),
                uncompiled,
            }
        }
    }
}
