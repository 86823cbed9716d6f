#!/usr/bin/env python3
"""docs/gguf.md's writer example: the docs' C block is tests/gguf/doc_example.c (from its
#define on), and the program runs in an empty directory and prints both tensors.
usage: doc_example.py PROGRAM GGUF_MD DOC_EXAMPLE_C TMPDIR"""
import os
import re
import subprocess
import sys
import tempfile

# Cross builds run the built programs through meson's exe wrapper (qemu-aarch64).
import shlex  # noqa: E402
WRAP = shlex.split(os.environ.get("MESON_EXE_WRAPPER", ""))

prog, md, src, tmp = sys.argv[1:5]
prog = os.path.abspath(prog)
code = open(src).read()
code = code[code.index("#define TBLOB_EXPERIMENTAL_API"):]
blocks = re.findall(r"```c\n(.*?)```", open(md).read(), re.S)
if not any(b == code for b in blocks):
    sys.exit("docs/gguf.md has no ```c block equal to tests/gguf/doc_example.c (from #define on)")
d = tempfile.mkdtemp(dir=tmp)
p = subprocess.run(WRAP + [prog], cwd=d, capture_output=True, text=True)
print(p.stdout, p.stderr)
want = "a (file 0): 1 2 3 4\nb (file 1): -1 -2 -3 -4\n"
if p.returncode != 0 or p.stdout != want:
    sys.exit(f"the example printed {p.stdout!r} (exit {p.returncode}), not {want!r}")
