#!/usr/bin/env python3
"""Seed corpora for fuzz/fuzz_uqff_shard and fuzz/fuzz_uqff_set (fuzz/corpora/<target>/).

Every seed is a fuzz input (fuzz/fuzz_common.h): the file part, then the 3-byte trailer
[lim][fail][ctl]. Shard seeds are one small UQFF shard: one layer of each family (GGML in
every type, Unquant, HQQ 4/8, FP8, AFQ 2-8, F8Q8, MXFP4, stacked experts, a bias), plus one
seed per bad input of reliability.md 6.4 (missing/conflicting versions, newer minor,
1-element scalars, unknown tag, truncated blocks, structure mismatches). Set seeds join
shards with "\\n--UQFF-SHARD--\\n" (fuzz_uqff_set.cpp): straddling layers, version copies,
duplicate keys, a layer whose weight is in no shard. The first 48 KiB of a few real
mistral.rs shards (tests/data/uqff/real) are not used: seeds stay small and synthetic.

Usage: python3 tests/oracles/gen_uqff_fuzz_seeds.py   (deterministic)
"""
import json
import os
import struct

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SEP = b"\n--UQFF-SHARD--\n"
TRAILER = b"\x00\x00\x00"
BLOCK = {2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34), 9: (32, 36), 10: (256, 84),
         11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210), 15: (256, 292), 0: (1, 4),
         1: (1, 2), 30: (1, 2)}


def st(entries, meta=None):
    hdr, data = {}, b""
    if meta:
        hdr["__metadata__"] = meta
    for name, dtype, shape, b in entries:
        hdr[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(b)]}
        data += b
    h = json.dumps(hdr, separators=(",", ":")).encode()
    return struct.pack("<Q", len(h)) + h + data


def u8(n, v): return (n, "U8", [], bytes([v]))
def u32(n, v): return (n, "U32", [], struct.pack("<I", v))
def f32s(n, v): return (n, "F32", [], struct.pack("<f", v))
def vec(n, vals): return (n, "U32", [len(vals)], struct.pack(f"<{len(vals)}I", *vals))


def version(ma=1, mi=2, pa=0):
    return [u32("uqff.version.major", ma), u32("uqff.version.minor", mi), u32("uqff.version.patch", pa)]


META = {"uqff.producer": "mistral.rs", "uqff.version": "1.2.0"}


def rnd(rng, n): return rng.integers(0, 256, n, dtype=np.uint8).tobytes()


