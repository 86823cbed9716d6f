#include "table/name_index.h"

#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tblob {

namespace {
inline uint64_t load64(const char *p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint32_t load32(const char *p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
// Byte equality of two n-byte names, inline: tensor names are mostly 20-60 bytes, where a
// call to memcmp costs as much as the compare. Overlapping loads cover the tail; 16 bytes a
// compare where SSE2 is there (the first two loads of a name split over two cache lines then
// go out together, where a chain of 8-byte compares measured 10% slower per lookup).
inline bool equal_bytes(const char *a, const char *b, size_t n) {
#if defined(__SSE2__)
  if (n >= 16) {
    const auto eq16 = [](const char *x, const char *y) {
      const __m128i c = _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i *>(x)),
                                       _mm_loadu_si128(reinterpret_cast<const __m128i *>(y)));
      return _mm_movemask_epi8(c) == 0xFFFF;
    };
    for (size_t i = 0; i + 16 < n; i += 16)
      if (!eq16(a + i, b + i)) return false;
    return eq16(a + n - 16, b + n - 16);
  }
#endif
  if (n >= 8) {
    size_t i = 0;
    for (; i + 8 < n; i += 8)
      if (load64(a + i) != load64(b + i)) return false;
    return load64(a + n - 8) == load64(b + n - 8);
  }
  if (n >= 4) return load32(a) == load32(b) && load32(a + n - 4) == load32(b + n - 4);
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}
}  // namespace

bool NameIndex::grow_slots(const Allocator *a, size_t need) {
  if (need >= UINT32_MAX) return false;  // positions are 32-bit
  // Doubling from what there is (fill() asks for 64 at first; build() for exactly n).
  size_t cap = slot_cap_ ? slot_cap_ : need;
  if (cap == 0) {
    a_ = a;
    return true;
  }
  while (cap < need) cap = cap <= (SIZE_MAX - kAlign) / sizeof(Slot) / 2 ? cap * 2 : need;
  if (cap > (SIZE_MAX - kAlign) / sizeof(Slot)) return false;
  void *mem = a->alloc(cap * sizeof(Slot) + kAlign - 1);
  if (!mem) return false;
  const uintptr_t base = reinterpret_cast<uintptr_t>(mem);
  Slot *slots = reinterpret_cast<Slot *>((base + kAlign - 1) & ~uintptr_t{kAlign - 1});
  if (filled_) std::memcpy(static_cast<void *>(slots), slots_, filled_ * sizeof(Slot));
  if (slot_mem_) a_->free(slot_mem_, slot_cap_ * sizeof(Slot) + kAlign - 1);
  a_ = a;
  slot_mem_ = mem;
  slots_ = slots;
  slot_cap_ = cap;
  return true;
}

bool NameIndex::reserve_fill(const Allocator *a, size_t n) { return n <= slot_cap_ || grow_slots(a, n); }

void NameIndex::free_table() {
  if (table_mem_) a_->free(table_mem_, table_bytes(mask_ + 1));
  table_mem_ = nullptr;
  tags_ = nullptr;
  pos_ = nullptr;
  mask_ = 0;
  dup_ = false;
}

bool NameIndex::alloc_table(size_t n) {
  free_table();
  // A load of at most 0.5 (see name_index.h).
  size_t cap = 16;
  while (cap / 2 < n) {
    if (cap > (SIZE_MAX - kGroup - kAlign) / 2 / (sizeof(uint32_t) + 1)) return false;
    cap *= 2;
  }
  table_mem_ = a_->alloc(table_bytes(cap));
  if (!table_mem_) return false;
  const uintptr_t base = reinterpret_cast<uintptr_t>(table_mem_);
  pos_ = reinterpret_cast<uint32_t *>((base + kAlign - 1) & ~uintptr_t{kAlign - 1});
  tags_ = reinterpret_cast<uint8_t *>(pos_ + cap);
  std::memset(tags_, 0, cap + kGroup);
  mask_ = cap - 1;
  return true;
}

