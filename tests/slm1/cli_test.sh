#!/usr/bin/env bash
# The tensorblob CLI on SLM1: convert (every dtype, refusals), inspect (golden files, --json,
# --no-checksum), dequant (q8_0 / q4_0 through the kernel table). Usage: cli_test.sh TENSORBLOB SLM1_DATA_DIR EXAMPLES_DIR
set -u
T=$1 DATA=$2 EX=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/slm1-cli-XXXXXX")
trap 'rm -rf "$work"' EXIT
fails=0
expect() {  # expected-exit-code description command...
  local want=$1 what=$2; shift 2
  "$@" >"$work/out" 2>"$work/err"
  local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: $what: exit $got, expected $want"; cat "$work/out" "$work/err"; fails=$((fails + 1))
  else
    echo "ok: $what"
  fi
}
grep_out() {  # pattern file description
  if ! grep -q -- "$1" "$work/$2"; then
    echo "FAIL: $3: '$1' not in $2:"; cat "$work/$2"; fails=$((fails + 1))
  fi
}

expect 0 "inspect golden files" "$T" inspect "$DATA/tiny_btok.slm" "$DATA/tiny_bpe1.slm"
grep_out "slm1, 3 tensors" out "inspect tiny_btok"
grep_out "fnv1a:e45e883176c5ce0f" out "synthetic names"
expect 0 "inspect --json" "$T" inspect --json "$DATA/tiny_btok.slm"
grep_out '"checksum_verified":"true"' out "json metadata"

cp "$EX/tiny-llama/model.safetensors" "$work/model.safetensors"
cat >"$work/config.json" <<'JSON'
{"hidden_size": 8, "intermediate_size": 16, "num_hidden_layers": 2, "num_attention_heads": 2,
 "num_key_value_heads": 2, "max_position_embeddings": 64, "rope_theta": 10000.0,
 "rms_norm_eps": 1e-06, "tie_word_embeddings": false, "vocab_size": 32}
JSON
for dt in f32 q8_0; do
  expect 0 "convert --dtype $dt" "$T" convert --to slm1 --dtype "$dt" "$work/model.safetensors" "$work/$dt.slm"
  grep_out "21 tensors" out "convert $dt summary"
  [ "$dt" = q8_0 ] && grep_out "5 f32, 16 q8_0" out "q8_0 counts (rank-1 norms stay f32)"
  expect 0 "inspect converted $dt" "$T" inspect "$work/$dt.slm"
done
expect 0 "convert q4_0 block 8" "$T" convert --to slm1 --dtype q4_0 --block-size 8 "$work/model.safetensors" "$work/q4.slm"
grep_out "16 q4_0" out "q4_0 counts (rank-1 norms stay f32)"
# The default q4_0 block (32) does not divide 8 columns: refused, naming the tensor.
expect 1 "convert q4_0 default block" "$T" convert --to slm1 --dtype q4_0 "$work/model.safetensors" "$work/bad.slm"
grep_out "q4_0 block_size is 32" err "names the block size"
[ -e "$work/bad.slm" ] && { echo "FAIL: a refused conversion left its output"; fails=$((fails + 1)); }
# dequant of q8_0 / q4_0 tensors through the kernel table: sizes, every output type, a row
# range, and the same bytes from every kernel set this host runs.
W=model.layers.1.mlp.up_proj.weight  # [16, 8]
for f in q8_0 q4; do
  expect 0 "dequant $f" "$T" dequant --kernel scalar --out "$work/$f.scalar" "$work/$f.slm" "$W"
  [ "$(stat -c %s "$work/$f.scalar")" -eq 512 ] || { echo "FAIL: dequant $f: size"; fails=$((fails + 1)); }
  for k in avx2 avx512 neon; do
    if "$T" dequant --kernel "$k" --out "$work/$f.$k" "$work/$f.slm" "$W" 2>/dev/null; then
      cmp -s "$work/$f.scalar" "$work/$f.$k" || { echo "FAIL: dequant $f: $k differs from scalar"; fails=$((fails + 1)); }
      echo "ok: dequant $f $k = scalar"
    fi
  done
  expect 0 "dequant $f --to bf16 --rows 2:5" "$T" dequant --to bf16 --rows 2:5 --out "$work/$f.bf16" "$work/$f.slm" "$W"
  [ "$(stat -c %s "$work/$f.bf16")" -eq 48 ] || { echo "FAIL: dequant $f bf16: size"; fails=$((fails + 1)); }
  expect 0 "dequant $f --to f16" "$T" dequant --to f16 --out "$work/$f.f16" "$work/$f.slm" "$W"
  [ "$(stat -c %s "$work/$f.f16")" -eq 256 ] || { echo "FAIL: dequant $f f16: size"; fails=$((fails + 1)); }
  expect 0 "inspect --json $f" "$T" inspect --json "$work/$f.slm"
