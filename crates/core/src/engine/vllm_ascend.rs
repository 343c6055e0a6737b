//! vllm-ascend: vLLM on Huawei Ascend NPUs, a platform plugin that runs `vllm serve` with its own
//! model runner and speculative-decoding proposers. Its lines are vLLM's (the table's row points
//! at vLLM's code), so it is recognised by what surrounds the line: its image
//! (`quay.io/ascend/vllm-ascend:v0.18.0`), `--engine vllm-ascend@X`, the pin file's engine key, or
//! an environment variable only it reads (`VLLM_ASCEND_*`, `vllm_ascend/envs.py`).
//!
//! Its releases are its own (`0.18.0`, `0.26.0rc1`) and each builds its image on one vLLM release:
//! the `VLLM_TAG` its Dockerfile clones (read in the sdist of each release, or at the release's
//! tag). Its rows are its own where its source differs from vLLM's at that release — the methods
//! its proposer dispatch accepts (`vllm_ascend/spec_decode/__init__.py`), the draft fc it rotates
//! for a QuaRot target (`patch/worker/patch_draft_quarot.py`, from 0.16.0rc1), the lm_head it
//! shares with a DFlash drafter (`spec_decode/llm_base_proposer.py`) — and vLLM's at the pinned
//! release elsewhere. Not modelled: MTP at K far above the head's depth (vllm-ascend issues 9290
//! and 9871 report acceptance 0 without a cause read in its source).

use super::Line;

/// Each vllm-ascend release read and the vLLM release its Dockerfile builds on (`ARG
/// VLLM_TAG=…`): 0.11.0 to 0.25.1rc1 at their tags, 0.26.0rc1 in its sdist.
pub const PINS: &[(Line, Line)] = &[
    ((0, 11, 0), (0, 11, 0)),
    ((0, 13, 0), (0, 13, 0)),
    ((0, 15, 0), (0, 15, 0)),
    ((0, 16, 0), (0, 16, 0)),
    ((0, 18, 0), (0, 18, 0)),
    ((0, 19, 1), (0, 19, 1)),
    ((0, 20, 2), (0, 20, 2)),
    ((0, 21, 0), (0, 21, 0)),
    ((0, 22, 1), (0, 22, 1)),
    ((0, 23, 0), (0, 23, 0)),
    ((0, 24, 0), (0, 24, 0)),
    ((0, 25, 1), (0, 25, 1)),
    ((0, 26, 0), (0, 26, 0)),
];

/// The environment variables only vllm-ascend reads (`vllm_ascend/envs.py`: every name it
/// defines starts so).
pub const ENV: &[&str] = &["VLLM_ASCEND_"];