bool NameIndex::build(const Allocator *a, size_t n, NameFn get, const void *ctx, const uint64_t *hashes) {
  reset();
  if (n >= UINT32_MAX) return false;  // positions are 32-bit
  get_ = get;
  ctx_ = ctx;
  if (!grow_slots(a, n) || !alloc_table(n)) {
    reset();
    return false;
  }
  // Slots front to back; each name is hashed (unless given) while its slot is written, and a
  // batch's tags and positions are prefetched before inserting so their misses overlap.
  constexpr size_t kBatch = 16;
  uint64_t batch[kBatch];
  for (size_t base = 0; base < n; base += kBatch) {
    const size_t count = n - base < kBatch ? n - base : kBatch;
    for (size_t j = 0; j < count; ++j) {
      const char *p;
      size_t len;
      get(ctx, base + j, &p, &len);
      set_slot(slots_[base + j], p, len);
      batch[j] = hashes ? hashes[base + j] : name_hash(keys_, p, len);
      __builtin_prefetch(&pos_[static_cast<size_t>(batch[j]) & mask_], 1);
      __builtin_prefetch(&tags_[static_cast<size_t>(batch[j]) & mask_], 1);
    }
    filled_ = base + count;
    for (size_t j = 0; j < count; ++j) insert(base + j, batch[j]);
  }
  return true;
}

bool NameIndex::build_filled(const Allocator *a, NameFn get, const void *ctx, const uint64_t *hashes) {
  get_ = get;
  ctx_ = ctx;
  const size_t n = filled_;
  if (!slot_mem_) a_ = a;  // nothing filled: no slots to free with another allocator
  if (!alloc_table(n)) return false;
  // Only tags and positions are written (small arrays); prefetch each well before its insert.
  constexpr size_t kAhead = 16;
  for (size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) {
      const size_t s = static_cast<size_t>(hashes[i + kAhead]) & mask_;
      __builtin_prefetch(&pos_[s], 1);
      __builtin_prefetch(&tags_[s], 1);
    }
    insert(i, hashes[i]);
  }
  return true;
}

void NameIndex::name_of(size_t i, const char **p, size_t *n) const {
  const Slot &s = slots_[i];
  if (s.len <= kInline) {
    *p = s.bytes;
    *n = s.len;
  } else if (s.len != kLongName) {
    std::memcpy(p, s.bytes, sizeof *p);
    *n = s.len;
  } else {
    get_(ctx_, i, p, n);
  }
}

bool NameIndex::same_long_name(const Slot &slot, const char *p, size_t n) const {
  if (slot.len != kLongName) {
    const char *at;
    std::memcpy(&at, slot.bytes, sizeof at);
    return slot.len == n && equal_bytes(p, at, n);
  }
  const char *q;
  size_t qlen;
  get_(ctx_, static_cast<size_t>(&slot - slots_), &q, &qlen);
  return qlen == n && std::memcmp(p, q, n) == 0;
}

inline bool NameIndex::same_name(const Slot &slot, const char *p, size_t n) const {
  if (slot.len <= kInline) return slot.len == n && equal_bytes(p, slot.bytes, n);
  return same_long_name(slot, p, n);
}

inline void NameIndex::insert(size_t i, uint64_t h) {
  const uint8_t tag = tag_of(h);
  size_t s = static_cast<size_t>(h) & mask_;
  const char *p = nullptr;
  size_t n = 0;
  bool have_name = false;
#if defined(__SSE2__)
  // kGroup tags at a time, as find_hashed reads them: the first empty slot is found without a
  // branch per slot (one mispredicted branch per probed slot was most of a build).
  const __m128i want = _mm_set1_epi8(static_cast<char>(tag));
  for (;;) {
    const __m128i g = _mm_loadu_si128(reinterpret_cast<const __m128i *>(tags_ + s));
    const uint32_t empty = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(g, _mm_setzero_si128())));
    uint32_t match = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(g, want)));
    if (empty) match &= (empty & (0u - empty)) - 1;
    while (match) {
      const uint32_t at = pos_[(s + static_cast<size_t>(__builtin_ctz(match))) & mask_];
      if (!have_name) {
        name_of(i, &p, &n);
        have_name = true;
      }
      if (same_name(slots_[at], p, n)) {
        if (!dup_) {
          dup_ = true;
          dup_a_ = at;
          dup_b_ = i;
        }
        return;
      }
      match &= match - 1;
    }
    if (empty) {
      s = (s + static_cast<size_t>(__builtin_ctz(empty))) & mask_;
      break;
    }
    s = (s + kGroup) & mask_;
  }
