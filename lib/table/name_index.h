// Open-addressing hash index from names to table positions, keyed by XXH3-64.
// Every hit is confirmed by comparing the full name: a hash match is never a guess.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/allocator.h"

namespace tblob {

uint64_t name_hash(const char *p, size_t n);

class NameIndex {
 public:
  NameIndex() = default;
  NameIndex(const NameIndex &) = delete;
  NameIndex &operator=(const NameIndex &) = delete;
  ~NameIndex() { reset(); }

  // Builds the index over n items whose names are read through get(ctx, i, &p, &len).
  // Returns false on allocation failure. When two items share a name, *dup_first and
  // *dup_second receive their positions and build returns true with has_duplicate().
  using NameFn = void (*)(const void *ctx, size_t i, const char **p, size_t *len);
  // hashes, when given, holds name_hash() of each item's name (computed earlier).
  bool build(const Allocator *a, size_t n, NameFn get, const void *ctx, const uint64_t *hashes = nullptr);
  bool has_duplicate() const { return dup_; }
  size_t dup_first() const { return dup_a_; }
  size_t dup_second() const { return dup_b_; }

  // Position of the item named (p, n), or SIZE_MAX.
  size_t find(const char *p, size_t n) const;
  void reset();

 private:
  void insert(size_t i, uint64_t h);
  // 8 bytes: the hash's high 32 bits as a tag, and the position + 1 (0 = empty). Half the
  // memory of a full-hash slot, so half the cache misses on a large table.
  struct Slot {
    uint32_t tag;
    uint32_t pos_plus_one;
  };
  static uint32_t tag_of(uint64_t h) { return static_cast<uint32_t>(h >> 32); }
  const Allocator *a_ = nullptr;
  Slot *slots_ = nullptr;
  size_t mask_ = 0;
  NameFn get_ = nullptr;
  const void *ctx_ = nullptr;
  bool dup_ = false;
  size_t dup_a_ = 0, dup_b_ = 0;
};

}  // namespace tblob
