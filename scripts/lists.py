#!/usr/bin/env python3
"""The lists the library defines once, and every copy generated from or checked against them.

    lists.py [--write] [--root REPO_ROOT]

Sources (docs/architecture.md, "Lists"):
  lib/core/status_list.def          statuses: name, number, family, message
  include/tensorblob.h tblob_family families (the header is their one table)
  lib/core/format_list.def       container formats
  lib/core/dtype_list.def           element types
  lib/dequant/quant_scheme_list.def quantization schemes
  lib/dequant/kernel_set.h kSet*    kernel sets (the kernel registry)

Generated (--write rewrites them, the default checks them):
  bindings/rust/tensorblob/src/error.rs   the `statuses! { ... }` list and `families! { ... }`
  docs/errors.md                          the table of families and their statuses
Checked (each mismatch is one FAIL line):
  the header's tblob_status / tblob_format / tblob_dtype / tblob_quant_scheme enums (the
  compiler checks the same from the .def includes), docs/errors.md, bindings/go/status_gen.go
  (made by internal/statusgen from the header), Go's format, dtype and family lists, Rust's
  Format, DType and Family enums, Python's family-to-exception map and format docstring, the
  Rust crate docs, the CLI test's feature list, the names of kernel sets in the header and the
  bindings' docs.
Prints `N passed, N failed` last; exit status 1 when anything failed (or is stale).
"""
import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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

    def same(self, got, want, what):
        """Compares two lists; on a difference names what is missing, extra or out of order."""
        if got == want:
            self.passed += 1
            return True
        missing = [w for w in want if w not in got][:10]
        extra = [g for g in got if g not in want][:10]
        detail = []
        if missing:
            detail.append("missing %s" % ", ".join(map(str, missing)))
        if extra:
            detail.append("not in the list: %s" % ", ".join(map(str, extra)))
        if not detail:
            detail.append("order differs")
        return self.check(False, "%s: %s" % (what, "; ".join(detail)))


def read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as f:
        return f.read()


def strip_c_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def def_rows(rel, macro, ncols):
    """Rows of an X-macro list: [tuple of the columns as strings], string quotes removed."""
    text = strip_c_comments(read(rel))
    rows = []
    for m in re.finditer(r"^\s*%s\((.*)\)\s*$" % macro, text, re.M):
        cols = [c.strip() for c in re.findall(r'\s*("(?:[^"\\]|\\.)*"|[^,]+)', m.group(1))]
        if len(cols) != ncols:
            raise SystemExit("%s: cannot parse %s" % (rel, m.group(0).strip()))
        rows.append(tuple(c[1:-1] if c.startswith('"') else c for c in cols))
    return rows


def header_enum(header, name):
    """[(enumerator, number)] of `typedef enum name { ... }`, sentinels ending in _ left out."""
    text = strip_c_comments(header)
    m = re.search(r"typedef\s+enum\s+%s\s*\{([^}]*)\}" % name, text)
    if not m:
        return None
    out = []
    for e, n in re.findall(r"\b([A-Z][A-Z0-9_]*)\s*=\s*(-?\d+)", m.group(1)):
        if not e.endswith("_"):
            out.append((e, int(n)))
    return out


# ---- generated: the Rust Status and Family enums ----------------------------------------------

def rust_variant(cname, prefix):
    """TBLOB_E_UQFF_PRE_1_0 -> UqffPre10, TBLOB_FAMILY_NOT_FOUND -> NotFound."""
    return "".join(w[:1] + w[1:].lower() for w in cname[len(prefix):].split("_") if w)


def rust_status_block(statuses):
    return "".join("    %s = %s,\n" % (rust_variant(n, "TBLOB_E_"), n) for n, _, _, _ in statuses if n != "TBLOB_OK")


def rust_family_block(families):
    return "".join("    %s = %s,\n" % (rust_variant(n, "TBLOB_FAMILY_"), n) for n, _ in families
                   if n not in ("TBLOB_FAMILY_UNKNOWN",))


def replace_block(text, opener, body):
    """The text with the lines between `opener` and the next line `}` replaced by body."""
    i = text.find(opener + "\n")
    if i < 0:
        return None
    start = i + len(opener) + 1
    end = text.find("\n}\n", start - 1)
    if end < 0:
        return None
    return text[:start] + body + text[end + 1:]


