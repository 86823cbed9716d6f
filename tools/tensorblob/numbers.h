// The one parser of numbers given on the command line (--rows, --expert, --threads,
// --block-size, --max-shard-size, --layer N): decimal digits only, so no sign, no space, no
// "0x", no overflow, and a bound for what the number indexes. strtoull accepts " -1" and
// wraps it to 2^64 - 1; nothing here wraps.
#pragma once
#include <cstddef>
#include <cstdint>

namespace tbcli {

// s[0..n) as a decimal number <= max: 1 to 20 digits '0'-'9' and nothing else (leading zeros
// allowed). False, with *out untouched, otherwise.
bool parse_number(const char *s, size_t n, uint64_t max, uint64_t *out);
// The same for a NUL-terminated s.
bool parse_number(const char *s, uint64_t max, uint64_t *out);
// The decimal digits at the start of s (at most 20), for values with a unit after them.
size_t digit_prefix(const char *s);

}  // namespace tbcli
