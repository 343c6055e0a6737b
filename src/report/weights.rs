//! The `weights` report: where the headers came from and what was checked, the findings, then
//! the tensor table grouped by decoder layer and the totals as sections; as text or as JSON.

use std::collections::BTreeMap;

use std::borrow::Cow;

use serde_json::json;

use super::human::count;
use super::style::Painter;
use super::{RenderOptions, Report, Status, Verdict};
use crate::diagnostic::Diagnostic;
use crate::weights::{Skipped, Tensor, Totals, WeightsHeaders, WeightsReport};

/// `layers.3` for a layer tensor (aliases and a `model.` prefix understood), else `None`.
fn group_of(name: &str) -> Option<(u64, String)> {
    let n = name.strip_prefix("model.").unwrap_or(name);
    if let Some(rest) = n.strip_prefix("midlayer.") {
        return Some((0, rest.to_string()));
    }
    let rest = n.strip_prefix("layers.")?;
    let (idx, tail) = rest.split_once('.')?;
    let idx: u64 = idx.parse().ok()?;
    Some((idx, tail.to_string()))
}

/// Tensors by group: non-layer tensors first (`None`), then layers in order; names sorted.
fn groups(headers: &WeightsHeaders) -> BTreeMap<Option<u64>, Vec<(&Tensor, String)>> {
    let mut g: BTreeMap<Option<u64>, Vec<(&Tensor, String)>> = BTreeMap::new();
    for t in headers.tensors() {
        match group_of(&t.name) {
            Some((l, tail)) => g.entry(Some(l)).or_default().push((t, tail)),
            None => g.entry(None).or_default().push((t, t.name.clone())),
        }
    }
    for rows in g.values_mut() {
        rows.sort_by(|a, b| a.1.cmp(&b.1));
    }
    g
}

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `2469135780` → `2.30 GiB`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.2} {}", UNITS[u])
    }
}

fn shape_text(s: &[u64]) -> String {
    let items: Vec<String> = s.iter().map(u64::to_string).collect();
    format!("[{}]", items.join(", "))
}

/// The header: where the headers came from, how many files and tensors, what was checked.
fn header(r: &WeightsReport, p: Painter) -> Vec<String> {
    let h = &r.headers;
    let origin = match &r.hub {
        Some(o) => format!("{} at {} ({}, {})", o.repo, o.sha, o.revision, o.freshness),
        None => h.source.clone(),
    };
    let mut lines = vec![
        format!("{} {origin}", p.bold("dflash-check weights")),
        format!(
            "  files     {}, {} tensors",
            count(h.shards.len(), "file"),
            h.totals().tensors
        ),
    ];
    if let Some(e) = &r.engine {
        lines.push(format!("  engine    {}", e.header()));
    }
    if let Some(g) = &r.gguf {
        lines.extend(g.iter().cloned());
        lines.push(
            "  checked   the GGUF metadata against its tensor table, as llama.cpp's loader reads them"
                .into(),
        );
        return lines;
    }
    match &r.config {
        None => lines.push(
            "  checked   nothing: no config.json beside the weights (tensor table only)".into(),
        ),
        Some(c) => {
            lines.push(format!(
                "  config    {c}{}",
                r.family
                    .as_ref()
                    .map_or(String::new(), |f| format!(" ({f} drafter)"))
            ));
            if let Some(t) = &r.target {
                lines.push(format!("  target    {t}"));
            }
            match r.family.as_deref() {
                None if r.mtp_head.is_some() => lines.push(format!(
                    "  checked   the index and shards, and the MTP head the target declares ({})",
                    r.mtp_head.as_deref().unwrap_or_default()
                )),
                None => lines.push(
                    "  checked   only the index and shards: the config is no known drafter family"
                        .into(),
                ),
                Some("speculators") => lines.push(
                    "  checked   only the index and shards: the speculators format names its tensors differently"
                        .into(),
                ),
                Some(_) => {}
            }
            lines.extend(skipped_lines(&r.skipped));
        }
    }
    lines
}

