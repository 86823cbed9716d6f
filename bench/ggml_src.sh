# Sourced by bench/ggml_peer.sh and tests/gguf/gen_ggml_real_fixtures.sh: real ggml's C sources
# from a registry package, the llama-cpp-python sdist on PyPI (it vendors llama.cpp's ggml),
# fetched with pip into a work directory outside the repository ($TBLOB_PEER_DIR, default
# /tmp/tblob-ggml-peer) and never committed; the newest release unless
# TBLOB_PEER_VERSION names one. Sets WORK (and cds there), VER, G (ggml's directory) and GQ
# (ggml-quants.c compiled).
_tblob_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=${TBLOB_PEER_DIR:-/tmp/tblob-ggml-peer}
mkdir -p "$WORK"
cd "$WORK"
_pin=${TBLOB_PEER_VERSION:+==$TBLOB_PEER_VERSION}
if ! ls llama_cpp_python-${TBLOB_PEER_VERSION:-}*.tar.gz >/dev/null 2>&1; then
  # Metadata preparation needs the build backend; no build isolation, no dependencies.
  # shellcheck source=scripts/lib/setup.sh
  . "$_tblob_root/scripts/lib/setup.sh"
  setup_pip python3 scikit-build-core >/dev/null
  setup_retry "pip download llama-cpp-python$_pin" python3 -m pip download -q --no-build-isolation \
    --no-binary :all: --no-deps "llama-cpp-python$_pin" -d .
fi
SDIST=$(ls llama_cpp_python-${TBLOB_PEER_VERSION:-}*.tar.gz | sort -V | tail -1)
VER=${SDIST#llama_cpp_python-}
VER=${VER%.tar.gz}
G=llama_cpp_python-$VER/vendor/llama.cpp/ggml
# ggml-quants.c includes ggml-cpu/ggml-cpu-impl.h (only for its SIMD helper macros).
[ -f "$G/src/ggml-cpu/ggml-cpu-impl.h" ] || tar xzf "$SDIST" "$G/include" "$G/src/ggml-quants.c" "$G/src/ggml-quants.h" \
  "$G/src/ggml-common.h" "$G/src/ggml-impl.h" "$G/src/ggml-cpu/ggml-cpu-impl.h"
# ggml-quants.c as ggml builds it by default for the host (-O3 -march=native, GGML_NATIVE=ON).
GQ=ggml-quants-$VER.o
[ -f "$GQ" ] || gcc -O3 -march=native -std=c11 -I"$G/include" -I"$G/src" \
  -c "$G/src/ggml-quants.c" -o "$GQ"
