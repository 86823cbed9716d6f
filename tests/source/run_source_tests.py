#!/usr/bin/env python3
"""Byte-source tests: writes a 20,000-tensor safetensors file with the safetensors package,
then runs

  test_source       the library over an in-memory counting source (tests/source/test_source.c)
  test_http_source  the library over HTTP range requests to the server below, which counts
                    the body bytes it serves (tests/source/test_http_source.c)

    run_source_tests.py TEST_SOURCE TEST_HTTP_SOURCE EXAMPLES_DIR TESTS_DATA_DIR

The server serves the file under /honest/ (exact ranges), /short/ (a 206 one byte short),
/over/ (a 206 one byte longer than asked) and /changing/ (a Content-Range total that differs
from the size HEAD gave). Prints `N passed, N failed` last.
"""
import http.server
import json
import os
import shlex
import struct
import subprocess
import sys
import tempfile
import threading

import numpy as np
from safetensors import safe_open
from safetensors.numpy import save_file

N_TENSORS = 20000


def write_big(path):
    # Element k of t.i is i + k (float32): the HTTP client checks one value.
    tensors = {f"t.{i}": np.arange(i, i + 1 + i % 7, dtype=np.float32) for i in range(N_TENSORS)}
    save_file(tensors, path, metadata={"format": "pt"})
    with safe_open(path, framework="np") as f:
        assert len(list(f.keys())) == N_TENSORS
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = f.read(n)
    json.loads(header)  # exactly N bytes of JSON: the header the package wrote
    return 8 + n


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    root = None
    served = 0
    lock = threading.Lock()

    def log_message(self, *args):
        pass

    def _file(self):
        parts = self.path.strip("/").split("/", 1)
        if len(parts) != 2 or parts[0] not in ("honest", "short", "over", "changing"):
            return None, None
        p = os.path.join(self.root, os.path.basename(parts[1]))
        return (parts[0], p) if os.path.isfile(p) else (None, None)

    def _send(self, code, headers, body=b""):
        self.send_response(code)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Connection", "close")
        self.end_headers()
        if body:
            self.wfile.write(body)
            with Handler.lock:
                Handler.served += len(body)

    def do_HEAD(self):
        mode, p = self._file()
        if not p:
            self._send(404, {"Content-Length": "0"})
            return
        self._send(200, {"Content-Length": str(os.path.getsize(p)), "Accept-Ranges": "bytes"})

    def do_GET(self):
        if self.path == "/_bytes":
            with Handler.lock:
                n, Handler.served = Handler.served, 0
            body = str(n).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)  # not counted
            return
        mode, p = self._file()
        if not p:
            self._send(404, {"Content-Length": "0"})
            return
        size = os.path.getsize(p)
        rng = self.headers.get("Range", "")
        if not rng.startswith("bytes="):
            self._send(400, {"Content-Length": "0"})
            return
        a, b = rng[6:].split("-")
        a, b = int(a), int(b)
        if a >= size:
            self._send(416, {"Content-Range": f"bytes */{size}", "Content-Length": "0"})
            return
        b = min(b, size - 1)
        with open(p, "rb") as f:
            f.seek(a)
            body = f.read(b - a + 1)
        total = size
        if mode == "short":
            body = body[:-1]
        elif mode == "over":
            body = body + b"\0"
        elif mode == "changing":
            total = size + 1
        end = a + len(body) - 1
        self._send(206, {"Content-Range": f"bytes {a}-{end}/{total}", "Content-Length": str(len(body))}, body)


def main():
    test_source, test_http, examples, data = sys.argv[1:5]
    # Cross builds (qemu-aarch64): meson names the exe_wrapper; the test binaries are the target's.
    wrap = shlex.split(os.environ.get("MESON_EXE_WRAPPER", ""))
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        big = os.path.join(tmp, "big.safetensors")
        header_bytes = write_big(big)
        print(f"big.safetensors: {N_TENSORS} tensors, header 8 + {header_bytes - 8} = {header_bytes} bytes, "
              f"file {os.path.getsize(big)} bytes")
        r = subprocess.run(wrap + [test_source, big, str(header_bytes), examples, data])
        print(f"test_source: exit {r.returncode}")
        passed, failed = (passed + 1, failed) if r.returncode == 0 else (passed, failed + 1)

        Handler.root = tmp
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        t = threading.Thread(target=server.serve_forever, daemon=True)
        t.start()
        try:
            r = subprocess.run(wrap + [test_http, str(server.server_address[1]), "big.safetensors", str(header_bytes)])
        finally:
            server.shutdown()
        print(f"test_http_source: exit {r.returncode}")
        passed, failed = (passed + 1, failed) if r.returncode == 0 else (passed, failed + 1)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
