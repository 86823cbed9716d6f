#!/usr/bin/env python3
"""Source files for tests/data/ollama/real-gguf-store (see its README): a tiny llama model, a
projector and a LoRA adapter written by the `gguf` Python package (quantized blocks from
gguf.quants.quantize), a Modelfile for `ollama create`, and what gguf-py reads back from each
file (the oracle the tests compare with):

  OUT/tiny.gguf, OUT/mmproj.gguf, OUT/adapter.gguf, OUT/Modelfile
  ORACLE/<file>.manifest   "tensor NAME GGMLTYPE RANK DIMS... ELEMOFF" (outermost first), "kv ..."
  ORACLE/<file>.f32        gguf.quants.dequantize of every tensor, little-endian f32, concatenated

Deterministic (numpy default_rng(20261125)). Usage: gen_tiny_gguf.py OUT ORACLE
"""
import os
import struct
import sys

import numpy as np

import gguf
from gguf import GGMLQuantizationType as T
from gguf import GGUFValueType as V
from gguf import quants


def tensor(w, rng, name, t, rows, cols=None):
    shape = (rows,) if cols is None else (rows, cols)
    x = (rng.standard_normal(shape) * 0.1).astype(np.float32)
    if t == T.F32:
        w.add_tensor(name, x)
    elif t == T.F16:
        w.add_tensor(name, x.astype(np.float16))
    else:
        w.add_tensor(name, quants.quantize(x, t), raw_dtype=t)


def tiny(path, rng):
    w = gguf.GGUFWriter(path, "llama")
    w.add_name("tiny-gguf")
    w.add_block_count(1)
    w.add_context_length(64)
    w.add_embedding_length(32)
    w.add_feed_forward_length(64)
    w.add_head_count(4)
    w.add_head_count_kv(2)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    w.add_file_type(7)  # mostly Q8_0
    tokens = ["<unk>", "<s>", "</s>"] + ["\u2581t%d" % i for i in range(29)]
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([-float(i) for i in range(len(tokens))])
    w.add_token_types([2, 3, 3] + [1] * 29)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    tensor(w, rng, "token_embd.weight", T.Q8_0, 32, 32)
    tensor(w, rng, "blk.0.attn_norm.weight", T.F32, 32)
    tensor(w, rng, "blk.0.attn_q.weight", T.Q4_0, 32, 32)
    tensor(w, rng, "blk.0.attn_k.weight", T.Q4_0, 16, 32)
    tensor(w, rng, "blk.0.attn_v.weight", T.Q8_0, 16, 32)
    tensor(w, rng, "blk.0.attn_output.weight", T.F16, 32, 32)
    tensor(w, rng, "blk.0.ffn_norm.weight", T.F32, 32)
    tensor(w, rng, "blk.0.ffn_gate.weight", T.Q4_0, 64, 32)
    tensor(w, rng, "blk.0.ffn_up.weight", T.Q8_0, 64, 32)
    tensor(w, rng, "blk.0.ffn_down.weight", T.F16, 32, 64)
    tensor(w, rng, "output_norm.weight", T.F32, 32)
    tensor(w, rng, "output.weight", T.Q8_0, 32, 32)
    finish(w)


def mmproj(path, rng):
    w = gguf.GGUFWriter(path, "clip")
    w.add_string("general.type", "projector")
    w.add_name("tiny-mmproj")
    w.add_bool("clip.has_vision_encoder", True)
    w.add_uint32("clip.vision.embedding_length", 32)
    tensor(w, rng, "mm.0.weight", T.F16, 32, 32)
    tensor(w, rng, "mm.0.bias", T.F32, 32)
    finish(w)


def adapter(path, rng):
    w = gguf.GGUFWriter(path, "llama")
    w.add_string("general.type", "adapter")
    w.add_string("adapter.type", "lora")
    w.add_float32("adapter.lora.alpha", 16.0)
    tensor(w, rng, "blk.0.attn_q.weight.lora_a", T.F32, 4, 32)
    tensor(w, rng, "blk.0.attn_q.weight.lora_b", T.F16, 32, 4)
    finish(w)


def finish(w):
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def oracle(path, out_dir):
    r = gguf.GGUFReader(path)
    base = os.path.join(out_dir, os.path.basename(path)[:-len(".gguf")])
    lines = ["# gguf-py reading %s (tests/interop/gen_tiny_gguf.py)" % os.path.basename(path)]
    for f in r.fields.values():
        if f.name.startswith("GGUF.") or f.types[0] == V.ARRAY:
            continue
        v = f.parts[f.data[0]]
        if f.types[0] == V.STRING:
            lines.append("kv %s %s" % (f.name, bytes(v).hex()))
        elif f.types[0] == V.FLOAT32:
            lines.append("kv %s %08x" % (f.name, struct.unpack("<I", np.float32(v[0]).tobytes())[0]))
        else:
            lines.append("kv %s %d" % (f.name, int(v[0])))
    deq, at = [], 0
    for t in r.tensors:
        dims = [int(d) for d in reversed(list(t.shape))]
        y = quants.dequantize(np.asarray(t.data), t.tensor_type).astype(np.float32).reshape(-1)
        lines.append("tensor %s %d %d %s %d" % (t.name, int(t.tensor_type), len(dims), " ".join(map(str, dims)), at))
        at += y.size
        deq.append(y)
    with open(base + ".manifest", "w") as fh:
        fh.write("\n".join(lines) + "\n")
    np.concatenate(deq).astype("<f4").tofile(base + ".f32")


MODELFILE = """FROM ./tiny.gguf
FROM ./mmproj.gguf
ADAPTER ./adapter.gguf
TEMPLATE \"\"\"{{ if .System }}<|system|>{{ .System }}</s>{{ end }}<|user|>{{ .Prompt }}</s><|assistant|>\"\"\"
SYSTEM You are a tiny test model.
PARAMETER temperature 0.25
PARAMETER num_ctx 64
PARAMETER stop </s>
PARAMETER stop <|user|>
LICENSE \"\"\"tiny-gguf test license: CC0-1.0, no rights reserved.\"\"\"
"""


def main():
    out, orc = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    os.makedirs(orc, exist_ok=True)
    rng = np.random.default_rng(20261125)
    for name, fn in (("tiny.gguf", tiny), ("mmproj.gguf", mmproj), ("adapter.gguf", adapter)):
        fn(os.path.join(out, name), rng)
        oracle(os.path.join(out, name), orc)
    with open(os.path.join(out, "Modelfile"), "w") as fh:
        fh.write(MODELFILE)


if __name__ == "__main__":
    main()
