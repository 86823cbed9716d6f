#!/usr/bin/env bash
# Runs README.md's "Using it from your own module" blocks as a user would paste them: a fresh
# module in a temporary directory outside the checkout, no PKG_CONFIG_PATH, LD_LIBRARY_PATH or
# GOWORK inherited, no module proxy (GOPROXY=off: nothing may need a download), once with the
# `replace` directive and once with the workspace instead. The program's output must equal the
# README's. One line per way, "ok: WAY" or "FAIL: WAY", then "N passed, N failed".
#   TBLOB_BUILD_DIR=/abs/builddir bindings/go/outside_module.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
checkout=$(cd "$here/../.." && pwd)
readme="$here/README.md"
: "${TBLOB_BUILD_DIR:?TBLOB_BUILD_DIR must name a built Meson build directory}"

block() {  # the fenced block after the line <!-- test.sh: NAME -->
  awk -v m="<!-- test.sh: $1 -->" '$0 == m { f = 1; next } f == 1 && /^```/ { f = 2; next }
    f == 2 && /^```/ { exit } f == 2 { print }' "$readme"
}

for part in module-setup module-workspace module-main module-build module-output; do
  if [ -z "$(block "$part")" ]; then
    echo "FAIL: README.md has no block marked <!-- test.sh: $part -->"
    echo "0 passed, 1 failed"
    exit 1
  fi
done

passed=0
failed=0
for way in replace workspace; do
  work=$(mktemp -d "${TMPDIR:-/tmp}/tblob-go-outside.XXXXXX")
  setup=$(block module-setup | grep -v -e '^TB=' -e '^BUILD=')
  if [ "$way" = workspace ]; then
    # The README's alternative to the `go mod edit` command (and its continuation lines).
    setup="$(printf '%s\n' "$setup" | sed '/^go mod edit/,/[^\\]$/d')
$(block module-workspace)"
  fi
  out=$(cd "$work" && env -u PKG_CONFIG_PATH -u LD_LIBRARY_PATH -u GOWORK -u GOFLAGS GOPROXY=off \
    TB="$checkout" BUILD="$TBLOB_BUILD_DIR" MAIN="$(block module-main)" SETUP="$setup" BUILDCMDS="$(block module-build)" \
    bash -c 'set -e; eval "$SETUP"; printf "%s\n" "$MAIN" > main.go; eval "$BUILDCMDS"' 2>"$work.err")
  rc=$?
  want=$(block module-output)
  if [ "$rc" = 0 ] && [ "$out" = "$want" ]; then
    echo "ok: $way (a module in $work)"
    passed=$((passed + 1))
  else
    echo "FAIL: $way: exit $rc, output:"
    cat "$work.err" - <<<"$out" | sed 's/^/  /'
    echo "  wanted:"
    printf '%s\n' "$want" | sed 's/^/  /'
    failed=$((failed + 1))
  fi
  rm -rf "$work" "$work.err"
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
