//! Every code's documentation, gathered from the families that raise them.
//!
//! `diagnostic::codes` names every code; each family documents its own beside the code that
//! raises it: rule families declare a [`Rule`](crate::diagnostic::rule::Rule) per code next to
//! its function, and [`rules`] lists them all through [`Documented`]; the codes that are the
//! tool's own judgement rather than a rule's keep their [`CodeInfo`] beside their family's
//! (launch's about its inputs in `launch`), or here in [`check`] for check's verdict codes,
//! whose raising code reads files and so stays in the `dflash-check` crate. This module sits above all of them and answers
//! `dflash-check explain CODE` and the generated docs/rules.md for every code alike.

pub mod check;

use crate::diagnostic::rule::{Documented, Rule, RuleFamily};
use crate::diagnostic::{Code, CodeInfo};

/// Every rule of every rule family, in a stable order.
pub fn rules() -> Vec<&'static dyn Documented> {
    let mut all: Vec<&'static dyn Documented> = crate::rules::all_rules()
        .into_iter()
        .map(|r| r as &'static dyn Documented)
        .collect();
    all.extend(documented(crate::rules::deployment::RULES));
    all.extend(documented(crate::diff::rules::RULES));
    all.extend(
        crate::weights::all_rules()
            .into_iter()
            .map(|r| r as &'static dyn Documented),
    );
    all.extend(documented(crate::launch::rules::RULES));
    all.extend(documented(crate::acceptance::rules::RULES));
    all
}

/// A family's rules as the registry sees them.
fn documented<F: RuleFamily>(
    rules: &'static [Rule<F>],
) -> impl Iterator<Item = &'static dyn Documented> {
    rules.iter().map(|r| r as &'static dyn Documented)
}

/// The rule that raises `code`, when its family is a rule family.
pub fn rule(code: Code) -> Option<&'static dyn Documented> {
    rules().into_iter().find(|r| r.code() == code)
}

/// The documentation of any code.
pub fn info(code: Code) -> &'static CodeInfo {
    match code {
        Code::Diff(c) => crate::diff::info(c),
        Code::Lint(c) => crate::rules::info(c),
        Code::Deployment(c) => crate::rules::deployment::info(c),
        Code::Check(c) => check::info(c),
        Code::Weights(c) => crate::weights::info(c),
        Code::Launch(c) => crate::launch::info(c),
        Code::Acceptance(c) => crate::acceptance::info(c),
    }
}

/// The severities by engine and release a code's rule declares (lint, deployment and weights
/// rules): its one table, then the tables of its cases.
pub fn by_engine(code: Code) -> Vec<&'static crate::rules::ByEngine> {
    match code {
        Code::Lint(c) => crate::rules::tables_of(c),
        Code::Deployment(c) => crate::rules::deployment::tables(c),
        Code::Weights(c) => crate::weights::by_engine(c),
        _ => Vec::new(),
    }
}

/// The markdown table of every code, for docs/rules.md: family, code, severity, what it
/// catches, and its source. Generated from the registry (`cargo run --example gen_docs`); a
/// test fails when the committed file is stale.
pub fn codes_table() -> String {
    let mut out = String::from(
        "| family | code | severity | by engine | applies to | needs | what it catches | source |\n|---|---|---|---|---|---|---|---|\n",
    );
    for code in Code::all() {
        let i = info(code);
        let (applies, needs) = match rule(code) {
            Some(r) => {
                let needs = r.needs();
                let needs = if needs.is_empty() {
                    "its input".to_string()
                } else {
                    needs.join("; ")
                };
                (r.scope(), needs)
            }
            None => ("—".to_string(), "—".to_string()),
        };
        let tables = by_engine(code);
        let rows = if tables.is_empty() {
            "—".to_string()
        } else {
            let lines: Vec<String> = tables.iter().flat_map(|b| b.lines()).collect();
            escape(&lines.join("<br>"))
        };
        out.push_str(&format!(
            "| {} | `{}` | {} | {} | {} | {} | {} | {} |\n",
            code.family(),
            code.as_str(),
            i.severity.as_str(),
            rows,
            escape(&applies),
            escape(&needs),
            escape(i.summary),
            escape(crate::evidence::source_text(code.as_str()))
        ));
    }
    out
}

/// The short table of lint codes for docs/commands.md (the config rules, and the deployment rules
/// `lint --engine` runs): code, severity, summary.
pub fn readme_table() -> String {
    summary_table(|code| matches!(code, Code::Lint(_) | Code::Deployment(_)))
}

/// One family's codes for its own page (docs/weights.md, docs/launch.md): code, severity and
/// what it catches, for every code [`Code::family`] names `family`, in the registry's order.
/// Generated like [`codes_table`], so the page cannot drift from `explain`.
pub fn family_table(family: &str) -> String {
    summary_table(|code| code.family() == family)
}

/// Code, severity and summary of every code `keep` selects, in the registry's order.
fn summary_table(keep: impl Fn(Code) -> bool) -> String {
    let mut out = String::from("| code | severity | what it catches |\n|---|---|---|\n");
    for code in Code::all().into_iter().filter(|c| keep(*c)) {
        let i = info(code);
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            code.as_str(),
            i.severity.as_str(),
            escape(i.summary)
        ));
    }
    out
}

