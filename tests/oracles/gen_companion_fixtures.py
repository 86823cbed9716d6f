#!/usr/bin/env python3
"""Generates the quantized-companion fixtures in tests/data/companions/.

Each fixture is a checkpoint in one of the layouts tensorblob resolves into logical tensors
(docs/dequant.md), plus `expected*.safetensors` holding, for every quantized tensor T, the
oracle's dequantization as `T` (F32), `T.f16` (F16) and `T.bf16` (BF16):

  mlx_community/        mlx-lm layout: X.weight (U32) + X.scales + X.biases, written by
                        mx.save_safetensors; config.json "quantization" block with a per-layer
                        override (down_proj: 8 bits, group 32). Oracle: mx.dequantize.
  mlx_community_mxfp4/  the same with "mode": "mxfp4" (U8 E8M0 scales, no biases).
  hf_fp8/               Hugging Face block FP8: X.weight F8_E4M3 + X.weight_scale_inv (F32 and
                        BF16), 128x128 blocks with partial edge blocks, some E4M3 NaN codes
                        (0x7F/0xFF, OCP), an input_scale that is not a companion; config.json
                        quantization_config.weight_block_size [128, 128]. Oracle: numpy
                        `w.astype(f32) * s` (one f32 multiply), rounded to f16 by numpy and to
                        bf16 by ml_dtypes (nearest even), as DeepSeek-V3's weight_dequant does.
  hf_fp8_block64/       block FP8 whose config says weight_block_size [64, 64].
  ollama_inferred.safetensors      Ollama combined blob without quant metadata: int4 g32,
                        int8 g64, mxfp8 and nvfp4 tensors, parameters inferred from shapes;
                        plus `router` BF16 + `router.scale` F32 (not companions: no U32 weight).
  ollama_per_tensor.safetensors    per-tensor `N.quant_type` / `N.group_size` keys overriding a
                        blob-wide pair, and an nvfp4 tensor with a `.global_scale` multiplier.
  ollama_aliases.safetensors       the runner's names: `x`, `x_scale`, `x_qbias` (int4 g32).

MLX-quantized data never holds E4M3 0x7F/0xFF (MLX's encoder saturates), so the MLX version's
special-value choice does not show in these fixtures. Deterministic (numpy PCG64 seeds).
Usage (repository root):  pip install mlx mlx-cpu ml_dtypes numpy safetensors
  python3 tests/oracles/gen_companion_fixtures.py [--out DIR] [--check]
--check regenerates into a temporary directory and exits 1 if anything differs.
"""

import argparse
import filecmp
import json
import os
import shutil
import sys
import tempfile

import numpy as np

try:
    import ml_dtypes
    import mlx.core as mx
    from safetensors.numpy import save_file
except ImportError as e:  # mlx on Linux also needs `mlx-cpu`
    print("gen_companion_fixtures: needs mlx, ml_dtypes, numpy, safetensors: %s" % e)
    sys.exit(2)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
DEFAULT_OUT = os.path.join(REPO, "tests", "data", "companions")


def to_np(a):
    """mx array -> numpy, bf16 kept as ml_dtypes.bfloat16 bits."""
    if a.dtype == mx.bfloat16:
        return np.array(a.view(mx.uint16)).view(ml_dtypes.bfloat16)
    return np.array(a)


def mlx_expected(q, s, b, group, bits, mode):
    out = {}
    for suffix, dt in (("", mx.float32), (".f16", mx.float16), (".bf16", mx.bfloat16)):
        out[suffix] = to_np(mx.dequantize(q, s, b, group_size=group, bits=bits, mode=mode, dtype=dt))
    return out


def quantize(x, group, bits, mode):
    r = mx.quantize(x, group_size=group, bits=bits, mode=mode)
    q, s = r[0], r[1]
    b = r[2] if len(r) > 2 and r[2] is not None else None
    return q, s, b


def rand_weight(rng, shape, dtype=mx.bfloat16, scale=1.0):
    x = rng.standard_normal(shape).astype(np.float32) * scale
    return mx.array(x).astype(dtype)


def save_expected(path, expected):
    """expected: {tensor name: {suffix: np array}}."""
    flat = {}
    for name, outs in expected.items():
        for suffix, arr in outs.items():
            flat[name + suffix] = np.ascontiguousarray(arr)
    save_file(flat, path)


