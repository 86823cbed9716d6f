#!/bin/sh
# Fails if the shared library exports any symbol that does not start with tblob_, or (given
# the public header) if the exported tblob_ functions differ from the header's TBLOB_API
# declarations: every build, whatever parts it leaves out, defines every declared function.
# Usage: check_exports.sh path/to/libtensorblob.so [nm] [include/tensorblob.h] [libtensorblob.a]
# Linker-defined markers (_init, _fini, _edata, _end, __bss_start, ...) are ignored.
# Also fails if the library needs the C++ runtime (libstdc++ in NEEDED, or an undefined
# GLIBCXX_/CXXABI_ symbol) or, given the static archive, if any of its objects has static
# initializers (an .init_array or .ctors section): loading the library runs none of its code.
set -u
lib="${1:?usage: check_exports.sh LIBRARY [NM]}"
nm="${2:-nm}"
header="${3:-}"
archive="${4:-}"
if [ ! -f "$lib" ]; then
  echo "check_exports: $lib: no such file" >&2
  exit 1
fi
syms=$("$nm" -D --defined-only "$lib") || { echo "check_exports: $nm failed on $lib" >&2; exit 1; }
names=$(printf '%s\n' "$syms" | awk 'NF >= 2 { print $NF }' | sed 's/@.*//' | sort -u)
bad=$(printf '%s\n' "$names" | grep -v -E '^$|^tblob_' |
      grep -v -x -E '_init|_fini|_edata|_end|__bss_start|_etext|_DYNAMIC|_GLOBAL_OFFSET_TABLE_|_PROCEDURE_LINKAGE_TABLE_|__end__|__data_start|_IO_stdin_used|LIBTENSORBLOB_[0-9._]*')
count=$(printf '%s\n' "$names" | grep -c '^tblob_')
if [ -n "$bad" ]; then
  echo "check_exports: $lib exports symbols without the tblob_ prefix:"
  printf '  %s\n' $bad
  exit 1
fi
if [ "$count" -eq 0 ]; then
  echo "check_exports: $lib exports no tblob_ symbols at all" >&2
  exit 1
fi
readelf="${READELF:-readelf}"
if command -v "$readelf" >/dev/null 2>&1; then
  if "$readelf" -d "$lib" | grep NEEDED | grep -q 'libstdc++'; then
    echo "check_exports: $lib needs libstdc++ (link it with -static-libstdc++)"
    exit 1
  fi
  if [ -n "$archive" ] && "$readelf" -S -W "$archive" | grep -q -E '\.init_array|\.ctors'; then
    echo "check_exports: objects of $archive have static initializers:"
    "$readelf" -S -W "$archive" | grep -E '^File:|\.init_array|\.ctors' | grep -B1 -E 'init_array|ctors'
    exit 1
  fi
fi
# A guarded function-local static anywhere in the archive would make a C program linking the
# static library need libstdc++ for __cxa_guard_acquire/release.
if [ -n "$archive" ]; then
  guard=$("$nm" -A "$archive" 2>/dev/null | grep -E ' U __cxa_guard_' || true)
  if [ -n "$guard" ]; then
    echo "check_exports: objects of $archive use guarded function-local statics (build them once by hand):"
    printf '%s\n' "$guard" | head -20
    exit 1
  fi
fi
cxx=$("$nm" -D --undefined-only "$lib" | grep -E '@(GLIBCXX|CXXABI)_' || true)
if [ -n "$cxx" ]; then
  echo "check_exports: $lib needs C++ runtime symbols:"
  printf '%s\n' "$cxx" | head -20
  exit 1
fi
if [ -n "$header" ]; then
  declared=$(tr '\n' ' ' < "$header" | grep -o 'TBLOB_API[^;(#]*(' | grep -o 'tblob_[A-Za-z0-9_]* *($' |
             tr -d ' (' | sort -u)
  exported=$(printf '%s\n' "$names" | grep '^tblob_' | sort -u)
  missing=$(printf '%s\n' "$declared" | grep -v -x -F "$exported")
  extra=$(printf '%s\n' "$exported" | grep -v -x -F "$declared")
  if [ -n "$missing" ] || [ -n "$extra" ]; then
    [ -n "$missing" ] && { echo "check_exports: declared in $header but not exported:"; printf '  %s\n' $missing; }
    [ -n "$extra" ] && { echo "check_exports: exported but not declared in $header:"; printf '  %s\n' $extra; }
    exit 1
  fi
  echo "check_exports: $count symbols, all tblob_*, exactly the $(printf '%s\n' "$declared" | wc -l) functions the header declares"
  exit 0
fi
echo "check_exports: $count symbols, all tblob_*"
exit 0
