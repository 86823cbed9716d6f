#!/usr/bin/env python3
"""Times the Python safetensors package parsing a header: safe_open on FILE, many times.

    peer_safetensors.py FILE [--iterations N] [--min-seconds S] [--json]

Each iteration opens FILE with safetensors.safe_open (framework "numpy"), which reads and
parses the whole header in Rust (serde_json) and builds its tensor table, then lists the
keys and the metadata; no tensor data is read. Prints header MB/s (header bytes = 8 + N,
10^6 bytes per MB) and microseconds per open, best and median over the iterations, as
process CPU time (time.process_time) and wall time. --json prints one JSON object instead.
"""
import argparse
import json
import statistics
import struct
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--iterations", type=int, default=0,
                    help="fixed number of opens (default: until --min-seconds have passed)")
    ap.add_argument("--min-seconds", type=float, default=3.0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    from safetensors import __version__ as st_version
    from safetensors import safe_open

    with open(args.file, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
    header_bytes = 8 + n

    def once():
        with safe_open(args.file, framework="numpy") as f:
            keys = f.keys()
            meta = f.metadata()
        return len(keys) + (len(meta) if meta else 0)

    count = once()  # warm-up (page cache, imports)
    cpu, wall = [], []
    start = time.perf_counter()
    i = 0
    while True:
        c0, w0 = time.process_time(), time.perf_counter()
        once()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
        i += 1
        if args.iterations:
            if i >= args.iterations:
                break
        elif time.perf_counter() - start >= args.min_seconds and i >= 5:
            break

    def mbps(t):
        return header_bytes / t / 1e6 if t > 0 else float("inf")

    res = {
        "file": args.file, "safetensors": st_version, "header_bytes": header_bytes,
        "entries": count, "iterations": len(cpu),
        "cpu_best_us": min(cpu) * 1e6, "cpu_median_us": statistics.median(cpu) * 1e6,
        "wall_best_us": min(wall) * 1e6, "wall_median_us": statistics.median(wall) * 1e6,
        "cpu_best_MBps": mbps(min(cpu)), "cpu_median_MBps": mbps(statistics.median(cpu)),
        "wall_best_MBps": mbps(min(wall)), "wall_median_MBps": mbps(statistics.median(wall)),
    }
    if args.json:
        print(json.dumps(res))
        return
    print("safetensors %s safe_open: %s (%d header bytes, %d entries), %d iterations"
          % (st_version, args.file, header_bytes, count, len(cpu)))
    print("  cpu : best %9.1f us  %8.1f MB/s   median %9.1f us  %8.1f MB/s"
          % (res["cpu_best_us"], res["cpu_best_MBps"], res["cpu_median_us"], res["cpu_median_MBps"]))
    print("  wall: best %9.1f us  %8.1f MB/s   median %9.1f us  %8.1f MB/s"
          % (res["wall_best_us"], res["wall_best_MBps"], res["wall_median_us"], res["wall_median_MBps"]))


if __name__ == "__main__":
    sys.exit(main())
