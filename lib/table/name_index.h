// Open-addressing hash index from names to table positions, keyed by name_hash().
// Every hit is confirmed by comparing the full name: a hash match is never a guess.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/allocator.h"
#include "table/name_hash.h"

namespace tblob {

// An item's name as a reader saw it, with its name_hash(): building from these reads one
// compact array instead of the rows the names live in.
struct NameRef {
  uint64_t hash;
  const char *p;
  size_t len;
};

class NameIndex {
 public:
  NameIndex() = default;
  NameIndex(const NameIndex &) = delete;
  NameIndex &operator=(const NameIndex &) = delete;
  ~NameIndex() { reset(); }

  // Builds the index over n items whose names are read through get(ctx, i, &p, &len). The
  // names' bytes must stay where get() reports them while the index is used (the slots point
  // at them). Returns false on allocation failure. When two items share a name, *dup_first
  // and *dup_second receive their positions and build returns true with has_duplicate().
  using NameFn = void (*)(const void *ctx, size_t i, const char **p, size_t *len);
  // hashes, when given, holds name_hash() of each item's name (computed earlier).
  bool build(const Allocator *a, size_t n, NameFn get, const void *ctx, const uint64_t *hashes = nullptr);
  // The same with refs[i] describing item i (get() is still called for names of kLongName
  // bytes or more).
  bool build(const Allocator *a, size_t n, NameFn get, const void *ctx, const NameRef *refs);
  bool has_duplicate() const { return dup_; }
  size_t dup_first() const { return dup_a_; }
  size_t dup_second() const { return dup_b_; }

  // Position of the item named (p, n), or SIZE_MAX.
  size_t find(const char *p, size_t n) const;
  // The same with h = name_hash(p, n) already taken (tests pass other values to force equal
  // fingerprints: the result must still depend only on the names).
  size_t find_hashed(const char *p, size_t n, uint64_t h) const;
  void reset();

 private:
  // Two arrays of `cap` entries (cap >= 1.25 n). tags_[s] is 0 for an empty slot, else the
  // hash's top byte (1 for 0): one byte per slot, so the probe of a 100,000-name index reads a
  // 128 KiB array, 16 tags per compare, and a miss touches nothing else but for a false tag
  // match, which costs a cold slot read for 1 in 255 probed tags (with seven bits, 1 in 128
  // made misses 2-3 ns slower at this index's load of 0.76). slots_[s] is one cache line holding the
  // position, the length and, for names of up to kInline bytes, the name itself: a hit reads
  // the tag and the slot and nothing else, where a slot pointing at
  // the name made a cold hit wait for a second cache miss after the first. Longer names keep
  // their address there and are compared where they are. Slots are written only when filled,
  // so build clears only the tag bytes.
  static constexpr size_t kInline = 56;
  struct Slot {
    uint32_t pos;
    uint32_t len;  // kLongName: kLongName bytes or more, the length comes from get()
    union {
      char bytes[kInline];  // len <= kInline: the name
      const char *at;       // longer: its address
    } name;
  };
  static_assert(sizeof(Slot) == 64, "a slot is one cache line");
  static constexpr uint32_t kLongName = UINT32_MAX;
  // Lookups compare kGroup tags at once; the first kGroup tags are mirrored after the last so
  // that a group starting near the end reads the wrapped-around slots.
  static constexpr size_t kGroup = 16;
  // Slots start on a cache line: kSlotAlign - 1 spare bytes to round the block's start up.
  static constexpr size_t kSlotAlign = 64;
  static size_t bytes_for(size_t cap) { return cap * (sizeof(Slot) + 1) + kGroup + kSlotAlign - 1; }
  static uint8_t tag_of(uint64_t h) {
    const uint8_t t = static_cast<uint8_t>(h >> 56);
    return static_cast<uint8_t>(t | (t == 0));
  }
  bool same_name(const Slot &slot, const char *p, size_t n) const;
  // Names longer than kInline, compared where they are (through get() at kLongName bytes or
  // more): out of line, so the usual compare keeps its registers.
  __attribute__((noinline, cold)) bool same_long_name(const Slot &slot, const char *p, size_t n) const;
  void insert(size_t i, uint64_t h, const char *p, size_t n);
  bool allocate(const Allocator *a, size_t n, NameFn get, const void *ctx);
  const Allocator *a_ = nullptr;
  void *mem_ = nullptr;  // one block: cap slots (from its first 64-byte boundary), then cap + kGroup tag bytes
  Slot *slots_ = nullptr;
  uint8_t *tags_ = nullptr;
  size_t mask_ = 0;
  NameFn get_ = nullptr;
  const void *ctx_ = nullptr;
  bool dup_ = false;
  size_t dup_a_ = 0, dup_b_ = 0;
};

}  // namespace tblob
