#!/usr/bin/env python3
"""Writes fuzz/corpora/fuzz_source/seed_* (deterministic; needs only Python): small fixtures of
every format tblob_model_open_source reads, each with the 3-byte trailer [lim][fail][ctl] for
the four variants of fuzz_source.cpp and a few lies (variant 2, lim = lie | (call - 1) << 3).
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FILES = {
    "tiny_llama": "examples/tiny-llama/model.safetensors",
    "shard_index": "examples/sharded/model.safetensors.index.json",
    "ollama_per_tensor": "tests/data/companions/ollama_per_tensor.safetensors",
    "gguf_small_v2": "tests/data/gguf/small_v2.gguf",
    "gguf_good_v3": "tests/data/gguf/good_v3.gguf",
    "slm1_btok": "tests/data/slm1/tiny_btok.slm",
    "uqff_mxfp4": "tests/data/uqff/real/dense/mxfp4/mxfp4-0.uqff",
}


def trailer(ctl=0, fail=0, lim=0):
    return bytes([lim, fail, ctl])


def main():
    out = os.path.join(HERE, "corpora", "fuzz_source")
    os.makedirs(out, exist_ok=True)
    for name, rel in sorted(FILES.items()):
        with open(os.path.join(ROOT, rel), "rb") as f:
            data = f.read()
        cases = [(0, 0, 0), (1, 0, 0), (3, 0, 0), (0, 3, 0)]
        if name.startswith("uqff"):
            # ~50 KB each: the lies only at the third call (the small entries' reads and on)
            cases += [(2, 0, lie | (2 << 3)) for lie in range(5)]
        else:
            cases += [(2, 0, lie | (call << 3)) for lie in range(5) for call in (0, 1, 2)]
        if name.startswith("slm1"):
            # lim bit 7: without the checksum (header and directory only); bit 6: no scale check
            cases += [(ctl, fail, lim) for lim in (0x80, 0xC0) for ctl in (0, 1, 3) for fail in (0, 1, 2, 3, 5)]
        for ctl, fail, lim in cases:
            with open(os.path.join(out, "seed_%s_c%d_f%d_l%d" % (name, ctl, fail, lim)), "wb") as f:
                f.write(data + trailer(ctl, fail, lim))


if __name__ == "__main__":
    main()
