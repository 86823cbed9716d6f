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

// Growable array of trivially copyable T, grown geometrically through the allocator: the
// library's one growable buffer (tables, byte strings being built, per-step scratch arrays).
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
  // Appends one element left uninitialised and returns it (nullptr on allocation failure): a
  // caller that sets every field writes it in place instead of copying a finished one in.
  T *push_uninit() {
    if (n_ == cap_ && !grow(n_ + 1)) return nullptr;
    return &data_[n_++];
  }
  bool append(const T *p, size_t n) {
    if (n == 0) return true;
    if (n > cap_ - n_ && (n > SIZE_MAX - n_ || !grow(n_ + n))) return false;
    std::memcpy(static_cast<void *>(data_ + n_), p, n * sizeof(T));
    n_ += n;
    return true;
  }
  bool reserve(size_t n) { return n <= cap_ || grow(n); }
  // Sets the size to n; elements past the old size are uninitialised. False on overflow or
  // allocation failure (the contents are then unchanged).
  bool resize(uint64_t n) {
    if (n > SIZE_MAX / sizeof(T) || !reserve(static_cast<size_t>(n))) return false;
    n_ = static_cast<size_t>(n);
    return true;
  }
  T *data() { return data_; }
  const T *data() const { return data_; }
  size_t size() const { return n_; }
  T &operator[](size_t i) { return data_[i]; }
  const T &operator[](size_t i) const { return data_[i]; }
  void pop() { --n_; }
  void clear() { n_ = 0; }
  void reset() {
    if (data_) a_->free(data_, cap_ * sizeof(T));
    data_ = nullptr;
    n_ = cap_ = 0;
  }

 private:
  bool grow(size_t need) {
    if (need > SIZE_MAX / sizeof(T)) return false;
    size_t cap = cap_ == 0 ? 16 : cap_ <= SIZE_MAX / 2 / sizeof(T) ? cap_ * 2 : need;
    if (cap < need) cap = need;
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

// Bytes being built (headers, JSON documents): a PodVec<char> with text appends.
class ByteBuf : public PodVec<char> {
 public:
  explicit ByteBuf(const Allocator *a) : PodVec<char>(a) {}
  using PodVec<char>::append;
  bool append(const void *p, size_t n) { return PodVec<char>::append(static_cast<const char *>(p), n); }
  bool append(const char *s) { return PodVec<char>::append(s, std::strlen(s)); }
  bool append_u64(uint64_t v) {
    char tmp[20];
    size_t k = sizeof(tmp);
    do {
      tmp[--k] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v);
    return PodVec<char>::append(tmp + k, sizeof(tmp) - k);
  }
};

}  // namespace tblob
