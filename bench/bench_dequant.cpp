// Dequantization throughput (Google Benchmark). For every scheme, with 1 and 2 threads:
//   cache/<kernel>/<case>/<out>   16 rows x 4096 columns decoded again and again (input and
//                                 output stay in L2): items_per_second = elements / s
//   large/<kernel>/<case>/f32     64 Mi elements into a 256 MiB f32 output (non-temporal
//                                 stores above the stream threshold): bytes_per_second = output
//   large/memset, large/stream    the same 256 MiB written by memset and by a plain
//                                 non-temporal store loop, measured in the same run (both
//                                 write non-zero bytes: zero lines can be cheaper to write)
//   ratio/<kernel>/<case>/f32     the streaming-store loop and the kernel alternately over the
//                                 same 256 MiB, best of each: the least noisy ratio
//   SLM1 q8_0 (row scales) and q4_0 (blocks of 32 / 64) are the slm1-* cases.
//   cache/ggml-q4_1               the library's GGML Q4_1 kernel (lib/dequant/ggml), if built,
//                                 on the same element count: the "ggml nearest type" peer
// Threads split the rows (large) or decode their own copy (cache). Run, e.g.:
//   bench_dequant --benchmark_min_time=0.3 --benchmark_filter='large/'
// bench/README-dequant.md has the numbers and the MLX peer (bench/mlx_peer.py).
#include <benchmark/benchmark.h>

#include <chrono>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "dequant/dequant.h"
#include "dequant/dispatch.h"
#include "dequant/quant_desc.h"
#include "dequant/scalar/scalar.h"
#include "bench_util.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif
#if __has_include("dequant/ggml/ggml.h")
#include "dequant/ggml/ggml.h"
#define BENCH_HAVE_GGML 1
#endif

using namespace tblob;