def gen_mlx_community(out, rng):
    d = os.path.join(out, "mlx_community")
    os.makedirs(d, exist_ok=True)
    arrays, expected = {}, {}
    layers = [  # (module, shape, group, bits)
        ("model.embed_tokens", (32, 128), 64, 4),
        ("model.layers.0.mlp.up_proj", (16, 256), 64, 4),
        ("model.layers.0.mlp.down_proj", (8, 256), 32, 8),  # per-layer override in config
    ]
    for mod, shape, group, bits in layers:
        q, s, b = quantize(rand_weight(rng, shape), group, bits, "affine")
        arrays[mod + ".weight"] = q
        arrays[mod + ".scales"] = s
        arrays[mod + ".biases"] = b
        expected[mod + ".weight"] = mlx_expected(q, s, b, group, bits, "affine")
    arrays["model.norm.weight"] = rand_weight(rng, (128,))
    mx.save_safetensors(os.path.join(d, "model.safetensors"), arrays, metadata={"format": "mlx"})
    quant = {"group_size": 64, "bits": 4,
             "model.layers.0.mlp.down_proj": {"group_size": 32, "bits": 8}}
    cfg = {"model_type": "llama", "hidden_size": 128, "quantization": quant,
           "quantization_config": quant}
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
        f.write("\n")
    save_expected(os.path.join(d, "expected.safetensors"), expected)


def gen_mlx_community_mxfp4(out, rng):
    d = os.path.join(out, "mlx_community_mxfp4")
    os.makedirs(d, exist_ok=True)
    arrays, expected = {}, {}
    for mod, shape in (("model.layers.0.self_attn.q_proj", (8, 128)),
                       ("model.layers.0.self_attn.o_proj", (4, 64))):
        q, s, b = quantize(rand_weight(rng, shape), 32, 4, "mxfp4")
        assert b is None
        arrays[mod + ".weight"] = q
        arrays[mod + ".scales"] = s
        expected[mod + ".weight"] = mlx_expected(q, s, None, 32, 4, "mxfp4")
    mx.save_safetensors(os.path.join(d, "model.safetensors"), arrays, metadata={"format": "mlx"})
    cfg = {"model_type": "llama", "quantization": {"group_size": 32, "bits": 4, "mode": "mxfp4"}}
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
        f.write("\n")
    save_expected(os.path.join(d, "expected.safetensors"), expected)


def block_fp8_expected(codes_u8, scale_f32, block):
    w = codes_u8.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    rows, cols = w.shape
    s = np.repeat(np.repeat(scale_f32, block, axis=0), block, axis=1)[:rows, :cols]
    p = (w * s.astype(np.float32)).astype(np.float32)  # one f32 multiply
    return {"": p, ".f16": p.astype(np.float16), ".bf16": p.astype(ml_dtypes.bfloat16)}


def gen_hf_fp8(out, rng, name, block, tensors, cfg_block):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    arrays, expected = {}, {}
    for mod, (rows, cols), sdt in tensors:
        w = (rng.standard_normal((rows, cols)) * 40).astype(np.float32)
        codes = w.astype(ml_dtypes.float8_e4m3fn).view(np.uint8).copy()
        codes[0, 0:4] = [0x7F, 0xFF, 0x80, 0x7E]  # NaN, -NaN (OCP), -0, 448
        br, bc = -(-rows // block), -(-cols // block)
        s = (rng.random((br, bc)) * 0.01 + 1e-4).astype(np.float32)
        if sdt == "bf16":
            s_store = s.astype(ml_dtypes.bfloat16)
            s_exact = s_store.astype(np.float32)
        else:
            s_store = s
            s_exact = s
        arrays[mod + ".weight"] = codes.view(ml_dtypes.float8_e4m3fn)
        arrays[mod + ".weight_scale_inv"] = s_store
        arrays[mod + ".input_scale"] = np.array([0.5], dtype=np.float32)  # not a companion
        expected[mod + ".weight"] = block_fp8_expected(codes, s_exact, block)
    arrays["model.norm.weight"] = rng.standard_normal(64).astype(ml_dtypes.bfloat16)
    save_file(arrays, os.path.join(d, "model.safetensors"), metadata={"format": "pt"})
    cfg = {"model_type": "deepseek_v3",
           "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3",
                                   "quant_method": "fp8", "weight_block_size": cfg_block}}
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
        f.write("\n")
    save_expected(os.path.join(d, "expected.safetensors"), expected)


