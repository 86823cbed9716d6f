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

// The fill that also reads input arrays front to back, in step with the output: every 2 KiB
// of output reads its share of each array (of 512 B, 2 KiB and 8 KiB steps, 2 KiB moved the
// most bytes; the 8-bit cases of bench_fill_ratio 0.83 of the fill against 0.70 at 8 KiB).
// The bound of a decoder that reads `len` bytes to write `n`. Returns a checksum of the reads
// (so they stay). AVX2 only; elsewhere the plain fill after one pass over the input.
struct Stream {
  const uint8_t *p;
  uint64_t len;
};
#if defined(__x86_64__)
__attribute__((target("avx2"))) inline uint64_t stream_fill_reading_avx2(uint8_t *dst, size_t n, const Stream *in,
                                                                         int count) {
  constexpr size_t kChunk = 2048;
  const size_t chunks = n / kChunk;
  __m256i acc = _mm256_setzero_si256();
  uint64_t at[4] = {0, 0, 0, 0};
  for (size_t c = 0; c < chunks; ++c) {
    for (int k = 0; k < count; ++k) {
      const uint64_t end = in[k].len * (c + 1) / chunks & ~uint64_t{31};
      for (; at[k] < end; at[k] += 32) {
        // 1 KiB ahead, once per line, as the 8-bit kernels do (without it the kernels beat
        // this "ceiling" by 10-18%)
        if ((at[k] & 63) == 0) __builtin_prefetch(in[k].p + at[k] + 1024);
        acc = _mm256_add_epi64(acc, _mm256_loadu_si256(reinterpret_cast<const __m256i *>(in[k].p + at[k])));
      }
    }
    const __m256i v = _mm256_set1_epi32(0x3f800001);
    uint8_t *d = dst + c * kChunk;
    for (size_t i = 0; i < kChunk; i += 128) {
      _mm256_stream_si256(reinterpret_cast<__m256i *>(d + i), v);
      _mm256_stream_si256(reinterpret_cast<__m256i *>(d + i + 32), v);
      _mm256_stream_si256(reinterpret_cast<__m256i *>(d + i + 64), v);
      _mm256_stream_si256(reinterpret_cast<__m256i *>(d + i + 96), v);
    }
  }
  _mm_sfence();
  if (chunks * kChunk < n) std::memset(dst + chunks * kChunk, 0x3F, n - chunks * kChunk);
  return static_cast<uint64_t>(_mm256_extract_epi64(acc, 0) ^ _mm256_extract_epi64(acc, 3));
}
#endif

// count <= 4 arrays.
inline uint64_t stream_fill_reading(uint8_t *dst, size_t n, const Stream *in, int count) {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2")) return stream_fill_reading_avx2(dst, n, in, count);
#endif
  uint64_t sum = 0;
  for (int k = 0; k < count; ++k)
    for (uint64_t i = 0; i < in[k].len; i += 64) sum += in[k].p[i];
  stream_fill(dst, n);
  return sum;
}

}  // namespace bench
