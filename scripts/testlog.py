#!/usr/bin/env python3
"""Reads meson testlog.json files for the test scripts' "N passed, N failed" lines.

  testlog.py count LOG...                    prints "passed failed skipped" summed over the logs
                                             (a log that cannot be read counts one failure)
  testlog.py missing LOG NAME... [--skip NAME...]
                                             prints the NAMEs (test names without the suite)
                                             that have no OK result in LOG, not counting skipped ones
"""
import json
import sys


def results(path):
    with open(path) as f:
        for line in f:
            yield json.loads(line)


def count(paths):
    p = f = s = 0
    for path in paths:
        try:
            for r in results(path):
                res = r.get("result")
                if res in ("OK", "EXPECTEDFAIL"):
                    p += 1
                elif res == "SKIP":
                    s += 1
                else:
                    f += 1
        except (OSError, ValueError):
            f += 1
    print(p, f, s)


def missing(path, names):
    skip = []
    if "--skip" in names:
        i = names.index("--skip")
        names, skip = names[:i], names[i + 1:]
    ok = set()
    try:
        for r in results(path):
            if r.get("result") == "OK":
                ok.add(r.get("name", "").rsplit(" / ", 1)[-1])
    except (OSError, ValueError):
        pass
    print(" ".join(n for n in names if n not in ok and n not in skip))


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "count":
        count(sys.argv[2:])
    elif len(sys.argv) >= 4 and sys.argv[1] == "missing":
        missing(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
