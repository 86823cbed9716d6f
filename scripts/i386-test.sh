#!/usr/bin/env bash
# 32-bit x86 build (size_t of 32 bits) + the whole test suite, run natively by the amd64 kernel.
#
#   scripts/i386-test.sh             # installs what is missing, builds, runs, prints a summary
#
# Installs (apt, idempotent; scripts/install-deps.sh does the same): g++-i686-linux-gnu and,
# after `dpkg --add-architecture i386`, libgtest-dev:i386 and libstdc++6:i386. The cross compiler rather than gcc-multilib: Debian's multilib packages
# conflict with the aarch64 cross compiler scripts/cross-test.sh uses. Configures with
# cross/i686-linux-gnu.ini (no exe_wrapper: the binaries run directly), with every part on:
# Ollama, UQFF, SLM1, GGUF and the CLI. The Ollama part's libcrypto and simdjson are not
# installed (libssl3:i386 must be the very version of the host's libssl3, so installing it
# means changing the host's OpenSSL, and Debian's libsimdjson-dev cannot be installed for two
# architectures at once): scripts/foreign-sysroot.sh downloads the i386 .deb files with apt
# and unpacks them into BUILD_DIR.sysroot, which the build finds through -Dpkg_config_path
# and the tests through LD_LIBRARY_PATH. If that fails the stage fails and says so; Ollama is
# never dropped quietly (-Dollama=enabled).
# Every registered test runs, nothing excluded: tests/unit/test_large_files.cpp is the one
# that differs by word size (sparse files over 4 GiB are refused with TBLOB_E_UNSUPPORTED
# before any mapping here, and open on 64-bit builds); the install suite is not registered in
# a cross build.
# Ends with the line "N passed, N failed" and exits non-zero on any failure.
#
# Environment: BUILD_DIR (default <repo>/build-i386), JOBS (ninja -j, default 2),
# I386_MESON_ARGS (extra setup options).
set -uo pipefail
start=$(date +%s)
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$src/build-i386}
jobs=${JOBS:-2}

fail() {
  echo "i386-test: $*"
  echo "0 passed, 1 failed"
  exit 1
}

# ---- 1. toolchain and i386 libraries ----
# shellcheck source=scripts/lib/setup.sh
. "$src/scripts/lib/setup.sh"
setup_apt g++-i686-linux-gnu meson ninja-build pkg-config libgtest-dev:i386 libstdc++6:i386 ||
  fail "the i386 toolchain could not be installed (see above)"
echo "== toolchain ready ($(( $(date +%s) - start )) s)"

# The Ollama part's i386 libcrypto and simdjson, unpacked privately (see above).
sysroot=$build.sysroot
bash "$src/scripts/foreign-sysroot.sh" i386 "$sysroot" ||
  fail "the i386 libssl/simdjson packages could not be fetched into $sysroot; the Ollama part needs them"
export LD_LIBRARY_PATH=$sysroot/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "== i386 libcrypto/simdjson in $sysroot ($(( $(date +%s) - start )) s)"

# ---- 2. configure + build ----
# shellcheck disable=SC2206
opts=(-Dwerror_ci=true -Dollama=enabled -Dpkg_config_path="$sysroot/pkgconfig"
      -Dbenchmarks=disabled -Duqff=enabled -Dslm1=enabled -Dgguf=enabled -Dcli=enabled
      -Dtests=enabled ${I386_MESON_ARGS:-})
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" "$src" --cross-file "$src/cross/i686-linux-gnu.ini" "${opts[@]}" \
    >"$build.setup.log" 2>&1 || { cat "$build.setup.log"; fail "meson setup failed"; }
else
  meson configure "$build" "${opts[@]}" >"$build.setup.log" 2>&1 ||
    { cat "$build.setup.log"; fail "meson configure failed"; }
fi
nice ninja -C "$build" -j"$jobs" >"$build.build.log" 2>&1 ||
  { tail -40 "$build.build.log"; fail "build failed"; }
file -L "$build/libtensorblob.so" 2>/dev/null | grep -q "ELF 32-bit.*Intel 80386" ||
  fail "libtensorblob.so is not a 32-bit x86 library"
echo "== built ($(( $(date +%s) - start )) s)"

# ---- 3. every test ----
rc=0
meson test -C "$build" --print-errorlogs --num-processes "$jobs" || rc=1

log="$build/meson-logs/testlog.json"
read -r passed failed skipped < <(python3 "$src/scripts/testlog.py" count "$log")
# The word-size test must have run as the 32-bit case, not been skipped or built 64-bit.
if ! grep -q "LargeFiles.SafetensorsTensorBeyond4GiB" "$build/meson-logs/testlog.txt" 2>/dev/null ||
   [ "$("$build/tests/test_large_files" --gtest_filter='*Safetensors*' >/dev/null 2>&1; echo $?)" != 0 ]; then
  echo "i386-test: the large-file test did not pass as a 32-bit run"
  rc=1
  failed=$((failed + 1))
fi
# The Ollama suite must have run (all three of its tests), not been configured away.
missing_ollama=$(python3 "$src/scripts/testlog.py" missing "$log" ollama store_safety ollama_cli)
if [ -n "$missing_ollama" ]; then
  echo "i386-test: the Ollama tests did not pass: $missing_ollama"
  rc=1
  failed=$((failed + 1))
fi
[ "$rc" -eq 0 ] || [ "$failed" -gt 0 ] || failed=1
[ "$passed" -gt 0 ] || { rc=1; [ "$failed" -gt 0 ] || failed=1; }
echo "== i386-test: ${passed} passed, ${failed} failed, ${skipped} skipped in $(( $(date +%s) - start )) s"
echo "${passed} passed, ${failed} failed"
exit $rc
