#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 600), one after the other, and prints the
# executions and crashes of each from libFuzzer's final stats.
#
#   fuzz/run.sh 600            # all targets, 10 minutes each
#   fuzz/run.sh 60 json_roundtrip
#
# The toolchain here is stable only; cargo-fuzz needs nightly flags (-Zsanitizer=address), so
# this script sets RUSTC_BOOTSTRAP=1, which lets a stable rustc accept them. Install with
# `cargo install cargo-fuzz`.
#
# Targets: parse_config, json_roundtrip, fix_roundtrip (the minimal-edit rewriter: local config,
# NUL, authority config -> plan -> the output re-parses, no difference is left, bytes outside the
# splices are the original's, fixing again changes nothing); safetensors_header, launch_command,
# metrics_text (the three later input surfaces: no panic, an answer or an error; launch_command
# also reads its input as the options file of an oMLX and a TensorRT-LLM line); glob_match
# (the [[ignore]] path matcher: pattern NUL path, an answer at once and its invariants);
# server_answer (doctor's reading of /get_server_info and /v1/models, and the launch command
# built from it); step_summary (a finding's file NUL path NUL message -> the GitHub annotations
# and the step-summary table: one command and one row, nothing Markdown or HTML acts on).
# gguf_header (the GGUF header reader: no panic, an error or a header within its caps whose
# tensors lie in the file; seeds written by llama.cpp's gguf-py and the bad-input GGUF cases).
# vocab_tokenizer (the draft-vocabulary reader: the same answer read whole and in small pieces,
# every accepted id readable). exclude_lists (a target config's quantization exclude list, every
# method AWQ/GPTQ included, and a verdict for MTP module names in each layout: no panic, the
# same verdict twice). Issue 44's surfaces: k8s_expansion (variable lines NUL a word ->
# Kubernetes' `$(VAR)` expansion: capped, the kubelet's own algorithm's text), tag_pattern (a
# `-hf` tag -> libstdc++'s ECMAScript grammar and the tag check agree, at once), hub_listing (a
# tree listing read in one streaming pass gives what a `Value` reading gave), pin_against (a
# pin's `against` text, in a temporary repository: an accepted file is inside it and a model
# config, the credentials never shown).
#
# Seeds of the last three: the committed bad-input cases (tests/bad-input/cases/{weights,launch,
# metrics}) and the files of tests/launch/files, plus real producers' output written by
# `.venv-hf/bin/python fuzz/seeds.py` (run it first; this script says so when its seeds are
# missing). A nightly toolchain is used when rustup has one (`FUZZ_TOOLCHAIN=+nightly`), else
# stable with RUSTC_BOOTSTRAP=1.
#
# The corpus kept in git (fuzz/corpus/<target>/) is minimized; new inputs found during a run go
# to a scratch copy under fuzz/corpus-work/ (ignored), so a run never dirties the tree.
# Minimize again with: RUSTC_BOOTSTRAP=1 cargo fuzz cmin -O <target> fuzz/corpus-work/<target>,
# then keep at most 190 of the result (spread over sizes, seed-* files left out since they are
# re-added from the fixtures) in fuzz/corpus/<target>/, so the kept corpus stays under 200 files.
set -uo pipefail
cd "$(dirname "$0")/.."

SECONDS_EACH="${1:-600}"
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(parse_config json_roundtrip fix_roundtrip safetensors_header launch_command metrics_text glob_match gguf_header server_answer step_summary vocab_tokenizer exclude_lists k8s_expansion tag_pattern hub_listing pin_against)
export RUSTC_BOOTSTRAP=1
TC="${FUZZ_TOOLCHAIN-}"
if [ -z "$TC" ] && rustup toolchain list 2>/dev/null | grep -q '^nightly'; then TC=+nightly; fi

# Only the targets asked for are built (each build instruments the whole crate).
for t in "${TARGETS[@]}"; do
  cargo $TC fuzz build -O "$t" >/dev/null 2>&1 || cargo $TC fuzz build -O "$t" || exit 2
done

