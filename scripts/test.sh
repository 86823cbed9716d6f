#!/usr/bin/env bash
# Quick start 2: set up and run every test. Ends with the line "N passed, N failed".
#   build-test   the default configuration, warnings as errors: every suite
#   build-core   every optional feature disabled: the core must build and pass alone
#   build-nosimd the x86 and NEON kernel sets compiled out (scalar dequantization only)
#   build-aarch64 cross build for arm64 with NEON (every part but Ollama); the whole suite runs
#                under qemu-aarch64
#   build-i386   32-bit x86 (i686 cross compiler, size_t of 32 bits; every part but Ollama);
#                the whole suite runs natively (scripts/i386-test.sh; TBLOB_SKIP_I386=1 skips)
#   bindings     Rust (cargo test, clippy, doc), Go (vet, test -race, fuzz) and Python (pytest)
#                against build-test's library, each summing into the closing line
#   sanitizers   the suite under clang ASan+UBSan, the C API test under valgrind memcheck, the
#                threads tests under TSan (scripts/sanitize.sh)
#   fuzz smoke   every libFuzzer harness for FUZZ_SECONDS under ASan+UBSan (clang), and the
#                OSS-Fuzz build script checked with local clang (fuzz/check-oss-fuzz-build.sh)
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh || { echo "dependency installation failed"; echo "0 passed, 1 failed"; exit 1; }
export PATH="/usr/local/go/bin:$HOME/.cargo/bin:$HOME/go/bin:$PATH"

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

# Bindings, each against build-test's library; each script ends with "N passed, N failed".
extra_passed=0; extra_failed=0
run_binding() {  # name, script
  local name=$1 script=$2 last p f
  echo "== $name"
  TBLOB_BUILD_DIR="$PWD/build-test" bash "$script" >"build-test.$name.log" 2>&1 || rc=1
  tail -40 "build-test.$name.log"
  last=$(tail -1 "build-test.$name.log")
  p=${last%% passed*}; f=${last#*, }; f=${f%% failed*}
  case "$p$f" in *[!0-9]*|'') p=0; f=1; rc=1 ;; esac
  extra_passed=$((extra_passed + p)); extra_failed=$((extra_failed + f))
}
if [ "${TBLOB_SKIP_BINDINGS:-0}" != 1 ] && [ -f build-test/libtensorblob.so ]; then
  for b in rust go python; do
    [ -f "bindings/$b/test.sh" ] && run_binding "$b" "bindings/$b/test.sh"
  done
  # pip install ./bindings/python into a fresh venv, then the README's Python example there.
  run_binding python-venv bindings/python/venv-install-test.sh
fi
run_config build-core -Dollama=disabled -Duqff=disabled -Dslm1=disabled -Dgguf=disabled -Dcli=disabled \
  -Dbenchmarks=disabled

run_config build-nosimd -Dsimd_x86=disabled -Dsimd_neon=disabled -Dbenchmarks=disabled

if [ "${TBLOB_SKIP_SANITIZE:-0}" != 1 ]; then
  MEMCHECK_BUILD="$PWD/build-test" run_binding sanitize scripts/sanitize.sh
fi

if [ "${TBLOB_SKIP_CROSS:-0}" != 1 ]; then
  rm -rf build-aarch64
  bash scripts/cross-test.sh || rc=1
  logs+=("build-aarch64/meson-logs/testlog.json")
fi

if [ "${TBLOB_SKIP_I386:-0}" != 1 ]; then
  rm -rf build-i386
  bash scripts/i386-test.sh || rc=1
  logs+=("build-i386/meson-logs/testlog.json")
fi

if [ -x fuzz/ci-smoke.sh ] && [ "${TBLOB_SKIP_FUZZ:-0}" != 1 ]; then
  FUZZ_SECONDS=${FUZZ_SECONDS:-30} bash fuzz/ci-smoke.sh || rc=1
  bash fuzz/check-oss-fuzz-build.sh >build-test.oss-fuzz.log 2>&1 || { tail -30 build-test.oss-fuzz.log; rc=1; }
  tail -1 build-test.oss-fuzz.log
fi

passed=0; failed=0
for log in "${logs[@]}"; do
  [ -f "$log" ] || { failed=$((failed + 1)); continue; }
  read -r p f _ < <(python3 scripts/testlog.py count "$log")
  passed=$((passed + p)); failed=$((failed + f))
done
passed=$((passed + extra_passed)); failed=$((failed + extra_failed))
[ "$rc" -eq 0 ] || [ "$failed" -gt 0 ] || failed=1
echo "${passed} passed, ${failed} failed"
exit $rc
