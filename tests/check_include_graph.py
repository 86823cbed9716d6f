#!/usr/bin/env python3
"""Fails when an #include in lib/ points upward in the layering.

Rules (one line each in the output when broken):
  - nothing under lib/formats includes lib/capi;
  - nothing under lib/core includes another folder of lib/;
  - a format (lib/formats/<name>/) includes no other format, except that ollama and uqff
    may include safetensors (their blobs and shards are safetensors files), and ollama gguf
    (a store's model layer is a GGUF file).
Usage: check_include_graph.py [LIB_DIR]   (default: lib/ beside this script's parent)
A self-test (--self-test) runs the rules over a small invented tree, so the check is known
to fail when it should.
"""
import os
import re
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
SOURCE_ENDINGS = ('.h', '.hpp', '.c', '.cc', '.cpp', '.inc')
MAY_INCLUDE = {'ollama': {'safetensors', 'gguf'}, 'uqff': {'safetensors'}}


def lib_folders(lib):
    return {d for d in os.listdir(lib) if os.path.isdir(os.path.join(lib, d))}


def violations(lib):
    folders = lib_folders(lib)
    formats_dir = os.path.join(lib, 'formats')
    formats = {d for d in os.listdir(formats_dir)
               if os.path.isdir(os.path.join(formats_dir, d))} if os.path.isdir(formats_dir) else set()
    out = []
    for root, _, files in os.walk(lib):
        for name in sorted(files):
            if not name.endswith(SOURCE_ENDINGS):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, lib).replace(os.sep, '/')
            parts = rel.split('/')
            with open(path, encoding='utf-8', errors='replace') as f:
                text = f.read()
            for m in INCLUDE.finditer(text):
                inc = m.group(1)
                target = inc.split('/')
                if len(target) < 2 or target[0] not in folders:
                    continue  # system, public or generated header
                line = text.count('\n', 0, m.start()) + 1
                where = 'lib/%s:%d includes "%s"' % (rel, line, inc)
                if parts[0] == 'formats' and target[0] == 'capi':
                    out.append(where + ': lib/formats must not include lib/capi')
                if parts[0] == 'core' and target[0] != 'core':
                    out.append(where + ': lib/core includes nothing else in lib/')
                if (parts[0] == 'formats' and len(parts) > 2 and parts[1] in formats and
                        target[0] == 'formats' and len(target) > 2 and target[1] in formats and
                        target[1] != parts[1] and target[1] not in MAY_INCLUDE.get(parts[1], ())):
                    out.append(where + ': format %s must not include format %s' % (parts[1], target[1]))
    return out


def self_test():
    tree = {
        'core/a.h': '#include "core/b.h"\n#include "io/source.h"\n',
        'core/b.h': '#include <cstdint>\n#include "tensorblob.h"\n',
        'io/source.h': '#include "core/a.h"\n',
        'capi/x.cpp': '#include "formats/slm1/s.h"\n',
        'formats/open.cpp': '#include "formats/slm1/s.h"\n#include "formats/uqff/u.h"\n',
        'formats/slm1/s.h': '#include "formats/safetensors/st.h"\n#include "capi/capi_common.h"\n',
        'formats/uqff/u.h': '#include "formats/safetensors/st.h"\n  # include "formats/ollama/o.h"\n',
        'formats/ollama/o.h': '#include "formats/safetensors/st.h"\n',
        'formats/safetensors/st.h': '#include "json/j.h"\n',
        'json/j.h': '',
    }
    with tempfile.TemporaryDirectory() as d:
        for rel, text in tree.items():
            p = os.path.join(d, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, 'w') as f:
                f.write(text)
        got = sorted(v.split(':')[0] + ':' + v.split(': ', 1)[1] for v in violations(d))
    want = sorted([
        'lib/core/a.h:lib/core includes nothing else in lib/',
        'lib/formats/slm1/s.h:format slm1 must not include format safetensors',
        'lib/formats/slm1/s.h:lib/formats must not include lib/capi',
        'lib/formats/uqff/u.h:format uqff must not include format ollama',
    ])
    if got != want:
        print('self-test failed:\n  got  %s\n  want %s' % (got, want))
        return 1
    print('self-test: ok (%d violations found as expected)' % len(want))
    return 0


def main(argv):
    if len(argv) > 1 and argv[1] == '--self-test':
        return self_test()
    lib = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib')
    found = violations(lib)
    for v in found:
        print(v)
    if found:
        print('%d upward include(s)' % len(found))
        return 1
    print('include graph: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
