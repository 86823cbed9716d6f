// Open-addressing hash index from names to table positions, keyed by name_hash() under the
// process's random keys.
// Every hit is confirmed by comparing the full name: a hash match is never a guess.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/allocator.h"
#include "table/name_hash.h"

namespace tblob {

class NameIndex {
 public:
  NameIndex() = default;
  NameIndex(const NameIndex &) = delete;
  NameIndex &operator=(const NameIndex &) = delete;
  ~NameIndex() { reset(); }

  // Builds the index over n items whose names are read through get(ctx, i, &p, &len). The
  // names' bytes must stay where get() reports them while the index is used (the slots point
  // at names longer than kInline). Returns false on allocation failure. When two items share
  // a name, *dup_first and *dup_second receive their positions and build returns true with
  // has_duplicate() (dup_first() is the earlier item; find() returns it).
  using NameFn = void (*)(const void *ctx, size_t i, const char **p, size_t *len);
  // hashes, when given, holds name_hash() of each item's name (computed earlier).
  bool build(const Allocator *a, size_t n, NameFn get, const void *ctx, const uint64_t *hashes = nullptr);

  // Filling ahead: a reader that meets the names one by one (the safetensors scan) describes
  // item filled() with fill() while the name is in cache, then build_filled() indexes the
  // filled() items from their hashes (hashes[i] = name_hash() of item i) without reading the
  // names again; get() is kept for names of kLongName bytes or more. fill() returns false on
  // allocation failure; reserve_fill() sizes the slots for n items in all ahead of time. Any
  // other build() or reset() drops the filled slots.
  bool reserve_fill(const Allocator *a, size_t n);
  bool fill(const Allocator *a, const char *p, size_t len) {
    if (filled_ == slot_cap_ && !grow_slots(a, filled_ < 64 ? 64 : filled_ + 1)) return false;
    set_slot(slots_[filled_++], p, len);
    return true;
  }
  size_t filled() const { return filled_; }
  bool build_filled(const Allocator *a, NameFn get, const void *ctx, const uint64_t *hashes);

  bool has_duplicate() const { return dup_; }
  size_t dup_first() const { return dup_a_; }
  size_t dup_second() const { return dup_b_; }

  // name_hash() under this index's keys (the process's, unless set_keys() chose others):
  // what build(hashes) and build_filled() expect, and what find() takes.
  uint64_t hash(const char *p, size_t n) const { return name_hash(keys_, p, n); }
  // Other keys, before anything is filled or built (tests: names chosen against known keys).
  void set_keys(const NameHashKeys &k) { keys_ = k; }
  // The longest run of occupied table entries, wrapping: what the slowest probe of a build or
  // a miss walks (tests: names piled up by their hashes' low bits show as one long run).
  size_t longest_run() const;

  // Position of the item named (p, n), or SIZE_MAX.
  size_t find(const char *p, size_t n) const;
  // The same with h = name_hash(p, n) already taken (tests pass other values to force equal
  // fingerprints: the result must still depend only on the names).
  size_t find_hashed(const char *p, size_t n, uint64_t h) const;
  void reset();

  // Three arrays. slots_[i] (one cache line, in item order) describes item i: the name's
  // length and, for names of up to kInline bytes, the name itself, else its address (names of
  // kLongName bytes or more are read through get()). The table places the items by hash in
  // cap >= 2n entries (a power of two): tags_[s] is 0 for an empty entry, else the hash's top
  // byte (1 for 0), and pos_[s] the item's position; linear probing, kGroup tags compared at
  // once. A lookup fetches the home tag line and, beside it, the home position's line; a miss
  // then waits for the tags only (and a slot for a false tag match, 1 in 255 compared tags), a
  // hit for tags and positions together, then the slot.
  // Why: slots placed by hash made the build write each 64-byte slot at a random place in 2 MiB
  // for 20,000 names (past L2 with the rest of an open), 7.5 ns a name. Slots in item order are
  // written front to back by the safetensors scan while each name is in L1 (fill()), and the
  // build writes 5 bytes an entry (320 KiB for 20,000 names): the build fell from 0.27 to 0.12
  // of the scan's time in an open. At 5 bytes an entry a load of 0.5 is cheap: a miss compares
  // about 2 tags, not 9, so fewer false matches read a cold slot (misses among 100,000 names
  // 24-26 -> 20 ns; hits the same at best, 1-3 ns slower in the median). Measured worse: 12
  // tags and 12 positions per 64-byte group (misses 37 ns at a load of 0.8, 31 at 0.5: a probe
  // reads a line of a 0.7-1 MiB array, and full groups make its exit branch unpredictable); no
  // position prefetch (misses 17 ns, hit medians 4-8 ns slower).
  static constexpr size_t kInline = 60;

