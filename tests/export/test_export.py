#!/usr/bin/env python3
"""`tensorblob export`: the directories it writes, read back by the safetensors package, hold
the values of the fixtures' expected files (computed by MLX / numpy when the fixtures were
made) or of `tensorblob dequant`; the index is consistent with the shards; `keep` copies
bytes; refusals and failures leave no OUT_DIR; an exported directory imports again.

usage: test_export.py --cli TENSORBLOB --source-root DIR --workdir DIR
"""
import argparse
import json
import os
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys

import ml_dtypes  # noqa: F401  (registers bfloat16 with numpy for the safetensors package)
import numpy as np
from safetensors import safe_open
from safetensors.numpy import load_file, save_file

FAILS = []


def check(cond, what, detail=""):
    print(("ok: " if cond else "FAIL: ") + what + ("" if cond else " " + str(detail)))
    if not cond:
        FAILS.append(what)
    return cond


def run(*args, preexec=None):
    return subprocess.run([CLI, *map(str, args)], capture_output=True, text=True, preexec_fn=preexec)


def export(src, out, *extra):
    r = run("export", "--json", *extra, src, out)
    if not check(r.returncode == 0, f"export {os.path.basename(str(src))} {' '.join(extra)}", r.stderr):
        return None
    return json.loads(r.stdout)


def raw_header(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        return json.loads(f.read(n))


def read_dir(out):
    """All tensors of an exported directory (via the index), checking the index on the way."""
    with open(os.path.join(out, "model.safetensors.index.json")) as f:
        index = json.load(f)
    wm = index["weight_map"]
    shards = sorted(set(wm.values()))
    m = len(shards)
    ok = all(re.fullmatch(r"model-(\d{5})-of-(\d{5})\.safetensors", s) for s in shards)
    ok = ok and [int(s[6:11]) for s in shards] == list(range(1, m + 1)) and all(int(s[15:20]) == m for s in shards)
    check(ok, f"{os.path.basename(out)}: shard names model-0000N-of-0000M", shards)
    on_disk = sorted(p for p in os.listdir(out) if p.endswith(".safetensors"))
    check(on_disk == shards, f"{os.path.basename(out)}: index names exactly the shards on disk", (on_disk, shards))
    tensors, total = {}, 0
    for s in shards:
        path = os.path.join(out, s)
        h = raw_header(path)
        check(h.get("__metadata__") == {"format": "pt"}, f"{s}: __metadata__ format pt", h.get("__metadata__"))
        with safe_open(path, framework="np") as f:
            for k in f.keys():
                check(wm.get(k) == s, f"{s}: weight_map[{k}] is this shard", wm.get(k))
                tensors[k] = f.get_tensor(k)
        total += sum(v["data_offsets"][1] - v["data_offsets"][0] for k, v in h.items() if k != "__metadata__")
    check(set(tensors) == set(wm), f"{os.path.basename(out)}: weight_map keys are the shards' tensors")
    check(index["metadata"]["total_size"] == total, f"{os.path.basename(out)}: metadata.total_size = data bytes",
          (index["metadata"]["total_size"], total))
    return tensors


def dequant(src, name, to="f32"):
    path = os.path.join(WORK, "dq.bin")
    r = run("dequant", "--to", to, "--out", path, src, name)
    if r.returncode != 0:
        return None
    dt = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}[to]
    return np.fromfile(path, dtype=dt)


def same(a, b):
    """Bit-equal, except that NaNs (whose payload no oracle pins) only need the same places."""
    if a is None or b is None or a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f" or a.dtype == ml_dtypes.bfloat16:
        na, nb = np.isnan(a.astype(np.float32)), np.isnan(b.astype(np.float32))
        return np.array_equal(na, nb) and np.array_equal(a[~na].view(np.uint8), b[~nb].view(np.uint8))
    return np.array_equal(a.view(np.uint8), b.view(np.uint8))


def nothing_left(out):
    parent, base = os.path.split(out)
    left = [p for p in os.listdir(parent) if p == base or p.startswith(base + ".tmp-")]
    return left


