#!/usr/bin/env bash
# The Go binding's checks against an already-built Meson build directory:
#   TBLOB_BUILD_DIR=/abs/builddir bindings/go/test.sh
# go vet (cgo and CGO_ENABLED=0), go test -race, go test under GOEXPERIMENT=cgocheck2, the
# CGO_ENABLED=0 tests, a bounded run
# of FuzzOpenBytes (TBLOB_GO_FUZZTIME, default 10s; 0 skips it), and README.md's blocks for
# using the package from another module, run outside the checkout (outside_module.sh). The last line is
# `N passed, N failed`, counting test functions, subtests and examples from `go test -json`
# (a failing vet counts as one failure). Exits non-zero when anything failed.
set -u
if [ -z "${TBLOB_BUILD_DIR:-}" ] || [ ! -d "$TBLOB_BUILD_DIR/meson-uninstalled" ]; then
  echo "TBLOB_BUILD_DIR must name a built Meson build directory (absolute path)" >&2
  echo "0 passed, 1 failed"
  exit 2
fi
cd "$(dirname "$0")" || exit 2
export PKG_CONFIG_PATH="$TBLOB_BUILD_DIR/meson-uninstalled${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export LD_LIBRARY_PATH="$TBLOB_BUILD_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fuzztime="${TBLOB_GO_FUZZTIME:-10s}"
json="$(mktemp)"
trap 'rm -f "$json"' EXIT
status=0
vet_failed=0

echo "== go vet (cgo, CGO_ENABLED=0)"
CGO_ENABLED=1 go vet ./... || { vet_failed=$((vet_failed + 1)); status=1; }
CGO_ENABLED=0 go vet ./... || { vet_failed=$((vet_failed + 1)); status=1; }

echo "== go test -race"
CGO_ENABLED=1 go test -race -count=1 -json ./... >>"$json" || status=1
echo "== go test, GOEXPERIMENT=cgocheck2 (every pointer C is given or stores is checked)"
CGO_ENABLED=1 GOEXPERIMENT=cgocheck2 go test -count=1 -json ./... >>"$json" || status=1
echo "== go test, CGO_ENABLED=0"
CGO_ENABLED=0 go test -count=1 -json ./... >>"$json" || status=1
if [ "$fuzztime" != "0" ]; then
  echo "== FuzzOpenBytes for $fuzztime"
  CGO_ENABLED=1 go test -count=1 -json -run '^$' -fuzz '^FuzzOpenBytes$' -fuzztime "$fuzztime" . >>"$json" || status=1
fi

echo "== README's own-module blocks, in a fresh module outside the checkout (outside_module.sh)"
outside_failed=0
outside="$(./outside_module.sh)" || status=1
printf '%s\n' "$outside" | sed '$d'
outside_last="$(printf '%s\n' "$outside" | tail -n 1)"
outside_passed="${outside_last%% passed*}"
outside_failed="${outside_last#*, }"
outside_failed="${outside_failed%% failed*}"
case "$outside_passed$outside_failed" in *[!0-9]*|'') outside_passed=0 outside_failed=1 status=1 ;; esac

summary="$(go run ./internal/testcount <"$json")" || status=1
printf '%s\n' "$summary" | sed '$d'
last="$(printf '%s\n' "$summary" | tail -n 1)"
passed="${last%% passed*}"
failed="${last#*, }"
failed="${failed%% failed*}"
case "$passed$failed" in *[!0-9]*|'') passed=0 failed=1 status=1 ;; esac
passed=$((passed + outside_passed))
failed=$((failed + vet_failed + outside_failed))
[ "$failed" -gt 0 ] && status=1
echo "$passed passed, $failed failed"
exit "$status"