/// The rules not run for want of a fact, grouped by what they lacked:
/// `  skipped   for want of the draft vocabulary size (…): weights-d2t-missing, …`.
fn skipped_lines(skipped: &[Skipped]) -> Vec<String> {
    crate::pipeline::skipped_by_need(skipped)
        .into_iter()
        .map(|(needs, codes)| format!("  skipped   for want of {needs}: {}", codes.join(", ")))
        .collect()
}

/// The tensor table grouped by decoder layer.
fn table(h: &WeightsHeaders, p: Painter) -> Vec<String> {
    let g = groups(h);
    let name_w = g
        .values()
        .flatten()
        .map(|(_, n)| n.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    let dtype_w = h.tensors().map(|t| t.dtype.len()).max().unwrap_or(5).max(5);
    let shape_w = h
        .tensors()
        .map(|t| shape_text(&t.shape).len())
        .max()
        .unwrap_or(5)
        .max(5);
    let mut lines = vec![format!(
        "  {}",
        p.dim(&format!(
            "{:<name_w$}  {:<dtype_w$}  {:<shape_w$}  shard",
            "name", "dtype", "shape"
        ))
    )];
    for (layer, rows) in &g {
        let params = rows
            .iter()
            .fold(0u64, |sum, (t, _)| sum.saturating_add(t.parameters()));
        let title = match layer {
            Some(l) => format!("layers.{l}"),
            None => "model".to_string(),
        };
        lines.push(format!(
            "{}  {}",
            p.bold(&title),
            p.dim(&format!(
                "({}, {} parameters)",
                count(rows.len(), "tensor"),
                thousands(params)
            ))
        ));
        for (t, name) in rows {
            lines.push(format!(
                "  {name:<name_w$}  {:<dtype_w$}  {:<shape_w$}  {}",
                t.dtype,
                shape_text(&t.shape),
                t.shard
            ));
        }
    }
    lines
}

/// The totals, the shards missing and what reading the headers took.
fn totals(h: &WeightsHeaders, has_hub: bool) -> Vec<String> {
    let t: Totals = h.totals();
    let mut lines = vec![format!(
        "total: {} tensors, {} parameters, {} bytes of data ({}) in {} of {} bytes",
        thousands(t.tensors as u64),
        thousands(t.parameters),
        thousands(t.bytes),
        human_bytes(t.bytes),
        count(h.shards.len(), "file"),
        thousands(t.file_bytes)
    )];
    let by: Vec<String> = t
        .by_dtype
        .iter()
        .map(|(d, p, b)| format!("{d} {} parameters ({})", thousands(*p), human_bytes(*b)))
        .collect();
    if !by.is_empty() {
        lines.push(format!("by dtype: {}", by.join("; ")));
    }
    if !h.missing_shards.is_empty() {
        lines.push(format!("missing shards: {}", h.missing_shards.join(", ")));
    }
    if h.requests > 0 || has_hub {
        lines.push(format!(
            "headers read with {} range request(s), {} body bytes",
            h.requests,
            thousands(h.body_bytes)
        ));
    }
    lines
}

/// `weights` renders in every format.
impl Report for WeightsReport {
    fn command(&self) -> &'static str {
        "weights"
    }

    fn diagnostics(&self) -> Cow<'_, [Diagnostic]> {
        Cow::Borrowed(&self.diagnostics)
    }

    fn fails(&self, deny_warnings: bool) -> bool {
        WeightsReport::fails(self, deny_warnings)
    }

    fn engine_dependent(&self) -> bool {
        true
    }

    /// The engine `--engine` named (`None`: what fails under any engine is a warning).
    fn engine(&self) -> Option<crate::rules::EngineRelease> {
        self.engine.clone()
    }

    fn header(&self, p: Painter) -> Vec<String> {
        header(self, p)
    }

    fn sections(&self, options: &RenderOptions) -> Vec<Vec<String>> {
        vec![
            table(&self.headers, options.painter),
            totals(&self.headers, self.hub.is_some()),
        ]
    }

    /// Without a config beside the weights nothing is checked, and the verdict says so.
    fn verdict(&self, options: &RenderOptions) -> Verdict {
        match &self.config {
            None if self.gguf.is_none() => {
                Verdict::new(Status::NothingChecked).detail("tensor table only")
            }
            None => Verdict::new(Status::of(options.fails)),
            Some(_) => Verdict::new(Status::of(options.fails)),
        }
    }

    fn json_body(&self) -> serde_json::Value {
        json_body(self)
    }

    /// The tensors, one entry each, written from the headers (see [`json_body`]).
    fn write_json_entry(
        &self,
        key: &str,
        map: &mut super::JsonMap<'_, '_, '_>,
    ) -> Option<serde_json::Result<()>> {
        use serde::ser::SerializeMap;
        #[derive(serde::Serialize)]
        struct TensorOutput<'a> {
            name: &'a str,
            dtype: &'a str,
            shape: &'a [u64],
            shard: &'a str,
            layer: Option<u64>,
            data_offsets: [u64; 2],
            parameters: u64,
            bytes: u64,
        }
        struct Tensors<'a>(&'a WeightsHeaders);
        impl serde::Serialize for Tensors<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_seq(self.0.tensors().map(|t| TensorOutput {
                    name: &t.name,
                    dtype: &t.dtype,
                    shape: &t.shape,
                    shard: &t.shard,
                    layer: group_of(&t.name).map(|g| g.0),
                    data_offsets: t.data_offsets,
                    parameters: t.parameters(),
                    bytes: t.bytes(),
                }))
            }
        }
        (key == "tensors").then(|| map.serialize_entry(key, &Tensors(&self.headers)))
    }
}

