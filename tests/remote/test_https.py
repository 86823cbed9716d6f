#!/usr/bin/env python3
"""`tensorblob` on https:// URLs against the Range server of test_remote.py wrapped in TLS on
127.0.0.1. A throwaway CA and a server certificate for 127.0.0.1 and localhost signed by it are
made at test time with the openssl tool, so nothing trusts the server unless told to.

Checks: with the CA trusted (--cacert, and CURL_CA_BUNDLE) inspect --json lists every tensor
and fetches exactly the header bytes (the server's count == "fetched".bytes); without it the
open fails with a certificate error (non-zero exit, TBLOB_E_IO in the JSON) and no request
reaches the server (no fallback to plain http); a CA that did not sign the server is refused
the same way; --cacert naming a missing file is a usage error; dequant of one tensor over
https writes the same bytes as dequant of the local file and the values numpy wrote.

usage: test_https.py --cli TENSORBLOB --workdir DIR
Exit 77 (skipped) only when the CLI was built without libcurl or there is no openssl tool.
"""
import argparse
import json
import os
import shutil
import ssl
import subprocess
import sys
import threading

import numpy as np
from safetensors.numpy import save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_remote import FAILS, Server, check, header_len, header_of, one_json  # noqa: E402


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def make_ca(d, name):
    """A self-signed CA: d/NAME.key, d/NAME.pem."""
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "2", "-subj", f"/CN=tensorblob test {name}",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            cwd=d)


def make_certs(d):
    """ca.pem (trusted by the passing runs), other.pem (a CA that signed nothing here), and
    server.pem/server.key for 127.0.0.1 and localhost, signed by ca."""
    make_ca(d, "ca")
    make_ca(d, "other")
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1", cwd=d)
    with open(os.path.join(d, "server.ext"), "w") as f:
        f.write("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n"
                "subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial", "2",
            "-days", "2", "-extfile", "server.ext", "-out", "server.pem", cwd=d)


