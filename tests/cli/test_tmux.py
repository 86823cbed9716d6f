#!/usr/bin/env python3
"""The progress bar as a person sees it: `tensorblob dequant` of a 64 MB output runs in a real
terminal (a tmux pane); every byte the pane receives is logged (pipe-pane), so the log shows
the bar drawn at each step and the capture shows it finished. The same command piped writes
no control codes. Exit 77 (skipped) without tmux.

usage: test_tmux.py --cli TENSORBLOB --workdir DIR
"""
import argparse
import os
import re
import shutil
import subprocess
import sys



def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    tmux = shutil.which("tmux")
    if not tmux:
        print("tmux not installed: skipped")
        sys.exit(77)
    import numpy as np  # after the skip: a machine without tmux needs nothing else
    from safetensors.numpy import save_file
    work = os.path.abspath(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    # 4096 x 4096 f16 -> 64 MiB of f32: dequant writes it in four 16 MiB chunks, so the bar is
    # drawn at 0, 25, 50 and 75 % and finished at 100 %, whatever the speed.
    model = os.path.join(work, "big.safetensors")
    save_file({"big": np.full((4096, 4096), -1.5, dtype=np.float16)}, model)
    out = os.path.join(work, "big.f32")
    log = os.path.join(work, "pane.log")
    sock = os.path.join(work, "tmux.sock")
    fails = []

    def t(*a, **kw):
        return subprocess.run([tmux, "-S", sock, "-f", "/dev/null", *a], capture_output=True, text=True,
                              timeout=600, **kw)

    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    env.pop("TMUX", None)
    r = subprocess.run([tmux, "-S", sock, "-f", "/dev/null", "new-session", "-d", "-s", "tb", "-x", "160", "-y", "40",
                        "env", "PS1=$ ", "sh"], env=env, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        print(f"tmux cannot start a session here ({r.stderr.strip()}): skipped")
        sys.exit(77)
    try:
        t("pipe-pane", "-t", "tb", "-o", f"cat >> '{log}'")
        cmd = (f"'{args.cli}' dequant --out '{out}' '{model}' big; echo \"exit=$?\"; "
               f"'{tmux}' -S '{sock}' wait-for -S done")
        t("send-keys", "-t", "tb", cmd, "Enter")
        t("wait-for", "done")
        # Wait until pipe-pane has passed on the last line (bounded: a hang guard, not a timing check).
        for _ in range(600):
            if os.path.exists(log) and re.search(r"exit=\d", open(log, errors="replace").read()):
                break
            subprocess.run(["sleep", "0.1"])
        capture = t("capture-pane", "-t", "tb", "-p").stdout
    finally:
        t("kill-server")
    raw = open(log, errors="replace", newline="").read() if os.path.exists(log) else ""  # keep \r

    def check(cond, what, detail=""):
        print(("ok: " if cond else "FAIL: ") + what + ("" if cond else f" {detail}"))
        if not cond:
            fails.append(what)

    percents = [int(p) for p in re.findall(r"dequantizing \[[#.]{30}\]\s+(\d+)%", raw)]
    check(percents[:5] == [0, 25, 50, 75, 100], "the pane received the bar at 0, 25, 50, 75, 100 %", str(percents))
    check("\r" in raw and "\x1b[K" in raw, "redrawn in place (carriage return, erase line)")
    check(re.search(r"dequantizing \[#{30}\] 100%  67\.1 MB / 67\.1 MB  done in [0-9.]+ s", capture) is not None,
          "the screen shows the finished bar with human sizes", capture)
    check("exit=0" in capture, "dequant exited 0 on the terminal", capture)
    check(os.path.getsize(out) == 4096 * 4096 * 4, "every value written")
    # Piped: the same command prints nothing on stderr (no bar, no control codes).
    p = subprocess.run([args.cli, "dequant", "--out", out, model, "big"], capture_output=True, env=env, timeout=600)
    check(p.returncode == 0 and p.stderr == b"" and b"\x1b" not in p.stdout, "piped: no progress bar, no escapes",
          repr(p.stderr[:200]))
    print(f"{len(fails)} failure(s)")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
