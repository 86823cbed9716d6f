#!/usr/bin/env python3
"""`tensorblob inspect --json` on the GGUF fixtures against their manifests (what gguf-py's
GGUFReader reported when tests/gguf/gen_gguf_fixtures.py wrote them).

    cli_check.py TENSORBLOB DATA_DIR

Prints one line per failed check, then `N passed, N failed`; exit status 1 if any failed.
"""
import json
import struct
import subprocess
import sys

DTYPES = {0: "F32", 1: "F16", 30: "BF16", 28: "F64", 24: "I8", 25: "I16", 26: "I32", 27: "I64"}


def load(path):
    kv, arrays, tensors = {}, set(), []
    for line in open(path):
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        if f[0] == "kv":
            kv[f[1]] = (int(f[2]), f[3])
        elif f[0] == "arr":
            arrays.add(f[1])
        elif f[0] == "tensor":
            rank = int(f[5])
            tensors.append({"name": f[1], "type": int(f[2]), "offset": int(f[3]), "bytes": int(f[4]),
                            "shape": [int(x) for x in f[6:6 + rank]]})
    return kv, arrays, tensors


def value_ok(vtype, want, got):
    if vtype == 8:
        return got == (b"" if want == "-" else bytes.fromhex(want)).decode("utf-8")
    if vtype == 7:
        return got == ("true" if want == "1" else "false")
    if vtype == 6:
        return struct.pack("<f", float(got)) == struct.pack("<I", int(want, 16))
    if vtype == 12:
        return struct.pack("<d", float(got)) == struct.pack("<Q", int(want, 16))
    return got == want


def main():
    cli, data = sys.argv[1], sys.argv[2]
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print("FAIL: " + what)

    for name in ("good_v3", "align64", "small_v2"):
        kv, arrays, tensors = load("%s/%s.manifest" % (data, name))
        r = subprocess.run([cli, "inspect", "--json", "%s/%s.gguf" % (data, name)], capture_output=True, text=True)
        check(r.returncode == 0, "%s: exit %d (%s)" % (name, r.returncode, r.stderr.strip()))
        doc = json.loads(r.stdout)
        check(doc.get("ok") is True and doc.get("format") == "gguf", "%s: %s" % (name, r.stdout[:200]))
        got = doc.get("tensors", [])
        check(len(got) == len(tensors), "%s: %d tensors, manifest %d" % (name, len(got), len(tensors)))
        base = tensors[0]["offset"] if tensors else 0  # the first tensor starts the data region
        for g, w in zip(got, tensors):
            check(g["name"] == w["name"], "%s: name %s vs %s" % (name, g["name"], w["name"]))
            check(g["dtype"] == DTYPES.get(w["type"], "U8"), "%s/%s: dtype %s" % (name, w["name"], g["dtype"]))
            check(g["shape"] == w["shape"], "%s/%s: shape %s vs %s" % (name, w["name"], g["shape"], w["shape"]))
            check(g["offset"] == w["offset"] - base, "%s/%s: offset %d" % (name, w["name"], g["offset"]))
            check(g["length"] == w["bytes"], "%s/%s: length %d" % (name, w["name"], g["length"]))
        meta = doc.get("metadata", {})
        check(set(meta) == set(kv), "%s: metadata keys %s vs %s" % (name, sorted(meta), sorted(kv)))
        check(not (set(meta) & arrays), "%s: arrays listed as metadata" % name)
        for k, (vtype, want) in kv.items():
            if k in meta:
                check(value_ok(vtype, want, meta[k]), "%s: %s = %r (want type %d %s)" % (name, k, meta[k], vtype, want))

    r = subprocess.run([cli, "inspect", "--json", "%s/big_endian.gguf" % data], capture_output=True, text=True)
    check(r.returncode == 1, "big_endian: exit %d" % r.returncode)
    doc = json.loads(r.stdout)
    check(doc.get("ok") is False and doc.get("error", {}).get("status") == "TBLOB_E_GGUF_BIG_ENDIAN",
          "big_endian: %s" % r.stdout[:200])
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
