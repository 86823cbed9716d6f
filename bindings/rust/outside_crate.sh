#!/usr/bin/env bash
# Runs README.md's "Using it from your crate" and "Example" blocks as a user would paste them:
# `cargo new` in a temporary directory outside the checkout, the README's dependency line,
# the example as src/main.rs, `cargo run -- <checkout>`, which must end by printing "ok".
# /path/to/tensorblob/build becomes $TBLOB_BUILD_DIR and /path/to/tensorblob the checkout.
# Ways: path (the `cargo add --path` commands), git (the git line, with a file:// URL of
# this checkout's repository and rev = its HEAD commit: what is committed), and with TBLOB_RUST_BUNDLED=1 bundled
# (the `features = ["bundled"]` line, with no PKG_CONFIG_PATH or LD_LIBRARY_PATH).
# One line per way, "ok: WAY" or "FAIL: WAY", then "N passed, N failed".
#   TBLOB_BUILD_DIR=/abs/builddir bindings/rust/outside_crate.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
checkout=$(cd "$here/../.." && pwd)
readme="$here/README.md"
: "${TBLOB_BUILD_DIR:?TBLOB_BUILD_DIR must name a built Meson build directory}"

block() {  # the fenced block after the line <!-- test.sh: NAME -->, paths filled in
  awk -v m="<!-- test.sh: $1 -->" '$0 == m { f = 1; next } f == 1 && /^```/ { f = 2; next }
    f == 2 && /^```/ { exit } f == 2 { print }' "$readme" |
    sed -e "s|/path/to/tensorblob/build|$TBLOB_BUILD_DIR|g" -e "s|/path/to/tensorblob|$checkout|g"
}
dependency() {  # the dependency line of the README's toml block whose text matches $1
  block cargo-dependencies | grep '^tensorblob = ' | grep -e "$1" | head -n 1
}

for part in cargo-new cargo-dependencies example; do
  if [ -z "$(block "$part")" ]; then
    echo "FAIL: README.md has no block marked <!-- test.sh: $part -->"
    echo "0 passed, 1 failed"
    exit 1
  fi
done

ways="path git"
[ "${TBLOB_RUST_BUNDLED:-0}" = 1 ] && ways="$ways bundled"
passed=0
failed=0
for way in $ways; do
  work=$(mktemp -d "${TMPDIR:-/tmp}/tblob-rust-outside.XXXXXX")
  case "$way" in
    path) setup=$(block cargo-new) ;;
    git)
      # The README's git line with this checkout's repository as the URL.
      repo=$(git -C "$checkout" rev-parse --path-format=absolute --git-common-dir)
      line=$(dependency 'git = ' |
        sed "s|git = \"[^\"]*\"|git = \"file://$repo\", rev = \"$(git -C "$checkout" rev-parse HEAD)\"|")
      setup="cargo new myapp && cd myapp
printf '%s\\n' '$line' >> Cargo.toml
$(block cargo-new | grep '^export ')" ;;
    bundled)
      line=$(dependency 'bundled')
      setup="cargo new myapp && cd myapp
printf '%s\\n' '$line' >> Cargo.toml" ;;
  esac
  # The user's own environment: nothing inherited that points at the build.
  out=$(cd "$work" && env -u PKG_CONFIG_PATH -u LD_LIBRARY_PATH -u CARGO_TARGET_DIR CARGO_TERM_COLOR=never \
    SETUP="$setup" MAIN="$(block example)" CHECKOUT="$checkout" \
    bash -c 'set -e; eval "$SETUP"; printf "%s\n" "$MAIN" > src/main.rs; cargo run -q -- "$CHECKOUT"' 2>"$work.err")
  rc=$?
  if [ "$rc" = 0 ] && [ "$(printf '%s\n' "$out" | tail -n 1)" = ok ]; then
    echo "ok: $way (a crate in $work)"
    passed=$((passed + 1))
  else
    echo "FAIL: $way: exit $rc"
    tail -n 30 "$work.err" | sed 's/^/  /'
    printf '%s\n' "$out" | tail -n 5 | sed 's/^/  /'
    failed=$((failed + 1))
  fi
  rm -rf "$work" "$work.err"
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
