// What several benchmark programs share: the streaming-store fill they measure themselves
// against, pre-faulted mmap buffers, the xorshift they draw test data from, and reading a
// whole file. Header-only: each benchmark is one translation unit.
#pragma once
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace bench {

// A buffer of `bytes` (at least 1) from mmap, transparent huge pages asked for, pre-faulted
// with a non-zero byte. A failed mmap ends the benchmark (it has nothing to measure).
struct Big {
  uint8_t *p = nullptr;
  size_t n = 0;
  explicit Big(size_t bytes) : n(bytes ? bytes : 1) {
    void *m = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
      std::fprintf(stderr, "mmap of %zu bytes failed\n", n);
      std::exit(1);
    }
    p = static_cast<uint8_t *>(m);
#ifdef MADV_HUGEPAGE
    madvise(p, n, MADV_HUGEPAGE);
#endif
    std::memset(p, 1, n);
  }
  ~Big() { munmap(p, n); }
  Big(const Big &) = delete;
  Big &operator=(const Big &) = delete;
};

// xorshift64: reproducible test data, one sequence per program.
inline uint64_t xs() {
  static uint64_t state = 0x9E3779B97F4A7C15ull;
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

// The whole file, or an empty vector when it cannot be read.
template <class Byte = uint8_t>
std::vector<Byte> read_file(const char *path) {
  std::vector<Byte> out;
  FILE *f = std::fopen(path, "rb");
  if (!f) return out;
  std::fseek(f, 0, SEEK_END);
  const long size = std::ftell(f);
  if (size > 0) {
    out.resize(static_cast<size_t>(size));
    std::fseek(f, 0, SEEK_SET);
    if (std::fread(out.data(), 1, out.size(), f) != out.size()) out.clear();
  }
  std::fclose(f);
  return out;
}

// The streaming-store fill: non-temporal stores of a non-zero pattern (some machines write
// zero lines faster), 128 bytes a step, then a fence; the tail past the last whole step is
// memset. AVX2 where the CPU has it (checked at run time: the build has no -mavx2), SSE2
// otherwise on x86-64, memset elsewhere. dst: 32-byte aligned.

#if defined(__x86_64__)
__attribute__((target("avx2"))) inline size_t stream_fill_avx2(uint8_t *dst, size_t n) {
  const __m256i z = _mm256_set1_epi32(0x3F800000);
  size_t i = 0;
  for (; i + 128 <= n; i += 128) {
    _mm256_stream_si256(reinterpret_cast<__m256i *>(dst + i), z);
    _mm256_stream_si256(reinterpret_cast<__m256i *>(dst + i + 32), z);
    _mm256_stream_si256(reinterpret_cast<__m256i *>(dst + i + 64), z);
    _mm256_stream_si256(reinterpret_cast<__m256i *>(dst + i + 96), z);
  }
  return i;
}

inline size_t stream_fill_sse2(uint8_t *dst, size_t n) {
  const __m128i z = _mm_set1_epi32(0x3F800000);
  size_t i = 0;
  for (; i + 128 <= n; i += 128)
    for (size_t k = 0; k < 128; k += 16) _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i + k), z);
  return i;
}
#endif

inline void stream_fill(uint8_t *dst, size_t n) {
  size_t done = 0;
#if defined(__x86_64__)
  done = __builtin_cpu_supports("avx2") ? stream_fill_avx2(dst, n) : stream_fill_sse2(dst, n);
  _mm_sfence();
#endif
  if (done < n) std::memset(dst + done, 0x3F, n - done);
}

}  // namespace bench
