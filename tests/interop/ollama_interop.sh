#!/usr/bin/env bash
# Interoperability check against a real Ollama build (CI-optional).
#
# usage: tests/interop/ollama_interop.sh TENSORBLOB_BIN [SAFETENSORS_SRC_DIR]
#
# Exit status: 0 all checks passed, 1 a check failed, 2 usage error,
#              77 skipped (Ollama cannot be built/used here; the reason is printed).
#
# What it does:
#   1. builds `ollama` from the Go module proxy (or reuses $OLLAMA_BIN / a cached build),
#   2. `ollama create --experimental` (the safetensors / MLX store path) from a small safetensors
#      directory into a temporary OLLAMA_MODELS,
#   3. runs our CLI on that store: ls --json, inspect --json, verify (and verify of a corrupted copy),
#   4. imports the same directory with `tensorblob import` into a copy of that store and into an
#      empty store, starts `ollama serve` on 127.0.0.1 only, and checks `ollama list` / `ollama show`
#      for the model we wrote; stops the server.
#
# Environment (all optional):
#   OLLAMA_BIN              use this ollama binary instead of building one
#   OLLAMA_VERSION          module version to build (default v0.17.4)
#   OLLAMA_INTEROP_CACHE    build cache dir (default ${TMPDIR:-/tmp}/tensorblob-ollama-interop)
#   OLLAMA_BUILD_TIMEOUT    seconds allowed for the build (default 2400) -> 77 when exceeded
#   OLLAMA_INTEROP_NO_BUILD=1  never build; skip (77) when no binary is available
#   OLLAMA_INTEROP_KEEP=1   keep the temporary directory (path printed)
#   OLLAMA_INTEROP_STRICT_DIGESTS=1  fail (not just note) when our tensor blobs differ from Ollama's
#
# The build needs go, a C/C++ compiler, and nlohmann/json + stb_image headers on the default include
# path (Debian: nlohmann-json3-dev libstb-dev): the Go module zip drops ollama's
# llama/llama.cpp/vendor/ directory, so those headers (and miniaudio.h, taken from the Go module
# github.com/gen2brain/malgo) must come from elsewhere.
#
# Network: only the Go module proxy during the build. The server listens on 127.0.0.1 only and
# every client call goes to that address; HTTP(S)_PROXY point at a dead loopback port so any
# stray outbound request fails instead of leaving the machine.
set -u

SKIP=77
say()  { printf '%s\n' "$*"; }
skip() { say "SKIP: $*"; exit "$SKIP"; }

if [ $# -lt 1 ] || [ ! -x "$1" ]; then
  say "usage: $0 TENSORBLOB_BIN [SAFETENSORS_SRC_DIR]" >&2
  exit 2
fi
TB=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
SRC_IN=${2:-$HERE/../../examples/tiny-llama}
[ -f "$SRC_IN/model.safetensors" ] || { say "no model.safetensors in $SRC_IN" >&2; exit 2; }

VERSION=${OLLAMA_VERSION:-v0.17.4}
CACHE=${OLLAMA_INTEROP_CACHE:-${TMPDIR:-/tmp}/tensorblob-ollama-interop}
BUILD_TIMEOUT=${OLLAMA_BUILD_TIMEOUT:-2400}
CMD_TIMEOUT=60   # per ollama/tensorblob command

command -v timeout >/dev/null 2>&1 || skip "coreutils timeout not found"
command -v python3 >/dev/null 2>&1 || skip "python3 not found (used to check JSON)"

# ---------------------------------------------------------------- 1. ollama binary
find_go() {
  if command -v go >/dev/null 2>&1; then command -v go; return 0; fi
  [ -x /usr/local/go/bin/go ] && { echo /usr/local/go/bin/go; return 0; }
  return 1
}

build_ollama() {
  local go bindir inc log malgo_dir cxx
  go=$(find_go) || skip "no Go toolchain (go) to build ollama"
  cxx=${CXX:-c++}
  command -v "$cxx" >/dev/null 2>&1 || skip "no C++ compiler ($cxx) for ollama's cgo parts"
  command -v "${CC:-cc}" >/dev/null 2>&1 || skip "no C compiler for ollama's cgo parts"
  for h in nlohmann/json_fwd.hpp nlohmann/json.hpp stb/stb_image.h; do
    printf '#include <%s>\n' "$h" | "$cxx" -std=c++17 -fsyntax-only -x c++ - >/dev/null 2>&1 ||
      skip "header <$h> not found (the Go module zip omits ollama's llama.cpp/vendor/; install nlohmann-json3-dev libstb-dev)"
  done
  bindir=$CACHE/bin-$VERSION
  inc=$CACHE/inc
  log=$CACHE/build-$VERSION.log
  mkdir -p "$bindir" "$inc/miniaudio" || skip "cannot create $CACHE"
  if [ ! -s "$inc/miniaudio/miniaudio.h" ]; then
    malgo_dir=$(timeout 300 "$go" mod download -json github.com/gen2brain/malgo@v0.11.24 2>/dev/null |
                python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])' 2>/dev/null) ||
      skip "could not fetch miniaudio.h (module github.com/gen2brain/malgo) from the Go module proxy"
    cp "$malgo_dir/miniaudio.h" "$inc/miniaudio/miniaudio.h" || skip "copy of miniaudio.h failed"
  fi
  say "building ollama $VERSION (log: $log, limit ${BUILD_TIMEOUT}s; first build ~20 min on 2 cores)"
  local t0=$(date +%s) rc
  nice -n 15 env GOMAXPROCS="${GOMAXPROCS:-1}" GOBIN="$bindir" GOFLAGS=-mod=mod CGO_ENABLED=1 \
      CGO_CPPFLAGS="-I$inc" timeout "$BUILD_TIMEOUT" \
      "$go" install -p 1 -ldflags="-X=github.com/ollama/ollama/version.Version=${VERSION#v}" \
      "github.com/ollama/ollama@$VERSION" >"$log" 2>&1
  rc=$?
  [ $rc -eq 124 ] && skip "ollama build exceeded ${BUILD_TIMEOUT}s (see $log)"
  if [ $rc -ne 0 ] || [ ! -x "$bindir/ollama" ]; then
    say "--- last lines of $log"; tail -20 "$log"
    skip "ollama $VERSION did not build (exit $rc)"
  fi
  say "built ollama in $(( $(date +%s) - t0 ))s"
}

