#!/usr/bin/env python3
"""--json output stays valid JSON whatever bytes names and arguments hold, and names survive
the round trip (issue 37, class 1).

A GGUF file is written here byte by byte (the format's own layout: magic, version, counts,
key/value pairs, tensor infos, aligned data) with a tensor name, a metadata key and a string
value holding bytes that are not UTF-8 (FF FE). Every --json line must then:
  - be UTF-8 and parse with a strict JSON reader (json.loads, then no lone surrogate: what
    I-JSON, Go and Rust readers require),
  - give each name back as its exact bytes by the documented rule (U+10FF80-U+10FFFF stand for
    the bytes 80-FF, everything else is UTF-8), and
  - (dequant) find the tensor when that decoded name, as jq or json.loads returns it, is given
    back on the command line.
Arguments echoed by inspect, dequant, ls, import, export and diff are checked the same way.

usage: test_json_bytes.py --cli TENSORBLOB --examples DIR --workdir DIR --features ollama=0|1,...
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys

FAILS = []


def check(cond, what, detail=""):
    print(("ok: " if cond else "FAIL: ") + what + ("" if cond else " " + str(detail)[:600]))
    if not cond:
        FAILS.append(what)
    return cond


def run(cli, *args):
    p = subprocess.run([cli, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def strict_lines(out):
    """Each line as JSON, or None when any line is not strict JSON."""
    try:
        text = out.decode("utf-8")  # strict: a raw FF fails here
    except UnicodeDecodeError:
        return None
    docs = []
    for line in text.splitlines():
        try:
            d = json.loads(line)
            json.dumps(d, ensure_ascii=False).encode("utf-8")  # a lone surrogate fails here
        except (ValueError, UnicodeEncodeError):
            return None
        docs.append(d)
    return docs


def name_bytes(s):
    """The documented undoing: U+10FF80-U+10FFFF are the bytes 80-FF, the rest is UTF-8."""
    out = bytearray()
    for ch in s:
        c = ord(ch)
        if 0x10FF80 <= c <= 0x10FFFF:
            out.append(c - 0x10FF00)
        else:
            out += ch.encode("utf-8")
    return bytes(out)


def gguf_string(b):
    return struct.pack("<Q", len(b)) + b


def write_gguf(path, kvs, tensors):
    """GGUF v3: kvs [(key bytes, value bytes)] as strings (type 8); tensors [(name bytes, rows,
    cols, f32 values)] as F32 (type 0), data aligned to 32."""
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs))
    for k, v in kvs:
        head += gguf_string(k) + struct.pack("<I", 8) + gguf_string(v)
    data = b""
    for name, rows, cols, vals in tensors:
        head += gguf_string(name) + struct.pack("<IQQIQ", 2, cols, rows, 0, len(data))
        data += struct.pack(f"<{len(vals)}f", *vals)
        data += b"\0" * (-len(data) % 32)
    head += b"\0" * (-len(head) % 32)
    with open(path, "wb") as f:
        f.write(head + data)


BAD = b"w\xff\xfe.weight"          # not UTF-8
GOOD = "\u00e9t\u00e9".encode()      # UTF-8, kept as it is
PUA = "x\U0010fffe".encode()         # holds U+10FFFE itself: escaped so the mapping stays 1:1
KEY = b"general.k\xff"
VAL = b"v\xfe\x80\"\\\x01"


def test_inspect_gguf(cli, work):
    path = os.path.join(work, "bytes.gguf")
    vals = [[float(i + 10 * t) for i in range(6)] for t in range(3)]
    write_gguf(path, [(b"general.architecture", b"llama"), (KEY, VAL)],
               [(BAD, 2, 3, vals[0]), (GOOD, 2, 3, vals[1]), (PUA, 2, 3, vals[2])])
    rc, out, err = run(cli, "inspect", "--json", path)
    docs = strict_lines(out)
    check(rc == 0 and docs is not None and len(docs) == 1, "inspect --json of non-UTF-8 names is strict JSON",
          out[:300] + err.encode())
    if not docs:
        return path, vals
    d = docs[0]
    names = [name_bytes(t["name"]) for t in d.get("tensors", [])]
    check(BAD in names, "inspect --json: the tensor name FF FE comes back as its bytes", names)
    check(GOOD in names and PUA in names, "inspect --json: UTF-8 names (and one holding U+10FFFE) come back", names)
    meta = {name_bytes(k): v for k, v in d.get("metadata", {}).items()}
    check(KEY in meta, "inspect --json: the metadata key with FF comes back as its bytes", list(meta))
    check(KEY in meta and name_bytes(meta[KEY]) == VAL, "inspect --json: the string value with FE 80 comes back",
          meta.get(KEY))
    # jq sees the same characters (it replaces raw bad bytes by U+FFFD; these are no such bytes)
    if shutil.which("jq"):
        p = subprocess.run(["jq", "-r", ".tensors[0].name"], input=out, stdout=subprocess.PIPE, timeout=60)
        check(p.returncode == 0 and name_bytes(p.stdout.rstrip(b"\n").decode()) == BAD,
              "jq -r reads the escaped name back to the same bytes", p.stdout)
    return path, vals


def test_dequant_round_trip(cli, work, path, vals):
    rc, out, _ = run(cli, "inspect", "--json", path)
    docs = strict_lines(out)
    names = [t["name"] for t in docs[0]["tensors"]] if docs else []
    for want, v in ((BAD, vals[0]), (PUA, vals[2])):
        json_name = next((n for n in names if name_bytes(n) == want), None)
        if not check(json_name is not None, f"inspect lists {want!r}"):
            continue
        outf = os.path.join(work, "t.f32")
        # the name exactly as json.loads (or jq -r) gives it, passed back as UTF-8 argv
        rc, out, err = run(cli, "dequant", "--json", "--out", outf, path, json_name.encode("utf-8"))
        d = strict_lines(out)
        ok = rc == 0 and d and d[0]["ok"] and name_bytes(d[0]["tensor"]) == want
        check(ok, f"dequant finds {want!r} by the name --json printed", out + err.encode())
        if ok:
            got = struct.unpack("<6f", open(outf, "rb").read())
            check(list(got) == v, f"dequant {want!r}: the values written", got)
    # the raw bytes on argv still name it
    rc, out, err = run(cli, "dequant", "--json", "--out", os.path.join(work, "t.f32"), path, BAD)
    d = strict_lines(out)
    check(rc == 0 and d and name_bytes(d[0]["tensor"]) == BAD, "dequant finds the name given as raw bytes",
          out + err.encode())
    # a failure echoes the argument too
    rc, out, _ = run(cli, "dequant", "--json", "--out", os.path.join(work, "t.f32"), path, b"no\xffsuch")
    d = strict_lines(out)
    check(rc == 1 and d and d[0]["ok"] is False and name_bytes(d[0]["tensor"]) == b"no\xffsuch",
          "dequant --json error echoes a non-UTF-8 tensor argument as strict JSON", out)


def echo_ok(cli, what, args, field, want, rc_ok=(0,)):
    rc, out, err = run(cli, *args)
    docs = strict_lines(out)
    got = [name_bytes(d[field]) for d in docs or [] if isinstance(d.get(field), str)]
    check(rc in rc_ok and docs is not None and want in got, what, (rc, out[:400], err[:300]))
    return docs


def test_echoed_arguments(cli, examples, work, features, gguf_path):
    tiny = os.path.join(examples, "tiny-llama", "model.safetensors")
    wb = os.fsencode(work)
    odd = wb + b"/m\xff\xfe.safetensors"
    shutil.copy(tiny, odd)
    echo_ok(cli, "inspect --json echoes a non-UTF-8 path", ["inspect", "--json", odd], "path", odd)
    echo_ok(cli, "inspect --json error echoes a non-UTF-8 path", ["inspect", "--json", wb + b"/none\xff"], "path",
            wb + b"/none\xff", rc_ok=(1,))
    outf = wb + b"/out\xfe.f32"
    echo_ok(cli, "dequant --json echoes a non-UTF-8 --out and path",
            ["dequant", "--json", "--out", outf, odd, "lm_head.weight"], "out", outf)
    echo_ok(cli, "diff --json echoes non-UTF-8 paths", ["diff", "--json", odd, gguf_path], "a", odd, rc_ok=(1,))
    exp = wb + b"/exp\xff"
    echo_ok(cli, "export --json echoes a non-UTF-8 OUT_DIR", ["export", "--json", odd, exp], "out", exp)
    if features.get("ollama"):
        store = wb + b"/st\xff"
        src = wb + b"/src\xfe"
        os.makedirs(src, exist_ok=True)
        shutil.copy(tiny, src + b"/model.safetensors")
        echo_ok(cli, "import --json echoes a non-UTF-8 --store",
                ["import", "--json", "--store", store, "--name", "m:t", src], "store", store)
        echo_ok(cli, "ls --json echoes a non-UTF-8 --store", ["ls", "--json", "--store", store], "store", store)
        echo_ok(cli, "ls --json error echoes a non-UTF-8 --store", ["ls", "--json", "--store", wb + b"/no\xff"],
                "store", wb + b"/no\xff", rc_ok=(1, 2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--examples", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--features", default="")
    a = ap.parse_args()
    features = {k: v == "1" for k, v in (kv.split("=") for kv in a.features.split(",") if kv)}
    shutil.rmtree(a.workdir, ignore_errors=True)
    os.makedirs(a.workdir)
    path, vals = test_inspect_gguf(a.cli, a.workdir)
    test_dequant_round_trip(a.cli, a.workdir, path, vals)
    test_echoed_arguments(a.cli, a.examples, a.workdir, features, path)
    print(f"{len(FAILS)} failure(s)")
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
