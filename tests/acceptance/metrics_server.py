#!/usr/bin/env python3
"""A stand-in for a running vLLM or SGLang server's /metrics, for tests/acceptance.rs.

    metrics_server.py SCENARIO [--lifetime SECS]

Listens on 127.0.0.1 at an ephemeral port and prints "PORT <n>" once ready. The exposition is
rendered by the real `prometheus_client` library (as both engines render theirs), with the
engines' metric names and labels:

  vLLM   (vllm/v1/spec_decode/metrics.py, SpecDecodingProm; labels model_name, engine)
         counters vllm:spec_decode_num_drafts, vllm:spec_decode_num_draft_tokens,
         vllm:spec_decode_num_accepted_tokens, vllm:spec_decode_num_accepted_tokens_per_pos
         (+ label position, from 0); prometheus_client appends _total and adds _created.
  SGLang (python/sglang/srt/metrics/collector.py; labels model_name, engine_type, tp_rank, ...)
         gauges sglang:spec_accept_length, sglang:spec_accept_rate (most recent batch), and the
         counter sglang:generation_tokens.

Counters evolve deterministically: every GET /metrics first advances the simulated traffic by
one step, then renders. So a check that scrapes at the start and the end of its window sees
exactly one step of traffic, whatever the timing, and the expected figures are exact. Before
the first request each vLLM scenario has a warm-up history with a different acceptance, so a
check that divided totals instead of deltas would get a different answer.

The server stops by itself after --lifetime seconds (default 120).
"""

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client import gc_collector, platform_collector, process_collector

K = 15  # num_speculative_tokens: DFlash b16 drafters run 15 (block_size 16 minus one)
TARGET = "Qwen/Qwen3.6-27B"
OTHER_TARGET = "Qwen/Qwen3-8B"

# Per-position acceptance (share of drafts accepted at least this far), position 1 first.
HEALTHY = [0.92 * 0.86**k for k in range(K)]  # acceptance length ~6.9 of 16
COLLAPSE = [0.09, 0.02, 0.01] + [0.0] * (K - 3)  # the incident: 1.12 of 16
CLIFF = [0.85, 0.72, 0.60, 0.45, 0.004, 0.001] + [0.0] * (K - 6)  # ~0 from position 5
WARMUP = [0.5] * 5 + [0.0] * (K - 5)
# A healthy-shaped, gradual curve too short to pay for K = 15 drafted tokens per step with an
# EAGLE-style head (one drafter forward per token): acceptance length 1.42.
GRADUAL_SHORT = [0.25, 0.10, 0.05, 0.02] + [0.0] * (K - 4)  # history before the window: 3.5 of 16

# SGLang's gauge values, one per request, cycling.
SGLANG_LENGTHS = [3.1, 3.4, 3.2, 3.3]
SGLANG_RATES = [0.52, 0.60, 0.55, 0.58]

SLOW_SECS = 10  # the slow scenario's delay; tests use a --timeout far below it


def counts(drafts, probs):
    """Accepted tokens per position for `drafts` drafts (half-up rounding, as Rust's round)."""
    return [int(drafts * p + 0.5) for p in probs]


