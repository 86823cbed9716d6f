#!/usr/bin/env python3
"""Writes the seed corpora fuzz/corpora/<target>/seed_* (deterministic; needs only Python).

    python3 fuzz/make_seeds.py [--clean] [--gen-count N]

Every seed is a fuzz input: a file followed by the 3-byte parameter trailer of
fuzz/fuzz_common.h ([lim][fail][ctl], taken from the end). The files are:
  - the example models (examples/**/*.safetensors) and the sharded example's index;
  - valid files from tests/oracles/gen_headers.py (escapes, every dtype, odd layouts);
  - hand-built valid edge cases (empty header, metadata only, rank above the inline 64,
    zero-size tensors, sub-byte dtypes, leading and trailing whitespace, depth 127);
  - one hand-written invalid file per rejection in reliability.md section 6.1/6.2 (every
    safetensors status in include/tensorblob.h).
Most get the all-zero trailer (defaults, no allocation failure, memory only); a few get the
other variants (path mode, compact and tight limits, failing allocations, scratch layouts).
--clean removes existing seed_* files first (fuzzer-found files are kept). Files above
64 KiB are skipped: the corpora stay small and under the campaigns' -max_len.
"""
import argparse
import hashlib
import json
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TARGETS = ["fuzz_st_scan", "fuzz_open_memory"]
MAX_SEED = 64 * 1024


def st(header, data=b""):
    """A safetensors file from a header (str or bytes) and a data region."""
    if isinstance(header, str):
        header = header.encode("utf-8")
    return struct.pack("<Q", len(header)) + header + data


def tensor(dtype, shape, begin, end, extra=""):
    return ('{"dtype":"%s","shape":%s,"data_offsets":[%d,%d]%s}'
            % (dtype, json.dumps(shape), begin, end, extra))


def valid_cases():
    c = {}
    c["empty_header"] = st("{}")
    c["empty_header_padded"] = st("{}      ")
    c["leading_ws"] = st(' \n\t{"a":' + tensor("U8", [2], 0, 2) + "}", b"xy")
    c["metadata_only"] = st('{"__metadata__":{"format":"pt","k":"v"}}')
    c["metadata_null"] = st('{"__metadata__":null,"a":' + tensor("F32", [1], 0, 4) + "}", b"\0" * 4)
    c["metadata_escaped"] = st('{"__metadata__":{"k\\u00e9y":"v\\n\\"al\\"","\\ud83d\\ude00":""}}')
    c["scalar"] = st('{"s":' + tensor("F64", [], 0, 8) + "}", b"\1" * 8)
    c["zero_size"] = st('{"z":' + tensor("BF16", [0, 18446744073709551615], 0, 0)
                        + ',"y":' + tensor("U8", [3, 0], 0, 0) + "}")
    c["sub_byte"] = st('{"f4":' + tensor("F4", [2, 3], 0, 3) + ',"f6":'
                       + tensor("F6_E2M3", [4], 3, 6) + ',"f6b":' + tensor("F6_E3M2", [8], 6, 12) + "}",
                       b"\x11" * 12)
    c["rank_64"] = st('{"r":' + tensor("U8", [1] * 64, 0, 1) + "}", b"\7")
    c["rank_65"] = st('{"r":' + tensor("U8", [1] * 65, 0, 1) + "}", b"\7")
    c["rank_300"] = st('{"r":' + tensor("I16", [1] * 299 + [2], 0, 4) + "}", b"\7" * 4)
    c["escaped_names_and_fields"] = st(
        '{"a\\u0062":{"d\\u0074ype":"F\\u00332","\\u0073hape":[1],"data_offsets":[0,4]},'
        '"\\"q\\\\\\/\\b\\f\\n\\r\\t":' + tensor("U8", [1], 4, 5) + ","
        '"\\u00e9\\u4e2d\\ud83d\\ude00":' + tensor("U8", [1], 5, 6) + ","
        '"\u00e9\u4e2d\U0001F600raw":' + tensor("U8", [1], 6, 7) + ","
        '"":' + tensor("U8", [1], 7, 8) + "}", bytes(range(8)))
    c["unknown_fields"] = st('{"a":' + tensor("I32", [2], 0, 8, ',"x":[1,{"y":null},-2.5e3,true],"z":"s"')
                             + "}", b"\0" * 8)
    c["layout_order"] = st('{"b":' + tensor("U16", [2], 4, 8) + ',"a":' + tensor("U16", [2], 0, 4) + "}",
                           b"\0" * 8)
    c["all_dtypes"] = all_dtypes()
    c["many_tensors"] = many_tensors(300)
    nested = "[" * 125 + "]" * 125
    c["depth_127"] = st('{"a":' + tensor("U8", [1], 0, 1, ',"x":' + nested) + "}", b"\0")
    return c


