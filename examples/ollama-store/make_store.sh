#!/bin/sh
# Rebuilds the bundled example Ollama store from examples/tiny-llama with tensorblob's own
# import (the `ollama create` flow). Deterministic: blobs are content-addressed and the
# manifest is written from them, so a rerun gives byte-identical files.
#
#   sh examples/ollama-store/make_store.sh [path/to/tensorblob]     (from the repo root)
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
TB=${1:-${TENSORBLOB:-$ROOT/build/tools/tensorblob/tensorblob}}
rm -rf "$HERE/store"
"$TB" import --store "$HERE/store" --name tiny-llama "$ROOT/examples/tiny-llama"
# A second tag of the same weights: every tensor blob is shared (de-duplication).
"$TB" import --store "$HERE/store" --name tiny-llama:v1 "$ROOT/examples/tiny-llama"
"$TB" verify --store "$HERE/store"
