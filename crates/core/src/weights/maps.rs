//! Rules about the vocabulary maps by value: a `d2t` whose ids fall outside the target's
//! vocabulary or that is all zeros for a reduced vocabulary, several draft ids mapped to one
//! target id, a `t2d` that disagrees with `d2t`. (Presence and length are `vocab`'s.)
//!
//! `d2t` holds one offset per draft id: the target id of draft id `i` is `i + d2t[i]` (vLLM's
//! `compute_logits` and `get_top_tokens`, SGLang's `hot_token_id`). `t2d` is a mask over target
//! ids, true at the ids the draft vocabulary holds; no engine read loads it. These are the only
//! tensors whose data is ever read: the main crate reads the bytes of the tensors [`wanted`]
//! names (locally by one seek, on the Hub by one range request each) into
//! [`WeightsHeaders::map_data`]; the rules here judge those bytes and never read anything. A
//! map whose data is not in hand (an absent shard, offline with nothing cached, a dtype no
//! engine loads as ids) is not judged, and nothing is said.

use super::cx::{Cx, Need, Rule, KNOWN_LAYOUTS};
use super::view::{canonical, View};
use super::vocab::target_vocab_text;
use super::{Tensor, WeightsCode, WeightsHeaders};
use crate::diagnostic::{CodeInfo, Severity};

pub(super) const RULES: &[Rule] = &[D2T_VALUES, D2T_DUPLICATES, T2D_DISAGREES];

/// Most bytes read of one map tensor. A `d2t` of a 256k-token draft vocabulary is 2 MiB of
/// int64 and a `t2d` of a 256k-token target 256 KiB of bool: a tensor past 16 MiB is not a map
/// any trainer writes, and is not read.
pub const MAX_MAP_BYTES: u64 = 16 << 20;

/// How many examples a message names.
const EXAMPLES: usize = 3;

/// The dtypes a map is decoded from: the integer types (an engine copies them into its
/// int64 map) and `BOOL` (for `t2d`). Floats are not ids: such a map is not judged.
fn element_bytes(dtype: &str) -> Option<usize> {
    Some(match dtype {
        "BOOL" | "U8" | "I8" => 1,
        "U16" | "I16" => 2,
        "U32" | "I32" => 4,
        "U64" | "I64" => 8,
        _ => return None,
    })
}

/// The map tensors whose data the rules judge: the first tensor named `d2t` or `t2d` (after
/// the `model.` prefix is stripped), of a dtype [`element_bytes`] decodes, at most
/// [`MAX_MAP_BYTES`]. The readers read exactly these, each at its header's offsets.
pub fn wanted(headers: &WeightsHeaders) -> Vec<&Tensor> {
    let mut out: Vec<&Tensor> = Vec::new();
    for t in headers.tensors() {
        let canon = canonical(&t.name).0;
        if (canon == "d2t" || canon == "t2d")
            && !out.iter().any(|o| canonical(&o.name).0 == canon)
            && element_bytes(&t.dtype).is_some()
            && t.bytes() <= MAX_MAP_BYTES
        {
            out.push(t);
        }
    }
    out
}

/// The values of `t` from its bytes (little-endian, its dtype), or `None` when the bytes are
/// not exactly its shape's (the readers check that; a hand-made [`WeightsHeaders`] may not).
/// An unsigned value past `i64::MAX` saturates: it is out of every vocabulary anyway.
fn values(t: &Tensor, bytes: &[u8]) -> Option<Vec<i64>> {
    let size = element_bytes(&t.dtype)?;
    if bytes.len() as u64 != t.parameters().checked_mul(size as u64)? {
        return None;
    }
    let signed = t.dtype.starts_with('I');
    Some(
        bytes
            .chunks_exact(size)
            .map(|c| {
                let mut b = [0u8; 8];
                b[..size].copy_from_slice(c);
                let negative = signed && c[size - 1] & 0x80 != 0;
                if negative {
                    b[size..].fill(0xff);
                }
                let v = u64::from_le_bytes(b);
                if signed {
                    v as i64
                } else {
                    i64::try_from(v).unwrap_or(i64::MAX)
                }
            })
            .collect(),
    )
}

/// A `d2t` whose data is in hand and whose length is the draft vocabulary, with the sizes it
/// is judged against. (Another length is `weights-d2t-length`'s.)
struct D2t<'a> {
    tensor: &'a Tensor,
    offsets: Vec<i64>,
    draft_vocab: u64,
    target_vocab: u64,
}

