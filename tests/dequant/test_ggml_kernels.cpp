// GGML block kernels (lib/dequant/ggml), without any container: the scalar reference against
// gguf-py (tests/data/ggml, written by tests/oracles/gen_ggml_fixtures.py) and every SIMD set
// this host runs (avx2 on x86-64, neon on AArch64, also under qemu-aarch64 in the cross build)
// against the scalar reference bit for bit: random blocks with non-finite, subnormal and zero
// scales, odd block counts, misaligned source and destination, f32/f16/bf16 outputs, the
// streaming (kStream) path, and the f32 -> f16/bf16 narrowing on special values.
// The UQFF-level entry point (tblob_ggml_dequantize) is tested in tests/uqff/test_ggml.cpp.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "dequant/convert.h"
#include "dequant/dispatch.h"
#include "dequant/ggml/ggml.h"
#include "dequant/ggml/ggml_blocks.h"
#include "tensorblob.h"

namespace g = tblob::ggml;

namespace {

std::string data_dir() { return std::string(TBLOB_GGML_DATA_DIR) + "/"; }

std::string slurp(const std::string &p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Every set this build has and this host runs, scalar first.
std::vector<const g::Kernels *> kernel_sets() {
  std::vector<const g::Kernels *> v{&g::scalar_kernels()};
  for (const char *n : {"avx2", "neon"}) {
    const g::Kernels *k = nullptr;
    if (g::kernels_by_name(n, &k) == TBLOB_OK) v.push_back(k);
  }
  return v;
}

struct Fixture {
  uint32_t id;
  std::string name;
  std::string blocks;
  std::vector<uint32_t> expected;  // f32 bits
  uint64_t elements;
};

std::vector<Fixture> fixtures() {
  std::vector<Fixture> out;
  std::ifstream m(data_dir() + "MANIFEST");
  std::string line;
  while (std::getline(m, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    Fixture f;
    uint64_t nb;
    ls >> f.id >> f.name >> nb >> f.elements;
    f.blocks = slurp(data_dir() + f.name + ".blocks");
    const std::string e = slurp(data_dir() + f.name + ".f32");
    f.expected.resize(e.size() / 4);
    std::memcpy(f.expected.data(), e.data(), e.size());
    out.push_back(std::move(f));
  }
  return out;
}

tblob::Status run(const g::Kernels &k, uint32_t type, const uint8_t *src, size_t src_bytes, uint64_t n,
                  uint32_t out, void *dst, uint64_t dst_bytes) {
  tblob::Diag d;
  return g::dequantize(k, type, src, src_bytes, n, out, dst, dst_bytes, d);
}
tblob::Status run(const g::Kernels &k, uint32_t type, const std::string &src, uint64_t n, uint32_t out, void *dst,
                  uint64_t dst_bytes) {
  return run(k, type, reinterpret_cast<const uint8_t *>(src.data()), src.size(), n, out, dst, dst_bytes);
}

TEST(GgmlKernels, SetsPresent) {
  const auto sets = kernel_sets();
  const g::Kernels *k = nullptr;
#if defined(__aarch64__)
  if (g::neon_kernels()) {  // compiled in (simd_neon not disabled): every AArch64 CPU runs it
    ASSERT_EQ(sets.size(), 2u);
    EXPECT_STREQ(sets[1]->name, "neon");
  }
#endif
#if !defined(__aarch64__)
  EXPECT_EQ(g::kernels_by_name("neon", &k), TBLOB_E_UNSUPPORTED);
#endif
  EXPECT_EQ(g::kernels_by_name("nope", &k), TBLOB_E_INVALID_ARGUMENT);
  for (const g::Kernels *s : sets) std::printf("GGML kernel set: %s\n", s->name);
}

// The NEON set has its own kernel for every type added after the classic twelve (none of them
// is the scalar rows), so the per-set tests below compare NEON code, not scalar with scalar.
template <uint32_t... S>
void expect_own_kernels(const g::Kernels &k) {
  for (const auto &e : {std::make_pair(S, k.to_f32[S] != &g::scalar_rows<S>)...})
    EXPECT_TRUE(e.second) << k.name << " runs the scalar rows for " << g::type_info_by_slot(e.first)->name;
}
TEST(GgmlKernels, NeonCoversTheNewTypes) {
  if (!g::neon_kernels()) GTEST_SKIP() << "no NEON set in this build";
  expect_own_kernels<g::kSlotIQ4_NL, g::kSlotIQ4_XS, g::kSlotTQ2_0, g::kSlotMXFP4, g::kSlotTQ1_0, g::kSlotIQ2_XXS,
                     g::kSlotIQ2_XS, g::kSlotIQ2_S, g::kSlotIQ3_XXS, g::kSlotIQ3_S, g::kSlotIQ1_S, g::kSlotIQ1_M,
                     g::kSlotNVFP4, g::kSlotQ1_0>(
      *g::neon_kernels());
}

// The process-wide choice picks the matching GGML set.
TEST(GgmlKernels, ActiveFollowsProcessChoice) {
  uint32_t n = 0;
  const char *const *names = tblob::supported_kernels(&n);
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(tblob::set_kernel(names[i]), TBLOB_OK) << names[i];
    const std::string want = std::string(names[i]) == "avx512" ? "avx2" : names[i];
    EXPECT_EQ(std::string(g::active_kernels().name), want) << names[i];
  }
  ASSERT_EQ(tblob::set_kernel("auto"), TBLOB_OK);
}

// One registry: the GGML sets are exactly the ones dispatch.h offers on this host (avx512 pairs
// with the AVX2 GGML set), and an unusable TBLOB_KERNEL stops GGML decoding as it stops the rest.
TEST(GgmlKernels, ChosenByTheDispatchRegistry) {
  for (uint32_t i = 0; i < tblob::compiled_kernel_count(); ++i) {
    const char *name = tblob::compiled_kernel_name(i);
    const g::Kernels *k = nullptr;
    const tblob::Status s = g::kernels_by_name(name, &k);
    if (tblob::kernel_supported(name)) {
      ASSERT_EQ(s, TBLOB_OK) << name;
      EXPECT_EQ(k, tblob::ggml_kernels_by_name(name)) << name;
      const std::string want = std::string(name) == "avx512" ? "avx2" : name;
      EXPECT_EQ(want, k->name);
    } else {
      EXPECT_EQ(s, TBLOB_E_UNSUPPORTED) << name;
      EXPECT_EQ(tblob::ggml_kernels_by_name(name), nullptr) << name;
    }
  }
  const char *old = std::getenv("TBLOB_KERNEL");
  const std::string saved = old ? old : "";
  setenv("TBLOB_KERNEL", "no-such-set", 1);
  tblob::reset_kernel_selection();
  EXPECT_STREQ(tblob::active_kernel_name(), "unavailable");
  EXPECT_EQ(tblob::active_ggml_kernels(), nullptr);
  const std::string q40(18, '\0');
  std::vector<float> out(32);
  EXPECT_EQ(run(g::active_kernels(), g::kTypeQ4_0, q40, 32, TBLOB_DTYPE_F32, out.data(), 128),
            TBLOB_E_KERNEL_UNAVAILABLE);
  if (old)
    setenv("TBLOB_KERNEL", saved.c_str(), 1);
  else
    unsetenv("TBLOB_KERNEL");
  tblob::reset_kernel_selection();
  ASSERT_NE(tblob::active_ggml_kernels(), nullptr);
  EXPECT_EQ(run(g::active_kernels(), g::kTypeQ4_0, q40, 32, TBLOB_DTYPE_F32, out.data(), 128), TBLOB_OK);
}

// The AVX2 set has its own kernel for every block type (none left to scalar_rows), so the
// comparisons below test AVX2 code for each of them.
TEST(GgmlKernels, Avx2DecodesEveryBlockType) {
  const g::Kernels *k = nullptr;
  if (g::kernels_by_name("avx2", &k) != TBLOB_OK) GTEST_SKIP() << "no AVX2 set on this host or build";
  for (uint32_t slot = g::kSlotQ4_0; slot < g::kSlotCount; ++slot)
    EXPECT_NE(k->to_f32[slot], g::scalar_kernels().to_f32[slot]) << g::type_info_by_slot(slot)->name;
  using namespace tblob::ggml;  // the type list names slots unqualified
#define TBLOB_NOT_SCALAR(fn, slot) EXPECT_NE(k->to_f32[slot], &scalar_rows<slot>) << #fn;
  TBLOB_GGML_AVX2_TYPES(TBLOB_NOT_SCALAR)
#undef TBLOB_NOT_SCALAR
}

TEST(GgmlKernels, FixturesPresent) { EXPECT_GE(fixtures().size(), 25u); }

// Scalar and every SIMD set equal gguf.quants.dequantize bit for bit, f32 output, and the
// f16/bf16 outputs are that result rounded once.
TEST(GgmlKernels, MatchesGgufBitExact) {
  for (const Fixture &f : fixtures()) {
    ASSERT_EQ(f.expected.size(), f.elements) << f.name;
    for (const g::Kernels *k : kernel_sets()) {
      std::vector<uint32_t> got(f.elements + 1, 0xDEADBEEFu);
      ASSERT_EQ(run(*k, f.id, f.blocks, f.elements, TBLOB_DTYPE_F32, got.data(), f.elements * 4), TBLOB_OK)
          << f.name << " " << k->name;
      size_t bad = 0;
      for (uint64_t i = 0; i < f.elements; ++i)
        if (got[i] != f.expected[i] && bad++ < 3)
          ADD_FAILURE() << f.name << " " << k->name << " element " << i << ": got " << std::hex << got[i]
                        << " want " << f.expected[i];
      EXPECT_EQ(bad, 0u) << f.name << " " << k->name;
      EXPECT_EQ(got[f.elements], 0xDEADBEEFu) << "wrote past the output";
      for (uint32_t out : {static_cast<uint32_t>(TBLOB_DTYPE_F16), static_cast<uint32_t>(TBLOB_DTYPE_BF16)}) {
        std::vector<uint16_t> h(f.elements);
        ASSERT_EQ(run(*k, f.id, f.blocks, f.elements, out, h.data(), f.elements * 2), TBLOB_OK);
        for (uint64_t i = 0; i < f.elements; ++i) {
          const uint16_t want =
              out == TBLOB_DTYPE_F16 ? tblob::dq::f32_to_f16(f.expected[i]) : tblob::dq::f32_to_bf16(f.expected[i]);
          if (h[i] != want) {
            ADD_FAILURE() << f.name << " " << k->name << " out " << out << " element " << i;
            break;
          }
        }
      }
    }
  }
}

// Offset of the f16 scale fields of a block (Q8_K: none, its d is f32 at 0).
std::vector<size_t> scale_offsets(uint32_t slot) {
  switch (slot) {
    case g::kSlotQ4_0: case g::kSlotQ5_0: case g::kSlotQ8_0: case g::kSlotQ8_1: return {0};
    case g::kSlotQ4_1: case g::kSlotQ5_1: case g::kSlotQ4_K: case g::kSlotQ5_K: return {0, 2};
    case g::kSlotQ2_K: return {80, 82};
    case g::kSlotQ3_K: return {108};
    case g::kSlotQ6_K: return {208};
    case g::kSlotIQ4_NL: case g::kSlotIQ4_XS: return {0};
    case g::kSlotTQ2_0: return {64};
    case g::kSlotTQ1_0: return {52};
    case g::kSlotIQ2_XXS: case g::kSlotIQ2_XS: case g::kSlotIQ2_S: case g::kSlotIQ3_XXS: case g::kSlotIQ3_S:
    case g::kSlotIQ1_S: case g::kSlotQ1_0:
      return {0};
    default: return {};  // IQ1_M: see random_blocks; MXFP4, NVFP4: byte scales, every value finite
  }
}

// Random blocks whose scale fields cover every class: normal, subnormal, zero, -0, largest,
// inf, NaN (quiet and signalling), and Q8_K's f32 d likewise (subnormal, huge: inf results).
std::string random_blocks(uint32_t slot, size_t nblocks, std::mt19937_64 &rng) {
  const g::TypeInfo *t = g::type_info_by_slot(slot);
  std::string src(nblocks * t->block_bytes, '\0');
  for (char &c : src) c = static_cast<char>(rng());
  if (t->block_elems == 1) return src;
  static const uint16_t kHalf[] = {0x3C00, 0x0001, 0x03FF, 0x0000, 0x8000, 0x7BFF, 0xFBFF, 0x7C00,
                                   0xFC00, 0x7E00, 0x7C01, 0xFD55, 0x2E66, 0x8123};
  static const uint32_t kF32[] = {0x3C23D70A, 0x00000001, 0x007FFFFF, 0x00000000, 0x80000000, 0x7F7FFFFF,
                                  0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFFFFFFF, 0x3F800000};
  for (size_t b = 0; b < nblocks; ++b) {
    uint8_t *p = reinterpret_cast<uint8_t *>(&src[b * t->block_bytes]);
    const uint64_t r = rng();
    if (r % 3 == 0) continue;  // fully random scales (about 1 in 32 f16 fields non-finite)
    if (slot == g::kSlotQ8_K) {
      const uint32_t v = kF32[(r >> 8) % (sizeof kF32 / sizeof kF32[0])];
      std::memcpy(p, &v, 4);
      continue;
    }
    if (slot == g::kSlotIQ1_M) {  // d's nibbles are the top nibbles of the u16s at 48..55
      const uint16_t h = kHalf[(r >> 8) % (sizeof kHalf / sizeof kHalf[0])];
      for (int k = 0; k < 4; ++k) p[49 + 2 * k] = static_cast<uint8_t>((p[49 + 2 * k] & 0x0F) | (((h >> (4 * k)) & 0xF) << 4));
      continue;
    }
    for (size_t off : scale_offsets(slot)) {
      const uint16_t h = kHalf[(r >> (8 + 4 * off % 32)) % (sizeof kHalf / sizeof kHalf[0])];
      p[off] = static_cast<uint8_t>(h);
      p[off + 1] = static_cast<uint8_t>(h >> 8);
    }
    if (slot == g::kSlotIQ1_M) {  // d's four nibbles are the top nibbles of bytes 49, 51, 53, 55
      const uint16_t h = kHalf[(r >> 8) % (sizeof kHalf / sizeof kHalf[0])];
      for (int k = 0; k < 4; ++k)
        p[49 + 2 * k] = static_cast<uint8_t>((p[49 + 2 * k] & 0x0F) | (((h >> (4 * k)) & 0xF) << 4));
    }
  }
  return src;
}

// Every set against the scalar reference: odd block counts, every source misalignment 0-3,
// destinations misaligned by 0-3 bytes and by 4/8/12 (f32-aligned, not 16), the streaming
// path at every alignment, f16/bf16 outputs (also through the chunked narrowing), and nothing
// written past the output.
TEST(GgmlKernels, SimdEqualsScalarOnRandomBlocks) {
  std::mt19937_64 rng(7);
  const auto sets = kernel_sets();
  for (uint32_t slot = 0; slot < g::kSlotCount; ++slot) {
    const g::TypeInfo *t = g::type_info_by_slot(slot);
    const std::vector<size_t> counts = t->block_elems == 1   ? std::vector<size_t>{1, 7, 9, 4099}
                                       : t->block_elems == 32 ? std::vector<size_t>{1, 3, 129, 515}
                                                              : std::vector<size_t>{1, 3, 17, 67};
    for (size_t nblocks : counts) {
      const std::string body = random_blocks(slot, nblocks, rng);
      const uint64_t n = nblocks * t->block_elems;
      std::vector<uint32_t> ref(n);
      ASSERT_EQ(run(g::scalar_kernels(), t->id, body, n, TBLOB_DTYPE_F32, ref.data(), n * 4), TBLOB_OK);
      if (t->block_elems > 1)
        for (uint64_t i = 0; i < n; ++i) {
          if ((ref[i] & 0x7FFFFFFFu) > 0x7F800000u) {
            ASSERT_EQ(ref[i], 0x7FC00000u) << t->name;
          }
        }
      std::vector<uint16_t> ref16(n), refbf(n);
      ASSERT_EQ(run(g::scalar_kernels(), t->id, body, n, TBLOB_DTYPE_F16, ref16.data(), n * 2), TBLOB_OK);
      ASSERT_EQ(run(g::scalar_kernels(), t->id, body, n, TBLOB_DTYPE_BF16, refbf.data(), n * 2), TBLOB_OK);
      for (uint64_t i = 0; i < n; ++i) {
        ASSERT_EQ(ref16[i], tblob::dq::f32_to_f16(ref[i]));
        ASSERT_EQ(refbf[i], tblob::dq::f32_to_bf16(ref[i]));
      }
      for (const g::Kernels *k : sets) {
        const std::string where = std::string(t->name) + " " + k->name + " nblocks " + std::to_string(nblocks);
        for (size_t soff = 0; soff < 4; ++soff) {
          std::string src(soff, '\x5A');
          src += body;
          const uint8_t *s = reinterpret_cast<const uint8_t *>(src.data()) + soff;
          for (size_t doff : {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{4}, size_t{8}, size_t{12}}) {
            std::vector<uint8_t> raw(n * 4 + 64 + 16, 0xA5);
            uint8_t *base = raw.data() + ((64 - reinterpret_cast<uintptr_t>(raw.data()) % 64) % 64);
            uint8_t *d = base + doff;
            ASSERT_EQ(run(*k, t->id, s, body.size(), n, TBLOB_DTYPE_F32, d, n * 4), TBLOB_OK) << where;
            EXPECT_EQ(std::memcmp(d, ref.data(), n * 4), 0) << where << " src+" << soff << " dst+" << doff;
            EXPECT_EQ(d[n * 4], 0xA5) << where << " wrote past the output";
            // kStream (non-temporal stores) at the same alignment.
            std::memset(d, 0, n * 4);
            k->to_f32[slot](s, nblocks, reinterpret_cast<float *>(d), g::kStream);
            EXPECT_EQ(std::memcmp(d, ref.data(), n * 4), 0) << where << " streaming dst+" << doff;
            EXPECT_EQ(d[n * 4], 0xA5) << where << " streaming wrote past the output";
            if (doff % 2 == 0) {
              std::vector<uint16_t> h(n + 1, 0xA5A5), bf(n + 1, 0xA5A5);
              ASSERT_EQ(run(*k, t->id, s, body.size(), n, TBLOB_DTYPE_F16, h.data(), n * 2), TBLOB_OK);
              ASSERT_EQ(run(*k, t->id, s, body.size(), n, TBLOB_DTYPE_BF16, bf.data(), n * 2), TBLOB_OK);
              EXPECT_EQ(std::memcmp(h.data(), ref16.data(), n * 2), 0) << where << " f16";
              EXPECT_EQ(std::memcmp(bf.data(), refbf.data(), n * 2), 0) << where << " bf16";
              EXPECT_EQ(h[n], 0xA5A5);
              EXPECT_EQ(bf[n], 0xA5A5);
            }
          }
        }
      }
    }
  }
}

// A large output through the dispatcher's own streaming decision (threshold lowered to 0 so
// kStream is set), compared with a plain call.
TEST(GgmlKernels, DispatcherStreamingPath) {
  std::mt19937_64 rng(11);
  const uint64_t old = tblob::set_stream_threshold(0);
  for (uint32_t slot = g::kSlotQ4_0; slot < g::kSlotCount; ++slot) {
    const g::TypeInfo *t = g::type_info_by_slot(slot);
    const size_t nblocks = t->block_elems == 32 ? 1001 : 125;
    const std::string body = random_blocks(slot, nblocks, rng);
    const uint64_t n = nblocks * t->block_elems;
    std::vector<uint32_t> ref(n);
    tblob::set_stream_threshold(UINT64_MAX);
    ASSERT_EQ(run(g::scalar_kernels(), t->id, body, n, TBLOB_DTYPE_F32, ref.data(), n * 4), TBLOB_OK);
    tblob::set_stream_threshold(0);
    for (const g::Kernels *k : kernel_sets()) {
      std::vector<uint32_t> got(n + 8);
      for (size_t off : {size_t{0}, size_t{1}, size_t{4}}) {
        std::fill(got.begin(), got.end(), 0u);
        ASSERT_EQ(run(*k, t->id, body, n, TBLOB_DTYPE_F32, got.data() + off, n * 4), TBLOB_OK);
        EXPECT_EQ(std::memcmp(got.data() + off, ref.data(), n * 4), 0) << t->name << " " << k->name << " +" << off;
      }
    }
  }
  tblob::set_stream_threshold(old);
}

// f32 -> f16 / bf16 narrowing of every set on special values: ties, subnormal results,
// overflow, NaN payloads (quiet and signalling, both signs), every length 0..40.
TEST(GgmlKernels, NarrowingMatchesConvert) {
  std::vector<uint32_t> v = {0x00000000, 0x80000000, 0x3F800000, 0x477FEFFF, 0x477FF000, 0x477FF001, 0x7F7FFFFF,
                             0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001, 0xFF812345, 0x7FBFFFFF,
                             0x33000000, 0x33000001, 0x387FC000, 0x38800000, 0x3F801000, 0x3F803000, 0x3F808000,
                             0x3F818000, 0x00000001, 0x807FFFFF, 0x7F7F8000, 0x7F7FFFFF, 0x3F7FFFFF, 0x33800000};
  std::mt19937 rng(5);
  for (int i = 0; i < 4000; ++i) v.push_back(static_cast<uint32_t>(rng()));
  for (int i = 0; i < 4000; ++i) v.push_back((static_cast<uint32_t>(rng()) & 0x8FFFFFFFu) | 0x30000000u);
  std::vector<float> f(v.size());
  std::memcpy(f.data(), v.data(), v.size() * 4);
  for (const g::Kernels *k : kernel_sets()) {
    std::vector<uint16_t> h(v.size()), b(v.size());
    k->to_f16(f.data(), f.size(), h.data());
    k->to_bf16(f.data(), f.size(), b.data());
    for (size_t i = 0; i < v.size(); ++i) {
      ASSERT_EQ(h[i], tblob::dq::f32_to_f16(v[i])) << k->name << " f16 of " << std::hex << v[i];
      ASSERT_EQ(b[i], tblob::dq::f32_to_bf16(v[i])) << k->name << " bf16 of " << std::hex << v[i];
    }
    for (size_t len = 0; len <= 40; ++len) {
      std::vector<uint16_t> hh(len + 1, 0xA5A5), bb(len + 1, 0xA5A5);
      k->to_f16(f.data() + 3, len, hh.data());
      k->to_bf16(f.data() + 3, len, bb.data());
      for (size_t i = 0; i < len; ++i) {
        ASSERT_EQ(hh[i], h[3 + i]) << k->name << " len " << len;
        ASSERT_EQ(bb[i], b[3 + i]) << k->name << " len " << len;
      }
      EXPECT_EQ(hh[len], 0xA5A5);
      EXPECT_EQ(bb[len], 0xA5A5);
    }
  }
}

// Q8_1 and Q8_K have no gguf-py dequantizer: their struct definitions (ggml-common.h).
TEST(GgmlKernels, Q8_1AndQ8_KByDefinition) {
  std::mt19937 rng(3);
  std::string q81, q8k;
  std::vector<float> w81, w8k;
  for (int b = 0; b < 4; ++b) {
    const float d = 0.125f * static_cast<float>(b + 1);
    const uint16_t h = tblob::dq::f32_to_f16(tblob::dq::f32_bits(d));
    q81 += std::string(1, static_cast<char>(h & 0xFF)) + std::string(1, static_cast<char>(h >> 8));
    q81 += "\x12\x34";  // s: ignored
    for (int j = 0; j < 32; ++j) {
      const int8_t q = static_cast<int8_t>(rng());
      q81 += static_cast<char>(q);
      w81.push_back(d * q);
    }
  }
  for (int b = 0; b < 2; ++b) {
    const float d = 1.0f / 3.0f * static_cast<float>(b + 1);
    char db[4];
    std::memcpy(db, &d, 4);
    q8k.append(db, 4);
    for (int j = 0; j < 256; ++j) {
      const int8_t q = static_cast<int8_t>(rng());
      q8k += static_cast<char>(q);
      w8k.push_back(d * q);
    }
    q8k += std::string(32, '\x55');  // bsums: ignored
  }
  for (const g::Kernels *k : kernel_sets()) {
    std::vector<float> a(w81.size()), b(w8k.size());
    ASSERT_EQ(run(*k, g::kTypeQ8_1, q81, w81.size(), TBLOB_DTYPE_F32, a.data(), a.size() * 4), TBLOB_OK);
    ASSERT_EQ(run(*k, g::kTypeQ8_K, q8k, w8k.size(), TBLOB_DTYPE_F32, b.data(), b.size() * 4), TBLOB_OK);
    EXPECT_EQ(std::memcmp(a.data(), w81.data(), a.size() * 4), 0) << k->name;
    EXPECT_EQ(std::memcmp(b.data(), w8k.data(), b.size() * 4), 0) << k->name;
  }
}

// The newer types on hand-worked blocks (an oracle besides gguf-py), through every set.
TEST(GgmlKernels, NewTypesHandChecked) {
  for (const g::Kernels *k : kernel_sets()) {
    // MXFP4: E8M0 128 is 2^1 (stored halved: 1.0); code 7 is E2M1 6.0 -> 12, code 9 is -0.5
    // -> -1. E8M0 0 is 2^-127: code 1 (0.5) gives 2^-128 (f32 bits 0x00200000).
    std::string mx(34, '\0');
    mx[0] = static_cast<char>(128);
    mx[1] = static_cast<char>(0x97);
    mx[17] = 0;
    mx[18] = 0x01;
    std::vector<float> y(64);
    ASSERT_EQ(run(*k, g::kTypeMXFP4, mx, 64, TBLOB_DTYPE_F32, y.data(), 256), TBLOB_OK);
    EXPECT_EQ(y[0], 12.0f) << k->name;
    EXPECT_EQ(y[16], -1.0f) << k->name;
    EXPECT_EQ(y[1], 0.0f) << k->name;
    uint32_t bits;
    std::memcpy(&bits, &y[32], 4);
    EXPECT_EQ(bits, 0x00200000u) << k->name;
    // TQ2_0, d = 1: byte 0xE4 holds codes 0, 1, 2, 3 -> -1, 0, 1, 2 at elements 0, 32, 64, 96.
    std::string tq2(66, '\0');
    tq2[0] = static_cast<char>(0xE4);
    tq2[65] = 0x3C;
    std::vector<float> t(256);
    ASSERT_EQ(run(*k, g::kTypeTQ2_0, tq2, 256, TBLOB_DTYPE_F32, t.data(), 1024), TBLOB_OK);
    EXPECT_EQ(t[0], -1.0f);
    EXPECT_EQ(t[32], 0.0f);
    EXPECT_EQ(t[64], 1.0f);
    EXPECT_EQ(t[96], 2.0f) << k->name;
    // TQ1_0, d = 1: base-3 digits (2, 0, 1, 0, 0) = 171 are stored as ceil(171 * 256 / 243) =
    // 181, and decode to 2-1, 0-1, 1-1, 0-1, 0-1 at elements 0, 32, 64, 96, 128.
    std::string tq1(54, '\0');
    tq1[0] = static_cast<char>(181);
    tq1[53] = 0x3C;
    ASSERT_EQ(run(*k, g::kTypeTQ1_0, tq1, 256, TBLOB_DTYPE_F32, t.data(), 1024), TBLOB_OK);
    EXPECT_EQ(t[0], 1.0f);
    EXPECT_EQ(t[32], -1.0f);
    EXPECT_EQ(t[64], 0.0f);
    EXPECT_EQ(t[96], -1.0f);
    EXPECT_EQ(t[128], -1.0f) << k->name;
    // IQ4_XS, d = 1: sub-block 0's scale 33 (low nibble 1, high bits 2) -> 1; byte 0x0F -> grid
    // entries 15 (113) and 0 (-127).
    std::string xs(136, '\0');
    xs[1] = 0x3C;
    xs[2] = 0x02;
    xs[4] = 0x01;
    xs[8] = 0x0F;
    ASSERT_EQ(run(*k, g::kTypeIQ4_XS, xs, 256, TBLOB_DTYPE_F32, t.data(), 1024), TBLOB_OK);
    EXPECT_EQ(t[0], 113.0f);
    EXPECT_EQ(t[16], -127.0f) << k->name;
    // IQ1_M: d = 1.0 (f16 0x3C00) spread over the top nibbles of its four scale words; scales
    // 0 -> 1; grid row 0 is all -1; delta +0.125, or -0.125 when the group's nibble has bit 3.
    std::string m1(56, '\0');
    m1[32] = static_cast<char>(0x80);  // group 1's nibble: delta negative
    m1[53] = static_cast<char>(0xC0);
    m1[55] = 0x30;
    ASSERT_EQ(run(*k, g::kTypeIQ1_M, m1, 256, TBLOB_DTYPE_F32, t.data(), 1024), TBLOB_OK);
    EXPECT_EQ(t[0], -0.875f);
    EXPECT_EQ(t[8], -1.125f) << k->name;
  }
}

// NVFP4 and Q1_0 by their definitions in ggml (gguf-py has no Q1_0 dequantizer), hand-worked,
// through every set.
TEST(GgmlKernels, Nvfp4AndQ1_0HandChecked) {
  for (const g::Kernels *k : kernel_sets()) {
    // NVFP4: scale bytes 0x38 (exponent 7, mantissa 0: 1.0, stored halved 0.5), 0x7F (decodes
    // to 0), 0x01 (subnormal 2^-9, halved 2^-10), 0xC3 (top bit ignored: 0x43 = 1.375 * 2^1,
    // halved 1.375). Codes: 7 (E2M1 6.0, doubled 12), 9 (-0.5 -> -1), 5 (3.0 -> 6), 0xF (-6 -> -12).
    std::string nv(36 * 2, '\0');
    nv[0] = 0x38;
    nv[1] = 0x7F;
    nv[2] = 0x01;
    nv[3] = static_cast<char>(0xC3);
    nv[4] = static_cast<char>(0x97);       // sub-block 0 byte 0: element 0 code 7, element 8 code 9
    nv[4 + 8] = 0x77;                      // sub-block 1: 0 * anything
    nv[4 + 16 + 7] = 0x50;                 // sub-block 2 byte 7: element 39 code 0, element 47 code 5
    nv[4 + 24 + 3] = static_cast<char>(0xF5);  // sub-block 3 byte 3: element 51 code 5, element 59 code 15
    nv[36] = 0x38;                         // second block: scale 0.5, all codes 0 -> +0
    std::vector<float> y(128, -7.0f);
    ASSERT_EQ(run(*k, g::kTypeNVFP4, nv, 128, TBLOB_DTYPE_F32, y.data(), 512), TBLOB_OK);
    EXPECT_EQ(y[0], 6.0f) << k->name;    // 0.5 * 12
    EXPECT_EQ(y[8], -0.5f) << k->name;   // 0.5 * -1
    EXPECT_EQ(y[1], 0.0f) << k->name;
    EXPECT_EQ(y[16], 0.0f) << k->name;   // scale byte 0x7F
    EXPECT_EQ(y[47], 6.0f * 0.0009765625f) << k->name;
    EXPECT_EQ(y[39], 0.0f) << k->name;
    EXPECT_EQ(y[51], 1.375f * 6.0f) << k->name;
    EXPECT_EQ(y[59], 1.375f * -12.0f) << k->name;
    EXPECT_EQ(y[127], 0.0f) << k->name;
    // Q1_0, d = -2 (f16 0xC000): bit set -> d, clear -> -d; byte 0 = 0x81: elements 0 and 7 set.
    std::string q1(18, '\0');
    q1[1] = static_cast<char>(0xC0);
    q1[2] = static_cast<char>(0x81);
    q1[17] = 0x40;  // element 126 set
    std::vector<float> z(128);
    ASSERT_EQ(run(*k, g::kTypeQ1_0, q1, 128, TBLOB_DTYPE_F32, z.data(), 512), TBLOB_OK);
    EXPECT_EQ(z[0], -2.0f) << k->name;
    EXPECT_EQ(z[7], -2.0f) << k->name;
    EXPECT_EQ(z[1], 2.0f) << k->name;
    EXPECT_EQ(z[126], -2.0f) << k->name;
    EXPECT_EQ(z[127], 2.0f) << k->name;
    // d = +0: clear bits give -0.
    q1[1] = 0;
    ASSERT_EQ(run(*k, g::kTypeQ1_0, q1, 128, TBLOB_DTYPE_F32, z.data(), 512), TBLOB_OK);
    uint32_t bits;
    std::memcpy(&bits, &z[1], 4);
    EXPECT_EQ(bits, 0x80000000u) << k->name;
    std::memcpy(&bits, &z[0], 4);
    EXPECT_EQ(bits, 0u) << k->name;
  }
}

TEST(GgmlKernels, Statuses) {
  const std::string q40(18 * 2, '\0');
  std::vector<float> out(64);
  const g::Kernels &s = g::scalar_kernels();
  EXPECT_EQ(run(s, 4, q40, 64, TBLOB_DTYPE_F32, out.data(), 256), TBLOB_E_UNSUPPORTED);  // id 4 removed
  EXPECT_EQ(run(s, 99, q40, 64, TBLOB_DTYPE_F32, out.data(), 256), TBLOB_E_UNSUPPORTED);
  EXPECT_EQ(run(s, g::kTypeQ4_0, q40, 63, TBLOB_DTYPE_F32, out.data(), 256), TBLOB_E_TENSOR_SIZE);
  EXPECT_EQ(run(s, g::kTypeQ4_0, q40.substr(1), 64, TBLOB_DTYPE_F32, out.data(), 256), TBLOB_E_TENSOR_SIZE);
  EXPECT_EQ(run(s, g::kTypeQ4_0, q40 + "x", 64, TBLOB_DTYPE_F32, out.data(), 256), TBLOB_E_TENSOR_SIZE);
  EXPECT_EQ(run(s, g::kTypeQ4_0, q40, 64, TBLOB_DTYPE_F32, out.data(), 255), TBLOB_E_BUFFER_TOO_SMALL);
  EXPECT_EQ(run(s, g::kTypeQ4_0, q40, 64, TBLOB_DTYPE_I8, out.data(), 256), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(run(s, g::kTypeQ4_0, q40, 64, TBLOB_DTYPE_F32, out.data(), 256), TBLOB_OK);
}

}  // namespace
