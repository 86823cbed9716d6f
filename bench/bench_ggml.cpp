// GGML block dequantization to f32, GB/s of output per type on one core (Google Benchmark).
//   cache:  16,384 values per call (64 KiB out; blocks and output stay in L2)
//   large:  64 Mi values per call (256 MiB out; non-temporal stores above the stream
//           threshold), against memcpy and a streaming-store fill of the same 256 MiB in the
//           same run (ref/memcpy_large, ref/stream_fill_large).
//   threshold/<type>/<set>/<N>MiB/<warm|cold>/<plain|stream>: the kernel with and without
//           non-temporal stores at 4-64 MiB of output (where the stream threshold should be).
// Every kernel set the host runs is measured (scalar, avx2 or neon). Blocks are random bytes with
// finite f16 scales (the SIMD kernels take the scalar path only for non-finite ones).
// ggml's own dequantize_row_* is measured by bench/ggml_peer.sh (not part of the build).
//   bench_ggml [--benchmark_filter=q4_K]   (bench/README or docs/uqff.md has the table)
#include <benchmark/benchmark.h>
#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dequant/ggml/ggml.h"
#include "tensorblob.h"

namespace g = tblob::ggml;

namespace {

constexpr size_t kCache = 16384;
constexpr size_t kLarge = size_t{64} << 20;

struct Aligned {
  float *p = nullptr;
  explicit Aligned(size_t n) : p(static_cast<float *>(std::aligned_alloc(64, n * 4))) { std::memset(p, 0, n * 4); }
  ~Aligned() { std::free(p); }
};

Aligned &out_buffer() {
  static Aligned a(kLarge);
  return a;
}

std::vector<uint8_t> make_blocks(const g::TypeInfo &t, size_t elements) {
  std::mt19937_64 rng(t.id);
  const size_t nb = elements / t.block_elems;
  std::vector<uint8_t> b(nb * t.block_bytes);
  for (auto &x : b) x = static_cast<uint8_t>(rng());
  std::vector<uint32_t> offs;
  switch (t.slot) {
    case g::kSlotQ4_0: case g::kSlotQ5_0: case g::kSlotQ8_0: case g::kSlotQ8_1: offs = {0}; break;
    case g::kSlotQ4_1: case g::kSlotQ5_1: case g::kSlotQ4_K: case g::kSlotQ5_K: offs = {0, 2}; break;
    case g::kSlotQ2_K: offs = {80, 82}; break;
    case g::kSlotQ3_K: offs = {108}; break;
    case g::kSlotQ6_K: offs = {208}; break;
    case g::kSlotIQ4_NL: case g::kSlotIQ4_XS: case g::kSlotIQ2_XXS: case g::kSlotIQ2_XS: case g::kSlotIQ2_S:
    case g::kSlotIQ3_XXS: case g::kSlotIQ3_S: case g::kSlotIQ1_S: case g::kSlotQ1_0: offs = {0}; break;
    case g::kSlotTQ1_0: offs = {52}; break;
    case g::kSlotTQ2_0: offs = {64}; break;
    default: break;  // MXFP4, NVFP4: byte scales, always finite; IQ1_M below
  }
  for (size_t i = 0; i < nb; ++i) {
    uint8_t *p = &b[i * t.block_bytes];
    for (uint32_t o : offs) {
      const uint16_t h = static_cast<uint16_t>(0x2000 + (rng() & 0x0FFF));
      p[o] = static_cast<uint8_t>(h);
      p[o + 1] = static_cast<uint8_t>(h >> 8);
    }
    if (t.slot == g::kSlotQ8_K) {
      const float d = 0.01f;
      std::memcpy(p, &d, 4);
    }
    if (t.slot == g::kSlotIQ1_M) {  // d's nibbles: the top nibbles of bytes 49, 51, 53, 55
      const uint16_t h = static_cast<uint16_t>(0x2000 + (rng() & 0x0FFF));
      for (int k = 0; k < 4; ++k) p[49 + 2 * k] = static_cast<uint8_t>((p[49 + 2 * k] & 0x0F) | (((h >> (4 * k)) & 0xF) << 4));
    }
  }
  return b;
}

void run_ggml(benchmark::State &st, const g::Kernels *k, const g::TypeInfo *t, size_t elements,
              const std::vector<uint8_t> *blocks) {
  float *out = out_buffer().p;
  tblob::Diag d;
  for (auto _ : st) {
    const tblob::Status s =
        g::dequantize(*k, t->id, blocks->data(), blocks->size(), elements, TBLOB_DTYPE_F32, out, elements * 4, d);
    if (s != TBLOB_OK) st.SkipWithError("dequantize failed");
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(elements * 4));
  st.counters["Gelem/s"] = benchmark::Counter(static_cast<double>(elements) * st.iterations() / 1e9,
                                              benchmark::Counter::kIsRate);
}

void memcpy_ref(benchmark::State &st, size_t n) {
  static Aligned src(kLarge);
  float *out = out_buffer().p;
  for (auto _ : st) {
    std::memcpy(out, src.p, n * 4);
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(n * 4));
}

#if defined(__x86_64__)
__attribute__((target("avx"))) void stream_fill(float *p, size_t n) {
  const __m256 v = _mm256_set1_ps(1.0f);
  for (size_t i = 0; i < n; i += 8) _mm256_stream_ps(p + i, v);
  _mm_sfence();
}
#elif defined(__aarch64__)
void stream_fill(float *p, size_t n) {
  const float32x4_t v = vdupq_n_f32(1.0f);
  for (size_t i = 0; i < n; i += 8) __asm__ volatile("stnp %q0, %q1, [%2]" : : "w"(v), "w"(v), "r"(p + i) : "memory");
  __asm__ volatile("dmb ishst" : : : "memory");
}
#endif

void stream_ref(benchmark::State &st) {
  float *out = out_buffer().p;
  for (auto _ : st) {
    stream_fill(out, kLarge);
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(kLarge * 4));
}

// Where non-temporal stores start to pay: the kernel called directly with and without kStream
// on outputs of 4, 16 and 64 MiB, either into one reused buffer ("warm": it stays in the
// last-level cache when it fits) or rotating over 256 MiB of buffers ("cold").
void threshold_probe(benchmark::State &st, const g::Kernels *k, const g::TypeInfo *t, size_t mib, bool stream,
                     bool cold, const std::vector<uint8_t> *blocks) {
  const size_t n = mib << 18, nb = n / t->block_elems;
  const size_t nbuf = cold ? kLarge / n : 1;
  float *base = out_buffer().p;
  size_t i = 0;
  for (auto _ : st) {
    k->to_f32[t->slot](blocks->data(), nb, base + (i++ % nbuf) * n, stream ? g::kStream : 0u);
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(n * 4));
}

}  // namespace

