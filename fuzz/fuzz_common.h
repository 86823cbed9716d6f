// Shared pieces of the tensorblob fuzz harnesses (fuzz/README.md explains the input format).
//
// Every input is a file followed by a 3-byte parameter trailer, read from the END the way
// zstd's fuzz data producer does, so the front of a seed stays a valid-looking file:
//
//     [ file bytes ... ][ lim ][ fail ][ ctl ]
//
//   ctl  bits 0-1  harness-specific variant (fuzz_open_memory: 3 = also through a temp file
//                  with tblob_model_open in TBLOB_OPEN_READ mode; fuzz_st_scan: scratch layout)
//        bits 2-3  limits: 0 and 3 = defaults, 1 = the compact preset, 2 = tight limits
//                  taken from `lim`
//   fail           the failing allocator fails the Nth allocation, N = fail (0 = never)
//   lim            tight limits (ctl preset 2): depth, rank, tensor count, name bytes, header
//
// Inputs shorter than the trailer are a file of their own with all parameters zero.
//
// The allocator handed to the library (tblob_open_options.allocator) also checks the
// allocation contract: free() gets the size alloc() was asked for, nothing leaks, memory
// is 16-byte aligned, and no allocation (nor the peak of live bytes) is larger than a small
// multiple of the input: FUZZ_ALLOC_FACTOR x input + FUZZ_ALLOC_SLACK.
//
// Findings abort through FUZZ_ASSERT, which stays on in release builds (the standalone
// driver replays corpora in the normal -O2 -DNDEBUG build).
#ifndef TENSORBLOB_FUZZ_COMMON_H
#define TENSORBLOB_FUZZ_COMMON_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tensorblob.h"

