//! Two vocabularies compared: every way they differ, each with the first ids that show it.
//!
//! The walk over the ids is one pass over two arrays of borrowed text, so two 150,000-token
//! vocabularies compare in well under a millisecond; everything is collected (sizes, tokenizer
//! model, pre-tokenizer, added and special tokens, bos/eos and whether they are added, the text
//! of every id) so that one run names every difference, and the rules decide what each costs
//! under each engine.

use serde::Serialize;

use super::Vocabulary;

/// How many differing ids a difference keeps for its message.
pub const FIRST_IDS: usize = 3;

/// Ids whose text differs: how many, and the first few decoded on both sides.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TextDiff {
    pub count: usize,
    /// `(id, text here, text in the target)`, readable (byte-level decoded); `None`: no token.
    pub first: Vec<(u32, Option<String>, Option<String>)>,
}

impl TextDiff {
    fn push(&mut self, id: u32, here: &Vocabulary, target: &Vocabulary) {
        self.count += 1;
        if self.first.len() < FIRST_IDS {
            self.first
                .push((id, here.readable(id), target.readable(id)));
        }
    }
}

/// One way the draft's vocabulary differs from the target's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Difference {
    /// Token counts (`len(tokenizer)`) differ.
    Size { here: u32, target: u32 },
    /// The tokenizer model differs (`BPE` and `Unigram`).
    Model {
        here: Option<String>,
        target: Option<String>,
    },
    /// The pre-tokenizers differ (how text is split before the model sees it).
    PreTokenizer,
    /// Ids both have, with different text (added tokens excluded: see `Added`).
    Text(TextDiff),
    /// Added or special tokens that differ: text, special flag, or present on one side only.
    Added(TextDiff),
    /// bos / eos ids differ.
    Bos {
        here: Option<u32>,
        target: Option<u32>,
    },
    Eos {
        here: Option<u32>,
        target: Option<u32>,
    },
    /// Whether bos / eos is added differs.
    AddBos {
        here: Option<bool>,
        target: Option<bool>,
    },
    AddEos {
        here: Option<bool>,
        target: Option<bool>,
    },
}

/// Every difference of `here` (the draft) from `target`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Comparison {
    pub here: String,
    pub target: String,
    pub here_len: u32,
    pub target_len: u32,
    /// The two tokenizers' own vocabularies, added tokens excluded ([`Vocabulary::base_size`]),
    /// when both were read.
    pub base_sizes: Option<(u32, u32)>,
    pub differences: Vec<Difference>,
    /// Whether the target adds bos / eos: llama.cpp compares the bos (eos) ids only then.
    pub target_adds_bos: bool,
    pub target_adds_eos: bool,
}

impl Comparison {
    /// The difference of this kind, if any.
    pub fn find(&self, pick: impl Fn(&Difference) -> bool) -> Option<&Difference> {
        self.differences.iter().find(|d| pick(d))
    }
}