impl D2t<'_> {
    /// The target id of draft id `i`, when it is inside the target's vocabulary.
    fn target(&self, i: usize) -> Option<u64> {
        let id = (i as i64).checked_add(self.offsets[i])?;
        u64::try_from(id).ok().filter(|&id| id < self.target_vocab)
    }

    /// `i + d2t[i]` as a number to print (it may be negative or past the vocabulary).
    fn raw_target(&self, i: usize) -> i128 {
        i as i128 + i128::from(self.offsets[i])
    }

    /// Whether every draft id maps inside the target's vocabulary.
    fn in_range(&self) -> bool {
        (0..self.offsets.len()).all(|i| self.target(i).is_some())
    }
}

fn d2t_of<'a>(v: &'a View) -> Option<D2t<'a>> {
    let l = v.layout.as_ref()?;
    let (draft_vocab, target_vocab) = (l.sizes.draft_vocab?, l.target_vocab?);
    let tensor = *v.names.by_name.get("d2t")?;
    if tensor.shape != [draft_vocab] {
        return None;
    }
    let offsets = values(tensor, v.headers.data_of(tensor)?)?;
    Some(D2t {
        tensor,
        offsets,
        draft_vocab,
        target_vocab,
    })
}

/// The `t2d` mask when its data is in hand and its length is the target vocabulary.
fn t2d_of<'a>(v: &'a View) -> Option<(&'a Tensor, Vec<bool>)> {
    let target_vocab = v.layout.as_ref()?.target_vocab?;
    let tensor = *v.names.by_name.get("t2d")?;
    if tensor.shape != [target_vocab] {
        return None;
    }
    let mask = values(tensor, v.headers.data_of(tensor)?)?;
    Some((tensor, mask.into_iter().map(|x| x != 0).collect()))
}

/// "a; b; c (and 7 more)": the first [`EXAMPLES`] of `items`.
fn examples(items: &[String], total: usize) -> String {
    let mut s = items
        .iter()
        .take(EXAMPLES)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ");
    if total > EXAMPLES {
        s.push_str(&format!(" (and {} more)", total - EXAMPLES));
    }
    s
}

const D2T_VALUES: Rule = Rule {
    code: WeightsCode::D2tValues,
    info: CodeInfo {
        severity: Severity::Error,
        summary: "the d2t tensor maps draft ids outside the target vocabulary, or is all zeros for a reduced vocabulary",
        explanation: "`d2t` holds offsets: the target id of draft id i is i + d2t[i]. vLLM scatters the draft \
logits to those ids (`compute_logits`) or adds the offset to the drafted id (`get_top_tokens`), and SGLang turns \
them into the ids it drafts (`hot_token_id`): an id past the target vocabulary indexes out of bounds when the \
engine drafts (a device-side assert that stops it), and a negative one is read from the end of the vocabulary. \
Values written as target ids instead of offsets land there. A d2t of zeros for a draft vocabulary smaller than \
the target's reads draft id i as target id i, the same as no map: acceptance collapses with no error (a warning \
when `t2d` marks exactly those first ids, so the two maps agree on that vocabulary). Regenerate d2t as \
target id − draft id from the draft vocabulary the drafter was trained with. Judged from the tensor's data \
(at most 16 MiB read, by one seek or one range request); a map whose data was not read is not judged.",
    },
    applies: KNOWN_LAYOUTS,
    needs: &[Need::DraftVocab, Need::TargetVocab],
    check: d2t_values,
};

fn d2t_values(cx: &mut Cx) {
    let v = cx.v;
    let Some(m) = d2t_of(v) else { return };
    let vocab = target_vocab_text(cx);
    let bad: Vec<usize> = (0..m.offsets.len())
        .filter(|&i| m.target(i).is_none())
        .collect();
    if !bad.is_empty() {
        let shown: Vec<String> = bad
            .iter()
            .map(|&i| {
                format!(
                    "d2t[{i}] = {} maps draft id {i} to target id {}",
                    m.offsets[i],
                    m.raw_target(i)
                )
            })
            .take(EXAMPLES)
            .collect();
        // Target ids written where offsets belong are each inside the vocabulary on their own.
        let ids_not_offsets = bad
            .iter()
            .all(|&i| u64::try_from(m.offsets[i]).is_ok_and(|o| o < m.target_vocab));
        let fix = if ids_not_offsets {
            "Its values look like target ids, not offsets: d2t holds target id − draft id; regenerate it \
             as d2t[i] = target_id[i] − i"
        } else {
            "Regenerate d2t as offsets (target id − draft id) into this vocabulary from the draft \
             vocabulary the drafter was trained with, or check that the target is the drafter's"
        };
        let message = format!(
            "`{}` maps {} of {} draft ids outside {vocab} ({} tokens, ids 0 to {}): {}; the engine indexes \
             past its vocabulary when it drafts them (vLLM and SGLang stop on a device-side assert). {fix}",
            m.tensor.name,
            bad.len(),
            m.draft_vocab,
            m.target_vocab,
            m.target_vocab.saturating_sub(1),
            examples(&shown, bad.len()),
        );
        cx.emit(&m.tensor.name, &v.file_of(m.tensor), message);
        return;
    }
    if m.draft_vocab < m.target_vocab && m.offsets.iter().all(|&o| o == 0) {
        all_zeros(cx, &m, vocab);
    }
}