status=0
for t in "${TARGETS[@]}"; do
  work="fuzz/corpus-work/$t"
  mkdir -p "$work" "fuzz/corpus/$t" "fuzz/artifacts/$t"
  cp -n fuzz/corpus/"$t"/* "$work"/ 2>/dev/null || true
  seeds_from() {
    find "$@" -type f -size -64k 2>/dev/null | while read -r f; do
      cp -n "$f" "$work/seed-$(echo "$f" | tr '/' '_')" 2>/dev/null || true
    done
  }
  case "$t" in
    safetensors_header) seeds_from tests/bad-input/cases/weights -name '*.safetensors' ;;
    gguf_header) seeds_from tests/bad-input/cases/gguf -name '*.gguf' ;;
    vocab_tokenizer) seeds_from fixtures tests -name 'tokenizer.json' ;;
    launch_command) seeds_from tests/bad-input/cases/launch tests/launch/files ;;
    metrics_text) seeds_from tests/bad-input/cases/metrics ;;
    server_answer) seeds_from tests/bad-input/cases/server ;;
    # file NUL path NUL message: issue 32's hostile text in each place.
    step_summary)
      i=0
      for triple in 'models/config.json\0dflash_config.mask_token_id\0x\n::error file=README.md::INJECTED' \
                    'm/`x`.json\0a|b\0![i](http://e/x.png) [l](http://e) <img src=x> | $y$ `a`' \
                    'c.json\0\0\033]0;pwned\007 \342\200\256desrever ##[add-mask]word'; do
        i=$((i + 1))
        printf "$triple" > "$work/seed-summary-$i"
      done ;;
    # Pattern NUL path: the globs of docs/ci.md and issue 32's hostile one.
    glob_match)
      i=0
      for pair in 'models/*-DFlash\0models/Qwen3.6-27B-DFlash' 'models/**\0models/a/config.json' \
                  '**/config.json\0config.json' 'm?dels/a/\0models/a' \
                  'models/****************Z\0models/Qwen3.6-27B-DFlash'; do
        i=$((i + 1))
        printf "$pair" > "$work/seed-glob-$i"
      done ;;
    # Variable lines NUL a word: chains of references, unset names, `$$`, an open `$(`.
    k8s_expansion)
      printf 'A=x\nB=$(A)$(A)\nC=$(B)$(UNSET)\0--model $(C) $$(A) $( $(B' > "$work/seed-vars-1"
      printf 'M=Org/Target\nS={"model": "$(M)-draft"}\0--speculative-config $(S)' > "$work/seed-vars-2" ;;
    # The tags whose libstdc++ verdicts tests/launch/ecma/verdicts.tsv records.
    tag_pattern)
      i=0
      cut -f2- tests/launch/ecma/verdicts.tsv | while IFS= read -r tag; do
        i=$((i + 1))
        printf '%s' "$tag" > "$work/seed-tag-$i"
      done ;;
    hub_listing)
      printf '[{"type":"file","path":"a.gguf","size":3,"lfs":{"size":9}},{"type":"directory","path":"d"},{"type":"file","path":"../x.gguf"}]' > "$work/seed-listing-1"
      printf '[{"type":"file","path":"a.gguf","path":"b.gguf","lfs":{"size":"9"},"lfs":{"size":5}}]' > "$work/seed-listing-2" ;;
    pin_against)
      for a in ../creds.json authorities/config.json authorities/in.json authorities/out.json \
               /etc/passwd authorities/creds.json ./authorities/../authorities/config.json; do
        printf '%s' "$a" > "$work/seed-against-$(echo "$a" | tr '/.' '__')"
      done ;;
    # The quantized target configs: published MTP targets, generated weights cases, bad input.
    exclude_lists) seeds_from tests/fixtures/mtp-targets tests/bad-input/cases/weights target/weights-fixtures/cases -name 'config.json' ;;
    # Every JSON file of the fixtures and of the bad-input corpus.
    *) seeds_from fixtures tests/bad-input -name '*.json' ;;
  esac
  case "$t" in
    safetensors_header | launch_command | metrics_text | gguf_header)
      ls "$work" | grep -v '^seed-tests_' | grep -q '^seed-' ||
        echo "$t: no real-producer seeds; run .venv-hf/bin/python fuzz/seeds.py first" >&2 ;;
  esac
  if [ "$t" = fix_roundtrip ]; then
    # Seeds: local NUL authority pairs from the fixtures and the fix golden tests.
    i=0
    for local in fixtures/incident/Qwen3.6-27B-DFlash/config.json fixtures/layout/flat/config.json \
                 fixtures/type-mismatch/config.json; do
      for auth in fixtures/incident/authority/config.json fixtures/layout/nested/config.json; do
        i=$((i + 1))
        { cat "$local"; printf '\0'; cat "$auth"; } > "$work/seed-pair-$i"
      done
    done
    for d in tests/fix/*/; do
      [ -f "$d/input.json" ] && [ -f "$d/authority.json" ] || continue
      i=$((i + 1))
      { cat "$d/input.json"; printf '\0'; cat "$d/authority.json"; } > "$work/seed-pair-$i"
    done
  fi
  before=$(ls "fuzz/artifacts/$t" | wc -l)
  log="fuzz/artifacts/$t.log"
  RUSTC_BOOTSTRAP=1 cargo $TC fuzz run -O "$t" "$work" -- \
    -max_total_time="$SECONDS_EACH" -print_final_stats=1 -max_len=65536 -timeout=10 \
    -rss_limit_mb=2048 >"$log" 2>&1
  rc=$?
  after=$(ls "fuzz/artifacts/$t" | wc -l)
  execs=$(grep -a -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  [ -z "$execs" ] && execs=$(grep -a -o '^Done [0-9]* runs' "$log" | grep -o '[0-9]*' | tail -1)
  crashes=$((after - before))
  echo "$t: ${SECONDS_EACH}s, ${execs:-?} executions, $crashes crash(es), libFuzzer exit $rc (log $log)"
  if [ "$crashes" -gt 0 ] || [ "$rc" -ne 0 ]; then
    status=1
    ls -1 "fuzz/artifacts/$t" | sed 's/^/  artifact: /'
  fi
done
exit $status
