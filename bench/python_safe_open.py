#!/usr/bin/env python3
"""tensorblob's Python package against safetensors.safe_open, in one process (not a test).

    python3 bench/python_safe_open.py --lib BUILD_DIR [--tensors 20000] [--gb 1] [--repeat 7]

1. open: a 20,000-tensor checkpoint (bench/make_header.py, 2.2 MB header, sparse data), then
   keys() and, for every tensor, get_slice(name).get_shape() and .get_dtype(). Also open +
   keys() alone, and open + metadata() alone.
2. read: get_tensor of every tensor of a 1 GB file (64 BF16 tensors of 16 MiB, page cache warm),
   once as each library returns it (safetensors copies into a new array, tensorblob returns a
   view of the mapping), and once touching one byte per 4 KiB page of every array, so both pay
   for the memory they hand out.
The two libraries alternate within each round; best and median of --repeat rounds, in process
CPU time (--clock cpu, the default: steadier on a shared machine) or wall time (--clock wall).
--lib: a Meson build directory or library (sets TENSORBLOB_LIBRARY) unless the package is
installed.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def timed(fn, clock):
    t = clock()
    fn()
    return clock() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", help="Meson build directory or libtensorblob.so")
    ap.add_argument("--tensors", type=int, default=20000)
    ap.add_argument("--gb", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--dir", default="/tmp/tblob-pybench")
    ap.add_argument("--clock", choices=["cpu", "wall"], default="cpu")
    args = ap.parse_args()
    if args.lib:
        os.environ["TENSORBLOB_LIBRARY"] = os.path.abspath(args.lib)
        sys.path.insert(0, str(HERE.parent / "bindings" / "python" / "src"))

    import numpy as np
    import ml_dtypes
    import safetensors
    from safetensors import safe_open as st_open
    from safetensors.numpy import save_file
    import tensorblob

    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    many = d / f"many-{args.tensors}.safetensors"
    if not many.exists():
        subprocess.run([sys.executable, str(HERE / "make_header.py"), "--tensors",
                        str(args.tensors), "--out", str(many)], check=True)
    big = d / f"big-{args.gb:g}gb.safetensors"
    per = 16 * 1024 * 1024
    count = max(1, int(args.gb * 1024 ** 3) // per)
    if not big.exists():
        rng = np.random.default_rng(1)
        tensors = {f"t{i:03d}": rng.integers(0, 65535, per // 2, dtype=np.uint16)
                   .view(ml_dtypes.bfloat16).reshape(-1, 4096) for i in range(count)}
        save_file(tensors, str(big))
        del tensors
    big.read_bytes()  # page cache warm for both

    def meta_loop(opener):
        def run():
            f = opener(many)
            for k in f.keys():
                s = f.get_slice(k)
                s.get_shape()
                s.get_dtype()
        return run

    def keys_only(opener):
        return lambda: opener(many).keys()

    def md_only(opener):
        return lambda: opener(many).metadata()

    def read_all(opener, touch):
        def run():
            f = opener(big)
            for k in f.keys():
                a = f.get_tensor(k)
                if touch:
                    a.view(np.uint8).reshape(-1)[::4096].sum()
        return run

    st = lambda p: st_open(str(p), framework="np")
    tb = lambda p: tensorblob.safe_open(p, framework="numpy")
    cases = [
        (f"open + shape/dtype of all {args.tensors} tensors", meta_loop),
        ("open + keys()", keys_only),
        ("open + metadata()", md_only),
        (f"get_tensor x{count} ({count * per / 1e9:.2f} GB)", lambda o: read_all(o, False)),
        ("get_tensor + touch every page", lambda o: read_all(o, True)),
    ]
    print(f"safetensors {safetensors.__version__}, tensorblob {tensorblob.__version__} "
          f"(library {tensorblob.library_path()}), numpy {np.__version__}, "
          f"python {sys.version.split()[0]}; best / median of {args.repeat}, "
          f"{'process CPU' if args.clock == 'cpu' else 'wall'} ms; load average "
          f"{os.getloadavg()[0]:.1f}")
    print("| case | safetensors best | median | tensorblob best | median | speed-up (best) "
          "| (median) |")
    print("|---|---|---|---|---|---|---|")
    for name, make in cases:
        a, b = make(st), make(tb)
        ta, tb_ = [], []
        clock = time.process_time if args.clock == "cpu" else time.perf_counter
        for _ in range(args.repeat):  # alternate so drift hits both
            ta.append(timed(a, clock))
            tb_.append(timed(b, clock))
        ba, bb = min(ta) * 1e3, min(tb_) * 1e3
        print(f"| {name} | {ba:.2f} | {statistics.median(ta) * 1e3:.2f} | {bb:.2f} | "
              f"{statistics.median(tb_) * 1e3:.2f} | {ba / bb:.1f}x | "
              f"{statistics.median(ta) / statistics.median(tb_):.1f}x |")


if __name__ == "__main__":
    main()
