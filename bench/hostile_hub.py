#!/usr/bin/env python3
"""A hostile Hub for RELIABILITY.md's "Hostile servers" figures (not used by the tests, which
have their own loopback server in tests/support/mod.rs).

    python3 bench/hostile_hub.py PORT MODE [BYTES]

Serves any `/{org}/{name}/resolve/{rev}/{file}`: the HEAD answers like the Hub (X-Repo-Commit,
ETag = git blob sha1 of a small config) but gives no size; the GET then does what MODE says:

    flood   BYTES (default 1.6 GB) of `x` with no Content-Length, until the client hangs up
    drip    the real config, one byte per second; the HEAD and GET name a xet hash
            (`X-Xet-Hash`). (The in-process test `a_xet_file_with_a_dripping_body_ends_within_
            the_timeout` also serves a xet token and a CAS server that never answers.)
    xsize   the real config with `X-Linked-Size: 18446744073709551615`

Each request is printed on stderr with the body bytes the client took.
"""
import hashlib
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CONFIG = b'{"architectures": ["DFlashDraftModel"], "num_hidden_layers": 5}\n'
ETAG = hashlib.sha1(b"blob %d\0" % len(CONFIG) + CONFIG).hexdigest()
SHA = "0123456789abcdef0123456789abcdef01234567"
MODE = sys.argv[2]
BYTES = int(sys.argv[3]) if len(sys.argv) > 3 else 1_600_000_000


class Hub(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def common(self, code=200):
        self.send_response(code)
        self.send_header("X-Repo-Commit", SHA)
        self.send_header("ETag", f'"{ETAG}"')
        self.send_header("Connection", "close")

    def do_HEAD(self):
        self.common()
        if MODE == "drip":
            self.send_header("X-Xet-Hash", "a" * 64)
        self.end_headers()
        self.log(0)

    def do_GET(self):
        self.common()
        sent = 0
        try:
            if MODE == "flood":
                self.end_headers()
                chunk = b"x" * (1 << 20)
                while sent < BYTES:
                    n = min(len(chunk), BYTES - sent)
                    self.wfile.write(chunk[:n])
                    sent += n
            elif MODE == "drip":
                self.send_header("X-Xet-Hash", "a" * 64)
                self.send_header("Content-Length", str(len(CONFIG)))
                self.end_headers()
                for b in CONFIG:
                    self.wfile.write(bytes([b]))
                    self.wfile.flush()
                    sent += 1
                    time.sleep(1)
            else:
                self.send_header("X-Linked-Size", "18446744073709551615")
                self.send_header("Content-Length", str(len(CONFIG)))
                self.end_headers()
                self.wfile.write(CONFIG)
                sent = len(CONFIG)
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.log(sent)

    def log(self, sent):
        print(f"{self.command} {self.path}: {sent} body bytes taken", file=sys.stderr, flush=True)

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Hub).serve_forever()
