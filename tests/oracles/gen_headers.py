#!/usr/bin/env python3
"""Random safetensors files for the scanner-vs-simdjson differential test.

    gen_headers.py --seed S --count K --out DIR [--verify]
    gen_headers.py --depth-probe --out DIR [--depth-min A] [--depth-max B]

Normal mode writes K complete, valid files DIR/hdr_000000.safetensors ... (8-byte N, header,
data), deterministic for a given seed (the same seed gives byte-identical files). Each header
has:
  - random names: ASCII, quote and backslash, control characters, DEL, non-ASCII UTF-8 (2-, 3-
    and 4-byte), written raw where JSON allows it or as escapes (\\n \\" \\\\ \\/ \\b \\f \\r \\t,
    \\uXXXX in either hex case, surrogate pairs \\uD83D\\uDE00 for astral characters); names are
    unique after unescaping and never "__metadata__";
  - random dtypes from the 22 of reference section 1.4 and random shapes (scalars, zero-size
    dimensions, a zero-size tensor whose other dimensions reach 2^64-1), with offsets that tile
    the data region in a random layout order, independent of the key order;
  - the three fields in random order, sometimes an unknown extra field holding random JSON
    (nested arrays/objects, floats, exponents, negative numbers, true/false/null, strings), and
    occasionally escaped spellings of field names and dtype values ("d\\u0074ype", "F\\u0033\\u0032");
  - optional __metadata__ (absent, null, {} or string pairs), at a random position among the
    tensors, occasionally spelled with an escape;
  - random insignificant whitespace (SP, TAB, LF, CR) between tokens, sometimes leading
    whitespace, and sometimes space padding to a multiple of 8.
It also writes DIR/manifest.json: for each file the decoded view (tensors in header order with
name, dtype, shape, data_offsets; metadata as an object, or null when absent/null), written with
ensure_ascii so that every name survives any JSON reader.
--verify loads every file with the Python `safetensors` package and checks it is accepted with
the same names, dtypes and shapes (needs the package; generation itself needs only Python).

Depth-probe mode writes, for each N in [depth-min, depth-max], depth_array_NNN.safetensors (one
U8 tensor whose unknown field "x" holds N nested arrays) and depth_object_NNN.safetensors (N
nested objects {"a":{"a":...}}), and DIR/expected.json mapping file name -> "ok" or the text of
the exception the `safetensors` package raised. Total nesting as serde_json counts it is N + 2
(the top-level object and the tensor object).
"""
import argparse
import json
import os
import random
import struct
import sys

DTYPE_BITS = {
    "BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8,
    "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8, "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8,
    "I16": 16, "U16": 16, "F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32,
    "C64": 64, "F64": 64, "I64": 64, "U64": 64,
}
DTYPES = list(DTYPE_BITS)  # fixed order: determinism does not depend on dict hashing
U64_MAX = 2**64 - 1

SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t",
                 "\b": "\\b", "\f": "\\f", "/": "\\/"}
WS = [" ", "\t", "\n", "\r"]
NON_ASCII = ["\u00e9", "\u00df", "\u00ff", "\u0100", "\u07ff", "\u0800", "\u4e2d", "\u6587",
             "\u2028", "\u2029", "\ufeff", "\ufffd", "\uffff", "\ue000",
             "\U00010000", "\U0001F600", "\U0001F916", "\U0010FFFF"]
ASCII_PLAIN = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-:[]{},@ #"


def esc_u(rng, cp):
    s = f"\\u{cp:04x}"
    return s.upper().replace("\\U", "\\u") if rng.random() < 0.5 else s


def json_char(rng, ch, escape_rate):
    """One decoded character as JSON string source: raw when legal, else an escape."""
    cp = ord(ch)
    must = cp < 0x20 or ch in '"\\'
    if not must and rng.random() >= escape_rate:
        return ch
    if cp > 0xFFFF:
        v = cp - 0x10000
        return esc_u(rng, 0xD800 + (v >> 10)) + esc_u(rng, 0xDC00 + (v & 0x3FF))
    if ch in SHORT_ESCAPES and rng.random() < 0.7:
        return SHORT_ESCAPES[ch]
    return esc_u(rng, cp)


def json_string(rng, s, escape_rate=0.15):
    return '"' + "".join(json_char(rng, c, escape_rate) for c in s) + '"'


def random_name(rng):
    n = rng.choice([0, 1, 2, 3, 5, 8, 12, 20, 40]) if rng.random() < 0.9 else rng.randint(60, 300)
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.6:
            out.append(rng.choice(ASCII_PLAIN))
        elif r < 0.7:
            out.append(rng.choice('"\\/'))
        elif r < 0.8:
            out.append(chr(rng.randrange(0, 0x20)))
        elif r < 0.82:
            out.append("\x7f")
        elif r < 0.92:
            out.append(rng.choice(NON_ASCII))
        else:  # any scalar value outside the surrogate block
            while True:
                cp = rng.randrange(0x80, 0x110000)
                if not 0xD800 <= cp <= 0xDFFF:
                    break
            out.append(chr(cp))
    return "".join(out)


