//! `dflash-check acceptance URL`: the command-line side of the live acceptance check. Flags are
//! validated here; the library scrapes, computes and renders.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use anyhow::Result;
use clap::Args;

use dflash_check::acceptance::{self, scrape, HttpSource, MeasureOptions};
use dflash_check::family::Family;

use super::{finish, DenyArgs, OutputArgs};

pub const ACCEPTANCE_EXAMPLES: &str = "\
Examples:
  dflash-check acceptance http://127.0.0.1:8000 --min-acceptance-length 5
  dflash-check acceptance http://127.0.0.1:30000/metrics --window 30 --format json
  dflash-check acceptance http://127.0.0.1:8000 --model-name Qwen/Qwen3.6-27B
  dflash-check acceptance http://127.0.0.1:8000 --drafter ./models/drafter --profile-tolerance 0.1

vLLM: acceptance length = 1 + Δaccepted / Δdrafts between two scrapes, per-position acceptance
from vllm:spec_decode_num_accepted_tokens_per_pos. SGLang: sglang:spec_accept_length sampled
every second over the window (mean, min, max).

Threshold: --min-acceptance-length, else the drafter's own speculation_profile.json (--drafter
DIR or --profile FILE: its acceptance length × (1 − --profile-tolerance), per position on vLLM),
else the break-even point below which speculative decoding is slower than none: 1 + c (dflash)
or 1 + K·c (eagle), c = --draft-cost-ratio.

Exit codes: 0 at or above the threshold (or none computable), 1 below it (with --deny warnings: \
a warning too, such as a cliff), 2 could not measure (server down, slow past --timeout, not HTTP \
200, malformed metrics, idle server, counter reset, several models without --model-name).";

#[derive(Debug, Args)]
pub struct AcceptanceArgs {
    /// The server's base URL (http://127.0.0.1:8000) or its full /metrics URL.
    pub url: String,
    /// Seconds between the first and the last scrape (fractions allowed: 0.5).
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = parse_window)]
    pub window: f64,
    /// Fail (exit 1) when the acceptance length is below X (1 + accepted tokens per draft).
    /// Without it, the gate is the break-even point (see --draft-cost-ratio).
    #[arg(long, value_name = "X", value_parser = parse_min_length)]
    pub min_acceptance_length: Option<f64>,
    /// The drafter's family, for the break-even point: a block drafter drafts in one forward
    /// per block (1 + c), an EAGLE-3 or MTP head in one forward per drafted token (1 + K·c).
    /// `eagle` is eagle3.
    #[arg(long, value_name = "FAMILY", default_value = "dflash",
          value_parser = super::family_parser(|r| r.rules.acceptance.is_some()))]
    pub draft_family: Family,
    /// Cost of one drafter forward relative to one target forward (c); default 0.15 for
    /// block drafters, 0.05 for EAGLE-3 and MTP heads (docs/acceptance.md, "Break-even").
    #[arg(long, value_name = "C", value_parser = parse_cost_ratio)]
    pub draft_cost_ratio: Option<f64>,
    /// Read this served model (the `model_name` label); required when the server serves several.
    #[arg(long, value_name = "NAME")]
    pub model_name: Option<String>,
    /// The drafter the server runs: its `speculation_profile.json`, when it has one, replaces
    /// the break-even point with what the drafter reaches when healthy (see --profile-tolerance).
    #[arg(long, value_name = "DIR")]
    pub drafter: Option<std::path::PathBuf>,
    /// The drafter's `speculation_profile.json`, named directly (wins over --drafter's).
    #[arg(long, value_name = "FILE")]
    pub profile: Option<std::path::PathBuf>,
    /// How far below its profile the live acceptance may fall before it fails: the threshold is
    /// the profile's acceptance length × (1 − T), and each position's rate likewise.
    #[arg(long, value_name = "T", default_value = "0.1", value_parser = parse_tolerance)]
    pub profile_tolerance: f64,
    /// Seconds each scrape may take, end to end (connect, headers and the whole body).
    #[arg(long, value_name = "SECS", default_value = "5", value_parser = parse_timeout)]
    pub timeout: f64,
    #[command(flatten)]
    pub deny: DenyArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

fn positive_secs(s: &str, max: f64) -> std::result::Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !v.is_finite() || v <= 0.0 || v > max {
        return Err(format!("must be more than 0 and at most {max} seconds"));
    }
    Ok(v)
}

pub(super) fn parse_window(s: &str) -> std::result::Result<f64, String> {
    positive_secs(s, 3600.0)
}

pub(super) fn parse_timeout(s: &str) -> std::result::Result<f64, String> {
    positive_secs(s, 600.0)
}

pub(super) fn parse_cost_ratio(s: &str) -> std::result::Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number"))?;
    if !v.is_finite() || v <= 0.0 || v > 10.0 {
        return Err("a cost ratio is more than 0 and at most 10".to_string());
    }
    Ok(v)
}

pub(super) fn parse_tolerance(s: &str) -> std::result::Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number"))?;
    if !v.is_finite() || !(0.0..1.0).contains(&v) {
        return Err("a tolerance is a fraction, at least 0 and below 1 (0.1 is 10%)".to_string());
    }
    Ok(v)
}

pub(super) fn parse_min_length(s: &str) -> std::result::Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number"))?;
    if !v.is_finite() || v < 1.0 {
        return Err("an acceptance length is at least 1 (the bonus token)".to_string());
    }
    Ok(v)
}

pub fn run_acceptance(args: &AcceptanceArgs, out: &mut Vec<u8>) -> Result<u8> {
    let url = scrape::metrics_url(&args.url)?;
    let mut source = HttpSource::new(url.clone(), Duration::from_secs_f64(args.timeout))?;
    let options = MeasureOptions {
        window: Duration::from_secs_f64(args.window),
        model_name: args.model_name.clone(),
        min_acceptance_length: args.min_acceptance_length,
        draft_family: args.draft_family,
        draft_cost_ratio: args.draft_cost_ratio,
        profile: acceptance::profile::ProfileOptions {
            drafter_dir: args.drafter.clone(),
            profile_file: args.profile.clone(),
            tolerance: args.profile_tolerance,
        },
    };
    // The report is written at the end; tell a person at a terminal why nothing shows yet.
    let mut stderr = std::io::stderr();
    if stderr.is_terminal() {
        let _ = writeln!(
            stderr,
            "measuring acceptance at {} over {} s …",
            dflash_check::display::shown(url.as_str()),
            args.window
        );
    }
    let report = acceptance::measure(&mut source, &options, &mut std::thread::sleep)?;
    finish(&report, &args.output, args.deny.warnings(), out)
}
