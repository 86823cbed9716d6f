#!/usr/bin/env python3
"""`tensorblob convert --to mlx` against mlx_lm.convert itself (mlx-lm 0.32.2, mlx[cpu] 0.32.4).

Builds a tiny llama (2 layers, bf16, a WordLevel tokenizer made with `tokenizers`), converts it
with mlx_lm.convert(quantize=True, ...) and with the CLI for affine 4/64, affine 8/32 to
float16, mxfp4, nvfp4 and mxfp8, and compares: the same tensor names, dtypes, shapes and bytes;
config.json equal as JSON; model.safetensors.index.json byte for byte. (The safetensors headers
differ in layout only; mlx_lm also writes README.md and re-saves the tokenizer.)

Usage: mlx_lm_convert_check.py --cli path/to/tensorblob
Needs mlx-lm (and so transformers, tokenizers); without them it exits 77 (skipped), or 1 when
CI=true.
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
    from mlx_lm import convert
    from tokenizers import Tokenizer, models, pre_tokenizers
except ImportError as e:
    # scripts/install-deps.sh installs it: in CI a missing peer is a failure, not a skip.
    print("mlx_lm_convert_check: needs mlx-lm==0.32.2 (%s)" % e)
    sys.exit(1 if os.environ.get("CI") == "true" else 77)


def tiny_llama(src):
    H, I, V, L, NH, NKV = 128, 256, 256, 2, 4, 2
    rng = np.random.default_rng(1)
    shapes = {"model.embed_tokens.weight": (V, H), "model.norm.weight": (H,), "lm_head.weight": (V, H)}
    for layer in range(L):
        p = "model.layers.%d." % layer
        shapes.update({p + "self_attn.q_proj.weight": (H, H), p + "self_attn.k_proj.weight": (H // NH * NKV, H),
                       p + "self_attn.v_proj.weight": (H // NH * NKV, H), p + "self_attn.o_proj.weight": (H, H),
                       p + "mlp.gate_proj.weight": (I, H), p + "mlp.up_proj.weight": (I, H),
                       p + "mlp.down_proj.weight": (H, I), p + "input_layernorm.weight": (H,),
                       p + "post_attention_layernorm.weight": (H,)})
    arrays = {k: mx.array((rng.standard_normal(s) * 0.05).astype(np.float32)).astype(mx.bfloat16)
              for k, s in shapes.items()}
    mx.save_safetensors(os.path.join(src, "model.safetensors"), arrays)
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": H, "intermediate_size": I,
           "num_attention_heads": NH, "num_key_value_heads": NKV, "num_hidden_layers": L, "vocab_size": V,
           "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
           "max_position_embeddings": 128}
    with open(os.path.join(src, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    vocab = {"t%d" % i: i for i in range(V - 1)}
    vocab["<unk>"] = V - 1
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(os.path.join(src, "tokenizer.json"))
    with open(os.path.join(src, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "unk_token": "<unk>"}, f)


def raw(a):
    return np.array(a.view(mx.uint16) if a.dtype == mx.bfloat16 else a).tobytes()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    args = ap.parse_args()
    mx.set_default_device(mx.cpu)
    work = tempfile.mkdtemp(prefix="mlx_lm_check_")
    fails = 0
    try:
        src = os.path.join(work, "src")
        os.makedirs(src)
        tiny_llama(src)
        for mode, bits, gs, dt in (("affine", 4, 64, None), ("affine", 8, 32, "float16"), ("mxfp4", None, None, None),
                                   ("nvfp4", None, None, None), ("mxfp8", None, None, None)):
            label = "%s bits=%s group=%s dtype=%s" % (mode, bits, gs, dt)
            ref = os.path.join(work, "ref_" + label.replace(" ", "_"))
            ours = os.path.join(work, "ours_" + label.replace(" ", "_"))
            convert(src, ref, quantize=True, q_group_size=gs, q_bits=bits, q_mode=mode, dtype=dt)
            flags = ["--q-mode", mode] + (["--q-bits", str(bits)] if bits else []) + \
                (["--q-group-size", str(gs)] if gs else []) + (["--dtype", "f16"] if dt else [])
            r = subprocess.run([args.cli, "convert", "--to", "mlx"] + flags + [src, ours], capture_output=True, text=True)
            if r.returncode != 0:
                print("FAIL %s: %s" % (label, r.stderr.strip()))
                fails += 1
                continue
            a = mx.load(os.path.join(ref, "model.safetensors"))
            b = mx.load(os.path.join(ours, "model.safetensors"))
            bad = sorted(set(a) ^ set(b)) + [k for k in sorted(set(a) & set(b)) if a[k].dtype != b[k].dtype or
                                             a[k].shape != b[k].shape or raw(a[k]) != raw(b[k])]
            with open(os.path.join(ref, "config.json")) as f, open(os.path.join(ours, "config.json")) as g:
                same_config = json.load(f) == json.load(g)
            with open(os.path.join(ref, "model.safetensors.index.json"), "rb") as f, \
                    open(os.path.join(ours, "model.safetensors.index.json"), "rb") as g:
                same_index = f.read() == g.read()
            ok = not bad and same_config and same_index
            fails += not ok
            print("%s %s: %d tensors%s%s%s" % ("ok" if ok else "FAIL", label, len(a),
                                                 "" if not bad else ", differ: %s" % bad[:5],
                                                 "" if same_config else ", config.json differs",
                                                 "" if same_index else ", index differs"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
