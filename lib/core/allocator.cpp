#include "core/allocator.h"

#include <cstdint>
#include <cstdlib>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tblob {

Allocator::Allocator(const tblob_allocator *hook) {
  if (hook && hook->struct_size >= sizeof(tblob_allocator) && hook->alloc && hook->free) {
    alloc_ = hook->alloc;
    free_ = hook->free;
    opaque_ = hook->opaque;
  }
}

void *Allocator::alloc(size_t size) const {
  if (size == 0) size = 1;
  if (alloc_) return alloc_(opaque_, size);
  void *p = std::malloc(size);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Tables of large models (tens of MB, written once front to back): ask for huge pages so
  // filling them costs a fault per 2 MiB instead of per 4 KiB. Only the whole 2 MiB pages
  // inside the block; a no-op where transparent huge pages are off.
  constexpr size_t kHuge = size_t{2} << 20;
  if (p && size >= 4 * kHuge) {
    const uintptr_t b = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
    const uintptr_t e = (reinterpret_cast<uintptr_t>(p) + size) & ~(kHuge - 1);
    if (e > b) ::madvise(reinterpret_cast<void *>(b), e - b, MADV_HUGEPAGE);
  }
#endif
  return p;
}

void Allocator::free(void *p, size_t size) const {
  if (!p) return;
  if (free_)
    free_(opaque_, p, size);
  else
    std::free(p);
}

void *Arena::alloc_chunk(size_t size) {
  if (size > SIZE_MAX - 7) return nullptr;
  size = (size + 7) & ~size_t{7};
  if (size == 0) size = 8;
  if (size > left_) {
    const size_t kChunk = 64 * 1024;
    size_t body = size > kChunk ? size : kChunk;
    if (body > SIZE_MAX - sizeof(Chunk) - 16) return nullptr;
    const size_t total = sizeof(Chunk) + body;
    Chunk *c = static_cast<Chunk *>(a_->alloc(total));
    if (!c) return nullptr;
    c->next = head_;
    c->size = total;
    head_ = c;
    cur_ = reinterpret_cast<char *>(c + 1);
    left_ = body;
  }
  void *p = cur_;
  cur_ += size;
  left_ -= size;
  return p;
}

char *Arena::copy(const char *p, size_t n) {
  char *d = static_cast<char *>(alloc(n));
  if (d && n) std::memcpy(d, p, n);
  return d;
}

void Arena::release() {
  while (head_) {
    Chunk *next = head_->next;
    a_->free(head_, head_->size);
    head_ = next;
  }
  cur_ = nullptr;
  left_ = 0;
}

}  // namespace tblob