/// A zero `d2t` on a reduced vocabulary: an error, a warning when `t2d` marks exactly the
/// first `draft_vocab` target ids (both maps then describe that vocabulary).
fn all_zeros(cx: &mut Cx, m: &D2t, vocab: &str) {
    let v = cx.v;
    let d = m.draft_vocab as usize;
    let t2d_agrees = t2d_of(v).is_some_and(|(_, mask)| {
        mask.iter().take(d).all(|&b| b) && !mask.iter().skip(d).any(|&b| b)
    });
    let (severity, tail) = if t2d_agrees {
        (
            Severity::Warning,
            format!(
                "`t2d` marks exactly target ids 0 to {}, so the two maps agree on a vocabulary of the first \
                 {d} target ids; trainers keep the most frequent tokens instead: check that these are the maps \
                 the drafter was trained with",
                d - 1
            ),
        )
    } else {
        (
            Severity::Error,
            "the same as no map: every drafted id becomes the wrong token and acceptance collapses with no \
             error; ship the d2t the drafter was trained with (d2t[i] = target id of draft id i − i)"
                .to_string(),
        )
    };
    let message = format!(
        "`{}` is all zeros while the draft vocabulary ({d}) is smaller than {vocab} ({}): draft id i is read \
         as target id i, so the drafter can only draft the first {d} target ids; {tail}",
        m.tensor.name, m.target_vocab
    );
    cx.emit_as(severity, &m.tensor.name, &v.file_of(m.tensor), message);
}

const D2T_DUPLICATES: Rule = Rule {
    code: WeightsCode::D2tDuplicates,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "the d2t tensor maps several draft ids to one target id",
        explanation: "A map built from a draft vocabulary gives each draft id its own target id. Where \
several draft ids map to one target id, no engine refuses it: vLLM scatters their logits to the same target \
id and keeps one, SGLang drafts that token under each of the ids, and the target tokens the lost ids stood for \
are never drafted. Acceptance drops by what those tokens were worth, so the map was edited or built for another \
vocabulary: regenerate d2t from the draft vocabulary's token list.",
    },
    applies: KNOWN_LAYOUTS,
    needs: &[Need::DraftVocab, Need::TargetVocab],
    check: d2t_duplicates,
};

fn d2t_duplicates(cx: &mut Cx) {
    let v = cx.v;
    let Some(m) = d2t_of(v).filter(D2t::in_range) else {
        return;
    };
    // (target id, draft id), sorted: the draft ids of one target id sit side by side.
    let mut pairs: Vec<(u64, usize)> = (0..m.offsets.len())
        .filter_map(|i| m.target(i).map(|t| (t, i)))
        .collect();
    pairs.sort_unstable();
    let mut shared: Vec<String> = Vec::new();
    let mut count = 0;
    for group in pairs.chunk_by(|a, b| a.0 == b.0).filter(|g| g.len() > 1) {
        count += 1;
        if shared.len() < EXAMPLES {
            let ids: Vec<String> = group.iter().map(|p| p.1.to_string()).collect();
            let (last, rest) = ids.split_last().unwrap_or((&ids[0], &[]));
            shared.push(format!(
                "draft ids {} and {last} {} map to target id {}",
                rest.join(", "),
                if group.len() == 2 { "both" } else { "all" },
                group[0].0
            ));
        }
    }
    if count == 0 {
        return;
    }
    let unused = pairs.len() - pairs.chunk_by(|a, b| a.0 == b.0).count();
    let message = format!(
        "`{}` maps {count} target id(s) from more than one draft id: {}; {unused} of the {} draft ids \
         draft a token another one already drafts. A map built from a vocabulary gives each draft id its own target \
         id: regenerate d2t from the draft vocabulary's token list",
        m.tensor.name,
        examples(&shared, count),
        m.draft_vocab
    );
    cx.emit(&m.tensor.name, &v.file_of(m.tensor), message);
}