def random_shape(rng, dtype):
    while True:
        r = rng.random()
        if r < 0.1:
            shape = []
        elif r < 0.2:  # zero-size, sometimes with huge other dimensions (0 absorbs them)
            rank = rng.randint(1, 4)
            shape = [rng.randint(0, 5) for _ in range(rank)]
            shape[rng.randrange(rank)] = 0
            if rng.random() < 0.3:
                # Put 0 first so the left-to-right product never overflows.
                shape = [0] + [rng.choice([U64_MAX, 2**63, 2**32, 7]) for _ in range(rank)]
        else:
            rank = rng.choice([1, 1, 2, 2, 2, 3, 4, 6, 9])
            shape = [rng.choice([1, 1, 2, 3, 4, 5, 8, 16]) for _ in range(rank)]
        count = 1
        for d in shape:
            count *= d
        if count > 4096 and 0 not in shape:
            continue
        if (count * DTYPE_BITS[dtype]) % 8 == 0:
            return shape, count * DTYPE_BITS[dtype] // 8


def random_json_value(rng, depth=0):
    r = rng.random()
    if depth < 6 and r < 0.2:
        return "[" + ",".join(random_json_value(rng, depth + 1)
                              for _ in range(rng.randint(0, 3))) + "]"
    if depth < 6 and r < 0.35:
        items = []
        for i in range(rng.randint(0, 3)):
            items.append(json_string(rng, f"k{i}" + random_name(rng)[:4]) + ":"
                         + random_json_value(rng, depth + 1))
        return "{" + ",".join(items) + "}"
    if r < 0.5:
        return json_string(rng, random_name(rng))
    if r < 0.6:
        return rng.choice(["true", "false", "null"])
    if r < 0.75:
        return str(rng.randint(-(2**63), U64_MAX))
    # Numbers every parser represents (int64, uint64 or a finite double): no 1e400, no
    # integers beyond 64 bits, which some DOM parsers refuse while serde_json accepts them.
    return rng.choice(["0", "-0", "0.5", "-1.25e-3", "6.02e23", "-0.0", "1e0", "1E+2",
                       str(U64_MAX), str(-(2**63))])


def spell_key(rng, key, rate):
    """A fixed ASCII key, occasionally with one character written as \\uXXXX."""
    if rng.random() >= rate:
        return '"' + key + '"'
    i = rng.randrange(len(key))
    return '"' + key[:i] + esc_u(rng, ord(key[i])) + key[i + 1:] + '"'


class Writer:
    """Joins tokens with random insignificant whitespace."""

    def __init__(self, rng, ws_rate):
        self.rng = rng
        self.ws_rate = ws_rate

    def ws(self):
        if self.rng.random() >= self.ws_rate:
            return ""
        return "".join(self.rng.choice(WS) for _ in range(self.rng.choice([1, 1, 1, 2, 4])))

    def obj(self, members):
        if not members:
            return "{" + self.ws() + "}"
        return "{" + ",".join(self.ws() + k + self.ws() + ":" + self.ws() + v + self.ws()
                              for k, v in members) + "}"

    def arr(self, items):
        if not items:
            return "[" + self.ws() + "]"
        return "[" + ",".join(self.ws() + it + self.ws() for it in items) + "]"


