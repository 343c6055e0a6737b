#!/usr/bin/env python3
"""A large /metrics exposition for timing `dflash-check acceptance` (BENCHMARKS.md, "acceptance").

    bench/metrics.py SHAPE [--mib 16]

Serves two expositions of about --mib MiB on 127.0.0.1 (an ephemeral port, printed as
"PORT <n>"): the first GET gets the window's start, every later GET its end (the spec-decode
counters advanced), so `acceptance` measures a real window. Text in prometheus_client's layout
(# HELP / # TYPE before each family), written here so the size is exact. Shapes:

  engines  vLLM's four spec-decode families over many `engine` replicas: every series is read
           and summed (K = 15: 18 series per replica).
  series   one replica's spec-decode counters plus one unrelated counter family with many
           series (`vllm:request_success_total{finished_reason="r<i>"}`): parsed, not read.
  labels   one replica's spec-decode counters plus series with 100 labels each.
"""

import argparse
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

K = 15
MODEL = "Qwen/Qwen3.6-27B"
SPEC = [
    "vllm:spec_decode_num_drafts_total",
    "vllm:spec_decode_num_draft_tokens_total",
    "vllm:spec_decode_num_accepted_tokens_total",
]
PER_POS = "vllm:spec_decode_num_accepted_tokens_per_pos_total"


def spec(engines, step):
    """The spec-decode families for `engines` replicas; `step` 0 or 1 (start or end)."""
    drafts = 1000 * (step + 1)
    per_pos = [int(drafts * 0.9 * 0.8**k) for k in range(K)]
    values = [drafts, drafts * K, sum(per_pos)]
    out = []
    for name, v in zip(SPEC, values):
        out.append(f"# HELP {name} x\n# TYPE {name} counter\n")
        out.extend(f'{name}{{engine="{e}",model_name="{MODEL}"}} {v}.0\n' for e in range(engines))
    out.append(f"# HELP {PER_POS} x\n# TYPE {PER_POS} counter\n")
    for e in range(engines):
        out.extend(
            f'{PER_POS}{{engine="{e}",model_name="{MODEL}",position="{k}"}} {v}.0\n'
            for k, v in enumerate(per_pos)
        )
    return "".join(out)


def exposition(shape, size, step):
    if shape == "engines":
        per_engine = len(spec(1, 1))
        return spec(max(1, size // per_engine), step)
    head = spec(1, step)
    out = [head]
    total = len(head)
    if shape == "series":
        name = "vllm:request_success_total"
        out.append(f"# HELP {name} x\n# TYPE {name} counter\n")
        i = 0
        while total < size:
            line = f'{name}{{finished_reason="r{i}",model_name="{MODEL}"}} {i}.0\n'
            out.append(line)
            total += len(line)
            i += 1
    elif shape == "labels":
        name = "vllm:wide"
        out.append(f"# HELP {name} x\n# TYPE {name} gauge\n")
        i = 0
        while total < size:
            labels = ",".join(f'l{j}="v{i}_{j}"' for j in range(100))
            line = f"{name}{{{labels}}} 1.0\n"
            out.append(line)
            total += len(line)
            i += 1
    else:
        sys.exit(f"unknown shape {shape}")
    return "".join(out)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("shape", choices=["engines", "series", "labels"])
    p.add_argument("--mib", type=float, default=16)
    a = p.parse_args()
    size = int(a.mib * 1024 * 1024) - 64 * 1024  # under the cap with room for the spec head
    bodies = [exposition(a.shape, size, s).encode() for s in (0, 1)]
    lines = bodies[0].count(b"\n")
    print(f"# {a.shape}: {len(bodies[0])} bytes, {lines} lines", file=sys.stderr)
    served = [0]

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            body = bodies[min(served[0], 1)]
            served[0] += 1
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