DTYPES = [("BOOL", 8), ("U8", 8), ("I8", 8), ("I16", 16), ("U16", 16), ("F16", 16), ("BF16", 16),
          ("I32", 32), ("U32", 32), ("F32", 32), ("F64", 64), ("I64", 64), ("U64", 64),
          ("C64", 64), ("F8_E5M2", 8), ("F8_E4M3", 8), ("F8_E8M0", 8), ("F8_E4M3FNUZ", 8),
          ("F8_E5M2FNUZ", 8), ("F4", 4), ("F6_E2M3", 6), ("F6_E3M2", 6)]


def all_dtypes():
    parts, off = [], 0
    for name, bits in DTYPES:
        n = 8 * bits // 8  # 8 elements: whole bytes for every dtype
        parts.append('"t_%s":%s' % (name.lower(), tensor(name, [2, 4], off, off + n)))
        off += n
    return st("{" + ",".join(parts) + "}", bytes(i & 255 for i in range(off)))


def many_tensors(n):
    parts = []
    for i in range(n):
        parts.append('"model.layers.%d.mlp.up_proj.weight":%s' % (i, tensor("BF16", [1, 1], 2 * i, 2 * i + 2)))
    return st('{"__metadata__":{"format":"pt"},' + ",".join(parts) + "}", b"\0" * (2 * n))


