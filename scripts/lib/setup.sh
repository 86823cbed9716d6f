# Sourced by every script that installs something (apt, pip, cargo, go, maven, downloads).
# Success is judged by what the caller needs (the packages installed, the file downloaded),
# never by an index update: a mirror mid-sync fails one index now and then, apt keeps the old
# one, and the install still works. Each network step is tried a bounded number of times with
# a pause, and a failure names what could not be had.
#
#   . "$ROOT/scripts/lib/setup.sh"
#   setup_apt PKG...            installs the packages not yet installed (PKG may be name:arch)
#   setup_pip PY PKG...         PY -m pip install PKG... (pip's own resolver; quiet)
#   setup_download URL FILE     curl to FILE (written to FILE.part, renamed when whole)
#   setup_retry WHAT CMD...     runs CMD until it succeeds, at most TBLOB_SETUP_TRIES times
#
# Environment: TBLOB_SETUP_TRIES (default 3), TBLOB_SETUP_PAUSE (seconds before the second
# try, doubled before each later one; default 5). Messages go to stderr, prefixed with
# SETUP_WHO (default the calling script's name).

: "${TBLOB_SETUP_TRIES:=3}"
: "${TBLOB_SETUP_PAUSE:=5}"
SETUP_WHO=${SETUP_WHO:-$(basename "${BASH_SOURCE[1]:-$0}" .sh)}

setup_say() { echo "$SETUP_WHO: $*" >&2; }

setup_sudo() {  # prints "sudo" when not root
  [ "$(id -u)" -eq 0 ] || echo sudo
}

# setup_retry WHAT CMD...: CMD's exit status after at most TBLOB_SETUP_TRIES tries.
setup_retry() {
  local what=$1 try=1 pause=$TBLOB_SETUP_PAUSE rc
  shift
  while :; do
    "$@" && return 0
    rc=$?
    if [ "$try" -ge "$TBLOB_SETUP_TRIES" ]; then
      setup_say "$what failed $try times (exit $rc)"
      return "$rc"
    fi
    setup_say "$what failed (exit $rc), try $((try + 1)) of $TBLOB_SETUP_TRIES in ${pause}s"
    sleep "$pause"
    try=$((try + 1))
    pause=$((pause * 2))
  done
}

setup_apt_missing() {  # prints the packages of "$@" that dpkg does not have installed
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}

# The index update is tried, but only the install decides: an update that fails (exit 100 for
# one stale index) is reported and the install goes ahead with the indexes apt kept.
setup_apt_update() {
  local sudo
  sudo=$(setup_sudo)
  setup_retry "apt-get update" $sudo apt-get update -qq ||
    setup_say "note: apt-get update reported errors; installing from the indexes apt has"
  return 0
}

# One install try; a later try refreshes the indexes first (a package the old index named may
# have moved on the mirror).
_setup_apt_install() {
  local sudo
  sudo=$(setup_sudo)
  if [ "$_setup_apt_tries" -gt 0 ]; then
    $sudo apt-get update -qq >/dev/null 2>&1 || true
  fi
  _setup_apt_tries=$((_setup_apt_tries + 1))
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

setup_apt() {
  local missing sudo p bad=()
  mapfile -t missing < <(setup_apt_missing "$@")
  ((${#missing[@]})) || return 0
  sudo=$(setup_sudo)
  local arch
  for p in "${missing[@]}"; do  # a foreign architecture must be known before the update
    case "$p" in *:*)
      arch=${p#*:}
      dpkg --print-foreign-architectures | grep -qx "$arch" ||
        [ "$arch" = "$(dpkg --print-architecture)" ] || $sudo dpkg --add-architecture "$arch" ||
        { setup_say "dpkg --add-architecture $arch failed"; return 1; }
    esac
  done
  setup_apt_update
  _setup_apt_tries=0
  if setup_retry "apt-get install ${missing[*]}" _setup_apt_install "${missing[@]}"; then
    return 0
  fi
  # apt installs all or nothing: try each package alone to name exactly those that cannot be
  # had (with apt's candidate for each), and install the others.
  for p in "${missing[@]}"; do
    _setup_apt_install "$p" 2>/dev/null || bad+=("$p")
  done
  for p in "${bad[@]}"; do
    local cand
    cand=$(apt-cache policy "$p" 2>/dev/null | sed -n 's/^ *Candidate: *//p')
    setup_say "could not install $p (apt's candidate: ${cand:-none known})"
  done
  return 1
}

setup_pip() {
  local py=$1
  shift
  setup_retry "pip install $*" "$py" -m pip install -q --disable-pip-version-check "$@" && return 0
  setup_say "could not install with pip: $*"
  return 1
}

setup_download() {
  local url=$1 out=$2
  setup_retry "download of $url" curl -fsSL --connect-timeout 20 --retry 0 "$url" -o "$out.part" &&
    mv -f "$out.part" "$out" && return 0
  rm -f "$out.part"
  setup_say "could not download $url"
  return 1
}
