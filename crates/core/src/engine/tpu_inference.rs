//! tpu-inference: vLLM on Google TPUs, the platform plugin that runs `vllm serve` with its own JAX
//! model runner and speculative-decoding proposers. It ships as the `vllm-tpu` distribution
//! (PyPI, and the `vllm/vllm-tpu` image): vLLM's source at one release, built for TPU, which
//! requires `tpu-inference` at the same number (`vllm-tpu==0.32.0` requires
//! `tpu-inference==0.32.0`; `0.22.0` requires `0.22.1`). So its releases here are that shared
//! number, and each pins the vLLM release of the same number. Its lines are vLLM's; it is
//! recognised by what surrounds them: its image (`vllm/vllm-tpu:v0.32.0`),
//! `--engine tpu-inference@X`, the pin file's engine key, or a variable only its `envs.py` reads.
//!
//! Its own rows are where its runner differs from vLLM's: the methods its proposer dispatch
//! builds (`runner/tpu_runner.py` `_init_speculative_decoding`: ngram and EAGLE-3 at every
//! release read, MTP from 0.22, DFlash from 0.25, the rest `NotImplementedError`), and an EAGLE-3
//! head that turns the auxiliary hidden states off (`use_aux_hidden_state: false`), which no
//! release reads: its EAGLE-3 model always builds `fc` for three concatenated hidden states
//! (`models/jax/llama_eagle3.py`; tpu-inference#2841). Not read: how its EAGLE-kind dispatch
//! (0.22 on) treats an EAGLE-1 or DSpark drafter; those methods are vLLM's rows at the pin.

use super::Line;

/// Each release read (the `vllm-tpu` and `tpu-inference` wheels, 0.18.0 to 0.32.0) and the vLLM
/// release it is built from (`vllm/_version.py` in the `vllm-tpu` wheel).
pub const PINS: &[(Line, Line)] = &[
    ((0, 18, 0), (0, 18, 0)),
    ((0, 19, 0), (0, 19, 0)),
    ((0, 20, 0), (0, 20, 0)),
    ((0, 21, 0), (0, 21, 0)),
    ((0, 22, 0), (0, 22, 0)),
    ((0, 23, 0), (0, 23, 0)),
    ((0, 24, 0), (0, 24, 0)),
    ((0, 25, 0), (0, 25, 0)),
    ((0, 26, 0), (0, 26, 0)),
    ((0, 27, 0), (0, 27, 0)),
    ((0, 28, 0), (0, 28, 0)),
    ((0, 29, 0), (0, 29, 0)),
    ((0, 30, 0), (0, 30, 0)),
    ((0, 31, 0), (0, 31, 0)),
    ((0, 32, 0), (0, 32, 0)),
];

/// Variables only tpu-inference reads (`tpu_inference/envs.py`; the `TPU_*` and `JAX_*` ones
/// are shared with JAX and libtpu, so not named here).
pub const ENV: &[&str] = &[
    "SKIP_JAX_PRECOMPILE",
    "MODEL_IMPL_TYPE",
    "DRAFT_MODEL_IMPL_TYPE",
    "NEW_MODEL_DESIGN",
    "TPU_MULTIHOST_BACKEND",
];
