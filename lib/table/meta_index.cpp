#include "table/meta_index.h"

#include <cstring>

namespace tblob {

namespace {
inline uint8_t tag_of(uint64_t h) {
  const uint8_t t = static_cast<uint8_t>(h >> 56);
  return t ? t : 1;
}
}  // namespace

void MetaIndex::reset() {
  if (pos_) a_->free(pos_, cap_ * sizeof(uint32_t));
  if (tag_) a_->free(tag_, cap_);
  pos_ = nullptr;
  tag_ = nullptr;
  cap_ = 0;
  dup_ = false;
  dup_a_ = dup_b_ = 0;
}

bool MetaIndex::build(const Allocator *a, size_t n, NameFn get, const void *ctx) {
  reset();
  a_ = a;
  get_ = get;
  ctx_ = ctx;
  if (n == 0) return true;
  if (n >= UINT32_MAX) return false;
  size_t cap = 8;
  while (cap < n + n / 3 + 1) cap *= 2;  // load <= 3/4
  pos_ = static_cast<uint32_t *>(a->alloc(cap * sizeof(uint32_t)));
  tag_ = static_cast<uint8_t *>(a->alloc(cap));
  cap_ = cap;
  if (!pos_ || !tag_) {
    reset();
    return false;
  }
  std::memset(tag_, 0, cap);
  const size_t mask = cap - 1;
  for (size_t i = 0; i < n; ++i) {
    const char *p;
    size_t len;
    get(ctx, i, &p, &len);
    const uint64_t h = name_hash(keys_, p, len);
    const uint8_t t = tag_of(h);
    size_t s = static_cast<size_t>(h) & mask;
    for (;; s = (s + 1) & mask) {
      if (tag_[s] == 0) {
        tag_[s] = t;
        pos_[s] = static_cast<uint32_t>(i);
        break;
      }
      if (tag_[s] != t) continue;
      const char *q;
      size_t qlen;
      get(ctx, pos_[s], &q, &qlen);
      if (qlen == len && std::memcmp(p, q, len) == 0) {  // a second item of this name
        if (!dup_) {
          dup_ = true;
          dup_a_ = pos_[s];
          dup_b_ = i;
        }
        break;  // find() keeps the first
      }
    }
  }
  return true;
}

size_t MetaIndex::find(const char *p, size_t n) const {
  if (cap_ == 0) return SIZE_MAX;
  const uint64_t h = name_hash(keys_, p, n);
  const uint8_t t = tag_of(h);
  const size_t mask = cap_ - 1;
  for (size_t s = static_cast<size_t>(h) & mask;; s = (s + 1) & mask) {
    if (tag_[s] == 0) return SIZE_MAX;
    if (tag_[s] != t) continue;
    const char *q;
    size_t qlen;
    get_(ctx_, pos_[s], &q, &qlen);
    if (qlen == n && std::memcmp(p, q, n) == 0) return pos_[s];
  }
}

}  // namespace tblob
