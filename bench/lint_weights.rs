//! Benchmark helper: `lint` as `dflash-check lint DRAFTER --target TARGET` runs it (load the
//! config, resolve the target, run the rules, render), plus the safetensors header checks the
//! way `lint` runs them (`weights::read_local` + `weights::check`, findings rendered after the
//! lint report). `--no-weights` skips the header checks, so
//! `hyperfine` on the two invocations measures exactly what the checks add (bench/weights.sh).
//!
//! `--repeat N` also times the header step alone in-process (N runs, mean on stderr), free of
//! process start-up noise.
//!
//!     cargo build --release --example lint-weights
//!     target/release/examples/lint-weights [--no-weights] [--repeat N] DRAFTER TARGET

use std::io::Write;
use std::path::{Path, PathBuf};

use dflash_check::report::{self, Format, Painter, RenderOptions};
use dflash_check::{analysis, config, rules, weights};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let with_weights = match args.iter().position(|a| a == "--no-weights") {
        Some(i) => {
            args.remove(i);
            false
        }
        None => true,
    };
    let repeat: Option<u32> = match args.iter().position(|a| a == "--repeat") {
        Some(i) => {
            let n = args.get(i + 1).ok_or("--repeat needs a count")?.parse()?;
            args.drain(i..=i + 1);
            Some(n)
        }
        None => None,
    };
    let [drafter, target] = args.as_slice() else {
        return Err("usage: lint-weights [--no-weights] [--repeat N] DRAFTER TARGET".into());
    };
    let local = config::load(Path::new(drafter))?;
    let choice = analysis::TargetChoice {
        target_dir: Some(PathBuf::from(target)),
        ..Default::default()
    };
    let target = analysis::resolve_target(&choice, &[&local], None)?;
    let report = dflash_check::pipeline::LintRun {
        lint: rules::lint(&local, &rules::LintOptions::default(), &target)?,
        weights_skipped: Vec::new(),
        warnings: Vec::new(),
        authority: None,
    };
    let mut out = Vec::new();
    let p = Painter { enabled: false };
    let options = RenderOptions {
        painter: p,
        deny_warnings: false,
        fails: report.lint.fails(false),
    };
    report::render(&report, Format::Human, &options, &mut out)?;
    let mut failed = report.lint.fails(false);
    if with_weights {
        if let Some(headers) = weights::read_local(&local.path)? {
            let diags = weights::check(&local, &headers, target.facts.as_deref());
            for d in &diags {
                writeln!(out, "{}[{}] {}: {}", d.severity, d.code, d.path, d.message)?;
            }
            writeln!(
                out,
                "weights: {} file(s), {} tensors, {} finding(s)",
                headers.shards.len(),
                headers.tensors().count(),
                diags.len()
            )?;
            failed |= dflash_check::diagnostic::Summary::of(&diags).fails(false);
        }
    }
    if let Some(n) = repeat {
        let n = n.max(1);
        let start = std::time::Instant::now();
        let mut last = None;
        for _ in 0..n {
            last = weights::read_local(&local.path)?;
        }
        let read = start.elapsed() / n;
        let headers = last.ok_or("no weights beside the config")?;
        let start = std::time::Instant::now();
        let mut found = 0;
        for _ in 0..n {
            found += weights::check(&local, &headers, target.facts.as_deref()).len();
        }
        let check = start.elapsed() / n;
        eprintln!(
            "header step, mean of {n} runs: read_local {read:?} + check {check:?} = {:?} ({found} findings)",
            read + check
        );
    }
    std::io::stdout().write_all(&out)?;
    std::process::exit(i32::from(failed));
}
