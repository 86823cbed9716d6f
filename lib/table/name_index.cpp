#include "table/name_index.h"

#include <cstring>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace tblob {

uint64_t name_hash(const char *p, size_t n) { return XXH3_64bits(p, n); }

bool NameIndex::build(const Allocator *a, size_t n, NameFn get, const void *ctx, const uint64_t *hashes) {
  reset();
  if (n >= UINT32_MAX) return false;  // positions are 32-bit
  a_ = a;
  get_ = get;
  ctx_ = ctx;
  size_t cap = 16;
  while (cap < n * 2) {
    if (cap > SIZE_MAX / 2 / sizeof(Slot)) return false;
    cap *= 2;
  }
  slots_ = static_cast<Slot *>(a->alloc(cap * sizeof(Slot)));
  if (!slots_) return false;
  std::memset(slots_, 0, cap * sizeof(Slot));
  mask_ = cap - 1;
  // Hash a batch and prefetch its slots before inserting, so the cache misses of a large
  // table overlap instead of queueing one after another.
  constexpr size_t kBatch = 16;
  uint64_t batch[kBatch];
  if (hashes) {
    constexpr size_t kAhead = 16;
    for (size_t i = 0; i < n; ++i) {
      if (i + kAhead < n) __builtin_prefetch(&slots_[static_cast<size_t>(hashes[i + kAhead]) & mask_], 1);
      insert(i, hashes[i]);
    }
    return true;
  }
  for (size_t base = 0; base < n; base += kBatch) {
    const size_t count = n - base < kBatch ? n - base : kBatch;
    for (size_t j = 0; j < count; ++j) {
      const char *p;
      size_t len;
      get(ctx, base + j, &p, &len);
      batch[j] = name_hash(p, len);
      __builtin_prefetch(&slots_[static_cast<size_t>(batch[j]) & mask_], 1);
    }
    for (size_t j = 0; j < count; ++j) insert(base + j, batch[j]);
  }
  return true;
}

void NameIndex::insert(size_t i, uint64_t h) {
  size_t s = static_cast<size_t>(h) & mask_;
  for (;;) {
    Slot &slot = slots_[s];
    if (slot.pos_plus_one == 0) {
      slot.tag = tag_of(h);
      slot.pos_plus_one = static_cast<uint32_t>(i + 1);
      return;
    }
    if (slot.tag == tag_of(h)) {
      const char *p, *q;
      size_t len, qlen;
      get_(ctx_, i, &p, &len);
      get_(ctx_, static_cast<size_t>(slot.pos_plus_one - 1), &q, &qlen);
      if (qlen == len && std::memcmp(p, q, len) == 0) {
        if (!dup_) {
          dup_ = true;
          dup_a_ = static_cast<size_t>(slot.pos_plus_one - 1);
          dup_b_ = i;
        }
        return;
      }
    }
    s = (s + 1) & mask_;
  }
}

size_t NameIndex::find(const char *p, size_t n) const {
  if (!slots_) return SIZE_MAX;
  const uint64_t h = name_hash(p, n);
  size_t s = static_cast<size_t>(h) & mask_;
  for (;;) {
    const Slot &slot = slots_[s];
    if (slot.pos_plus_one == 0) return SIZE_MAX;
    if (slot.tag == tag_of(h)) {
      const char *q;
      size_t qlen;
      get_(ctx_, static_cast<size_t>(slot.pos_plus_one - 1), &q, &qlen);
      if (qlen == n && std::memcmp(p, q, n) == 0) return static_cast<size_t>(slot.pos_plus_one - 1);
    }
    s = (s + 1) & mask_;
  }
}

void NameIndex::reset() {
  if (slots_) a_->free(slots_, (mask_ + 1) * sizeof(Slot));
  slots_ = nullptr;
  mask_ = 0;
  dup_ = false;
}

}  // namespace tblob
