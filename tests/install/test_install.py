#!/usr/bin/env python3
"""`meson install --destdir` into a staging directory, then a small C program built against
the staged installation and run on examples/tiny-llama/model.safetensors, one way per run:

  files        every file a user expects is installed (header, libraries, .pc, CMake config, CLI, man)
  pkgconfig    pkg-config (PKG_CONFIG_PATH + PKG_CONFIG_SYSROOT_DIR), shared; then static from
               libtensorblob.a with the .pc's Libs.private (and, with the Ollama part disabled,
               nothing but the C++ runtime: no OpenSSL, no simdjson)
  cmake        find_package(tensorblob) with CMAKE_PREFIX_PATH: tensorblob::tensorblob and
               tensorblob::tensorblob_static
  subproject   a throwaway Meson project with subprojects/tensorblob -> the source tree and
               dependency('tensorblob', fallback: ...)
  prefix       a build directory of its own set up with the default prefix, moved with
               `meson setup --reconfigure --prefix=P`, installed to P; a program built with
               pkg-config outside the checkout and the installed CLI run without LD_LIBRARY_PATH

The program prints the tensor count and one tensor's dtype; the expected values come from the
file's own JSON header. Exit 77 (skipped) when the way's tool (cmake, pkg-config) is missing.

usage: test_install.py WAY --build BUILD_DIR --source SOURCE_DIR --workdir DIR --ollama 0|1 --cli 0|1
"""
import argparse
import glob
import json
import os
import shutil
import struct
import subprocess
import sys

PROGRAM = r"""
#include <stdio.h>
#include <string.h>
#include <tensorblob.h>

int main(int argc, char **argv) {
  tblob_open_options opts = TBLOB_OPEN_OPTIONS_INIT;
  tblob_diag diag = TBLOB_DIAG_INIT;
  tblob_model *model = NULL;
  uint64_t index = 0;
  tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
  if (argc != 3) return 2;
  if (tblob_model_open(argv[1], &opts, &model, &diag) != TBLOB_OK) {
    fprintf(stderr, "%s: %s\n", tblob_status_name(diag.status), diag.message);
    return 1;
  }
  if (tblob_tensor_find(model, argv[2], strlen(argv[2]), &index, &diag) != TBLOB_OK ||
      tblob_tensor_at(model, index, &info, &diag) != TBLOB_OK) {
    fprintf(stderr, "%s: %s\n", tblob_status_name(diag.status), diag.message);
    return 1;
  }
  printf("%s %llu %s %u\n", TBLOB_VERSION_STRING, (unsigned long long)tblob_model_tensor_count(model),
         tblob_dtype_name(info.dtype), info.rank);
  tblob_model_close(model);
  return 0;
}
"""

FAILS = []


def check(cond, what, detail=""):
    print(("ok: " if cond else "FAIL: ") + what + ("" if cond else f" {detail}"))
    if not cond:
        FAILS.append(what)
    return cond