const T2D_DISAGREES: Rule = Rule {
    code: WeightsCode::T2dDisagrees,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "the t2d mask is not true exactly at the target ids d2t maps to",
        explanation: "`t2d` marks, per target id, whether the draft vocabulary holds it: it agrees with \
`d2t` when it is true exactly at the ids i + d2t[i], draft_vocab_size of them. vLLM and SGLang skip t2d at \
load and draft through d2t alone, so a disagreement breaks nothing they do (a warning: a convention, not \
enforced), but it says the two maps were built from different token lists, and one of them is not the \
drafter's. Regenerate both from the draft vocabulary the drafter was trained with.",
    },
    applies: KNOWN_LAYOUTS,
    needs: &[Need::DraftVocab, Need::TargetVocab],
    check: t2d_disagrees,
};

fn t2d_disagrees(cx: &mut Cx) {
    let v = cx.v;
    // A d2t outside the vocabulary is `weights-d2t-values`' error; t2d is not compared with it.
    let Some(m) = d2t_of(v).filter(D2t::in_range) else {
        return;
    };
    let Some((t2d, mask)) = t2d_of(v) else { return };
    let mut mapped = vec![false; mask.len()];
    let mut unmarked: Vec<String> = Vec::new();
    let mut unmarked_count = 0;
    for i in 0..m.offsets.len() {
        let Some(t) = m.target(i) else { continue };
        mapped[t as usize] = true;
        if !mask[t as usize] {
            unmarked_count += 1;
            unmarked.push(format!("target id {t} (draft id {i})"));
        }
    }
    let extra: Vec<usize> = (0..mask.len()).filter(|&t| mask[t] && !mapped[t]).collect();
    let marked = mask.iter().filter(|&&b| b).count();
    if unmarked_count == 0 && extra.is_empty() && marked as u64 == m.draft_vocab {
        return;
    }
    let mut parts = vec![format!(
        "`{}` marks {marked} target ids and draft_vocab_size is {}",
        t2d.name, m.draft_vocab
    )];
    if unmarked_count > 0 {
        parts.push(format!(
            "it is false at {unmarked_count} ids `{}` maps to: {}",
            m.tensor.name,
            examples(&unmarked, unmarked_count)
        ));
    }
    if !extra.is_empty() {
        let shown: Vec<String> = extra.iter().map(|t| format!("target id {t}")).collect();
        parts.push(format!(
            "it is true at {} ids no draft id maps to: {}",
            extra.len(),
            examples(&shown, extra.len())
        ));
    }
    let message = format!(
        "{}. vLLM and SGLang skip t2d and draft through d2t alone, so nothing breaks, but the two maps were \
         built from different token lists: regenerate both from the drafter's draft vocabulary",
        parts.join("; ")
    );
    cx.emit(&t2d.name, &v.file_of(t2d), message);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(dtype: &str, n: u64) -> Tensor {
        let size = element_bytes(dtype).unwrap() as u64;
        Tensor {
            name: "d2t".into(),
            dtype: dtype.into(),
            shape: vec![n],
            data_offsets: [0, n * size],
            shard: "model.safetensors".into(),
        }
    }

    #[test]
    fn values_decode_each_integer_dtype_and_refuse_a_wrong_length() {
        let t = tensor("I64", 2);
        let mut b = (-3i64).to_le_bytes().to_vec();
        b.extend(151_000i64.to_le_bytes());
        assert_eq!(values(&t, &b), Some(vec![-3, 151_000]));
        assert_eq!(values(&t, &b[..15]), None);
        assert_eq!(
            values(&tensor("I32", 1), &(-7i32).to_le_bytes()),
            Some(vec![-7])
        );
        assert_eq!(
            values(&tensor("I16", 1), &(-2i16).to_le_bytes()),
            Some(vec![-2])
        );
        assert_eq!(
            values(&tensor("U16", 1), &0xffffu16.to_le_bytes()),
            Some(vec![65535])
        );
        assert_eq!(values(&tensor("BOOL", 3), &[0, 1, 0]), Some(vec![0, 1, 0]));
        assert_eq!(
            values(&tensor("U64", 1), &u64::MAX.to_le_bytes()),
            Some(vec![i64::MAX])
        );
        let mut f = tensor("I64", 1);
        f.dtype = "F32".into();
        assert_eq!(values(&f, &[0; 4]), None);
    }

    /// An EAGLE-3 head of draft vocabulary 4 over 16 target ids, holding only `d2t` (I32: an
    /// engine copies it into its int64 map) and `t2d` (U8), with their data: the codes of the
    /// value rules, and their messages.
    fn judge(d2t: &[i32], t2d: &[u8], with_data: bool) -> Vec<(String, Severity, String)> {
        let cfg = crate::config::parse(
            std::path::Path::new("d/config.json"),
            br#"{"architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama",
                "hidden_size": 8, "num_attention_heads": 2, "num_key_value_heads": 1,
                "intermediate_size": 16, "num_hidden_layers": 1, "vocab_size": 16,
                "draft_vocab_size": 4}"#,
        )
        .unwrap();
        let d2t_bytes: Vec<u8> = d2t.iter().flat_map(|v| v.to_le_bytes()).collect();
        let n = d2t_bytes.len() as u64;
        let tensors = vec![
            Tensor {
                name: "d2t".into(),
                dtype: "I32".into(),
                shape: vec![d2t.len() as u64],
                data_offsets: [0, n],
                shard: "model.safetensors".into(),
            },
            Tensor {
                name: "t2d".into(),
                dtype: "U8".into(),
                shape: vec![t2d.len() as u64],
                data_offsets: [n, n + t2d.len() as u64],
                shard: "model.safetensors".into(),
            },
        ];
        let map_data = [("d2t", d2t_bytes), ("t2d", t2d.to_vec())]
            .into_iter()
            .filter(|_| with_data)
            .map(|(name, bytes)| super::super::MapData {
                shard: "model.safetensors".into(),
                name: name.into(),
                bytes,
            })
            .collect();
        let headers = WeightsHeaders {
            source: "d".into(),
            index: None,
            shards: vec![crate::weights::Shard {
                file: "model.safetensors".into(),
                display: "d/model.safetensors".into(),
                header_bytes: 0,
                file_size: 8 + n + t2d.len() as u64,
                metadata: Default::default(),
                tensors,
            }],
            missing_shards: vec![],
            requests: 0,
            body_bytes: 0,
            map_data,
        };
        crate::weights::run(&cfg, &headers, None)
            .diagnostics
            .into_iter()
            .filter(|d| RULES.iter().any(|r| d.code == r.code.into()))
            .map(|d| (d.code.to_string(), d.severity, d.message))
            .collect()
    }

    fn mask(ids: &[usize]) -> Vec<u8> {
        (0..16).map(|t| u8::from(ids.contains(&t))).collect()
    }

    #[test]
    fn the_value_rules_judge_the_data_and_say_nothing_without_it() {
        // The trainer's map of ids 1, 5, 6, 12: clean.
        assert_eq!(judge(&[1, 4, 4, 9], &mask(&[1, 5, 6, 12]), true), vec![]);
        // A negative target id: out of range, and not "ids written as offsets".
        let got = judge(&[1, 4, -3, 9], &mask(&[1, 5, 6, 12]), true);
        assert_eq!(got.len(), 1, "{got:?}");
        let (code, severity, message) = &got[0];
        assert_eq!(
            (code.as_str(), *severity),
            ("weights-d2t-values", Severity::Error)
        );
        assert!(
            message.contains("d2t[2] = -3 maps draft id 2 to target id -1")
                && message.contains("Regenerate d2t as offsets"),
            "{message}"
        );
        // Two draft ids on target id 5, and t2d marks 12, which no draft id reaches.
        let got = judge(&[1, 4, 3, 9], &mask(&[1, 5, 6, 12]), true);
        let codes: Vec<&str> = got.iter().map(|g| g.0.as_str()).collect();
        assert_eq!(
            codes,
            ["weights-d2t-duplicates", "weights-t2d-disagrees"],
            "{got:?}"
        );
        assert!(
            got[0]
                .2
                .contains("draft ids 1 and 2 both map to target id 5"),
            "{got:?}"
        );
        // Zeros with a t2d of the first 4 ids: both maps agree, a warning; without data: silent.
        let got = judge(&[0; 4], &mask(&[0, 1, 2, 3]), true);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].1, Severity::Warning);
        assert_eq!(judge(&[1, 4, -3, 9], &mask(&[0]), false), vec![]);
    }
}
