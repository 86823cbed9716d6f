// The metadata key index: names -> row positions, at about 6 to 11 bytes a key. Metadata is
// looked up by key now and then, never in a hot loop, so this is the small index, not the
// fast one (NameIndex, whose 64-byte slot a name made a 20-byte GGUF key/value cost ten
// times its size): a table of 32-bit row numbers placed by hash (load at most 3/4) and one
// tag byte per entry, the names read back through get() to confirm a hit.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/allocator.h"
#include "table/name_hash.h"

namespace tblob {

class MetaIndex {
 public:
  using NameFn = void (*)(const void *ctx, size_t i, const char **p, size_t *len);
  MetaIndex() = default;
  MetaIndex(const MetaIndex &) = delete;
  MetaIndex &operator=(const MetaIndex &) = delete;
  ~MetaIndex() { reset(); }

  // Indexes n items whose names get(ctx, i) reports; get and ctx are kept for find(), so the
  // items must stay where they are while the index is used (rebuild after moving them).
  // False on allocation failure (or n >= 2^32 - 1). With two equal names, has_duplicate()
  // and dup_first() < dup_second() say which; find() returns the first.
  bool build(const Allocator *a, size_t n, NameFn get, const void *ctx);
  bool has_duplicate() const { return dup_; }
  size_t dup_first() const { return dup_a_; }
  size_t dup_second() const { return dup_b_; }
  // Position of the item named (p, n), or SIZE_MAX.
  size_t find(const char *p, size_t n) const;
  // Bytes the index holds (tests).
  size_t bytes() const { return cap_ * (sizeof(uint32_t) + 1); }
  void reset();

 private:
  const Allocator *a_ = nullptr;
  uint32_t *pos_ = nullptr;  // cap_ entries: the item's position
  uint8_t *tag_ = nullptr;   // cap_ entries: 0 empty, else the hash's top byte (1 for 0)
  size_t cap_ = 0;           // a power of two
  NameFn get_ = nullptr;
  const void *ctx_ = nullptr;
  NameHashKeys keys_ = name_hash_keys();
  bool dup_ = false;
  size_t dup_a_ = 0, dup_b_ = 0;
};

}  // namespace tblob
