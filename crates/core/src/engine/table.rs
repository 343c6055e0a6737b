//! The engines, one row each: everything the tool knows per engine, as data. Adding an engine
//! is a row here, its `Engine` variant, its code file (`engine/NAME.rs`: the command line's
//! own fields, the deployment settings, what its server answers) and the rows of the rules
//! whose verdict it changes (CONTRIBUTING.md, "Add an engine").
//!
//! Sources, per column: entrypoints and flags — vLLM `vllm/entrypoints/cli/serve.py` and
//! `engine/arg_utils.py` (the wheels read, below), SGLang 0.5.23 `srt/server_args.py`,
//! llama.cpp `common/arg.cpp` at 0c1e570 (b11312), koboldcpp's `koboldcpp.py` argparse;
//! metrics — vLLM `v1/spec_decode/metrics.py`, SGLang `srt/metrics/collector.py`; releases
//! read — the releases evidence/evidence.toml cites (`release = "vllm==0.34.0"`, or a commit
//! whose release is named beside it).

use super::koboldcpp::Koboldcpp;
use super::llama_cpp::LlamaCpp;
use super::mlx_lm::MlxLm;
use super::mlx_vlm::MlxVlm;
use super::omlx::Omlx;
use super::sglang::Sglang;
use super::trtllm::Trtllm;
use super::version::ANY_PATCH;
use super::vllm::Vllm;
use super::{tpu_inference, vllm_ascend, Platform};
use super::{
    Engine, EngineSpec, Entrypoint, Flags, Image, Metrics, MetricsKind, Models, Releases, Scheme,
    VersionEndpoint,
};

/// vLLM's speculative-decoding counters (vllm/v1/spec_decode/metrics.py, `SpecDecodingProm`),
/// as `prometheus_client` exposes them (`_total` appended), labelled `model_name` and `engine`.
pub const VLLM_DRAFTS: &str = "vllm:spec_decode_num_drafts_total";
pub const VLLM_DRAFT_TOKENS: &str = "vllm:spec_decode_num_draft_tokens_total";
pub const VLLM_ACCEPTED: &str = "vllm:spec_decode_num_accepted_tokens_total";
/// Per draft position; the `position` label counts from 0 (vLLM's `range(num_spec_tokens)`).
pub const VLLM_PER_POS: &str = "vllm:spec_decode_num_accepted_tokens_per_pos_total";
/// SGLang's acceptance gauges (python/sglang/srt/metrics/collector.py), `multiprocess_mode
/// ="mostrecent"`: the value of the most recent batch, not a running total.
pub const SGLANG_ACCEPT_LENGTH: &str = "sglang:spec_accept_length";
pub const SGLANG_ACCEPT_RATE: &str = "sglang:spec_accept_rate";
/// SGLang's generated-token counter: proves there was traffic while the gauges were sampled.
pub const SGLANG_GENERATION_TOKENS: &str = "sglang:generation_tokens_total";

/// vLLM's switches (flags that take no value): a word after one of them is not its value.
const VLLM_SWITCHES: &[&str] = &[
    "--trust-remote-code",
    "--enforce-eager",
    "--enable-prefix-caching",
    "--no-enable-prefix-caching",
    "--enable-chunked-prefill",
    "--no-enable-chunked-prefill",
    "--enable-auto-tool-choice",
    "--disable-log-requests",
    "--enable-log-requests",
    "--disable-log-stats",
    "--enable-expert-parallel",
    "--async-scheduling",
    "--no-async-scheduling",
    "--disable-custom-all-reduce",
    "--headless",
    "--enable-lora",
    "--enable-sleep-mode",
    "--enable-eplb",
    "--skip-tokenizer-init",
    "--disable-fastapi-docs",
    "--enable-prompt-tokens-details",
    "--enable-server-load-tracking",
    "--disable-frontend-multiprocessing",
    "--disable-uvicorn-access-log",
    "--enable-request-id-headers",
    "--enable-force-include-usage",
    "--return-tokens-as-token-ids",
];

