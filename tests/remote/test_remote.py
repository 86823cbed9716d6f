#!/usr/bin/env python3
"""`tensorblob` on http:// URLs against a loopback server written here (http.server with
single-range Range support on 127.0.0.1, a random port), which counts every body byte and
request it serves. The files are written by the safetensors package; header sizes are read
from the files themselves (8 + the little-endian u64 at their start).

Checks: inspect --json of a 20,000-tensor file fetches exactly the header bytes and its
"fetched" count equals the server's; dequant of one tensor adds exactly that tensor's bytes
and its values equal the local file's (and numpy's); diff URL FILE says equal (and different
for a changed file); a sharded index URL lists the union of its shards; --header reaches the
server (401 without it); a server that lies (short body, more bytes than asked, a changing
size, 200 instead of 206) gives a non-zero exit and the status in the JSON.

usage: test_remote.py --cli TENSORBLOB --workdir DIR
Exit 77 (skipped) only when the CLI was built without libcurl (after checking it says so).
"""
import argparse
import http.server
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import threading

import numpy as np
from safetensors.numpy import save_file

FAILS = []
TOKEN = "Bearer sekrit-token"


def check(cond, what, detail=""):
    print(("ok: " if cond else "FAIL: ") + what + ("" if cond else f" {detail}"))
    if not cond:
        FAILS.append(what)
    return cond


def header_len(path):
    with open(path, "rb") as f:
        return struct.unpack("<Q", f.read(8))[0]


def header_of(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        return n, json.loads(f.read(n))


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, root):
        super().__init__(("127.0.0.1", 0), Handler)
        self.root = root
        self.lock = threading.Lock()
        self.bytes = 0
        self.requests = 0
        self.auth_seen = []

    def handle_error(self, request, client_address):
        # The client hangs up on answers it refuses (a 200 to a range request): not an error.
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)

    def counts(self):
        with self.lock:
            return self.bytes, self.requests


RANGE = re.compile(r"^bytes=(\d+)-(\d+)$")


