//! The live acceptance against the drafter's own profile (`speculation_profile.json`, read by
//! `rules::profile`): the threshold becomes the profile's acceptance length × (1 − tolerance)
//! instead of the break-even point ([`threshold`]; `acceptance-below-threshold` fails below
//! it, naming the profile and its `measurement_conditions`), and where the engine exports
//! per-position counters (vLLM's `vllm:spec_decode_num_accepted_tokens_per_pos`, accepted at
//! position i over drafts: the profile's marginal rate) `acceptance-below-profile` names the
//! positions below the profile's × (1 − tolerance) and the likely cause. SGLang exports the
//! mean only: the mean is compared. Pure: the profile is read by the caller.

use super::compute::PositionAcceptance;
use super::cx::{Applies, Cx, Need, Rule};
use super::text::{fmt2, fmt3};
use super::verdict::{Measurement, ProfileBar, Threshold};
use super::AcceptanceCode;
use crate::diagnostic::{CodeInfo, Severity};
use crate::rules::profile::Profile;

/// How far below its profile a drafter's live acceptance may be before it fails, by default:
/// a served workload is rarely the one measured (dataset, temperature, concurrency), and
/// acceptance moves with it by several percent (`--profile-tolerance`, docs/acceptance.md).
pub const DEFAULT_TOLERANCE: f64 = 0.10;

/// The threshold a measured profile sets (`None` for a stub or a profile without a mean or
/// marginals: the caller falls back to the break-even point).
pub fn threshold(profile: &Profile, tolerance: f64) -> Option<Threshold> {
    let al = profile.acceptance_length()?;
    let file = profile.file.path.display().to_string();
    let conditions = profile
        .conditions
        .as_deref()
        .map(|c| format!(", measured under {c}"))
        .unwrap_or_default();
    Some(Threshold {
        value: al * (1.0 - tolerance),
        source: format!(
            "the drafter's profile {file} (acceptance length {} × (1 − {tolerance}){conditions})",
            fmt2(al)
        ),
        profile: Some(ProfileBar {
            file,
            mean_accept_length: al,
            tolerance,
            marginal_accept_rates: profile.marginal.clone(),
            num_speculative_tokens: profile.num_speculative_tokens,
            measurement_conditions: profile.conditions.clone(),
        }),
    })
}

pub(super) const BELOW_PROFILE: Rule = Rule {
    code: AcceptanceCode::BelowProfile,
    info: CodeInfo {
        severity: Severity::Warning,
        summary: "positions accepted less often than the drafter's own speculation profile says",
        explanation: "Given the drafter (`acceptance --drafter DIR`, `doctor`), its speculation_profile.json \
says how often each position is accepted when the drafter is healthy: the marginal rate P(the first i+1 drafts \
accepted), which is what vLLM's per-position counter measures (accepted at position i / drafts). A position \
below the profile's rate × (1 − --profile-tolerance) is named with both numbers and the profile's \
measurement_conditions. From position 1: the drafter, its target layers, its mask token or the target are not \
the ones measured; from a later position: a cliff (sliding-window draft layers run as full attention) or a K \
above the one measured. A workload unlike the measured one (dataset, temperature) lowers every position a little; \
the tolerance allows for that. The acceptance length itself is judged by acceptance-below-threshold, whose \
threshold becomes the profile's acceptance length × (1 − tolerance).",
    },
    applies: Applies::Every,
    needs: &[Need::Profile, Need::PerPosition],
    check: below_profile,
};

/// The positions (1-based) below the profile, with (measured, profile).
fn below(per_position: &[PositionAcceptance], bar: &ProfileBar) -> Vec<(u32, f64, f64)> {
    let Some(rates) = &bar.marginal_accept_rates else {
        return Vec::new();
    };
    per_position
        .iter()
        .zip(rates)
        .filter(|(p, &r)| p.acceptance < r * (1.0 - bar.tolerance))
        .map(|(p, &r)| (p.position, p.acceptance, r))
        .collect()
}

fn below_profile(cx: &mut Cx) {
    let (Some(bar), Measurement::Counters(w)) = (
        cx.threshold.and_then(|t| t.profile.as_ref()),
        cx.measurement,
    ) else {
        return;
    };
    let low = below(&w.per_position, bar);
    let Some(&(first, _, _)) = low.first() else {
        return;
    };
    let listed: Vec<String> = low
        .iter()
        .map(|(p, m, r)| format!("position {p}: {} < {}", fmt3(*m), fmt3(*r)))
        .collect();
    let cause = if first == 1 {
        "from position 1: not the drafter, target layers, mask token or target that were measured"
    } else {
        "from a later position: a cliff (sliding-window draft layers run as full attention) or a K above the one measured"
    };
    let conditions = bar
        .measurement_conditions
        .as_deref()
        .map(|c| format!("; the profile was measured under {c}"))
        .unwrap_or_default();
    let message = format!(
        "accepted less often than the drafter's profile {} (× (1 − {})): {}; likely cause {cause}{conditions}",
        bar.file,
        bar.tolerance,
        listed.join(", ")
    );
    cx.emit("vllm:spec_decode_num_accepted_tokens_per_pos", message);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acceptance::verdict::tests::vllm;

    fn bar(rates: &[f64]) -> ProfileBar {
        ProfileBar {
            file: "speculation_profile.json".into(),
            mean_accept_length: 1.0 + rates.iter().sum::<f64>(),
            tolerance: 0.1,
            marginal_accept_rates: Some(rates.to_vec()),
            num_speculative_tokens: Some(rates.len() as u64),
            measurement_conditions: Some("{\"dataset\":\"mt_bench\"}".into()),
        }
    }

    #[test]
    fn names_the_positions_below_the_profile() {
        let Measurement::Counters(w) = vllm(&[0.8, 0.2, 0.1]) else {
            unreachable!()
        };
        let low = below(&w.per_position, &bar(&[0.8, 0.6, 0.4]));
        assert_eq!(low.iter().map(|l| l.0).collect::<Vec<_>>(), vec![2, 3]);
        assert!(below(&w.per_position, &bar(&[0.85, 0.21, 0.1])).is_empty());
    }
}