if [ -n "${OLLAMA_BIN:-}" ]; then
  [ -x "$OLLAMA_BIN" ] || skip "OLLAMA_BIN=$OLLAMA_BIN is not executable"
  OLLAMA=$OLLAMA_BIN
elif [ -x "$CACHE/bin-$VERSION/ollama" ]; then
  OLLAMA=$CACHE/bin-$VERSION/ollama
else
  [ "${OLLAMA_INTEROP_NO_BUILD:-0}" = 1 ] && skip "no ollama binary and OLLAMA_INTEROP_NO_BUILD=1"
  build_ollama
  OLLAMA=$CACHE/bin-$VERSION/ollama
fi
say "ollama: $OLLAMA"

# ---------------------------------------------------------------- 2. sandbox
T=$(mktemp -d "${TMPDIR:-/tmp}/ollama-interop-XXXXXX") || skip "mktemp failed"
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ]; then
    kill "$SERVER_PID" 2>/dev/null
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$SERVER_PID" 2>/dev/null
    wait "$SERVER_PID" 2>/dev/null
  fi
  if [ "${OLLAMA_INTEROP_KEEP:-0}" = 1 ]; then say "kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])') ||
  skip "cannot find a free loopback port"
export OLLAMA_HOST=127.0.0.1:$PORT
case $OLLAMA_HOST in 127.0.0.1:*) ;; *) say "refusing non-loopback OLLAMA_HOST" >&2; exit 1;; esac
export HOME=$T/home                 # ollama keeps its key pair in $HOME/.ollama
export HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9
export http_proxy=$HTTP_PROXY https_proxy=$HTTPS_PROXY
export NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost
export OLLAMA_NOPRUNE=1 OLLAMA_NO_CLOUD=1
unset OLLAMA_ORIGINS
mkdir -p "$HOME"

