#!/usr/bin/env bash
# Builds every harness in fuzz/ the way OSS-Fuzz and ClusterFuzzLite expect (their build.sh
# calls this script). Inputs are the usual environment variables:
#   CC, CXX, CFLAGS, CXXFLAGS   compilers and flags (sanitizers, coverage) chosen by the infra
#   LIB_FUZZING_ENGINE          what to link a harness with (libFuzzer, AFL++, honggfuzz...)
#   OUT                         where the harnesses and their files go
#   WORK                        scratch space (default: a directory under $OUT's parent)
# For each harness fuzz/<name>.cpp it writes $OUT/<name>, $OUT/<name>_seed_corpus.zip
# (fuzz/corpora/<name>/ and fuzz/regressions/<name>/), $OUT/<name>.dict and $OUT/<name>.options
# (the libFuzzer settings of fuzz/flags.sh that state the project's own limits).
#
# The library is built by Meson with every part enabled (a missing dependency is an error,
# never a silently smaller build); the harnesses are linked here against its static archive.
# fuzz/check-oss-fuzz-build.sh runs this script with a local clang and libFuzzer.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/.." && pwd)
: "${CC:?}" "${CXX:?}" "${OUT:?}" "${LIB_FUZZING_ENGINE:?}"
CFLAGS=${CFLAGS:-}
CXXFLAGS=${CXXFLAGS:-}
# The library is built without RTTI (-fno-rtti), which clang refuses together with the vptr
# check that OSS-Fuzz's undefined-behaviour flags list; it has no polymorphic types to check.
case " $CXXFLAGS " in *vptr*) CXXFLAGS="$CXXFLAGS -fno-sanitize=vptr" ;; esac
work=${WORK:-$(dirname "$OUT")/work}
build="$work/tensorblob-build"
mkdir -p "$OUT" "$work"

# Meson takes CFLAGS/CXXFLAGS from the environment at setup. Static only: the harnesses link
# the archive, so coverage and sanitizers see the library code in the same binary.
rm -rf "$build"
CC="$CC" CXX="$CXX" CFLAGS="$CFLAGS" CXXFLAGS="$CXXFLAGS" \
  meson setup "$build" "$src" --buildtype=plain -Ddefault_library=static -Db_lundef=false \
  -Dollama=enabled -Duqff=enabled -Dslm1=enabled -Dgguf=enabled \
  -Dtests=disabled -Dcli=disabled -Dbenchmarks=disabled -Dfuzzing=false
ninja -C "$build" libtensorblob.a

# What the archive needs at link time (simdjson and libcrypto for the Ollama part).
link_libs="$(pkg-config --libs simdjson libcrypto) -lpthread"

# libFuzzer settings from fuzz/flags.sh that are the project's own findings criteria
# (max_len, malloc_limit_mb); the infrastructure sets its own timeouts and memory limits.
# shellcheck source=fuzz/flags.sh
FUZZ_HERE=$here
. "$here/flags.sh"
options=""
for f in "${FUZZ_FLAGS[@]}"; do
  k=${f#-}; k=${k%%=*}; v=${f#*=}
  case $k in max_len|malloc_limit_mb) options+="$k = $v"$'\n' ;; esac
done

built=0
for cpp in "$here"/fuzz_*.cpp; do
  name=$(basename "$cpp" .cpp)
  # shellcheck disable=SC2086  # flags are word lists
  $CXX $CXXFLAGS -std=c++17 -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -DTBLOB_EXPERIMENTAL_API \
    -I"$src/include" -I"$src/lib" -I"$build" -I"$build/include" \
    -c "$cpp" -o "$work/$name.o"
  # shellcheck disable=SC2086
  $CXX $CXXFLAGS "$work/$name.o" -o "$OUT/$name" $LIB_FUZZING_ENGINE "$build/libtensorblob.a" $link_libs

  # Seeds: corpora/<name>/ and regressions/<name>/ (prefixed: a flat zip must not repeat names).
  rm -rf "$work/seeds-$name" "$OUT/${name}_seed_corpus.zip"
  mkdir -p "$work/seeds-$name"
  if [ -d "$here/corpora/$name" ]; then
    find "$here/corpora/$name" -type f -exec cp {} "$work/seeds-$name/" \;
  fi
  if [ -d "$here/regressions/$name" ]; then
    for f in "$here/regressions/$name"/*; do
      [ -f "$f" ] && cp "$f" "$work/seeds-$name/regression-$(basename "$f")"
    done
  fi
  if [ -n "$(ls -A "$work/seeds-$name")" ]; then
    (cd "$work/seeds-$name" && zip -q -r "$OUT/${name}_seed_corpus.zip" .)
  fi
  dict=$(fuzz_dict_for "$name")
  cp "${dict#-dict=}" "$OUT/$name.dict"
  printf '[libfuzzer]\n%s' "$options" >"$OUT/$name.options"
  built=$((built + 1))
done
echo "oss-fuzz-build: $built harnesses in $OUT"
