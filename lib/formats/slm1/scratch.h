// Temporary arrays for one validation step, taken from the handle's allocator and returned
// when the step ends. Sizes are always bounded by bytes present in the file.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/allocator.h"

namespace tblob {
namespace slm1 {

template <class T>
class Scratch {
 public:
  explicit Scratch(const Allocator &a) : a_(a) {}
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;
  ~Scratch() {
    if (p_) a_.free(p_, n_ * sizeof(T));
  }
  // False on overflow or allocation failure. Contents are uninitialised.
  bool allocate(uint64_t n) {
    if (n > SIZE_MAX / sizeof(T)) return false;
    n_ = static_cast<size_t>(n);
    p_ = static_cast<T *>(a_.alloc(n_ * sizeof(T)));
    return p_ != nullptr;
  }
  T *data() { return p_; }
  T &operator[](size_t i) { return p_[i]; }

 private:
  const Allocator &a_;
  T *p_ = nullptr;
  size_t n_ = 0;
};

}  // namespace slm1
}  // namespace tblob
