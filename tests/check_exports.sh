#!/bin/sh
# Fails if the shared library exports any symbol that does not start with tblob_, or (given
# the public header) if the exported tblob_ functions differ from the header's TBLOB_API
# declarations: every build, whatever parts it leaves out, defines every declared function.
# Usage: check_exports.sh path/to/libtensorblob.so [nm] [include/tensorblob.h]
# Linker-defined markers (_init, _fini, _edata, _end, __bss_start, ...) are ignored.
set -u
lib="${1:?usage: check_exports.sh LIBRARY [NM]}"
nm="${2:-nm}"
header="${3:-}"
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
