#!/usr/bin/env bash
# CI smoke run: build the clang ASan+UBSan libFuzzer configuration, replay every seed and
# regression file, then fuzz each harness for SECONDS (default 30). Any finding (crash,
# sanitizer report, leak, timeout, out-of-memory, malloc above the limit) fails the run.
#
#   fuzz/ci-smoke.sh [SECONDS]
#
# Environment: BUILD_DIR (default <repo>/build-fuzz), JOBS (ninja -j, default 1),
# FUZZ_SEED (libFuzzer -seed, default 1), TARGETS (default: every harness the build has).
# Needs clang and libclang-rt (libFuzzer, sanitizer runtimes); fuzz/README.md has details.
set -euo pipefail

secs=${1:-${FUZZ_SECONDS:-30}}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/.." && pwd)
build=${BUILD_DIR:-$src/build-fuzz}
jobs=${JOBS:-1}
seed=${FUZZ_SEED:-1}
targets=${TARGETS:-}

# shellcheck source=fuzz/flags.sh
. "$here/flags.sh"

if [ ! -f "$build/build.ninja" ]; then
  fuzz_configure "$src" "$build"
fi
if [ -z "$targets" ]; then
  # Every harness fuzz/meson.build builds in this configuration (the fuzz config builds
  # only the library and the harnesses).
  ninja -C "$build" -j"$jobs"
  targets=$(cd "$build/fuzz" && for f in fuzz_*; do if [ -f "$f" ] && [ -x "$f" ]; then echo "$f"; fi; done)
else
  ninja -C "$build" -j"$jobs" $(for t in $targets; do printf 'fuzz/%s ' "$t"; done)
fi

fail=0
for t in $targets; do
  exe="$build/fuzz/$t"
  work="$build/fuzz-smoke/$t"
  rm -rf "$work"
  mkdir -p "$work/corpus" "$work/artifacts"
  mkdir -p "$here/regressions/$t"

  echo "== $t: replaying corpora/$t and regressions/$t"
  if ! "$exe" -runs=0 "$here/corpora/$t" "$here/regressions/$t" >"$work/replay.log" 2>&1; then
    echo "FAIL: $t replay (log: $work/replay.log)"
    tail -n 30 "$work/replay.log"
    fail=1
    continue
  fi

  echo "== $t: fuzzing for ${secs}s"
  # New inputs go to the scratch corpus (first directory); the committed seeds are read only.
  if ! "$exe" "${FUZZ_FLAGS[@]}" "$(fuzz_dict_for "$t")" -max_total_time="$secs" -seed="$seed" \
        -artifact_prefix="$work/artifacts/" \
        "$work/corpus" "$here/corpora/$t" "$here/regressions/$t" >"$work/fuzz.log" 2>&1; then
    echo "FAIL: $t found something (log: $work/fuzz.log)"
    tail -n 40 "$work/fuzz.log"
    fail=1
  fi
  if compgen -G "$work/artifacts/*" >/dev/null; then
    echo "FAIL: $t left artifacts:"
    ls -l "$work/artifacts/"
    fail=1
  fi
  grep -E '^(stat::|#[0-9]+[[:space:]]+DONE)' "$work/fuzz.log" | tail -n 8 || true
done

if [ "$fail" -ne 0 ]; then
  echo "fuzz smoke: FAILED"
  exit 1
fi
echo "fuzz smoke: all harnesses clean"
