// Every SIMD kernel set the host can run (avx512, avx2 on x86-64; neon on arm64, also under
// qemu-aarch64) against the scalar reference, bit for bit: random inputs of every scheme x
// output dtype x shapes / group sizes / row ranges, special-value bytes (NaN, inf, subnormal,
// E8M0 0x00/0xFF, E4M3 0x7F/0xFF, every special-value preset), exhaustive code tables, the
// non-temporal (staged, streamed) path, misaligned destinations, and guard pages on both
// sides of every input range; SLM1 q8_0 / q4_0 with special f32 scales, -128 / -8 codes,
// odd shapes and unaligned inputs. Sets the host lacks are skipped (GTEST_SKIP), sets compiled out
// are skipped too. "avx512-plain" is the avx512 table without its AVX512_BF16 + VBMI entries
// (what a CPU without them runs), tested when this host has them. Also the dispatch rules: TBLOB_KERNEL, set_kernel, "unavailable".
//
// TBLOB_TEST_SEED (environment) changes the random seed; TBLOB_TEST_SCALE=N multiplies the
// number of random cases.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "dequant/dequant.h"
#include "dequant/dispatch.h"
#include "dequant/quant_desc.h"
#include "dequant/scalar/scalar.h"

using namespace tblob;

namespace {

uint64_t env_u64(const char *name, uint64_t dflt) {
  const char *e = std::getenv(name);
  return (e && *e) ? std::strtoull(e, nullptr, 10) : dflt;
}
uint64_t seed_base() { return env_u64("TBLOB_TEST_SEED", 20240611); }
int scale_factor() { return static_cast<int>(env_u64("TBLOB_TEST_SCALE", 1)); }

// Bytes with an inaccessible page on each side; the range sits against the trailing guard
// (at_end) or right after the leading one, so reading one byte outside faults either way.
class Guarded {
 public:
  Guarded(const std::vector<uint8_t> &bytes, bool at_end) {
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    n_ = bytes.size();
    const size_t body = (n_ + page_ - 1) / page_ * page_ + (n_ == 0 ? page_ : 0);
    len_ = body + 2 * page_;
    void *m = mmap(nullptr, len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
      map_ = nullptr;
      return;
    }
    map_ = static_cast<uint8_t *>(m);
    mprotect(map_, page_, PROT_NONE);
    mprotect(map_ + page_ + body, page_, PROT_NONE);
    ptr_ = at_end ? map_ + page_ + body - n_ : map_ + page_;
    if (n_) std::memcpy(ptr_, bytes.data(), n_);
  }
  ~Guarded() {
    if (map_) munmap(map_, len_);
  }
  Guarded(const Guarded &) = delete;
  Guarded &operator=(const Guarded &) = delete;
  const uint8_t *data() const { return n_ ? ptr_ : nullptr; }
  size_t size() const { return n_; }

 private:
  uint8_t *map_ = nullptr;
  uint8_t *ptr_ = nullptr;
  size_t n_ = 0, len_ = 0, page_ = 0;
};

const uint32_t kOutDtypes[3] = {TBLOB_DTYPE_F32, TBLOB_DTYPE_F16, TBLOB_DTYPE_BF16};
const char *kOutNames[3] = {"f32", "f16", "bf16"};

uint32_t scale_bytes_of(uint32_t dt) {
  return dt == TBLOB_DTYPE_F32 ? 4 : (dt == TBLOB_DTYPE_F16 || dt == TBLOB_DTYPE_BF16) ? 2 : 1;
}

// ---- special values -----------------------------------------------------------------------
const uint32_t kF32Special[] = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u,
                                0xFFC00000u, 0x7F800001u, 0x7FA00000u, 0x00000001u, 0x807FFFFFu,
                                0x00400000u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x3F800000u, 0xBF800000u,
                                0x477FF000u, 0x477FEFFFu, 0x33000000u, 0x33000001u, 0x38800000u,
                                0x387FFFFFu, 0x3F808000u, 0x3F818000u, 0x7F7F8000u};
const uint16_t kH16Special[] = {0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7C01, 0x7D00,
                                0x0001, 0x83FF, 0x0400, 0x7BFF, 0xFBFF, 0x3C00, 0xBC00, 0x3555};
const uint16_t kB16Special[] = {0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7F81, 0x7FA0,
                                0x0001, 0x807F, 0x0080, 0x7F7F, 0xFF7F, 0x3F80, 0xBF80, 0x4B00};

struct Rng {
  std::mt19937_64 g;
  explicit Rng(uint64_t s) : g(s) {}
  uint64_t u(uint64_t n) { return n ? g() % n : 0; }
  bool p(double x) { return std::uniform_real_distribution<double>(0, 1)(g) < x; }
  uint8_t byte() { return static_cast<uint8_t>(g()); }
};

// A scale/bias value in dtype dt: mostly ordinary numbers (so most groups take the finite
// fast paths), sometimes a special value, sometimes raw random bits.
void put_scale(Rng &r, uint32_t dt, double special_rate, uint8_t *dst) {
  if (dt == TBLOB_DTYPE_F32) {
    uint32_t v;
    if (r.p(special_rate)) {
      v = kF32Special[r.u(sizeof(kF32Special) / 4)];
    } else if (r.p(0.1)) {
      v = static_cast<uint32_t>(r.g());
    } else {
      const uint32_t e = 127 - 20 + static_cast<uint32_t>(r.u(26));
      v = (static_cast<uint32_t>(r.u(2)) << 31) | (e << 23) | static_cast<uint32_t>(r.u(1u << 23));
    }
    std::memcpy(dst, &v, 4);
  } else if (dt == TBLOB_DTYPE_F16 || dt == TBLOB_DTYPE_BF16) {
    const bool h = dt == TBLOB_DTYPE_F16;
    uint16_t v;
    if (r.p(special_rate)) {
      v = h ? kH16Special[r.u(16)] : kB16Special[r.u(16)];
    } else if (r.p(0.1)) {
      v = static_cast<uint16_t>(r.g());
    } else if (h) {
      v = static_cast<uint16_t>((r.u(2) << 15) | ((5 + r.u(20)) << 10) | r.u(1024));
    } else {
      v = static_cast<uint16_t>((r.u(2) << 15) | ((127 - 20 + r.u(26)) << 7) | r.u(128));
    }
    std::memcpy(dst, &v, 2);
  } else if (dt == TBLOB_DTYPE_F8_E8M0) {
    static const uint8_t sp[] = {0x00, 0xFF, 0x01, 0xFE, 0x7F, 0x6F, 0x8F, 0x66, 0x67, 0x8E, 0x8F, 0x90};
    *dst = r.p(special_rate * 3) ? sp[r.u(sizeof(sp))] : r.p(0.5) ? static_cast<uint8_t>(110 + r.u(35)) : r.byte();
  } else {  // E4M3 (nvfp4 scales)
    static const uint8_t sp[] = {0x7F, 0xFF, 0x00, 0x80, 0x01, 0x07, 0x08, 0x7E, 0xFE};
    *dst = r.p(special_rate * 3) ? sp[r.u(sizeof(sp))] : r.byte();
  }
}

// One random tensor, its bytes in guarded memory.
struct Tensor {
  QuantDesc d;
  std::unique_ptr<Guarded> data, scales, biases, global;
  std::string what;
};