/// The renamed codes for docs/rules.md: each old name and the code that replaced it, accepted
/// until the next release.
pub fn aliases_table() -> String {
    let mut out = String::from("| old code | now | accepted until |\n|---|---|---|\n");
    for (old, code) in crate::diagnostic::codes::ALIASES {
        out.push_str(&format!(
            "| `{old}` | `{}` | the next release |\n",
            code.as_str()
        ));
    }
    out
}

fn escape(s: &str) -> String {
    s.replace('|', "\\|")
}

/// Replaces the text between `<!-- BEGIN GENERATED: name -->` and `<!-- END GENERATED: name -->`
/// in `doc` with `body`. `None` if the markers are missing.
pub fn replace_generated(doc: &str, name: &str, body: &str) -> Option<String> {
    let begin = format!("<!-- BEGIN GENERATED: {name} -->");
    let end = format!("<!-- END GENERATED: {name} -->");
    let b = doc.find(&begin)? + begin.len();
    let e = doc[b..].find(&end)? + b;
    Some(format!("{}\n{body}{}", &doc[..b], &doc[e..]))
}

/// The markdown of docs/evidence.md's generated part: the commits the evidence was read at, and
/// every code with its evidence locations, judgement or pending part, and each code's severity
/// as `severity` gives it (the registry's, which gathers every family's documentation, is the
/// main crate's while launch's rules are). `cargo run --example gen_docs` writes it;
/// tests/docs.rs fails when it is stale.
pub fn evidence_markdown() -> String {
    use crate::evidence::{evidence, for_code, judgement, pending, short, Entry};
    use std::collections::BTreeMap;

    let ev = evidence();
    let mut commits: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for e in ev.evidence {
        if let (Entry::Source { repo, .. } | Entry::Absence { repo, .. }, Some(rev)) =
            (e, e.revision())
        {
            *commits.entry((repo, rev)).or_default() += 1;
        }
    }
    let mut out = String::from("Sources the line-level evidence was read at:\n\n| repository | commit or release | entries |\n|---|---|---|\n");
    for ((repo, commit), n) in &commits {
        out.push_str(&format!("| {repo} | `{commit}` | {n} |\n"));
    }
    out.push_str("\n| code | severity | evidence | status |\n|---|---|---|---|\n");
    for code in Code::all() {
        let name = code.as_str();
        let locations: Vec<String> = for_code(name)
            .map(|e| match e {
                Entry::Source {
                    repo, path, lines, ..
                } => format!(
                    "`{repo}` `{path}`@{}:{}-{}",
                    short(e.revision().unwrap_or_default()),
                    lines[0],
                    lines[1]
                ),
                Entry::Absence {
                    repo,
                    commit,
                    identifiers,
                    ..
                } => {
                    format!(
                        "absence of `{}` in `{repo}`@{}",
                        identifiers.join("`, `"),
                        short(commit)
                    )
                }
                Entry::Report { url, .. } => format!("<{url}>"),
            })
            .collect();
        let status = match (judgement(name), pending(name)) {
            (Some(why), _) => format!("judgement: {why}"),
            (None, Some(why)) if locations.is_empty() => format!("pending: {why}"),
            (None, Some(why)) => format!("partly evidenced; pending: {why}"),
            (None, None) => "evidenced".to_string(),
        };
        out.push_str(&format!(
            "| `{name}` | {} | {} | {} |\n",
            info(code).severity.as_str(),
            if locations.is_empty() {
                "—".to_string()
            } else {
                locations.join("<br>")
            },
            status.replace('|', "\\|")
        ));
    }
    out
}

