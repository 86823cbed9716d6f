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
// Copies a name of n <= 56 bytes into a slot, inline: a call to memcpy per insert was 2% of
// opening a 20,000-tensor header. Overlapping 8-byte moves cover the tail.
inline void copy_short(char *dst, const char *src, size_t n) {
  if (n >= 8) {
    size_t i = 0;
    for (; i + 8 < n; i += 8) std::memcpy(dst + i, src + i, 8);
    std::memcpy(dst + n - 8, src + n - 8, 8);
  } else if (n >= 4) {
    std::memcpy(dst, src, 4);
    std::memcpy(dst + n - 4, src + n - 4, 4);
  } else {
    for (size_t i = 0; i < n; ++i) dst[i] = src[i];
  }
}
}  // namespace

bool NameIndex::allocate(const Allocator *a, size_t n, NameFn get, const void *ctx) {
  reset();
  if (n >= UINT32_MAX) return false;  // positions are 32-bit
  a_ = a;
  get_ = get;
  ctx_ = ctx;
  size_t cap = 16;
  while (cap < n + n / 4) {
    if (cap > (SIZE_MAX - kGroup) / 2 / (sizeof(Slot) + 1)) return false;
    cap *= 2;
  }
  mem_ = a->alloc(bytes_for(cap));
  if (!mem_) return false;
  const uintptr_t base = reinterpret_cast<uintptr_t>(mem_);
  slots_ = reinterpret_cast<Slot *>((base + kSlotAlign - 1) & ~uintptr_t{kSlotAlign - 1});
  tags_ = reinterpret_cast<uint8_t *>(slots_ + cap);
  std::memset(tags_, 0, cap + kGroup);
  mask_ = cap - 1;
  return true;
}

bool NameIndex::build(const Allocator *a, size_t n, NameFn get, const void *ctx, const NameRef *refs) {
  if (!allocate(a, n, get, ctx)) return false;
  // The hashes are known ahead: prefetch each slot well before it is written, so the write
  // misses of a large table overlap instead of queueing one after another.
  constexpr size_t kAhead = 32;
  for (size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) __builtin_prefetch(&slots_[static_cast<size_t>(refs[i + kAhead].hash) & mask_], 1);
    insert(i, refs[i].hash, refs[i].p, refs[i].len);
  }
  return true;
}

bool NameIndex::build(const Allocator *a, size_t n, NameFn get, const void *ctx, const uint64_t *hashes) {
  if (!allocate(a, n, get, ctx)) return false;
  if (hashes) {
    // The hashes are known ahead: prefetch each slot well before it is written, so the write
    // misses of a large table overlap instead of queueing one after another.
    constexpr size_t kAhead = 32;
    for (size_t i = 0; i < n; ++i) {
      if (i + kAhead < n) __builtin_prefetch(&slots_[static_cast<size_t>(hashes[i + kAhead]) & mask_], 1);
      const char *p;
      size_t len;
      get(ctx, i, &p, &len);
      insert(i, hashes[i], p, len);
    }
    return true;
  }
  // Hash a batch and prefetch its slots before inserting, so the cache misses of a large
  // table overlap instead of queueing one after another.
  constexpr size_t kBatch = 16;
  uint64_t batch[kBatch];
  const char *names[kBatch];
  size_t lens[kBatch];
  for (size_t base = 0; base < n; base += kBatch) {
    const size_t count = n - base < kBatch ? n - base : kBatch;
    for (size_t j = 0; j < count; ++j) {
      get(ctx, base + j, &names[j], &lens[j]);
      batch[j] = hashes ? hashes[base + j] : name_hash(names[j], lens[j]);
      __builtin_prefetch(&slots_[static_cast<size_t>(batch[j]) & mask_], 1);
    }
    for (size_t j = 0; j < count; ++j) insert(base + j, batch[j], names[j], lens[j]);
  }
  return true;
}

bool NameIndex::same_long_name(const Slot &slot, const char *p, size_t n) const {
  if (slot.len != kLongName) return slot.len == n && equal_bytes(p, slot.name.at, n);
  const char *q;
  size_t qlen;
  get_(ctx_, slot.pos, &q, &qlen);
  return qlen == n && std::memcmp(p, q, n) == 0;
}

inline bool NameIndex::same_name(const Slot &slot, const char *p, size_t n) const {
  if (slot.len <= kInline) return slot.len == n && equal_bytes(p, slot.name.bytes, n);
  return same_long_name(slot, p, n);
}

inline void NameIndex::insert(size_t i, uint64_t h, const char *p, size_t n) {
  const uint8_t tag = tag_of(h);
  size_t s = static_cast<size_t>(h) & mask_;
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
      const size_t at = (s + static_cast<size_t>(__builtin_ctz(match))) & mask_;
      if (same_name(slots_[at], p, n)) {
        if (!dup_) {
          dup_ = true;
          dup_a_ = slots_[at].pos;
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
    if (t == tag && same_name(slots_[s], p, n)) {
      if (!dup_) {
        dup_ = true;
        dup_a_ = slots_[s].pos;
        dup_b_ = i;
      }
      return;
    }
    s = (s + 1) & mask_;
  }
#endif
  tags_[s] = tag;
  if (s < kGroup) tags_[mask_ + 1 + s] = tag;  // the mirror that group loads read past the end
  Slot &slot = slots_[s];
  slot.pos = static_cast<uint32_t>(i);
  slot.len = n < kLongName ? static_cast<uint32_t>(n) : kLongName;
  if (n <= kInline)
    copy_short(slot.name.bytes, p, n);
  else
    slot.name.at = p;
}

// One call with the hash inlined: a lookup is a few dozen instructions, and a second call
// with its spills was a measurable part of them.
size_t NameIndex::find(const char *p, size_t n) const { return find_hashed(p, n, name_hash(p, n)); }

size_t NameIndex::find_hashed(const char *p, size_t n, uint64_t h) const {
  if (!tags_) return SIZE_MAX;
  const uint8_t tag = tag_of(h);
  size_t s = static_cast<size_t>(h) & mask_;
#if defined(__SSE2__)
  // kGroup tags at a time: candidates are the tag matches before the first empty slot (the
  // end of the run an insert would have probed).
  const __m128i want = _mm_set1_epi8(static_cast<char>(tag));
  // The home slot is not prefetched beside the tag read: measured, that took 2-3 ns off a
  // cold hit and put as much on every miss (a second page walk and line fill for nothing).
  for (;;) {
    const __m128i g = _mm_loadu_si128(reinterpret_cast<const __m128i *>(tags_ + s));
    const uint32_t empty = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(g, _mm_setzero_si128())));
    uint32_t match = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(g, want)));
    if (empty) match &= (empty & (0u - empty)) - 1;
    while (match) {
      const size_t at = (s + static_cast<size_t>(__builtin_ctz(match))) & mask_;
      if (same_name(slots_[at], p, n)) return slots_[at].pos;
      match &= match - 1;
    }
    if (empty) return SIZE_MAX;
    s = (s + kGroup) & mask_;
  }
#else
  for (;;) {
    const uint8_t t = tags_[s];
    if (t == 0) return SIZE_MAX;
    if (t == tag && same_name(slots_[s], p, n)) return slots_[s].pos;
    s = (s + 1) & mask_;
  }
#endif
}

void NameIndex::reset() {
  if (mem_) a_->free(mem_, bytes_for(mask_ + 1));
  mem_ = nullptr;
  slots_ = nullptr;
  tags_ = nullptr;
  mask_ = 0;
  dup_ = false;
}

}  // namespace tblob
