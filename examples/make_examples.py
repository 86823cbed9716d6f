#!/usr/bin/env python3
"""Writes the bundled example files with the Python `safetensors` package and numpy.

    python3 examples/make_examples.py            # from the repository root

Deterministic: fixed seeds, and every __metadata__ has a single key, so running it again
gives byte-identical files. Needs numpy, ml_dtypes (for bfloat16) and safetensors.

  examples/tiny-llama/model.safetensors   a toy Llama-style transformer (f16/bf16/f32)
  examples/sharded/                       the same kind of model split into two shards
                                          plus model.safetensors.index.json
"""
import json
import os

import ml_dtypes
import numpy as np
from safetensors.numpy import save_file

HERE = os.path.dirname(os.path.abspath(__file__))

VOCAB, DIM, FFN, LAYERS = 32, 8, 16, 2


def weights(rng, shape, dtype, scale=0.02):
    return (rng.standard_normal(shape) * scale).astype(np.float32).astype(dtype)


def toy_llama(seed, layer_dtypes):
    """A Llama-shaped state dict: token embedding, per layer q/k/v/o attention projections,
    gate/up/down MLP and two RMSNorm weights, a final norm and an untied lm_head.
    layer_dtypes[i] is the dtype of layer i's matrices; norms are always f32."""
    rng = np.random.default_rng(seed)
    bf16 = ml_dtypes.bfloat16
    t = {"model.embed_tokens.weight": weights(rng, (VOCAB, DIM), np.float16)}
    for i, dt in enumerate(layer_dtypes):
        p = f"model.layers.{i}."
        for proj in ("q_proj", "k_proj", "v_proj", "o_proj"):
            t[p + f"self_attn.{proj}.weight"] = weights(rng, (DIM, DIM), dt)
        t[p + "mlp.gate_proj.weight"] = weights(rng, (FFN, DIM), dt)
        t[p + "mlp.up_proj.weight"] = weights(rng, (FFN, DIM), dt)
        t[p + "mlp.down_proj.weight"] = weights(rng, (DIM, FFN), dt)
        t[p + "input_layernorm.weight"] = np.ones(DIM, np.float32)
        t[p + "post_attention_layernorm.weight"] = np.ones(DIM, np.float32)
    t["model.norm.weight"] = np.ones(DIM, np.float32)
    t["lm_head.weight"] = weights(rng, (VOCAB, DIM), bf16)
    return t


def make_tiny_llama():
    d = os.path.join(HERE, "tiny-llama")
    os.makedirs(d, exist_ok=True)
    t = toy_llama(seed=1, layer_dtypes=[np.float16, ml_dtypes.bfloat16][:LAYERS])
    path = os.path.join(d, "model.safetensors")
    save_file(t, path, metadata={"format": "pt"})
    return path, t


def make_sharded():
    """Two shards and an index, laid out as transformers' save_pretrained writes them:
    shard names model-0000i-of-00002.safetensors, each shard with {"format": "pt"}, and
    model.safetensors.index.json = json.dumps(index, indent=2, sort_keys=True) + newline."""
    d = os.path.join(HERE, "sharded")
    os.makedirs(d, exist_ok=True)
    t = toy_llama(seed=2, layer_dtypes=[ml_dtypes.bfloat16, np.float32][:LAYERS])
    names = list(t)
    # Split as a size-capped sharder would: the embedding and layer 0 in the first shard,
    # the rest in the second.
    cut = names.index("model.layers.1.self_attn.q_proj.weight")
    shards = [names[:cut], names[cut:]]
    weight_map, total = {}, 0
    for i, part in enumerate(shards):
        fname = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        save_file({k: t[k] for k in part}, os.path.join(d, fname), metadata={"format": "pt"})
        for k in part:
            weight_map[k] = fname
            total += t[k].nbytes
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    with open(os.path.join(d, "model.safetensors.index.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(index, indent=2, sort_keys=True) + "\n")
    return d


def main():
    path, t = make_tiny_llama()
    d = make_sharded()
    print(f"{os.path.relpath(path)}: {len(t)} tensors, {os.path.getsize(path)} bytes")
    for f in sorted(os.listdir(d)):
        print(f"{os.path.relpath(os.path.join(d, f))}: {os.path.getsize(os.path.join(d, f))} bytes")


if __name__ == "__main__":
    main()
