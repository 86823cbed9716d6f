#!/usr/bin/env bash
# Runs the Python binding's tests against an already-built Meson build directory.
#   TBLOB_BUILD_DIR=/abs/path/to/build bash bindings/python/test.sh [pytest args...]
# Installs pytest and hypothesis for the current python3 when missing (numpy, ml_dtypes and
# safetensors come from scripts/install-deps.sh), points TENSORBLOB_LIBRARY at the build's
# shared library and imports the package from the source tree. Last line: "N passed, N failed";
# exit status non-zero when anything failed.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
py="${PYTHON:-python3}"

summary_fail() { echo "python binding: $*" >&2; echo "0 passed, 1 failed"; exit 1; }

[ -n "${TBLOB_BUILD_DIR:-}" ] || summary_fail "set TBLOB_BUILD_DIR to a built Meson build directory"
case "$TBLOB_BUILD_DIR" in /*) ;; *) summary_fail "TBLOB_BUILD_DIR must be absolute" ;; esac
lib=""
for n in libtensorblob.so libtensorblob.dylib tensorblob.dll; do
  [ -f "$TBLOB_BUILD_DIR/$n" ] && { lib="$TBLOB_BUILD_DIR/$n"; break; }
done
[ -n "$lib" ] || summary_fail "no shared library in $TBLOB_BUILD_DIR (default_library=shared or both)"

missing=()
for m in pytest hypothesis numpy ml_dtypes safetensors; do
  "$py" -c "import $m" 2>/dev/null || missing+=("$m")
done
if [ ${#missing[@]} -gt 0 ]; then
  pkgs=()
  for m in "${missing[@]}"; do
    [ "$m" = ml_dtypes ] && pkgs+=(ml_dtypes) || pkgs+=("$m")
  done
  # shellcheck source=scripts/lib/setup.sh
  . "$here/../../scripts/lib/setup.sh"
  setup_pip "$py" "${pkgs[@]}" >&2 || summary_fail "cannot install ${pkgs[*]}"
fi

report="$(mktemp /tmp/tblob-pytest-XXXXXX.xml)"
trap 'rm -f "$report"' EXIT
export TENSORBLOB_LIBRARY="$lib"
(cd "$here" && "$py" -m pytest -q -p no:cacheprovider --junitxml="$report" tests "$@")
rc=$?

counts="$("$py" - "$report" <<'PY'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception:
    print("0 1"); sys.exit()
suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
t = f = s = 0
for x in suites:
    t += int(x.get("tests", 0)); s += int(x.get("skipped", 0))
    f += int(x.get("failures", 0)) + int(x.get("errors", 0))
print(t - f - s, f)
PY
)"
passed="${counts% *}"
failed="${counts#* }"
# pytest failing without a failed test (collection or usage error) still counts as a failure.
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
