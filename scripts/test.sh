#!/usr/bin/env bash
# Quick start 2: set up and run every test. Ends with the line "N passed, N failed".
#   build-test   the default configuration, warnings as errors: every suite
#   build-core   every optional feature disabled: the core must build and pass alone
#   build-nosimd the x86 and NEON kernel sets compiled out (scalar dequantization only)
#   build-aarch64 cross build for arm64 with NEON; the dequant tests run under qemu-aarch64
#   fuzz smoke   every libFuzzer harness for FUZZ_SECONDS under ASan+UBSan (clang)
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh || { echo "dependency installation failed"; echo "0 passed, 1 failed"; exit 1; }

rc=0
logs=()
run_config() {  # name, meson options...
  local dir=$1; shift
  rm -rf "$dir"
  if ! meson setup "$dir" -Dwerror_ci=true "$@" >"$dir.setup.log" 2>&1; then
    cat "$dir.setup.log"; echo "setup of $dir failed"; rc=1; return
  fi
  if ! ninja -C "$dir" >"$dir.build.log" 2>&1; then
    tail -50 "$dir.build.log"; echo "build of $dir failed"; rc=1; return
  fi
  meson test -C "$dir" --print-errorlogs --num-processes 2 ${TBLOB_TEST_ARGS:-} || rc=1
  logs+=("$dir/meson-logs/testlog.json")
}

run_config build-test
run_config build-core -Dollama=disabled -Duqff=disabled -Dslm1=disabled -Dgguf=disabled -Dcli=disabled \
  -Dbenchmarks=disabled

run_config build-nosimd -Dsimd_x86=disabled -Dsimd_neon=disabled -Dbenchmarks=disabled

if [ "${TBLOB_SKIP_CROSS:-0}" != 1 ]; then
  rm -rf build-aarch64
  bash scripts/cross-test.sh || rc=1
  logs+=("build-aarch64/meson-logs/testlog.json")
fi

if [ -x fuzz/ci-smoke.sh ] && [ "${TBLOB_SKIP_FUZZ:-0}" != 1 ]; then
  FUZZ_SECONDS=${FUZZ_SECONDS:-30} bash fuzz/ci-smoke.sh || rc=1
fi

passed=0; failed=0
for log in "${logs[@]}"; do
  [ -f "$log" ] || { failed=$((failed + 1)); continue; }
  p=$(jq -s '[.[] | select(.result == "OK" or .result == "EXPECTEDFAIL")] | length' "$log")
  f=$(jq -s '[.[] | select(.result == "FAIL" or .result == "TIMEOUT" or .result == "ERROR" or .result == "UNEXPECTEDPASS")] | length' "$log")
  passed=$((passed + p)); failed=$((failed + f))
done
[ "$rc" -eq 0 ] || [ "$failed" -gt 0 ] || failed=1
echo "${passed} passed, ${failed} failed"
exit $rc