namespace {

constexpr uint64_t kCols = 4096;
constexpr uint64_t kCacheRows = 16;                        // 64 Ki elements
constexpr uint64_t kLargeElems = uint64_t{64} << 20;       // 64 Mi elements
constexpr uint64_t kLargeRows = kLargeElems / kCols;
constexpr size_t kLargeBytes = size_t{256} << 20;          // 256 MiB of f32

using bench::Big;
using bench::xs;

Big &large_out() {
  static Big b(kLargeBytes + 4096);
  return b;
}


struct Case {
  const char *name;
  QuantScheme scheme;
  uint32_t bits, group, sdt;
  GlobalScaleMode gm = GlobalScaleMode::kNone;
};

// Every scheme. MLX's default is affine 4-bit, group 64, with the model's dtype (bf16) for
// scales and biases; Q4_1's nearest MLX type is 4-bit group 32 with f16 scales.
const Case kCases[] = {
    {"affine4-g64-bf16", QuantScheme::kMlxAffine, 4, 64, TBLOB_DTYPE_BF16},
    {"affine4-g32-f16", QuantScheme::kMlxAffine, 4, 32, TBLOB_DTYPE_F16},
    {"affine4-g64-f32", QuantScheme::kMlxAffine, 4, 64, TBLOB_DTYPE_F32},
    {"affine8-g64-bf16", QuantScheme::kMlxAffine, 8, 64, TBLOB_DTYPE_BF16},
    {"affine8-g32-f16", QuantScheme::kMlxAffine, 8, 32, TBLOB_DTYPE_F16},
    {"affine8-g64-f32", QuantScheme::kMlxAffine, 8, 64, TBLOB_DTYPE_F32},
    {"affine2-g64-bf16", QuantScheme::kMlxAffine, 2, 64, TBLOB_DTYPE_BF16},
    {"affine3-g64-bf16", QuantScheme::kMlxAffine, 3, 64, TBLOB_DTYPE_BF16},
    {"affine5-g64-bf16", QuantScheme::kMlxAffine, 5, 64, TBLOB_DTYPE_BF16},
    {"affine6-g64-bf16", QuantScheme::kMlxAffine, 6, 64, TBLOB_DTYPE_BF16},
    {"mxfp4", QuantScheme::kMxfp4, 0, 32, TBLOB_DTYPE_F8_E8M0},
    {"mxfp8", QuantScheme::kMxfp8, 0, 32, TBLOB_DTYPE_F8_E8M0},
    {"nvfp4", QuantScheme::kNvfp4, 0, 16, TBLOB_DTYPE_F8_E4M3},
    {"nvfp4-global", QuantScheme::kNvfp4, 0, 16, TBLOB_DTYPE_F8_E4M3, GlobalScaleMode::kMultiplier},
    {"F8_E4M3", QuantScheme::kF8E4M3, 0, 0, 0},
    {"F8_E5M2", QuantScheme::kF8E5M2, 0, 0, 0},
    {"F8_E8M0", QuantScheme::kF8E8M0, 0, 0, 0},
    {"F8_E4M3FNUZ", QuantScheme::kF8E4M3Fnuz, 0, 0, 0},
    {"F8_E5M2FNUZ", QuantScheme::kF8E5M2Fnuz, 0, 0, 0},
    {"F4", QuantScheme::kF4E2M1, 0, 0, 0},
    {"F16", QuantScheme::kF16, 0, 0, 0},
    {"BF16", QuantScheme::kBF16, 0, 0, 0},
    {"F32", QuantScheme::kF32, 0, 0, 0},
    // SLM1 (docs/slm1.md section 6): q8_0 one f32 scale per 4096-column row, q4_0 blocks of 32
    // and 64 with f32 scales.
    {"slm1-q8_0", QuantScheme::kSlm1Q8, 0, static_cast<uint32_t>(kCols), TBLOB_DTYPE_F32},
    {"slm1-q4_0-b32", QuantScheme::kSlm1Q4, 0, 32, TBLOB_DTYPE_F32},
    {"slm1-q4_0-b64", QuantScheme::kSlm1Q4, 0, 64, TBLOB_DTYPE_F32},
};

bool is_hot(const Case &c) {
  return (c.scheme == QuantScheme::kMlxAffine && (c.bits == 4 || c.bits == 8)) ||
         c.scheme == QuantScheme::kMxfp8 || c.scheme == QuantScheme::kNvfp4 ||
         c.scheme == QuantScheme::kMxfp4 || c.scheme == QuantScheme::kSlm1Q8 ||
         c.scheme == QuantScheme::kSlm1Q4;
}

// A tensor with realistic values: random codes, finite scales/biases of model-like size.
struct Tensor {
  QuantDesc d;
  std::vector<uint8_t> data, scales, biases;
  uint8_t global[4];
  std::unique_ptr<Big> big_data;  // large inputs
};

void fill_scale(uint32_t dt, uint8_t *p, bool bias) {
  const float mag = bias ? -0.02f : 0.001f + static_cast<float>(xs() % 1000) * 1e-5f;
  uint32_t f;
  std::memcpy(&f, &mag, 4);
  if (dt == TBLOB_DTYPE_F32) {
    std::memcpy(p, &f, 4);
  } else if (dt == TBLOB_DTYPE_BF16) {
    const uint16_t h = static_cast<uint16_t>(f >> 16);
    std::memcpy(p, &h, 2);
  } else if (dt == TBLOB_DTYPE_F16) {
    const uint16_t h = static_cast<uint16_t>(bias ? 0xA51F : 0x1419 + xs() % 512);
    std::memcpy(p, &h, 2);
  } else if (dt == TBLOB_DTYPE_F8_E8M0) {
    *p = static_cast<uint8_t>(118 + xs() % 8);
  } else {
    *p = static_cast<uint8_t>(0x20 + xs() % 0x50);
  }
}

std::unique_ptr<Tensor> make(const Case &c, uint64_t rows) {
  auto t = std::make_unique<Tensor>();
  QuantDesc &d = t->d;
  d.scheme = c.scheme;
  d.bits = c.bits;
  d.group_size = c.group;
  d.scale_dtype = c.sdt;
  d.bias_dtype = c.scheme == QuantScheme::kMlxAffine ? c.sdt : 0;
  d.special = kSpecialMlx;
  d.global_scale_mode = c.gm;
  d.rows = rows;
  d.cols = kCols;
  const uint64_t nbytes = rows * kCols * quant_element_bits(d) / 8;
  uint8_t *data;
  if (nbytes > (uint64_t{16} << 20)) {
    t->big_data.reset(new Big(nbytes));
    data = t->big_data->p;
  } else {
    t->data.resize(nbytes);
    data = t->data.data();
  }
  for (uint64_t i = 0; i + 8 <= nbytes; i += 8) {
    const uint64_t v = xs();
    std::memcpy(data + i, &v, 8);
  }
  if (c.scheme == QuantScheme::kF16 || c.scheme == QuantScheme::kBF16 || c.scheme == QuantScheme::kF32) {
    for (uint64_t i = 0; i < nbytes; i += (c.scheme == QuantScheme::kF32 ? 4 : 2)) {
      data[i + (c.scheme == QuantScheme::kF32 ? 3 : 1)] &= 0x3F;  // finite, moderate values
    }
  }
  d.data = data;
  d.data_bytes = nbytes;
  if (c.group) {
    const uint64_t groups = rows * (kCols / c.group);
    const uint32_t ss = c.sdt == TBLOB_DTYPE_F32 ? 4 : (c.sdt == TBLOB_DTYPE_F16 || c.sdt == TBLOB_DTYPE_BF16) ? 2 : 1;
    t->scales.resize(groups * ss);
    for (uint64_t i = 0; i < groups; ++i) fill_scale(c.sdt, &t->scales[i * ss], false);
    d.scales = t->scales.data();
    d.scales_bytes = t->scales.size();
    if (c.scheme == QuantScheme::kMlxAffine) {
      t->biases.resize(groups * ss);
      for (uint64_t i = 0; i < groups; ++i) fill_scale(c.sdt, &t->biases[i * ss], true);
      d.biases = t->biases.data();
      d.biases_bytes = t->biases.size();
    }
  }
  if (c.gm != GlobalScaleMode::kNone) {
    const float g = 0.37f;
    std::memcpy(t->global, &g, 4);
    d.global_scale = t->global;
    d.global_scale_bytes = 4;
  }
  if (validate_desc(d) != TBLOB_OK) {
    std::fprintf(stderr, "bad bench descriptor %s\n", c.name);
    std::abort();
  }
  return t;
}

// Best (minimum) wall time of one iteration: on a shared machine the mean mostly measures the
// other processes; the minimum is the speed of the code. Reported as counters next to
// Google Benchmark's own mean-based rates.
struct BestOf {
  double best = 1e30;
  std::chrono::steady_clock::time_point t0;
  void start() { t0 = std::chrono::steady_clock::now(); }
  void stop() {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s < best) best = s;
  }
};

