#!/usr/bin/env python3
"""The tensorblob CLI as a user meets it: --version, --help of every command, usage errors
(exit 2), completion scripts, `diff` (against models written by the safetensors package and
differences computed with numpy), --json, and terminal behaviour (colour and progress bar
only on a terminal, never with NO_COLOR or when piped; a pty stands in for the terminal).

usage: test_cli.py --cli TENSORBLOB --examples DIR --workdir DIR --version X.Y.Z
                   --features ollama=0|1,uqff=0|1,slm1=0|1,gguf=0|1,http=0|1
                   --kernels SET,SET,... [--uqff-data DIR]
"""
import argparse
import json
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys

import numpy as np
from safetensors.numpy import save_file

FAILS = []


def check(cond, what, detail=""):
    if cond:
        print(f"ok: {what}")
    else:
        print(f"FAIL: {what} {detail}")
        FAILS.append(what)
    return cond


def run(cli, *args, env=None, stdin=None):
    e = dict(os.environ)
    e.pop("NO_COLOR", None)
    if env:
        e.update(env)
    p = subprocess.run([cli, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e, timeout=600)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def run_pty(cli, *args, env=None):
    """Runs with stdout and stderr on one pseudo-terminal; returns (rc, everything written)."""
    e = dict(os.environ)
    e.pop("NO_COLOR", None)
    if env:
        e.update(env)
    master, slave = pty.openpty()
    p = subprocess.Popen([cli, *args], stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=e)
    os.close(slave)
    out = b""
    while True:
        r, _, _ = select.select([master], [], [], 600)
        if not r:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return p.wait(timeout=600), out.decode("utf-8", "replace")


def header_names(path):
    """Tensor names of a safetensors file, read from its JSON header (the format's definition)."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        h = json.loads(f.read(n))
    return [k for k in h if k != "__metadata__"], h


def commands_of(cli):
    rc, out, _ = run(cli, "--help")
    lines = out.split("\n")
    i = lines.index("commands:")
    names = []
    for l in lines[i + 1:]:
        if not l.strip():
            break
        names.append(l.split()[0])
    return names


def options_in_help(text):
    """Long options listed in the options: section of a command's --help."""
    opts = []
    sec = text.split("\noptions:\n", 1)[1].split("\n\n", 1)[0]
    for l in sec.split("\n"):
        label = re.split(r"\s{2,}", l.strip())[0]  # the option column, not its help text
        for w in label.replace(",", " ").split():
            if w.startswith("--"):
                opts.append(w)
    return opts


def test_version_help(cli, version, features, kernels):
    rc, out, err = run(cli, "--version")
    check(rc == 0 and out == f"tensorblob {version}\n", "--version prints the library version", repr(out))
    rc, out, _ = run(cli, "version", "--json")
    check(rc == 0 and json.loads(out)["version"] == version, "version --json")
    # The whole feature list, against what the build was configured with (meson's options):
    # every container format, built or not, http, and the kernel sets compiled in, best first.
    doc = json.loads(out) if rc == 0 else {}
    want_features = {"safetensors": True, "safetensors-sharded": True}
    want_features.update(features)
    check(doc.get("features") == want_features, "version --json feature list",
          f"{doc.get('features')} vs {want_features}")
    check(doc.get("kernels") == kernels, "version --json kernel sets", f"{doc.get('kernels')} vs {kernels}")
    check(doc.get("kernel") in kernels, "version --json kernel in use is one of them", repr(doc.get("kernel")))
    rc2, out2, _ = run(cli, "--version", "--json")
    check(rc2 == 0 and out2 == out, "--version --json = version --json", out2)
    rc, out, _ = run(cli, "--help")
    check(rc == 0 and "exit status:" in out and "\n  2  usage error" in out, "--help documents exit codes")
    names = commands_of(cli)
    want = {"inspect", "dequant", "export", "verify", "diff", "completion", "version", "help"}
    if features["ollama"]:
        want |= {"ls", "import", "gc"}
    if features["slm1"]:
        want |= {"convert"}
    check(set(names) == want, "command list", f"{sorted(names)} vs {sorted(want)}")
    helps = {}
    for n in names:
        for flag in ("--help", "-h"):
            rc, out, err = run(cli, n, flag)
            check(rc == 0 and out.startswith(f"usage: tensorblob {n}") and "\noptions:\n" in out
                  and "--json" in out and "exit status:" in out and err == "",
                  f"{n} {flag}", repr(out[:200]) + err)
        helps[n] = out
        rc, out2, _ = run(cli, "help", n)
        check(rc == 0 and out2 == out, f"help {n} = {n} --help")
    rc, out, _ = run(cli, "help", "--json")
    table = {c["name"]: c for c in json.loads(out)["commands"]}
    check(rc == 0 and sorted(table) == sorted(names), "help --json lists the command table")
    for n, h in helps.items():
        listed = sorted(o for o in options_in_help(h) if o not in ("--json", "--help"))
        check(sorted(o["name"] for o in table[n]["options"]) == listed, f"help --json options of {n} = --help's")
    rc, _, _ = run(cli)
    check(rc == 2, "no command: exit 2")
    rc, _, err = run(cli, "frobnicate")
    check(rc == 2 and "unknown command 'frobnicate'" in err, "unknown command: exit 2")
    return names, helps


def test_usage_errors(cli, names):
    for n in names:
        rc, out, err = run(cli, n, "--no-such-option")
        check(rc == 2 and f"tensorblob {n}: unknown option '--no-such-option'" in err
              and f"usage: tensorblob {n}" in err and out == "",
              f"{n}: unknown option exits 2 with usage", repr(err[:300]))
    cases = [
        (["dequant", "--to"], "option --to needs a value"),
        (["dequant", "--to", "f64", "--out", "x", "a", "b"], "--to must be one of f32|f16|bf16, not 'f64'"),
        (["dequant", "a", "b"], "--out FILE is required"),
        (["dequant", "--out", "x", "a"], "missing arguments"),
        (["diff", "a"], "missing arguments"),
        (["diff", "a", "b", "c"], "unexpected argument 'c'"),
        (["diff", "--json=yes", "a", "b"], "unknown option '--json'"),
        (["completion", "tcsh"], "'tcsh' is not one of bash|zsh|fish"),
        (["inspect"], "missing arguments"),
        (["verify"], "missing arguments"),
    ]
    for args, msg in cases:
        rc, out, err = run(cli, *args)
        check(rc == 2 and msg in err, f"usage error: {' '.join(args)}", repr(err[:300]))


def test_completion(cli, names, helps, work):
    scripts = {}
    for sh in ("bash", "zsh", "fish"):
        rc, out, err = run(cli, "completion", sh)
        check(rc == 0 and len(out) > 200, f"completion {sh}")
        scripts[sh] = out
        for n in names:
            check(n in out, f"completion {sh} names command {n}")
        for n, h in helps.items():
            for o in options_in_help(h):
                token = o[2:] if sh == "fish" else o  # fish spells long options `-l name`
                check(token in out, f"completion {sh} knows {n} {o}")
        path = os.path.join(work, f"tensorblob.{sh}")
        with open(path, "w") as f:
            f.write(out)
        if shutil.which(sh):
            p = subprocess.run([sh, "-n", path], capture_output=True, text=True)
            check(p.returncode == 0, f"{sh} -n accepts the completion script", p.stderr)
        else:
            print(f"note: {sh} not installed; syntax of its script not checked")
    rc, out, _ = run(cli, "completion", "--json", "bash")
    check(rc == 0 and json.loads(out)["script"] == scripts["bash"], "completion --json")
    # fish: ask fish itself what it would complete.
    if shutil.which("fish"):
        fish_path = os.path.join(work, "tensorblob.fish")

        def fish(line):
            p = subprocess.run(["fish", "-c", f"source {fish_path}; complete -C '{line}'"], capture_output=True,
                               text=True)
            return sorted(l.split("\t")[0] for l in p.stdout.split("\n") if l)
        check(fish("tensorblob dequant --to ") == ["bf16", "f16", "f32"], "fish: option values")
        check("diff" in fish("tensorblob di"), "fish: command name")
        check(fish("tensorblob diff --") == ["--cacert", "--dequant", "--header", "--help", "--json"], "fish: diff options")
    # bash: drive the completion function as bash itself does.
    drive = os.path.join(work, "drive.sh")
    with open(drive, "w") as f:
        f.write(f"""source {os.path.join(work, 'tensorblob.bash')}
comp() {{ COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _tensorblob; echo "${{COMPREPLY[*]}}"; }}
comp tensorblob di
comp tensorblob dequant --t
comp tensorblob dequant --to ''
comp tensorblob completion ''
comp tensorblob diff --de
""")
    p = subprocess.run(["bash", drive], capture_output=True, text=True)
    lines = p.stdout.split("\n")
    check(p.returncode == 0 and len(lines) >= 5, "bash completion runs", p.stderr)
    if len(lines) >= 5:
        check(lines[0].split() == ["diff"], "bash: command name", lines[0])
        check(sorted(lines[1].split()) == ["--threads", "--to"], "bash: option names with the prefix", lines[1])
        check(lines[2].split() == ["f32", "f16", "bf16"], "bash: option values", lines[2])
        check(lines[3].split() == ["bash", "zsh", "fish"], "bash: positional choices", lines[3])
        check(lines[4].split() == ["--dequant"], "bash: diff option", lines[4])


def write_models(work):
    rng = np.random.default_rng(20261125)
    w = rng.standard_normal((4, 4)).astype(np.float32)
    x = np.array([0.5, 1.25, -3.0], dtype=np.float32)
    keep = rng.standard_normal((2, 2)).astype(np.float32)
    t = np.arange(6, dtype=np.int32).reshape(2, 3)
    a = {"w": w, "x": x, "keep": keep, "gone": np.ones(2, np.float32), "t": t}
    w2 = w.copy()
    w2[1, 2] += np.float32(0.25)
    b = {"w": w2, "x": x.astype(np.float16), "keep": keep, "new": np.zeros(5, np.float32), "t": t.reshape(3, 2)}
    pa, pb = os.path.join(work, "a.safetensors"), os.path.join(work, "b.safetensors")
    save_file(a, pa)
    save_file(b, pb)
    return pa, pb, a, b


def test_diff(cli, examples, work):
    tiny = os.path.join(examples, "tiny-llama", "model.safetensors")
    names, _ = header_names(tiny)
    rc, out, err = run(cli, "diff", tiny, tiny)
    check(rc == 0, "diff of a model with itself: exit 0", err)
    rc, out, err = run(cli, "diff", "--json", tiny, tiny)
    d = json.loads(out)
    check(rc == 0 and d["equal"] and d["ok"] and d["identical"] == len(names) and d["changed"] == []
          and d["added"] == [] and d["removed"] == [], "diff --json equal", out[:300])
    # the same tensors in another container: sharded directory vs its single-file twin
    shard_dir = os.path.join(examples, "sharded")
    if os.path.isdir(shard_dir):
        rc, out, _ = run(cli, "diff", "--json", tiny, shard_dir)
        d = json.loads(out)
        check(rc in (0, 1) and d["format_b"] == "safetensors-sharded", "diff across formats opens both", out[:200])

    pa, pb, a, b = write_models(work)
    rc, out, err = run(cli, "diff", "--json", pa, pb)
    d = json.loads(out)
    check(rc == 1 and not d["equal"], "diff of different models: exit 1", out[:300])
    check([e["name"] for e in d["removed"]] == ["gone"], "removed names the tensor only in A", str(d["removed"]))
    check([e["name"] for e in d["added"]] == ["new"] and d["added"][0]["shape"] == [5], "added", str(d["added"]))
    ch = {e["name"]: e for e in d["changed"]}
    check(set(ch) == {"w", "x", "t"}, "changed names each differing tensor", str(sorted(ch)))
    check(d["identical"] == 1, "identical count (keep)")
    if "w" in ch:
        check(ch["w"]["bytes_differ"] and not ch["w"]["dtype_changed"] and not ch["w"]["shape_changed"]
              and "max_abs" not in ch["w"], "w: bytes differ only", str(ch["w"]))
    if "x" in ch:
        check(ch["x"]["dtype_changed"] and ch["x"]["dtype_a"] == "F32" and ch["x"]["dtype_b"] == "F16",
              "x: dtype changed", str(ch["x"]))
    if "t" in ch:
        check(ch["t"]["shape_changed"] and ch["t"]["shape_a"] == [2, 3] and ch["t"]["shape_b"] == [3, 2],
              "t: shape changed", str(ch["t"]))

    rc, out, err = run(cli, "diff", "--json", "--dequant", pa, pb)
    d = json.loads(out)
    ch = {e["name"]: e for e in d["changed"]}
    diff_w = np.abs(a["w"].astype(np.float64) - b["w"].astype(np.float64))
    want_abs = float(diff_w.max())
    want_rel = want_abs / float(np.abs(a["w"]).max())
    check(rc == 1 and abs(ch["w"]["max_abs"] - want_abs) <= 1e-6 * want_abs
          and abs(ch["w"]["max_rel"] - want_rel) <= 1e-6 * want_rel,
          "--dequant: w max abs / rel difference as numpy computes", f"{ch.get('w')} want {want_abs} {want_rel}")
    check(ch["x"]["max_abs"] == 0 and ch["x"]["max_rel"] == 0, "--dequant: f32 -> f16 exact values differ by 0",
          str(ch["x"]))
    check("dequant_error" in ch["t"] and "max_abs" not in ch["t"], "--dequant: int tensors are not compared by value",
          str(ch["t"]))

    # text output, piped: the markers, no escape codes
    rc, out, err = run(cli, "diff", pa, pb)
    check(rc == 1 and "- gone" in out and "+ new" in out and "~ w" in out and "\x1b" not in out + err,
          "diff text output piped: markers, no escape codes", repr(out))
    # trouble: exit 2
    missing = os.path.join(work, "missing.safetensors")
    rc, out, err = run(cli, "diff", "--json", pa, missing)
    d = json.loads(out)
    check(rc == 2 and not d["ok"] and d["error"]["path"] == missing, "diff with a missing model: exit 2", out)
    return pa, pb


def test_nul_names(cli, work):
    """Names holding a NUL (and other control bytes) print whole: text output escapes them by
    the library's one rule (\\0, \\t, \\xHH, a doubled backslash), JSON as \\u0000; nothing is
    cut at the NUL. The file is written by the safetensors package, the oracle for the names."""
    a = {"lay\x00er.w": np.arange(4, dtype=np.float32), "tab\tname": np.zeros(2, np.float32),
         "bell\x07back\\slash": np.ones(3, np.float32)}
    b = {"lay\x00er.w": np.arange(4, dtype=np.float32) + 1, "lay\x00er.z": np.zeros(1, np.float32)}
    pa, pb = os.path.join(work, "nul_a.safetensors"), os.path.join(work, "nul_b.safetensors")
    save_file(a, pa)
    save_file(b, pb)
    rc, out, err = run(cli, "inspect", "--json", pa)
    names = [t["name"] for t in json.loads(out)["tensors"]] if rc == 0 else []
    check(sorted(names) == sorted(a), "inspect --json: names with NUL/control bytes whole", repr(names) + err)
    check("\\u0000" in out and "\\u0007" in out, "inspect --json escapes NUL as \\u0000", repr(out[:300]))
    rc, out, err = run(cli, "inspect", pa)
    check(rc == 0 and "lay\\0er.w" in out and "tab\\tname" in out and "bell\\x07back\\\\slash" in out
          and "\x00" not in out and "\x07" not in out,
          "inspect text: \\0, \\t, \\x07 and \\\\ shown, no raw control byte", repr(out))
    rc, out, err = run(cli, "diff", pa, pb)
    check(rc == 1 and "~ lay\\0er.w" in out and "+ lay\\0er.z" in out and "- tab\\tname" in out,
          "diff text: NUL names shown whole", repr(out))
    rc, out, err = run(cli, "diff", "--json", pa, pb)
    d = json.loads(out) if out else {}
    check([e["name"] for e in d.get("added", [])] == ["lay\x00er.z"]
          and [e["name"] for e in d.get("changed", [])] == ["lay\x00er.w"], "diff --json: NUL names whole", out[:300])


def test_terminal(cli, work, pa, pb):
    # colour on a terminal, not with NO_COLOR, not piped
    rc, text = run_pty(cli, "diff", pa, pb)
    check(rc == 1 and "\x1b[31m-\x1b[0m gone" in text, "diff on a terminal is coloured", repr(text[:200]))
    rc, text = run_pty(cli, "diff", pa, pb, env={"NO_COLOR": "1"})
    check(rc == 1 and re.search(r"\x1b\[[0-9;]*m", text) is None and "- gone" in text,
          "NO_COLOR: no colour codes on a terminal", repr(text[:200]))
    rc, text = run_pty(cli, "diff", "--json", pa, pb)
    check(rc == 1 and "\x1b" not in text, "--json on a terminal: no escape codes", repr(text[:200]))
    # progress bar for a large dequant: on a terminal only
    big = os.path.join(work, "big.safetensors")
    save_file({"big": np.full((4096, 4096), 0.5, dtype=np.float16)}, big)
    out = os.path.join(work, "big.f32")
    rc, text = run_pty(cli, "dequant", "--out", out, big, "big")
    check(rc == 0 and "\r\x1b[Kdequantizing [" in text and "100%" in text and "done in" in text,
          "dequant progress bar on a terminal", repr(text[-300:]))
    check(os.path.getsize(out) == 4096 * 4096 * 4, "dequant wrote every value")
    rc, o, e = run(cli, "dequant", "--out", out, big, "big")
    check(rc == 0 and o == "" and e == "", "dequant piped: nothing on stdout or stderr", repr(e[:200]))
    rc, o, e = run(cli, "dequant", "--json", "--out", out, big, "big")
    d = json.loads(o)
    check(rc == 0 and d["ok"] and d["bytes"] == 4096 * 4096 * 4 and d["to"] == "F32" and e == "", "dequant --json", o)
    # --threads: the same values (numpy's conversion) on one thread, two, and one per CPU
    rnd = np.random.default_rng(5).standard_normal((2048, 1024)).astype(np.float16)
    src, dst = os.path.join(work, "rnd.safetensors"), os.path.join(work, "rnd.f32")
    save_file({"r": rnd}, src)
    for t in (1, 2, 0):
        rc, o, e = run(cli, "dequant", "--json", "--threads", str(t), "--out", dst, src, "r")
        got = np.fromfile(dst, dtype=np.float32) if rc == 0 else None
        check(rc == 0 and json.loads(o)["threads"] == t and np.array_equal(got, rnd.astype(np.float32).ravel()),
              f"dequant --threads {t}: numpy's values", o + e)
    rc, o, e = run(cli, "dequant", "--threads", "-1", "--out", dst, src, "r")
    check(rc == 2 and "--threads wants a number" in e, "dequant --threads -1 is a usage error", e)


def test_json_everywhere(cli, examples, work, features):
    tiny = os.path.join(examples, "tiny-llama", "model.safetensors")
    names, h = header_names(tiny)
    rc, out, _ = run(cli, "verify", "--json", tiny)
    d = json.loads(out)
    check(rc == 0 and d["ok"] and d["tensors"] == len(names) and d["format"] == "safetensors", "verify PATH --json", out)
    rc, out, _ = run(cli, "dequant", "--json", "--out", os.path.join(work, "lm.f32"), tiny, "lm_head.weight")
    d = json.loads(out)
    want = int(np.prod(h["lm_head.weight"]["shape"])) * 4
    check(rc == 0 and d["bytes"] == want and os.path.getsize(os.path.join(work, "lm.f32")) == want,
          "dequant --json bytes", out)
    rc, out, err = run(cli, "dequant", "--json", "--out", "-", tiny, "lm_head.weight")
    check(rc == 2, "dequant --json --out - is a usage error")
    bad = os.path.join(work, "bad.safetensors")
    with open(bad, "wb") as f:
        f.write(b"\x05\x00\x00\x00\x00\x00\x00\x00{")
    rc, out, _ = run(cli, "verify", "--json", bad)
    d = json.loads(out)
    check(rc == 1 and d["ok"] is False and d["error"]["status"].startswith("TBLOB_E_"), "verify invalid --json", out)
    if features["slm1"]:
        cfg = {"hidden_size": 8, "intermediate_size": 16, "num_hidden_layers": 2, "num_attention_heads": 2,
               "num_key_value_heads": 2, "max_position_embeddings": 64, "rope_theta": 10000.0,
               "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "vocab_size": 32}
        with open(os.path.join(work, "config.json"), "w") as f:
            json.dump(cfg, f)
        src = os.path.join(work, "model.safetensors")
        shutil.copy(tiny, src)
        rc, out, _ = run(cli, "convert", "--json", "--to", "slm1", src, os.path.join(work, "m.slm"))
        d = json.loads(out)
        check(rc == 0 and d["ok"] and d["tensors"] == len(names), "convert --json", out)
        # SLM1 stores f32: the diff against the source is dtype changes with values equal
        rc, out, _ = run(cli, "diff", "--json", "--dequant", src, os.path.join(work, "m.slm"))
        d = json.loads(out)
        check(rc == 1 and d["added"] == [] and d["removed"] == []
              and all(e["max_abs"] == 0 for e in d["changed"]), "diff safetensors vs converted SLM1: values equal",
              out[:400])
    if features["ollama"]:
        rc, out, _ = run(cli, "ls", "--json", "--store", os.path.join(examples, "ollama-store", "store"))
        check(rc == 0 and json.loads(out)["ok"], "ls --json")


def test_uqff_routing(cli, uqff_dir, work):
    shard_dir = os.path.join(uqff_dir, "q4_0")
    rc, out, err = run(cli, "verify", "--json", shard_dir)
    d = json.loads(out.split("\n")[0])
    check(d.get("format") == "uqff" and "layers" in d, "verify routes a UQFF directory by content", out[:200] + err)
    # diff --dequant against the source the export was made from: q8_0 keeps every weight
    # within half a step of its block's scale (amax / 127), so well under max|w| / 127.
    src = os.path.join(uqff_dir, "source.safetensors")
    q8 = os.path.join(uqff_dir, "q8_0")
    if os.path.exists(src) and os.path.isdir(q8):
        from safetensors.numpy import load_file
        ref = load_file(src)
        rc, out, err = run(cli, "diff", "--json", "--dequant", src, q8)
        d = json.loads(out)
        ch = {e["name"]: e for e in d["changed"]}
        quantized = [n for n, e in ch.items() if e.get("dtype_b") == "U8"]
        check(rc == 1 and d["added"] == [] and d["removed"] == [] and len(quantized) >= 4,
              "diff source vs UQFF q8_0 pairs every tensor", out[:300] + err)
        for n in quantized:
            bound = float(np.abs(ref[n]).max()) / 127
            e = ch[n]
            check("max_abs" in e and 0 < e["max_abs"] <= bound, f"diff --dequant q8_0 {n}: 0 < max_abs <= max|w|/127",
                  f"{e} bound {bound}")
        rc, out, _ = run(cli, "dequant", "--json", "--out", os.path.join(work, "uqff.f32"), q8,
                         quantized[0] if quantized else "none")
        check(rc == 0 and json.loads(out)["ok"], "dequant routes a UQFF directory by content", out)
        if quantized:
            full, part = os.path.join(work, "uqff_full.bf16"), os.path.join(work, "uqff_rows.bf16")
            rc1, _, _ = run(cli, "dequant", "--to", "bf16", "--out", full, q8, quantized[0])
            rc2, _, _ = run(cli, "dequant", "--to", "bf16", "--rows", "3:7", "--out", part, q8, quantized[0])
            cols = ref[quantized[0]].shape[-1]
            with open(full, "rb") as f1, open(part, "rb") as f2:
                whole, rows = f1.read(), f2.read()
            check(rc1 == 0 and rc2 == 0 and len(rows) == 4 * cols * 2 and rows == whole[3 * cols * 2:7 * cols * 2],
                  "UQFF dequant --rows 3:7 is that slice of the whole tensor")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--examples", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--features", required=True)
    ap.add_argument("--kernels", required=True, help="the kernel sets compiled in, best first")
    ap.add_argument("--uqff-data")
    args = ap.parse_args()
    features = {k: v == "1" for k, v in (kv.split("=") for kv in args.features.split(","))}
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    names, helps = test_version_help(args.cli, args.version, features, args.kernels.split(","))
    test_usage_errors(args.cli, names)
    test_completion(args.cli, names, helps, args.workdir)
    pa, pb = test_diff(args.cli, args.examples, args.workdir)
    test_terminal(args.cli, args.workdir, pa, pb)
    test_nul_names(args.cli, args.workdir)
    test_json_everywhere(args.cli, args.examples, args.workdir, features)
    if features["uqff"] and args.uqff_data and os.path.isdir(os.path.join(args.uqff_data, "q4_0")):
        test_uqff_routing(args.cli, args.uqff_data, args.workdir)
    print(f"{len(FAILS)} failure(s)")
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