def invalid_cases():
    ok_t = tensor("U8", [2], 0, 2)
    c = {}
    c["inv_empty"] = b""
    c["inv_7_bytes"] = b"\2\0\0\0\0\0\0"
    c["inv_header_too_large"] = struct.pack("<Q", 100_000_001) + b"{}"
    c["inv_header_length_u64max"] = b"\xff" * 8 + b"{}"
    c["inv_header_length"] = struct.pack("<Q", 50) + b"{}"
    c["inv_header_n0"] = struct.pack("<Q", 0)
    c["inv_utf8_in_string"] = st(b'{"a\xff":' + ok_t.encode() + b"}", b"ab")
    c["inv_utf8_overlong"] = st(b'{"\xc0\xaf":' + ok_t.encode() + b"}", b"ab")
    c["inv_utf8_surrogate"] = st(b'{"\xed\xa0\x80":' + ok_t.encode() + b"}", b"ab")
    c["inv_utf8_outside_string"] = st(b'{"a":' + ok_t.encode() + b"}\xe9", b"ab")
    c["inv_utf8_after_json_error"] = st(b'{"a":,"b\xff":1}')
    c["inv_json_trailing_comma"] = st('{"a":' + ok_t + ",}", b"ab")
    c["inv_json_leading_zero"] = st('{"a":' + tensor("U8", [2], 0, 2).replace("[0,2]", "[00,2]") + "}", b"ab")
    c["inv_json_unterminated"] = st('{"a":{"dtype":"U8')
    c["inv_json_lone_low_surrogate"] = st('{"\\udc00":' + ok_t + "}", b"ab")
    c["inv_json_lone_high_surrogate"] = st('{"\\ud800x":' + ok_t + "}", b"ab")
    c["inv_json_bad_escape"] = st('{"\\x41":' + ok_t + "}", b"ab")
    c["inv_json_raw_control"] = st('{"a\tb":' + ok_t + "}", b"ab")
    c["inv_json_trailing_garbage"] = st('{"a":' + ok_t + "} x", b"ab")
    c["inv_json_two_objects"] = st('{"a":' + ok_t + "}{}", b"ab")
    c["inv_json_nan"] = st('{"a":' + tensor("U8", [2], 0, 2, ',"x":NaN') + "}", b"ab")
    c["inv_json_comment"] = st('{/*c*/"a":' + ok_t + "}", b"ab")
    c["inv_json_ws_only"] = st("   ")
    c["inv_schema_top_array"] = st("[]")
    c["inv_schema_top_string"] = st('"x"')
    c["inv_schema_missing_dtype"] = st('{"a":{"shape":[2],"data_offsets":[0,2]}}', b"ab")
    c["inv_schema_missing_offsets"] = st('{"a":{"dtype":"U8","shape":[2]}}', b"ab")
    c["inv_schema_dtype_not_string"] = st('{"a":{"dtype":8,"shape":[2],"data_offsets":[0,2]}}', b"ab")
    c["inv_schema_offsets_three"] = st('{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,1,2]}}', b"ab")
    c["inv_schema_offsets_one"] = st('{"a":{"dtype":"U8","shape":[2],"data_offsets":[2]}}', b"ab")
    c["inv_schema_array_entry"] = st('{"a":["U8",[2],[0,2]]}', b"ab")
    c["inv_schema_duplicate_field"] = st('{"a":{"dtype":"U8","dtype":"U8","shape":[2],"data_offsets":[0,2]}}', b"ab")
    c["inv_schema_entry_null"] = st('{"a":null}')
    c["inv_dtype_unknown"] = st('{"a":' + tensor("F128", [2], 0, 2) + "}", b"ab")
    c["inv_dtype_lowercase"] = st('{"a":' + tensor("u8", [2], 0, 2) + "}", b"ab")
    c["inv_shape_negative"] = st('{"a":' + tensor("U8", [2], 0, 2).replace("[2]", "[-2]") + "}", b"ab")
    c["inv_shape_float"] = st('{"a":' + tensor("U8", [2], 0, 2).replace("[2]", "[2.0]") + "}", b"ab")
    c["inv_shape_exponent"] = st('{"a":' + tensor("U8", [2], 0, 2).replace("[2]", "[2e0]") + "}", b"ab")
    c["inv_shape_2pow64"] = st('{"a":' + tensor("U8", [2], 0, 2).replace("[2]", "[18446744073709551616]") + "}", b"ab")
    c["inv_shape_string"] = st('{"a":' + tensor("U8", [2], 0, 2).replace("[2]", '["2"]') + "}", b"ab")
    c["inv_shape_not_array"] = st('{"a":' + tensor("U8", [2], 0, 2).replace('"shape":[2]', '"shape":2') + "}", b"ab")
    c["inv_offsets_negative"] = st('{"a":' + tensor("U8", [2], 0, 2).replace("[0,2]", "[-0,2]") + "}", b"ab")
    c["inv_shape_overflow"] = st('{"a":' + tensor("U8", [4294967296, 4294967296], 0, 2) + "}", b"ab")
    c["inv_bits_overflow"] = st('{"a":' + tensor("F64", [2305843009213693952], 0, 2) + "}", b"ab")
    c["inv_misaligned_f4"] = st('{"a":' + tensor("F4", [3], 0, 2) + "}", b"ab")
    c["inv_misaligned_f6"] = st('{"a":' + tensor("F6_E2M3", [3], 0, 3) + "}", b"abc")
    c["inv_tensor_size"] = st('{"a":' + tensor("F32", [2], 0, 4) + "}", b"abcd")
    c["inv_offsets_reversed"] = st('{"a":' + tensor("U8", [0], 2, 0) + "}", b"ab")
    c["inv_offsets_hole"] = st('{"a":' + tensor("U8", [2], 0, 2) + ',"b":' + tensor("U8", [2], 3, 5) + "}", b"abcde")
    c["inv_offsets_overlap"] = st('{"a":' + tensor("U8", [2], 0, 2) + ',"b":' + tensor("U8", [2], 1, 3) + "}", b"abc")
    c["inv_offsets_not_at_zero"] = st('{"a":' + tensor("U8", [2], 1, 3) + "}", b"abc")
    c["inv_trailing_bytes"] = st('{"a":' + ok_t + "}", b"abPOLYGLOT")
    c["inv_truncated"] = st('{"a":' + tensor("U8", [8], 0, 8) + "}", b"abc")
    c["inv_truncated_huge_offsets"] = st('{"a":' + tensor("U8", [18446744073709551615], 0, 18446744073709551615) + "}")
    c["inv_duplicate_name"] = st('{"a":' + ok_t + ',"a":' + tensor("U8", [2], 2, 4) + "}", b"abcd")
    c["inv_duplicate_after_unescape"] = st('{"a":' + ok_t + ',"\\u0061":' + tensor("U8", [2], 2, 4) + "}", b"abcd")
    c["inv_tensor_named_metadata_escaped"] = st('{"__metadata\\u005f_":' + ok_t + "}", b"ab")
    c["inv_metadata_not_object"] = st('{"__metadata__":[],"a":' + ok_t + "}", b"ab")
    c["inv_metadata_number_value"] = st('{"__metadata__":{"k":1},"a":' + ok_t + "}", b"ab")
    c["inv_metadata_nested"] = st('{"__metadata__":{"k":{"x":"y"}}}')
    c["inv_metadata_duplicate_key"] = st('{"__metadata__":{"k":"1","k":"2"},"a":' + ok_t + "}", b"ab")
    c["inv_metadata_duplicate_key_escaped"] = st('{"__metadata__":{"k":"1","\\u006b":"2"}}')
    c["inv_metadata_twice"] = st('{"__metadata__":{},"__metadata__":{}}')
    nested = "[" * 126 + "]" * 126
    c["inv_depth_128"] = st('{"a":' + tensor("U8", [1], 0, 1, ',"x":' + nested) + "}", b"\0")
    c["inv_depth_objects"] = st('{"a":' + tensor("U8", [1], 0, 1, ',"x":' + '{"a":' * 130 + "1" + "}" * 130) + "}", b"\0")
    c["inv_depth_top_level"] = st("[" * 200 + "]" * 200)
    return c