# Source directory: the safetensors file plus the minimal configs `ollama create` wants.
SRC=$T/src
mkdir -p "$SRC"
cp "$SRC_IN/model.safetensors" "$SRC/"
for f in "$SRC_IN"/*.json; do [ -f "$f" ] && cp "$f" "$SRC/"; done
python3 - "$SRC" <<'PY' || { echo "cannot write config files"; exit 1; }
import json, os, struct, sys
d = sys.argv[1]
b = open(os.path.join(d, "model.safetensors"), "rb").read()
n = struct.unpack("<Q", b[:8])[0]
h = {k: v for k, v in json.loads(b[8:8 + n]).items() if k != "__metadata__"}
def shape(name, default):
    return h[name]["shape"] if name in h else default
vocab, hidden = shape("model.embed_tokens.weight", [32, 8])
inter = shape("model.layers.0.mlp.up_proj.weight", [4 * hidden, hidden])[0]
layers = 1 + max(int(k.split(".")[2]) for k in h if k.startswith("model.layers."))
cfg_path = os.path.join(d, "config.json")
if not os.path.exists(cfg_path):
    heads = 2 if hidden % 2 == 0 else 1
    json.dump({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
               "hidden_size": hidden, "intermediate_size": inter, "num_hidden_layers": layers,
               "num_attention_heads": heads, "num_key_value_heads": heads,
               "head_dim": hidden // heads, "vocab_size": vocab, "max_position_embeddings": 64,
               "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": False,
               "hidden_act": "silu", "bos_token_id": 1, "eos_token_id": 2},
              open(cfg_path, "w"), indent=2)
if not os.path.exists(os.path.join(d, "tokenizer.json")):
    toks = ["<unk>", "<s>", "</s>"] + [chr(0x61 + i) for i in range(26)] + [" ", "\u0120", "."]
    toks += ["<extra_%d>" % i for i in range(max(0, vocab - len(toks)))]
    toks = toks[:vocab]
    json.dump({"version": "1.0", "truncation": None, "padding": None,
               "added_tokens": [{"id": i, "content": t, "single_word": False, "lstrip": False,
                                 "rstrip": False, "normalized": False, "special": True}
                                for i, t in enumerate(toks[:3])],
               "normalizer": None,
               "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False,
                                 "trim_offsets": True, "use_regex": True},
               "post_processor": None,
               "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                           "use_regex": True},
               "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>",
                         "continuing_subword_prefix": None, "end_of_word_suffix": None,
                         "fuse_unk": False, "byte_fallback": False,
                         "vocab": {t: i for i, t in enumerate(toks)}, "merges": []}},
              open(os.path.join(d, "tokenizer.json"), "w"), indent=2)
if not os.path.exists(os.path.join(d, "tokenizer_config.json")):
    json.dump({"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>",
               "model_max_length": 64, "tokenizer_class": "PreTrainedTokenizerFast"},
              open(os.path.join(d, "tokenizer_config.json"), "w"), indent=2)
json.dump(sorted(h), open(os.path.join(os.path.dirname(d), "tensor_names.json"), "w"))
PY

fail=0
ok()   { say "ok: $*"; }
bad()  { say "FAIL: $*"; fail=1; }
run()  { timeout "$CMD_TIMEOUT" "$@"; }   # every external command is time-bounded

OL_STORE=$T/ollama-store     # written by ollama create
MIX_STORE=$T/mixed-store     # copy of OL_STORE + our import
TB_STORE=$T/tb-store         # written by our import only
OL_MODEL=interop/tiny-ollama:latest
TB_MODEL=interop/tiny-tensorblob:latest

# ---------------------------------------------------------------- 3. ollama writes a store
say "== ollama create --experimental (safetensors store path)"
( cd "$SRC" && OLLAMA_MODELS=$OL_STORE run "$OLLAMA" create --experimental "$OL_MODEL" ) \
    >"$T/create.out" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
  cat "$T/create.out"
  skip "ollama create --experimental failed (exit $rc); this ollama cannot produce a safetensors store"
fi
ok "ollama create --experimental $OL_MODEL"
(cd "$OL_STORE" && find . -type f | sort | sed 's/^/  /')

# ---------------------------------------------------------------- 4. we read Ollama's store
say "== tensorblob reads Ollama's store"
run "$TB" ls --store "$OL_STORE" --json >"$T/ls.json" 2>"$T/ls.err"; rc=$?
if [ $rc -eq 0 ] && python3 - "$T/ls.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d.get("ok", True), d
text = json.dumps(d)
assert "tiny-ollama" in text, d
PY
then ok "tensorblob ls --json lists the Ollama-made model"
else bad "tensorblob ls --json (exit $rc)"; cat "$T/ls.json" "$T/ls.err"; fi

run "$TB" inspect --json --store "$OL_STORE" "$OL_MODEL" >"$T/inspect.json" 2>"$T/inspect.err"; rc=$?
if [ $rc -eq 2 ] && grep -q -- "--store" "$T/inspect.err"; then
  # Usage error: this CLI build does not route `inspect --store` yet. Still check the library
  # through the STORE_ROOT/MODEL path form, but count the missing option as a failure.
  bad "tensorblob inspect --json --store DIR MODEL is not accepted: $(head -1 "$T/inspect.err")"
  run "$TB" inspect --json "$OL_STORE/$OL_MODEL" >"$T/inspect.json" 2>"$T/inspect.err"; rc=$?
  say "  (checking 'tensorblob inspect --json STORE/MODEL' instead)"
fi
if [ $rc -eq 0 ] && python3 - "$T/inspect.json" "$SRC/model.safetensors" <<'PY'
import json, struct, sys
d = json.load(open(sys.argv[1]))
b = open(sys.argv[2], "rb").read()
n = struct.unpack("<Q", b[:8])[0]
src = {k: v for k, v in json.loads(b[8:8 + n]).items() if k != "__metadata__"}
assert d.get("ok", True), d
ts = d["tensors"]
if isinstance(ts, dict):
    ts = [dict(v, name=k) for k, v in ts.items()]
got = {t["name"]: t for t in ts}
missing = sorted(set(src) - set(got))
extra = sorted(set(got) - set(src))
assert not missing and not extra, ("missing", missing, "extra", extra)
for k, v in src.items():
    t = got[k]
    assert str(t["dtype"]).upper() == v["dtype"], (k, t, v)
    assert list(t["shape"]) == v["shape"], (k, t, v)
    if "length" in t:
        assert t["length"] == v["data_offsets"][1] - v["data_offsets"][0], (k, t, v)
print("  %d tensors match the source safetensors (name, dtype, shape, length)" % len(src))
PY
then ok "tensorblob inspect --json matches the source tensors"
else bad "tensorblob inspect --json (exit $rc)"; head -c 2000 "$T/inspect.json"; cat "$T/inspect.err"; fi

run "$TB" verify --store "$OL_STORE" "$OL_MODEL" >"$T/verify.out" 2>&1; rc=$?
[ $rc -eq 0 ] && ok "tensorblob verify on Ollama's store" || { bad "tensorblob verify (exit $rc)"; cat "$T/verify.out"; }

# A corrupted copy must fail verification.
cp -r "$OL_STORE" "$T/corrupt-store"
victim=$(python3 - "$T/corrupt-store" <<'PY'
import glob, json, os, sys
root = sys.argv[1]
m = glob.glob(os.path.join(root, "manifests", "*", "*", "*", "*"))[0]
lay = [l for l in json.load(open(m))["layers"] if l["mediaType"].endswith("image.tensor")][0]
print(os.path.join(root, "blobs", lay["digest"].replace(":", "-")))
PY
)
printf 'X' | dd of="$victim" bs=1 seek=20 conv=notrunc 2>/dev/null
run "$TB" verify --store "$T/corrupt-store" "$OL_MODEL" >"$T/verify-bad.out" 2>&1; rc=$?
if [ $rc -eq 1 ] && grep -q "$(basename "$victim")" "$T/verify-bad.out"; then
  ok "tensorblob verify names the corrupted blob and exits 1"
else bad "verify of corrupted store (exit $rc, expected 1 naming $(basename "$victim"))"; cat "$T/verify-bad.out"; fi

# ---------------------------------------------------------------- 5. Ollama reads our store
say "== tensorblob import, then ollama list/show"
cp -r "$OL_STORE" "$MIX_STORE"
run "$TB" import --store "$MIX_STORE" --name "$TB_MODEL" "$SRC" >"$T/import-mix.out" 2>&1; rc=$?
[ $rc -eq 0 ] && ok "tensorblob import into a copy of Ollama's store" || { bad "tensorblob import (mixed, exit $rc)"; cat "$T/import-mix.out"; }
run "$TB" import --store "$TB_STORE" --name "$TB_MODEL" "$SRC" >"$T/import.out" 2>&1; rc=$?
[ $rc -eq 0 ] && ok "tensorblob import into an empty store" || { bad "tensorblob import (empty store, exit $rc)"; cat "$T/import.out"; }

# Compare what the two writers produced for the same tensors.
python3 - "$MIX_STORE" <<'PY' >"$T/digests.out" 2>&1
import glob, json, os, sys
root = sys.argv[1]
def layers(model):
    p = os.path.join(root, "manifests", "registry.ollama.ai", "interop", model, "latest")
    if not os.path.exists(p):
        print("  no manifest for", model); sys.exit(2)
    return {l.get("name"): l for l in json.load(open(p))["layers"]}
a, b = layers("tiny-ollama"), layers("tiny-tensorblob")
same = diff = 0
for name, la in sorted(a.items()):
    if not la["mediaType"].endswith("image.tensor"):
        continue
    lb = b.get(name)
    if lb is None:
        print("  only in ollama's manifest:", name); diff += 1
    elif lb["digest"] != la["digest"] or lb["mediaType"] != la["mediaType"]:
        print("  differs:", name, la["digest"], lb.get("digest")); diff += 1
    else:
        same += 1
print("  tensor layers identical: %d, different: %d" % (same, diff))
sys.exit(1 if diff else 0)
PY
rc=$?
cat "$T/digests.out"
if [ $rc -eq 2 ]; then :   # import failed, already reported
elif [ $rc -eq 0 ]; then ok "our tensor blobs are byte-identical to Ollama's (shared by digest)"
elif [ "${OLLAMA_INTEROP_STRICT_DIGESTS:-0}" = 1 ]; then bad "tensor blobs differ from Ollama's"
else say "note: tensor blobs differ from Ollama's (not an error; OLLAMA_INTEROP_STRICT_DIGESTS=1 makes it one)"; fi

run "$TB" verify --store "$MIX_STORE" >"$T/verify-mix.out" 2>&1; rc=$?
[ $rc -eq 0 ] && ok "tensorblob verify on the mixed store" || { bad "verify mixed store (exit $rc)"; cat "$T/verify-mix.out"; }

start_server() {  # start_server STORE
  OLLAMA_MODELS=$1 "$OLLAMA" serve >"$T/serve.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 60); do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      SERVER_PID=; cat "$T/serve.log"; skip "ollama serve exited at start"
    fi
    run "$OLLAMA" list >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  cat "$T/serve.log"; skip "ollama serve did not answer on $OLLAMA_HOST within 30s"
}
stop_server() {
  [ -n "$SERVER_PID" ] || return 0
  kill "$SERVER_PID" 2>/dev/null
  for _ in $(seq 1 20); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.5; done
  kill -9 "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null
  SERVER_PID=
}
check_ollama_reads() {  # check_ollama_reads LABEL STORE MODEL...
  local label=$1 store=$2 id ours; shift 2
  run "$OLLAMA" list >"$T/list.out" 2>&1; rc=$?
  [ $rc -eq 0 ] || { bad "[$label] ollama list (exit $rc)"; cat "$T/list.out"; }
  run "$TB" ls --store "$store" --json >"$T/ls2.json" 2>/dev/null
  for m in "$@"; do
    if grep -q "^${m}[[:space:]]" "$T/list.out"; then ok "[$label] ollama list shows $m"
    else bad "[$label] ollama list lacks $m"; cat "$T/list.out"; fi
    # ollama's ID column = first 12 hex of sha256(manifest bytes); compare with our ls --json id.
    id=$(awk -v m="$m" '$1 == m { print $2 }' "$T/list.out")
    ours=$(python3 - "$T/ls2.json" "$m" <<'PY' 2>/dev/null
import json, sys
for e in json.load(open(sys.argv[1])).get("models", []):
    if sys.argv[2] in (e.get("short_name"), e.get("name")):
        print(str(e.get("id", ""))[:12])
PY
)
    if [ -n "$id" ] && [ "$id" = "$ours" ]; then ok "[$label] model id $id agrees (ollama list vs tensorblob ls)"
    else say "note: [$label] id of $m: ollama '$id', tensorblob ls '$ours'"; fi
    run "$OLLAMA" show "$m" >"$T/show.out" 2>&1; rc=$?
    if [ $rc -eq 0 ]; then ok "[$label] ollama show $m"; sed 's/^/    /' "$T/show.out"
    else bad "[$label] ollama show $m (exit $rc)"; cat "$T/show.out"; fi
    run "$OLLAMA" show --verbose "$m" >"$T/showv.out" 2>&1 ||
      say "note: [$label] ollama show --verbose $m failed: $(tail -1 "$T/showv.out")"
  done
}

say "== ollama serve on $OLLAMA_HOST (store: mixed)"
start_server "$MIX_STORE"
check_ollama_reads mixed "$MIX_STORE" "$OL_MODEL" "$TB_MODEL"
stop_server
say "== ollama serve on $OLLAMA_HOST (store: ours only)"
start_server "$TB_STORE"
check_ollama_reads ours "$TB_STORE" "$TB_MODEL"
stop_server

if [ $fail -eq 0 ]; then say "PASS: ollama interop"; else say "FAILED: ollama interop"; fi
exit $fail