#else
  for (;;) {
    const uint8_t t = tags_[s];
    if (t == 0) break;
    if (t == tag) {
      if (!have_name) {
        name_of(i, &p, &n);
        have_name = true;
      }
      if (same_name(slots_[pos_[s]], p, n)) {
        if (!dup_) {
          dup_ = true;
          dup_a_ = pos_[s];
          dup_b_ = i;
        }
        return;
      }
    }
    s = (s + 1) & mask_;
  }
#endif
  tags_[s] = tag;
  if (s < kGroup) tags_[mask_ + 1 + s] = tag;  // the mirror that group loads read past the end
  pos_[s] = static_cast<uint32_t>(i);
}

// One call with the hash inlined: a lookup is a few dozen instructions, and a second call
// with its spills was a measurable part of them. Both functions start on a cache line, so their
// speed does not depend on the code before them: started 32 bytes into one by code added
// elsewhere, the same instructions took 80.0-80.6 ns a hit from memory against 74.0-75.6, and
// 25.4-26.3 ns a miss against 22.8-24.6 (100,000 names, alternated).
__attribute__((aligned(64))) size_t NameIndex::find(const char *p, size_t n) const { return find_hashed(p, n, name_hash(keys_, p, n)); }

__attribute__((aligned(64))) size_t NameIndex::find_hashed(const char *p, size_t n, uint64_t h) const {
  if (!tags_) return SIZE_MAX;
  const uint8_t tag = tag_of(h);
  size_t s = static_cast<size_t>(h) & mask_;
#if defined(__SSE2__)
  // kGroup tags at a time: candidates are the tag matches before the first empty slot (the
  // end of the run an insert would have probed).
  const __m128i want = _mm_set1_epi8(static_cast<char>(tag));
  // The home position's line is fetched beside the tags: a hit then waits for two lines in a
  // row (tags and positions together, then the slot), not three (hit medians 4-8 ns faster;
  // misses 1-2 ns slower, see name_index.h).
  __builtin_prefetch(&pos_[s]);
  for (;;) {
    const __m128i g = _mm_loadu_si128(reinterpret_cast<const __m128i *>(tags_ + s));
    const uint32_t empty = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(g, _mm_setzero_si128())));
    uint32_t match = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(g, want)));
    if (empty) match &= (empty & (0u - empty)) - 1;
    while (match) {
      const uint32_t at = pos_[(s + static_cast<size_t>(__builtin_ctz(match))) & mask_];
      if (same_name(slots_[at], p, n)) return at;
      match &= match - 1;
    }
    if (empty) return SIZE_MAX;
    s = (s + kGroup) & mask_;
  }
#else
  for (;;) {
    const uint8_t t = tags_[s];
    if (t == 0) return SIZE_MAX;
    if (t == tag && same_name(slots_[pos_[s]], p, n)) return pos_[s];
    s = (s + 1) & mask_;
  }
#endif
}

size_t NameIndex::longest_run() const {
  if (!tags_) return 0;
  const size_t cap = mask_ + 1;
  size_t start = 0;  // an empty entry to start from: a run never spans the whole table (load <= 0.5)
  while (start < cap && tags_[start] != 0) ++start;
  size_t longest = 0, run = 0;
  for (size_t i = 1; i <= cap; ++i) {
    run = tags_[(start + i) & mask_] != 0 ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  return longest;
}

void NameIndex::reset() {
  free_table();
  if (slot_mem_) a_->free(slot_mem_, slot_cap_ * sizeof(Slot) + kAlign - 1);
  slot_mem_ = nullptr;
  slots_ = nullptr;
  slot_cap_ = filled_ = 0;
  dup_ = false;
}

}  // namespace tblob
