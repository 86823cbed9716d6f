#!/usr/bin/env bash
# Writes tests/data/ollama/real-gguf-store with a real `ollama create` (see its README).
# usage: make_real_gguf_store.sh OLLAMA_BIN OUT_STORE ORACLE_DIR
# The server listens on 127.0.0.1 only; HTTP(S)_PROXY point at a dead loopback port so no
# request leaves the machine.
set -eu
OLLAMA=$1 OUT=$2 ORACLE=$3
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/real-gguf-XXXXXX")
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
python3 "$HERE/gen_tiny_gguf.py" "$T/src" "$ORACLE"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export OLLAMA_HOST=127.0.0.1:$PORT OLLAMA_MODELS=$T/store HOME=$T/home
export HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9
export NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost OLLAMA_NOPRUNE=1 OLLAMA_NO_CLOUD=1
mkdir -p "$HOME" "$OLLAMA_MODELS"
"$OLLAMA" serve >"$T/serve.log" 2>&1 &
PID=$!
for _ in $(seq 1 120); do "$OLLAMA" list >/dev/null 2>&1 && break; sleep 0.5; done
(cd "$T/src" && "$OLLAMA" create tiny-gguf -f Modelfile)
"$OLLAMA" list
"$OLLAMA" show --modelfile tiny-gguf | sed -n 1,40p
"$OLLAMA" show --verbose tiny-gguf || true
rm -rf "$OUT"
mkdir -p "$OUT"
cp -a "$T/store/manifests" "$T/store/blobs" "$OUT/"
