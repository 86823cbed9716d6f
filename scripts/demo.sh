#!/usr/bin/env bash
# Quick start 1: set up, build, and run the CLI on the bundled examples.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
[ -d build ] || meson setup build >/dev/null
ninja -C build >/dev/null
./build/tools/tensorblob/tensorblob inspect examples/tiny-llama/model.safetensors
./build/tools/tensorblob/tensorblob inspect --json examples/sharded
./build/tools/tensorblob/tensorblob ls --store examples/ollama-store/store
./build/tools/tensorblob/tensorblob inspect --store examples/ollama-store/store tiny-llama:latest
./build/tools/tensorblob/tensorblob verify --store examples/ollama-store/store