class Handler(http.server.BaseHTTPRequestHandler):
    """GET /MODE/FILE. MODE: ok, auth (wants the bearer token), and the lying ones, which
    lie only after the first request's bytes 0-7 so the open gets as far as the library's
    reads: short (fewer bytes than the Content-Range says), over (a longer range than
    asked), overbody (an honest Content-Range, a longer body), changing (the total grows by
    one; latechange: only for bytes past the header), full (200 with the whole file, from the
    first request)."""

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
        with self.server.lock:
            self.server.bytes += len(body)

    def do_GET(self):
        with self.server.lock:
            self.server.requests += 1
        parts = self.path.lstrip("/").split("/", 1)
        if len(parts) != 2:
            return self.send_body(404, [], b"no")
        mode, name = parts
        path = os.path.join(self.server.root, name)
        if ".." in name or not os.path.isfile(path):
            return self.send_body(404, [], b"not found")
        if mode == "auth":
            got = self.headers.get("Authorization")
            with self.server.lock:
                self.server.auth_seen.append(got)
            if got != TOKEN:
                return self.send_body(401, [("WWW-Authenticate", "Bearer")], b"unauthorized")
        with open(path, "rb") as f:
            data = f.read()
        total = len(data)
        if mode == "full":
            return self.send_body(200, [], data)
        m = RANGE.match(self.headers.get("Range", ""))
        if not m:
            return self.send_body(200, [], data)
        a, b = int(m.group(1)), int(m.group(2))
        if a >= total:
            return self.send_body(416, [("Content-Range", f"bytes */{total}")], b"")
        b = min(b, total - 1)
        probe = a == 0 and b <= 7
        body = data[a:b + 1]
        end = b
        shown_total = total
        if not probe and mode == "latechange" and a < 8 + struct.unpack("<Q", data[:8])[0]:
            mode = "ok"  # honest about the header, lying about tensor bytes
        if not probe:
            if mode == "short":
                body = body[:max(1, len(body) // 2)]
            elif mode == "over":
                end = b + 16
                body = (data + b"\0" * 16)[a:end + 1]
                shown_total = max(total, end + 1)
            elif mode == "overbody":
                body = body + b"\0" * 16
            elif mode in ("changing", "latechange"):
                shown_total = total + 1
        self.send_body(206, [("Content-Range", f"bytes {a}-{end}/{shown_total}"), ("Accept-Ranges", "bytes")], body)


def run(cli, *args):
    p = subprocess.run([cli, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def one_json(out):
    try:
        return json.loads(out.strip().split("\n")[0])
    except (ValueError, IndexError):
        return {}


def error_text(j):
    """The error's message and detail (what the server did: in the message when the open's
    own first request failed, else in detail beside the library's message)."""
    e = j.get("error", {})
    return e.get("message", "") + " " + e.get("detail", "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    cli = args.cli

    rc, out, _ = run(cli, "version", "--json")
    if not json.loads(out)["features"].get("http"):
        rc, out, err = run(cli, "inspect", "--json", "http://127.0.0.1:1/x.safetensors")
        check(rc == 2 and "no http support" in err, "a build without libcurl says so (exit 2)", f"{rc} {err!r}")
        check(one_json(out).get("error", {}).get("status") == "TBLOB_E_FEATURE_DISABLED", "... and in --json", out)
        print("SKIP: built without libcurl")
        return 1 if FAILS else 77

    work = args.workdir
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    # A 20,000-tensor file: small f32 tensors of known values.
    rng = np.random.default_rng(17)
    big = {f"model.layers.{i // 10}.t{i % 10}.weight": rng.standard_normal(3 + i % 5).astype(np.float32)
           for i in range(20000)}
    big["lm_head.weight"] = rng.standard_normal((64, 96)).astype(np.float32)
    big_path = os.path.join(work, "big.safetensors")
    save_file(big, big_path, metadata={"format": "pt"})
    # A small model and a copy with one tensor changed, for diff.
    small = {f"w{i}": rng.standard_normal((4, 8)).astype(np.float32) for i in range(40)}
    small_path = os.path.join(work, "small.safetensors")
    save_file(small, small_path)
    changed = dict(small)
    changed["w7"] = small["w7"] + np.float32(1)
    changed_path = os.path.join(work, "changed.safetensors")
    save_file(changed, changed_path)
    # A sharded checkpoint: index + 2 shards.
    shard_dir = os.path.join(work, "sharded")
    os.makedirs(shard_dir)
    shards = [{f"a{i}": rng.standard_normal((2, 3)).astype(np.float32) for i in range(30)},
              {f"b{i}": rng.standard_normal((5,)).astype(np.float32) for i in range(20)}]
    weight_map, total_size = {}, 0
    for k, tensors in enumerate(shards):
        fn = f"model-{k + 1:05d}-of-00002.safetensors"
        save_file(tensors, os.path.join(shard_dir, fn))
        for name, arr in tensors.items():
            weight_map[name] = fn
            total_size += arr.nbytes
    index_path = os.path.join(shard_dir, "model.safetensors.index.json")
    with open(index_path, "w") as f:
        json.dump({"metadata": {"total_size": total_size}, "weight_map": weight_map}, f)

    srv = Server(work)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    try:
        checks(cli, base, srv, work, big, big_path, small_path, changed_path, shards, index_path)
    finally:
        srv.shutdown()
    print(f"{len(FAILS)} failed" if FAILS else "all passed")
    return 1 if FAILS else 0


def checks(cli, base, srv, work, big, big_path, small_path, changed_path, shards, index_path):
    # --- inspect: the header bytes only ---------------------------------------------------
    n = header_len(big_path)
    b0, r0 = srv.counts()
    rc, out, err = run(cli, "inspect", "--json", f"{base}/ok/big.safetensors")
    b1, r1 = srv.counts()
    j = one_json(out)
    check(rc == 0 and j.get("ok") is True, "inspect --json URL succeeds", f"{rc} {err} {out[:300]}")
    names = [t["name"] for t in j.get("tensors", [])]
    _, hdr = header_of(big_path)
    check(len(names) == 20001 and set(names) == set(k for k in hdr if k != "__metadata__"),
          "inspect URL lists every tensor of the header (20,000 + lm_head)", f"{len(names)}")
    fetched = j.get("fetched", {})
    check(b1 - b0 == 8 + n, f"the server sent exactly the header: 8 + {n} bytes", f"{b1 - b0}")
    check(fetched.get("bytes") == b1 - b0, "--json fetched.bytes equals the server's count", f"{fetched} {b1 - b0}")
    check(fetched.get("requests") == r1 - r0, "--json fetched.requests equals the server's count", f"{fetched} {r1 - r0}")
    print(f"measure: inspect of a {os.path.getsize(big_path)}-byte file with 20,001 tensors fetched "
          f"{b1 - b0} bytes in {r1 - r0} requests (header {n} + 8)")
    hdr_lm = hdr["lm_head.weight"]
    check(any(t["name"] == "lm_head.weight" and t["offset"] == hdr_lm["data_offsets"][0] and
              t["length"] == hdr_lm["data_offsets"][1] - hdr_lm["data_offsets"][0] for t in j.get("tensors", [])),
          "offsets and lengths as the header says")

    # verify: the header only as well (no quantized tensors to check here)
    b0, _ = srv.counts()
    rc, out, err = run(cli, "verify", "--json", f"{base}/ok/small.safetensors")
    b1, _ = srv.counts()
    j = one_json(out)
    check(rc == 0 and j.get("ok") is True and j.get("tensors") == 40 and b1 - b0 == 8 + header_len(small_path)
          and j.get("fetched", {}).get("bytes") == b1 - b0, "verify --json URL: the header only", f"{rc} {out} {err}")

    # commands that read every byte take local paths only
    rc, _, err = run(cli, "export", f"{base}/ok/small.safetensors", os.path.join(work, "exported"))
    check(rc == 2 and "URL" in err and not os.path.exists(os.path.join(work, "exported")),
          "export refuses a URL (usage error)", f"{rc} {err}")

    # text mode names what was fetched
    rc, out, _ = run(cli, "inspect", f"{base}/ok/small.safetensors")
    check(rc == 0 and re.search(r"fetched .* in \d+ requests?", out) is not None, "text inspect says what was fetched", out[-300:])

    # --- dequant: adds exactly the tensor's bytes -----------------------------------------
    lo, hi = hdr_lm["data_offsets"]
    url_out = os.path.join(work, "lm_url.f32")
    loc_out = os.path.join(work, "lm_local.f32")
    b0, r0 = srv.counts()
    rc, out, err = run(cli, "dequant", "--json", "--out", url_out, f"{base}/ok/big.safetensors", "lm_head.weight")
    b1, r1 = srv.counts()
    j = one_json(out)
    check(rc == 0 and j.get("ok") is True, "dequant of a URL succeeds", f"{rc} {err}")
    check(b1 - b0 == 8 + n + (hi - lo), f"dequant fetched the header and the tensor's {hi - lo} bytes, nothing more",
          f"{b1 - b0} != {8 + n + hi - lo}")
    check(j.get("fetched", {}).get("bytes") == b1 - b0, "dequant --json fetched.bytes equals the server's count",
          f"{j.get('fetched')} {b1 - b0}")
    print(f"measure: dequant of lm_head.weight ({hi - lo} bytes) fetched {b1 - b0} bytes in {r1 - r0} requests")
    rc2, _, err2 = run(cli, "dequant", "--out", loc_out, big_path, "lm_head.weight")
    check(rc2 == 0, "dequant of the local file", err2)
    if os.path.exists(url_out) and os.path.exists(loc_out):
        a = open(url_out, "rb").read()
        check(a == open(loc_out, "rb").read(), "URL dequant output equals the local file's")
        check(np.array_equal(np.frombuffer(a, dtype="<f4"), big["lm_head.weight"].ravel()),
              "URL dequant values equal what numpy wrote")
    # rows: a row range fetches only those rows
    b0, _ = srv.counts()
    rc, out, err = run(cli, "dequant", "--json", "--rows", "10:12", "--out", url_out, f"{base}/ok/big.safetensors",
                       "lm_head.weight")
    b1, _ = srv.counts()
    check(rc == 0 and b1 - b0 == 8 + n + 2 * 96 * 4, "dequant --rows 10:12 fetches the header and two rows",
          f"{rc} {b1 - b0} {err}")
    if rc == 0:
        check(np.array_equal(np.fromfile(url_out, dtype="<f4"), big["lm_head.weight"][10:12].ravel()),
              "... with the values of those rows")

    # --- diff ------------------------------------------------------------------------------
    rc, out, err = run(cli, "diff", "--json", f"{base}/ok/small.safetensors", small_path)
    j = one_json(out)
    check(rc == 0 and j.get("equal") is True and j.get("identical") == 40, "diff URL FILE: equal", f"{rc} {err} {out[:300]}")
    check(j.get("fetched", {}).get("bytes", 0) == os.path.getsize(small_path),
          "diff fetched the header and every tensor's bytes once", f"{j.get('fetched')} {os.path.getsize(small_path)}")
    rc, out, err = run(cli, "diff", "--json", f"{base}/ok/changed.safetensors", small_path)
    j = one_json(out)
    check(rc == 1 and [c["name"] for c in j.get("changed", [])] == ["w7"], "diff URL FILE: the changed tensor",
          f"{rc} {out[:300]}")

    # --- sharded checkpoint by its index URL ----------------------------------------------
    b0, _ = srv.counts()
    rc, out, err = run(cli, "inspect", "--json", f"{base}/ok/sharded/model.safetensors.index.json")
    b1, _ = srv.counts()
    j = one_json(out)
    want = {name: f"model-{k + 1:05d}-of-00002.safetensors" for k, s in enumerate(shards) for name in s}
    got = {t["name"]: t.get("file") for t in j.get("tensors", [])}
    check(rc == 0 and got == want, "a sharded index URL lists the union of its shards, each with its file",
          f"{rc} {err} {sorted(got.items())[:3]}")
    shard_dir = os.path.dirname(index_path)
    expect = os.path.getsize(index_path) + sum(
        8 + header_len(os.path.join(shard_dir, f)) for f in sorted(set(want.values())))
    check(b1 - b0 == expect and j.get("fetched", {}).get("bytes") == expect,
          "... fetching the index and each shard's header only", f"{b1 - b0} {j.get('fetched')} {expect}")
    rc, out, err = run(cli, "inspect", "--json", f"{base}/ok/sharded/missing.index.json")
    check(rc == 1 and one_json(out).get("error", {}).get("status") == "TBLOB_E_NOT_FOUND", "a 404 is TBLOB_E_NOT_FOUND",
          f"{rc} {out}")

    # --- --header reaches the server --------------------------------------------------------
    rc, out, err = run(cli, "inspect", "--json", f"{base}/auth/small.safetensors")
    j = one_json(out)
    check(rc == 1 and j.get("ok") is False and "401" in error_text(j),
          "without --header: the 401 is reported", f"{rc} {out}")
    rc, _, err = run(cli, "inspect", f"{base}/auth/small.safetensors")
    check(rc == 1 and "--header" in err and "401" in err, "... and in text mode a hint on stderr", f"{rc} {err}")
    before = len(srv.auth_seen)
    rc, out, err = run(cli, "inspect", "--json", "--header", f"Authorization: {TOKEN}", "-H", "X-Extra: 1",
                       f"{base}/auth/small.safetensors")
    check(rc == 0 and one_json(out).get("ok") is True, "with --header 'Authorization: Bearer ...': opened", f"{rc} {err}")
    check(srv.auth_seen[before:] and all(a == TOKEN for a in srv.auth_seen[before:]),
          "every request carried the header", f"{srv.auth_seen[before:]}")
    rc, _, err = run(cli, "inspect", "--header", "no colon here", f"{base}/ok/small.safetensors")
    check(rc == 2 and "--header" in err, "a malformed --header is a usage error", f"{rc} {err}")

    # --- servers that lie -------------------------------------------------------------------
    lies = [("short", "TBLOB_E_SOURCE_SHORT_READ"), ("over", "TBLOB_E_SOURCE_OVERREAD"),
            ("overbody", "TBLOB_E_SOURCE_OVERREAD"), ("changing", "TBLOB_E_SOURCE_CHANGED"),
            ("full", "TBLOB_E_IO")]
    for mode, status in lies:
        rc, out, err = run(cli, "inspect", "--json", f"{base}/{mode}/small.safetensors")
        j = one_json(out)
        check(rc != 0 and j.get("ok") is False and j.get("error", {}).get("status") == status,
              f"lying server '{mode}': exit {rc}, {status} in the JSON", f"{rc} {out} {err}")
        if mode in ("over", "changing"):
            check(("more" if mode == "over" else "changed") in j.get("error", {}).get("detail", ""),
                  f"... and the detail says what the '{mode}' server did", out)
    rc, out, err = run(cli, "inspect", "--json", f"{base}/full/big.safetensors")
    j = one_json(out)
    check(rc != 0 and "200" in error_text(j), "a 200 answer is named in the error", out)
    # The server writes the whole body into the socket; the client stops at the status line
    # and takes none of it (what it received is what --json counts).
    check(j.get("fetched") == {"bytes": 0, "requests": 1}, "a 200 answer is refused before its body is taken",
          f"{j.get('fetched')}")
    # a lie while reading a tensor (the header was honest): dequant reports it
    rc, out, err = run(cli, "inspect", "--json", f"{base}/latechange/small.safetensors")
    check(rc == 0, "latechange: the header is honest, inspect succeeds", f"{rc} {out} {err}")
    rc, out, err = run(cli, "dequant", "--json", "--out", url_out, f"{base}/latechange/small.safetensors", "w3")
    check(rc != 0 and one_json(out).get("error", {}).get("status") == "TBLOB_E_SOURCE_CHANGED",
          "dequant from a server whose size changes: TBLOB_E_SOURCE_CHANGED", f"{rc} {out} {err}")


if __name__ == "__main__":
    sys.exit(main())
