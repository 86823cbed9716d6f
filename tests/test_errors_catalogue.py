#!/usr/bin/env python3
"""Checks the error catalogue against the public header (no dependencies).

    test_errors_catalogue.py [REPO_ROOT]

Parses the status enum of include/tensorblob.h (every TBLOB_OK / TBLOB_E_* = number) and
checks, for each status:
  - docs/errors.md has a table row with its number and name: | -24 | `TBLOB_E_JSON` | ...
    and a cause (and, for errors, an action) that is not empty;
  - lib/core/status_list.def has a TBLOB_STATUS(NAME, number, family, "message") entry with a
    non-empty message (the compiler checks its numbers against the header).
Also checks that numbers are unique and inside the documented ranges, that the catalogue and
the names table list nothing the header lacks, and that no number appears twice in either.
Prints one line per failed check, then `N passed, N failed`; exit status 1 if any failed.
REPO_ROOT defaults to the directory above this file's directory.
"""
import os
import re
import sys

RANGES = [  # (low, high, area) as in include/tensorblob.h and docs/errors.md
    (0, 0, "success"),
    (-19, -1, "general"),
    (-49, -20, "safetensors"),
    (-59, -50, "limits"),
    (-69, -60, "hashing"),
    (-99, -70, "dequantization"),
    (-139, -100, "ollama"),
    (-169, -140, "uqff"),
    (-199, -170, "slm1"),
    (-229, -200, "gguf"),
]


class Checker:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL: " + what)
        return ok


def strip_c_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def header_statuses(path):
    """[(name, number)] from the tblob_status enum (the one that holds TBLOB_OK)."""
    with open(path, encoding="utf-8") as f:
        text = strip_c_comments(f.read())
    m = re.search(r"enum(?:\s+tblob_status)?\s*\{([^}]*\bTBLOB_OK\s*=\s*0[^}]*)\}", text)
    if not m:
        return None
    out = []
    for name, num in re.findall(r"\b(TBLOB_(?:OK|E_[A-Z0-9_]+))\s*=\s*(-?\s*\d+)", m.group(1)):
        out.append((name, int(num.replace(" ", ""))))
    return out


def catalogue_rows(path):
    """{name: [(number, cells)]} from markdown table rows | num | `NAME` | ... |."""
    rows = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line.startswith("|"):
                continue
            cells = [c.strip() for c in line.strip("|").split("|")]
            if len(cells) < 3:
                continue
            m = re.fullmatch(r"`(TBLOB_(?:OK|E_[A-Z0-9_]+))`", cells[1])
            num = cells[0].replace("\u2212", "-")
            if not m or not re.fullmatch(r"-?\d+", num):
                continue
            rows.setdefault(m.group(1), []).append((int(num), cells[2:]))
    return rows


def status_names(path):
    """{name: [message]} from TBLOB_STATUS(NAME, number, FAMILY, "message") entries."""
    with open(path, encoding="utf-8") as f:
        text = strip_c_comments(f.read())
    out = {}
    for name, msg in re.findall(r'TBLOB_STATUS\(\s*(TBLOB_(?:OK|E_[A-Z0-9_]+))\s*,\s*-?\d+\s*,\s*[A-Z_]+\s*,\s*"((?:[^"\\]|\\.)*)"',
                                text):
        out.setdefault(name, []).append(msg)
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    header = os.path.join(root, "include", "tensorblob.h")
    catalogue = os.path.join(root, "docs", "errors.md")
    names_cpp = os.path.join(root, "lib", "core", "status_list.def")
    c = Checker()

    for p in (header, catalogue, names_cpp):
        c.check(os.path.isfile(p), "%s exists" % p)
    if c.failed:
        print("%d passed, %d failed" % (c.passed, c.failed))
        return 1

    statuses = header_statuses(header)
    if not c.check(bool(statuses), "status enum found in %s" % header):
        print("%d passed, %d failed" % (c.passed, c.failed))
        return 1
    rows = catalogue_rows(catalogue)
    names = status_names(names_cpp)

    seen_num = {}
    for name, num in statuses:
        c.check(num not in seen_num,
                "%s = %d: number also used by %s" % (name, num, seen_num.get(num)))
        seen_num.setdefault(num, name)
        c.check(any(lo <= num <= hi for lo, hi, _ in RANGES),
                "%s = %d: outside every documented range" % (name, num))

        entries = rows.get(name, [])
        if c.check(len(entries) > 0, "%s (%d) is missing from docs/errors.md" % (name, num)):
            c.check(len(entries) == 1, "%s appears in %d rows of docs/errors.md" % (name, len(entries)))
            doc_num, cells = entries[0]
            c.check(doc_num == num, "%s: docs/errors.md says %d, the header %d" % (name, doc_num, num))
            c.check(len(cells) >= 1 and len(cells[0]) >= 10,
                    "%s: docs/errors.md gives no cause" % name)
            if num != 0:
                c.check(len(cells) >= 2 and len(cells[1]) >= 5,
                        "%s: docs/errors.md says nothing about what to do" % name)

        msgs = names.get(name, [])
        if c.check(len(msgs) > 0, "%s (%d) has no TBLOB_STATUS entry in lib/core/status_list.def" % (name, num)):
            c.check(len(msgs) == 1, "%s has %d TBLOB_STATUS entries" % (name, len(msgs)))
            c.check(msgs[0].strip() != "", "%s: empty message in status_list.def" % name)

    known = {n for n, _ in statuses}
    for name in sorted(set(rows) - known):
        c.check(False, "docs/errors.md lists %s, which the header does not define" % name)
    for name in sorted(set(names) - known):
        c.check(False, "status_list.def names %s, which the header does not define" % name)
    doc_nums = {}
    for name, entries in rows.items():
        for num, _ in entries:
            c.check(num not in doc_nums or doc_nums[num] == name,
                    "docs/errors.md uses %d for both %s and %s" % (num, doc_nums.get(num), name))
            doc_nums.setdefault(num, name)

    print("%d passed, %d failed" % (c.passed, c.failed))
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
