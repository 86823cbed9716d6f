#!/usr/bin/env bash
# Private sysroot with the Ollama part's libraries (OpenSSL's libcrypto, simdjson) for a
# foreign architecture, for scripts/i386-test.sh and scripts/cross-test.sh:
#
#   scripts/foreign-sysroot.sh ARCH DIR     # ARCH: i386 or arm64; prints nothing on success
#
# Installing libssl3:ARCH system-wide would replace the host's OpenSSL (Multi-Arch: same needs
# the very same version), and libsimdjson-dev cannot be installed for two architectures at
# once. So the .deb files are fetched with `apt-get download` (the architecture must already
# be added with dpkg --add-architecture and its indexes updated) and unpacked with `dpkg -x`
# into DIR; nothing is installed. The .pc files are rewritten to point into DIR, and
# libcrypto's gets the multiarch include directory (openssl/configuration.h lives there);
# both give their include directories as -isystem, like the host's /usr/include.
# Afterwards DIR/pkgconfig holds the .pc files (meson -Dpkg_config_path=DIR/pkgconfig) and
# DIR/lib the shared libraries (LD_LIBRARY_PATH for the tests).
# libssl3 is fetched at the version of libssl-dev, libsimdjson14 at that of libsimdjson-dev.
# Kept between runs: DIR/stamp names the packages unpacked; a change of candidate redoes it.
# Exits non-zero with a message naming what failed.
set -euo pipefail
arch=${1:?usage: foreign-sysroot.sh ARCH DIR}
dir=${2:?usage: foreign-sysroot.sh ARCH DIR}
case "$arch" in
  i386) triplet=i386-linux-gnu ;;
  arm64) triplet=aarch64-linux-gnu ;;
  *) echo "foreign-sysroot: unknown architecture $arch"; exit 2 ;;
esac

# shellcheck source=scripts/lib/setup.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"
candidate() {
  apt-cache policy "$1:$arch" 2>/dev/null | sed -n 's/^ *Candidate: *//p'
}
ssl=$(candidate libssl-dev)
sj=$(candidate libsimdjson-dev)
# A stale index offers nothing, or versions the mirror has dropped: refresh once and retry.
refreshed=0
refresh() {
  [ "$refreshed" = 0 ] || return 1
  refreshed=1
  setup_apt_update
  ssl=$(candidate libssl-dev)
  sj=$(candidate libsimdjson-dev)
}
if [ -z "$ssl" ] || [ "$ssl" = "(none)" ] || [ -z "$sj" ] || [ "$sj" = "(none)" ]; then
  refresh || true
fi
if [ -z "$ssl" ] || [ "$ssl" = "(none)" ] || [ -z "$sj" ] || [ "$sj" = "(none)" ]; then
  echo "foreign-sysroot: apt offers no libssl-dev:$arch / libsimdjson-dev:$arch" \
       "(is the architecture added and apt-get update run?)"
  exit 1
fi
packages() {
  pkgs=("libssl-dev:$arch=$ssl" "libssl3:$arch=$ssl" "libsimdjson-dev:$arch=$sj"
        "libsimdjson14:$arch=$sj")
}
packages
if [ -f "$dir/stamp" ] && [ "$(cat "$dir/stamp")" = "${pkgs[*]}" ]; then
  exit 0
fi

rm -rf "$dir"
mkdir -p "$dir/debs" "$dir/root"
# apt-get download writes into the current directory; as root it warns that _apt cannot
# reach it, which is harmless.
download() {
  setup_retry "apt-get download ${pkgs[*]}" \
    bash -c 'cd "$1" && shift && apt-get download "$@" >download.log 2>&1' _ "$dir/debs" "${pkgs[@]}"
}
if ! download && ! { refresh && packages && download; }; then
  cat "$dir/debs/download.log"
  echo "foreign-sysroot: apt-get download ${pkgs[*]} failed"
  exit 1
fi
for deb in "$dir"/debs/*.deb; do
  dpkg -x "$deb" "$dir/root" || { echo "foreign-sysroot: dpkg -x $deb failed"; exit 1; }
done

root=$dir/root/usr
mkdir -p "$dir/pkgconfig"
for pc in libcrypto simdjson; do
  src=$root/lib/$triplet/pkgconfig/$pc.pc
  [ -f "$src" ] || { echo "foreign-sysroot: $pc.pc missing from the packages"; exit 1; }
  sed -e "s|^prefix=/usr\$|prefix=$root|" "$src" >"$dir/pkgconfig/$pc.pc"
done
sed -i -e "s|^Cflags: -I\${includedir}|Cflags: -I\${includedir} -I\${includedir}/$triplet|" \
  "$dir/pkgconfig/libcrypto.pc"
# The host's copies live in /usr/include, where the compiler raises no warnings; -isystem
# keeps these the same under -Dwerror_ci=true.
sed -i -e "s|-I\${includedir}|-isystem\${includedir}|g" "$dir/pkgconfig/libcrypto.pc" \
  "$dir/pkgconfig/simdjson.pc"
ln -sfn "$root/lib/$triplet" "$dir/lib"
for so in libcrypto.so.3 libsimdjson.so; do
  [ -e "$dir/lib/$so" ] || { echo "foreign-sysroot: $so missing from the packages"; exit 1; }
done
echo "${pkgs[*]}" >"$dir/stamp"