const uint32_t kOut[3] = {TBLOB_DTYPE_F32, TBLOB_DTYPE_F16, TBLOB_DTYPE_BF16};
const char *kOutName[3] = {"f32", "f16", "bf16"};

void bm_cache(benchmark::State &state, const KernelTable *k, const Case *c, int slot) {
  static thread_local std::unique_ptr<Tensor> t;
  static thread_local const Case *made = nullptr;
  if (made != c) {
    t = make(*c, kCacheRows);
    made = c;
  }
  std::vector<uint8_t> out(kCacheRows * kCols * 4 + 64);
  BestOf b;
  for (auto _ : state) {
    b.start();
    const Status st = dequantize_rows_with(*k, t->d, kOut[slot], 0, kCacheRows, out.data(), out.size());
    benchmark::ClobberMemory();
    b.stop();
    if (st != TBLOB_OK) state.SkipWithError("dequantize failed");
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kCacheRows * kCols));
  state.counters["best_Gelem/s"] = static_cast<double>(kCacheRows * kCols) / b.best / 1e9;
}

std::unique_ptr<Tensor> g_large;
const Case *g_large_case = nullptr;

void bm_large(benchmark::State &state, const KernelTable *k, const Case *c, bool stream) {
  if (state.thread_index() == 0 && g_large_case != c) {
    g_large.reset();
    g_large = make(*c, kLargeRows);
    g_large_case = c;
  }
  // Google Benchmark starts the threads together; thread 0 builds the tensor before any
  // timing, the others wait at the first iteration barrier.
  const uint64_t nt = static_cast<uint64_t>(state.threads());
  const uint64_t ti = static_cast<uint64_t>(state.thread_index());
  const uint64_t rb = kLargeRows * ti / nt, re = kLargeRows * (ti + 1) / nt;
  uint8_t *dst = large_out().p + rb * kCols * 4;
  const uint64_t old = stream ? stream_threshold() : set_stream_threshold(UINT64_MAX);
  BestOf b;
  for (auto _ : state) {
    b.start();
    const Status st = dequantize_rows_with(*k, g_large->d, TBLOB_DTYPE_F32, rb, re, dst,
                                           (re - rb) * kCols * 4);
    benchmark::ClobberMemory();
    b.stop();
    if (st != TBLOB_OK) state.SkipWithError("dequantize failed");
  }
  state.counters["best_GB/s"] = static_cast<double>((re - rb) * kCols * 4) / b.best / 1e9;
  if (!stream && ti == 0) set_stream_threshold(old);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * (re - rb) * kCols * 4));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * (re - rb) * kCols));
}