/// SGLang's switches.
const SGLANG_SWITCHES: &[&str] = &[
    "--trust-remote-code",
    "--enable-torch-compile",
    "--disable-radix-cache",
    "--enable-dp-attention",
    "--disable-cuda-graph",
    "--enable-mixed-chunk",
    "--disable-overlap-schedule",
    "--enable-metrics",
    "--skip-server-warmup",
    "--enable-multi-layer-eagle",
    "--enable-ep-moe",
    "--disable-cuda-graph-padding",
    "--enable-p2p-check",
    "--enable-deterministic-inference",
    "--skip-tokenizer-init",
    "--enable-cache-report",
    "--enable-two-batch-overlap",
];

/// llama.cpp's switches, from `common/arg.cpp` at 0c1e570: those a server command line
/// carries, the draft ones among them.
const LLAMA_SWITCHES: &[&str] = &[
    "--jinja",
    "--no-jinja",
    "-cb",
    "--cont-batching",
    "-nocb",
    "--no-cont-batching",
    "--mlock",
    "--mmap",
    "--no-mmap",
    "--metrics",
    "--slots",
    "--no-slots",
    "--props",
    "--embedding",
    "--embeddings",
    "--reranking",
    "--rerank",
    "-v",
    "--verbose",
    "--log-verbose",
    "--no-warmup",
    "--offline",
    "--no-mmproj",
    "--no-webui",
    "--webui",
    "-sp",
    "--special",
    "--check-tensors",
    "-cmoe",
    "--cpu-moe",
    "-cmoed",
    "--cpu-moe-draft",
    "--spec-draft-cpu-moe",
    "-kvu",
    "--kv-unified",
    "-nkvo",
    "--no-kv-offload",
    "--swa-full",
    "--context-shift",
    "--no-context-shift",
    "--spec-draft-backend-sampling",
    "--no-spec-draft-backend-sampling",
    "--spec-default",
    "--mtp",
    "--dflash",
    "--eagle3",
    "-e",
    "--escape",
    "--no-escape",
    "-cnv",
    "--conversation",
    "-no-cnv",
    "--no-conversation",
];

/// koboldcpp's switches (`action='store_true'` in koboldcpp.py) that a launch line carries.
const KOBOLD_SWITCHES: &[&str] = &[
    "--usemtp",
    "--flashattention",
    "--noflashattention",
    "--no-flash-attn",
    "-nofa",
    "--quiet",
    "--nommap",
    "--usemlock",
    "--noavx2",
    "--skiplauncher",
    "--showgui",
    "--jinja",
    "--jinja_tools",
    "--jinja-tools",
    "--jinjatools",
    "--remotetunnel",
    "--nocertify",
    "--smartcontext",
    "--noshift",
    "--nobostoken",
    "--lowvram",
    "-nkvo",
    "--no-kv-offload",
    "--ignoremissing",
    "--singleinstance",
    "--nopipelineparallel",
    "--enableguidance",
    "--gendefaultsoverwrite",
    "--usecpu",
    "--usevulkan",
    "--usecublas",
    "--usecuda",
];

/// TensorRT-LLM's click switches a serving line carries (`common_llm_options.py` at 1f71907).
const TRTLLM_SWITCHES: &[&str] = &[
    "--trust_remote_code",
    "--enable_chunked_prefill",
    "--disable_kv_cache_reuse",
    "--skip_tokenizer_init",
    "--fail_fast_on_attention_window_too_large",
];

/// mlx-lm's switches (`action="store_true"` in `server.py` and `generate.py`, 0.32.2).
const MLX_LM_SWITCHES: &[&str] = &[
    "--trust-remote-code",
    "--use-default-chat-template",
    "--pipeline",
    "--ignore-chat-template",
    "--quantize-activations",
    "-qa",
];

