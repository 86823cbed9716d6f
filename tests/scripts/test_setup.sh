#!/usr/bin/env bash
# Tests scripts/lib/setup.sh with stub package tools earlier on PATH: an `apt-get update` that
# exits 100 (a mirror mid-sync) must not stop an install that works; installs, pip and
# downloads are retried a bounded number of times; what could not be had is named. The last
# case runs the real first stage of scripts/test.sh (scripts/install-deps.sh) with the
# failing update in front of the real apt-get.
#   bash tests/scripts/test_setup.sh REPO_ROOT
set -u
root=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
work=$(mktemp -d /tmp/tblob-setup-test-XXXXXX)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
check() {  # name, condition command...
  local name=$1
  shift
  if "$@"; then passed=$((passed + 1)); echo "ok - $name"; else failed=$((failed + 1)); echo "FAIL - $name"; fi
}

stubs=$work/bin
mkdir -p "$stubs"
state=$work/state
# dpkg-query: a package is installed when $state/installed/<name> exists.
cat >"$stubs/dpkg-query" <<EOF
#!/usr/bin/env bash
p=\${!#}
[ -f "$state/installed/\${p//\//_}" ] && { echo -n "install ok installed"; exit 0; }
echo "dpkg-query: no packages found matching \$p" >&2; exit 1
EOF
# apt-get: records every call; update exits 100; install fails for the names listed in
# $state/broken and for the first $state/flaky calls, else marks the packages installed.
cat >"$stubs/apt-get" <<EOF
#!/usr/bin/env bash
echo "\$*" >>"$state/calls"
case "\$*" in
  *update*) echo "E: Failed to fetch .../binary-i386/Packages.xz  File has unexpected size (346968 != 369616). Mirror sync in progress?" >&2; exit 100 ;;
esac
n=\$(cat "$state/flaky" 2>/dev/null || echo 0)
if [ "\$n" -gt 0 ]; then echo \$((n - 1)) >"$state/flaky"; echo "E: Unable to fetch some archives" >&2; exit 100; fi
for p in "\$@"; do
  case "\$p" in -*) continue ;; install) continue ;; esac
  grep -qx "\$p" "$state/broken" 2>/dev/null && { echo "E: Unable to locate package \$p" >&2; exit 100; }
done
for p in "\$@"; do
  case "\$p" in -*|install) ;; *) touch "$state/installed/\${p//\//_}" ;; esac