class Vllm:
    """vLLM's four spec-decode counters in one registry, plus some of its other metrics."""

    def __init__(self, series):
        # series: list of (model_name, engine)
        self.registry = CollectorRegistry()
        r = self.registry
        process_collector.ProcessCollector(registry=r)
        platform_collector.PlatformCollector(registry=r)
        gc_collector.GCCollector(registry=r)
        names = ["model_name", "engine"]
        self.drafts = Counter("vllm:spec_decode_num_drafts", "Number of spec decoding drafts.", names, registry=r)
        self.draft_tokens = Counter("vllm:spec_decode_num_draft_tokens", "Number of draft tokens.", names, registry=r)
        self.accepted = Counter("vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens.", names, registry=r)
        self.per_pos = Counter(
            "vllm:spec_decode_num_accepted_tokens_per_pos",
            "Accepted tokens per draft position.",
            names + ["position"],
            registry=r,
        )
        running = Gauge("vllm:num_requests_running", "Number of requests in model execution batches.", names, registry=r)
        latency = Histogram(
            "vllm:e2e_request_latency_seconds",
            "Histogram of e2e request latency in seconds.",
            names,
            buckets=[0.3, 1.0, 5.0, 20.0],
            registry=r,
        )
        for model, engine in series:
            # vLLM creates every series at start-up, so they are exported at 0 before traffic.
            self.drafts.labels(model, engine)
            self.draft_tokens.labels(model, engine)
            self.accepted.labels(model, engine)
            for pos in range(K):
                self.per_pos.labels(model, engine, str(pos))
            running.labels(model, engine).set(4)
            latency.labels(model, engine).observe(2.5)

    def step(self, model, engine, drafts, probs):
        c = counts(drafts, probs)
        self.drafts.labels(model, engine).inc(drafts)
        self.draft_tokens.labels(model, engine).inc(drafts * K)
        self.accepted.labels(model, engine).inc(sum(c))
        for pos, n in enumerate(c):
            self.per_pos.labels(model, engine, str(pos)).inc(n)

    def render(self):
        return generate_latest(self.registry)


class Scenario:
    """One scenario: `advance()` on each request, then `body()`; `status` and `delay` too."""

    status = 200
    delay = 0.0

    def advance(self):
        pass


class VllmScenario(Scenario):
    def __init__(self, streams, warmup=True):
        # streams: list of (model, engine, drafts per step, probs)
        self.streams = streams
        self.vllm = Vllm([(m, e) for m, e, _, _ in streams])
        if warmup:
            for _ in range(10):
                for model, engine, drafts, _ in streams:
                    self.vllm.step(model, engine, drafts, WARMUP)

    def advance(self):
        for model, engine, drafts, probs in self.streams:
            self.vllm.step(model, engine, drafts, probs)

    def body(self):
        return self.vllm.render()


class IdleScenario(VllmScenario):
    def advance(self):
        pass


class ResetScenario(VllmScenario):
    """The server restarts between the first and the second scrape: fresh counters."""

    def __init__(self):
        super().__init__([(TARGET, "0", 1000, HEALTHY)])
        self.requests = 0

    def advance(self):
        self.requests += 1
        if self.requests == 2:
            self.vllm = Vllm([(TARGET, "0")])
        super().advance()


class MalformedScenario(VllmScenario):
    """A real exposition with one sample line broken (its label set never closed)."""

    def __init__(self):
        super().__init__([(TARGET, "0", 1000, HEALTHY)])

    def body(self):
        lines = super().body().decode().split("\n")
        for i, line in enumerate(lines):
            if line.startswith("vllm:spec_decode_num_drafts_total{"):
                lines[i] = line.replace("}", "", 1)
                break
        return "\n".join(lines).encode()


class SlowScenario(VllmScenario):
    delay = SLOW_SECS

    def __init__(self):
        super().__init__([(TARGET, "0", 1000, HEALTHY)])


class NotFoundScenario(Scenario):
    status = 404

    def body(self):
        return b"Not Found\n"


class NoSpecScenario(Scenario):
    """A vLLM server started without --speculative-config: no spec-decode counters."""

    def __init__(self):
        self.registry = CollectorRegistry()
        g = Gauge("vllm:num_requests_running", "Number of requests in model execution batches.", ["model_name", "engine"], registry=self.registry)
        g.labels(TARGET, "0").set(1)

    def body(self):
        return generate_latest(self.registry)


