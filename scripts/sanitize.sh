#!/usr/bin/env bash
# The test suite under the sanitizers and valgrind. Three parts:
#   asan      clang ASan+UBSan build of everything (leaks detected, first report fatal, UBSan
#             not recoverable); `meson test` runs the whole suite there except 'install'
#             (packaging: plain consumer programs cannot link an instrumented library)
#   memcheck  a plain build of the C API test, run under valgrind memcheck (errors and
#             definite/indirect leaks fail it)
#   tsan      clang TSan build of the library and the threads tests (tests/threads: threads,
#             parallel_dequant), run there with the other tests that start threads (edge_cases, ollama)
#
#   scripts/sanitize.sh [asan] [memcheck] [tsan]      (no argument: all three)
#
# Each part leaves a meson test log at a fixed path: ${SANITIZE_PREFIX}asan/meson-logs/
# testlog-asan.json, <memcheck build>/meson-logs/testlog-memcheck.json and ${SANITIZE_PREFIX}
# tsan/meson-logs/testlog-tsan.json. The script prints "testlog: <path>" for each, the time each
# part took, and ends with "N passed, N failed" over those logs (a part whose setup or build
# fails counts as one failure). Exit status 0 only when everything passed.
#
# Environment:
#   SANITIZE_PREFIX  build directories are ${SANITIZE_PREFIX}asan, ...memcheck, ...tsan
#                    (default: <repo>/build-); an existing directory is reused, not wiped
#   JOBS             ninja -j (default 2)
#   MEMCHECK_BUILD   an existing plain build directory to take test_c_api from instead of
#                    configuring ${SANITIZE_PREFIX}memcheck (e.g. build-test after test.sh)
#   TBLOB_TEST_ARGS  extra `meson test` arguments for the asan part
set -uo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)
prefix=${SANITIZE_PREFIX:-$src/build-}
jobs=${JOBS:-2}
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(asan memcheck tsan)

# shellcheck source=scripts/lib/setup.sh
. "$src/scripts/lib/setup.sh"

# Sanitizer behaviour for everything meson runs (it keeps variables that are already set).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1:print_summary=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1:print_summary=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
san_flags="-O1 -gline-tables-only -fno-omit-frame-pointer"

rc=0
logs=()
broken=0
report=()

setup() {  # dir, meson setup arguments... (skipped when dir is configured already)
  local dir=$1; shift
  [ -f "$dir/build.ninja" ] && return 0
  rm -rf "$dir"
  if ! "$@" >"$dir.setup.log" 2>&1; then
    cat "$dir.setup.log"; echo "sanitize: setup of $dir failed"; return 1
  fi
}

build() {  # dir, ninja targets...
  local dir=$1; shift
  if ! ninja -C "$dir" -j"$jobs" "$@" >"$dir.build.log" 2>&1; then
    tail -50 "$dir.build.log"; echo "sanitize: build of $dir failed"; return 1
  fi
}

# meson test --logbase B writes B.json, or B-<wrapper>.json with --wrapper: the latter is
# renamed to B.json so the paths are fixed (older logs are removed before each run).
add_log() {  # dir, logbase
  local f want="$1/meson-logs/$2.json"
  f=$(ls -t "$1/meson-logs/$2"*.json 2>/dev/null | head -1)
  if [ -n "$f" ] && [ "$f" != "$want" ]; then mv -f "$f" "$want"; fi
  logs+=("$want")
}

part_asan() {
  local dir=${prefix}asan
  setup "$dir" env CC=clang CXX=clang++ meson setup "$dir" "$src" --buildtype=plain \
    -Db_sanitize=address,undefined -Db_lundef=false -Dbenchmarks=disabled \
    -Dc_args="$san_flags -fno-sanitize-recover=all" \
    -Dcpp_args="$san_flags -fno-sanitize-recover=all" || return 1
  build "$dir" || return 1
  rm -f "$dir"/meson-logs/testlog-asan*.json
  # Not the 'install' suite: it links consumer programs with the plain compiler against the
  # staged (here instrumented) library, which needs the sanitizer runtimes they do not link.
  meson test -C "$dir" --no-rebuild --print-errorlogs --num-processes "$jobs" --logbase testlog-asan \
    --no-suite install ${TBLOB_TEST_ARGS:-}
  local r=$?
  add_log "$dir" testlog-asan
  return $r
}