def run(cli, *args, ca_env=None):
    """The CLI with no CA variables from the caller's environment; CURL_CA_BUNDLE=ca_env if given."""
    env = {k: v for k, v in os.environ.items() if k not in ("CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR")}
    if ca_env is not None:
        env["CURL_CA_BUNDLE"] = ca_env
    p = subprocess.run([cli, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600, env=env)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


class TlsServer(Server):
    def __init__(self, root, context):
        super().__init__(root)
        self.socket = context.wrap_socket(self.socket, server_side=True)

    def handle_error(self, request, client_address):
        # A client that rejects the certificate hangs up mid-handshake: expected here.
        if isinstance(sys.exc_info()[1], (ssl.SSLError, ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    cli = args.cli

    rc, out, _ = run(cli, "version", "--json")
    if not json.loads(out)["features"].get("http"):
        print("SKIP: built without libcurl")
        return 77
    if shutil.which("openssl") is None:
        print("SKIP: no openssl tool to make the test certificates")
        return 77

    work = args.workdir
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    make_certs(work)
    ca = os.path.join(work, "ca.pem")
    other = os.path.join(work, "other.pem")

    rng = np.random.default_rng(23)
    model = {f"layers.{i}.weight": rng.standard_normal((3, 5)).astype(np.float32) for i in range(500)}
    model["lm_head.weight"] = rng.standard_normal((16, 24)).astype(np.float32)
    path = os.path.join(work, "m.safetensors")
    save_file(model, path)

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(os.path.join(work, "server.pem"), os.path.join(work, "server.key"))
    srv = TlsServer(work, context)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"https://127.0.0.1:{srv.server_address[1]}/ok/m.safetensors"
    try:
        checks(cli, url, srv, work, ca, other, model, path)
    finally:
        srv.shutdown()
    print(f"{len(FAILS)} failed" if FAILS else "all passed")
    return 1 if FAILS else 0


def checks(cli, url, srv, work, ca, other, model, path):
    n = header_len(path)
    _, hdr = header_of(path)
    want_names = set(k for k in hdr if k != "__metadata__")

    # --- trusted: --cacert, then CURL_CA_BUNDLE --------------------------------------------
    for how, extra, env in (("--cacert", ["--cacert", ca], None), ("CURL_CA_BUNDLE", [], ca)):
        b0, r0 = srv.counts()
        rc, out, err = run(cli, "inspect", "--json", *extra, url, ca_env=env)
        b1, r1 = srv.counts()
        j = one_json(out)
        check(rc == 0 and j.get("ok") is True, f"https inspect --json with the CA trusted by {how} succeeds",
              f"{rc} {err} {out[:300]}")
        check(set(t["name"] for t in j.get("tensors", [])) == want_names and len(j.get("tensors", [])) == 501,
              f"... lists every tensor of the header ({how})", f"{len(j.get('tensors', []))}")
        check(b1 - b0 == 8 + n, f"... the server sent exactly the header: 8 + {n} bytes ({how})", f"{b1 - b0}")
        check(j.get("fetched", {}).get("bytes") == b1 - b0 and j.get("fetched", {}).get("requests") == r1 - r0,
              f"... --json fetched equals the server's counts ({how})", f"{j.get('fetched')} {b1 - b0} {r1 - r0}")

    # --- untrusted: no CA given, or the wrong CA ---------------------------------------------
    for how, extra, env in (("no CA given", [], None), ("--cacert of another CA", ["--cacert", other], None),
                            ("CURL_CA_BUNDLE of another CA", [], other)):
        _, r0 = srv.counts()
        rc, out, err = run(cli, "inspect", "--json", *extra, url, ca_env=env)
        _, r1 = srv.counts()
        j = one_json(out)
        msg = j.get("error", {}).get("message", "") + " " + j.get("error", {}).get("detail", "")
        check(rc != 0 and j.get("ok") is False and j.get("error", {}).get("status") == "TBLOB_E_IO",
              f"{how}: non-zero exit and TBLOB_E_IO in the JSON", f"{rc} {out} {err}")
        check("certificate" in msg.lower(), f"{how}: the error names the certificate", msg)
        check(r1 == r0, f"{how}: no request was answered (the TLS handshake failed first)", f"{r1 - r0}")
    rc, _, err = run(cli, "inspect", url)
    check(rc != 0 and "certificate" in err.lower() and "--cacert" in err,
          "text mode: the certificate error on stderr, with the --cacert hint", f"{rc} {err}")

    # A missing --cacert file is the caller's mistake, found before any request.
    _, r0 = srv.counts()
    rc, _, err = run(cli, "inspect", "--cacert", os.path.join(work, "missing.pem"), url)
    check(rc == 2 and "--cacert" in err and srv.counts()[1] == r0, "--cacert of a missing file: usage error (2)",
          f"{rc} {err}")

    # --- dequant over https equals the local file's -----------------------------------------
    url_out = os.path.join(work, "lm_url.f32")
    loc_out = os.path.join(work, "lm_local.f32")
    lo, hi = hdr["lm_head.weight"]["data_offsets"]
    b0, _ = srv.counts()
    rc, out, err = run(cli, "dequant", "--json", "--cacert", ca, "--out", url_out, url, "lm_head.weight")
    b1, _ = srv.counts()
    check(rc == 0 and one_json(out).get("ok") is True, "https dequant succeeds", f"{rc} {out} {err}")
    check(b1 - b0 == 8 + n + (hi - lo), f"... fetching the header and the tensor's {hi - lo} bytes", f"{b1 - b0}")
    rc2, _, err2 = run(cli, "dequant", "--out", loc_out, path, "lm_head.weight")
    check(rc2 == 0, "dequant of the local file", err2)
    if os.path.exists(url_out) and os.path.exists(loc_out):
        a = open(url_out, "rb").read()
        check(a == open(loc_out, "rb").read(), "https dequant output equals the local file's")
        check(np.array_equal(np.frombuffer(a, dtype="<f4"), model["lm_head.weight"].ravel()),
              "https dequant values equal what numpy wrote")
    else:
        check(False, "both dequant outputs exist")


if __name__ == "__main__":
    sys.exit(main())