done
EOF
cat >"$stubs/apt-cache" <<'EOF'
#!/usr/bin/env bash
echo "$2:"; echo "  Installed: (none)"; echo "  Candidate: (none)"
EOF
cat >"$stubs/sudo" <<'EOF'
#!/usr/bin/env bash
exec "$@"
EOF
chmod +x "$stubs"/*

reset_state() {
  rm -rf "$state"
  mkdir -p "$state/installed"
  : >"$state/calls"
}
count_calls() { grep -c -- "$1" "$state/calls"; }

run_setup() {  # runs "$@" in a shell that sourced the helper, stubs first on PATH
  PATH="$stubs:$PATH" TBLOB_SETUP_TRIES=3 TBLOB_SETUP_PAUSE=0 SETUP_WHO=t \
    bash -c '. "$1/scripts/lib/setup.sh"; shift; "$@"' _ "$root" "$@" 2>"$work/err"
}

# 1. The update fails every time; the install works: success, the update tried three times.
reset_state
run_setup setup_apt pkg-a pkg-b
rc=$?
check "update exits 100, install works: setup_apt succeeds" [ "$rc" -eq 0 ]
check "the update was tried 3 times" [ "$(count_calls update)" -eq 3 ]
check "one install of exactly the missing packages" [ "$(grep -c '^install' "$state/calls")" -eq 1 ]
check "both packages installed" [ -f "$state/installed/pkg-a" ] && [ -f "$state/installed/pkg-b" ]
check "the failed update is reported as a note" grep -q "note: apt-get update reported errors" "$work/err"

# 2. Nothing missing: no apt call at all.
reset_state
touch "$state/installed/pkg-a"
run_setup setup_apt pkg-a
check "nothing missing: no apt-get call" [ "$?" -eq 0 ] && [ ! -s "$state/calls" ]

# 3. Only the missing one is installed.
reset_state
touch "$state/installed/pkg-a"
run_setup setup_apt pkg-a pkg-b
check "only the missing package is asked for" grep -qx "install -y -qq pkg-b" "$state/calls"

# 4. The install fails twice (archives mid-sync), then works: success on the third try, with a
#    fresh index update before each retry.
reset_state
echo 2 >"$state/flaky"
run_setup setup_apt pkg-a
rc=$?
check "install failing twice then working: success" [ "$rc" -eq 0 ]
check "three install tries" [ "$(grep -c '^install' "$state/calls")" -eq 3 ]
check "an update before each retry (3 first + 2)" [ "$(count_calls update)" -eq 5 ]

# 5. A package that cannot be had: failure after three tries of the set, the others installed
#    alone, and the message names only the one that could not be had.
reset_state
echo pkg-gone >"$state/broken"
run_setup setup_apt pkg-a pkg-gone
rc=$?
check "an impossible package: setup_apt fails" [ "$rc" -ne 0 ]
check "three tries of the set, then one of each package alone" \
  [ "$(grep -c '^install -y -qq pkg-a pkg-gone$' "$state/calls")" -eq 3 ] && [ "$(grep -c '^install' "$state/calls")" -eq 5 ]
check "the package that can be had is installed" [ -f "$state/installed/pkg-a" ]
check "the message names the package" grep -q "could not install pkg-gone" "$work/err"
check "the message does not blame the installable one" bash -c "! grep -q 'could not install pkg-a' '$work/err'"

# 6. pip: fails once, then works.
reset_state
cat >"$stubs/fakepy" <<EOF
#!/usr/bin/env bash
echo "\$*" >>"$state/pip"
[ -f "$state/pip-ok" ] && exit 0
touch "$state/pip-ok"; echo "ERROR: Could not install packages due to an OSError" >&2; exit 1
EOF
chmod +x "$stubs/fakepy"
run_setup setup_pip fakepy numpy
rc=$?
check "pip failing once: success on the retry" [ "$rc" -eq 0 ] && [ "$(wc -l <"$state/pip")" -eq 2 ]
rm -f "$state/pip-ok"
cat >"$stubs/fakepy" <<'EOF'
#!/usr/bin/env bash
exit 1
EOF
run_setup setup_pip fakepy nosuchpkg
check "pip always failing: failure naming the package" [ "$?" -ne 0 ] && grep -q "could not install with pip: nosuchpkg" "$work/err"

# 7. A download that fails once leaves no file under its name, then arrives whole.
reset_state
cat >"$stubs/curl" <<EOF
#!/usr/bin/env bash
out=""; while [ \$# -gt 0 ]; do [ "\$1" = -o ] && out=\$2; shift; done
if [ ! -f "$state/curl-ok" ]; then touch "$state/curl-ok"; echo partial >"\$out"; exit 18; fi
echo whole >"\$out"
EOF
chmod +x "$stubs/curl"
run_setup setup_download http://example.invalid/f "$work/dl"
check "download retried: the whole file under its name" [ "$?" -eq 0 ] && [ "$(cat "$work/dl")" = whole ] && [ ! -e "$work/dl.part" ]
rm -f "$state/curl-ok" "$work/dl"
cat >"$stubs/curl" <<'EOF'
#!/usr/bin/env bash
out=""; while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
echo partial >"$out"; exit 56
EOF
run_setup setup_download http://example.invalid/f "$work/dl"
check "a download that never works: failure, nothing left behind" [ "$?" -ne 0 ] && [ ! -e "$work/dl" ] && [ ! -e "$work/dl.part" ]
rm -f "$stubs/curl" "$stubs/fakepy"

# 8. The stage itself: scripts/install-deps.sh with only `apt-get update` stubbed (exit 100)
#    in front of the real apt-get, and one of its packages reported missing so that the real
#    install runs (a reinstall of an installed package: no download). Needs root and apt.
if [ "$(id -u)" -eq 0 ] && [ -x /usr/bin/apt-get ] && dpkg-query -W -f='${Status}' jq 2>/dev/null | grep -q "ok installed"; then
  stage=$work/stage
  mkdir -p "$stage"
  cat >"$stage/apt-get" <<EOF
#!/usr/bin/env bash
echo "\$*" >>"$work/stage.calls"
for a in "\$@"; do [ "\$a" = update ] && { echo "E: Some index files failed to download." >&2; exit 100; }; done
exec /usr/bin/apt-get "\$@"
EOF
  cat >"$stage/dpkg-query" <<'EOF'
#!/usr/bin/env bash
[ "${!#}" = jq ] && exit 1
exec /usr/bin/dpkg-query "$@"
EOF
  chmod +x "$stage"/*
  PATH="$stage:$PATH" TBLOB_SETUP_PAUSE=0 TBLOB_SKIP_BINDINGS=1 TBLOB_SKIP_I386=1 \
    bash "$root/scripts/install-deps.sh" >"$work/stage.log" 2>&1
  rc=$?
  check "install-deps.sh with apt-get update exiting 100: the stage succeeds" [ "$rc" -eq 0 ]
  check "install-deps.sh tried the update and then installed jq" \
    bash -c "grep -q update '$work/stage.calls' && grep -q 'install.* jq' '$work/stage.calls'"
  [ "$rc" -eq 0 ] || tail -20 "$work/stage.log"
else
  echo "note: the install-deps.sh stage case needs root and an installed jq; not run"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
