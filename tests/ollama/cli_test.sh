#!/bin/sh
# CLI checks for the Ollama store commands: exit codes, JSON shape, bad blobs named.
# usage: cli_test.sh TENSORBLOB EXAMPLES_DIR
set -u
TB=$1
EX=$2
T=$(mktemp -d "${TMPDIR:-/tmp}/ollama-cli-XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
check() {  # check NAME EXPECTED_RC ACTUAL_RC
  if [ "$2" != "$3" ]; then echo "FAIL: $1 (exit $3, expected $2)"; fail=1; else echo "ok: $1"; fi
}
mkdir -p "$T/src"
cp "$EX/tiny-llama/model.safetensors" "$T/src/"
printf '{"model_type":"llama","architectures":["LlamaForCausalLM"]}' > "$T/src/config.json"

"$TB" import --store "$T/store" --name tiny "$T/src" > "$T/out" 2>&1; check "import" 0 $?
grep -q "manifest written" "$T/out" || { echo "FAIL: import output"; cat "$T/out"; fail=1; }
"$TB" import --store "$T/store" --name tiny "$T/src" > "$T/out" 2>&1; check "import again" 0 $?
grep -q "0 blobs written" "$T/out" && grep -q "manifest unchanged" "$T/out" || { echo "FAIL: re-import not a no-op"; cat "$T/out"; fail=1; }
"$TB" import --json --store "$T/store" --name other:v1 "$T/src" > "$T/out"; check "import --json" 0 $?
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['ok'] and d['blobs_written']==0, d" "$T/out" || fail=1

"$TB" ls --store "$T/store" > "$T/out"; check "ls" 0 $?
grep -q "^tiny:latest" "$T/out" && grep -q "^other:v1" "$T/out" || { echo "FAIL: ls output"; cat "$T/out"; fail=1; }
"$TB" ls --json --store "$T/store" > "$T/out"; check "ls --json" 0 $?
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['ok'] and len(d['models'])==2, d" "$T/out" || fail=1

"$TB" inspect --json "$T/store/tiny:latest" > "$T/out"; check "inspect STORE/MODEL" 0 $?
python3 - "$T/out" <<'PY' || fail=1
import json, sys
d = json.loads(open(sys.argv[1]).read())
assert d["ok"] and d["format"] == "ollama" and len(d["tensors"]) == 21, d
assert all(set(t) >= {"name", "dtype", "shape", "offset", "length"} for t in d["tensors"])
PY
"$TB" inspect --json --store "$T/store" tiny > "$T/out"; check "inspect --store" 0 $?
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['ok'] and d['format']=='ollama' and len(d['tensors'])==21 and 'metadata' in d, d" "$T/out" || fail=1
# dequant from a store model equals dequant of the source file (bf16 -> f32 is exact)
"$TB" dequant --store "$T/store" --out "$T/a.bin" tiny lm_head.weight; check "dequant --store" 0 $?
"$TB" dequant --out "$T/b.bin" "$T/src/model.safetensors" lm_head.weight; check "dequant file" 0 $?
mkdir -p "$T/notastore"
"$TB" dequant --store "$T/notastore" --out "$T/c.bin" tiny lm_head.weight > "$T/out" 2>&1
grep -q "NOT_A_STORE" "$T/out" || { echo "FAIL: dequant --store on a non-store does not say NOT_A_STORE"; cat "$T/out"; fail=1; }
cmp -s "$T/a.bin" "$T/b.bin" && [ "$(wc -c < "$T/a.bin")" -eq 1024 ] || { echo "FAIL: dequant --store output differs"; fail=1; }

"$TB" verify --store "$T/store" > "$T/out"; check "verify" 0 $?
"$TB" verify --store "$T/store" tiny --json > "$T/out"; check "verify MODEL --json" 0 $?
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['ok'] and d['blobs']==23 and d['bad']==[], d" "$T/out" || fail=1
# Corrupt one blob, truncate another: both named, exit 1.
set -- "$T"/store/blobs/sha256-*
printf 'X' | dd of="$1" bs=1 seek=9 conv=notrunc 2>/dev/null
: > "$2"
"$TB" verify --store "$T/store" > "$T/out"; check "verify bad" 1 $?
grep -q "BAD $1: TBLOB_E_DIGEST_MISMATCH" "$T/out" || { echo "FAIL: mismatch not named"; cat "$T/out"; fail=1; }
grep -q "BAD $2: TBLOB_E_OLLAMA_BLOB_EMPTY" "$T/out" || { echo "FAIL: empty blob not named"; cat "$T/out"; fail=1; }
"$TB" verify --json --store "$T/store" > "$T/out"; check "verify bad --json" 1 $?
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert not d['ok'] and len(d['bad'])==2, d" "$T/out" || fail=1
# The progress bar goes to stderr only on a terminal: nothing on stderr here.
"$TB" verify --store "$T/store" > /dev/null 2> "$T/err"; [ -s "$T/err" ] && { echo "FAIL: stderr not empty"; fail=1; }

echo "orphan" > "$T/store/blobs/sha256-$(printf orphan | sha256sum | cut -c1-64)"
"$TB" gc --store "$T/store" > "$T/out"; check "gc dry run" 0 $?
grep -q "would remove" "$T/out" || { echo "FAIL: gc listing"; cat "$T/out"; fail=1; }
"$TB" gc --json --store "$T/store" --remove > "$T/out"; check "gc --remove --json" 0 $?
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['ok'] and d['removed_files']==1, d" "$T/out" || fail=1

"$TB" ls --store "$T/nope" > /dev/null 2>&1; check "ls missing store" 1 $?
"$TB" ls > /dev/null 2>&1; check "ls usage" 2 $?
"$TB" verify --store "$T/store" "../x" > /dev/null 2>&1; check "verify bad name" 1 $?
exit $fail