std::unique_ptr<Tensor> make_tensor(Rng &r, QuantScheme scheme, uint32_t bits, uint32_t gsize,
                                    uint32_t sdt, uint64_t rows, uint64_t cols, uint32_t special,
                                    GlobalScaleMode gm, double special_rate, bool at_end,
                                    const std::vector<uint8_t> *fixed_data = nullptr,
                                    const std::vector<uint8_t> *fixed_scales = nullptr) {
  auto t = std::make_unique<Tensor>();
  QuantDesc &d = t->d;
  d.scheme = scheme;
  d.bits = bits;
  d.group_size = gsize;
  d.scale_dtype = sdt;
  d.bias_dtype = scheme == QuantScheme::kMlxAffine ? sdt : 0;
  d.special = special;
  d.global_scale_mode = gm;
  d.rows = rows;
  d.cols = cols;
  QuantDesc probe = d;
  const uint32_t eb = quant_element_bits(probe);
  const uint64_t data_bytes = rows * cols * eb / 8;
  std::vector<uint8_t> data(data_bytes);
  if (fixed_data) {
    data = *fixed_data;
  } else {
    for (auto &b : data) b = r.byte();
  }
  t->data.reset(new Guarded(data, at_end));
  d.data = t->data->data();
  d.data_bytes = data_bytes;
  if (gsize != 0) {
    const uint64_t groups = rows * (cols / gsize);
    const uint32_t ss = scale_bytes_of(sdt);
    std::vector<uint8_t> sc(groups * ss), bi;
    if (fixed_scales) {
      sc = *fixed_scales;
    } else {
      for (uint64_t i = 0; i < groups; ++i) put_scale(r, sdt, special_rate, &sc[i * ss]);
    }
    t->scales.reset(new Guarded(sc, !at_end));
    d.scales = t->scales->data();
    d.scales_bytes = sc.size();
    if (scheme == QuantScheme::kMlxAffine) {
      bi.resize(groups * ss);
      for (uint64_t i = 0; i < groups; ++i) put_scale(r, sdt, special_rate, &bi[i * ss]);
      t->biases.reset(new Guarded(bi, at_end));
      d.biases = t->biases->data();
      d.biases_bytes = bi.size();
    }
  }
  if (gm != GlobalScaleMode::kNone) {
    static const float gs[] = {1.0f, 0.37f, 3.0e30f, 1.0e-30f, 448.0f * 6.0f, 0.0f, -2.0f, 1.0e-41f};
    uint32_t g;
    if (r.p(0.15)) {
      g = kF32Special[r.u(sizeof(kF32Special) / 4)];
    } else {
      std::memcpy(&g, &gs[r.u(8)], 4);
    }
    std::vector<uint8_t> gb(4);
    std::memcpy(gb.data(), &g, 4);
    t->global.reset(new Guarded(gb, at_end));
    d.global_scale = t->global->data();
    d.global_scale_bytes = 4;
  }
  char buf[200];
  std::snprintf(buf, sizeof buf, "%s bits=%u G=%u sdt=%u %llux%llu special=%u gmode=%u",
                quant_scheme_name(scheme), bits, gsize, sdt, static_cast<unsigned long long>(rows),
                static_cast<unsigned long long>(cols), special, static_cast<unsigned>(gm));
  t->what = buf;
  return t;
}

// Runs rows [rb, re) of t through `k` and through the scalar table, into a misaligned
// destination, and requires identical bytes and nothing written outside the output.
void expect_same(const KernelTable &k, const Tensor &t, int slot, uint64_t rb, uint64_t re,
                 size_t misalign) {
  const QuantDesc &d = t.d;
  uint64_t need = 0;
  ASSERT_EQ(dequant_output_bytes(d, kOutDtypes[slot], rb, re, &need), TBLOB_OK) << t.what;
  std::vector<uint8_t> want(need + 16, 0x5A);
  std::vector<uint8_t> got(need + 16 + misalign, 0xA5);
  ASSERT_EQ(dequantize_rows_with(scalar_kernel_table(), d, kOutDtypes[slot], rb, re, want.data(),
                                 need),
            TBLOB_OK);
  ASSERT_EQ(dequantize_rows_with(k, d, kOutDtypes[slot], rb, re, got.data() + misalign, need),
            TBLOB_OK);
  for (size_t i = 0; i < misalign; ++i) ASSERT_EQ(got[i], 0xA5) << "wrote before dst " << t.what;
  for (size_t i = misalign + need; i < got.size(); ++i) {
    ASSERT_EQ(got[i], 0xA5) << "wrote past the output " << t.what;
  }
  if (std::memcmp(got.data() + misalign, want.data(), need) == 0) return;
  const uint32_t es = slot == 0 ? 4 : 2;
  int shown = 0;
  for (uint64_t i = 0; i < need / es && shown < 4; ++i) {
    uint32_t g = 0, w = 0;
    std::memcpy(&g, got.data() + misalign + i * es, es);
    std::memcpy(&w, want.data() + i * es, es);
    if (g != w) {
      ++shown;
      const uint64_t row = rb + i / d.cols, col = i % d.cols;
      ADD_FAILURE() << k.name << " vs scalar, " << t.what << " out=" << kOutNames[slot]
                    << " rows [" << rb << "," << re << ") element row " << row << " col " << col
                    << ": got 0x" << std::hex << g << " want 0x" << w << std::dec;
    }
  }
}

// A few row ranges of a tensor: all, empty, first, last, a middle slice.
std::vector<std::pair<uint64_t, uint64_t>> ranges(Rng &r, uint64_t rows) {
  std::vector<std::pair<uint64_t, uint64_t>> v = {{0, rows}};
  if (rows > 0) {
    v.push_back({0, 1});
    v.push_back({rows - 1, rows});
    const uint64_t a = r.u(rows), b = a + r.u(rows - a + 1);
    v.push_back({a, b});
    v.push_back({rows / 2, rows / 2});
  }
  return v;
}