/// The report's own JSON fields (the envelope adds the diagnostics and summary). `tensors` is
/// a placeholder: `write_json_entry` writes one entry per tensor without a `Value` copy of
/// each (a header at its 50,000-tensor cap holds that many).
fn json_body(r: &WeightsReport) -> serde_json::Value {
    let h = &r.headers;
    let totals = h.totals();
    let tensors: Vec<serde_json::Value> = Vec::new();
    let shards: Vec<serde_json::Value> = h
        .shards
        .iter()
        .map(|s| {
            json!({
                "file": s.file,
                "path": s.display,
                "header_bytes": s.header_bytes,
                "file_size": s.file_size,
                "tensors": s.tensors.len(),
                "metadata": s.metadata,
            })
        })
        .collect();
    json!({
        "source": h.source,
        "hub": r.hub,
        "index": h.index.as_ref().map(|i| &i.display),
        "shards": shards,
        "missing_shards": h.missing_shards,
        "tensors": tensors,
        "totals": {
            "tensors": totals.tensors,
            "parameters": totals.parameters,
            "bytes": totals.bytes,
            "file_bytes": totals.file_bytes,
            "by_dtype": totals.by_dtype.iter().map(|(d, p, b)| json!({"dtype": d, "parameters": p, "bytes": b})).collect::<Vec<_>>(),
        },
        "requests": h.requests,
        "body_bytes": h.body_bytes,
        "config": r.config,
        "family": r.family,
        "target": r.target,
        "skipped": r.skipped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(123), "123");
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(3 << 30), "3.00 GiB");
        assert_eq!(
            group_of("model.layers.12.mlp.up_proj.weight"),
            Some((12, "mlp.up_proj.weight".into()))
        );
        assert_eq!(
            group_of("midlayer.hidden_norm.weight"),
            Some((0, "hidden_norm.weight".into()))
        );
        assert_eq!(group_of("fc.weight"), None);
    }

    /// Skipped rules are listed one line per set of missing facts, codes in run order.
    #[test]
    fn skipped_rules_are_grouped_by_what_they_lack() {
        use crate::weights::{Need, WeightsCode};
        let skipped = [
            Skipped {
                code: WeightsCode::D2tMissing,
                needs: vec![Need::DraftVocab],
            },
            Skipped {
                code: WeightsCode::D2tLength,
                needs: vec![Need::DraftVocab],
            },
            Skipped {
                code: WeightsCode::T2dLength,
                needs: vec![Need::TargetVocab],
            },
        ];
        let lines = skipped_lines(&skipped);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].starts_with("  skipped   for want of the draft vocabulary size"));
        assert!(lines[0].ends_with(": weights-d2t-missing, weights-d2t-length"));
        assert!(lines[1].ends_with(": weights-t2d-length"));
        assert!(skipped_lines(&[]).is_empty(), "nothing skipped: no line");
    }
}