 private:
  struct Slot {
    uint32_t len;  // kLongName: kLongName bytes or more, the length comes from get()
    char bytes[kInline];  // len <= kInline: the name; longer: its address (memcpy'd)
  };
  static_assert(sizeof(Slot) == 64, "a slot is one cache line");
  static constexpr uint32_t kLongName = UINT32_MAX;
  static constexpr size_t kAlign = 64;
  // Lookups compare kGroup tags at once; the first kGroup tags are mirrored after the last so
  // that a group starting near the end reads the wrapped-around slots.
  static constexpr size_t kGroup = 16;
  static size_t table_bytes(size_t cap) { return cap * (sizeof(uint32_t) + 1) + kGroup + kAlign - 1; }
  static uint8_t tag_of(uint64_t h) {
    const uint8_t t = static_cast<uint8_t>(h >> 56);
    return static_cast<uint8_t>(t | (t == 0));
  }
  // Copies a name of n <= kInline bytes, inline (a memcpy call per name was 2% of opening a
  // 20,000-tensor header): overlapping 16- or 8-byte moves cover the tail.
  static void set_slot(Slot &s, const char *p, size_t n) {
    s.len = n < kLongName ? static_cast<uint32_t>(n) : kLongName;
    char *d = s.bytes;
    if (n > kInline) {
      std::memcpy(d, &p, sizeof p);
    } else if (n >= 16) {
      // First and last 16 bytes; past 32, the 16 after the first and before the last as well
      // (n <= 64 leaves no gap): at most one branch, where a loop took a mispredicted exit.
      std::memcpy(d, p, 16);
      if (n > 32) {
        std::memcpy(d + 16, p + 16, 16);
        std::memcpy(d + n - 32, p + n - 32, 16);
      }
      std::memcpy(d + n - 16, p + n - 16, 16);
    } else if (n >= 8) {
      std::memcpy(d, p, 8);
      std::memcpy(d + n - 8, p + n - 8, 8);
    } else if (n >= 4) {
      std::memcpy(d, p, 4);
      std::memcpy(d + n - 4, p + n - 4, 4);
    } else {
      for (size_t i = 0; i < n; ++i) d[i] = p[i];
    }
  }
  bool same_name(const Slot &slot, const char *p, size_t n) const;
  // Names longer than kInline, compared where they are (through get() at kLongName bytes or
  // more): out of line, so the usual compare keeps its registers.
  __attribute__((noinline, cold)) bool same_long_name(const Slot &slot, const char *p, size_t n) const;
  void name_of(size_t i, const char **p, size_t *n) const;
  void insert(size_t i, uint64_t h);
  bool grow_slots(const Allocator *a, size_t need);
  bool alloc_table(size_t n);
  void free_table();
  NameHashKeys keys_ = name_hash_keys();
  const Allocator *a_ = nullptr;
  void *slot_mem_ = nullptr;  // slot_cap_ slots from its first 64-byte boundary
  Slot *slots_ = nullptr;
  size_t slot_cap_ = 0, filled_ = 0;
  void *table_mem_ = nullptr;  // cap positions (from its first 64-byte boundary), then cap + kGroup tags
  uint32_t *pos_ = nullptr;
  uint8_t *tags_ = nullptr;
  size_t mask_ = 0;
  NameFn get_ = nullptr;
  const void *ctx_ = nullptr;
  bool dup_ = false;
  size_t dup_a_ = 0, dup_b_ = 0;
};

}  // namespace tblob
