#!/usr/bin/env python3
"""Records what the Python `safetensors` package reports for every safetensors file of the
repository (`git ls-files '*.safetensors'`), as the oracle of safetensors_oracle_test.go.

    python3 bindings/go/testdata/gen_st_oracle.py > bindings/go/testdata/st_oracle.json

For each file: the tensors `safetensors.deserialize` returns (name, dtype, shape, byte length
and SHA-256 of the data bytes) and the `__metadata__` `safe_open(...).metadata()` returns; or,
when the package rejects the file, its error message. Only the package's answers are written:
nothing here parses the file itself.
"""
import hashlib
import json
import os
import subprocess
import sys

import safetensors
from safetensors import deserialize, safe_open


def main():
    root = subprocess.check_output(["git", "rev-parse", "--show-toplevel"], text=True).strip()
    files = subprocess.check_output(["git", "ls-files", "-z", "*.safetensors"], cwd=root)
    paths = sorted(p for p in files.decode().split("\0") if p)
    out = {"safetensors_version": safetensors.__version__, "files": []}
    for rel in paths:
        with open(os.path.join(root, rel), "rb") as f:
            data = f.read()
        entry = {"path": rel}
        try:
            tensors = deserialize(data)
            meta = safe_open(os.path.join(root, rel), framework="numpy").metadata()
        except Exception as e:  # the package rejects the file: record that it does
            entry["error"] = f"{type(e).__name__}: {e}"
            out["files"].append(entry)
            continue
        entry["metadata"] = meta or {}
        entry["tensors"] = sorted(
            (
                {
                    "name": name,
                    "dtype": t["dtype"],
                    "shape": list(t["shape"]),
                    "length": len(t["data"]),
                    "sha256": hashlib.sha256(bytes(t["data"])).hexdigest(),
                }
                for name, t in tensors
            ),
            key=lambda t: t["name"],
        )
        out["files"].append(entry)
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
