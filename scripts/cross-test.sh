#!/usr/bin/env bash
# arm64 cross build + the whole test suite (NEON kernels included) under qemu-user.
#
#   scripts/cross-test.sh            # installs what is missing, builds, runs, prints a summary
#
# Installs (apt, idempotent): g++-aarch64-linux-gnu, qemu-user, and after
# `dpkg --add-architecture arm64` the arm64 packages libgtest-dev:arm64 and libstdc++6:arm64. Configures with NEON forced on (-Dsimd_neon=enabled), Ollama, UQFF,
# SLM1 and GGUF on, and one part off: -Dcli=disabled (the CLI-driven Python/shell tests would
# exec the arm64 CLI directly, which needs binfmt_misc; every test here runs through the cross
# file's exe_wrapper, qemu-aarch64, instead). The Ollama part's arm64 libcrypto and simdjson
# are not installed (libssl-dev:arm64 would change the host's OpenSSL, and libsimdjson-dev
# cannot be installed for two architectures at once): scripts/foreign-sysroot.sh downloads
# the .deb files with apt and unpacks them into BUILD_DIR.sysroot, found by the build through
# -Dpkg_config_path and by the tests through LD_LIBRARY_PATH (qemu-user passes it on). If
# that fails the stage fails and says so (-Dollama=enabled).
# Builds, then runs every test meson registers: the gtest and C suites, the fuzz corpus
# replays, the kernel tests (tests/dequant/test_ggml_kernels.cpp: gguf-py fixtures, the NEON
# GGML set against the scalar reference; the script checks the NEON set was the one tested),
# and the host-side checks that read sources or the built library (include graph, error
# catalogue, exported symbols through the host `nm`), which pass on an arm64 build too.
# Nothing is excluded by default: the tests take about 30 s under qemu; the build is most of
# the time (590 s cold on a loaded 2-core machine).
# Ends with the line "N passed, N failed" (meson tests) and exits non-zero on any failure.
#
# Environment: BUILD_DIR (default <repo>/build-aarch64), JOBS (ninja -j, default 2),
# CROSS_SUITES (meson test suites; default empty = every test), CROSS_EXCLUDE (test names to
# leave out when CROSS_SUITES is empty), CROSS_MESON_ARGS (extra setup options).
set -uo pipefail
start=$(date +%s)
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$src/build-aarch64}
jobs=${JOBS:-2}
# Empty CROSS_SUITES = every registered test except CROSS_EXCLUDE (test names).
suites=${CROSS_SUITES-}
exclude=${CROSS_EXCLUDE-}

fail() {
  echo "cross-test: $*"
  echo "0 passed, 1 failed"
  exit 1
}

# ---- 1. toolchain and arm64 libraries ----
# shellcheck source=scripts/lib/setup.sh
. "$src/scripts/lib/setup.sh"
setup_apt g++-aarch64-linux-gnu qemu-user meson ninja-build pkg-config libgtest-dev:arm64 \
  libstdc++6:arm64 || fail "the arm64 toolchain could not be installed (see above)"
command -v qemu-aarch64 >/dev/null || fail "qemu-aarch64 not found"
echo "== toolchain ready ($(( $(date +%s) - start )) s)"

# The Ollama part's arm64 libcrypto and simdjson, unpacked privately (see above).
sysroot=$build.sysroot
bash "$src/scripts/foreign-sysroot.sh" arm64 "$sysroot" ||
  fail "the arm64 libssl/simdjson packages could not be fetched into $sysroot; the Ollama part needs them"
export LD_LIBRARY_PATH=$sysroot/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "== arm64 libcrypto/simdjson in $sysroot ($(( $(date +%s) - start )) s)"

# ---- 2. configure + build ----
# shellcheck disable=SC2206
opts=(-Dsimd_neon=enabled -Dollama=enabled -Dpkg_config_path="$sysroot/pkgconfig" -Dcli=disabled
      -Dbenchmarks=disabled -Duqff=enabled -Dslm1=enabled -Dgguf=enabled -Dtests=enabled
      ${CROSS_MESON_ARGS:-})
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" "$src" --cross-file "$src/cross/aarch64-linux-gnu.ini" "${opts[@]}" \
    >"$build.setup.log" 2>&1 || { cat "$build.setup.log"; fail "meson setup failed"; }
else
  # An existing directory (configured with older defaults) gets the same options.
  meson configure "$build" "${opts[@]}" >"$build.setup.log" 2>&1 ||
    { cat "$build.setup.log"; fail "meson configure failed"; }
fi
nice ninja -C "$build" -j"$jobs" >"$build.build.log" 2>&1 ||
  { tail -40 "$build.build.log"; fail "build failed"; }
file "$build/libtensorblob.so" 2>/dev/null | grep -q aarch64 || echo "warning: library is not aarch64?"
echo "== built ($(( $(date +%s) - start )) s)"

# ---- 3. tests under qemu ----
suite_args=()
for s in $suites; do suite_args+=(--suite "$s"); done
test_args=()
if [ -z "$suites" ]; then
  # `meson test --list` prints "project:suite / name"; keep the names not excluded.
  while read -r name; do
    [[ " $exclude " == *" $name "* ]] || test_args+=("$name")
  done < <(meson test -C "$build" --list 2>/dev/null | sed -n 's|^[^ ]* / ||p')
  ((${#test_args[@]})) || fail "no tests listed"
fi
rc=0
meson test -C "$build" "${suite_args[@]}" "${test_args[@]}" --print-errorlogs --num-processes "$jobs" || rc=1

log="$build/meson-logs/testlog.json"
read -r passed failed skipped < <(python3 "$src/scripts/testlog.py" count "$log")
# The GGML kernel test prints the sets it compared; under qemu-aarch64 NEON must be one.
if { [ -z "$suites" ] || [[ " $suites " == *" dequant "* ]]; } && [[ " $exclude " != *" ggml_kernels "* ]] && ! grep -q "GGML kernel set: neon" "$build/meson-logs/testlog.txt" 2>/dev/null; then
  echo "cross-test: the GGML kernel test did not run the NEON GGML set"
  rc=1
  failed=$((failed + 1))
fi
# The Ollama suite must have run (its tests other than the CLI's), not been configured away.
if [ -z "$suites" ] || [[ " $suites " == *" ollama "* ]]; then
  # shellcheck disable=SC2086  # $exclude: test names, split on purpose
  missing_ollama=$(python3 "$src/scripts/testlog.py" missing "$log" ollama store_safety --skip $exclude)
  if [ -n "$missing_ollama" ]; then
    echo "cross-test: the Ollama tests did not pass: $missing_ollama"
    rc=1
    failed=$((failed + 1))
  fi
fi
[ "$rc" -eq 0 ] || [ "$failed" -gt 0 ] || failed=1
[ "$passed" -gt 0 ] || { rc=1; [ "$failed" -gt 0 ] || failed=1; }
echo "== cross-test: ${passed} passed, ${failed} failed, ${skipped} skipped under qemu-aarch64 in $(( $(date +%s) - start )) s"
echo "${passed} passed, ${failed} failed"
exit $rc
