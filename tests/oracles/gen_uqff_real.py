#!/usr/bin/env python3
"""Real UQFF exports written by mistral.rs itself (the `mistralrs` wheel from PyPI).

Builds two tiny randomly initialised models in a temporary directory (config.json, an F32
model.safetensors, a generated word-level tokenizer.json), runs mistral.rs in-situ
quantization with `write_uqff` for each ISQ type, and copies the resulting export
directories (shards, residual.safetensors, config.json, uqff_report.json, tokenizer files)
into tests/data/uqff/real/<model>/<type>/, together with the source weights
(tests/data/uqff/real/<model>/source.safetensors) that the tests compare against.

  dense: Qwen3, hidden 256, 1 layer, 2 heads of 32 and one KV head (q [64,256], k/v [32,256],
         o [256,64]), MLP 32 (down_proj [256,32]): o/down's last dim is not a multiple of 256,
         so K-quants fall back to legacy types there (as mistral.rs does); vocab 32.
  moe:   Qwen3-MoE, hidden 256, 4 experts of 32, top-2: stacked [E, out, in] expert tensors.
         mistral.rs refuses MXFP4 (and HQQ/FP8/F8Q8) for stacked experts ("that target does not
         support stacked expert gather"), so the MoE exports are GGML and AFQ only.

mistral.rs writes the UQFF files while building its Runner and then fails on our minimal
tokenizer ("can't determine decoder type"), which does not matter here: the export is done.

Usage: python3 tests/oracles/gen_uqff_real.py [--out tests/data/uqff/real] [--types a,b,...]
Deterministic inputs (numpy seed); the exports depend on the mistral.rs version (recorded
in each uqff_report.json and in VERSION).
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np

DENSE_TYPES = ["q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q8_1", "q2k", "q3k", "q4k", "q5k", "q6k",
               "q8k", "hqq4", "hqq8", "fp8", "afq2", "afq3", "afq4", "afq6", "afq8", "f8q8", "mxfp4"]
MOE_TYPES = ["q4k", "q8_0", "afq4"]


def write_safetensors(path, tensors):
    hdr, blobs, off = {}, [], 0
    for k in sorted(tensors):
        b = np.ascontiguousarray(tensors[k], dtype="<f4").tobytes()
        hdr[k] = {"dtype": "F32", "shape": list(tensors[k].shape), "data_offsets": [off, off + len(b)]}
        off += len(b)
        blobs.append(b)
    h = json.dumps(hdr, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def write_tokenizer(d, vocab_size):
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for i in range(3, vocab_size):
        vocab[f"t{i}"] = i
    special = [("<unk>", 0), ("<s>", 1), ("</s>", 2)]
    tok = {"version": "1.0", "truncation": None, "padding": None,
           "added_tokens": [{"id": i, "content": c, "single_word": False, "lstrip": False,
                             "rstrip": False, "normalized": False, "special": True}
                            for c, i in special],
           "normalizer": None, "pre_tokenizer": {"type": "Whitespace"}, "post_processor": None,
           "decoder": None, "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "<unk>"}}
    with open(os.path.join(d, "tokenizer.json"), "w") as f:
        json.dump(tok, f)
    with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
        json.dump({"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>",
                   "chat_template": "{% for m in messages %}{{ m['content'] }}{% endfor %}"}, f)


def make_dense(d, rng):
    H, V, NH, HD, I = 256, 32, 2, 32, 32
    cfg = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": H,
           "intermediate_size": I, "num_hidden_layers": 1, "num_attention_heads": NH,
           "num_key_value_heads": 1, "head_dim": HD, "vocab_size": V, "rms_norm_eps": 1e-6,
           "rope_theta": 10000.0, "max_position_embeddings": 64, "tie_word_embeddings": False,
           "hidden_act": "silu", "torch_dtype": "float32", "sliding_window": None,
           "use_sliding_window": False, "max_window_layers": 1, "attention_bias": False,
           "bos_token_id": 1, "eos_token_id": 2}
    p = "model.layers.0."
    t = {"model.embed_tokens.weight": (V, H), "lm_head.weight": (V, H),
         p + "self_attn.q_proj.weight": (NH * HD, H), p + "self_attn.k_proj.weight": (HD, H),
         p + "self_attn.v_proj.weight": (HD, H), p + "self_attn.o_proj.weight": (H, NH * HD),
         p + "mlp.gate_proj.weight": (I, H), p + "mlp.up_proj.weight": (I, H),
         p + "mlp.down_proj.weight": (H, I)}
    w = {k: (rng.standard_normal(s).astype(np.float32) * 0.05) for k, s in t.items()}
    # A few outliers so block scales vary a lot.
    w[p + "mlp.gate_proj.weight"][3, 17] = 1.5
    w[p + "self_attn.q_proj.weight"][5, 100] = -2.0
    for n in ["model.norm.weight", p + "input_layernorm.weight", p + "post_attention_layernorm.weight"]:
        w[n] = np.ones(H, np.float32)
    for n in [p + "self_attn.q_norm.weight", p + "self_attn.k_norm.weight"]:
        w[n] = np.ones(HD, np.float32)
    return cfg, w, V


def make_moe(d, rng):
    H, V, NH, HD, E, I = 256, 32, 2, 32, 4, 32
    cfg = {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": H,
           "intermediate_size": I, "moe_intermediate_size": I, "num_hidden_layers": 1,
           "num_attention_heads": NH, "num_key_value_heads": 1, "head_dim": HD, "vocab_size": V,
           "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "max_position_embeddings": 64,
           "tie_word_embeddings": False, "hidden_act": "silu", "torch_dtype": "float32",
           "num_experts": E, "num_experts_per_tok": 2, "decoder_sparse_step": 1,
           "norm_topk_prob": True, "mlp_only_layers": [], "sliding_window": None,
           "use_sliding_window": False, "max_window_layers": 1, "attention_bias": False, "bos_token_id": 1,
           "eos_token_id": 2}
    p = "model.layers.0."
    t = {"model.embed_tokens.weight": (V, H), "lm_head.weight": (V, H),
         p + "self_attn.q_proj.weight": (NH * HD, H), p + "self_attn.k_proj.weight": (HD, H),
         p + "self_attn.v_proj.weight": (HD, H), p + "self_attn.o_proj.weight": (H, NH * HD),
         p + "mlp.gate.weight": (E, H)}
    for e in range(E):
        t[p + f"mlp.experts.{e}.gate_proj.weight"] = (I, H)
        t[p + f"mlp.experts.{e}.up_proj.weight"] = (I, H)
        t[p + f"mlp.experts.{e}.down_proj.weight"] = (H, I)
    w = {k: (rng.standard_normal(s).astype(np.float32) * 0.05) for k, s in t.items()}
    for n in ["model.norm.weight", p + "input_layernorm.weight",
              p + "post_attention_layernorm.weight", p + "self_attn.q_norm.weight",
              p + "self_attn.k_norm.weight"]:
        w[n] = np.ones(HD if "_norm.weight" in n and "self_attn" in n else H, np.float32)
    return cfg, w, V


RUNNER = r"""
import sys
from mistralrs import Runner, Which
model, out, isq = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    Runner(which=Which.Plain(model_id=model, tokenizer_json=model + "/tokenizer.json",
                             write_uqff=out), in_situ_quant=isq, max_seqs=1, no_paged_attn=True)
