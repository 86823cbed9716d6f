// name_hash() inline, for the caller that hashes every name of a table as the scan reads it
// (the safetensors table sink), where a call per short name is a measurable part of open.
// name_index.cpp defines name_hash() with it, so both are one function.
#pragma once
#include <cstddef>
#include <cstdint>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace tblob {

inline uint64_t name_hash_inline(const char *p, size_t n) { return XXH3_64bits(p, n); }

}  // namespace tblob