void check_all(const KernelTable &k, Rng &r, const Tensor &t) {
  for (int slot = 0; slot < 3; ++slot) {
    for (auto rr : ranges(r, t.d.rows)) {
      expect_same(k, t, slot, rr.first, rr.second, static_cast<size_t>(r.u(4)));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

uint64_t gcd(uint64_t a, uint64_t b) { return b ? gcd(b, a % b) : a; }
uint64_t lcm(uint64_t a, uint64_t b) { return a / gcd(a, b) * b; }

// ---- the parameterised fixture: one kernel set per instance ----------------------------------
class Kernels : public ::testing::TestWithParam<const char *> {
 protected:
  void SetUp() override {
    const char *name = GetParam();
    if (std::strcmp(name, "avx512-plain") == 0) {
      // The avx512 set as a CPU without AVX512_BF16 + VBMI runs it (on one with them, the
      // dispatched avx512 table has those entries, so both variants get compared).
      if (!avx512_ext_entries()) GTEST_SKIP() << "avx512 on this host has no AVX512_BF16/VBMI entries";
      k_ = avx512_plain_kernel_table();
      ASSERT_NE(k_, nullptr);
      ASSERT_NE(k_, kernel_table_by_name("avx512"));
      ASSERT_STREQ(k_->name, "avx512");
      return;
    }
    bool compiled = false;
    for (uint32_t i = 0; i < compiled_kernel_count(); ++i) {
      if (std::strcmp(compiled_kernel_name(i), name) == 0) compiled = true;
    }
    if (!compiled) GTEST_SKIP() << name << " is not compiled into this build";
    if (!kernel_supported(name)) GTEST_SKIP() << "this host cannot run " << name;
    k_ = kernel_table_by_name(name);
    ASSERT_NE(k_, nullptr);
    ASSERT_STREQ(k_->name, name);
  }
  const KernelTable *k_ = nullptr;
};

const QuantScheme kPlain[] = {QuantScheme::kF8E4M3,     QuantScheme::kF8E5M2,
                              QuantScheme::kF8E8M0,     QuantScheme::kF8E4M3Fnuz,
                              QuantScheme::kF8E5M2Fnuz, QuantScheme::kF4E2M1,
                              QuantScheme::kF16,        QuantScheme::kBF16,
                              QuantScheme::kF32};
const uint32_t kSpecials[] = {kSpecialOcp, kSpecialMlx, kSpecialMlx0324, kSpecialMistralRs,
                              kSpecE4M3MaxFinite, kSpecAll};
const uint32_t kScaleDtypes[] = {TBLOB_DTYPE_BF16, TBLOB_DTYPE_F16, TBLOB_DTYPE_F32};

TEST_P(Kernels, AffineAllBitsGroupsScaleDtypes) {
  Rng r(seed_base() ^ 0xA1);
  const uint32_t bits_list[] = {1, 2, 3, 4, 5, 6, 8};
  const uint32_t groups[] = {32, 64, 128, 16, 8, 3, 5, 24, 48, 96, 256};
  const int reps = 2 * scale_factor();
  for (uint32_t bits : bits_list) {
    for (uint32_t g : groups) {
      for (uint32_t sdt : kScaleDtypes) {
        for (int rep = 0; rep < reps; ++rep) {
          const uint64_t unit = lcm(g, 32 / gcd(bits, 32));
          const uint64_t cols = unit * (1 + r.u(unit > 200 ? 3 : 6));
          const uint64_t rows = 1 + r.u(5);
          auto t = make_tensor(r, QuantScheme::kMlxAffine, bits, g, sdt, rows, cols, 0,
                               GlobalScaleMode::kNone, rep == 0 ? 0.02 : 0.3, rep % 2 == 0);
          check_all(*k_, r, *t);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

// Every scale/bias special value against every int4 / int8 code, in hot (G=32) and generic
// (G=3 / G=8) shapes.
TEST_P(Kernels, AffineSpecialScaleBiasGrid) {
  Rng r(seed_base() ^ 0xA2);
  for (uint32_t sdt : kScaleDtypes) {
    const uint32_t ss = scale_bytes_of(sdt);
    std::vector<std::vector<uint8_t>> vals;
    if (sdt == TBLOB_DTYPE_F32) {
      for (uint32_t v : kF32Special) vals.push_back({uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)});
    } else {
      const uint16_t *sp = sdt == TBLOB_DTYPE_F16 ? kH16Special : kB16Special;
      for (int i = 0; i < 16; ++i) vals.push_back({uint8_t(sp[i]), uint8_t(sp[i] >> 8)});
    }
    for (uint32_t bits : {4u, 8u}) {
      for (uint32_t g : {32u, 256u, 8u}) {
        if (bits == 4 && g == 256) continue;
        // One row per (scale, bias) pair; codes cycle through every value.
        const uint64_t rows = vals.size() * vals.size();
        const uint64_t cols = g == 8 ? 32 : g;
        const uint64_t ngroups = cols / g;
        std::vector<uint8_t> data(rows * cols * bits / 8);
        for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 37 + 11);
        auto t = make_tensor(r, QuantScheme::kMlxAffine, bits, g, sdt, rows, cols, 0,
                             GlobalScaleMode::kNone, 0.0, true, &data);
        // Rewrite scales and biases in place (the guarded pages are writable).
        uint8_t *sc = const_cast<uint8_t *>(t->d.scales);
        uint8_t *bi = const_cast<uint8_t *>(t->d.biases);
        for (uint64_t row = 0; row < rows; ++row) {
          for (uint64_t gi = 0; gi < ngroups; ++gi) {
            std::memcpy(sc + (row * ngroups + gi) * ss, vals[row / vals.size()].data(), ss);
            std::memcpy(bi + (row * ngroups + gi) * ss, vals[row % vals.size()].data(), ss);
          }
        }
        for (int slot = 0; slot < 3; ++slot) expect_same(*k_, *t, slot, 0, rows, 1);
        if (HasFatalFailure()) return;
      }
    }
  }
}

// Every f16 / bf16 scale (all 65536 bit patterns: subnormals, both sides of the bounds of
// AVX2's integer f16 rounding (|s| < 2048), of the float bf16 rounding (2^-100 <= |s| <
// 2^100) and of the AVX512_BF16 int8 path (2^-119 <= |s| < 2^100), inf, NaN) against biases at the edges of those paths (0, -0, subnormals, the bias
// bounds, the largest finite values, ordinary values), int4 and int8 g32, codes cycling
// through every value: f32 and 16-bit outputs against the scalar reference.
TEST_P(Kernels, AffineEveryHalfScale) {
  Rng r(seed_base() ^ 0xA3);
  const uint16_t f16_biases[] = {0x0000, 0x8000, 0x0001, 0x83FF, 0x0400, 0x3C00, 0xBC00, 0x2E66,
                                 0xA51F, 0x73FF, 0xF3FF, 0x7400, 0xF400, 0x7BFF, 0xFBFF};
  // (0x0400 / 0x03FF: 2^-119 and just below, 0x717F / 0x7180: just below 2^100 and 2^100,
  // the bounds of the avx512 AVX512_BF16 int8 path; inf and NaN biases too.)
  const uint16_t bf16_biases[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x0D80, 0x8D80, 0x0D7F, 0x7100,
                                  0xF17F, 0x7180, 0x7800, 0xF7F0, 0x3F80, 0xBCA4, 0x7F7F, 0xFF7F,
                                  0x0400, 0x8400, 0x03FF, 0x83FF, 0x717F, 0xF180, 0x7F80, 0xFFC0};
  for (uint32_t sdt : {TBLOB_DTYPE_F16, TBLOB_DTYPE_BF16}) {
    const bool h = sdt == TBLOB_DTYPE_F16;
    for (uint32_t bits : {4u, 8u}) {
      const uint64_t rows = 65536, cols = 32;
      std::vector<uint8_t> data(rows * cols * bits / 8);
      for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 37 + 11);
      auto t = make_tensor(r, QuantScheme::kMlxAffine, bits, 32, sdt, rows, cols, 0,
                           GlobalScaleMode::kNone, 0.0, true, &data);
      uint8_t *sc = const_cast<uint8_t *>(t->d.scales);
      uint8_t *bi = const_cast<uint8_t *>(t->d.biases);
      for (uint64_t row = 0; row < rows; ++row) {
        sc[2 * row] = static_cast<uint8_t>(row);
        sc[2 * row + 1] = static_cast<uint8_t>(row >> 8);
      }
      const uint16_t *bs = h ? f16_biases : bf16_biases;
      const size_t nb = h ? sizeof(f16_biases) / 2 : sizeof(bf16_biases) / 2;
      for (size_t i = 0; i < nb; ++i) {
        for (uint64_t row = 0; row < rows; ++row) {
          bi[2 * row] = static_cast<uint8_t>(bs[i]);
          bi[2 * row + 1] = static_cast<uint8_t>(bs[i] >> 8);
        }
        for (int slot = 0; slot < 3; ++slot) expect_same(*k_, *t, slot, 0, rows, 0);
        if (HasFatalFailure()) return;
      }
    }
  }
}

// int8 / int4 with bf16 scales and biases at the bounds of the avx512 AVX512_BF16 paths (zero or
// 2^-119 <= |x| < 2^100 for both: vcvtne2ps2bf16 reads subnormals as zero), just inside and
// just outside, with subnormals, inf and NaN: every pair, every code under each, bf16
// (and f32, f16) output against scalar. Pairs like s = -0x1.fcp-120, b = 0x1p-119 make
// t + b = 2^-127, a subnormal, when the scale is let in one step early.
TEST_P(Kernels, AffineBf16PackEdges) {
  Rng r(seed_base() ^ 0xA4);
  const uint16_t edges[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x007F, 0x0080, 0x0380, 0x03FF, 0x83FF,
                            0x0400, 0x8400, 0x0401, 0x8401, 0x047F, 0x84FF, 0x717F, 0xF17F, 0x7180,
                            0xF180, 0x7F7F, 0x7F80, 0xFF80, 0x7FC0, 0x3F80, 0xBF81};
  const size_t ne = sizeof(edges) / sizeof(edges[0]);
  const uint64_t rows = ne * ne, cols = 256;
  for (uint32_t bits : {8u, 4u}) {
    std::vector<uint8_t> data(rows * cols * bits / 8);
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i);
    auto t = make_tensor(r, QuantScheme::kMlxAffine, bits, 32, TBLOB_DTYPE_BF16, rows, cols, 0, GlobalScaleMode::kNone,
                         0.0, true, &data);
    uint8_t *sc = const_cast<uint8_t *>(t->d.scales);
    uint8_t *bi = const_cast<uint8_t *>(t->d.biases);
    for (uint64_t row = 0; row < rows; ++row) {
      for (uint64_t g = 0; g < cols / 32; ++g) {
        const uint16_t sv = edges[row / ne], bv = edges[row % ne];
        sc[2 * (row * 8 + g)] = static_cast<uint8_t>(sv);
        sc[2 * (row * 8 + g) + 1] = static_cast<uint8_t>(sv >> 8);
        bi[2 * (row * 8 + g)] = static_cast<uint8_t>(bv);
        bi[2 * (row * 8 + g) + 1] = static_cast<uint8_t>(bv >> 8);
      }
    }
    for (int slot = 0; slot < 3; ++slot) expect_same(*k_, *t, slot, 0, rows, static_cast<size_t>(slot));
    if (HasFatalFailure()) return;
  }
}

TEST_P(Kernels, MxAndNvfp4Random) {
  Rng r(seed_base() ^ 0xB1);
  const int reps = 6 * scale_factor();
  for (QuantScheme s : {QuantScheme::kMxfp4, QuantScheme::kMxfp8, QuantScheme::kNvfp4}) {
    const uint32_t g = s == QuantScheme::kNvfp4 ? 16 : 32;
    const uint32_t sdt = s == QuantScheme::kNvfp4 ? TBLOB_DTYPE_F8_E4M3 : TBLOB_DTYPE_F8_E8M0;
    for (uint32_t special : kSpecials) {
      const int nmodes = s == QuantScheme::kNvfp4 ? 3 : 1;
      for (int gm = 0; gm < nmodes; ++gm) {
        for (int rep = 0; rep < reps; ++rep) {
          const uint64_t cols = g * (1 + r.u(rep < 2 ? 3 : 40));
          const uint64_t rows = 1 + r.u(6);
          auto t = make_tensor(r, s, 0, g, sdt, rows, cols, special,
                               static_cast<GlobalScaleMode>(gm), 0.1, rep % 2 == 1);
          check_all(*k_, r, *t);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

// mxfp4 / mxfp8: every E8M0 scale byte with every code; nvfp4: every E4M3 scale byte with
// every FP4 code, under each special preset and global-scale mode.
TEST_P(Kernels, MxNvfp4EveryScaleByte) {
  Rng r(seed_base() ^ 0xB2);
  std::vector<uint8_t> sc(256);
  for (int i = 0; i < 256; ++i) sc[i] = static_cast<uint8_t>(i);
  for (uint32_t special : kSpecials) {
    for (QuantScheme s : {QuantScheme::kMxfp4, QuantScheme::kMxfp8}) {
      const bool fp8 = s == QuantScheme::kMxfp8;
      std::vector<uint8_t> data(256 * 32 * (fp8 ? 1 : 0) + 256 * 16 * (fp8 ? 0 : 1));
      for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(fp8 ? i * 7 + (i >> 5) : i * 3 + (i >> 4));
      auto t = make_tensor(r, s, 0, 32, TBLOB_DTYPE_F8_E8M0, 256, 32, special,
                           GlobalScaleMode::kNone, 0, true, &data, &sc);
      for (int slot = 0; slot < 3; ++slot) expect_same(*k_, *t, slot, 0, 256, 0);
    }
    {
      // mxfp8: every scale byte with every code (8 groups a row, codes 0..255 in order): the
      // avx512 bf16 bit assembly's bounds (scale 2^-117..2^119) with subnormal, NaN and
      // largest codes on both sides.
      std::vector<uint8_t> data(256 * 256), sc8(256 * 8);
      for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i);
      for (size_t i = 0; i < sc8.size(); ++i) sc8[i] = static_cast<uint8_t>(i / 8);
      auto t = make_tensor(r, QuantScheme::kMxfp8, 0, 32, TBLOB_DTYPE_F8_E8M0, 256, 256, special,
                           GlobalScaleMode::kNone, 0, true, &data, &sc8);
      for (int slot = 0; slot < 3; ++slot) expect_same(*k_, *t, slot, 0, 256, 0);
    }
    for (int gm = 0; gm < 3; ++gm) {
      for (int rep = 0; rep < 4; ++rep) {
        std::vector<uint8_t> data(256 * 8);
        for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 0x11 + (i >> 3));
        auto t = make_tensor(r, QuantScheme::kNvfp4, 0, 16, TBLOB_DTYPE_F8_E4M3, 256, 16, special,
                             static_cast<GlobalScaleMode>(gm), 0, false, &data, &sc);
        for (int slot = 0; slot < 3; ++slot) expect_same(*k_, *t, slot, 0, 256, 2);
        if (gm == 0) break;
      }
    }
    if (HasFatalFailure()) return;
  }
}

TEST_P(Kernels, PlainRandomShapes) {
  Rng r(seed_base() ^ 0xC1);
  const int reps = 8 * scale_factor();
  for (QuantScheme s : kPlain) {
    for (uint32_t special : kSpecials) {
      for (int rep = 0; rep < reps; ++rep) {
        uint64_t rows = 1 + r.u(5), cols = 1 + r.u(rep < 4 ? 40 : 700);
        if (s == QuantScheme::kF4E2M1 && (rows * cols) % 2) cols += 1;
        auto t = make_tensor(r, s, 0, 0, 0, rows, cols, special, GlobalScaleMode::kNone, 0,
                             rep % 2 == 0);
        check_all(*k_, r, *t);
        if (HasFatalFailure()) return;
      }
      if (s != QuantScheme::kF8E4M3 && s != QuantScheme::kF8E8M0) break;  // special only matters there
    }
  }
}

// Exhaustive element tables: all 256 F8 codes, all 65536 f16 / bf16 codes, and f32 patterns
// around every rounding boundary of every exponent (f32 -> f16 / bf16 narrowing).
TEST_P(Kernels, PlainExhaustiveCodes) {
  Rng r(seed_base() ^ 0xC2);
  std::vector<uint8_t> b8(256 * 3);
  for (size_t i = 0; i < b8.size(); ++i) b8[i] = static_cast<uint8_t>(i);
  for (QuantScheme s : {QuantScheme::kF8E4M3, QuantScheme::kF8E5M2, QuantScheme::kF8E8M0,
                        QuantScheme::kF8E4M3Fnuz, QuantScheme::kF8E5M2Fnuz}) {
    for (uint32_t special : kSpecials) {
      auto t = make_tensor(r, s, 0, 0, 0, 3, 256, special, GlobalScaleMode::kNone, 0, true, &b8);
      for (int slot = 0; slot < 3; ++slot) expect_same(*k_, *t, slot, 0, 3, 0);
    }
  }
  {
    std::vector<uint8_t> b4(128);
    for (size_t i = 0; i < b4.size(); ++i) b4[i] = static_cast<uint8_t>(i * 17 + (i >> 4));
    auto t = make_tensor(r, QuantScheme::kF4E2M1, 0, 0, 0, 1, 256, 0, GlobalScaleMode::kNone, 0, true, &b4);
    for (int slot = 0; slot < 3; ++slot) expect_same(*k_, *t, slot, 0, 1, 1);
  }
  std::vector<uint8_t> h(65536 * 2);
  for (uint32_t i = 0; i < 65536; ++i) {
    h[2 * i] = static_cast<uint8_t>(i);
    h[2 * i + 1] = static_cast<uint8_t>(i >> 8);
  }
  for (QuantScheme s : {QuantScheme::kF16, QuantScheme::kBF16}) {
    auto t = make_tensor(r, s, 0, 0, 0, 256, 256, 0, GlobalScaleMode::kNone, 0, false, &h);
    for (int slot = 0; slot < 3; ++slot) expect_same(*k_, *t, slot, 0, 256, 3);
  }
  // f32: sign x 256 exponents x mantissa patterns that straddle the f16 (13 dropped bits) and
  // bf16 (16 dropped bits) rounding points, plus random mantissas.
  const uint32_t lows[] = {0x0000, 0x0001, 0x0FFF, 0x1000, 0x1001, 0x1FFF, 0x2000, 0x3000,
                           0x7FFF, 0x8000, 0x8001, 0xFFFF, 0x10000, 0x18000, 0x7FFFFF, 0x400000};
  std::vector<uint8_t> f;
  for (uint32_t sign = 0; sign < 2; ++sign) {
    for (uint32_t e = 0; e < 256; ++e) {
      for (uint32_t hi = 0; hi < 8; ++hi) {
        for (uint32_t lo : lows) {
          uint32_t m = ((hi * 0x2F1Bu) << 13 | lo) & 0x7FFFFFu;
          if (hi == 7) m = static_cast<uint32_t>(r.g()) & 0x7FFFFFu;
          const uint32_t v = sign << 31 | e << 23 | m;
          for (int k = 0; k < 4; ++k) f.push_back(static_cast<uint8_t>(v >> (8 * k)));
        }
      }
    }
  }
  auto t = make_tensor(r, QuantScheme::kF32, 0, 0, 0, f.size() / 4 / 512, 512, 0,
                       GlobalScaleMode::kNone, 0, true, &f);
  for (int slot = 0; slot < 3; ++slot) expect_same(*k_, *t, slot, 0, t->d.rows, 0);
}

// ---- SLM1 q8_0 / q4_0 (kSlm1Q8 / kSlm1Q4) ------------------------------------------------------
// An SLM1 tensor with its codes and f32 scales each `misalign` bytes past a guarded start (so
// pointers are unaligned and the inputs still end against a guard page when at_end). Codes
// are random with -128 (q8_0) / -8 (q4_0, both nibbles) planted at the start and the end;
// scales mostly ordinary, sometimes special (NaN, +-inf, 0, subnormal, huge) or random bits.
std::unique_ptr<Tensor> make_slm1(Rng &r, QuantScheme s, uint32_t block, uint64_t rows, uint64_t cols,
                                  double special_rate, bool at_end, size_t misalign,
                                  const std::vector<uint8_t> *fixed_data = nullptr,
                                  const std::vector<uint8_t> *fixed_scales = nullptr) {
  auto t = std::make_unique<Tensor>();
  QuantDesc &d = t->d;
  const bool q8 = s == QuantScheme::kSlm1Q8;
  d.scheme = s;
  d.group_size = q8 ? static_cast<uint32_t>(cols) : block;
  d.scale_dtype = TBLOB_DTYPE_F32;
  d.rows = rows;
  d.cols = cols;
  const uint64_t nbytes = q8 ? rows * cols : rows * cols / 2;
  const uint64_t nscales = q8 ? rows : rows * (cols / block);
  std::vector<uint8_t> data(misalign + nbytes), sc(misalign + 4 * nscales);
  if (fixed_data) {
    std::memcpy(data.data() + misalign, fixed_data->data(), nbytes);
  } else {
    for (uint64_t i = 0; i < nbytes; ++i) data[misalign + i] = r.byte();
    if (nbytes > 0) data[misalign] = data[misalign + nbytes - 1] = q8 ? 0x80 : 0x88;
  }
  if (fixed_scales) {
    std::memcpy(sc.data() + misalign, fixed_scales->data(), 4 * nscales);
  } else {
    for (uint64_t i = 0; i < nscales; ++i) put_scale(r, TBLOB_DTYPE_F32, special_rate, &sc[misalign + 4 * i]);
  }
  for (size_t i = 0; i < misalign; ++i) data[i] = sc[i] = 0xEE;
  t->data.reset(new Guarded(data, at_end));
  t->scales.reset(new Guarded(sc, !at_end));
  d.data = t->data->data() + misalign;
  d.data_bytes = nbytes;
  d.scales = t->scales->data() + misalign;
  d.scales_bytes = 4 * nscales;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s block=%u %llux%llu misalign=%zu", quant_scheme_name(s), d.group_size,
                static_cast<unsigned long long>(rows), static_cast<unsigned long long>(cols), misalign);
  t->what = buf;
  EXPECT_EQ(validate_desc(d), TBLOB_OK) << t->what;
  return t;
}

// q8_0: row lengths around every vector width and the 16-code step (tails of 1..15 codes),
// odd row counts, random and special scales, every row range, unaligned inputs and outputs.
TEST_P(Kernels, Slm1Q8Random) {
  Rng r(seed_base() ^ 0x5A1);
  const uint64_t cols_list[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 100, 255, 4096, 4099};
  const int reps = 2 * scale_factor();
  for (uint64_t cols : cols_list) {
    for (int rep = 0; rep < reps; ++rep) {
      const uint64_t rows = 1 + 2 * r.u(4);  // odd
      auto t = make_slm1(r, QuantScheme::kSlm1Q8, 0, rows, cols, rep == 0 ? 0.05 : 0.4, rep % 2 == 0,
                         static_cast<size_t>(r.u(4)));
      check_all(*k_, r, *t);
      if (HasFatalFailure()) return;
    }
  }
}

// q4_0: hot blocks (multiples of 16: 16, 32, 64, 128, 256) and generic ones (2..14, 18, 34, 48 is
// hot, 66), rows of several blocks, cols not a multiple of the vector width.
TEST_P(Kernels, Slm1Q4Random) {
  Rng r(seed_base() ^ 0x5A2);
  const uint32_t blocks[] = {2, 4, 6, 8, 10, 12, 14, 16, 18, 32, 34, 48, 64, 66, 96, 128, 256};
  const int reps = 2 * scale_factor();
  for (uint32_t b : blocks) {
    for (int rep = 0; rep < reps; ++rep) {
      const uint64_t cols = b * (1 + r.u(b >= 64 ? 4 : 9));
      const uint64_t rows = 1 + 2 * r.u(4);
      auto t = make_slm1(r, QuantScheme::kSlm1Q4, b, rows, cols, rep == 0 ? 0.05 : 0.4, rep % 2 == 1,
                         static_cast<size_t>(r.u(4)));
      check_all(*k_, r, *t);
      if (HasFatalFailure()) return;
    }
  }
}

// Every f32 special scale (NaN with payloads and signs, +-inf, +-0, subnormals, +-max, 1,
// rounding boundaries) against every code: q8_0 rows of all 256 codes plus a 7-code tail;
// q4_0 blocks of all 16 nibbles in hot (16, 32, 64, 128) and generic (2, 6) shapes.
TEST_P(Kernels, Slm1SpecialScales) {
  Rng r(seed_base() ^ 0x5A3);
  std::vector<uint32_t> specials(std::begin(kF32Special), std::end(kF32Special));
  for (uint32_t v : {0x00000002u, 0x80000001u, 0x00800000u, 0x3E000000u, 0x7E800000u, 0x7F000000u,
                     0x42FE0000u, 0x3C010204u}) {
    specials.push_back(v);
  }
  const uint64_t rows = specials.size();
  {
    const uint64_t cols = 256 + 7;
    std::vector<uint8_t> data(rows * cols), sc(4 * rows);
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i % cols);
    for (uint64_t i = 0; i < rows; ++i) std::memcpy(&sc[4 * i], &specials[i], 4);
    auto t = make_slm1(r, QuantScheme::kSlm1Q8, 0, rows, cols, 0, true, 1, &data, &sc);
    for (int slot = 0; slot < 3; ++slot) expect_same(*k_, *t, slot, 0, rows, 3);
    if (HasFatalFailure()) return;
  }
  for (uint32_t b : {16u, 32u, 64u, 128u, 2u, 6u}) {
    const uint64_t cols = 2 * static_cast<uint64_t>(b) * (b < 16 ? 8 : 1);  // two+ blocks per row
    const uint64_t nb = cols / b;
    std::vector<uint8_t> data(rows * cols / 2), sc(4 * rows * nb);
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(((2 * i) & 15) | (((2 * i + 1) & 15) << 4));
    for (uint64_t i = 0; i < rows * nb; ++i) std::memcpy(&sc[4 * i], &specials[(i / nb + i % nb) % rows], 4);
    auto t = make_slm1(r, QuantScheme::kSlm1Q4, b, rows, cols, 0, false, 2, &data, &sc);
    for (int slot = 0; slot < 3; ++slot) expect_same(*k_, *t, slot, 0, rows, 1);
    if (HasFatalFailure()) return;
  }
}

// The non-temporal path: threshold 0, shapes whose rows are longer than the staging buffer
// (cut into column pieces) and shorter (several rows per piece), odd F4 ranges (direct).
TEST_P(Kernels, StreamingStoresMatch) {
  struct Restore {
    uint64_t old = set_stream_threshold(0);
    ~Restore() { set_stream_threshold(old); }
  } restore;
  Rng r(seed_base() ^ 0xD1);
  struct Shape {
    QuantScheme s;
    uint32_t bits, g, sdt;
    uint64_t rows, cols;
  };
  const Shape shapes[] = {
      {QuantScheme::kMlxAffine, 4, 64, TBLOB_DTYPE_BF16, 3, 14336},
      {QuantScheme::kMlxAffine, 4, 32, TBLOB_DTYPE_F16, 5, 4096},
      {QuantScheme::kMlxAffine, 8, 128, TBLOB_DTYPE_F32, 4, 9216},
      {QuantScheme::kMlxAffine, 3, 32, TBLOB_DTYPE_BF16, 3, 8192 + 32},
      {QuantScheme::kMlxAffine, 6, 96, TBLOB_DTYPE_F32, 2, 96 * 130},
      {QuantScheme::kMlxAffine, 5, 64, TBLOB_DTYPE_F16, 40, 64},
      {QuantScheme::kMxfp8, 0, 32, TBLOB_DTYPE_F8_E8M0, 3, 32 * 700},
      {QuantScheme::kMxfp4, 0, 32, TBLOB_DTYPE_F8_E8M0, 3, 32 * 300},
      {QuantScheme::kNvfp4, 0, 16, TBLOB_DTYPE_F8_E4M3, 3, 16 * 900},
      {QuantScheme::kF8E4M3, 0, 0, 0, 7, 3001},
      {QuantScheme::kF4E2M1, 0, 0, 0, 4, 4001},  // odd row starts: direct stores
      {QuantScheme::kF4E2M1, 0, 0, 0, 4, 9000},
      {QuantScheme::kBF16, 0, 0, 0, 3, 7000},
      {QuantScheme::kF16, 0, 0, 0, 3, 7000},
      {QuantScheme::kSlm1Q8, 0, 0, TBLOB_DTYPE_F32, 3, 9001},   // rows cut into pieces
      {QuantScheme::kSlm1Q8, 0, 0, TBLOB_DTYPE_F32, 41, 100},   // several rows per piece
      {QuantScheme::kSlm1Q4, 0, 32, TBLOB_DTYPE_F32, 3, 8192 + 64},
      {QuantScheme::kSlm1Q4, 0, 64, TBLOB_DTYPE_F32, 2, 64 * 70},
      {QuantScheme::kSlm1Q4, 0, 2, TBLOB_DTYPE_F32, 5, 3000},
      {QuantScheme::kSlm1Q4, 0, 6, TBLOB_DTYPE_F32, 33, 66},
  };
  for (const Shape &sh : shapes) {
    if (sh.s == QuantScheme::kSlm1Q8 || sh.s == QuantScheme::kSlm1Q4) {
      auto t = make_slm1(r, sh.s, sh.g, sh.rows, sh.cols, 0.05, true, 1);
      check_all(*k_, r, *t);
      if (HasFatalFailure()) return;
      continue;
    }
    auto t = make_tensor(r, sh.s, sh.bits, sh.g, sh.sdt, sh.rows, sh.cols, kSpecialMlx,
                         sh.s == QuantScheme::kNvfp4 ? GlobalScaleMode::kMultiplier : GlobalScaleMode::kNone,
                         0.05, true);
    check_all(*k_, r, *t);
    if (HasFatalFailure()) return;
  }
}

// Rows [rb, re) of t through `k` into dst = (a kNtAlign-aligned address) + misalign, against
// the scalar table, nothing written outside the output. With the stream threshold at 0 an
// aligned dst is written by the set's non-temporal kernel, a misaligned one through staging.
void expect_same_at(const KernelTable &k, const Tensor &t, int slot, uint64_t rb, uint64_t re,
                    size_t misalign) {
  uint64_t need = 0;
  ASSERT_EQ(dequant_output_bytes(t.d, kOutDtypes[slot], rb, re, &need), TBLOB_OK) << t.what;
  std::vector<uint8_t> want(need + 1);
  std::vector<uint8_t> buf(need + 2 * kNtAlign + misalign, 0xA5);
  const size_t lead = (kNtAlign - (reinterpret_cast<uintptr_t>(buf.data()) & (kNtAlign - 1))) & (kNtAlign - 1);
  uint8_t *dst = buf.data() + lead + misalign;
  ASSERT_EQ(dequantize_rows_with(scalar_kernel_table(), t.d, kOutDtypes[slot], rb, re, want.data(), need),
            TBLOB_OK);
  ASSERT_EQ(dequantize_rows_with(k, t.d, kOutDtypes[slot], rb, re, dst, need), TBLOB_OK);
  for (uint8_t *p = buf.data(); p < dst; ++p) ASSERT_EQ(*p, 0xA5) << "wrote before dst " << t.what;
  for (uint8_t *p = dst + need; p < buf.data() + buf.size(); ++p) {
    ASSERT_EQ(*p, 0xA5) << "wrote past the output " << t.what;
  }
  EXPECT_EQ(std::memcmp(dst, want.data(), need), 0)
      << k.name << " vs scalar, " << t.what << " out=" << kOutNames[slot] << " rows [" << rb << "," << re
      << ") dst alignment +" << misalign;
}

// The non-temporal kernels (x86 sets: MLX affine 4/8-bit, mxfp4, mxfp8, nvfp4 write an aligned
// destination with streaming stores, no staging): aligned and misaligned destinations, odd row
// ranges, every output dtype, group sizes with and without such a kernel, special values.
TEST_P(Kernels, NonTemporalKernelsMatch) {
  struct Restore {
    uint64_t old = set_stream_threshold(0);
    ~Restore() { set_stream_threshold(old); }
  } restore;
  Rng r(seed_base() ^ 0xD7);
  struct Shape {
    QuantScheme s;
    uint32_t bits, g, sdt, special;
    GlobalScaleMode gm;
    uint64_t rows, cols;
  };
  constexpr GlobalScaleMode kNo = GlobalScaleMode::kNone;
  const Shape shapes[] = {
      {QuantScheme::kMlxAffine, 4, 32, TBLOB_DTYPE_F16, kSpecialMlx, kNo, 7, 4096},
      {QuantScheme::kMlxAffine, 4, 64, TBLOB_DTYPE_BF16, kSpecialMlx, kNo, 5, 64 * 33},
      {QuantScheme::kMlxAffine, 4, 16, TBLOB_DTYPE_F32, kSpecialMlx, kNo, 4, 16 * 41},
      {QuantScheme::kMlxAffine, 4, 48, TBLOB_DTYPE_BF16, kSpecialMlx, kNo, 4, 48 * 21},  // 64-byte runs off a 64-byte multiple on AVX-512
      {QuantScheme::kMlxAffine, 4, 128, TBLOB_DTYPE_F16, kSpecialMlx, kNo, 4, 128 * 9},
      {QuantScheme::kMlxAffine, 8, 64, TBLOB_DTYPE_BF16, kSpecialMlx, kNo, 5, 64 * 21},
      {QuantScheme::kMlxAffine, 8, 32, TBLOB_DTYPE_F16, kSpecialMlx, kNo, 4, 32 * 40},
      {QuantScheme::kMlxAffine, 8, 16, TBLOB_DTYPE_F32, kSpecialMlx, kNo, 4, 16 * 31},
      {QuantScheme::kMlxAffine, 3, 32, TBLOB_DTYPE_BF16, kSpecialMlx, kNo, 4, 32 * 20},  // no such kernel
      {QuantScheme::kMxfp4, 0, 32, TBLOB_DTYPE_F8_E8M0, kSpecialMlx, kNo, 5, 32 * 70},
      {QuantScheme::kMxfp8, 0, 32, TBLOB_DTYPE_F8_E8M0, kSpecialMlx, kNo, 5, 32 * 70},
      {QuantScheme::kMxfp8, 0, 32, TBLOB_DTYPE_F8_E8M0, kSpecialOcp, kNo, 5, 32 * 70},
      {QuantScheme::kNvfp4, 0, 16, TBLOB_DTYPE_F8_E4M3, kSpecialMlx, kNo, 5, 16 * 71},
      {QuantScheme::kNvfp4, 0, 16, TBLOB_DTYPE_F8_E4M3, kSpecialMlx, GlobalScaleMode::kMultiplier, 5, 16 * 71},
      {QuantScheme::kNvfp4, 0, 16, TBLOB_DTYPE_F8_E4M3, kSpecialMlx, GlobalScaleMode::kMlxAmax, 5, 16 * 71},
  };
  const size_t misaligns[] = {0, 2, 4, 16, 32};
  for (const Shape &sh : shapes) {
    auto t = make_tensor(r, sh.s, sh.bits, sh.g, sh.sdt, sh.rows, sh.cols, sh.special, sh.gm, 0.05, true);
    const std::pair<uint64_t, uint64_t> rr[] = {{0, sh.rows}, {1, sh.rows - 1}, {sh.rows - 2, sh.rows}, {3, 4}};
    for (int slot = 0; slot < 3; ++slot) {
      for (auto range : rr) {
        for (size_t m : misaligns) {
          expect_same_at(*k_, *t, slot, range.first, range.second, m);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

// Which shapes the non-temporal kernels take: x86 sets have them for the MLX/Ollama schemes;
// a shape without one (3-bit affine; AVX-512 16-bit outputs of 48-code groups) returns false
// and writes nothing, so dequantize_rows_with stages it.
TEST_P(Kernels, NonTemporalKernelSlots) {
  const bool x86 = std::strcmp(GetParam(), "neon") != 0;
  const QuantScheme mlx[] = {QuantScheme::kMlxAffine, QuantScheme::kMxfp4, QuantScheme::kMxfp8, QuantScheme::kNvfp4};
  for (QuantScheme s : mlx) {
    for (int slot = 0; slot < 3; ++slot) {
      EXPECT_EQ(k_->nt[static_cast<uint32_t>(s)][slot] != nullptr, x86) << quant_scheme_name(s) << " " << slot;
    }
  }
  EXPECT_EQ(k_->nt[static_cast<uint32_t>(QuantScheme::kF8E4M3)][0], nullptr);
  if (!x86) return;
  Rng r(seed_base() ^ 0xD8);
  struct Case {
    uint32_t bits, g;
    int slot;
    bool taken;
  };
  const bool wide = std::strncmp(GetParam(), "avx512", 6) == 0;
  const Case cases[] = {{3, 32, 0, false}, {4, 48, 0, true}, {4, 48, 2, !wide}, {4, 32, 1, true}, {8, 48, 2, true}};
  for (const Case &c : cases) {
    auto t = make_tensor(r, QuantScheme::kMlxAffine, c.bits, c.g, TBLOB_DTYPE_BF16, 2, c.g * 4, kSpecialMlx, GlobalScaleMode::kNone,
                         0.0, true);
    std::vector<uint8_t> buf(2 * c.g * 4 * 4 + kNtAlign, 0xA5);
    uint8_t *dst = buf.data() + ((kNtAlign - (reinterpret_cast<uintptr_t>(buf.data()) & (kNtAlign - 1))) & (kNtAlign - 1));
    const bool took = k_->nt[static_cast<uint32_t>(QuantScheme::kMlxAffine)][c.slot](t->d, 0, 2, dst);
    stream_fence();
    EXPECT_EQ(took, c.taken) << t->what << " slot " << c.slot;
    if (!took) {
      for (uint8_t b : buf) ASSERT_EQ(b, 0xA5) << "declined but wrote, " << t->what;
    }
  }
}

// dequantize_rows() (the dispatched entry point) uses the forced set and matches scalar.
TEST_P(Kernels, ForcedThroughDequantizeRows) {
  if (std::strcmp(GetParam(), "avx512-plain") == 0) GTEST_SKIP() << "not a set of its own";
  ASSERT_EQ(set_kernel(GetParam()), TBLOB_OK);
  EXPECT_STREQ(active_kernel_name(), GetParam());
  EXPECT_EQ(active_kernel_table(), k_);
  Rng r(seed_base() ^ 0xE1);
  auto t = make_tensor(r, QuantScheme::kMlxAffine, 4, 64, TBLOB_DTYPE_BF16, 8, 256, 0,
                       GlobalScaleMode::kNone, 0.05, true);
  std::vector<uint8_t> a(8 * 256 * 4), b(8 * 256 * 4);
  ASSERT_EQ(dequantize_rows(t->d, TBLOB_DTYPE_F32, 0, 8, a.data(), a.size()), TBLOB_OK);
  ASSERT_EQ(dequantize_rows_with(scalar_kernel_table(), t->d, TBLOB_DTYPE_F32, 0, 8, b.data(), b.size()),
            TBLOB_OK);
  EXPECT_EQ(a, b);
  EXPECT_EQ(set_kernel("auto"), TBLOB_OK);
}

const char *const kSimdSets[] = {"avx512", "avx512-plain", "avx2", "neon"};
INSTANTIATE_TEST_SUITE_P(Sets, Kernels, ::testing::ValuesIn(kSimdSets),
                         [](const ::testing::TestParamInfo<const char *> &i) {
                           std::string n = i.param;
                           for (char &c : n) c = c == '-' ? '_' : c;
                           return n;
                         });

// ---- dispatch rules ---------------------------------------------------------------------------
TEST(Dispatch, Lists) {
  ASSERT_GE(compiled_kernel_count(), 1u);
  EXPECT_STREQ(compiled_kernel_name(compiled_kernel_count() - 1), "scalar");
  EXPECT_EQ(compiled_kernel_name(compiled_kernel_count()), nullptr);
  uint32_t n = 0;
  const char *const *names = supported_kernels(&n);
  ASSERT_GE(n, 1u);
  EXPECT_STREQ(names[n - 1], "scalar");
  for (uint32_t i = 0; i < n; ++i) {
    EXPECT_TRUE(kernel_supported(names[i]));
    ASSERT_NE(kernel_table_by_name(names[i]), nullptr);
    EXPECT_STREQ(kernel_table_by_name(names[i])->name, names[i]);
  }
  EXPECT_FALSE(kernel_supported("bogus"));
  EXPECT_FALSE(kernel_supported(nullptr));
  EXPECT_EQ(kernel_table_by_name("bogus"), nullptr);
  std::string all;
  for (uint32_t i = 0; i < n; ++i) all += std::string(names[i]) + " ";
  std::printf("[ info     ] supported kernel sets: %s(active: %s)\n", all.c_str(), active_kernel_name());
#if defined(__aarch64__)
  EXPECT_FALSE(kernel_supported("avx2"));
  EXPECT_FALSE(kernel_supported("avx512"));
#endif
#if defined(__x86_64__)
  EXPECT_FALSE(kernel_supported("neon"));
#endif
}

// Tables carry an entry for every slot the scalar table has; block FP8 is scalar everywhere,
// and every SIMD set has its own SLM1 q8_0 / q4_0 kernels (so the comparisons above really
// test SIMD code).
TEST(Dispatch, TablesComplete) {
  uint32_t n = 0;
  const char *const *names = supported_kernels(&n);
  const KernelTable &s = scalar_kernel_table();
  for (uint32_t i = 0; i < n; ++i) {
    const KernelTable *k = kernel_table_by_name(names[i]);
    for (uint32_t sc = 1; sc < kQuantSchemeCount; ++sc) {
      for (uint32_t o = 0; o < kDequantOutCount; ++o) {
        EXPECT_NE(k->rows[sc][o], nullptr) << names[i] << " scheme " << sc << " out " << o;
        if (sc == static_cast<uint32_t>(QuantScheme::kBlockFp8)) {
          EXPECT_EQ(k->rows[sc][o], s.rows[sc][o]);
        }
        if ((sc == static_cast<uint32_t>(QuantScheme::kSlm1Q8) ||
             sc == static_cast<uint32_t>(QuantScheme::kSlm1Q4)) &&
            k != &s) {
          EXPECT_NE(k->rows[sc][o], s.rows[sc][o]) << names[i] << " scheme " << sc;
        }
      }
    }
  }
}

// The avx512 set takes its AVX512_BF16 + VBMI entries exactly when it says so, only on a CPU
// whose /proc/cpuinfo lists both flags (the kernel's own reading of cpuid), and the plain
// variant is a distinct, complete table with the same name.
TEST(Dispatch, Avx512ExtensionEntries) {
  const KernelTable *wide = kernel_supported("avx512") ? kernel_table_by_name("avx512") : nullptr;
  const KernelTable *plain = avx512_plain_kernel_table();
  if (wide == nullptr) {
    EXPECT_EQ(plain, nullptr);
    EXPECT_FALSE(avx512_ext_entries());
    GTEST_SKIP() << "this host cannot run avx512";
  }
  ASSERT_NE(plain, nullptr);
  EXPECT_STREQ(plain->name, "avx512");
  const uint32_t affine = static_cast<uint32_t>(QuantScheme::kMlxAffine);
  EXPECT_EQ(wide->rows[affine][kOutBF16] != plain->rows[affine][kOutBF16], avx512_ext_entries());
  EXPECT_EQ(wide->nt[affine][kOutBF16] != plain->nt[affine][kOutBF16], avx512_ext_entries());
  EXPECT_EQ(wide->rows[affine][kOutF32], plain->rows[affine][kOutF32]);  // only bf16 outputs differ
  if (!avx512_ext_entries()) return;
  FILE *f = std::fopen("/proc/cpuinfo", "r");
  if (f == nullptr) GTEST_SKIP() << "no /proc/cpuinfo";
  std::string text;
  char buf[4096];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, got);
  std::fclose(f);
  EXPECT_NE(text.find(" avx512_bf16"), std::string::npos);
  EXPECT_NE(text.find(" avx512vbmi"), std::string::npos);
}

TEST(Dispatch, SetKernelErrorsKeepTheActiveSet) {
  ASSERT_EQ(set_kernel("scalar"), TBLOB_OK);
  EXPECT_EQ(set_kernel(nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(set_kernel("bogus"), kStatusKernelUnavailable);
  EXPECT_EQ(set_kernel("AVX2"), kStatusKernelUnavailable);  // names are exact
  for (const char *name : kSimdSets) {
    if (!kernel_supported(name)) {
      EXPECT_EQ(set_kernel(name), kStatusKernelUnavailable) << name;
      EXPECT_STREQ(active_kernel_name(), "scalar");
    }
  }
  EXPECT_STREQ(active_kernel_name(), "scalar");
  ASSERT_EQ(set_kernel("auto"), TBLOB_OK);
  uint32_t n = 0;
  EXPECT_STREQ(active_kernel_name(), supported_kernels(&n)[0]);
}

TEST(Dispatch, EnvironmentVariable) {
  struct Cleanup {
    ~Cleanup() {
      unsetenv("TBLOB_KERNEL");
      reset_kernel_selection();
    }
  } cleanup;
  uint32_t n = 0;
  const char *best = supported_kernels(&n)[0];
  Rng r(5);
  auto t = make_tensor(r, QuantScheme::kMxfp8, 0, 32, TBLOB_DTYPE_F8_E8M0, 2, 64, 0,
                       GlobalScaleMode::kNone, 0, true);
  std::vector<uint8_t> out(2 * 64 * 4);

  setenv("TBLOB_KERNEL", "scalar", 1);
  reset_kernel_selection();
  EXPECT_STREQ(active_kernel_name(), "scalar");
  EXPECT_EQ(dequantize_rows(t->d, TBLOB_DTYPE_F32, 0, 2, out.data(), out.size()), TBLOB_OK);

  // A set the host cannot run (or no such set): an error on every call, never a fallback.
  const char *missing = "bogus";
  for (const char *name : kSimdSets) {
    if (!kernel_supported(name)) missing = name;
  }
  setenv("TBLOB_KERNEL", missing, 1);
  reset_kernel_selection();
  EXPECT_STREQ(active_kernel_name(), "unavailable");
  EXPECT_EQ(active_kernel_table(), nullptr);
  EXPECT_EQ(dequantize_rows(t->d, TBLOB_DTYPE_F32, 0, 2, out.data(), out.size()),
            kStatusKernelUnavailable);
  // The variable is read once: changing it now does nothing until a reset.
  setenv("TBLOB_KERNEL", "scalar", 1);
  EXPECT_STREQ(active_kernel_name(), "unavailable");
  // set_kernel() recovers.
  ASSERT_EQ(set_kernel(best), TBLOB_OK);
  EXPECT_EQ(dequantize_rows(t->d, TBLOB_DTYPE_F32, 0, 2, out.data(), out.size()), TBLOB_OK);

  for (const char *v : {"", "auto"}) {
    setenv("TBLOB_KERNEL", v, 1);
    reset_kernel_selection();
    EXPECT_STREQ(active_kernel_name(), best);
  }
  unsetenv("TBLOB_KERNEL");
  reset_kernel_selection();
  EXPECT_STREQ(active_kernel_name(), best);
}

TEST(Dispatch, StreamThresholdRoundTrip) {
  const uint64_t old = set_stream_threshold(123);
  EXPECT_EQ(stream_threshold(), 123u);
  EXPECT_EQ(set_stream_threshold(old), 123u);
  EXPECT_EQ(stream_copy_for(scalar_kernel_table()), nullptr);
  uint32_t n = 0;
  const char *const *names = supported_kernels(&n);
  for (uint32_t i = 0; i + 1 < n; ++i) EXPECT_NE(stream_copy_for(*kernel_table_by_name(names[i])), nullptr);
}

// The store policy of a thread: by the threshold, from 64 KiB, or never; scopes nest and
// restore, and another thread keeps its own.
TEST(Dispatch, StorePolicyScopes) {
  const uint64_t old = set_stream_threshold(uint64_t{4} << 20);
  EXPECT_FALSE(stream_output((uint64_t{4} << 20) - 1));
  EXPECT_TRUE(stream_output(uint64_t{4} << 20));
  {
    const StorePolicyScope stream(StorePolicy::kStream);
    EXPECT_FALSE(stream_output(65535));
    EXPECT_TRUE(stream_output(65536));
    bool other = true;
    std::thread([&] { other = stream_output(65536); }).join();
    EXPECT_FALSE(other);
    {
      const StorePolicyScope cache(StorePolicy::kCache);
      EXPECT_FALSE(stream_output(uint64_t{1} << 40));
    }
    EXPECT_TRUE(stream_output(65536));
  }
  EXPECT_FALSE(stream_output(65536));
  EXPECT_TRUE(stream_output(uint64_t{4} << 20));
  set_stream_threshold(old);
}

}  // namespace