def main():
    global ROOT
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true", help="regenerate the generated files")
    ap.add_argument("--root", default=ROOT)
    args = ap.parse_args()
    ROOT = args.root
    c = Checker()
    header = read("include", "tensorblob.h")

    # ---- statuses ----------------------------------------------------------------------------
    statuses = def_rows("lib/core/status_list.def", "TBLOB_STATUS", 4)
    families = header_enum(header, "tblob_family")
    c.check(bool(statuses) and bool(families), "status list and tblob_family enum found")
    fam_names = [f for f, _ in families]
    hdr_status = header_enum(header, "tblob_status")
    c.same(hdr_status, [(n, int(v)) for n, v, _, _ in statuses],
           "include/tensorblob.h tblob_status vs lib/core/status_list.def (name, number)")
    nums = [int(v) for _, v, _, _ in statuses]
    c.check(len(set(nums)) == len(nums), "status numbers are unique")
    for n, v, fam, msg in statuses:
        c.check("TBLOB_FAMILY_" + fam in fam_names, "%s: family %s is not in tblob_family" % (n, fam))
        c.check(msg.strip() != "", "%s: empty message" % n)
        c.check((fam == "OK") == (n == "TBLOB_OK"), "%s: only TBLOB_OK is of family OK" % n)
    used = {"TBLOB_FAMILY_" + f for _, _, f, _ in statuses}
    for f in fam_names:
        c.check(f == "TBLOB_FAMILY_UNKNOWN" or f in used, "%s: no status of this family" % f)
    # The families' names: status_text.cpp spells them in enum order, lower case, '-' for '_'.
    text_cpp = read("lib", "core", "status_text.cpp")
    m = re.search(r"kFamilyNames\[\]\s*=\s*\{([^}]*)\}", text_cpp)
    want_fam_names = [f[len("TBLOB_FAMILY_"):].lower().replace("_", "-") for f in fam_names]
    c.same(re.findall(r'"([^"]*)"', m.group(1)) if m else [], want_fam_names,
           "lib/core/status_text.cpp kFamilyNames vs tblob_family")
    # docs/errors.md: one row per status, same number (test_errors_catalogue.py checks the prose).
    doc = {}
    for line in read("docs", "errors.md").splitlines():
        dm = re.match(r"^\|\s*(-?\d+)\s*\|\s*`(TBLOB_(?:OK|E_[A-Z0-9_]+))`\s*\|", line)
        if dm:
            doc.setdefault(dm.group(2), []).append(int(dm.group(1)))
    c.same(sorted((n, v[0]) for n, v in doc.items()), sorted((n, int(v)) for n, v, _, _ in statuses),
           "docs/errors.md rows vs lib/core/status_list.def")
    # docs/errors.md's family table is generated.
    err_path = os.path.join(ROOT, "docs", "errors.md")
    errors_md = read("docs", "errors.md")
    begin = "<!-- BEGIN generated by scripts/lists.py from lib/core/status_list.def; do not edit -->\n"
    end = "<!-- END generated -->"
    table = ["| family | # | statuses |", "|---|---|---|"]
    for f, v in families:
        short = f[len("TBLOB_FAMILY_"):]
        members = [n for n, _, fam, _ in statuses if fam == short]
        if f == "TBLOB_FAMILY_UNKNOWN":
            members_text = "a number that is not a status of the library"
        else:
            members_text = ", ".join("`%s`" % n for n in members)
        table.append("| `%s` | %d | %s |" % (short.lower().replace("_", "-"), v, members_text))
    bi, ei = errors_md.find(begin), errors_md.find(end)
    if c.check(0 <= bi < ei, "docs/errors.md has the generated family table markers"):
        new_md = errors_md[:bi + len(begin)] + "\n".join(table) + "\n" + errors_md[ei:]
        if args.write and new_md != errors_md:
            with open(err_path, "w", encoding="utf-8") as f:
                f.write(new_md)
            print("wrote %s" % err_path)
        else:
            c.check(new_md == errors_md, "docs/errors.md family table is stale: run scripts/lists.py --write")
    # Go: status_gen.go (statusgen output from the header) names every status with its number.
    gogen = read("bindings", "go", "status_gen.go")
    go_consts = dict(re.findall(r"^\t(\w+) Status = (-?\d+)$", gogen, re.M))
    go_names = re.findall(r'^\t(\w+):\s+"(TBLOB_(?:OK|E_[A-Z0-9_]+))",$', gogen, re.M)
    c.same([(cn, int(go_consts.get(g, 1))) for g, cn in go_names], [(n, int(v)) for n, v, _, _ in statuses],
           "bindings/go/status_gen.go vs lib/core/status_list.def (run go generate in bindings/go)")
    # Go's Family constants: one per tblob_family, same number.
    gost = read("bindings", "go", "status.go")
    go_fams = re.findall(r"^\t(Family\w+)\s+Family = (\d+)", gost, re.M)
    c.same([int(v) for _, v in go_fams], [v for _, v in families], "bindings/go/status.go Family constants vs tblob_family")
    # Python: the exception class of each family; no status numbers of its own.
    pyerr = read("bindings", "python", "src", "tensorblob", "_errors.py")
    pm = re.search(r"_FAMILY_CLASSES\s*=\s*\{([^}]*)\}", pyerr)
    c.same(sorted(re.findall(r'"([a-z-]+)"\s*:', pm.group(1))) if pm else [],
           sorted(n for n in want_fam_names if n != "unknown"),
           "bindings/python/src/tensorblob/_errors.py _FAMILY_CLASSES vs tblob_family")
    c.check(not re.search(r"\{\s*-\d+\s*,|range\(\s*-\d+", pyerr),
            "bindings/python/src/tensorblob/_errors.py spells no status numbers (it asks tblob_status_family)")

    # Python's named status numbers (_core.py: byte-source callbacks return them).
    pycore_text = read("bindings", "python", "src", "tensorblob", "_core.py")
    by_name = {n: int(v) for n, v, _, _ in statuses}
    for names, values in re.findall(r"^((?:_E_[A-Z_]+,\s*)*_E_[A-Z_]+)\s*=\s*((?:-?\d+,\s*)*-?\d+)\s*$", pycore_text, re.M):
        for n, v in zip(re.split(r",\s*", names), re.split(r",\s*", values)):
            c.check(by_name.get("TBLOB" + n) == int(v), "bindings/python/src/tensorblob/_core.py %s = %s: the list says %s"
                    % (n, v, by_name.get("TBLOB" + n)))

    for n, v in re.findall(r'"(TBLOB_E_[A-Z0-9_]+)",\s*(-\d+)', pycore_text):
        c.check(by_name.get(n) == int(v), "bindings/python/src/tensorblob/_core.py raises %s as %s: the list says %s"
                % (n, v, by_name.get(n)))

    # Rust: error.rs's lists are generated.
    rs_path = os.path.join(ROOT, "bindings", "rust", "tensorblob", "src", "error.rs")
    rs = read("bindings", "rust", "tensorblob", "src", "error.rs")
    new_rs = replace_block(rs, "statuses! {", rust_status_block(statuses))
    if new_rs is not None:
        new_rs = replace_block(new_rs, "families! {", rust_family_block(families))
    if c.check(new_rs is not None, "error.rs has `statuses! {` and `families! {` blocks"):
        if args.write and new_rs != rs:
            with open(rs_path, "w", encoding="utf-8") as f:
                f.write(new_rs)
            print("wrote %s" % rs_path)
        else:
            c.check(new_rs == rs, "bindings/rust/tensorblob/src/error.rs is stale: run scripts/lists.py --write")

    # ---- formats -----------------------------------------------------------------------------
    formats = def_rows("lib/core/format_list.def", "TBLOB_FORMAT", 4)
    c.same(header_enum(header, "tblob_format"), [("TBLOB_FORMAT_UNKNOWN", 0)] +
           [("TBLOB_FORMAT_" + i, int(n)) for i, n, _, _ in formats],
           "include/tensorblob.h tblob_format vs lib/core/format_list.def")
    fnames = [name for _, _, name, _ in formats]
    gotypes = read("bindings", "go", "types.go")
    gm = re.search(r"formatNames\s*=\s*\[\]string\{([^}]*)\}", gotypes)
    c.same(re.findall(r'"([^"]*)"', gm.group(1)) if gm else [], ["unknown"] + fnames,
           "bindings/go/types.go formatNames vs lib/core/format_list.def")
    rsmodel = read("bindings", "rust", "tensorblob", "src", "model.rs")
    c.same(re.findall(r"sys::(TBLOB_FORMAT_\w+) as u32 => Format::", rsmodel),
           ["TBLOB_FORMAT_" + i for i, _, _, _ in formats], "bindings/rust Format::from_raw vs the format list")
    pycore = read("bindings", "python", "src", "tensorblob", "_core.py")
    pd = re.search(r'def format\(self\) -> str:\s*"""(.*?)"""', pycore, re.S)
    for name in fnames:
        c.check(bool(pd) and ('"%s"' % name) in pd.group(1), "Python SafeOpen.format docstring names \"%s\"" % name)
    rslib = read("bindings", "rust", "tensorblob", "src", "lib.rs")
    crate_doc = "\n".join(l for l in rslib.splitlines() if l.startswith("//!")).lower()
    for name in fnames:
        c.check(name.split("-")[0] in crate_doc, "Rust crate docs (tensorblob/src/lib.rs) mention %s" % name)
    cli_meson = read("tests", "cli", "meson.build")
    for name in fnames:
        c.check(re.search(r"\b%s=@" % re.escape(name.replace("-", "_")), cli_meson) is not None
                or name.startswith("safetensors"),
                "tests/cli/meson.build passes the CLI test whether %s is built" % name)

    # ---- dtypes ------------------------------------------------------------------------------
    dtypes = def_rows("lib/core/dtype_list.def", "TBLOB_DTYPE", 4)
    c.same(header_enum(header, "tblob_dtype"), [("TBLOB_DTYPE_INVALID", 0)] +
           [("TBLOB_DTYPE_" + i, int(n)) for i, n, _, _ in dtypes],
           "include/tensorblob.h tblob_dtype vs lib/core/dtype_list.def")
    dnames = [name for _, _, name, _ in dtypes]
    gd = re.search(r"dtypeNames\s*=\s*\[dtypeCount\]string\{([^}]*)\}", gotypes)
    c.same(re.findall(r'"([^"]*)"', gd.group(1)) if gd else [], ["INVALID"] + dnames,
           "bindings/go/types.go dtypeNames vs lib/core/dtype_list.def")
    gc = dict((int(v), k) for k, v in re.findall(r"^\t(\w+)\s+DType = (\d+)$", gotypes, re.M))
    c.same([gc.get(int(n)) for _, n, _, _ in dtypes],
           [("Bool" if i == "BOOL" else i.replace("_", "")) for i, _, _, _ in dtypes],
           "bindings/go/types.go DType constants vs lib/core/dtype_list.def")
    rsd = read("bindings", "rust", "tensorblob", "src", "dtype.rs")
    c.same(re.findall(r"= (TBLOB_DTYPE_\w+),", rsd), ["TBLOB_DTYPE_" + i for i, _, _, _ in dtypes],
           "bindings/rust/tensorblob/src/dtype.rs DType vs lib/core/dtype_list.def")

    # ---- quantization schemes ----------------------------------------------------------------
    schemes = def_rows("lib/dequant/quant_scheme_list.def", "TBLOB_QUANT_SCHEME", 4)
    c.same(header_enum(header, "tblob_quant_scheme"), [("TBLOB_QUANT_NONE", 0)] +
           [("TBLOB_QUANT_" + i, int(n)) for i, n, _, _ in schemes],
           "include/tensorblob.h tblob_quant_scheme vs lib/dequant/quant_scheme_list.def")
    qd = read("lib", "dequant", "quant_desc.h")
    qm = re.search(r"enum class QuantScheme : uint32_t \{(.*?)\};", qd, re.S)
    c.same([(k, int(v)) for k, v in re.findall(r"\b(k\w+) = (\d+)", strip_c_comments(qm.group(1)))] if qm else [],
           [("kInvalid", 0)] + [(k, int(n)) for _, n, k, _ in schemes],
           "lib/dequant/quant_desc.h QuantScheme vs lib/dequant/quant_scheme_list.def")
    hq = re.search(r"/\*([^/]*)\*/\s*TBLOB_API const char \*tblob_quant_scheme_name", header)
    for _, _, _, name in schemes:
        if not name.startswith("F") and not name.startswith("BF"):
            c.check(bool(hq) and ('"%s"' % name) in hq.group(1), "the header's tblob_quant_scheme_name comment names \"%s\"" % name)

    # ---- kernel sets -------------------------------------------------------------------------
    kset = read("lib", "dequant", "kernel_set.h")
    kernels = re.findall(r'^constexpr const char kSet\w+\[\] = "(\w+)";', kset, re.M)
    c.check("scalar" in kernels and len(kernels) >= 2, "kernel sets found in lib/dequant/kernel_set.h (kSet*)")
    hk = re.search(r"/\* Kernel sets:(.*?)\*/", header, re.S)
    pyinit = read("bindings", "python", "src", "tensorblob", "__init__.py")
    pk = re.search(r'def kernel\(\) -> str:\s*"""(.*?)"""', pyinit, re.S)
    for k in kernels:
        c.check(bool(hk) and ('"%s"' % k) in hk.group(1), "the header's kernel-set comment names \"%s\"" % k)
        c.check(bool(pk) and ('"%s"' % k) in pk.group(1), "Python tensorblob.kernel() docstring names \"%s\"" % k)

    print("%d passed, %d failed" % (c.passed, c.failed))
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