class SglangScenario(Scenario):
    def __init__(self, lengths=SGLANG_LENGTHS, rates=SGLANG_RATES, tokens_per_step=500):
        self.registry = CollectorRegistry()
        r = self.registry
        labels = ["model_name", "engine_type", "tp_rank", "pp_rank"]
        self.length = Gauge("sglang:spec_accept_length", "The average acceptance length of speculative decoding.", labels, registry=r)
        self.rate = Gauge(
            "sglang:spec_accept_rate",
            "The average acceptance rate of speculative decoding (`accepted tokens / total draft tokens` in batch).",
            labels,
            registry=r,
        )
        self.tokens = Counter("sglang:generation_tokens", "Number of generation tokens processed.", ["model_name", "engine_type"], registry=r)
        Gauge("sglang:num_running_reqs", "The number of running requests.", labels, registry=r).labels(TARGET, "unified", "0", "0").set(3)
        self.lengths, self.rates, self.tokens_per_step = lengths, rates, tokens_per_step
        self.requests = 0
        # Before any traffic SGLang reports 0; a server that has run shows its last batch.
        self.length.labels(TARGET, "unified", "0", "0").set(0.0)
        self.tokens.labels(TARGET, "unified").inc(12345)

    def advance(self):
        i = self.requests
        self.requests += 1
        self.length.labels(TARGET, "unified", "0", "0").set(self.lengths[i % len(self.lengths)])
        self.rate.labels(TARGET, "unified", "0", "0").set(self.rates[i % len(self.rates)])
        self.tokens.labels(TARGET, "unified").inc(self.tokens_per_step)

    def body(self):
        return generate_latest(self.registry)


SCENARIOS = {
    # Two data-parallel engines, so the check must sum over `engine`.
    "vllm-healthy": lambda: VllmScenario([(TARGET, "0", 1000, HEALTHY), (TARGET, "1", 600, HEALTHY)]),
    "vllm-collapse": lambda: VllmScenario([(TARGET, "0", 1000, COLLAPSE)]),
    "vllm-cliff": lambda: VllmScenario([(TARGET, "0", 1000, CLIFF)]),
    "vllm-short": lambda: VllmScenario([(TARGET, "0", 1000, GRADUAL_SHORT)]),
    "vllm-idle": lambda: IdleScenario([(TARGET, "0", 1000, HEALTHY)]),
    "vllm-reset": ResetScenario,
    "vllm-malformed": MalformedScenario,
    "vllm-slow": SlowScenario,
    "vllm-two-models": lambda: VllmScenario([(TARGET, "0", 1000, HEALTHY), (OTHER_TARGET, "0", 1000, COLLAPSE)]),
    "vllm-no-spec": NoSpecScenario,
    "not-found": NotFoundScenario,
    "sglang": SglangScenario,
    "sglang-idle": lambda: SglangScenario(lengths=[3.3], rates=[0.5], tokens_per_step=0),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    parser.add_argument("--lifetime", type=float, default=120.0)
    parser.add_argument("--drafter", default=None, help="the drafter SGLang's /get_server_info names")
    args = parser.parse_args()
    scenario = SCENARIOS[args.scenario]()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path in ("/v1/models", "/get_server_info"):
                self.server_json()
                return
            if self.path != "/metrics":
                self.send_error(404)
                return
            with lock:
                scenario.advance()
                body = scenario.body()
            if scenario.delay:
                time.sleep(scenario.delay)
            try:
                self.send_response(scenario.status)
                self.send_header("Content-Type", CONTENT_TYPE_LATEST if scenario.status == 200 else "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (the slow scenario's point)

        def server_json(self):
            # What each engine says about itself (doctor reads it): vLLM's OpenAI-compatible
            # /v1/models names the served target, never the drafter; SGLang's /get_server_info
            # returns its resolved server arguments, the drafter's path included.
            sglang = args.scenario.startswith("sglang")
            if self.path == "/v1/models" and not sglang:
                body = {"object": "list", "data": [{"id": TARGET, "object": "model", "root": TARGET}]}
            elif self.path == "/get_server_info" and sglang:
                body = {
                    "model_path": TARGET,
                    "speculative_algorithm": "DFLASH",
                    "speculative_draft_model_path": args.drafter,
                    "speculative_num_draft_tokens": K + 1,
                    "version": "0.5.0",
                }
            else:
                self.send_error(404)
                return
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Timer(args.lifetime, server.shutdown).start()
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
