#!/usr/bin/env python3
"""The CLI on tests/data/ollama/real-gguf-store (a real `ollama create` of GGUF files): ls,
inspect --store (model, --layer projector, --layer adapter), verify --store and dequant --store,
against what gguf-py read from the same GGUF files (tests/data/ollama/real-gguf-oracle).

    real_store_cli.py TENSORBLOB OLLAMA_DATA_DIR

Prints one line per failed check, then `N passed, N failed`; exit status 1 if any failed.
"""
import json
import os
import subprocess
import sys
import tempfile


def oracle(data, base):
    tensors = []
    for line in open(os.path.join(data, "real-gguf-oracle", base + ".manifest")):
        f = line.split()
        if f and f[0] == "tensor":
            rank = int(f[3])
            shape = [int(x) for x in f[4:4 + rank]]
            n = 1
            for d in shape:
                n *= d
            tensors.append({"name": f[1], "shape": shape, "at": int(f[4 + rank]), "n": n})
    values = open(os.path.join(data, "real-gguf-oracle", base + ".f32"), "rb").read()
    return tensors, values


def main():
    cli, data = sys.argv[1], sys.argv[2]
    store = os.path.join(data, "real-gguf-store")
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print("FAIL:", what)

    def run(*args):
        return subprocess.run([cli] + list(args), capture_output=True)

    r = run("ls", "--store", store, "--json")
    check(r.returncode == 0, "ls exit %d: %s" % (r.returncode, r.stderr[-300:]))
    models = [json.loads(x) for x in r.stdout.decode().splitlines() if x.strip()]
    if models and "models" in models[0]:
        models = models[0]["models"]
    names = [m.get("short_name") for m in models]
    check(names == ["tiny-gguf:latest"], "ls lists %s" % names)
    check(any(m.get("id", "").startswith("62b806cd7226") for m in models), "ls id (ollama list: 62b806cd7226)")

    for layer, base in ((None, "tiny"), ("projector", "mmproj"), ("adapter", "adapter"), ("1", "tiny")):
        args = ["inspect", "--store", store, "--json"] + (["--layer", layer] if layer else []) + ["tiny-gguf"]
        r = run(*args)
        check(r.returncode == 0, "inspect --layer %s exit %d: %s" % (layer, r.returncode, r.stderr[-300:]))
        if r.returncode:
            continue
        got = json.loads(r.stdout)
        want, _ = oracle(data, base)
        check([t["name"] for t in got["tensors"]] == [t["name"] for t in want], "inspect --layer %s names" % layer)
        check([t["shape"] for t in got["tensors"]] == [t["shape"] for t in want], "inspect --layer %s shapes" % layer)
        check(got["metadata"].get("ollama.name") == "registry.ollama.ai/library/tiny-gguf:latest",
              "inspect --layer %s ollama.name" % layer)

    r = run("verify", "--store", store, "--json")
    check(r.returncode == 0, "verify exit %d: %s" % (r.returncode, r.stdout[-300:]))
    if r.returncode == 0:
        v = json.loads(r.stdout)
        check(v["ok"] and v["blobs"] == 8 and v["blobs_bad"] == 0, "verify summary %s" % v)

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "t.f32")
        for layer, base in ((None, "tiny"), ("projector", "mmproj"), ("adapter:0", "adapter")):
            tensors, values = oracle(data, base)
            for t in tensors:
                args = ["dequant", "--store", store, "--out", out] + (["--layer", layer] if layer else []) + \
                       ["tiny-gguf", t["name"]]
                r = run(*args)
                check(r.returncode == 0, "dequant %s %s exit %d: %s" % (layer, t["name"], r.returncode, r.stderr[-300:]))
                if r.returncode == 0:
                    got = open(out, "rb").read()
                    check(got == values[4 * t["at"]:4 * (t["at"] + t["n"])], "dequant %s %s values" % (layer, t["name"]))
        r = run("dequant", "--store", store, "--out", out, "--layer", "projector:x", "tiny-gguf", "mm.0.bias")
        check(r.returncode == 2, "dequant --layer projector:x is a usage error (exit %d)" % r.returncode)
        r = run("inspect", "--store", store, "--layer", "adapter:1", "tiny-gguf")
        check(r.returncode == 1 and b"TBLOB_E_OLLAMA_COMPONENT" in r.stderr,
              "inspect --layer adapter:1 (one adapter only): exit %d %s" % (r.returncode, r.stderr[-200:]))
        r = run("inspect", "--layer", "projector", store)
        check(r.returncode == 2, "--layer without --store is a usage error (exit %d)" % r.returncode)

    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
