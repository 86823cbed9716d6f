#!/usr/bin/env python3
"""meson dist script: replaces the subprojects/tensorblob link (to the repository root) in the
sdist with a copy of the library's build files and sources, so the sdist builds on its own."""
import os
import shutil

dist = os.environ["MESON_DIST_ROOT"]
src = os.environ["MESON_SOURCE_ROOT"]
repo = os.path.realpath(os.path.join(src, "subprojects", "tensorblob"))
dst = os.path.join(dist, "subprojects", "tensorblob")
if os.path.islink(dst) or os.path.isfile(dst):
    os.unlink(dst)
elif os.path.isdir(dst):
    shutil.rmtree(dst)
os.makedirs(dst)
# What the root meson.build reads with cli, tests and benchmarks disabled (fuzz/ and bench/
# are optional there).
for name in ("meson.build", "meson_options.txt", "README.md", "LICENSE"):
    if os.path.isfile(os.path.join(repo, name)):
        shutil.copy2(os.path.join(repo, name), os.path.join(dst, name))
for name in ("include", "lib"):
    shutil.copytree(os.path.join(repo, name), os.path.join(dst, name),
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
