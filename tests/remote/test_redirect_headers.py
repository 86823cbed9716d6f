#!/usr/bin/env python3
"""-H headers never follow a redirect to another host (issue 37, class 3).

Two loopback servers written here: ORIGIN on 127.0.0.1 answers every request for /CODE/FILE
with that redirect status (301, 302, 303, 307, 308) and a Location on OTHER, a server on
127.0.0.2 (another host, another port) that serves FILE with single-range Range support.
Both record the headers of every request. `inspect` and `dequant` with
-H 'X-Api-Key: ...', -H 'Authorization: ...' and -H 'Cookie: ...' must then succeed (the
values equal the local file's) while OTHER never sees any of the three; ORIGIN sees them on
every request. A redirect to ORIGIN itself (/same/CODE/FILE) keeps them.

usage: test_redirect_headers.py --cli TENSORBLOB --workdir DIR
Exit 77 (skipped) only when the CLI was built without libcurl (after checking it says so).
"""
import argparse
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading

import numpy as np
from safetensors.numpy import save_file

FAILS = []
SECRET = {"X-Api-Key": "sekrit-key", "Authorization": "Bearer sekrit-token", "Cookie": "session=sekrit"}
RANGE = re.compile(r"^bytes=(\d+)-(\d+)$")


def check(cond, what, detail=""):
    print(("ok: " if cond else "FAIL: ") + what + ("" if cond else f" {str(detail)[:600]}"))
    if not cond:
        FAILS.append(what)
    return cond


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, host, root, role):
        super().__init__((host, 0), Handler)
        self.root, self.role, self.other = root, role, None
        self.lock = threading.Lock()
        self.seen = []  # (path, {header: value}) of every request

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)

    def url(self):
        return f"http://{self.server_address[0]}:{self.server_address[1]}"

    def take(self):
        with self.lock:
            s, self.seen = self.seen, []
        return s


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_body(self, code, headers, body):
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        srv = self.server
        with srv.lock:
            srv.seen.append((self.path, {k: self.headers.get(k) for k in SECRET if self.headers.get(k) is not None}))
        parts = self.path.lstrip("/").split("/")
        if srv.role == "origin":
            # /CODE/FILE -> OTHER/FILE;  /same/CODE/FILE -> ORIGIN/serve/FILE;  /serve/FILE: the file
            if parts[0] == "same":
                return self.send_body(int(parts[1]), [("Location", f"{srv.url()}/serve/{parts[2]}")], b"moved")
            if parts[0] != "serve":
                return self.send_body(int(parts[0]), [("Location", f"{srv.other.url()}/{parts[1]}")], b"moved")
            parts = parts[1:]
        path = os.path.join(srv.root, parts[-1])
        if not os.path.isfile(path):
            return self.send_body(404, [], b"not found")
        data = open(path, "rb").read()
        m = RANGE.match(self.headers.get("Range", ""))
        if not m:
            return self.send_body(200, [], data)
        a, b = int(m.group(1)), min(int(m.group(2)), len(data) - 1)
        self.send_body(206, [("Content-Range", f"bytes {a}-{b}/{len(data)}")], data[a:b + 1])


def run(cli, *args):
    p = subprocess.run([cli, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--workdir", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.workdir, ignore_errors=True)
    os.makedirs(a.workdir)
    rc, out, _ = run(a.cli, "version", "--json")
    if not json.loads(out)["features"]["http"]:
        rc, _, err = run(a.cli, "inspect", "http://127.0.0.1:9/m.safetensors")
        print("skipped: built without libcurl" if rc == 2 else f"FAIL: no libcurl and URL not refused: {err}")
        sys.exit(77 if rc == 2 else 1)

    rng = np.random.default_rng(37)
    w = rng.standard_normal((16, 64)).astype(np.float32)
    save_file({"w": w, "b": np.arange(5, dtype=np.float32)}, os.path.join(a.workdir, "m.safetensors"))
    origin = Server("127.0.0.1", a.workdir, "origin")
    other = Server("127.0.0.2", a.workdir, "other")
    origin.other = other
    for s in (origin, other):
        threading.Thread(target=s.serve_forever, daemon=True).start()
    hdr_args = []
    for k, v in SECRET.items():
        hdr_args += ["-H", f"{k}: {v}"]
    try:
        for code in (301, 302, 303, 307, 308):
            url = f"{origin.url()}/{code}/m.safetensors"
            rc, out, err = run(a.cli, "inspect", "--json", *hdr_args, url)
            d = json.loads(out) if out.strip() else {}
            check(rc == 0 and [t["name"] for t in d.get("tensors", [])] == ["b", "w"],
                  f"{code}: inspect through the redirect opens the file", (rc, out, err))
            outf = os.path.join(a.workdir, "w.f32")
            rc, out, err = run(a.cli, "dequant", *hdr_args, "--out", outf, url, "w")
            check(rc == 0 and np.array_equal(np.fromfile(outf, dtype="<f4").reshape(16, 64), w),
                  f"{code}: dequant through the redirect gives the file's values", (rc, err))
            to_other, to_origin = other.take(), origin.take()
            leaked = sorted({k for _, h in to_other for k in h})
            check(to_other and not leaked, f"{code}: no -H header reaches the other host", (leaked, to_other[:3]))
            check(to_origin and all(h == SECRET for _, h in to_origin),
                  f"{code}: every -H header reaches the host it was given for", to_origin[:3])
            # a redirect to the same scheme, host and port keeps them
            rc, out, err = run(a.cli, "inspect", "--json", *hdr_args, f"{origin.url()}/same/{code}/m.safetensors")
            seen = origin.take()
            check(rc == 0 and any(p.startswith("/serve/") for p, _ in seen) and all(h == SECRET for _, h in seen),
                  f"{code}: a redirect to the same host keeps the -H headers", (rc, err, seen[:3]))
            other.take()
    finally:
        origin.shutdown()
        other.shutdown()
    print(f"{len(FAILS)} failure(s)")
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