part_memcheck() {
  setup_apt valgrind || { echo "sanitize: cannot install valgrind"; return 1; }
  local dir=${MEMCHECK_BUILD:-${prefix}memcheck}
  if [ -z "${MEMCHECK_BUILD:-}" ]; then
    setup "$dir" meson setup "$dir" "$src" --buildtype=debugoptimized -Dtests=enabled \
      -Dcli=disabled -Dbenchmarks=disabled || return 1
  fi
  build "$dir" tests/test_c_api || return 1
  # Exit 99 on any memcheck error; definite and indirect leaks count as errors.
  rm -f "$dir"/meson-logs/testlog-memcheck*.json
  meson test -C "$dir" --no-rebuild --print-errorlogs --logbase testlog-memcheck \
    --wrapper "valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect --track-origins=yes --quiet" \
    c_api
  local r=$?
  add_log "$dir" testlog-memcheck
  return $r
}

part_tsan() {
  local dir=${prefix}tsan
  setup "$dir" env CC=clang CXX=clang++ meson setup "$dir" "$src" --buildtype=plain \
    -Db_sanitize=thread -Db_lundef=false -Dtests=enabled -Dcli=disabled -Dbenchmarks=disabled \
    -Dc_args="$san_flags" -Dcpp_args="$san_flags" || return 1
  # The threads tests (threads; parallel_dequant: tblob_tensors_dequantize's worker threads),
  # plus the other tests that start threads of their own: edge_cases (lookups on a shared
  # handle) and ollama (tblob_store_verify with worker threads).
  local targets=(tests/test_threads tests/test_edge_cases tests/test_parallel_dequant)
  local tests=(threads edge_cases parallel_dequant)
  local listed
  listed=$(meson test -C "$dir" --list 2>/dev/null)
  if grep -q "ollama / ollama$" <<<"$listed"; then
    targets+=(tests/ollama/test_ollama); tests+=(ollama)
  fi
  build "$dir" "${targets[@]}" || return 1
  # Without address randomisation: TSan's fixed shadow layout then never collides with a
  # mapping (newer kernels randomise more bits than clang 14's TSan expects).
  local wrap=()
  if command -v setarch >/dev/null && setarch "$(uname -m)" -R true 2>/dev/null; then
    wrap=(--wrapper "setarch $(uname -m) -R")
  fi
  rm -f "$dir"/meson-logs/testlog-tsan*.json
  meson test -C "$dir" --no-rebuild --print-errorlogs --logbase testlog-tsan "${wrap[@]}" "${tests[@]}"
  local r=$?
  add_log "$dir" testlog-tsan
  return $r
}

for p in "${parts[@]}"; do
  case $p in
    asan|memcheck|tsan) ;;
    *) echo "usage: scripts/sanitize.sh [asan] [memcheck] [tsan]"; exit 2 ;;
  esac
  start=$(date +%s)
  n_before=${#logs[@]}
  echo "== sanitize: $p"
  "part_$p" || rc=1
  if [ ${#logs[@]} -eq "$n_before" ]; then broken=$((broken + 1)); fi  # no log: setup/build failed
  report+=("$p: $(( $(date +%s) - start ))s")
done

passed=0; failed=$broken
for log in "${logs[@]}"; do
  echo "testlog: $log"
  [ -f "$log" ] || { failed=$((failed + 1)); continue; }
  read -r p f _ < <(python3 scripts/testlog.py count "$log")
  passed=$((passed + p)); failed=$((failed + f))
done
for r in "${report[@]}"; do echo "time: $r"; done
[ "$rc" -eq 0 ] || [ "$failed" -gt 0 ] || failed=1
echo "${passed} passed, ${failed} failed"
exit $rc