except Exception as e:  # the export is written before the runner needs a decoder
    print("runner:", e)
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "data", "uqff", "real"))
    ap.add_argument("--models", default="dense,moe")
    ap.add_argument("--types", default="")
    args = ap.parse_args()
    import mistralrs  # noqa: F401  (fail early with the import error)
    from importlib.metadata import version
    mver = version("mistralrs")
    out_root = os.path.abspath(args.out)
    os.makedirs(out_root, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        runner = os.path.join(tmp, "runner.py")
        with open(runner, "w") as f:
            f.write(RUNNER)
        for model in args.models.split(","):
            rng = np.random.default_rng(20260806 if model == "dense" else 20260807)
            mdir = os.path.join(tmp, model)
            os.makedirs(mdir)
            cfg, w, vocab = (make_dense if model == "dense" else make_moe)(mdir, rng)
            with open(os.path.join(mdir, "config.json"), "w") as f:
                json.dump(cfg, f, indent=1)
            write_safetensors(os.path.join(mdir, "model.safetensors"), w)
            write_tokenizer(mdir, vocab)
            dst_model = os.path.join(out_root, model)
            os.makedirs(dst_model, exist_ok=True)
            shutil.copy(os.path.join(mdir, "model.safetensors"), os.path.join(dst_model, "source.safetensors"))
            types = args.types.split(",") if args.types else (DENSE_TYPES if model == "dense" else MOE_TYPES)
            for t in types:
                odir = os.path.join(tmp, f"out_{model}_{t}")
                r = subprocess.run([sys.executable, runner, mdir, os.path.join(odir, f"{t}.uqff"), t],
                                   capture_output=True, text=True, timeout=600)
                if not os.path.isfile(os.path.join(odir, f"{t}-0.uqff")):
                    print(f"{model}/{t}: FAILED\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}", file=sys.stderr)
                    continue
                dst = os.path.join(dst_model, t)
                if os.path.isdir(dst):
                    shutil.rmtree(dst)
                shutil.copytree(odir, dst)
                print(f"{model}/{t}: {sorted(os.listdir(dst))}")
    with open(os.path.join(out_root, "VERSION"), "w") as f:
        f.write(f"mistralrs {mver}\n")


if __name__ == "__main__":
    main()