/// mlx-vlm's switches (`action="store_true"` in `server/cli.py` and `generate/dispatch.py`,
/// 0.7.10) that a serving line carries.
const MLX_VLM_SWITCHES: &[&str] = &[
    "--trust-remote-code",
    "--enable-thinking",
    "--reload",
    "--chat",
    "--skip-special-tokens",
    "--force-download",
    "--quantize-activations",
    "-qa",
];

/// vLLM's command line (shared with the platforms that run `vllm serve`).
const VLLM_FLAGS: Flags = Flags {
    switches: VLLM_SWITCHES,
    underscores_are_dashes: true,
    target: &["--model"],
    drafter: &[],
    drafter_revision: Some(("--speculative-config.revision", "--speculative-config")),
    tensor_parallel: Some(&["--tensor-parallel-size", "-tp"]),
    speculative_config: Some("--speculative-config"),
    options_file: &[],
    method: None,
    draft_tokens: None,
    k: "num_speculative_tokens",
    speculation_words: &["speculative-config", "speculative_config"],
    speculation_short: &[],
};

/// Where vLLM's method comes from.
const VLLM_METHOD_FROM: &str =
    "the `method` key of --speculative-config; without one, vLLM infers it from \
\"eagle3\" or \"dflash\" in the drafter's name";

/// vLLM's speculative-decoding metrics.
const VLLM_METRICS: Metrics = Metrics {
    namespace: "vllm:",
    marker: VLLM_DRAFTS,
    length: VLLM_ACCEPTED,
    reads: &["vllm:spec_decode_"],
    kind: MetricsKind::Counters,
    enable_hint:
        "speculative decoding is not enabled there: was it started with --speculative-config?",
};

/// Where vLLM's server states its release.
const VLLM_VERSION_ENDPOINT: VersionEndpoint = VersionEndpoint {
    path: "/version",
    key: "version",
};

