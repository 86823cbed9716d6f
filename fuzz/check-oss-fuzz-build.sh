#!/usr/bin/env bash
# CI check of fuzz/oss-fuzz-build.sh: runs it as OSS-Fuzz / ClusterFuzzLite would for an
# ASan+UBSan libFuzzer build, but with the local clang and libFuzzer, into a temporary $OUT;
# then checks that every harness has its seed corpus, dictionary and options, and replays
# each harness over its seed corpus (-runs=0: every input once, no mutation) with them.
#
#   fuzz/check-oss-fuzz-build.sh          ends with "oss-fuzz build: N harnesses OK" or FAIL
#
# Environment: KEEP=1 keeps the temporary directory (printed).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/oss-fuzz-check-XXXXXX")
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$tmp"' EXIT

# The flags OSS-Fuzz uses for an address+undefined libFuzzer build (minus -stdlib=libc++:
# the local toolchain links libstdc++).
export CC=clang CXX=clang++
san="-fsanitize=address -fsanitize-address-use-after-scope -fsanitize=array-bounds,bool,builtin,enum,float-divide-by-zero,function,integer-divide-by-zero,null,object-size,return,returns-nonnull-attribute,shift,signed-integer-overflow,unsigned-integer-overflow,unreachable,vla-bound,vptr -fno-sanitize-recover=array-bounds,bool,builtin,enum,float-divide-by-zero,function,integer-divide-by-zero,null,object-size,return,returns-nonnull-attribute,shift,signed-integer-overflow,unreachable,vla-bound,vptr"
export CFLAGS="-O1 -fno-omit-frame-pointer -gline-tables-only $san -fsanitize=fuzzer-no-link"
export CXXFLAGS="$CFLAGS"
export LIB_FUZZING_ENGINE="-fsanitize=fuzzer"
export OUT="$tmp/out" WORK="$tmp/work"
mkdir -p "$OUT" "$WORK"

echo "== oss-fuzz build into $OUT"
if ! bash "$here/oss-fuzz-build.sh" >"$tmp/build.log" 2>&1; then
  tail -50 "$tmp/build.log"
  echo "oss-fuzz build: FAIL (build)"
  exit 1
fi

# OSS-Fuzz's own sanitizer settings for a replay (leaks are findings).
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:silence_unsigned_overflow=1
fail=0
count=0
for cpp in "$here"/fuzz_*.cpp; do
  name=$(basename "$cpp" .cpp)
  count=$((count + 1))
  for f in "$name" "${name}_seed_corpus.zip" "$name.dict" "$name.options"; do
    [ -s "$OUT/$f" ] || { echo "FAIL: $name: \$OUT/$f missing or empty"; fail=1; }
  done
  [ -x "$OUT/$name" ] && [ -f "$OUT/${name}_seed_corpus.zip" ] || continue
  corpus="$WORK/replay-$name"
  rm -rf "$corpus"
  mkdir -p "$corpus"
  (cd "$corpus" && unzip -q "$OUT/${name}_seed_corpus.zip")
  # The .options file as the infrastructure applies it: each "key = value" becomes -key=value.
  opts=()
  while IFS= read -r line; do
    case $line in *=*) k=${line%%=*}; v=${line#*=}; opts+=("-${k// /}=${v// /}") ;; esac
  done <"$OUT/$name.options"
  n=$(find "$corpus" -type f | wc -l)
  if "$OUT/$name" -runs=0 "-dict=$OUT/$name.dict" "${opts[@]}" "$corpus" >"$tmp/$name.log" 2>&1; then
    echo "ok: $name replays $n seeds"
  else
    echo "FAIL: $name replay (log below)"
    tail -30 "$tmp/$name.log"
    fail=1
  fi
done
if [ "$fail" -ne 0 ]; then
  echo "oss-fuzz build: FAIL"
  exit 1
fi
echo "oss-fuzz build: $count harnesses OK"