def ggml(rng, key, tid, shape):
    be, bb = BLOCK[tid]
    n = int(np.prod(shape))
    raw = bytearray(rnd(rng, n // be * bb))
    return [u8(f"{key}.weight.format", 0), u32(f"{key}.weight.dtype", tid), vec(f"{key}.weight.shape", shape),
            (f"{key}.weight", "U8", [len(raw)], bytes(raw))]


def families(rng):
    out = {}
    for tid in BLOCK:
        be = BLOCK[tid][0]
        out[f"ggml_{tid}"] = ggml(rng, "l", tid, [2, 256 if be == 256 else 64])
    out["ggml_stack"] = ggml(rng, "m.experts.gate_proj", 8, [2, 2, 32])
    out["unquant"] = [u8("l.weight.format", 1), ("l.weight", "BF16", [2, 4], rnd(rng, 16)),
                      ("l.bias", "F32", [2], rnd(rng, 8))]
    for bits in (4, 8):
        G, W = 8, 4
        rows = G if bits == 8 else G // 2
        out[f"hqq{bits}"] = [u8("l.weight.format", 2), ("l.weight", "U8", [rows, W], rnd(rng, rows * W)),
                             ("l.weight.scales", "F32", [1, W], np.ones(W, "<f4").tobytes()),
                             ("l.weight.zeros", "F32", [1, W], np.full(W, 2, "<f4").tobytes()),
                             vec("l.weight.shape", [4, 8]), u8("l.weight.bits", bits), u32("l.weight.group_size", G),
                             u8("l.weight.axis", 0), u32("l.weight.optimization_steps", 10),
                             u8("l.weight.round_zeros", 0), u8("l.weight.channel_wise", 1)]
    out["fp8"] = [u8("l.weight.format", 3), ("l.weight", "F8_E4M3", [2, 8], rnd(rng, 16)),
                  f32s("l.weight.dequant_w_scale", 0.5), f32s("l.weight.dequant_x_scale", 0.5),
                  f32s("l.weight.quant_scale", 2.0), u32("l.weight.dtype", 9)]
    for bits in (2, 3, 4, 6, 8):
        words = 64 * bits // 32
        out[f"afq{bits}"] = [u8("l.weight.format", 4), u8("l.weight.bits", bits), u8("l.weight.group_size", 32),
                             ("l.weight", "U32", [2, words], rnd(rng, 8 * words)),
                             ("l.weight.scales", "BF16", [2, 2], rnd(rng, 8)),
                             ("l.weight.biases", "BF16", [2, 2], rnd(rng, 8))]
    out["f8q8"] = [u8("l.weight.format", 5), ("l.weight", "U8", [66], rnd(rng, 66)), u32("l.weight.num_blocks", 2),
                   vec("l.weight.shape", [3, 20])]
    out["mxfp4"] = [u8("l.weight.format", 6), ("l.weight", "U8", [2, 32], rnd(rng, 64)),
                    ("l.weight.scales", "U8", [2, 2], bytes([0, 127, 255, 130]))]
    out["mxfp4_stack"] = [u8("l.weight.format", 6), ("l.weight", "U8", [2, 1, 16], rnd(rng, 32)),
                          ("l.weight.scales", "U8", [2, 1, 1], bytes([126, 128]))]
    return out


def main():
    rng = np.random.default_rng(20260806)
    shard_dir = os.path.join(ROOT, "fuzz", "corpora", "fuzz_uqff_shard")
    set_dir = os.path.join(ROOT, "fuzz", "corpora", "fuzz_uqff_set")
    os.makedirs(shard_dir, exist_ok=True)
    os.makedirs(set_dir, exist_ok=True)
    seeds = {}
    fam = families(rng)
    for name, ents in fam.items():
        seeds[f"ok_{name}"] = st(version() + ents, META)
    all_layers = []
    for i, (name, ents) in enumerate(sorted(fam.items())[:8]):
        all_layers += [(e[0].replace("l.", f"k{i}.", 1).replace("m.", f"k{i}.", 1),) + e[1:] for e in ents]
    seeds["ok_many"] = st(version() + all_layers, META)
    base = fam["ggml_8"]
    seeds["bad_no_version"] = st(base, META)
    seeds["bad_minor_newer"] = st(version(1, 3) + base)
    seeds["bad_major"] = st(version(2, 0) + base)
    seeds["bad_version_vec"] = st([("uqff.version.major", "U32", [1], struct.pack("<I", 1)),
                                   u32("uqff.version.minor", 2), u32("uqff.version.patch", 0)] + base)
    seeds["bad_pre10"] = st([("0", "U8", [4], b"abcd"), ("1", "U8", [2], b"ef")])
    seeds["bad_tag"] = st(version() + [u8("l.weight.format", 7), ("l.weight", "U8", [1], b"x")])
    seeds["bad_format_vec"] = st(version() + [("l.weight.format", "U8", [1], b"\x01"),
                                              ("l.weight", "F32", [1, 1], b"\0\0\0\0")])
    trunc = [e if e[0] != "l.weight" else (e[0], e[1], [len(e[3]) - 1], e[3][:-1]) for e in base]
    seeds["bad_truncated"] = st(version() + trunc)
    seeds["bad_mismatch"] = st(version() + [u8("l.weight.format", 4)] + base[1:])
    seeds["bad_stray"] = st(version() + base + [("stray", "F32", [1], b"\0\0\0\0")])
    seeds["bad_overflow"] = st(version() + [u8("l.weight.format", 0), u32("l.weight.dtype", 0),
                                            vec("l.weight.shape", [0xFFFFFFFF] * 3), ("l.weight", "U8", [0], b"")])
    for name, data in seeds.items():
        with open(os.path.join(shard_dir, f"seed_{name}"), "wb") as f:
            f.write(data + TRAILER)
    # Sets.
    sets = {}
    g = ggml(rng, "a", 12, [1, 256])
    sets["ok_straddle"] = [st(version() + g[:3], META), st([g[3]], META)]
    sets["ok_version_copies"] = [st(version() + g, META), st(version() + fam["mxfp4"], META)]
    sets["bad_conflict"] = [st(version() + g), st(version(1, 1) + fam["mxfp4"])]
    sets["bad_duplicate"] = [st(version() + g), st([g[3]])]
    sets["bad_missing_weight"] = [st(version() + g[:3]), st(fam["fp8"])]
    sets["ok_three"] = [st(version() + fam["afq4"]), st(fam["hqq4"][:4]), st(fam["hqq4"][4:])]
    for name, shards in sets.items():
        with open(os.path.join(set_dir, f"seed_{name}"), "wb") as f:
            f.write(SEP.join(shards) + TRAILER)
    print(len(seeds), "shard seeds,", len(sets), "set seeds")


if __name__ == "__main__":
    main()
