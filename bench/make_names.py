#!/usr/bin/env python3
"""Writes the lookup benchmark's inputs: N distinct random tensor names and a safetensors file
holding one F32 [1] tensor per name.

names file: one name per line, in a random order (the order the benchmarks look them up in);
the safetensors file lists the same names in another random order, so neither the file's nor
the index's layout follows the query order. Names look like checkpoint names with random parts
(a prefix, a layer number, one to three random lowercase/digit/underscore segments, a suffix),
8 to 90 bytes; no name contains '#', which the benchmarks put in place of a name's last byte
to make a miss of the same length.
"""
import argparse
import json
import random
import struct


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--names", required=True)
    ap.add_argument("--safetensors", required=True)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789_"
    prefixes = ["model.layers", "model.language_model.layers", "blk", "transformer.h", "encoder.block", "m"]
    suffixes = ["weight", "bias", "scales", "biases", "weight_scale", "w"]
    names = set()
    while len(names) < a.count:
        segs = ["".join(rng.choice(alphabet) for _ in range(rng.randint(2, 14))) for _ in range(rng.randint(1, 3))]
        names.add(".".join([rng.choice(prefixes), str(rng.randint(0, 199))] + segs + [rng.choice(suffixes)]))
    names = sorted(names)
    rng.shuffle(names)
    file_order = list(names)
    rng.shuffle(file_order)
    header = {n: {"dtype": "F32", "shape": [1], "data_offsets": [4 * i, 4 * i + 4]} for i, n in enumerate(file_order)}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(a.safetensors, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        f.write(b"\0" * (4 * len(file_order)))
    with open(a.names, "w") as f:
        f.write("\n".join(names) + "\n")


if __name__ == "__main__":
    main()
