#!/usr/bin/env python3
"""`tensorblob convert --to mlx` against MLX: what mlx_lm.convert -q computes for each tensor.

mlx_lm's convert casts every floating parameter to the dtype (config.json's torch_dtype unless
--dtype), then nn.quantize turns each Linear/Embedding weight whose last dimension the group
divides into mx.quantize(weight, group_size, bits, mode) = (weight, scales[, biases]) and writes
config.json with "quantization" and "quantization_config" = {"group_size", "bits", "mode"}.
This test builds a small llama-shaped model, runs the CLI for each mode, and checks every
output tensor byte for byte against mx.quantize / astype of the source, the config blocks, the
copied side files and the refusals (existing OUT_DIR, an already quantized config). mlx-lm
itself (it needs transformers and a real tokenizer) is not run: its per-tensor arithmetic is
mx.quantize, which this checks.

Usage: mlx_convert_oracle.py --cli path/to/tensorblob
Without mlx it exits 77 (skipped), 1 under CI=true.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

try:
    import mlx.core as mx
except ImportError as e:  # noqa: F841
    mx = None

MX_DT = None


def build_source(d):
    rng = np.random.default_rng(3)
    t = {
        "model.embed_tokens.weight": rng.standard_normal((64, 128)).astype(np.float32),
        "model.layers.0.self_attn.q_proj.weight": (rng.standard_normal((128, 128)) * 0.02).astype(np.float32),
        "model.layers.0.mlp.down_proj.weight": (rng.standard_normal((128, 96)) * 0.05).astype(np.float32),
        "model.layers.0.input_layernorm.weight": np.ones(128, np.float32) + rng.standard_normal(128).astype(np.float32) * 0.01,
        "model.norm.weight": np.ones(128, np.float32),
        "lm_head.weight": (rng.standard_normal((64, 128)) * 0.1).astype(np.float32),
    }
    arrays = {k: mx.array(v).astype(mx.bfloat16) for k, v in t.items()}
    arrays["lm_head.weight"] = mx.array(t["lm_head.weight"])  # one f32 tensor among bf16
    arrays["rope.position_ids"] = mx.array(np.arange(4, dtype=np.int32))
    mx.save_safetensors(os.path.join(d, "model.safetensors"), arrays)
    config = {"architectures": ["LlamaForCausalLM"], "hidden_size": 128, "model_type": "llama",
              "num_hidden_layers": 1, "torch_dtype": "bfloat16", "vocab_size": 64, "rms_norm_eps": 1e-05}
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    with open(os.path.join(d, "tokenizer.json"), "w") as f:
        f.write('{"model": {"type": "BPE"}}\n')
    return arrays, config


def mx_bytes(a):
    if a.dtype == mx.bfloat16:
        a = a.view(mx.uint16)
    return np.array(a).tobytes()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    args = ap.parse_args()
    if mx is None:
        if os.environ.get("CI") == "true":
            print("mlx_convert_oracle: mlx[cpu]==0.32.4 missing under CI=true: failing")
            return 1
        print("mlx_convert_oracle: mlx missing: skipped")
        return 77
    mx.set_default_device(mx.cpu)
    dtypes = {"bf16": mx.bfloat16, "f16": mx.float16, "f32": mx.float32}
    fails = 0
    checks = 0

    def check(what, cond):
        nonlocal fails, checks
        checks += 1
        if not cond:
            fails += 1
            print("FAIL", what)

    work = tempfile.mkdtemp(prefix="mlx_convert_")
    try:
        src = os.path.join(work, "src")
        os.makedirs(src)
        arrays, config = build_source(src)
        cases = [
            ("affine default", [], "affine", 4, 64, "bf16"),
            ("affine 8/32 f16", ["--q-bits", "8", "--q-group-size", "32", "--dtype", "f16"], "affine", 8, 32, "f16"),
            ("affine 3/32 f32", ["--q-bits", "3", "--q-group-size", "32", "--dtype", "f32"], "affine", 3, 32, "f32"),
            ("mxfp4", ["--q-mode", "mxfp4"], "mxfp4", 4, 32, "bf16"),
            ("mxfp8", ["--q-mode", "mxfp8"], "mxfp8", 8, 32, "bf16"),
            ("nvfp4", ["--q-mode", "nvfp4"], "nvfp4", 4, 16, "bf16"),
        ]
        for label, flags, mode, bits, group, dt in cases:
            out = os.path.join(work, label.replace(" ", "_").replace("/", "-"))
            r = subprocess.run([args.cli, "convert", "--to", "mlx"] + flags + [src, out],
                               capture_output=True, text=True)
            check("%s: exit %d (%s)" % (label, r.returncode, r.stderr.strip()), r.returncode == 0)
            if r.returncode != 0:
                continue
            got = mx.load(os.path.join(out, "model.safetensors"))
            want = {}
            for name, a in arrays.items():
                if mx.issubdtype(a.dtype, mx.floating):
                    a = a.astype(dtypes[dt])
                    if name.endswith(".weight") and a.ndim == 2 and a.shape[-1] % group == 0:
                        res = mx.quantize(a, group_size=group, bits=bits, mode=mode)
                        want[name] = res[0]
                        want[name[:-len("weight")] + "scales"] = res[1]
                        if mode == "affine":
                            want[name[:-len("weight")] + "biases"] = res[2]
                        continue
                want[name] = a
            check("%s: tensor names %s" % (label, sorted(set(got) ^ set(want))), set(got) == set(want))
            for name in sorted(set(got) & set(want)):
                same = got[name].dtype == want[name].dtype and got[name].shape == want[name].shape and \
                    mx_bytes(got[name]) == mx_bytes(want[name])
                check("%s: %s (%s %s vs %s %s)" % (label, name, got[name].dtype, got[name].shape,
                                                   want[name].dtype, want[name].shape), same)
            with open(os.path.join(out, "model.safetensors.index.json")) as f:
                index = json.load(f)
            check("%s: index weight map" % label, index["weight_map"] == {n: "model.safetensors" for n in sorted(got)}
                  and index["metadata"]["total_size"] == sum(got[n].nbytes for n in got))
            with open(os.path.join(out, "config.json")) as f:
                cfg = json.load(f)
            block = {"group_size": group, "bits": bits, "mode": mode}
            check("%s: config" % label, cfg == dict(config, quantization=block, quantization_config=block))
            with open(os.path.join(out, "tokenizer.json")) as f, open(os.path.join(src, "tokenizer.json")) as g:
                check("%s: tokenizer.json copied" % label, f.read() == g.read())
            check("%s: no temporary left" % label, not any(".tmp-" in n for n in os.listdir(work)))
        # Refusals: an existing output directory; an already quantized source.
        r = subprocess.run([args.cli, "convert", "--to", "mlx", src, os.path.join(work, "affine_default")],
                           capture_output=True, text=True)
        check("existing OUT_DIR refused", r.returncode != 0 and "exists" in r.stderr)
        r = subprocess.run([args.cli, "convert", "--to", "mlx", os.path.join(work, "affine_default"),
                            os.path.join(work, "again")], capture_output=True, text=True)
        check("quantized source refused (%s)" % r.stderr.strip(), r.returncode != 0 and not os.path.exists(
            os.path.join(work, "again")))
        r = subprocess.run([args.cli, "convert", "--to", "mlx", "--q-mode", "mxfp4", "--q-bits", "8", src,
                            os.path.join(work, "bad")], capture_output=True, text=True)
        check("mxfp4 with 8 bits refused", r.returncode != 0 and not os.path.exists(os.path.join(work, "bad")))
        # A NaN weight: refused with the tensor named, nothing left behind.
        nan_src = os.path.join(work, "nan_src")
        os.makedirs(nan_src)
        shutil.copy(os.path.join(src, "config.json"), nan_src)
        w = np.ones((4, 64), np.float32)
        w[2, 5] = np.nan
        mx.save_safetensors(os.path.join(nan_src, "model.safetensors"), {"x.weight": mx.array(w)})
        r = subprocess.run([args.cli, "convert", "--to", "mlx", nan_src, os.path.join(work, "nan_out")],
                           capture_output=True, text=True)
        check("NaN refused (%s)" % r.stderr.strip(), r.returncode != 0 and "TBLOB_E_QUANT_NONFINITE" in r.stderr and
              "x.weight" in r.stderr and not os.path.exists(os.path.join(work, "nan_out")) and
              not any(".tmp-" in n for n in os.listdir(work)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d checks, %d failed" % (checks, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
