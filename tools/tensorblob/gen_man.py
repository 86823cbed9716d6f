#!/usr/bin/env python3
"""Writes tensorblob.1 from the tool's own usage text, so the man page says what --help says.

usage: gen_man.py TENSORBLOB VERSION OUT
Runs `TENSORBLOB --help`, takes the command names from its "commands:" list, runs
`TENSORBLOB help NAME` for each and lays the texts out as roff sections.
"""
import subprocess
import sys


def run(tool, *args):
    p = subprocess.run([tool, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    if p.returncode != 0:
        sys.exit(f"gen_man.py: {tool} {' '.join(args)} exited {p.returncode}: {p.stderr.decode()}")
    return p.stdout.decode("utf-8")


def esc(line):
    line = line.replace("\\", "\\e").replace("-", "\\-")
    if line.startswith((".", "'")):
        line = "\\&" + line
    return line


def verbatim(text):
    return [".nf"] + [esc(l) for l in text.rstrip("\n").split("\n")] + [".fi"]


def sections(text):
    """Splits main help text into blocks separated by blank lines."""
    return [b for b in text.strip("\n").split("\n\n")]


def main():
    tool, version, out = sys.argv[1:4]
    main_help = run(tool, "--help")
    blocks = sections(main_help)
    usage = blocks[0]
    description = blocks[1]
    commands_block = next(b for b in blocks if b.startswith("commands:"))
    names = [l.split()[0] for l in commands_block.split("\n")[1:] if l.strip()]
    exit_block = next(b for b in blocks if b.startswith("exit status:"))
    notes = [b for b in blocks if b not in (usage, description, commands_block, exit_block)]

    lines = [f'.TH TENSORBLOB 1 "" "tensorblob {version}" "User Commands"',
             ".SH NAME",
             "tensorblob \\- open, validate, compare and dequantize model\\-weight containers",
             ".SH SYNOPSIS"]
    lines += verbatim("\n".join(l.strip() for l in usage.replace("usage: ", "", 1).split("\n")))
    lines += [".SH DESCRIPTION"] + [esc(l) for l in description.split("\n")]
    for n in notes:
        lines += [".PP"] + [esc(l) for l in n.split("\n")]
    lines += [".SH COMMANDS"]
    for name in names:
        lines += [f".SS {esc(name)}"] + verbatim(run(tool, "help", name))
    lines += [".SH \"EXIT STATUS\""] + verbatim("\n".join(exit_block.split("\n")[1:]))
    lines += [".SH ENVIRONMENT",
              ".TP", "NO_COLOR",
              "When set and not empty, output is never coloured.",
              ".TP", "TBLOB_KERNEL",
              "Forces a dequantization kernel set (scalar, avx2, avx512, neon).",
              ".SH \"SEE ALSO\"",
              "tensorblob completion bash|zsh|fish prints shell completion scripts."]
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
