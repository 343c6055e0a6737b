#!/usr/bin/env python3
"""Regenerates docs/rules.md from the Rule tables in src/rules/*.rs (run from the repo root).
tests/lint_rules.rs checks that every rule has its row."""
import re

ORDER = ["shape", "layers", "mask", "attention", "tokens", "engine", "eagle"]
rows = []
for m in ORDER:
    s = open(f"src/rules/{m}.rs").read()
    for blk in re.findall(r"Rule \{(.*?)\n    \},", s, re.S):
        get = lambda k: re.search(k + r': "((?:[^"\\]|\\.)*)"', blk).group(1).replace('\\"', '"')
        sev = re.search(r"severity: Severity::(\w+)", blk).group(1).lower()
        needs = re.search(r"needs: Needs::(\w+)", blk).group(1).lower()
        rows.append((get("code"), sev, needs, get("summary"), get("source")))
P = "\\|"
out = [
    "# Lint rules", "",
    "`dflash-check lint DRAFTER [--target DIR] [--engine vllm|sglang ...]` runs these rules; `dflash-check explain CODE`",
    "prints the full explanation of one, `dflash-check explain` lists them all. Codes are stable (a test snapshots the",
    "list). Severities: **error**: certainly broken for this target or engine (exit 1); **warning**: very likely wrong",
    "(exit 1 only with `--deny warnings`); **info**: worth knowing. Some severities depend on the family or engine:",
    "`target-layer-ids-formula` is info for DFlash2 and the speculators format; `target-layer-ids-last-layer` is an error",
    "under `--engine sglang`; `mixed-layout` is info when both spellings agree.", "",
    "*Needs*: `config`, the drafter config alone; `target`, the target's facts (`--target DIR`, or the built-in facts of",
    "a known target the drafter matches; listed under *skipped* when unavailable; `--no-builtin` turns the built-in facts",
    "off); `engine`, `--engine` with `--speculative-config` (vLLM) or `--num-draft-tokens` (SGLang).", "",
    "| code | severity | needs | what it catches | source |", "|---|---|---|---|---|",
]
for code, sev, needs, summ, src in rows:
    out.append("| `%s` | %s | %s | %s | %s |" % (code, sev, needs, summ.replace("|", P), src.replace("|", P)))
out += [
    "", "Families (`src/rules/family.rs`): `dflash` (`DFlashDraftModel`), `dflash2` (`DFlash2DraftModel` or",
    "`conv_*`/`selector_*` fields), `eagle3` (an `*Eagle3` architecture, `eagle_config`, `eagle_aux_hidden_state_layer_ids`,",
    "`draft_vocab_size`), `speculators` (`speculators_model_type`, `speculators_config`; aux ids are DFlash ids + 1). A config",
    "of none of these exits 2 unless `--family` forces one. Rules in `mask`, `layers` (except `num-target-layers-mismatch`),",
    "`attention` and `engine` apply to DFlash-like drafters; `eagle` rules to EAGLE-3 ones; `shape` and `tokens` to all.", "",
]
open("docs/rules.md", "w").write("\n".join(out))
