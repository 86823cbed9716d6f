// The per-handle allocator (tblob_allocator or libc), an arena for stable storage and a
// growable array of trivially copyable values. Nothing here throws or aborts: every
// allocation can fail and says so.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tensorblob.h"

namespace tblob {

class Allocator {
 public:
  Allocator() = default;
  // nullptr or a too-small struct: libc.
  explicit Allocator(const tblob_allocator *hook);
  void *alloc(size_t size) const;
  void free(void *p, size_t size) const;

 private:
  void *(*alloc_)(void *, size_t) = nullptr;
  void (*free_)(void *, void *, size_t) = nullptr;
  void *opaque_ = nullptr;
};

// Bump allocator over chunks; everything is released at once by release().
class Arena {
 public:
  explicit Arena(const Allocator *a) : a_(a) {}
  Arena(const Arena &) = delete;
  Arena &operator=(const Arena &) = delete;
  ~Arena() { release(); }
  // 8-byte aligned; nullptr on failure (or size overflow). Inline when the current chunk
  // has room (left_ is always a multiple of 8, so size <= left_ covers the rounding).
  void *alloc(size_t size) {
    if (size - 1 < left_) {
      const size_t r = (size + 7) & ~size_t{7};
      void *p = cur_;
      cur_ += r;
      left_ -= r;
      return p;
    }
    return alloc_chunk(size);
  }
  char *copy(const char *p, size_t n);
  void release();

 private:
  struct Chunk {
    Chunk *next;
    size_t size;
  };
  void *alloc_chunk(size_t size);
  const Allocator *a_;
  Chunk *head_ = nullptr;
  char *cur_ = nullptr;
  size_t left_ = 0;
};

// Growable array of trivially copyable T, grown geometrically through the allocator.
template <class T>
class PodVec {
  static_assert(std::is_trivially_copyable<T>::value, "PodVec holds plain values");

 public:
  explicit PodVec(const Allocator *a) : a_(a) {}
  PodVec(const PodVec &) = delete;
  PodVec &operator=(const PodVec &) = delete;
  ~PodVec() { reset(); }

  bool push(const T &v) {
    if (n_ == cap_ && !grow(n_ + 1)) return false;
    data_[n_++] = v;
    return true;
  }
  bool reserve(size_t n) { return n <= cap_ || grow(n); }
  T *data() { return data_; }
  const T *data() const { return data_; }
  size_t size() const { return n_; }
  T &operator[](size_t i) { return data_[i]; }
  const T &operator[](size_t i) const { return data_[i]; }
  void pop() { --n_; }
  void reset() {
    if (data_) a_->free(data_, cap_ * sizeof(T));
    data_ = nullptr;
    n_ = cap_ = 0;
  }

 private:
  bool grow(size_t need) {
    size_t cap = cap_ ? cap_ : 16;
    while (cap < need) {
      if (cap > SIZE_MAX / 2 / sizeof(T)) return false;
      cap *= 2;
    }
    if (cap > SIZE_MAX / sizeof(T)) return false;
    T *p = static_cast<T *>(a_->alloc(cap * sizeof(T)));
    if (!p) return false;
    if (n_) std::memcpy(static_cast<void *>(p), data_, n_ * sizeof(T));
    if (data_) a_->free(data_, cap_ * sizeof(T));
    data_ = p;
    cap_ = cap;
    return true;
  }

  const Allocator *a_;
  T *data_ = nullptr;
  size_t n_ = 0, cap_ = 0;
};

}  // namespace tblob