/// Every engine, in the order a command line is searched for them.
pub const ROWS: &[EngineSpec] = &[
    EngineSpec {
        engine: Engine::Vllm,
        name: "vllm",
        aliases: &[],
        display: "vLLM",
        vendors: None,
        example: "vllm serve MODEL --speculative-config '{\"method\": …, \"model\": DRAFTER, \"num_speculative_tokens\": K}'",
        models: Models::Checkpoints,
        entrypoints: &[
            Entrypoint::Program {
                name: "vllm",
                prefix: false,
                then: &["serve"],
            },
            Entrypoint::Module {
                module: "vllm.entrypoints.openai.api_server",
                then: &[],
            },
            Entrypoint::Module {
                module: "vllm.entrypoints.cli.main",
                then: &["serve"],
            },
            Entrypoint::Image {
                image: 0,
                tag_prefix: "",
            },
        ],
        images: &[Image {
            repos: &["vllm/vllm-openai"],
            floating: "`latest` and `nightly` name no release",
        }],
        flags: VLLM_FLAGS,
        method_from: VLLM_METHOD_FROM,
        metrics: Some(VLLM_METRICS),
        version_endpoint: Some(VLLM_VERSION_ENDPOINT),
        releases: Releases {
            scheme: Scheme::Semver,
            read: &[
                "0.25.1", "0.26.0", "0.27.1", "0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0",
                "0.33.0", "0.34.0",
            ],
            window: ((0, 28, 0), (0, 34, ANY_PATCH)),
            window_why: "0.28.0 (August 2026) shipped DFlash2, made async scheduling the default \
and started the V2 model runner's takeover that 0.34.0 completed; every release read since is one a \
deployment may still run, and they disagree on the rules below (a method rewritten from the draft's \
name up to 0.33, the V1 runner removed in 0.34)",
        },
        platform: None,
        code: &Vllm,
    },
    EngineSpec {
        engine: Engine::Sglang,
        name: "sglang",
        aliases: &[],
        display: "SGLang",
        vendors: None,
        example: "python -m sglang.launch_server --model-path MODEL --speculative-algorithm ALGO --speculative-draft-model-path DRAFTER",
        models: Models::Checkpoints,
        entrypoints: &[
            Entrypoint::Program {
                name: "sglang",
                prefix: false,
                then: &["serve"],
            },
            Entrypoint::Module {
                module: "sglang.launch_server",
                then: &[],
            },
        ],
        images: &[Image {
            repos: &["lmsysorg/sglang"],
            floating: "`latest` and `dev` name no release",
        }],
        flags: Flags {
            switches: SGLANG_SWITCHES,
            underscores_are_dashes: false,
            target: &["--model-path", "--model"],
            drafter: &[
                "--speculative-draft-model-path",
                "--speculative-draft-model",
            ],
            drafter_revision: Some((
                "--speculative-draft-model-revision",
                "--speculative-draft-model-path",
            )),
            tensor_parallel: Some(&["--tp-size", "--tp", "--tensor-parallel-size"]),
            speculative_config: None,
            options_file: &[],
            method: Some("--speculative-algorithm"),
            draft_tokens: Some("--speculative-num-draft-tokens"),
            k: "--speculative-num-steps",
            speculation_words: &["speculative-algorithm"],
            speculation_short: &[],
        },
        method_from: "--speculative-algorithm (upper-cased; NEXTN is read as EAGLE)",
        metrics: Some(Metrics {
            namespace: "sglang:",
            marker: SGLANG_ACCEPT_LENGTH,
            length: SGLANG_ACCEPT_LENGTH,
            reads: &["sglang:spec_accept_", SGLANG_GENERATION_TOKENS],
            kind: MetricsKind::Gauges,
            enable_hint: "start it with --speculative-algorithm and --enable-metrics",
        }),
        version_endpoint: Some(VersionEndpoint {
            path: "/get_server_info",
            key: "version",
        }),
        releases: Releases {
            scheme: Scheme::Semver,
            read: &[
                "0.5.10", "0.5.12", "0.5.15", "0.5.17", "0.5.20", "0.5.22", "0.5.23",
            ],
            window: ((0, 5, 23), (0, 5, ANY_PATCH)),
            window_why: "0.5.23 is the newest SGLang release found and the one every SGLang rule's \
evidence was read at; the older releases read (0.5.10 to 0.5.22) back only the capability rows \
(which algorithms each accepts)",
        },
        platform: None,
        code: &Sglang,
    },
    EngineSpec {
        engine: Engine::LlamaCpp,
        name: "llama.cpp",
        aliases: &["llamacpp", "llama-cpp"],
        display: "llama.cpp",
        vendors: None,
        example: "llama-server -m MODEL.gguf -md DRAFT.gguf",
        models: Models::Gguf,
        entrypoints: &[
            Entrypoint::Program {
                name: "llama-server",
                prefix: false,
                then: &[],
            },
            Entrypoint::Program {
                name: "llama-cli",
                prefix: false,
                then: &[],
            },
            Entrypoint::Program {
                name: "llama-speculative",
                prefix: false,
                then: &[],
            },
            Entrypoint::Program {
                name: "llama-speculative-simple",
                prefix: false,
                then: &[],
            },
            Entrypoint::Image {
                image: 0,
                tag_prefix: "server",
            },
        ],
        images: &[Image {
            repos: &["ggml-org/llama.cpp", "ggerganov/llama.cpp"],
            floating: "`server` and `server-cuda` name no build",
        }],
        flags: Flags {
            switches: LLAMA_SWITCHES,
            underscores_are_dashes: false,
            target: &["-m", "--model"],
            drafter: &["-md", "--spec-draft-model", "--model-draft"],
            drafter_revision: None,
            tensor_parallel: None,
            speculative_config: None,
            options_file: &[],
            method: Some("--spec-type"),
            draft_tokens: None,
            k: "--spec-draft-n-max",
            speculation_words: &[
                "--spec-draft-model",
                "--model-draft",
                "--spec-draft-hf",
                "--hf-repo-draft",
                "--spec-type",
                "LLAMA_ARG_SPEC_DRAFT_MODEL",
                "LLAMA_ARG_SPEC_TYPE",
            ],
            speculation_short: &["-md", "-hfd"],
        },
        method_from: "--spec-type (a comma list; without one, llama.cpp infers the type from the \
draft's GGUF metadata)",
        metrics: None,
        version_endpoint: Some(VersionEndpoint {
            path: "/props",
            key: "build_info",
        }),
        releases: Releases {
            scheme: Scheme::Build,
            read: &["b11312"],
            window: ((11312, 0, 0), (11312, 0, 0)),
            window_why: "b11312 (commit 0c1e570, 2026-10-01) is the one build read whole; older \
flags were read at 4227c9b (2025-08)",
        },
        platform: None,
        code: &LlamaCpp,
    },
    EngineSpec {
        engine: Engine::Koboldcpp,
        name: "koboldcpp",
        aliases: &[],
        display: "koboldcpp",
        vendors: Some("1.115 and later vendor llama.cpp's check, rebased on llama.cpp (koboldcpp#2325 quotes the refusal; koboldcpp's own source was not read)"),
        example: "koboldcpp --model MODEL.gguf --draftmodel DRAFT.gguf",
        models: Models::Gguf,
        entrypoints: &[
            Entrypoint::Program {
                name: "koboldcpp",
                prefix: true,
                then: &[],
            },
            Entrypoint::Image {
                image: 0,
                tag_prefix: "",
            },
        ],
        images: &[Image {
            repos: &["koboldai/koboldcpp"],
            floating: "`latest` names no release",
        }],
        flags: Flags {
            switches: KOBOLD_SWITCHES,
            underscores_are_dashes: false,
            target: &["--model", "-m"],
            drafter: &["--draftmodel", "--model-draft", "-md"],
            drafter_revision: None,
            tensor_parallel: None,
            speculative_config: None,
            options_file: &[],
            method: None,
            draft_tokens: None,
            k: "--draftamount",
            speculation_words: &["--draftmodel", "--usemtp"],
            speculation_short: &[],
        },
        method_from: "--draftmodel (a draft model) or --usemtp (the target's MTP head)",
        metrics: None,
        version_endpoint: None,
        releases: Releases {
            scheme: Scheme::Semver,
            read: &["1.115"],
            window: ((1, 115, 0), (1, 115, ANY_PATCH)),
            window_why: "1.115, the release a public report (koboldcpp#2325) names; its flags \
were read from koboldcpp.py",
        },
        platform: None,
        code: &Koboldcpp,
    },
    EngineSpec {
        engine: Engine::Trtllm,
        name: "trtllm",
        aliases: &["tensorrt-llm", "tensorrt_llm", "trt-llm"],
        display: "TensorRT-LLM",
        vendors: None,
        example: "trtllm-serve MODEL --extra_llm_api_options options.yaml",
        models: Models::Checkpoints,
        entrypoints: &[
            Entrypoint::Program {
                name: "trtllm-serve",
                prefix: false,
                then: &[],
            },
            Entrypoint::Module {
                module: "tensorrt_llm.commands.serve",
                then: &[],
            },
        ],
        images: &[Image {
            repos: &["nvidia/tensorrt-llm/release"],
            floating: "`latest` names no release",
        }],
        flags: Flags {
            switches: TRTLLM_SWITCHES,
            underscores_are_dashes: false,
            target: &[],
            drafter: &[],
            drafter_revision: None,
            tensor_parallel: Some(&["--tp_size", "--tp"]),
            speculative_config: None,
            options_file: &["--extra_llm_api_options", "--config"],
            method: None,
            draft_tokens: None,
            k: "max_draft_len",
            speculation_words: &["speculative_config", "decoding_type"],
            speculation_short: &[],
        },
        method_from: "the decoding_type of speculative_config in the LLM API options file \
(--extra_llm_api_options, or --config in newer releases)",
        metrics: None,
        version_endpoint: None,
        releases: Releases {
            scheme: Scheme::Semver,
            read: &["1.2.1", "1.4.0"],
            window: ((1, 2, 0), (1, 4, ANY_PATCH)),
            window_why: "read at three states of its code (d4b1e8e before PR 10124, aba2525 between PRs \
10124 and 12341, the newest main read), which 1.2.1 (the newest stable release) and 1.4.0rc1 (the newest \
pre-release) ship by their dates; PyPI carries no wheel to read a release whole (its packages are stubs that \
download from NVIDIA's own index), so the 1.3 release candidates that took the two changes are judged as 1.4",
        },
        platform: None,
        code: &Trtllm,
    },
    EngineSpec {
        engine: Engine::VllmAscend,
        name: "vllm-ascend",
        aliases: &["vllm_ascend"],
        display: "vLLM Ascend",
        vendors: None,
        example: "vllm serve MODEL --speculative-config '{…}' in the quay.io/ascend/vllm-ascend image",
        models: Models::Checkpoints,
        // Its lines are `vllm serve`: found as vLLM's, then named by what surrounds them.
        entrypoints: &[],
        images: &[Image {
            repos: &["ascend/vllm-ascend"],
            floating: "`main` and `latest` name no release",
        }],
        flags: VLLM_FLAGS,
        method_from: VLLM_METHOD_FROM,
        metrics: Some(VLLM_METRICS),
        version_endpoint: Some(VLLM_VERSION_ENDPOINT),
        releases: Releases {
            scheme: Scheme::Semver,
            read: &[
                "0.11.0", "0.13.0", "0.15.0rc1", "0.16.0rc1", "0.18.0", "0.19.1rc1", "0.20.2rc1",
                "0.21.0rc1", "0.22.1rc1", "0.23.0", "0.24.0rc1", "0.25.1rc1", "0.26.0rc1",
            ],
            window: ((0, 13, 0), (0, 26, ANY_PATCH)),
            window_why: "from 0.13.0, a stable release (as 0.18.0 and 0.23.0 are) older than the QuaRot \
draft rotation (0.16.0rc1) and the DFlash proposer (0.20.2rc1), so a line whose release is not known is judged \
as if it may predate both; 0.26.0rc1 is the newest on PyPI. Each release listed was read in its wheel, and the \
vLLM release it pins in its Dockerfile (at its tag; 0.26.0rc1 in its sdist). vLLM's own rows were read from \
0.25.1: a pin older than that is judged by the ranges of vLLM's rows",
        },
        platform: Some(Platform {
            base: Engine::Vllm,
            pins: vllm_ascend::PINS,
            pins_from: "the VLLM_TAG each release's Dockerfile builds vLLM from",
            env: vllm_ascend::ENV,
        }),
        code: &Vllm,
    },
    EngineSpec {
        engine: Engine::TpuInference,
        name: "tpu-inference",
        aliases: &["vllm-tpu", "tpu_inference"],
        display: "tpu-inference",
        vendors: None,
        example: "vllm serve MODEL --speculative-config '{…}' in the vllm/vllm-tpu image",
        models: Models::Checkpoints,
        // Its lines are `vllm serve`: found as vLLM's, then named by what surrounds them.
        entrypoints: &[],
        images: &[Image {
            repos: &["vllm/vllm-tpu"],
            floating: "`latest` and `nightly` name no release",
        }],
        flags: VLLM_FLAGS,
        method_from: VLLM_METHOD_FROM,
        metrics: Some(VLLM_METRICS),
        version_endpoint: Some(VLLM_VERSION_ENDPOINT),
        releases: Releases {
            scheme: Scheme::Semver,
            read: &[
                "0.18.0", "0.19.0", "0.20.0", "0.21.0", "0.22.1", "0.23.0", "0.24.0", "0.25.0",
                "0.26.0", "0.27.0", "0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0",
            ],
            window: ((0, 28, 0), (0, 32, ANY_PATCH)),
            window_why: "from 0.28.0, the first release on the vLLM line whose rows this tool's vLLM \
window starts at, to 0.32.0, the newest on PyPI; every release listed was read in its tpu-inference wheel, \
and the vLLM release it is built from in its vllm-tpu wheel (the same number; vllm-tpu 0.22.0 requires \
tpu-inference 0.22.1)",
        },
        platform: Some(Platform {
            base: Engine::Vllm,
            pins: tpu_inference::PINS,
            pins_from: "the vllm-tpu wheel of the same number, which is vLLM's source at that release and \
requires tpu-inference at it",
            env: tpu_inference::ENV,
        }),
        code: &Vllm,
    },
    EngineSpec {
        engine: Engine::MlxLm,
        name: "mlx-lm",
        aliases: &["mlx_lm"],
        display: "mlx-lm",
        vendors: None,
        example: "mlx_lm.server --model MODEL --draft-model DRAFT --num-draft-tokens K",
        models: Models::Checkpoints,
        entrypoints: &[
            Entrypoint::Program {
                name: "mlx_lm.server",
                prefix: false,
                then: &[],
            },
            Entrypoint::Program {
                name: "mlx_lm.generate",
                prefix: false,
                then: &[],
            },
            // `mlx_lm WORD` (the console script, cli.py, 0.30.6 on) and `python -m mlx_lm WORD`
            // (__main__.py, every release read) run the module their first word names.
            Entrypoint::Program {
                name: "mlx_lm",
                prefix: false,
                then: &["server"],
            },
            Entrypoint::Program {
                name: "mlx_lm",
                prefix: false,
                then: &["generate"],
            },
            Entrypoint::Module {
                module: "mlx_lm.server",
                then: &[],
            },
            Entrypoint::Module {
                module: "mlx_lm.generate",
                then: &[],
            },
            Entrypoint::Module {
                module: "mlx_lm",
                then: &["server"],
            },
            Entrypoint::Module {
                module: "mlx_lm",
                then: &["generate"],
            },
        ],
        images: &[],
        flags: Flags {
            switches: MLX_LM_SWITCHES,
            underscores_are_dashes: false,
            target: &["--model"],
            drafter: &["--draft-model"],
            drafter_revision: None,
            tensor_parallel: None,
            speculative_config: None,
            options_file: &[],
            method: None,
            draft_tokens: None,
            k: "--num-draft-tokens",
            speculation_words: &["--draft-model", "--num-draft-tokens"],
            speculation_short: &[],
        },
        method_from: "--draft-model (a draft language model; mlx-lm has no other kind of drafting)",
        metrics: None,
        version_endpoint: None,
        releases: Releases {
            scheme: Scheme::Semver,
            read: &[
                "0.28.4", "0.29.1", "0.30.0", "0.30.2", "0.30.4", "0.30.5", "0.30.6", "0.30.7",
                "0.31.1", "0.31.2", "0.31.3", "0.32.0", "0.32.1", "0.32.2",
            ],
            window: ((0, 30, 7), (0, 32, ANY_PATCH)),
            window_why: "from 0.30.7, the first release with the `qwen3_5` model (Qwen3.5 and Qwen3.6, the \
MLX checkpoints that carry MTP heads), to 0.32.2, the newest on PyPI; its `sanitize` changed at 0.32.0 \
(`mtp.*` keys no longer make it shift the trunk's norms), so a line whose release is not known is judged on \
both sides. Each release listed was read in its wheel",
        },
        platform: None,
        code: &MlxLm,
    },
    EngineSpec {
        engine: Engine::MlxVlm,
        name: "mlx-vlm",
        aliases: &["mlx_vlm"],
        display: "mlx-vlm",
        vendors: None,
        example: "mlx_vlm.server --model MODEL --draft-model DRAFTER --draft-kind dflash|eagle3|mtp",
        models: Models::Checkpoints,
        entrypoints: &[
            Entrypoint::Program {
                name: "mlx_vlm.server",
                prefix: false,
                then: &[],
            },
            Entrypoint::Program {
                name: "mlx_vlm.generate",
                prefix: false,
                then: &[],
            },
            Entrypoint::Module {
                module: "mlx_vlm.server",
                then: &[],
            },
            Entrypoint::Module {
                module: "mlx_vlm.generate",
                then: &[],
            },
            // `python -m mlx_vlm WORD` (__main__.py) runs the module its first word names.
            Entrypoint::Module {
                module: "mlx_vlm",
                then: &["server"],
            },
            Entrypoint::Module {
                module: "mlx_vlm",
                then: &["generate"],
            },
        ],
        images: &[],
        flags: Flags {
            switches: MLX_VLM_SWITCHES,
            underscores_are_dashes: false,
            target: &["--model"],
            drafter: &["--draft-model"],
            drafter_revision: None,
            tensor_parallel: None,
            speculative_config: None,
            options_file: &[],
            method: Some("--draft-kind"),
            draft_tokens: None,
            k: "--draft-block-size",
            speculation_words: &["--draft-model", "--draft-kind"],
            speculation_short: &[],
        },
        method_from: "--draft-kind (dflash, eagle3 or mtp); without it, mlx-vlm infers the kind from \
the drafter's model_type, and it replaces a kind that disagrees with it",
        metrics: None,
        version_endpoint: None,
        releases: Releases {
            scheme: Scheme::Semver,
            read: &[
                "0.6.10", "0.6.17", "0.7.0", "0.7.1", "0.7.3", "0.7.5", "0.7.6", "0.7.8", "0.7.9",
                "0.7.10",
            ],
            window: ((0, 6, 10), (0, 7, ANY_PATCH)),
            window_why: "every release read, 0.6.10 to 0.7.10 (the newest on PyPI), each in its wheel: \
they agree on every row (the three draft kinds; the Qwen3.5 sanitize that drops `mtp.*` keys before it \
decides to shift the norms) but one: a native checkpoint named as the drafter loads from 0.7.8 (0.7.9 for \
nemotron_h), so a line whose release is not known is judged on both sides",
        },
        platform: None,
        code: &MlxVlm,
    },
    EngineSpec {
        engine: Engine::Omlx,
        name: "omlx",
        aliases: &["oMLX"],
        display: "oMLX",
        vendors: None,
        example: "omlx serve --model-dir MODELS --base-path BASE (drafters in BASE/model_settings.json)",
        models: Models::Checkpoints,
        entrypoints: &[Entrypoint::Program {
            name: "omlx",
            prefix: false,
            then: &["serve"],
        }],
        images: &[],
        flags: Flags {
            switches: &["--no-cache", "--paged-ssd-cache-clear-on-unload"],
            underscores_are_dashes: false,
            target: &["--model-dir"],
            drafter: &[],
            drafter_revision: None,
            tensor_parallel: None,
            speculative_config: None,
            options_file: &["--base-path"],
            method: None,
            draft_tokens: None,
            k: "dflash_draft_window_size",
            speculation_words: &["--base-path", "--model-dir"],
            speculation_short: &[],
        },
        method_from: "model_settings.json under --base-path (default ~/.omlx): per model, dflash_enabled \
with dflash_draft_model, mtp_enabled, or vlm_mtp_enabled with vlm_mtp_draft_model; one line is a \
deployment per model so enabled",
        metrics: None,
        version_endpoint: None,
        releases: Releases {
            scheme: Scheme::Semver,
            read: &["0.7"],
            window: ((0, 5, 0), (0, 7, ANY_PATCH)),
            window_why: "oMLX is not on PyPI: its source was read on GitHub (jundot/omlx at 003dad6, main \
in the 0.7 line) and the DFlash drafter loader it calls in the dflash-mlx wheels 0.1.0 to 0.1.8 (oMLX pins \
a fork of 0.1.10 that is on no index); 0.5 to 0.7 are the releases its public reports name (omlx#2326 on \
0.5.2, omlx#3380 on 0.7.0.dev2 and dev4). Its rows cite those threads and that source",
        },
        platform: None,
        code: &Omlx,
    },
];