def main():
    global CLI, WORK
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--workdir", required=True)
    o = ap.parse_args()
    CLI, WORK, root = o.cli, o.workdir, o.source_root
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    comp = os.path.join(root, "tests", "data", "companions")
    W = lambda n: os.path.join(WORK, n)  # noqa: E731

    # 1. Quantized fixtures: every dtype equals the fixture's expected values (MLX's own
    #    dequantization when the fixture was made); companions are folded in, not written.
    suffix = {"f32": "", "bf16": ".bf16", "f16": ".f16"}
    for fx in ("mlx_community", "mlx_community_mxfp4", "hf_fp8"):
        src = os.path.join(comp, fx)
        expected = load_file(os.path.join(src, "expected.safetensors"))
        model = [k for k in raw_header(os.path.join(src, "model.safetensors")) if k != "__metadata__"]
        for dt in ("bf16", "f32", "f16"):
            out = W(f"{fx}-{dt}")
            s = export(src, out, "--dtype", dt) if dt != "bf16" else export(src, out)
            if s is None:
                continue
            got = read_dir(out)
            for k in (k for k in expected if "." + k.rsplit(".", 1)[-1] not in (".bf16", ".f16")):
                check(same(got.get(k), expected[k + suffix[dt]]), f"{fx} {dt}: {k} equals expected")
            comps = [k for k in got if re.search(r"\.(scales|biases|weight_scale_inv)$", k)]
            check(not comps, f"{fx} {dt}: no companion tensors written", comps)
            want = {k for k in model if not re.search(r"\.(scales|biases|weight_scale_inv)$", k)}
            check(set(got) == want, f"{fx} {dt}: tensor names as the source names them", set(got) ^ want)
            # The tensors are plain floats now: config.json keeps every key but the
            # quantization blocks, which would make loaders treat them as quantized.
            src_cfg = json.load(open(os.path.join(src, "config.json")))
            want_cfg = {k: v for k, v in src_cfg.items() if k not in ("quantization", "quantization_config")}
            got_cfg = json.load(open(os.path.join(out, "config.json"))) \
                if os.path.exists(os.path.join(out, "config.json")) else None
            check(want_cfg != src_cfg and got_cfg == want_cfg,
                  f"{fx} {dt}: config.json without quantization/quantization_config", got_cfg)
            check(s["tensors"] == len(got) and s["shards"] == 1 and "model.safetensors.index.json" in s["files"],
                  f"{fx} {dt}: --json summary", s)

    # Ollama-named blobs (N + N.scale [+ N.bias]) against their expected files.
    for fx in ("ollama_per_tensor", "ollama_aliases", "ollama_inferred"):
        src = os.path.join(comp, fx + ".safetensors")
        expected = load_file(os.path.join(comp, f"expected_{fx}.safetensors"))
        if export(src, W(fx), "--dtype", "f32") is None:
            continue
        got = read_dir(W(fx))
        plain = [k for k in expected if not re.search(r"\.(bf16|f16)$", k)]
        for k in plain:
            check(same(got.get(k), expected[k].astype(np.float32)), f"{fx} f32: {k} equals expected")
        # Tensors the library does not resolve as quantized (e.g. a U32 whose companion does
        # not fit) are written as plain tensors; every resolved companion is folded in.
        check(set(plain) <= set(got) and not any(k + ".scale" in got for k in plain),
              f"{fx} f32: the logical tensors, no companions", set(got) ^ set(plain))

    # 2. examples/tiny-llama: f32 and bf16 equal `tensorblob dequant` tensor by tensor, and
    #    a sharded export (64 KiB... here 1KB shards) holds the same tensors.
    tiny = os.path.join(root, "examples", "tiny-llama")
    tiny_file = os.path.join(tiny, "model.safetensors")
    for dt in ("f32", "bf16"):
        if export(tiny, W(f"tiny-{dt}"), "--dtype", dt) is None:
            continue
        got = read_dir(W(f"tiny-{dt}"))
        bad = [k for k, v in got.items() if not same(v.reshape(-1), dequant(tiny_file, k, dt))]
        check(not bad and len(got) == len(load_file(tiny_file)), f"tiny-llama {dt}: equals tensorblob dequant", bad)
    s = export(tiny, W("tiny-sharded"), "--dtype", "f32", "--max-shard-size", "1KB")
    if s:
        got = read_dir(W("tiny-sharded"))
        check(s["shards"] > 1, "tiny-llama 1KB shards: several shards", s["shards"])
        for p in os.listdir(W("tiny-sharded")):
            if p.endswith(".safetensors"):
                h = raw_header(os.path.join(W("tiny-sharded"), p))
                sizes = [v["data_offsets"][1] - v["data_offsets"][0] for k, v in h.items() if k != "__metadata__"]
                check(sum(sizes) <= 1000 or len(sizes) == 1, f"{p}: data within 1KB unless one tensor", sizes)
        ref = read_dir(W("tiny-f32"))
        check(set(ref) == set(got) and all(same(ref[k], got[k]) for k in ref), "tiny-llama: sharded = unsharded")
    r = run("export", "--max-shard-size", "5XB", tiny, W("bad-size"))
    check(r.returncode == 2 and not nothing_left(W("bad-size")), "bad --max-shard-size is a usage error", r.stderr)

    # 3. keep: MLX affine copied byte for byte (mlx-community layout); the copy dequantizes
    #    to the expected values again (config.json travels with it).
    src = os.path.join(comp, "mlx_community")
    if export(src, W("mlx-keep"), "--dtype", "keep"):
        got = read_dir(W("mlx-keep"))
        model = load_file(os.path.join(src, "model.safetensors"))
        check(set(got) == set(model) and all(same(got[k], model[k]) for k in model), "keep: mlx-community bytes kept")
        check(open(os.path.join(W("mlx-keep"), "config.json"), "rb").read() ==
              open(os.path.join(src, "config.json"), "rb").read(), "keep: config.json copied byte for byte")
        expected = load_file(os.path.join(src, "expected.safetensors"))
        shard = os.path.join(W("mlx-keep"), "model-00001-of-00001.safetensors")
        for k in ("model.embed_tokens.weight", "model.layers.0.mlp.down_proj.weight"):
            check(same(dequant(W("mlx-keep"), k), expected[k].reshape(-1)), f"keep round trip: {k} dequantizes as before")
        del shard
    # Ollama aliases (x, x_scale, x_qbias) come out as x.weight-style mlx-community names.
    if export(os.path.join(comp, "ollama_aliases.safetensors"), W("alias-keep"), "--dtype", "keep"):
        got = read_dir(W("alias-keep"))
        src_t = load_file(os.path.join(comp, "ollama_aliases.safetensors"))
        check(sorted(got) == ["x", "x.biases", "x.scales"] and same(got["x.scales"], src_t["x_scale"]) and
              same(got["x.biases"], src_t["x_qbias"]) and same(got["x"], src_t["x"]),
              "keep: Ollama scale/bias become .scales/.biases, bytes as stored", sorted(got))
    for fx, names in (("hf_fp8", ["model.layers.0.mlp.gate_proj.weight", "block-fp8"]),
                      ("ollama_per_tensor.safetensors", ["g (nvfp4)"])):
        out = W(f"refuse-{fx}")
        r = run("export", "--dtype", "keep", os.path.join(comp, fx), out)
        check(r.returncode == 1 and all(n in r.stderr for n in names) and not nothing_left(out),
              f"keep refuses {fx}, naming the tensors, leaving nothing", (r.returncode, r.stderr, nothing_left(out)))

    # 3b. config.json rewriting keeps every other byte: the quantization member first, last,
    #     alone, nested values with strings holding braces; a config that is not a JSON object
    #     is copied unchanged.
    cases = {
        "first": '{\n  "quantization": {"bits": 4, "s": "}{,"},\n  "a": 1,\n  "b": [1, {"c": "x"}]\n}\n',
        "last": '{"a": "q\\"uote", "quantization_config": {"quant_method": "fp8"}}',
        "only": '{ "quantization": {"bits": 8} }\n',
        "both": '{"quantization": 1, "hidden_size": 8, "quantization_config": {"x": [1, 2]}, "z": null}',
        "none": '{"a": 1}',
        "broken": '{"quantization": {"bits": 4}',
    }
    for name, text in cases.items():
        d = W(f"cfg-{name}")
        os.makedirs(d)
        shutil.copy(tiny_file, d)
        open(os.path.join(d, "config.json"), "w").write(text)
        r = run("export", d, W(f"cfg-{name}-out"))
        if not check(r.returncode == 0, f"config {name}: export", r.stderr):
            continue
        got = open(os.path.join(W(f"cfg-{name}-out"), "config.json")).read()
        if name == "broken":
            check(got == text and "copied unchanged" in r.stderr, "config not a JSON object: copied unchanged", got)
            continue
        want = {k: v for k, v in json.loads(text).items() if k not in ("quantization", "quantization_config")}
        check(json.loads(got) == want, f"config {name}: quantization members dropped, the rest kept", got)
    check(open(os.path.join(W("cfg-first-out"), "config.json")).read() ==
          '{\n  "a": 1,\n  "b": [1, {"c": "x"}]\n}\n', "config rewrite keeps the layout of the other members",
          open(os.path.join(W("cfg-first-out"), "config.json")).read())
    check(open(os.path.join(W("cfg-none-out"), "config.json")).read() == '{"a": 1}',
          "config without quantization: byte for byte")

    # 4. OUT_DIR: a non-empty one is refused and untouched; an empty one is filled.
    os.makedirs(W("busy"))
    open(os.path.join(W("busy"), "mine.txt"), "w").write("x")
    r = run("export", tiny, W("busy"))
    check(r.returncode == 1 and os.listdir(W("busy")) == ["mine.txt"] and
          not [p for p in os.listdir(WORK) if p.startswith("busy.tmp-")], "existing non-empty OUT_DIR refused", r.stderr)
    os.makedirs(W("empty"))
    check(export(tiny, W("empty") + "/") is not None and "model.safetensors.index.json" in os.listdir(W("empty")),
          "an existing empty OUT_DIR is filled")

    # 5. Failing midway: the second shard cannot be written (file size limit, SIGXFSZ
    #    ignored so ftruncate fails with EFBIG): exit 1 and no OUT_DIR, no temporary left.
    #    Killed by SIGXFSZ instead (an interrupted export): no OUT_DIR either.
    big = W("big.safetensors")
    save_file({"a": np.arange(64, dtype=np.float32), "b": np.arange(100000, dtype=np.float32)}, big)

    def limit(ignore):
        def f():
            if ignore:
                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))
        return f
    r = run("export", "--dtype", "f32", "--max-shard-size", "1KB", big, W("midway"), preexec=limit(True))
    check(r.returncode == 1 and not nothing_left(W("midway")), "write failure midway: nothing left",
          (r.returncode, r.stderr, nothing_left(W("midway"))))
    r = run("export", "--dtype", "f32", "--max-shard-size", "1KB", big, W("killed"), preexec=limit(False))
    check(r.returncode == -signal.SIGXFSZ and not os.path.exists(W("killed")), "killed midway: no OUT_DIR",
          (r.returncode, os.listdir(WORK)))
    for p in os.listdir(WORK):
        if p.startswith("killed.tmp-"):
            shutil.rmtree(W(p))

    # 6. Ollama store: `tensorblob import` of tiny-llama, exported again (verified first),
    #    equals the source; a damaged blob fails before anything is written; the exported
    #    directory imports as the same tensors.
    store = W("store")
    r = run("import", "--store", store, "--name", "tiny", tiny)
    if check(r.returncode == 0, "import tiny-llama into a temp store", r.stderr):
        s = export(store + "/tiny", W("from-store"), "--dtype", "f32")
        s2 = export("tiny", W("from-store2"), "--dtype", "f32", "--store", store)
        if s and s2:
            check(s["verified"] == "store" and s2["verified"] == "store", "store export says its blobs were verified")
            got, ref = read_dir(W("from-store")), read_dir(W("tiny-f32"))
            check(set(got) == set(ref) and all(same(got[k], ref[k]) for k in ref), "store export = file export")
        r = run("import", "--store", store, "--name", "again", W("tiny-f32"))
        if check(r.returncode == 0, "import of an exported directory", r.stderr) and \
                export("again", W("again"), "--dtype", "keep", "--store", store):
            got, ref = read_dir(W("again")), read_dir(W("tiny-f32"))
            check(set(got) == set(ref) and all(same(got[k], ref[k]) for k in ref),
                  "exported -> imported -> exported keeps every tensor")
        # The store's JSON layers come back as the files they were imported from.
        jsrc = W("with-json")
        os.makedirs(jsrc)
        shutil.copy(tiny_file, jsrc)
        files = {"config.json": b'{"model_type":"llama","hidden_size":8}\n',
                 "tokenizer.json": b'{"version":"1.0","added_tokens":[]}\n',
                 "tokenizer_config.json": b'{"bos_token":"<s>"}\n'}
        for n, b in files.items():
            open(os.path.join(jsrc, n), "wb").write(b)
        r = run("import", "--store", store, "--name", "withjson", jsrc)
        if check(r.returncode == 0, "import tiny-llama with JSON files", r.stderr) and \
                export("withjson", W("json-out"), "--store", store):
            check(all(open(os.path.join(W("json-out"), n), "rb").read() == b for n, b in files.items()),
                  "store export writes the JSON layers byte for byte", os.listdir(W("json-out")))
        damaged = W("damaged")
        shutil.copytree(store, damaged)
        man = json.load(open(os.path.join(damaged, "manifests", "registry.ollama.ai", "library", "tiny", "latest")))
        layer = max(man["layers"], key=lambda l: l["size"])
        biggest = os.path.join(damaged, "blobs", layer["digest"].replace(":", "-"))
        data = bytearray(open(biggest, "rb").read())
        data[-1] ^= 0xFF
        open(biggest, "wb").write(bytes(data))
        r = run("export", "--json", "--store", damaged, "tiny", W("from-damaged"))
        check(r.returncode == 1 and "TBLOB_E_DIGEST_MISMATCH" in r.stdout and not nothing_left(W("from-damaged")),
              "damaged blob: refused, nothing left", (r.returncode, r.stdout, r.stderr))
        # Blobs are hashed as the export reads them: the smallest tensor blob and a JSON layer
        # (still valid JSON, so only its digest can tell) are caught too.
        for what, pick in (("smallest tensor blob", lambda ls: min((l for l in ls if "tensor" in l["mediaType"]),
                                                                     key=lambda l: l["size"])),
                           ("JSON layer", lambda ls: next(l for l in ls if l.get("name") == "tokenizer.json"))):
            d2 = W("damaged2")
            shutil.rmtree(d2, ignore_errors=True)
            shutil.copytree(store, d2)
            mp = os.path.join(d2, "manifests", "registry.ollama.ai", "library", "withjson", "latest")
            layer = pick(json.load(open(mp))["layers"])
            bp = os.path.join(d2, "blobs", layer["digest"].replace(":", "-"))
            data = bytearray(open(bp, "rb").read())
            if what == "JSON layer":
                data = bytearray(bytes(data).replace(b'"1.0"', b'"2.0"'))
            else:
                data[-1] ^= 0x01
            open(bp, "wb").write(bytes(data))
            r = run("export", "--json", "--store", d2, "withjson", W("from-damaged2"))
            check(r.returncode == 1 and "TBLOB_E_DIGEST_MISMATCH" in r.stdout and not nothing_left(W("from-damaged2")),
                  f"damaged {what}: refused, nothing left", (r.returncode, r.stdout, r.stderr))

    # 6b. Side files of a sentence-transformers directory (all-MiniLM-L6-v2's layout): every
    #     JSON file, vocab.txt and 1_Pooling/config.json are copied byte for byte from a file
    #     source; hidden files, README.md and a .txt over 256 MiB are not. Imported into a store and exported from
    #     it, the same JSON files come back (import stores JSON files only, so not vocab.txt).
    stdir = W("st-model")
    os.makedirs(os.path.join(stdir, "1_Pooling"))
    os.makedirs(os.path.join(stdir, ".cache"))
    shutil.copy(tiny_file, stdir)
    side = {
        "config.json": b'{"model_type":"bert","hidden_size":8}\n',
        "config_sentence_transformers.json": b'{"__version__":{"sentence_transformers":"2.0.0"}}\n',
        "modules.json": b'[{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},'
                        b'{"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"}]\n',
        "sentence_bert_config.json": b'{"max_seq_length":256,"do_lower_case":false}\n',
        "special_tokens_map.json": b'{"cls_token":"[CLS]"}\n',
        "tokenizer.json": b'{"version":"1.0","added_tokens":[]}\n',
        "tokenizer_config.json": b'{"do_lower_case":true}\n',
        "vocab.txt": b"[PAD]\n[UNK]\n[CLS]\n[SEP]\nthe\n",
        "1_Pooling/config.json": b'{"word_embedding_dimension":8,"pooling_mode_mean_tokens":true}\n',
    }
    not_side = {"README.md": b"# a model card\n", ".hidden.json": b"{}\n", ".cache/x.json": b"{}\n",
                "pytorch_model.bin.index.json": b'{"weight_map":{}}\n'}
    for n, b in {**side, **not_side}.items():
        open(os.path.join(stdir, n), "wb").write(b)
    with open(os.path.join(stdir, "corpus.txt"), "wb") as fh:  # sparse, over the 256 MiB cap: no side file
        fh.truncate((256 << 20) + 1)

    def side_files(out):
        found = {}
        for base, dirs, names in os.walk(out):
            for n in names:
                rel = os.path.relpath(os.path.join(base, n), out)
                if not rel.endswith(".safetensors") and rel != "model.safetensors.index.json":
                    found[rel] = open(os.path.join(base, n), "rb").read()
        return found

    if export(stdir, W("st-out"), "--dtype", "f32") is not None:
        got = side_files(W("st-out"))
        check(got == side, "file export: every side file, vocab.txt and 1_Pooling/config.json, byte for byte",
              sorted(set(got) ^ set(side)))
    if export(os.path.join(stdir, "model.safetensors"), W("st-out-file"), "--dtype", "f32") is not None:
        check(side_files(W("st-out-file")) == side, "a file named as SRC: the same side files as its directory",
              sorted(side_files(W("st-out-file"))))
    st_store = W("st-store")
    r = run("import", "--store", st_store, "--name", "minilm", stdir)
    if check(r.returncode == 0, "import of the sentence-transformers directory", r.stderr) and \
            export("minilm", W("st-from-store"), "--dtype", "f32", "--store", st_store) is not None:
        got = side_files(W("st-from-store"))
        want = {n: b for n, b in side.items() if n.endswith(".json")}
        check(got == want, "store export: the same JSON side files as the file export, 1_Pooling/ included",
              sorted(set(got) ^ set(want)))

    # 7. UQFF and GGUF sources: values equal `tensorblob dequant` of the source.
    for src in (os.path.join(root, "tests", "data", "uqff", "real", "dense", "afq4"),
                os.path.join(root, "tests", "data", "gguf", "small_v2.gguf")):
        if not os.path.exists(src):
            continue
        name = os.path.basename(src)
        if export(src, W("x-" + name), "--dtype", "f32") is None:
            continue
        got = read_dir(W("x-" + name))
        bad = [k for k, v in got.items() if v.dtype == np.float32 and not same(v.reshape(-1), dequant(src, k))]
        check(got and not bad, f"{name}: equals tensorblob dequant", bad)

    # A GGUF holding a ggml type this build does not know (42, ggml's Q2_0: quant_types.gguf
    # with its nvfp4 tensor's type id patched) is refused before any write.
    b = bytearray(open(os.path.join(root, "tests", "data", "gguf", "quant_types.gguf"), "rb").read())
    at = b.index(b"nvfp4") + 5 + 4 + 16  # name, n_dims (u32), two u64 dims, then the type (u32)
    check(struct.unpack_from("<I", b, at)[0] == 40, "quant_types.gguf: nvfp4's type id found", at)
    struct.pack_into("<I", b, at, 42)
    q2 = W("q2_0.gguf")
    with open(q2, "wb") as fh:
        fh.write(b)
    r = run("export", q2, W("gguf-q2_0"))
    check(r.returncode == 1 and "TBLOB_E_GGUF_TYPE" in r.stderr and not nothing_left(W("gguf-q2_0")),
          "GGUF with an unknown type: refused, nothing left", r.stderr)
    # quant_types.gguf itself (IQ, TQ, MXFP4, NVFP4) exports.
    check(export(os.path.join(root, "tests", "data", "gguf", "quant_types.gguf"), W("gguf-types"), "--dtype", "f32")
          is not None, "GGUF of the newer block types: exported")

    print(f"{len(FAILS)} failures" if FAILS else "all export checks passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