/// Compares the draft's vocabulary (`here`) with the target's.
pub fn compare(here: &Vocabulary, target: &Vocabulary) -> Comparison {
    let mut out = Comparison {
        here: here.source.clone(),
        target: target.source.clone(),
        here_len: here.tokens.len(),
        target_len: target.tokens.len(),
        base_sizes: here.base_size.zip(target.base_size),
        differences: Vec::new(),
        target_adds_bos: target.add_bos.unwrap_or(false),
        target_adds_eos: target.add_eos.unwrap_or(false),
    };
    let d = &mut out.differences;
    if here.tokens.len() != target.tokens.len() {
        d.push(Difference::Size {
            here: here.tokens.len(),
            target: target.tokens.len(),
        });
    }
    match (&here.ggml_model, &target.ggml_model) {
        (Some(h), Some(t)) if h != t => d.push(Difference::Model {
            here: Some(format!("{h} (tokenizer.ggml.model)")),
            target: Some(format!("{t} (tokenizer.ggml.model)")),
        }),
        (Some(_), Some(_)) => {}
        _ if here.model != target.model => d.push(Difference::Model {
            here: here.model.clone(),
            target: target.model.clone(),
        }),
        _ => {}
    }
    // An HF pre-tokenizer (JSON) and a GGUF one (`ggml:NAME`) are in two forms: not compared.
    let form = |p: &Option<String>| p.as_deref().map(|p| p.starts_with("ggml:"));
    if here.pre_tokenizer != target.pre_tokenizer
        && form(&here.pre_tokenizer) == form(&target.pre_tokenizer)
    {
        d.push(Difference::PreTokenizer);
    }
    let (text, added) = walk(here, target);
    if text.count > 0 {
        d.push(Difference::Text(text));
    }
    if added.count > 0 {
        d.push(Difference::Added(added));
    }
    if here.bos != target.bos {
        d.push(Difference::Bos {
            here: here.bos,
            target: target.bos,
        });
    }
    if here.eos != target.eos {
        d.push(Difference::Eos {
            here: here.eos,
            target: target.eos,
        });
    }
    if here.add_bos.unwrap_or(false) != target.add_bos.unwrap_or(false) {
        d.push(Difference::AddBos {
            here: here.add_bos,
            target: target.add_bos,
        });
    }
    if here.add_eos.unwrap_or(false) != target.add_eos.unwrap_or(false) {
        d.push(Difference::AddEos {
            here: here.add_eos,
            target: target.add_eos,
        });
    }
    out
}

/// The id-by-id walk over the ids both sides have: regular tokens by text, added tokens by
/// text and special flag (an id added on one side only counts as an added-token difference).
fn walk(here: &Vocabulary, target: &Vocabulary) -> (TextDiff, TextDiff) {
    let mut text = TextDiff::default();
    let mut added = TextDiff::default();
    let common = here.tokens.len().min(target.tokens.len());
    for id in 0..common {
        if here.tokens.get(id) == target.tokens.get(id) {
            continue;
        }
        if here.added.contains_key(&id) || target.added.contains_key(&id) {
            continue;
        }
        text.push(id, here, target);
    }
    let ids: std::collections::BTreeSet<u32> = here
        .added
        .keys()
        .chain(target.added.keys())
        .copied()
        .collect();
    for id in ids {
        if here.added.get(&id) != target.added.get(&id) {
            added.push(id, here, target);
        }
    }
    (text, added)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab(tokens: &[&str], added: &[(u32, &str, bool)]) -> Vocabulary {
        let mut v = Vocabulary::default();
        for (id, t) in tokens.iter().enumerate() {
            v.tokens.set(id as u32, t);
        }
        for &(id, t, special) in added {
            v.added.insert(id, (t.to_string(), special));
            v.tokens.set(id, t);
        }
        v
    }

    #[test]
    fn identical_vocabularies_have_no_difference() {
        let a = vocab(&["a", "b"], &[(2, "<s>", true)]);
        assert!(compare(&a, &a.clone()).differences.is_empty());
    }

    #[test]
    fn every_difference_is_named_with_its_first_ids() {
        let a = vocab(&["a", "b", "c", "d"], &[(4, "<s>", true)]);
        let b = vocab(
            &["a", "x", "c", "y"],
            &[(4, "<s>", false), (5, "<e>", true)],
        );
        let c = compare(&a, &b);
        assert_eq!(
            c.differences,
            vec![
                Difference::Size { here: 5, target: 6 },
                Difference::Text(TextDiff {
                    count: 2,
                    first: vec![
                        (1, Some("b".into()), Some("x".into())),
                        (3, Some("d".into()), Some("y".into()))
                    ]
                }),
                Difference::Added(TextDiff {
                    count: 2,
                    first: vec![
                        (4, Some("<s>".into()), Some("<s>".into())),
                        (5, None, Some("<e>".into()))
                    ]
                }),
            ]
        );
    }
}
