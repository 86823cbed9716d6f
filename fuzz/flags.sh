# Shared settings of fuzz/run and fuzz/ci-smoke.sh (sourced, not executed).
#
# -max_len=65536: every seed is below 64 KiB; longer inputs only slow the search.
# -malloc_limit_mb=16: one allocation above 16 MiB for an input of at most 64 KiB (256x) is a
#   finding. The library may allocate a small multiple of the bytes that are actually there,
#   never what a length field claims: a header may say N = 100,000,000 (the format cap), and
#   any allocation sized from N before checking 8 + N against the buffer trips this. The
#   harnesses' own allocator hook is stricter (64 x input + 1 MiB, single and peak, see
#   fuzz_common.h) and names the culprit; this limit also covers allocations that bypass it.
# -rss_limit_mb=2048, -timeout=10: OSS-Fuzz's limits (reliability.md 5.1) with margin.
# -dict: per target, see fuzz_dict_for.
# shellcheck disable=SC2034
FUZZ_HERE=${FUZZ_HERE:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
FUZZ_FLAGS=(
  -max_len=65536
  -malloc_limit_mb=16
  -rss_limit_mb=2048
  -timeout=10
  -print_final_stats=1
)

# The dictionary for a target: dicts/<target>.dict if there is one, else the safetensors one.
fuzz_dict_for() {
  if [ -f "$FUZZ_HERE/dicts/$1.dict" ]; then
    echo "-dict=$FUZZ_HERE/dicts/$1.dict"
  else
    echo "-dict=$FUZZ_HERE/dicts/safetensors.dict"
  fi
}

# Sanitizer behaviour: stop at the first report, with a stack; leaks are findings.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:print_stacktrace=1}

# Configures a clang ASan+UBSan libFuzzer build of the source tree $1 in $2.
fuzz_configure() {
  local src=$1 build=$2
  CC=clang CXX=clang++ meson setup "$build" "$src" \
    -Dfuzzing=true --buildtype=debugoptimized \
    -Db_sanitize=address,undefined -Db_lundef=false \
    -Dc_args="-fsanitize=fuzzer-no-link -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
    -Dcpp_args="-fsanitize=fuzzer-no-link -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
    -Dtests=disabled -Dcli=disabled -Dbenchmarks=disabled
}
