//! `explain --format json` says everything the human page says: for every code, each line of
//! `explain CODE` (header, summary, explanation, "Applies to", "Needs", the severity rows by
//! engine, the source, the evidence with its locations, a judgement, a pending part) is found
//! in that code's JSON object (issue 32: the JSON lacked the evidence, the rows, scope and needs).

use serde_json::Value;

fn explain(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .arg("explain")
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "explain {args:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Every string leaf of a JSON value.
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

/// Whether `line` of the human page is said by the code's JSON `j`.
fn said(j: &Value, line: &str) -> bool {
    let mut leaves = Vec::new();
    strings(j, &mut leaves);
    let has = |text: &str| leaves.iter().any(|s| s == text);
    let trimmed = line.trim();
    for label in [
        "Applies to: ",
        "Source: ",
        "Judgement (no engine claim): ",
        "Evidence pending: ",
        "- ",
    ] {
        if let Some(rest) = trimmed.strip_prefix(label) {
            return has(rest);
        }
    }
    if let Some(rest) = trimmed.strip_prefix("Needs: ") {
        let needs: Vec<&str> = j["needs"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        return if needs.is_empty() {
            rest == "its input alone"
        } else {
            needs.join("; ") == rest
        };
    }
    // The rule's one table, then the tables of its cases.
    let tables: Vec<&Value> = std::iter::once(&j["by_engine"])
        .chain(j["by_engine_cases"].as_array().into_iter().flatten())
        .filter(|t| t.is_object())
        .collect();
    if let Some(rest) = trimmed.strip_prefix("no engine: ") {
        return tables
            .iter()
            .any(|t| t["no_engine"].as_str().unwrap_or("not reported") == rest);
    }
    if let Some(case) = trimmed
        .strip_prefix("when ")
        .and_then(|c| c.strip_suffix(':'))
    {
        return tables.iter().any(|t| t["case"].as_str() == Some(case));
    }
    if line.starts_with("  ") && !tables.is_empty() {
        // `  vllm ≤ 0.26: error (NotImplementedError …)`: a row, by its three fields.
        let rows: Vec<&Value> = tables
            .iter()
            .flat_map(|t| t["rows"].as_array().into_iter().flatten())
            .collect();
        if rows.iter().any(|r| {
            let severity = r["severity"].as_str().unwrap_or("not reported");
            trimmed
                == format!(
                    "{}: {severity} ({})",
                    r["versions"].as_str().unwrap(),
                    r["does"].as_str().unwrap()
                )
        }) {
            return true;
        }
    }
    has(trimmed)
}

#[test]
fn the_json_of_every_code_holds_every_line_of_its_page() {
    let all: Value = serde_json::from_str(&explain(&["--format", "json"])).unwrap();
    let codes = all["codes"].as_array().unwrap();
    assert!(codes.len() > 100, "{} codes", codes.len());
    let mut missing = Vec::new();
    for j in codes {
        let code = j["code"].as_str().unwrap();
        let page = explain(&[code]);
        let mut lines = page.lines();
        let header = lines.next().unwrap();
        assert_eq!(
            header,
            format!(
                "{code} ({}, {})",
                j["family"].as_str().unwrap(),
                j["severity"].as_str().unwrap()
            )
        );
        for line in lines {
            // Labels of the page's parts carry nothing of the code's own.
            if line.trim().is_empty()
                || line == "Evidence:"
                || line.starts_with("Severity by engine (")
            {
                continue;
            }
            if !said(j, line) {
                missing.push(format!("{code}: {line}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "lines of `explain CODE` missing from its JSON:\n{}",
        missing.join("\n")
    );
}