def gen_ollama(out, rng):
    # 1. No metadata: inferred from shapes (Ollama x/mlxrunner/model/quant.go).
    arrays, expected = {}, {}
    for name, shape, group, bits, mode in (
            ("a.weight", (4, 256), 32, 4, "affine"),
            ("b.weight", (4, 256), 64, 8, "affine"),
            ("c.weight", (4, 128), 32, 8, "mxfp8"),
            ("d.weight", (4, 128), 16, 4, "nvfp4")):
        q, s, b = quantize(rand_weight(rng, shape), group, bits, mode)
        arrays[name] = q
        arrays[name + ".scale"] = s
        if b is not None:
            arrays[name + ".bias"] = b
        expected[name] = mlx_expected(q, s, b, group, bits, mode)
    arrays["router"] = rand_weight(rng, (4,))
    arrays["router.scale"] = rand_weight(rng, (4,), mx.float32)
    mx.save_safetensors(os.path.join(out, "ollama_inferred.safetensors"), arrays)
    save_expected(os.path.join(out, "expected_ollama_inferred.safetensors"), expected)

    # 2. Per-tensor metadata beats the blob-wide pair; nvfp4 with a global multiplier.
    arrays, expected = {}, {}
    q, s, b = quantize(rand_weight(rng, (4, 256)), 64, 8, "affine")
    arrays.update({"p": q, "p.scale": s, "p.bias": b})
    expected["p"] = mlx_expected(q, s, b, 64, 8, "affine")
    x = rand_weight(rng, (4, 128), mx.float32)
    q, s, b = quantize(x, 16, 4, "nvfp4")
    gs = mx.array(np.array(0.0625, dtype=np.float32))
    arrays.update({"g": q, "g.scale": s, "g.global_scale": gs})
    e = mlx_expected(q, s, None, 16, 4, "nvfp4")
    # Ollama's runner: dequantize, then multiply by the stored scalar in f32.
    base = mx.dequantize(q, s, None, group_size=16, bits=4, mode="nvfp4", dtype=mx.float32)
    prod = base * gs
    expected["g"] = {"": to_np(prod), ".f16": to_np(prod.astype(mx.float16)),
                     ".bf16": to_np(prod.astype(mx.bfloat16))}
    del e
    meta = {"quant_type": "int4", "group_size": "32",
            "p.quant_type": "int8", "p.group_size": "64",
            "g.quant_type": "nvfp4", "g.group_size": "16"}
    mx.save_safetensors(os.path.join(out, "ollama_per_tensor.safetensors"), arrays, metadata=meta)
    save_expected(os.path.join(out, "expected_ollama_per_tensor.safetensors"), expected)

    # 3. The runner's alias names, no metadata (legacy three-blob layout, merged).
    arrays, expected = {}, {}
    q, s, b = quantize(rand_weight(rng, (4, 128)), 32, 4, "affine")
    arrays.update({"x": q, "x_scale": s, "x_qbias": b})
    expected["x"] = mlx_expected(q, s, b, 32, 4, "affine")
    mx.save_safetensors(os.path.join(out, "ollama_aliases.safetensors"), arrays)
    save_expected(os.path.join(out, "expected_ollama_aliases.safetensors"), expected)


def generate(out):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(20260822)
    gen_mlx_community(out, rng)
    gen_mlx_community_mxfp4(out, rng)
    gen_hf_fp8(out, rng, "hf_fp8", 128,
               [("model.layers.0.self_attn.q_proj", (130, 136), "f32"),
                ("model.layers.0.mlp.gate_proj", (40, 200), "bf16")], [128, 128])
    gen_hf_fp8(out, rng, "hf_fp8_block64", 64,
               [("model.layers.0.self_attn.k_proj", (130, 70), "f32")], [64, 64])
    gen_ollama(out, rng)
    with open(os.path.join(out, "VERSIONS"), "w") as f:
        f.write("mlx %s, numpy %s, ml_dtypes %s\n" % (mx.__version__, np.__version__,
                                                      ml_dtypes.__version__))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    if not args.check:
        generate(args.out)
        return 0
    tmp = tempfile.mkdtemp()
    try:
        generate(tmp)
        cmp = filecmp.dircmp(tmp, args.out)
        bad = []

        def walk(c, prefix):
            bad.extend(prefix + n for n in c.diff_files + c.left_only + c.right_only)
            for sub, sc in c.subdirs.items():
                walk(sc, prefix + sub + "/")
        walk(cmp, "")
        # dircmp compares shallowly (size + mtime); confirm byte equality.
        for root, _, files in os.walk(tmp):
            for n in files:
                a = os.path.join(root, n)
                b = os.path.join(args.out, os.path.relpath(a, tmp))
                if os.path.exists(b) and not filecmp.cmp(a, b, shallow=False):
                    bad.append(os.path.relpath(a, tmp))
        if bad:
            print("differs: " + ", ".join(sorted(set(bad))))
            return 1
        print("fixtures up to date")
        return 0
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
