#!/usr/bin/env python3
"""Fails when an #include, or a call, in lib/ points upward in the layering.

Include rules (one line each in the output when broken):
  - nothing under lib/formats includes lib/capi;
  - nothing under lib/core includes another folder of lib/;
  - a format (lib/formats/<name>/) includes no other format, except that ollama and uqff
    may include safetensors (their blobs and shards are safetensors files), and ollama gguf
    (a store's model layer is a GGUF file).
Call rules (with --calls BUILD_DIR): the library's objects, found through the build's
compile_commands.json, are read with nm; an object that references a symbol defined in
another folder's object breaks the layering when that folder's layer (LAYERS below) is higher,
or the same layer (sibling folders stay independent); between formats the include exceptions
apply. Inline functions and templates (weak symbols) are not calls between objects and are
not counted. ALLOWED_CALLS lists the known exceptions, each with its reason.
Usage: check_include_graph.py [LIB_DIR] [--calls BUILD_DIR [--nm NM]]
       (default LIB_DIR: lib/ beside this script's parent)
A self-test (--self-test) runs both rule sets over a small invented tree and invented symbol
tables, so the check is known to fail when it should.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
SOURCE_ENDINGS = ('.h', '.hpp', '.c', '.cc', '.cpp', '.inc')
MAY_INCLUDE = {'ollama': {'safetensors', 'gguf'}, 'uqff': {'safetensors'}}

# The layers of lib/, lowest first; a folder calls only into lower layers. 'formats/*' is each
# format's own folder, 'formats' the files directly in lib/formats (detection, the registry),
# which reach every format. A folder missing here fails the check until it is given a layer.
LAYERS = {
    'core': 0,
    'hash': 1, 'io': 1, 'json': 1, 'dequant': 1,
    'table': 2,
    'quant': 2,  # the quantizers (lib/quant/): on dequant's descriptors and kernels
    'convert': 6,  # jobs over whole models (convert --to mlx), written on the public C API
    'formats/*': 3,
    'formats': 4,
    'capi': 5,
}

# Known upward calls: (calling file, symbol substring, defining file) -> why it is allowed.
ALLOWED_CALLS = {
    # Ollama import is a job: it opens each source directory's files with the common opener,
    # whatever their format (issue 29 moves jobs out of lib/formats).
    ('lib/formats/ollama/import.cpp', 'open_path', 'lib/formats/open.cpp'): 'import is a job over open',
}


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


def call_folder(rel):
    """'lib/formats/slm1/x.cpp' -> 'formats/slm1'; 'lib/table/m.cpp' -> 'table'."""
    parts = rel.split('/')[1:]
    if parts[0] == 'formats' and len(parts) > 2:
        return 'formats/' + parts[1]
    return parts[0]


def layer_of(folder):
    if folder.startswith('formats/'):
        return LAYERS.get('formats/*')
    return LAYERS.get(folder)


def parse_nm(text):
    """nm -P output -> (strong global definitions, undefined references)."""
    defined, undefined = set(), set()
    for line in text.splitlines():
        f = line.split()
        if len(f) < 2:
            continue
        name, kind = f[0], f[1]
        if kind == 'U':
            undefined.add(name)
        elif kind in 'TDBRGSC':  # not W/V/u (weak, unique: inline and template copies)
            defined.add(name)
    return defined, undefined


USED_ALLOWANCES = set()


def allowed(caller, sym, callee):
    for key in ALLOWED_CALLS:
        c, part, d = key
        if (c == '*' or c == caller) and part in sym and d == callee:
            USED_ALLOWANCES.add(key)
            return True
    return False


def call_violations(objects):
    """objects: {'lib/<folder>/<file>': (defined, undefined)} -> [(caller, symbol, callee, why)]."""
    where = {}
    for rel, (defined, _) in objects.items():
        for sym in defined:
            where.setdefault(sym, set()).add(rel)
    out = []
    for rel in sorted(objects):
        a = call_folder(rel)
        la = layer_of(a)
        if la is None:
            out.append((rel, None, None, 'folder %s has no layer in LAYERS' % a))
            continue
        for sym in sorted(objects[rel][1]):
            for callee in sorted(where.get(sym, ())):
                b = call_folder(callee)
                lb = layer_of(b)
                if a == b or lb is None or allowed(rel, sym, callee):
                    continue
                why = None
                if a.startswith('formats/') and b.startswith('formats/'):
                    if b[len('formats/'):] not in MAY_INCLUDE.get(a[len('formats/'):], ()):
                        why = 'format %s must not call format %s' % (a[8:], b[8:])
                elif lb > la:
                    why = 'lib/%s (layer %d) must not call up into lib/%s (layer %d)' % (a, la, b, lb)
                elif lb == la:
                    why = 'lib/%s must not call its sibling lib/%s (both layer %d)' % (a, b, la)
                if why:
                    out.append((rel, sym, callee, why))
    return out


def library_objects(build, root, nm):
    """The objects compile_commands.json lists for sources under lib/, read with nm."""
    with open(os.path.join(build, 'compile_commands.json')) as f:
        commands = json.load(f)
    objects, missing = {}, []
    for e in commands:
        src = os.path.normpath(os.path.join(e['directory'], e['file']))
        rel = os.path.relpath(src, root).replace(os.sep, '/')
        if not rel.startswith('lib/'):
            continue
        obj = os.path.normpath(os.path.join(e['directory'], e['output']))
        if not os.path.exists(obj):
            missing.append(obj)
            continue
        text = subprocess.run([nm, '-P', obj], check=True, capture_output=True, text=True).stdout
        d, u = parse_nm(text)
        old = objects.get(rel, (set(), set()))
        objects[rel] = (old[0] | d, old[1] | u)
    return objects, missing


def demangler():
    cxxfilt = shutil.which('c++filt')
    if not cxxfilt:
        return lambda s: s
    return lambda s: subprocess.run([cxxfilt, s], capture_output=True, text=True).stdout.strip() or s


def self_test_calls():
    objects = {
        'lib/core/status.cpp': ({'core_fail'}, {'tblob_status_message'}),
        'lib/core/cpu.cpp': ({'cpu_features'}, {'view_of'}),                 # up into table
        'lib/io/source.cpp': ({'source_read'}, {'core_fail', 'json_scan'}),  # sibling json
        'lib/json/scan.cpp': ({'json_scan'}, {'core_fail'}),
        'lib/table/view.cpp': ({'view_of'}, {'source_read', 'weak_inline'}),
        'lib/table/inline.cpp': (set(), set()),
        'lib/formats/open.cpp': ({'open_path'}, {'slm1_open', 'st_open', 'view_of'}),
        'lib/formats/safetensors/st.cpp': ({'st_open'}, {'json_scan', 'capi_helper'}),  # up into capi
        'lib/formats/slm1/r.cpp': ({'slm1_open'}, {'st_open'}),             # another format
        'lib/formats/ollama/import.cpp': ({'ollama_import'}, {'st_open', 'open_path'}),  # allowed
        'lib/formats/ollama/model.cpp': (set(), {'open_path'}),              # up into formats/
        'lib/capi/status_names.cpp': ({'tblob_status_message'}, set()),
        'lib/capi/api.cpp': ({'capi_helper'}, {'open_path', 'view_of', 'core_fail'}),
        'lib/newpart/x.cpp': (set(), set()),                                 # no layer
    }
    got = sorted((c, s or '', d or '') for c, s, d, _ in call_violations(objects))
    want = sorted([
        ('lib/core/cpu.cpp', 'view_of', 'lib/table/view.cpp'),
        ('lib/core/status.cpp', 'tblob_status_message', 'lib/capi/status_names.cpp'),  # core up into capi
        ('lib/formats/ollama/model.cpp', 'open_path', 'lib/formats/open.cpp'),
        ('lib/formats/safetensors/st.cpp', 'capi_helper', 'lib/capi/api.cpp'),
        ('lib/formats/slm1/r.cpp', 'st_open', 'lib/formats/safetensors/st.cpp'),
        ('lib/io/source.cpp', 'json_scan', 'lib/json/scan.cpp'),
        ('lib/newpart/x.cpp', '', ''),
    ])
    d, u = parse_nm('_ZN5tblob7view_ofEv T 0000000000000000 0000000000000010\n'
                    '_ZN5tblob4DiagC2Ev W 0000000000000000 0000000000000008\n'
                    'tblob_status_name U\n_ZL5localv t 0 4\nkTable R 0 8\n')
    nm_ok = d == {'_ZN5tblob7view_ofEv', 'kTable'} and u == {'tblob_status_name'}
    if got != want or not nm_ok:
        print('call self-test failed:\n  got  %s\n  want %s\n  nm parse %s' % (got, want, nm_ok))
        return 1
    print('call self-test: ok (%d violations found as expected)' % len(want))
    return 0


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
    return self_test_calls()


def main(argv):
    if len(argv) > 1 and argv[1] == '--self-test':
        return self_test()
    args = argv[1:]
    build = nm = None
    if '--calls' in args:
        i = args.index('--calls')
        build = args[i + 1]
        del args[i:i + 2]
    if '--nm' in args:
        i = args.index('--nm')
        nm = args[i + 1]
        del args[i:i + 2]
    lib = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib')
    found = violations(lib)
    for v in found:
        print(v)
    rc = 0
    if found:
        print('%d upward include(s)' % len(found))
        rc = 1
    else:
        print('include graph: ok')
    if build:
        root = os.path.dirname(os.path.abspath(lib))
        objects, missing = library_objects(build, root, nm or shutil.which('nm') or 'nm')
        if missing or not objects:
            print('call graph: %d of the library\'s objects are not built (first: %s)' %
                  (len(missing), missing[0] if missing else '-'))
            return 1
        calls = call_violations(objects)
        demangle = demangler()
        for caller, sym, callee, why in calls:
            if sym is None:
                print('%s: %s' % (caller, why))
            else:
                print('%s calls %s (defined in %s): %s' % (caller, demangle(sym), callee, why))
        if calls:
            print('%d upward call(s)' % len(calls))
            rc = 1
        else:
            print('call graph: ok (%d objects)' % len(objects))
        for key in sorted(set(ALLOWED_CALLS) - USED_ALLOWANCES):
            if (key[0] == '*' or key[0] in objects) and key[2] in objects:  # both built here
                print('note: allowance %s no longer needed (%s): remove it' % (key, ALLOWED_CALLS[key]))
    return rc


if __name__ == '__main__':
    sys.exit(main(sys.argv))