#define FUZZ_ASSERT_MSG(cond, ...)                                               \
  do {                                                                           \
    if (!(cond)) {                                                               \
      std::fprintf(stderr, "%s:%d: FUZZ_ASSERT(%s) failed: ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                         \
      std::fprintf(stderr, "\n");                                                \
      std::abort();                                                              \
    }                                                                            \
  } while (0)
#define FUZZ_ASSERT(cond) FUZZ_ASSERT_MSG(cond, "%s", "")

#if defined(__SANITIZE_ADDRESS__)
#define FUZZ_HAVE_MALLOC_HOOKS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZ_HAVE_MALLOC_HOOKS 1
#endif
#endif
#ifdef FUZZ_HAVE_MALLOC_HOOKS
#include <sanitizer/allocator_interface.h>
#endif

namespace fuzz {

// Allocation budget for an input of n bytes: a 20-byte tensor entry may cost a table row,
// its share of the doubling arrays and two hash indexes, and its name and dims in the
// arena; 64x covers that with room, and anything beyond is "allocating what the header
// claims" rather than what the bytes hold.
constexpr size_t FUZZ_ALLOC_FACTOR = 64;
constexpr size_t FUZZ_ALLOC_SLACK = size_t{1} << 20;

constexpr size_t kTrailerBytes = 3;

struct Params {
  const uint8_t *file = nullptr;  // the file part of the input
  size_t file_len = 0;
  uint8_t variant = 0;      // ctl bits 0-1
  uint8_t limits = 0;       // ctl bits 2-3
  uint8_t fail_at = 0;      // 0 = never
  uint8_t lim = 0;
};

inline Params split_input(const uint8_t *data, size_t size) {
  Params p;
  if (size < kTrailerBytes) {
    p.file = data;
    p.file_len = size;
    return p;
  }
  const uint8_t ctl = data[size - 1];
  p.fail_at = data[size - 2];
  p.lim = data[size - 3];
  p.variant = ctl & 3u;
  p.limits = (ctl >> 2) & 3u;
  p.file = data;
  p.file_len = size - kTrailerBytes;
  return p;
}

// Options for the preset the trailer chose.
inline tblob_open_options make_options(const Params &p) {
  tblob_open_options o = TBLOB_OPEN_OPTIONS_INIT;
  if (p.limits == 1) {
    const tblob_open_options c = TBLOB_OPEN_OPTIONS_COMPACT_INIT;
    o = c;
  } else if (p.limits == 2) {
    o.max_json_depth = 1u + (p.lim & 7u);           // 1 .. 8
    o.max_rank = (p.lim >> 3) & 3u;                  // 0 .. 3
    o.max_tensors = (p.lim >> 5) & 7u;               // 0 .. 7
    o.max_name_bytes = p.lim;                        // 0 .. 255
    o.max_header_bytes = uint64_t{p.lim} * 64u;      // 0 .. 16320
    o.max_files = 1u + (p.lim & 3u);
  }
  return o;
}

// A heap copy of exactly n bytes, so that ASan sees any read past the end of the "file"
// (the fuzzer's own buffer continues with the trailer).
struct ExactCopy {
  uint8_t *ptr = nullptr;
  size_t len = 0;
  ExactCopy(const uint8_t *src, size_t n) : len(n) {
    ptr = static_cast<uint8_t *>(std::malloc(n ? n : 1));
    FUZZ_ASSERT(ptr != nullptr);
    if (n) std::memcpy(ptr, src, n);
  }
  ~ExactCopy() { std::free(ptr); }
  ExactCopy(const ExactCopy &) = delete;
  ExactCopy &operator=(const ExactCopy &) = delete;
};

// Fails the Nth allocation (N >= 1; 0 = never) and checks the allocator contract.
class FailingAllocator {
 public:
  FailingAllocator(uint32_t fail_at, size_t input_len) : fail_at_(fail_at) {
    budget_ = input_len * FUZZ_ALLOC_FACTOR + FUZZ_ALLOC_SLACK;
    hook_.struct_size = sizeof(tblob_allocator);
    hook_.alloc = &FailingAllocator::alloc_fn;
    hook_.free = &FailingAllocator::free_fn;
    hook_.opaque = this;
  }
  FailingAllocator(const FailingAllocator &) = delete;
  FailingAllocator &operator=(const FailingAllocator &) = delete;

  const tblob_allocator *hook() const { return &hook_; }
  bool failed() const { return failed_; }
  uint64_t calls() const { return calls_; }
  size_t live_bytes() const { return live_bytes_; }
  uint64_t live_blocks() const { return live_blocks_; }
  size_t peak_bytes() const { return peak_bytes_; }

  // Everything the library allocated has been returned.
  void expect_empty(const char *when) const {
    FUZZ_ASSERT_MSG(live_blocks_ == 0 && live_bytes_ == 0,
                    "%s: %llu blocks / %zu bytes still allocated (leak)", when,
                    static_cast<unsigned long long>(live_blocks_), live_bytes_);
  }

 private:
  // Each block carries its requested size in a 16-byte prefix (keeps 16-byte alignment).
  static constexpr size_t kPrefix = 16;
  static constexpr uint64_t kMagic = 0x7462fa11a110c8edull;

  static void *alloc_fn(void *opaque, size_t size) {
    auto *self = static_cast<FailingAllocator *>(opaque);
    ++self->calls_;
    FUZZ_ASSERT_MSG(size <= self->budget_,
                    "allocation of %zu bytes exceeds the budget of %zu for this input", size,
                    self->budget_);
    if (self->fail_at_ != 0 && self->calls_ == self->fail_at_) {
      self->failed_ = true;
      return nullptr;
    }
    uint8_t *raw = static_cast<uint8_t *>(std::malloc(size + kPrefix));
    if (!raw) return nullptr;
    uint64_t hdr[2] = {static_cast<uint64_t>(size), kMagic};
    std::memcpy(raw, hdr, sizeof(hdr));
    self->live_bytes_ += size;
    ++self->live_blocks_;
    if (self->live_bytes_ > self->peak_bytes_) self->peak_bytes_ = self->live_bytes_;
    FUZZ_ASSERT_MSG(self->live_bytes_ <= self->budget_,
                    "live allocations reach %zu bytes, over the budget of %zu for this input",
                    self->live_bytes_, self->budget_);
    void *user = raw + kPrefix;
    FUZZ_ASSERT((reinterpret_cast<uintptr_t>(user) & 15u) == 0);
    return user;
  }

  static void free_fn(void *opaque, void *ptr, size_t size) {
    auto *self = static_cast<FailingAllocator *>(opaque);
    FUZZ_ASSERT_MSG(ptr != nullptr, "free(NULL) reached the allocator hook");
    uint8_t *raw = static_cast<uint8_t *>(ptr) - kPrefix;
    uint64_t hdr[2];
    std::memcpy(hdr, raw, sizeof(hdr));
    FUZZ_ASSERT_MSG(hdr[1] == kMagic, "free of a pointer the allocator did not return");
    FUZZ_ASSERT_MSG(hdr[0] == size, "free size %zu differs from the allocated size %llu", size,
                    static_cast<unsigned long long>(hdr[0]));
    FUZZ_ASSERT(self->live_blocks_ > 0 && self->live_bytes_ >= size);
    self->live_bytes_ -= size;
    --self->live_blocks_;
    hdr[1] = 0;  // catch double frees
    std::memcpy(raw, hdr, sizeof(hdr));
    std::free(raw);
  }

  tblob_allocator hook_;
  uint64_t fail_at_;
  uint64_t calls_ = 0;
  bool failed_ = false;
  size_t budget_;
  size_t live_bytes_ = 0;
  uint64_t live_blocks_ = 0;
  size_t peak_bytes_ = 0;
};

// Counts process-wide malloc calls made while `armed` (sanitizer builds only; elsewhere it
// counts nothing). The scanner promises to allocate nothing: arm it around tblob_st_scan
// and disarm it inside the callback, whose own allocations do not count.
struct MallocWatch {
  static bool &armed() {
    static bool a = false;
    return a;
  }
  static uint64_t &count() {
    static uint64_t c = 0;
    return c;
  }
  static bool available() {
#ifdef FUZZ_HAVE_MALLOC_HOOKS
    static const bool installed = __sanitizer_install_malloc_and_free_hooks(
                                      [](const volatile void *, size_t) {
                                        if (armed()) ++count();
                                      },
                                      [](const volatile void *) {}) != 0;
    return installed;
#else
    return false;
#endif
  }
};

// Reads every byte of [p, p + n) so that ASan checks the whole range; returns a checksum
// (kept so the reads are not optimised away).
inline uint64_t touch(const void *p, size_t n) {
  const uint8_t *b = static_cast<const uint8_t *>(p);
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

// A sink the compiler cannot see through.
inline void consume(uint64_t v) {
  static volatile uint64_t sink;
  sink = sink + v;
}

// Known findings, reported and awaiting a fix in lib/, can be tolerated during a long
// campaign so that the fuzzer keeps exploring past them: TBLOB_FUZZ_ALLOW=id1,id2 (ids in
// fuzz/README.md "Findings"). CI smoke runs and corpus replays leave it unset: strict.
inline bool allowed(const char *id) {
  static const char *env = std::getenv("TBLOB_FUZZ_ALLOW");
  if (!env || !*env) return false;
  const size_t n = std::strlen(id);
  for (const char *p = env; *p;) {
    const char *comma = std::strchr(p, ',');
    const size_t len = comma ? static_cast<size_t>(comma - p) : std::strlen(p);
    if (len == n && std::memcmp(p, id, n) == 0) return true;
    if (!comma) break;
    p = comma + 1;
  }
  return false;
}

inline bool is_known_status(tblob_status s) {
  return std::strcmp(tblob_status_name(s), "TBLOB_E_UNKNOWN_STATUS") != 0;
}

// The diag contract of a call that returned s: the same status, a NUL-terminated message
// (non-empty on failure) and, unless file_len is SIZE_MAX, an offset inside the input.
inline void check_diag(const tblob_diag &d, tblob_status s, size_t file_len = SIZE_MAX) {
  FUZZ_ASSERT_MSG(d.status == s, "diag.status %d, returned %d", d.status, s);
  FUZZ_ASSERT(std::memchr(d.message, '\0', sizeof(d.message)) != nullptr);
  if (s != TBLOB_OK) {
    FUZZ_ASSERT_MSG(d.message[0] != '\0', "%s without a message", tblob_status_name(s));
    if (file_len != SIZE_MAX)
      FUZZ_ASSERT_MSG(d.offset == TBLOB_NO_OFFSET || d.offset <= file_len,
                      "%s: diag offset %llu beyond the %zu-byte buffer (%s)", tblob_status_name(s),
                      static_cast<unsigned long long>(d.offset), file_len, d.message);
  }
  consume(touch(d.message, std::strlen(d.message)));
}

}  // namespace fuzz

#endif  // TENSORBLOB_FUZZ_COMMON_H
