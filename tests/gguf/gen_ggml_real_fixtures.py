#!/usr/bin/env python3
"""Second half of tests/gguf/gen_ggml_real_fixtures.sh (run that, not this): makes float weights
shaped like a transformer's (per-column scale spread, heavy tails, a few outliers) and an
importance matrix (mean squared activations per column, as llama-imatrix computes), has real
ggml quantize them (the binary the shell script built), and writes tests/data/gguf/ggml_real.*:
  ggml_real.gguf      one tensor per type, [ROWS, COLS], written by gguf-py's GGUFWriter
  ggml_real.manifest  as tests/gguf/gen_gguf_fixtures.py writes it
  ggml_real.f32       gguf.quants.dequantize of each tensor (Q1_0: ggml's dequantize_row_q1_0)
Every tensor gguf-py decodes must equal ggml's own dequantize_row_* bit for bit.

Usage: gen_ggml_real_fixtures.py GGML_QUANTIZE_BINARY "ggml source description"
Deterministic data (numpy default_rng(20261125)); the blocks are what that ggml release makes.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

import gguf
from gguf import GGMLQuantizationType as T
from gguf import quants

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_gguf_fixtures as fx  # noqa: E402  (its manifest writer)

OUT = os.path.join(HERE, "..", "data", "gguf")
ROWS, COLS = 4, 512
TYPES = [T.TQ1_0, T.IQ2_XXS, T.IQ2_XS, T.IQ2_S, T.IQ3_XXS, T.IQ3_S, T.IQ1_S, T.IQ1_M, T.NVFP4, T.Q1_0]


def data(rng):
    col_scale = np.exp(rng.normal(0.0, 0.5, COLS)).astype(np.float32)
    w = rng.standard_t(5, (ROWS, COLS)).astype(np.float32) * 0.02 * col_scale
    out = rng.choice(ROWS * COLS, size=ROWS * COLS // 500, replace=False)
    w.reshape(-1)[out] *= 8.0
    act = rng.standard_normal((64, COLS)).astype(np.float32) * np.exp(rng.normal(0.0, 1.0, COLS)).astype(np.float32)
    imatrix = np.mean(act * act, axis=0).astype(np.float32)
    return w.astype(np.float32), imatrix


def main():
    binary, source = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng(20261125)
    w, imatrix = data(rng)
    path = os.path.join(OUT, "ggml_real.gguf")
    oracle = {}
    with tempfile.TemporaryDirectory() as tmp:
        w.astype("<f4").tofile(os.path.join(tmp, "weights.f32"))
        imatrix.astype("<f4").tofile(os.path.join(tmp, "imatrix.f32"))
        subprocess.run([binary, tmp, str(ROWS), str(COLS)], check=True)
        writer = gguf.GGUFWriter(path, "llama")
        writer.add_string("general.quantized_by", source)
        for t in TYPES:
            name = t.name.lower()
            blocks = np.fromfile(os.path.join(tmp, name + ".blocks"), dtype=np.uint8).reshape(ROWS, -1)
            mine = np.fromfile(os.path.join(tmp, name + ".ggml.f32"), dtype="<f4")
            if t in fx.DECODED:
                y = quants.dequantize(blocks, t).astype(np.float32).reshape(-1)
                if y.view(np.uint32).tolist() != mine.view(np.uint32).tolist():
                    sys.exit("%s: gguf.quants.dequantize differs from ggml's dequantize_row_%s" % (name, name))
            else:
                oracle[name] = mine
            writer.add_tensor(name, blocks, raw_dtype=t)
            print(name, blocks.shape[1] * ROWS, "bytes", file=sys.stderr)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
    fx.manifest(path, oracle=oracle)


if __name__ == "__main__":
    main()
