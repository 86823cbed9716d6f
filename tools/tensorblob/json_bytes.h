// How the CLI's --json output carries bytes that are not UTF-8 (a GGUF tensor name, metadata
// key or value, a file name or an argument holding e.g. FF FE), so that every line is valid
// JSON (RFC 8259 and I-JSON: no lone surrogates) and every name survives the round trip:
//
//   - valid UTF-8 is written as it is (JSON's own escapes for '"', '\' and controls);
//   - a byte XX (80-FF) that is not part of a valid UTF-8 sequence is written as the code point
//     U+10FFXX, i.e. the escape \udbff\udfXX (a pair, so it is an ordinary character to every
//     parser; plane 16 is private use, and U+10FF80-U+10FFFF are never assigned);
//   - a name that really holds one of U+10FF80-U+10FFFF has that character's four bytes
//     (F4 8F BE|BF xx) escaped the same way, so the mapping stays one to one.
//
// Undoing it: map U+10FF80-U+10FFFF back to the byte 80-FF of the same low two hex digits
// and encode everything else as UTF-8 (Python: docs in README, tests/cli/test_json_bytes.py).
// The CLI undoes it itself for a tensor name given as an argument (arg_bytes), so the name
// jq or json.loads gives back finds the tensor.
#pragma once
#include <cstddef>
#include <string>

namespace tbcli {

// Length of the valid UTF-8 sequence at p[0..n) (1-4), or 0 when p[0] starts none. A
// sequence encoding U+10FF80-U+10FFFF counts as invalid: its bytes are escaped one by one.
size_t utf8_run(const unsigned char *p, size_t n);

// An argument as the name it stands for: each U+10FF80-U+10FFFF (F4 8F BE|BF xx) becomes the
// byte 80-FF it represents; every other byte is kept (raw non-UTF-8 bytes work too).
std::string arg_bytes(const char *arg);

}  // namespace tbcli