def make_file(rng):
    """Returns (file bytes, manifest entry)."""
    ntensors = rng.choice([0, 1, 1, 2, 3, 4, 6, 8, 12, 20])
    w = Writer(rng, rng.choice([0.0, 0.0, 0.1, 0.5, 1.0]))
    esc_keys = rng.random() < 0.2  # this file spells some field names with escapes
    names, seen = [], {"__metadata__"}
    while len(names) < ntensors:
        nm = random_name(rng)
        if nm not in seen:
            seen.add(nm)
            names.append(nm)
    tensors = []
    for nm in names:
        dt = rng.choice(DTYPES)
        shape, nbytes = random_shape(rng, dt)
        tensors.append({"name": nm, "dtype": dt, "shape": shape, "nbytes": nbytes})
    # Layout order is independent of key order.
    layout = list(range(ntensors))
    rng.shuffle(layout)
    cursor = 0
    for i in layout:
        t = tensors[i]
        t["data_offsets"] = [cursor, cursor + t["nbytes"]]
        cursor += t["nbytes"]
    data = rng.randbytes(cursor) if rng.random() < 0.5 else bytes(cursor)

    members = []
    for t in tensors:
        fields = []
        dt_src = json_string(rng, t["dtype"], 0.3) if esc_keys else '"' + t["dtype"] + '"'
        fields.append((spell_key(rng, "dtype", 0.3 if esc_keys else 0), dt_src))
        fields.append((spell_key(rng, "shape", 0.3 if esc_keys else 0),
                       w.arr([str(d) for d in t["shape"]])))
        fields.append((spell_key(rng, "data_offsets", 0.3 if esc_keys else 0),
                       w.arr([str(o) for o in t["data_offsets"]])))
        if rng.random() < 0.15:
            fields.append((json_string(rng, "x_" + random_name(rng)[:6]),
                           random_json_value(rng)))
        rng.shuffle(fields)
        members.append((json_string(rng, t["name"]), w.obj(fields)))

    meta_kind = rng.choice(["absent", "absent", "null", "empty", "pairs", "pairs", "pairs"])
    meta = None
    if meta_kind != "absent":
        if meta_kind == "null":
            src = "null"
        elif meta_kind == "empty":
            meta = {}
            src = w.obj([])
        else:
            meta = {}
            pairs = []
            for _ in range(rng.randint(1, 5)):
                k = random_name(rng)
                if k in meta:
                    continue
                meta[k] = random_name(rng)
                pairs.append((json_string(rng, k), json_string(rng, meta[k])))
            src = w.obj(pairs)
        key = spell_key(rng, "__metadata__", 0.1)
        members.insert(rng.randint(0, len(members)), (key, src))

    header = w.obj(members)
    if rng.random() < 0.15:
        header = "".join(rng.choice(WS) for _ in range(rng.randint(1, 4))) + header
    if rng.random() < 0.3:
        header += "".join(rng.choice(WS) for _ in range(rng.randint(1, 3)))
    hb = header.encode("utf-8")
    if rng.random() < 0.5:
        hb += b" " * ((-len(hb)) % 8)
    entry = {
        "tensors": [{"name": t["name"], "dtype": t["dtype"], "shape": t["shape"],
                     "data_offsets": t["data_offsets"]} for t in tensors],
        "metadata": meta,
    }
    return struct.pack("<Q", len(hb)) + hb + data, entry


def verify(out, manifest):
    from safetensors import safe_open
    bad = 0
    for fname, entry in manifest.items():
        p = os.path.join(out, fname)
        try:
            with safe_open(p, framework="numpy") as f:
                got = {k: (f.get_slice(k).get_dtype(), list(f.get_slice(k).get_shape()))
                       for k in f.keys()}
                meta = f.metadata()
        except Exception as e:
            print(f"{fname}: rejected by safetensors: {e}")
            bad += 1
            continue
        want = {t["name"]: (t["dtype"], t["shape"]) for t in entry["tensors"]}
        if got != want or (meta or {}) != (entry["metadata"] or {}):
            print(f"{fname}: safetensors sees a different table")
            bad += 1
    print(f"verify: {len(manifest) - bad} accepted as generated, {bad} differ")
    return bad == 0


def depth_probe(out, lo, hi):
    from safetensors import safe_open
    expected = {}
    for n in range(lo, hi + 1):
        for kind, nest in (("array", "[" * n + "]" * n),
                           ("object", '{"a":' * (n - 1) + "{}" + "}" * (n - 1))):
            h = ('{"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":%s}}' % nest).encode()
            fname = f"depth_{kind}_{n:03d}.safetensors"
            p = os.path.join(out, fname)
            with open(p, "wb") as f:
                f.write(struct.pack("<Q", len(h)) + h + b"\x00")
            try:
                with safe_open(p, framework="numpy") as f:
                    list(f.keys())
                expected[fname] = "ok"
            except Exception as e:
                expected[fname] = str(e)
    with open(os.path.join(out, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")
    for kind in ("array", "object"):
        ok = [n for n in range(lo, hi + 1) if expected[f"depth_{kind}_{n:03d}.safetensors"] == "ok"]
        if ok and len(ok) < hi - lo + 1:
            print(f"{kind}: max accepted nesting inside the tensor field = {max(ok)} "
                  f"(total depth {max(ok) + 2}); first rejected = {max(ok) + 1}")
        else:
            print(f"{kind}: accepted {len(ok)} of {hi - lo + 1}; widen the range")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--out", required=True)
    ap.add_argument("--verify", action="store_true",
                    help="check every file with the Python safetensors package")
    ap.add_argument("--depth-probe", action="store_true")
    ap.add_argument("--depth-min", type=int, default=100)
    ap.add_argument("--depth-max", type=int, default=140)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.depth_probe:
        depth_probe(args.out, args.depth_min, args.depth_max)
        return 0
    rng = random.Random(args.seed)
    manifest = {}
    for i in range(args.count):
        content, entry = make_file(rng)
        fname = f"hdr_{i:06d}.safetensors"
        with open(os.path.join(args.out, fname), "wb") as f:
            f.write(content)
        manifest[fname] = entry
    with open(os.path.join(args.out, "manifest.json"), "w", encoding="ascii") as f:
        json.dump({"seed": args.seed, "count": args.count, "files": manifest}, f,
                  ensure_ascii=True, indent=1)
        f.write("\n")
    if args.verify:
        return 0 if verify(args.out, manifest) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