done
grep_out '"scheme":"slm1-q4_0"' out "inspect names the q4_0 scheme"
# q8_0 decodes near the f32 original (one scale per row: error at most scale/2 = amax/254).
expect 0 "dequant f32" "$T" dequant --out "$work/f32.f32" "$work/f32.slm" "$W"
if command -v python3 >/dev/null; then
  python3 - "$work/f32.f32" "$work/q8_0.scalar" <<'PY' || { echo "FAIL: q8_0 values far from f32"; fails=$((fails + 1)); }
import struct, sys
a = struct.unpack('<128f', open(sys.argv[1], 'rb').read())
b = struct.unpack('<128f', open(sys.argv[2], 'rb').read())
for r in range(16):
    row_a, row_b = a[8 * r:8 * r + 8], b[8 * r:8 * r + 8]
    amax = max(abs(x) for x in row_a)
    assert all(abs(x - y) <= amax / 254 * 1.001 for x, y in zip(row_a, row_b)), r
PY
fi
expect 1 "dequant q8_0 --rows 3:99" "$T" dequant --rows 3:99 --out "$work/x.bin" "$work/q8_0.slm" "$W"
grep_out "TBLOB_E_RANGE" err "row range past the end"

# A BERT-like checkpoint: float weights and the I64 embeddings.position_ids (and a BOOL mask)
# that such models carry. SLM1 holds no integer dtype: refused, naming the tensor and the
# option; with --skip-integer each float tensor is stored with the generator's own f32 bytes
# and each integer one is named as skipped. Written by hand here (struct and json), so the
# expected values are the bytes this script wrote.
mkdir "$work/bert"
if python3 - "$work/bert" <<'PY'; then
import json, os, struct, sys
d = sys.argv[1]
f32 = lambda vals: struct.pack(f"<{len(vals)}f", *vals)
tensors = {
    "embeddings.word_embeddings.weight": ("F32", [8, 4], f32([i * 0.25 - 3 for i in range(32)])),
    "embeddings.position_ids": ("I64", [1, 6], struct.pack("<6q", *range(6))),
    "embeddings.LayerNorm.weight": ("F32", [4], f32([1, 1.5, 2, 2.5])),
    "encoder.layer.0.attention.self.query.weight": ("F32", [4, 4], f32([(i % 5) - 2.0 for i in range(16)])),
    "encoder.layer.0.attention.mask": ("BOOL", [2, 2], bytes([1, 0, 0, 1])),
}
hdr, data = {}, b""
for name, (dt, shape, raw) in tensors.items():
    hdr[name] = {"dtype": dt, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
    data += raw
    if dt == "F32":
        open(os.path.join(d, name + ".f32"), "wb").write(raw)
h = json.dumps(hdr).encode()
h += b" " * (-len(h) % 8)
open(os.path.join(d, "model.safetensors"), "wb").write(struct.pack("<Q", len(h)) + h + data)
json.dump({"model_type": "bert", "hidden_size": 4, "intermediate_size": 8, "num_hidden_layers": 1,
           "num_attention_heads": 2, "max_position_embeddings": 6, "vocab_size": 8, "layer_norm_eps": 1e-12},
          open(os.path.join(d, "config.json"), "w"))
PY
  expect 1 "convert a checkpoint with an I64 tensor" "$T" convert --to slm1 "$work/bert/model.safetensors" "$work/bert.slm"
  grep_out 'tensor "embeddings.position_ids" is I64 \[1, 6\]' err "names the integer tensor, its dtype and shape"
  grep_out "--skip-integer" err "names the option that skips it"
  [ -e "$work/bert.slm" ] && { echo "FAIL: a refused conversion left its output"; fails=$((fails + 1)); }
  expect 0 "convert --skip-integer" "$T" convert --to slm1 --skip-integer "$work/bert/model.safetensors" "$work/bert.slm"
  grep_out "3 tensors (3 f32, 0 q8_0, 0 q4_0, 2 integer skipped)" out "summary counts the skipped tensors"
  grep_out 'skipped "embeddings.position_ids" (I64 \[1, 6\])' err "names the skipped I64 tensor"
  grep_out 'skipped "encoder.layer.0.attention.mask" (BOOL \[2, 2\])' err "names the skipped BOOL tensor"
  for n in embeddings.word_embeddings.weight embeddings.LayerNorm.weight encoder.layer.0.attention.self.query.weight; do
    expect 0 "dequant $n" "$T" dequant --out "$work/bert/$n.out" "$work/bert.slm" "$n"
    cmp -s "$work/bert/$n.f32" "$work/bert/$n.out" || { echo "FAIL: $n: values differ from the source"; fails=$((fails + 1)); }
  done
  expect 1 "the skipped tensor is absent" "$T" dequant --out "$work/bert/x.out" "$work/bert.slm" embeddings.position_ids
  expect 0 "convert --skip-integer --json" "$T" convert --json --to slm1 --skip-integer "$work/bert/model.safetensors" "$work/bert2.slm"
  grep_out '"skipped":\["embeddings.position_ids","encoder.layer.0.attention.mask"\]' out "JSON lists the skipped tensors"
else
  echo "FAIL: could not write the BERT-like checkpoint"; fails=$((fails + 1))
fi

# Usage errors.
expect 2 "convert --to gguf" "$T" convert --to gguf "$work/model.safetensors" "$work/x.slm"
expect 2 "convert --dtype q5" "$T" convert --to slm1 --dtype q5 "$work/model.safetensors" "$work/x.slm"
expect 2 "convert --block-size with q8_0" "$T" convert --to slm1 --dtype q8_0 --block-size 8 "$work/model.safetensors" "$work/x.slm"
expect 2 "convert without OUT" "$T" convert --to slm1 "$work/model.safetensors"
# No config.json beside SRC, then --config.
mkdir "$work/noconf" && cp "$work/model.safetensors" "$work/noconf/"
expect 1 "convert without config.json" "$T" convert --to slm1 "$work/noconf/model.safetensors" "$work/x.slm"
grep_out "config" err "says config.json is missing"
expect 0 "convert --config" "$T" convert --to slm1 --config "$work/config.json" "$work/noconf/model.safetensors" "$work/x.slm"
# An SLM1 source is refused.
expect 1 "convert from slm1" "$T" convert --to slm1 "$DATA/tiny_btok.slm" "$work/x.slm"
# A changed value byte: checksum error; --no-checksum skips only that.
cp "$work/f32.slm" "$work/flip.slm"
size=$(stat -c %s "$work/flip.slm")
printf '\x55' | dd of="$work/flip.slm" bs=1 seek=$((size - 1)) conv=notrunc status=none
expect 1 "inspect corrupted" "$T" inspect "$work/flip.slm"
grep_out "TBLOB_E_SLM1_CHECKSUM" err "checksum status"
expect 0 "inspect --no-checksum" "$T" inspect --no-checksum "$work/flip.slm"
grep_out "checksum_verified = false" out "not verified"
# A structural error still fails with --no-checksum (reserved field of entry 0).
cp "$work/f32.slm" "$work/res.slm"
dir=$(od -An -t u8 -j 80 -N 8 "$work/res.slm" | tr -d ' ')
printf '\x01' | dd of="$work/res.slm" bs=1 seek=$((dir + 60)) conv=notrunc status=none
expect 1 "inspect --no-checksum structural" "$T" inspect --no-checksum "$work/res.slm"
grep_out "TBLOB_E_SLM1_ENTRY" err "entry status"

echo "$fails failure(s)"
[ "$fails" -eq 0 ]
