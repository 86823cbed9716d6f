#!/usr/bin/env bash
# Stripped shared-library size per option set, arm64 (cross/aarch64-linux-gnu.ini) and x86-64.
#
#   scripts/size-table.sh            # prints a markdown table; not part of CI
#
# Each option set is a separate minimal build: -Doptimization=s, no CLI, tests or benchmarks,
# only the shared library built, then stripped with the target's strip (a copy; the build keeps
# its symbols). The Ollama part needs simdjson and libcrypto for the target; the row that
# enables it is built only when pkg-config finds both for that target, otherwise it is
# reported as skipped.
#
# Environment: SIZE_DIR (build root, default <repo>/build-size), JOBS (ninja -j, default 2),
# ARCHES (default "aarch64 x86_64").
set -uo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
root=${SIZE_DIR:-$src/build-size}
jobs=${JOBS:-2}
arches=${ARCHES:-aarch64 x86_64}
common=(-Doptimization=s -Ddebug=false -Ddefault_library=shared -Dcli=disabled -Dtests=disabled -Dbenchmarks=disabled)
core=(-Dollama=disabled -Duqff=disabled -Dslm1=disabled -Dgguf=disabled)

# name|options (space-separated)
sets=(
  "core (safetensors)|${core[*]}"
  "core + gguf|-Dollama=disabled -Duqff=disabled -Dslm1=disabled -Dgguf=enabled"
  "core + uqff|-Dollama=disabled -Duqff=enabled -Dslm1=disabled -Dgguf=disabled"
  "core + slm1|-Dollama=disabled -Duqff=disabled -Dslm1=enabled -Dgguf=disabled"
  "all but ollama|-Dollama=disabled -Duqff=enabled -Dslm1=enabled -Dgguf=enabled"
  "all (with ollama)|-Dollama=enabled -Duqff=enabled -Dslm1=enabled -Dgguf=enabled"
)

have_ollama_deps() { # $1 = arch
  if [ "$1" = aarch64 ]; then
    PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig \
      pkg-config --exists simdjson libcrypto
  else
    pkg-config --exists simdjson libcrypto
  fi
}

mkdir -p "$root"
declare -A size
notes=()
for arch in $arches; do
  if [ "$arch" = aarch64 ]; then
    cross=(--cross-file "$src/cross/aarch64-linux-gnu.ini")
    strip_tool=$(command -v llvm-strip || command -v aarch64-linux-gnu-strip)
    size_tool=$(command -v llvm-size || command -v aarch64-linux-gnu-size)
  else
    cross=()
    strip_tool=$(command -v strip)
    size_tool=$(command -v size)
  fi
  i=0
  for entry in "${sets[@]}"; do
    name=${entry%%|*}
    read -r -a opts <<<"${entry#*|}"
    i=$((i + 1))
    if [[ " ${opts[*]} " == *" -Dollama=enabled "* ]] && ! have_ollama_deps "$arch"; then
      size[$arch,$i]="skipped"
      notes+=("$arch: '$name' skipped: simdjson/libcrypto development files for $arch not found by pkg-config")
      continue
    fi
    dir=$root/$arch-$i
    if [ ! -f "$dir/build.ninja" ]; then
      meson setup "$dir" "$src" "${cross[@]}" "${common[@]}" "${opts[@]}" >"$dir.setup.log" 2>&1 ||
        { tail -20 "$dir.setup.log" >&2; size[$arch,$i]="setup failed"; continue; }
    fi
    # The library target only: the fuzz replay programs are built even without tests.
    if ! nice meson compile -C "$dir" -j "$jobs" tensorblob >"$dir.build.log" 2>&1; then
      tail -20 "$dir.build.log" >&2
      size[$arch,$i]="build failed"
      continue
    fi
    lib=$(readlink -f "$dir/libtensorblob.so")
    "$strip_tool" --strip-all -o "$dir/stripped.so" "$lib"
    bytes=$(stat -c %s "$dir/stripped.so")
    # text + data (Berkeley `size`): what the code occupies, without the file's page padding.
    read -r text data _ < <("$size_tool" "$dir/stripped.so" | awk 'NR == 2 { print $1, $2 }')
    size[$arch,$i]="$(awk -v b="$bytes" -v t="$((text + data))" 'BEGIN { printf "%.0f KB / %.0f KB", b / 1024, t / 1024 }')"
    echo "built $arch '$name': ${size[$arch,$i]}" >&2
  done
done

# ---- table ----
header="| option set |"
rule="|---|"
for arch in $arches; do header+=" $arch file / text+data |"; rule+="---:|"; done
echo "$header"
echo "$rule"
i=0
for entry in "${sets[@]}"; do
  i=$((i + 1))
  row="| ${entry%%|*} |"
  for arch in $arches; do row+=" ${size[$arch,$i]:-n/a} |"; done
  echo "$row"
done
for n in "${notes[@]}"; do echo; echo "$n"; done
echo
echo "KB = 1024 bytes. file = stripped .so on disk (GNU ld pads arm64 segments to 64 KB pages"
echo "in the file); text+data = loadable sections. Goals (arm64): core <= 300 KB, all <= 700 KB."