void bm_memset(benchmark::State &state) {
  const size_t part = kLargeBytes / static_cast<size_t>(state.threads());
  uint8_t *dst = large_out().p + part * static_cast<size_t>(state.thread_index());
  BestOf b;
  for (auto _ : state) {
    b.start();
    std::memset(dst, 0x3F, part);  // not zero: some machines write zero lines faster
    benchmark::ClobberMemory();
    b.stop();
  }
  state.counters["best_GB/s"] = static_cast<double>(part) / b.best / 1e9;
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * part));
}

void bm_stream(benchmark::State &state) {
  const size_t part = kLargeBytes / static_cast<size_t>(state.threads());
  uint8_t *dst = large_out().p + part * static_cast<size_t>(state.thread_index());
  BestOf b;
  for (auto _ : state) {
    b.start();
    bench::stream_fill(dst, part);
    benchmark::ClobberMemory();
    b.stop();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * part));
  state.counters["best_GB/s"] = static_cast<double>(part) / b.best / 1e9;
}

// The target ratio measured side by side: each iteration runs the streaming-store loop and
// then the kernel over the same 256 MiB (single thread); counters give the best of each and
// kernel / stream (the issue asks for >= 0.70 on int4 / int8 / mxfp8 -> f32).
void bm_ratio(benchmark::State &state, const KernelTable *k, const Case *c) {
  if (g_large_case != c) {
    g_large.reset();
    g_large = make(*c, kLargeRows);
    g_large_case = c;
  }
  uint8_t *dst = large_out().p;
  BestOf bs, bk;
  for (auto _ : state) {
    bs.start();
    bench::stream_fill(dst, kLargeBytes);
    benchmark::ClobberMemory();
    bs.stop();
    bk.start();
    const Status st = dequantize_rows_with(*k, g_large->d, TBLOB_DTYPE_F32, 0, kLargeRows, dst, kLargeBytes);
    benchmark::ClobberMemory();
    bk.stop();
    if (st != TBLOB_OK) state.SkipWithError("dequantize failed");
  }
  state.counters["stream_GB/s"] = static_cast<double>(kLargeBytes) / bs.best / 1e9;
  state.counters["kernel_GB/s"] = static_cast<double>(kLargeBytes) / bk.best / 1e9;
  state.counters["ratio"] = bs.best / bk.best;
}

