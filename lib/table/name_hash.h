// The 64-bit hash the name indexes key on: 16 bytes per folded 64x64->128-bit multiply, the
// last 16 bytes (or a short name's bytes) read with overlapping loads, the length mixed in at
// the end. A lookup among many names hashes once and then mostly waits on memory, so the hash
// is a visible share of a hit: this one needs no secret table and one multiply per 16 bytes
// (a hit among 100,000 model-like names measured about 5 ns faster than with XXH3). It is never
// stored nor shown (SLM1 files carry FNV-1a, their own), so it may change between versions;
// NameHasher gives the same value for bytes fed in pieces.
// Its four keys are drawn at random once per process (name_hash_keys()): with fixed keys a
// file could carry names chosen offline to share their low bits, which piles them into one
// probe run of every open-addressing table built over them, and an open of n such names took
// time in n squared (`tensorblob inspect` of 50,000 such names: 0.18 s, against 0.03 s for
// ordinary names and for the same names under random keys).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/endian.h"

namespace tblob {

struct NameHashKeys {
  uint64_t seed, k1, k2, k3;
};

// This process's keys: the same in every call (every index and scan of the process agrees),
// unpredictable from outside. Cheap after the first call, safe from any thread.
NameHashKeys name_hash_keys();

namespace name_hash_detail {

// The low and high halves of a * b, xor-ed.
inline uint64_t fold_mul(uint64_t a, uint64_t b) {
#if defined(__SIZEOF_INT128__)
  __extension__ typedef unsigned __int128 u128;  // a compiler extension: -Wpedantic is told so
  const u128 r = static_cast<u128>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
#else
  // 32-bit targets: the same 128-bit product from four 32x32 products.
  const uint64_t al = a & 0xFFFFFFFFu, ah = a >> 32, bl = b & 0xFFFFFFFFu, bh = b >> 32;
  const uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
  const uint64_t mid = (ll >> 32) + (lh & 0xFFFFFFFFu) + (hl & 0xFFFFFFFFu);
  const uint64_t lo = (mid << 32) | (ll & 0xFFFFFFFFu);
  const uint64_t hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
  return lo ^ hi;
#endif
}

inline uint64_t block(const NameHashKeys &k, uint64_t h, const uint8_t *p) {
  return fold_mul(load_le64(p) ^ k.k1, load_le64(p + 8) ^ h);
}

// A name of n <= 16 bytes as two words (n = 0: both zero; the length is mixed in by finish).
inline void small(const uint8_t *p, size_t n, uint64_t *a, uint64_t *b) {
  if (n >= 8) {
    *a = load_le64(p);
    *b = load_le64(p + n - 8);
  } else if (n >= 4) {
    *a = load_le32(p);
    *b = load_le32(p + n - 4);
  } else if (n > 0) {
    *a = static_cast<uint64_t>(p[0]) | static_cast<uint64_t>(p[n / 2]) << 8 | static_cast<uint64_t>(p[n - 1]) << 16;
    *b = 0;
  } else {
    *a = *b = 0;
  }
}

inline uint64_t finish(const NameHashKeys &k, uint64_t h, uint64_t a, uint64_t b, uint64_t n) {
  return fold_mul(fold_mul(a ^ k.k2, b ^ h) ^ k.k3, n ^ k.seed);
}

}  // namespace name_hash_detail

inline uint64_t name_hash(const NameHashKeys &k, const char *name, size_t n) {
  namespace d = name_hash_detail;
  const uint8_t *p = reinterpret_cast<const uint8_t *>(name);
  uint64_t a, b, h = k.seed;
  if (n <= 16) {
    d::small(p, n, &a, &b);
  } else {
    for (size_t i = 0; n - i > 16; i += 16) h = d::block(k, h, p + i);  // every block with more after it
    a = load_le64(p + n - 16);
    b = load_le64(p + n - 8);
  }
  return d::finish(k, h, a, b, n);
}

// name_hash of bytes that arrive in pieces (names decoded from JSON escapes), without
// allocating: the bytes not yet folded in, at most 32, wait in buf_.
class NameHasher {
 public:
  explicit NameHasher(const NameHashKeys &k) : k_(k), h_(k.seed) {}
  void update(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      buf_[q_++] = p[i];
      if (q_ == sizeof(buf_)) {  // 16 more bytes follow its first block: fold it in
        h_ = name_hash_detail::block(k_, h_, buf_);
        std::memcpy(buf_, buf_ + 16, 16);
        q_ = 16;
      }
    }
    n_ += n;
  }
  uint64_t digest() const {
    namespace d = name_hash_detail;
    uint64_t a, b, h = h_;
    if (n_ <= 16) {
      d::small(buf_, static_cast<size_t>(n_), &a, &b);
    } else {
      if (q_ > 16) h = d::block(k_, h, buf_);  // the last block with more after it
      a = load_le64(buf_ + q_ - 16);
      b = load_le64(buf_ + q_ - 8);
    }
    return d::finish(k_, h, a, b, n_);
  }

 private:
  NameHashKeys k_;
  uint8_t buf_[32] = {};
  size_t q_ = 0;
  uint64_t n_ = 0;
  uint64_t h_;
};

}  // namespace tblob
