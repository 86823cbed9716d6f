#!/usr/bin/env python3
"""Numbers on the command line (issue 37, class 2): one strict parser (digits only: no sign, no
space, no overflow) and a bound for what each number indexes. On a UQFF expert stack
[E, out, in] (mistral.rs 0.9.5's MoE export in tests/data/uqff/real/moe), --expert N must be
< E and --rows A:B are rows of that expert, so B <= out; expert e's rows are rows
[e * out, (e + 1) * out) of the whole stack's dequantization (the slice checked below).

usage: test_numbers.py --cli TENSORBLOB --moe DIR --examples DIR --workdir DIR [--slm1]
"""
import argparse
import os
import shutil
import subprocess
import sys

FAILS = []
STACK = "model.layers.0.mlp.experts.gate_proj.weight"  # [4, 32, 256] q8_0
E, OUT, COLS = 4, 32, 256


def check(cond, what, detail=""):
    print(("ok: " if cond else "FAIL: ") + what + ("" if cond else " " + str(detail)[:500]))
    if not cond:
        FAILS.append(what)
    return cond


def run(cli, *args):
    p = subprocess.run([cli, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def refused(cli, work, what, args):
    """Exit 2 (usage error) and no output file."""
    out = os.path.join(work, "refused.out")
    if os.path.exists(out):
        os.remove(out)
    rc, so, se = run(cli, "dequant", "--out", out, *args)
    check(rc == 2 and not os.path.exists(out), what, (rc, so, se))


def test_expert(cli, moe, work):
    q8 = os.path.join(moe, "q8_0")
    whole = os.path.join(work, "whole.f32")
    rc, _, err = run(cli, "dequant", "--out", whole, q8, STACK)
    if not check(rc == 0 and os.path.getsize(whole) == E * OUT * COLS * 4, "dequant the whole stack", err):
        return
    data = open(whole, "rb").read()
    row = COLS * 4

    def rows_of(expert, a, b):
        return data[(expert * OUT + a) * row:(expert * OUT + b) * row]

    # the four outside findings
    refused(cli, work, "--expert 18446744073709551615 is refused (was: the whole stack)",
            ["--expert", "18446744073709551615", q8, STACK])
    refused(cli, work, "--expert ' -18446744073709551615' is refused (was: expert 1)",
            ["--expert", " -18446744073709551615", q8, STACK])
    refused(cli, work, "--expert 1 --rows 30:34 is refused: past the expert's 32 rows (was: rows of expert 2)",
            ["--expert", "1", "--rows", "30:34", q8, STACK])
    refused(cli, work, "--expert 1 --rows 18446744073709551615: is refused (was: 3 rows from a wrapped start)",
            ["--expert", "1", "--rows", "18446744073709551615:", q8, STACK])
    # more of the same
    for v in ["4", "-1", "+1", " 1", "1 ", "0x1", "1e0", "", "18446744073709551616", "99999999999999999999999"]:
        refused(cli, work, f"--expert {v!r} is refused", ["--expert", v, q8, STACK])
    refused(cli, work, "--expert 0 --rows 0:33 is refused", ["--expert", "0", "--rows", "0:33", q8, STACK])
    refused(cli, work, "--expert 3 --rows 33: is refused", ["--expert", "3", "--rows", "33:", q8, STACK])
    refused(cli, work, "--expert 2 --rows 5:4 is refused", ["--expert", "2", "--rows", "5:4", q8, STACK])
    refused(cli, work, "--expert 1 on a tensor that is no stack is refused", ["--expert", "1", q8, "lm_head.weight"])
    # what is accepted is the expert's rows
    for expert, rows, a, b in [(1, "1:3", 1, 3), (1, None, 0, OUT), (3, "30:", 30, OUT), (0, ":2", 0, 2),
                               (2, "0032:32", 32, 32)]:
        out = os.path.join(work, "part.f32")
        args = ["dequant", "--out", out, "--expert", str(expert)] + (["--rows", rows] if rows else []) + [q8, STACK]
        rc, _, err = run(cli, *args)
        check(rc == 0 and open(out, "rb").read() == rows_of(expert, a, b),
              f"--expert {expert} --rows {rows}: rows {a}:{b} of expert {expert}", err)


def test_other_numbers(cli, examples, work, slm1):
    tiny = os.path.join(examples, "tiny-llama", "model.safetensors")
    for v in [" 1:2", "+1:2", "1:-2", "1: 2", "-1:", "0x1:2", "18446744073709551615:", ":18446744073709551616"]:
        refused(cli, work, f"--rows {v!r} is refused", ["--rows", v, tiny, "lm_head.weight"])
    for v in [" 4", "+4", "4 ", "0x10", "4097", "-0", "18446744073709551617"]:
        refused(cli, work, f"--threads {v!r} is refused", ["--threads", v, tiny, "lm_head.weight"])
    for v in ["+5GB", " 5GB", "-5GB", "5 GB", "0", "18446744073709551616", "18446744073709551615GB"]:
        rc, _, err = run(cli, "export", "--max-shard-size", v, tiny, os.path.join(work, "exp"))
        check(rc == 2 and not os.path.exists(os.path.join(work, "exp")), f"--max-shard-size {v!r} is refused", err)
    if slm1:
        for v in [" 32", "+32", "32 ", "0x20", "1", "2147483648", "18446744073709551648"]:
            rc, _, err = run(cli, "convert", "--to", "slm1", "--dtype", "q4_0", "--block-size", v, tiny,
                             os.path.join(work, "m.slm"))
            check(rc == 2 and not os.path.exists(os.path.join(work, "m.slm")), f"--block-size {v!r} is refused",
                  (rc, err))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--moe", required=True)
    ap.add_argument("--examples", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--slm1", action="store_true")
    a = ap.parse_args()
    shutil.rmtree(a.workdir, ignore_errors=True)
    os.makedirs(a.workdir)
    test_expert(a.cli, a.moe, a.workdir)
    test_other_numbers(a.cli, a.examples, a.workdir, a.slm1)
    print(f"{len(FAILS)} failure(s)")
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