/// The engine table for docs/engines.md: one line per engine row — its name for `--engine`, how
/// its lines start, its images, the releases read and its default window — generated from
/// `engine::table::ROWS`, so the page cannot drift from the code.
pub fn engines_table() -> String {
    use crate::engine::{line_text, range_text, Engine, Entrypoint};
    let mut out = String::from(
        "| engine | `--engine` | lines it starts from | images | releases read | default window |\n\
         |---|---|---|---|---|---|\n",
    );
    for engine in Engine::all() {
        let row = engine.spec();
        let starts: Vec<String> = row
            .entrypoints
            .iter()
            .filter_map(|e| match e {
                Entrypoint::Program { name, prefix, then } => Some(format!(
                    "`{name}{}{}`",
                    if *prefix { "…" } else { "" },
                    then.iter().map(|w| format!(" {w}")).collect::<String>()
                )),
                Entrypoint::Module { module, then } => Some(format!(
                    "`python -m {module}{}`",
                    then.iter().map(|w| format!(" {w}")).collect::<String>()
                )),
                Entrypoint::Image { .. } => None,
            })
            .collect();
        // A platform starts from its base engine's lines.
        let starts = match row.platform {
            Some(p) if starts.is_empty() => vec![format!("{}'s lines", p.base.display())],
            _ => starts,
        };
        let images: Vec<String> = row
            .images
            .iter()
            .flat_map(|i| i.repos.iter().map(|r| format!("`{r}`")))
            .collect();
        let (from, to) = row.releases.window;
        out.push_str(&format!(
            "| {} | `{}`{} | {} | {} | {} | {} |\n",
            row.display,
            row.name,
            row.aliases
                .iter()
                .map(|a| format!(", `{a}`"))
                .collect::<String>(),
            starts.join(", "),
            if images.is_empty() {
                "—".to_string()
            } else {
                images.join(", ")
            },
            row.releases.read.join(", "),
            range_text(engine, from, to),
        ));
    }
    out.push_str("\nWhy each window:\n\n");
    for engine in Engine::all() {
        let row = engine.spec();
        out.push_str(&format!(
            "- **{}**: {}\n",
            row.display,
            escape(row.releases.window_why)
        ));
    }
    let platforms: Vec<Engine> = Engine::all().filter(|e| e.platform().is_some()).collect();
    if !platforms.is_empty() {
        out.push_str(
            "\nPlatforms built on another engine (their lines start it; a bare line stays that engine's): \
             each is named by its image, `--engine NAME@X`, the pin file's `engine` key or an environment \
             variable only it reads; its rows are its own where it has them, else the base engine's at the \
             release each of its releases pins:\n\n",
        );
    }
    for engine in platforms {
        let p = engine.platform().expect("a platform");
        let pins: Vec<String> = p
            .pins
            .iter()
            .map(|(own, base)| {
                format!("{} → {}", line_text(engine, *own), line_text(p.base, *base))
            })
            .collect();
        out.push_str(&format!(
            "- **{}** on {}: {} (read from {}); environment: {}\n",
            engine.display(),
            p.base.display(),
            pins.join(", "),
            escape(p.pins_from),
            p.env
                .iter()
                .map(|e| format!("`{e}`"))
                .collect::<Vec<_>>()
                .join(", "),
        ));
    }
    out
}

/// The opening of docs/engines.md's list of the target classes an engine's rows say lack a fact.
fn lacking_head(engine: crate::engine::Engine, what: crate::engine::What) -> String {
    match what {
        crate::engine::What::LayerCapture(m, _) => format!(
            "{} target architectures whose model class has no hook for a {m} drafter \
             (`set_{}_layers_to_capture`), so the drafter fails at start-up (`engine-unsupported`)",
            engine.display(),
            if m == "dspark" { "dspark_layers_to_capture` or `set_dflash" } else { m }
        ),
        _ => format!(
            "{} target architectures whose model class lacks `SupportsEagle3`, so an EAGLE-3, DFlash or \
             DSpark drafter on them is refused at load (\"Model does not support EAGLE3 interface\"; \
             `engine-unsupported`)",
            engine.display()
        ),
    }
}

/// The capability rows for docs/engines.md: what each engine release can serve (an
/// architecture registered, a method accepted), the releases it holds at and the code whose
/// evidence cites it, generated from `engine::capabilities`.
pub fn capabilities_table() -> String {
    use crate::engine::Capabilities;
    let mut out = String::from("| engine | can | at | evidence under |\n|---|---|---|---|\n");
    let mut seen = Vec::new();
    // Kinds read row by row for hundreds of names (target classes) are listed after the table,
    // by what they lack: one paragraph per engine and fact.
    let mut lacking: Vec<(String, Vec<String>)> = Vec::new();
    for c in crate::engine::capability::rows() {
        if crate::engine::capability::explicit(c.engine, c.what) {
            if !c.holds {
                let head = lacking_head(c.engine, c.what);
                let entry = format!("`{}` ({})", c.what.name(), c.span());
                match lacking.iter_mut().find(|(h, _)| *h == head) {
                    Some((_, list)) => list.push(entry),
                    None => lacking.push((head, vec![entry])),
                }
            }
            continue;
        }
        if seen.contains(&(c.engine, c.what)) {
            continue;
        }
        seen.push((c.engine, c.what));
        out.push_str(&format!(
            "| {} | {} | {} | `{}` |\n",
            c.engine.display(),
            escape(&c.what.describe()),
            Capabilities::where_held(c.engine, c.what).unwrap_or_default(),
            c.evidence
        ));
    }
    for (head, list) in &lacking {
        out.push_str(&format!(
            "\n{head}, at the releases read: {}.\n",
            list.join(", ")
        ));
    }
    if !lacking.is_empty() {
        out.push_str(
            "\nArchitectures not listed either have it at every release read, were not settled by the \
             scans (scripts/scan-aux-targets.py, scripts/scan-sglang-aux-targets.py), or are absent from \
             the registry (vLLM serves them with its transformers backend, which has the interface; \
             SGLang's has none of the hooks, so such a target is not judged there either).\n",
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every code has a summary, an explanation and a cited source, so `explain` never comes
    /// back empty.
    #[test]
    fn every_code_is_documented() {
        for code in Code::all() {
            let i = info(code);
            assert!(!i.summary.is_empty(), "{code}: no summary");
            assert!(!i.explanation.is_empty(), "{code}: no explanation");
            assert!(
                !crate::evidence::source_text(code.as_str()).is_empty(),
                "{code}: no source"
            );
        }
    }
}
