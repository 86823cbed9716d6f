// FNV-1a 64 (Fowler-Noll-Vo, variant 1a, 64-bit): the name hash of SLM1 directories.
// Offset basis 0xcbf29ce484222325, prime 0x100000001b3, over the exact bytes given (no
// terminator, no normalisation). Not collision resistant: a hash match is never a proof
// that two names are equal (docs/slm1.md section 9).
#pragma once
#include <cstddef>
#include <cstdint>

namespace tblob {

constexpr uint64_t kFnv1a64Basis = 0xcbf29ce484222325ull;
constexpr uint64_t kFnv1a64Prime = 0x100000001b3ull;

// Continues a hash over more bytes (start with kFnv1a64Basis).
inline uint64_t fnv1a64_update(uint64_t h, const void *data, size_t len) {
  const uint8_t *p = static_cast<const uint8_t *>(data);
  for (size_t i = 0; i < len; ++i) {
    h ^= p[i];
    h *= kFnv1a64Prime;
  }
  return h;
}

inline uint64_t fnv1a64(const void *data, size_t len) {
  return fnv1a64_update(kFnv1a64Basis, data, len);
}

}  // namespace tblob
