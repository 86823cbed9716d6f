#!/usr/bin/env bash
# Tests the Rust bindings against an already-built Meson build of this repository.
#
#   TBLOB_BUILD_DIR=/abs/builddir bindings/rust/test.sh
#
# Installs what it needs (clippy; libclang for systest's bindgen), then runs
#   cargo test --workspace            (all tests, doctests included; feature tensorblob/half)
#   cargo clippy --workspace --all-targets -- -D warnings
#   cargo doc --workspace --no-deps   (warnings denied)
#   outside_crate.sh                  (README.md's dependency lines and example in a new crate
#                                      outside the checkout)
# and prints as its last line "N passed, N failed": N passed is the sum of cargo test's
# counts; failed adds cargo test's failures, 1 for a test build that fails, and 1 each for
# clippy and doc failing. Exits non-zero when anything failed.
# TBLOB_RUST_BUNDLED=1 also tests the `bundled` feature (about 30 s more on two cores).
set -u

here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${TBLOB_BUILD_DIR:-}" ] || [ ! -d "$TBLOB_BUILD_DIR/meson-uninstalled" ]; then
  echo "TBLOB_BUILD_DIR must name a built Meson build directory (with meson-uninstalled/)" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
case "$TBLOB_BUILD_DIR" in
  /*) ;;
  *) echo "TBLOB_BUILD_DIR must be absolute" >&2; echo "0 passed, 1 failed"; exit 1 ;;
esac

# Toolchain pieces.
export PATH="$PATH:${CARGO_HOME:-$HOME/.cargo}/bin"
if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo not found (install a Rust toolchain with rustup)" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
# shellcheck source=scripts/lib/setup.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/setup.sh"
if ! cargo clippy --version >/dev/null 2>&1; then
  setup_retry "rustup component add clippy" rustup component add clippy >&2
fi
have_libclang() {
  [ -n "${LIBCLANG_PATH:-}" ] && return 0
  ldconfig -p 2>/dev/null | grep -q 'libclang[-.0-9]*\.so' && return 0
  ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1
}
if ! have_libclang; then
  # systest runs bindgen, which loads libclang at build time; nothing else needs it.
  setup_apt libclang-dev || setup_say "could not install libclang-dev"
fi

export PKG_CONFIG_PATH="$TBLOB_BUILD_DIR/meson-uninstalled${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export LD_LIBRARY_PATH="$TBLOB_BUILD_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export DYLD_LIBRARY_PATH="$TBLOB_BUILD_DIR${DYLD_LIBRARY_PATH:+:$DYLD_LIBRARY_PATH}"
export CARGO_TERM_COLOR=never
cd "$here" || exit 1

passed=0
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# The crates come from crates.io: fetched first, with retries, so a network hiccup is told
# apart from a failing test.
setup_retry "cargo fetch" cargo fetch >&2 || echo "rust binding: cargo fetch failed" >&2
# --no-fail-fast: one failing test binary must not hide the counts of the others.
cargo test --workspace --no-fail-fast --features tensorblob/half 2>&1 | tee "$log"
test_rc=${PIPESTATUS[0]}
# "test result: ok. 10 passed; 0 failed; ..." once per test binary and doctest run.
read -r p f < <(awk '/^test result:/ {
    for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i }
  } END { print p + 0, f + 0 }' "$log")
passed=$((passed + p))
failed=$((failed + f))
if [ "$test_rc" != 0 ] && [ "$f" = 0 ]; then
  echo "cargo test failed without a failing test (build error?)" >&2
  failed=$((failed + 1))
fi

# Opt-in (TBLOB_RUST_BUNDLED=1): the `bundled` feature builds the library from this checkout
# with Meson into its own target dir and links it statically, with no pkg-config help.
if [ "${TBLOB_RUST_BUNDLED:-0}" = 1 ]; then
  env -u PKG_CONFIG_PATH -u LD_LIBRARY_PATH -u DYLD_LIBRARY_PATH \
    cargo test -p tensorblob --no-fail-fast --features bundled,half --target-dir target/bundled \
    2>&1 | tee "$log"
  bundled_rc=${PIPESTATUS[0]}
  read -r p f < <(awk '/^test result:/ {
      for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i }
    } END { print p + 0, f + 0 }' "$log")
  passed=$((passed + p))
  failed=$((failed + f))
  if [ "$bundled_rc" != 0 ] && [ "$f" = 0 ]; then
    echo "bundled build or test failed" >&2
    failed=$((failed + 1))
  fi
fi

# The README's dependency lines and example, pasted into a new crate outside the checkout.
outside=$(TBLOB_BUILD_DIR="$TBLOB_BUILD_DIR" ./outside_crate.sh)
outside_rc=$?
printf '%s\n' "$outside"
read -r p f < <(printf '%s\n' "$outside" | tail -n 1 | awk '{ print $1 + 0, $3 + 0 }')
passed=$((passed + p))
failed=$((failed + f))
if [ "$outside_rc" != 0 ] && [ "$f" = 0 ]; then
  failed=$((failed + 1))
fi

if ! cargo clippy --workspace --all-targets --features tensorblob/half -- -D warnings; then
  echo "clippy failed" >&2
  failed=$((failed + 1))
fi

if ! RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --features tensorblob/half; then
  echo "cargo doc failed" >&2
  failed=$((failed + 1))
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