def sh(cmd, quiet=False, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, **kw)
    if p.returncode != 0 and not quiet:
        print(f"$ {' '.join(cmd)}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return p


def expected(model, tensor):
    with open(model, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        h = json.loads(f.read(n))
    count = len([k for k in h if k != "__metadata__"])
    return count, h[tensor]["dtype"], len(h[tensor]["shape"])


def stage(build, work):
    destdir = os.path.join(work, "stage")
    shutil.rmtree(destdir, ignore_errors=True)
    p = sh(["meson", "install", "-C", build, "--no-rebuild", "--quiet", "--destdir", destdir])
    if not check(p.returncode == 0, "meson install --destdir"):
        sys.exit(1)
    intro = json.loads(sh(["meson", "introspect", "--buildoptions", build]).stdout)
    opt = {o["name"]: o["value"] for o in intro}
    prefix = destdir + opt["prefix"]
    libdir = os.path.join(prefix, opt["libdir"])
    return destdir, prefix, libdir, opt


def run_program(exe, model, tensor, want, what, env=None):
    e = dict(os.environ)
    if env:
        e.update(env)
    p = sh([exe, model, tensor], env=e)
    count, dtype, rank = want
    check(p.returncode == 0 and p.stdout.split()[1:] == [str(count), dtype, str(rank)], what, p.stdout + p.stderr)
    return p.stdout


def way_files(a, destdir, prefix, libdir, opt):
    inc = os.path.join(prefix, opt["includedir"])
    for f in ("tensorblob.h", "tensorblob_version.h"):
        check(os.path.isfile(os.path.join(inc, f)), f"installed {opt['includedir']}/{f}")
    check(os.path.isfile(os.path.join(libdir, "libtensorblob.a")), "static library installed")
    sos = glob.glob(os.path.join(libdir, "libtensorblob.so.*.*.*"))
    check(len(sos) == 1, "shared library with its full version", str(sos))
    check(os.path.islink(os.path.join(libdir, "libtensorblob.so.0")), "soname link libtensorblob.so.0")
    check(os.path.islink(os.path.join(libdir, "libtensorblob.so")), "development link libtensorblob.so")
    if sos and shutil.which("readelf"):
        d = sh(["readelf", "-d", sos[0]]).stdout
        check("(SONAME)" in d and "[libtensorblob.so.0]" in d, "SONAME is libtensorblob.so.0")
    check(os.path.isfile(os.path.join(libdir, "pkgconfig", "tensorblob.pc")), "tensorblob.pc installed")
    cm = os.path.join(libdir, "cmake", "tensorblob")
    for f in ("tensorblobConfig.cmake", "tensorblobConfigVersion.cmake"):
        check(os.path.isfile(os.path.join(cm, f)), f"CMake {f} installed")
    if a.cli == "1":
        tool = os.path.join(prefix, opt["bindir"], "tensorblob")
        check(os.access(tool, os.X_OK), "CLI installed")
        man = os.path.join(prefix, opt["mandir"], "man1", "tensorblob.1")
        if check(os.path.isfile(man), "man page installed"):
            text = open(man).read()
            check(text.startswith(".TH TENSORBLOB 1") and ".SS diff" in text and "EXIT STATUS" in text,
                  "man page: title, a section per command, exit status")
            if shutil.which("man"):
                p = sh(["man", "-l", "-Tutf8", man], env=dict(os.environ, MANPAGER="cat", MANWIDTH="100"))
                check(p.returncode == 0 and "tensorblob diff" in p.stdout, "man -l renders it", p.stderr[:300])
        data = os.path.join(prefix, opt["datadir"])
        for shell, rel in (("bash", "bash-completion/completions/tensorblob"), ("zsh", "zsh/site-functions/_tensorblob"),
                           ("fish", "fish/vendor_completions.d/tensorblob.fish")):
            f = os.path.join(data, rel)
            check(os.path.isfile(f) and f"generated by `tensorblob completion {shell}`" in open(f).read(),
                  f"{shell} completion installed as {opt['datadir']}/{rel}")
        env = dict(os.environ, LD_LIBRARY_PATH=libdir)
        p = sh([tool, "--version"], env=env)
        check(p.returncode == 0 and p.stdout.strip() == f"tensorblob {a.version}", "installed CLI --version",
              p.stdout)


def way_pkgconfig(a, destdir, prefix, libdir, opt, model, want):
    pc = shutil.which("pkg-config")
    cc = shutil.which("cc")
    if not pc or not cc:
        print("pkg-config or cc missing: skipped")
        sys.exit(77)
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(libdir, "pkgconfig"), PKG_CONFIG_SYSROOT_DIR=destdir,
               PKG_CONFIG_LIBDIR=os.path.join(libdir, "pkgconfig"))
    cflags = sh([pc, "--cflags", "tensorblob"], env=env).stdout.split()
    libs = sh([pc, "--libs", "tensorblob"], env=env).stdout.split()
    check(any(f.startswith("-I" + destdir) for f in cflags), "pkg-config --cflags points into the staging dir",
          str(cflags))
    src = os.path.join(a.workdir, "main.c")
    exe = os.path.join(a.workdir, "consumer_pc")
    p = sh([cc, "-std=c99", "-Wall", "-Werror", src, "-o", exe] + cflags + libs)
    if check(p.returncode == 0, "pkg-config: compile and link (shared)"):
        out = run_program(exe, model, "lm_head.weight", want, "pkg-config: runs (shared)",
                          env={"LD_LIBRARY_PATH": libdir})
        check(out.split()[0] == a.version, "TBLOB_VERSION_STRING is the project version", out)
    # Static: libtensorblob.a plus Libs.private, and no libtensorblob.so at run time.
    static_libs = [t for t in sh([pc, "--static", "--libs", "tensorblob"], env=env).stdout.split()
                   if t != "-ltensorblob" and not t.startswith("-L")]
    heavy = [t for t in static_libs if t in ("-lcrypto", "-lssl", "-lsimdjson")]
    if a.ollama == "1":
        check(heavy == ["-lsimdjson", "-lcrypto"], "Libs.private has simdjson and libcrypto (Ollama part built)",
              str(static_libs))
    else:
        check(heavy == [], "core-only: Libs.private needs no OpenSSL or simdjson", str(static_libs))
        if a.cxx_runtime == "1":
            check(sorted(static_libs) == ["-lm", "-lstdc++"], "GGUF/SLM1 built: the C++ runtime and libm",
                  str(static_libs))
        else:
            # The core links from C with libm alone: no libstdc++ (the static link below proves it).
            check(static_libs == ["-lm"], "core-only: libm alone, no C++ runtime", str(static_libs))
    exe_s = os.path.join(a.workdir, "consumer_static")
    p = sh([cc, "-std=c99", src, "-o", exe_s] + cflags + [os.path.join(libdir, "libtensorblob.a")] + static_libs)
    if check(p.returncode == 0, f"pkg-config: static link with {' '.join(static_libs)}"):
        env_run = dict(os.environ)
        env_run.pop("LD_LIBRARY_PATH", None)
        run_program(exe_s, model, "lm_head.weight", want, "pkg-config: static program runs", env=env_run)
        if shutil.which("ldd"):
            check("libtensorblob" not in sh(["ldd", exe_s]).stdout, "static program needs no libtensorblob.so")


def way_cmake(a, destdir, prefix, libdir, opt, model, want):
    cmake = shutil.which("cmake")
    if not cmake:
        print("cmake not installed: skipped")
        sys.exit(77)
    proj = os.path.join(a.workdir, "cmake_project")
    os.makedirs(proj, exist_ok=True)
    shutil.copy(os.path.join(a.workdir, "main.c"), proj)
    with open(os.path.join(proj, "CMakeLists.txt"), "w") as f:
        f.write("""cmake_minimum_required(VERSION 3.13)
project(consumer C)
find_package(tensorblob 0.1 REQUIRED)
message(STATUS "tensorblob ${tensorblob_VERSION} from ${tensorblob_DIR}")
add_executable(consumer main.c)
target_link_libraries(consumer PRIVATE tensorblob::tensorblob)
add_executable(consumer_static main.c)
target_link_libraries(consumer_static PRIVATE tensorblob::tensorblob_static)
""")
    bdir = os.path.join(a.workdir, "cmake_build")
    shutil.rmtree(bdir, ignore_errors=True)
    p = sh([cmake, "-S", proj, "-B", bdir, f"-DCMAKE_PREFIX_PATH={prefix}"])
    if not check(p.returncode == 0, "cmake: find_package(tensorblob 0.1)"):
        sys.exit(1)
    check(f"tensorblob {a.version} from {destdir}" in p.stdout, "cmake: the staged package and its version",
          p.stdout[-500:])
    p = sh([cmake, "--build", bdir])
    if check(p.returncode == 0, "cmake: build with tensorblob::tensorblob and tensorblob::tensorblob_static"):
        run_program(os.path.join(bdir, "consumer"), model, "lm_head.weight", want, "cmake: shared program runs",
                    env={"LD_LIBRARY_PATH": libdir})
        run_program(os.path.join(bdir, "consumer_static"), model, "lm_head.weight", want,
                    "cmake: static program runs")
    # Version requests: none and 0.1 accepted (above), 0.2 (newer) and 1.0 (another major) refused.
    with open(os.path.join(proj, "CMakeLists.txt")) as f:
        text = f.read()
    for req, ok in (("", True), ("0.2", False), ("1.0", False)):
        with open(os.path.join(proj, "CMakeLists.txt"), "w") as f:
            f.write(text.replace("find_package(tensorblob 0.1 REQUIRED)", f"find_package(tensorblob {req} REQUIRED)"))
        p = sh([cmake, "-S", proj, "-B", f"{bdir}-{req or 'any'}", f"-DCMAKE_PREFIX_PATH={prefix}"], quiet=not ok)
        check((p.returncode == 0) == ok, f"cmake: find_package(tensorblob {req}) is {'accepted' if ok else 'refused'}")


def way_subproject(a, model, want):
    meson = shutil.which("meson")
    proj = os.path.join(a.workdir, "meson_project")
    shutil.rmtree(proj, ignore_errors=True)
    os.makedirs(os.path.join(proj, "subprojects"))
    os.symlink(os.path.abspath(a.source), os.path.join(proj, "subprojects", "tensorblob"))
    shutil.copy(os.path.join(a.workdir, "main.c"), proj)
    with open(os.path.join(proj, "meson.build"), "w") as f:
        # Only the core: what is tested here is the subproject wiring, not the kernels again.
        f.write("""project('consumer', 'c', default_options: ['c_std=c99'])
tb = dependency('tensorblob', version: '>=0.1',
  fallback: ['tensorblob', 'tensorblob_dep'],
  default_options: ['default_library=static', 'cli=disabled', 'tests=disabled', 'benchmarks=disabled',
                    'ollama=disabled', 'uqff=disabled', 'slm1=disabled', 'simd_x86=disabled',
                    'simd_neon=disabled'])
executable('consumer', 'main.c', dependencies: tb)
""")
    bdir = os.path.join(proj, "build")
    env = dict(os.environ)
    env.pop("PKG_CONFIG_PATH", None)
    p = sh([meson, "setup", bdir, proj, "--force-fallback-for=tensorblob"], env=env)
    if not check(p.returncode == 0, "meson: dependency('tensorblob') through the subproject fallback"):
        sys.exit(1)
    check("Subproject tensorblob" in p.stdout or "subproject tensorblob" in p.stdout.lower(),
          "meson: tensorblob came from the subproject")
    p = sh(["ninja", "-C", bdir, "-j2"])
    if check(p.returncode == 0, "meson: build"):
        run_program(os.path.join(bdir, "consumer"), model, "lm_head.weight", want, "meson subproject: program runs")


def way_prefix(a, model, want):
    """A user's install to a prefix of their own: `meson setup` first with the default prefix (as
    scripts/demo.sh does), then the documented `meson setup --reconfigure BUILD --prefix=P`,
    `meson install`, and a program built with pkg-config outside the checkout that runs, like
    the installed CLI, with no LD_LIBRARY_PATH (the .pc's run path, meson.build). A small
    configuration: the run path does not depend on the formats built."""
    pc, cc = shutil.which("pkg-config"), shutil.which("cc")
    if not pc or not cc:
        print("pkg-config or cc missing: skipped")
        sys.exit(77)
    intro = json.loads(sh(["meson", "introspect", "--buildoptions", a.build]).stdout)
    werror = {o["name"]: o["value"] for o in intro}.get("werror_ci", False)
    bdir = os.path.join(a.workdir, "build")
    prefix = os.path.join(a.workdir, "prefix")
    small = ["-Dwerror_ci=" + ("true" if werror else "false"), "-Dtests=disabled", "-Dbenchmarks=disabled",
             "-Dollama=disabled", "-Duqff=disabled", "-Dslm1=disabled", "-Dgguf=disabled", "-Dcurl=disabled",
             "-Dsimd_x86=disabled", "-Dsimd_neon=disabled", "-Dcli=enabled"]
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)
    env.pop("PKG_CONFIG_PATH", None)
    if not check(sh(["meson", "setup", bdir, a.source] + small, env=env).returncode == 0, "meson setup (default prefix)"):
        sys.exit(1)
    p = sh(["meson", "setup", "--reconfigure", bdir, a.source, "--prefix=" + prefix], env=env)
    check(p.returncode == 0, "meson setup --reconfigure --prefix=P")
    opt = {o["name"]: o["value"] for o in json.loads(sh(["meson", "introspect", "--buildoptions", bdir]).stdout)}
    if not check(opt["prefix"] == prefix, "--reconfigure takes the new prefix", opt["prefix"]):
        sys.exit(1)
    if not check(sh(["ninja", "-C", bdir, "-j2"], env=env).returncode == 0, "build"):
        sys.exit(1)
    if not check(sh(["meson", "install", "-C", bdir, "--quiet"], env=env).returncode == 0, "meson install to P"):
        sys.exit(1)
    libdir = os.path.join(prefix, opt["libdir"])
    env["PKG_CONFIG_PATH"] = os.path.join(libdir, "pkgconfig")
    libs = sh([pc, "--libs", "tensorblob"], env=env).stdout.split()
    check("-Wl,-rpath," + libdir in libs, "pkg-config --libs carries -Wl,-rpath,<libdir> for a non-system prefix",
          str(libs))
    # Outside the checkout and the build directory, as a user would.
    consumer = os.path.join(a.workdir, "consumer")
    os.makedirs(consumer, exist_ok=True)
    shutil.copy(os.path.join(a.workdir, "main.c"), consumer)
    cflags = sh([pc, "--cflags", "tensorblob"], env=env).stdout.split()
    p = sh([cc, "-std=c99", "-Wall", "-Werror", "main.c", "-o", "app"] + cflags + libs, cwd=consumer, env=env)
    if check(p.returncode == 0, "cc main.c $(pkg-config --cflags --libs tensorblob)"):
        run_program(os.path.join(consumer, "app"), model, "lm_head.weight", want,
                    "the program runs without LD_LIBRARY_PATH", env={"LD_LIBRARY_PATH": ""})
    tool = os.path.join(prefix, opt["bindir"], "tensorblob")
    p = sh([tool, "--version"], env=env)
    check(p.returncode == 0 and p.stdout.strip() == f"tensorblob {a.version}",
          "the installed CLI runs without LD_LIBRARY_PATH", p.stdout + p.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("way", choices=["files", "pkgconfig", "cmake", "subproject", "prefix"])
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--ollama", default="1")
    ap.add_argument("--cli", default="1")
    ap.add_argument("--cxx-runtime", default="1")
    a = ap.parse_args()
    tool = {"cmake": "cmake", "pkgconfig": "pkg-config"}.get(a.way)
    if tool and not shutil.which(tool):
        print(f"{tool} not installed: skipped")
        sys.exit(77)
    a.workdir = os.path.abspath(os.path.join(a.workdir, a.way))
    shutil.rmtree(a.workdir, ignore_errors=True)
    os.makedirs(a.workdir)
    with open(os.path.join(a.workdir, "main.c"), "w") as f:
        f.write(PROGRAM)
    model = os.path.join(os.path.abspath(a.source), "examples", "tiny-llama", "model.safetensors")
    want = expected(model, "lm_head.weight")
    if a.way == "subproject":
        way_subproject(a, model, want)
    elif a.way == "prefix":
        way_prefix(a, model, want)
    else:
        destdir, prefix, libdir, opt = stage(a.build, a.workdir)
        if a.way == "files":
            way_files(a, destdir, prefix, libdir, opt)
        elif a.way == "pkgconfig":
            way_pkgconfig(a, destdir, prefix, libdir, opt, model, want)
        else:
            way_cmake(a, destdir, prefix, libdir, opt, model, want)
    print(f"{len(FAILS)} failure(s)")
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