def shard_index():
    with open(os.path.join(ROOT, "examples", "sharded", "model.safetensors.index.json"), "rb") as f:
        return f.read()


def generated(count, seed):
    gen = os.path.join(ROOT, "tests", "oracles", "gen_headers.py")
    out = {}
    if not os.path.exists(gen):
        print("note: %s not found; skipping generated seeds" % gen, file=sys.stderr)
        return out
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([sys.executable, gen, "--seed", str(seed), "--count", str(count), "--out", d],
                       check=True, stdout=subprocess.DEVNULL)
        for name in sorted(os.listdir(d)):
            if name.endswith(".safetensors"):
                with open(os.path.join(d, name), "rb") as f:
                    out["gen_s%d_%s" % (seed, name[:-len(".safetensors")])] = f.read()
    return out


def examples():
    out = {}
    for dirpath, _, files in sorted(os.walk(os.path.join(ROOT, "examples"))):
        for name in sorted(files):
            if name.endswith(".safetensors"):
                rel = os.path.relpath(os.path.join(dirpath, name), os.path.join(ROOT, "examples"))
                with open(os.path.join(dirpath, name), "rb") as f:
                    out["example_" + rel.replace("/", "_")[:-len(".safetensors")]] = f.read()
    return out


def trailer(ctl=0, fail=0, lim=0):
    return bytes([lim, fail, ctl])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clean", action="store_true", help="remove existing seed_* files first")
    ap.add_argument("--gen-count", type=int, default=24)
    args = ap.parse_args()

    files = {}
    files.update(examples())
    files.update(valid_cases())
    files.update(invalid_cases())
    files.update(generated(args.gen_count, 1))
    files["index_json"] = shard_index()

    # Variants beyond the all-zero trailer, per target: (file, ctl, fail, lim).
    variants = {
        "fuzz_open_memory": [
            ("example_tiny-llama_model", 3, 0, 0),   # also through tblob_model_open (read)
            ("escaped_names_and_fields", 3, 0, 0),
            ("inv_trailing_bytes", 3, 0, 0),
            ("index_json", 3, 0, 0),
            ("example_tiny-llama_model", 0, 1, 0),   # first allocation fails
            ("example_tiny-llama_model", 0, 3, 0),
            ("many_tensors", 0, 7, 0),
            ("metadata_escaped", 3, 2, 0),
            ("example_tiny-llama_model", 4, 0, 0),   # compact limits
            ("rank_300", 4, 0, 0),
            ("escaped_names_and_fields", 8, 0, 0x49),  # tight limits
            ("many_tensors", 8, 0, 0xFF),
        ],
        "fuzz_st_scan": [
            ("example_tiny-llama_model", 1, 0, 0),   # scratch one byte short
            ("example_tiny-llama_model", 2, 0, 3),   # misaligned scratch
            ("inv_duplicate_after_unescape", 3, 0, 0),  # generous scratch
            ("inv_metadata_duplicate_key_escaped", 0, 0, 0),
            ("many_tensors", 2, 5, 0),
            ("rank_300", 4, 0, 0),
            ("escaped_names_and_fields", 8, 0, 0x49),
            ("metadata_escaped", 8, 1, 0x12),
        ],
    }

    total = 0
    for t in TARGETS:
        d = os.path.join(HERE, "corpora", t)
        os.makedirs(d, exist_ok=True)
        if args.clean:
            for name in os.listdir(d):
                if name.startswith("seed_"):
                    os.unlink(os.path.join(d, name))
        entries = [(k, v, trailer()) for k, v in sorted(files.items())]
        for (k, ctl, fail, lim) in variants[t]:
            entries.append(("%s_c%d_f%d_l%d" % (k, ctl, fail, lim), files[k], trailer(ctl, fail, lim)))
        for name, body, tr in entries:
            blob = body + tr
            if len(blob) > MAX_SEED:
                print("skip %s (%d bytes)" % (name, len(blob)), file=sys.stderr)
                continue
            with open(os.path.join(d, "seed_" + name), "wb") as f:
                f.write(blob)
            total += len(blob)
    print("wrote %d bytes of seeds" % total)


if __name__ == "__main__":
    main()