#if defined(BENCH_HAVE_GGML)
// GGML Q4_1 (32 codes, f16 d and m per 20-byte block) -> f32, same element count as cache/.
void bm_ggml_q41(benchmark::State &state) {
  const uint64_t elems = kCacheRows * kCols, blocks = elems / 32;
  std::vector<uint8_t> src(blocks * 20);
  for (uint64_t b = 0; b < blocks; ++b) {
    uint8_t *p = &src[b * 20];
    const uint16_t d = static_cast<uint16_t>(0x1419 + xs() % 512), m = 0xA51F;
    std::memcpy(p, &d, 2);
    std::memcpy(p + 2, &m, 2);
    for (int i = 4; i < 20; ++i) p[i] = static_cast<uint8_t>(xs());
  }
  std::vector<float> out(elems);
  const ggml::Kernels &k = ggml::active_kernels();
  BestOf b;
  for (auto _ : state) {
    b.start();
    k.to_f32[ggml::kSlotQ4_1](src.data(), blocks, out.data(), 0);
    benchmark::ClobberMemory();
    b.stop();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * elems));
  state.counters["best_Gelem/s"] = static_cast<double>(elems) / b.best / 1e9;
  state.SetLabel(k.name);
}
#endif

void register_all() {
  uint32_t n = 0;
  const char *const *names = supported_kernels(&n);
  std::printf("kernel sets: ");
  for (uint32_t i = 0; i < n; ++i) std::printf("%s ", names[i]);
  std::printf("(stream threshold %llu bytes)\n", static_cast<unsigned long long>(stream_threshold()));
  const KernelTable *best = kernel_table_by_name(names[0]);
  // Cache-resident: every set x every scheme (f32), the hot schemes also in f16 / bf16.
  for (uint32_t i = 0; i < n; ++i) {
    const KernelTable *k = kernel_table_by_name(names[i]);
    for (const Case &c : kCases) {
      for (int slot = 0; slot < 3; ++slot) {
        if (slot != 0 && !is_hot(c)) continue;
        const std::string name = std::string("cache/") + names[i] + "/" + c.name + "/" + kOutName[slot];
        benchmark::RegisterBenchmark(name.c_str(), bm_cache, k, &c, slot)->ThreadRange(1, 2)->UseRealTime();
      }
    }
  }
#if defined(BENCH_HAVE_GGML)
  benchmark::RegisterBenchmark("cache/ggml-q4_1/f32", bm_ggml_q41)->ThreadRange(1, 2)->UseRealTime();
#endif
  // Large outputs: the references first, then every scheme with the best set (and the hot
  // ones also with stores kept in cache, and with every other set).
  benchmark::RegisterBenchmark("large/memset", bm_memset)->ThreadRange(1, 2)->UseRealTime();
  benchmark::RegisterBenchmark("large/stream", bm_stream)->ThreadRange(1, 2)->UseRealTime();
  for (const Case &c : kCases) {
    if (c.scheme == QuantScheme::kMxfp8 || (c.scheme == QuantScheme::kMlxAffine && (c.bits == 4 || c.bits == 8)) ||
        c.scheme == QuantScheme::kSlm1Q8 || c.scheme == QuantScheme::kSlm1Q4) {
      benchmark::RegisterBenchmark((std::string("ratio/") + names[0] + "/" + c.name + "/f32").c_str(), bm_ratio,
                                   best, &c)->UseRealTime();
    }
  }
  for (const Case &c : kCases) {
    for (uint32_t i = 0; i < n; ++i) {
      if (i > 0 && !is_hot(c)) continue;
      const KernelTable *k = kernel_table_by_name(names[i]);
      const std::string name = std::string("large/") + names[i] + "/" + c.name + "/f32";
      benchmark::RegisterBenchmark(name.c_str(), bm_large, k, &c, true)->ThreadRange(1, 2)->UseRealTime();
      if (i == 0 && is_hot(c)) {
        benchmark::RegisterBenchmark((name + "/no-nt").c_str(), bm_large, best, &c, false)
            ->Threads(1)
            ->UseRealTime();
      }
    }
  }
}

}  // namespace

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
