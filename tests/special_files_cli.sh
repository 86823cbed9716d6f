#!/usr/bin/env bash
# The CLI given a FIFO, a device or a directory where a file is expected: exit 1 at
# once with a message naming what the path is. A FIFO without a writer used to block open()
# forever; `timeout` turns such a hang into a failure here instead of a stuck CI job.
# Usage: special_files_cli.sh TENSORBLOB EXAMPLES_DIR HAVE_SLM1(0|1)
set -u
T=$1 EX=$2 SLM1=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/special-cli-XXXXXX")
trap 'rm -rf "$work"' EXIT
fails=0
expect() {  # expected-exit-code pattern description command...
  local want=$1 pat=$2 what=$3; shift 3
  timeout 60 "$@" >"$work/out" 2>"$work/err"
  local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: $what: exit $got, expected $want"; cat "$work/out" "$work/err"; fails=$((fails + 1))
  elif ! grep -q -- "$pat" "$work/out" "$work/err"; then
    echo "FAIL: $what: '$pat' not in the output:"; cat "$work/out" "$work/err"; fails=$((fails + 1))
  elif grep -q -- "No such file" "$work/out" "$work/err"; then
    echo "FAIL: $what: stale errno text:"; cat "$work/out" "$work/err"; fails=$((fails + 1))
  else
    echo "ok: $what"
  fi
}

mkfifo "$work/fifo.safetensors"
expect 1 "is a FIFO" "inspect a FIFO" "$T" inspect "$work/fifo.safetensors"
expect 1 "is a FIFO" "inspect --json a FIFO" "$T" inspect --json "$work/fifo.safetensors"
expect 1 "is a character device" "inspect /dev/zero" "$T" inspect /dev/zero
expect 1 "is a FIFO" "dequant from a FIFO" "$T" dequant --out "$work/o" "$work/fifo.safetensors" w

# A sharded checkpoint whose second shard is a FIFO, then a directory.
mkdir "$work/sharded"
cp "$EX/sharded/model.safetensors.index.json" "$EX/sharded/model-00001-of-00002.safetensors" "$work/sharded/"
mkfifo "$work/sharded/model-00002-of-00002.safetensors"
expect 1 "model-00002-of-00002.safetensors is a FIFO" "inspect a checkpoint with a FIFO shard" "$T" inspect "$work/sharded"
rm "$work/sharded/model-00002-of-00002.safetensors"
mkdir "$work/sharded/model-00002-of-00002.safetensors"
expect 1 "model-00002-of-00002.safetensors is a directory" "inspect a checkpoint with a directory shard" \
  "$T" inspect "$work/sharded"

# convert's config.json: beside the source, then --config, as a FIFO, a device, a directory.
mkdir "$work/conv"
cp "$EX/tiny-llama/model.safetensors" "$work/conv/model.safetensors"
if [ "$SLM1" = 1 ]; then
  mkfifo "$work/conv/config.json"
  expect 1 "config.json: is a FIFO" "convert with a FIFO config.json beside" \
    "$T" convert --to slm1 "$work/conv/model.safetensors" "$work/conv/out.slm"
  expect 1 "is a device" "convert --config /dev/zero" \
    "$T" convert --to slm1 --config /dev/zero "$work/conv/model.safetensors" "$work/conv/out.slm"
  expect 1 "is a directory" "convert --config DIR" \
    "$T" convert --to slm1 --config "$work/conv" "$work/conv/model.safetensors" "$work/conv/out.slm"
  cat >"$work/good-config.json" <<'JSON'
{"hidden_size": 8, "intermediate_size": 16, "num_hidden_layers": 2, "num_attention_heads": 2,
 "num_key_value_heads": 2, "max_position_embeddings": 64, "rope_theta": 10000.0,
 "rms_norm_eps": 1e-06, "tie_word_embeddings": false, "vocab_size": 32}
JSON
  expect 1 "is a FIFO" "convert --tokenizer FIFO" \
    "$T" convert --to slm1 --config "$work/good-config.json" --tokenizer "$work/conv/config.json" \
    "$work/conv/model.safetensors" "$work/conv/out.slm"
  [ -e "$work/conv/out.slm" ] && { echo "FAIL: a refused conversion left its output"; fails=$((fails + 1)); }
  # Control: the same conversion with a regular config.json succeeds.
  expect 0 "21 tensors" "convert with a regular config" \
    "$T" convert --to slm1 --config "$work/good-config.json" "$work/conv/model.safetensors" "$work/conv/out.slm"
fi

echo "$fails failed"
[ "$fails" -eq 0 ]