int main(int argc, char **argv) {
  static std::vector<std::vector<uint8_t>> keep;
  keep.reserve(64);
  std::vector<const g::Kernels *> sets{&g::scalar_kernels()};
  for (const char *name : {"avx2", "neon"}) {
    const g::Kernels *k = nullptr;
    if (g::kernels_by_name(name, &k) == TBLOB_OK) sets.push_back(k);
  }
  benchmark::RegisterBenchmark("ref/memcpy_cache", memcpy_ref, kCache);
  benchmark::RegisterBenchmark("ref/memcpy_large", memcpy_ref, kLarge)->Iterations(4);
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx")) benchmark::RegisterBenchmark("ref/stream_fill_large", stream_ref)->Iterations(4);
#elif defined(__aarch64__)
  benchmark::RegisterBenchmark("ref/stream_fill_large", stream_ref)->Iterations(4);
#endif
  for (uint32_t slot = g::kSlotQ4_0; slot < g::kSlotCount; ++slot) {
    const g::TypeInfo *t = g::type_info_by_slot(slot);
    keep.push_back(make_blocks(*t, kCache));
    const std::vector<uint8_t> *cache_blocks = &keep.back();
    keep.push_back(make_blocks(*t, kLarge));
    const std::vector<uint8_t> *large_blocks = &keep.back();
    for (const g::Kernels *k : sets) {
      benchmark::RegisterBenchmark((std::string(t->name) + "/" + k->name + "/cache").c_str(), run_ggml, k, t, kCache,
                                   cache_blocks);
      benchmark::RegisterBenchmark((std::string(t->name) + "/" + k->name + "/large").c_str(), run_ggml, k, t, kLarge,
                                   large_blocks)
          ->Iterations(4);
    }
  }
  for (uint32_t slot : {static_cast<uint32_t>(g::kSlotQ4_K), static_cast<uint32_t>(g::kSlotQ8_0)}) {
    const g::TypeInfo *t = g::type_info_by_slot(slot);
    keep.push_back(make_blocks(*t, size_t{64} << 18));
    for (size_t mib : {4, 16, 64})
      for (bool cold : {false, true})
        for (bool stream : {false, true})
          benchmark::RegisterBenchmark((std::string("threshold/") + t->name + "/" + sets.back()->name + "/" +
                                        std::to_string(mib) + "MiB/" + (cold ? "cold/" : "warm/") +
                                        (stream ? "stream" : "plain")).c_str(),
                                       threshold_probe, sets.back(), t, mib, stream, cold, &keep.back())
              ->MinTime(0.3);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
