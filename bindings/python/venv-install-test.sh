#!/usr/bin/env bash
# Fresh-venv install test: creates a virtual environment, runs README.md's
# `pip install -v -Ccompile-args=-jN ./bindings/python` (which builds the C library from this
# repository into the wheel), checks that it showed Ninja's progress and passed -jN on, and
# runs the Python example
# of bindings/python/README.md from the repository root with that venv's interpreter.
# Needs network access to PyPI (meson-python, meson, ninja, numpy, ml_dtypes).
# Last line: "1 passed, 0 failed" or "0 passed, 1 failed"; exit status non-zero on failure.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
py="${PYTHON:-python3}"
work="$(mktemp -d /tmp/tblob-venv-XXXXXX)"
trap 'rm -rf "$work"' EXIT

fail() { echo "venv-install-test: $*" >&2; echo "0 passed, 1 failed"; exit 1; }

"$py" -m venv "$work/venv" || fail "cannot create a venv with $py"
vpy="$work/venv/bin/python"
# TENSORBLOB_LIBRARY must not point the installed package elsewhere.
unset TENSORBLOB_LIBRARY
# shellcheck source=scripts/lib/setup.sh
. "$root/scripts/lib/setup.sh"
# The README's install command, as pasted (pip's -v shows the build, -Ccompile-args=-jN reaches
# Ninja), run by this venv's pip from the repository root.
install="$(awk '$0 == "<!-- venv-install-test.sh: install -->" { f = 1; next } f == 1 && /^```/ { f = 2; next }
  f == 2 && /^```/ { exit } f == 2 { print }' "$here/README.md")"
case "$install" in
  "pip install "*) ;;
  *) fail "README.md has no pip install command marked <!-- venv-install-test.sh: install -->" ;;
esac
jobs="$(printf '%s\n' "$install" | sed -n 's/.*-Ccompile-args=-j\([0-9][0-9]*\).*/\1/p')"
[ -n "$jobs" ] || fail "the README's install command sets no -Ccompile-args=-jN: $install"
# shellcheck disable=SC2086  # the command's words, as a shell would split them
(cd "$root" && setup_retry "$install" "$vpy" -m pip ${install#pip }) \
  > "$work/pip.log" 2>&1 || { tail -40 "$work/pip.log" >&2; fail "$install failed"; }
# Progress: Ninja's [N/M] line per file compiled, and the job count on its command line.
grep -Eq '^ *\[[0-9]+/[0-9]+\] Compiling ' "$work/pip.log" || { tail -40 "$work/pip.log" >&2; fail "$install showed no Ninja progress"; }
grep -Eq "^ *\+ .*ninja .*-j$jobs( |\$)" "$work/pip.log" ||
  { grep -E '^ *\+ ' "$work/pip.log" >&2; fail "-Ccompile-args=-j$jobs did not reach the build command"; }

"$vpy" - "$here/README.md" "$work/example.py" <<'PY' || fail "no Python example in README.md"
import re, sys
src = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r"## Example.*?```python\n(.*?)```", src, re.S)
if not m:
    sys.exit(1)
open(sys.argv[2], "w", encoding="utf-8").write(m.group(1))
PY

# Run outside the source tree's package directory so the installed package is what imports.
out="$(cd "$root" && "$vpy" -I "$work/example.py" 2>&1)" || { echo "$out" >&2; fail "the README example failed"; }
echo "$out"
where="$(cd "$work" && "$vpy" -I -c 'import tensorblob; print(tensorblob.library_path())')"
case "$where" in
  "$work/venv/"*) ;;
  *) fail "the package loaded its library from $where, not from the venv" ;;
esac
# The error the example provokes on purpose, on a line of its own.
printf '%s\n' "$out" | grep -qx "TBLOB_E_TRAILING_BYTES -32 10" || fail "unexpected example output"
echo "1 passed, 0 failed"
