// GGML block dequantization: the scalar reference against gguf-py (tests/data/ggml, written
// by tests/oracles/gen_ggml_fixtures.py), every SIMD set against the scalar reference (random
// blocks, non-finite scales included), Q8_1/Q8_K by their struct definitions, and the
// checked entry point's statuses.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "dequant/convert.h"
#include "dequant/ggml/ggml.h"
#include "tensorblob.h"

namespace g = tblob::ggml;

namespace {

std::string data_dir() { return std::string(TBLOB_UQFF_DATA_DIR) + "/../ggml/"; }

std::string slurp(const std::string &p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<const g::Kernels *> kernel_sets() {
  std::vector<const g::Kernels *> v{&g::scalar_kernels()};
  const g::Kernels *k = nullptr;
  if (g::kernels_by_name("avx2", &k) == TBLOB_OK) v.push_back(k);
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

tblob::Status run(const g::Kernels &k, uint32_t type, const std::string &src, uint64_t n, uint32_t out,
                  void *dst, uint64_t dst_bytes) {
  tblob::Diag d;
  return g::dequantize(k, type, reinterpret_cast<const uint8_t *>(src.data()), src.size(), n, out, dst, dst_bytes, d);
}

TEST(Ggml, FixturesPresent) {
  const auto fx = fixtures();
  EXPECT_GE(fx.size(), 12u);
}

// Scalar and every SIMD set equal gguf.quants.dequantize bit for bit, f32 output.
TEST(Ggml, MatchesGgufBitExact) {
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
    }
  }
}

// f16 / bf16 outputs are the f32 result rounded once (convert.h).
TEST(Ggml, HalfOutputsRoundTheF32Result) {
  for (const Fixture &f : fixtures()) {
    for (const g::Kernels *k : kernel_sets()) {
      for (uint32_t out : {static_cast<uint32_t>(TBLOB_DTYPE_F16), static_cast<uint32_t>(TBLOB_DTYPE_BF16)}) {
        std::vector<uint16_t> got(f.elements);
        ASSERT_EQ(run(*k, f.id, f.blocks, f.elements, out, got.data(), f.elements * 2), TBLOB_OK);
        for (uint64_t i = 0; i < f.elements; ++i) {
          const uint16_t want = out == TBLOB_DTYPE_F16 ? tblob::dq::f32_to_f16(f.expected[i]) : tblob::dq::f32_to_bf16(f.expected[i]);
          if (got[i] != want) {
            ADD_FAILURE() << f.name << " " << k->name << " out " << out << " element " << i;
            break;
          }
        }
      }
    }
  }
}

// Random bytes, every scale field random too (NaN and inf included): all sets agree with the
// scalar reference, NaN results are the canonical quiet NaN, misaligned src/dst work, and
// the streaming path equals the ordinary one.
TEST(Ggml, SimdEqualsScalarOnRandomBlocks) {
  std::mt19937_64 rng(7);
  for (uint32_t slot = 0; slot < g::kSlotCount; ++slot) {
    const g::TypeInfo *t = g::type_info_by_slot(slot);
    const size_t nblocks = t->block_elems == 1 ? 4099 : (t->block_elems == 32 ? 515 : 67);
    std::string src(nblocks * t->block_bytes + 1, '\0');
    for (char &c : src) c = static_cast<char>(rng());
    // Make some scale fields non-finite on purpose.
    for (size_t b = 0; b < nblocks && t->block_elems > 1; b += 5) {
      uint8_t *p = reinterpret_cast<uint8_t *>(&src[1 + b * t->block_bytes]);
      const size_t off = slot == g::kSlotQ2_K ? 80 : slot == g::kSlotQ3_K ? 108 : slot == g::kSlotQ6_K ? 208 : 0;
      if (slot == g::kSlotQ8_K) {
        p[3] = 0x7F;
        p[2] |= 0x80;
      } else {
        p[off + 1] = 0x7C | (rng() & 0x83);
      }
    }
    const std::string body = src.substr(1);  // also run from a misaligned copy below
    const uint64_t n = nblocks * t->block_elems;
    std::vector<uint32_t> ref(n);
    ASSERT_EQ(run(g::scalar_kernels(), t->id, body, n, TBLOB_DTYPE_F32, ref.data(), n * 4), TBLOB_OK);
    for (uint64_t i = 0; i < n; ++i) {
      if ((ref[i] & 0x7FFFFFFFu) > 0x7F800000u && t->block_elems > 1) {
        ASSERT_EQ(ref[i], 0x7FC00000u) << t->name;
      }
    }
    for (const g::Kernels *k : kernel_sets()) {
      std::vector<uint8_t> raw(n * 4 + 3);
      tblob::Diag d;
      ASSERT_EQ(g::dequantize(*k, t->id, reinterpret_cast<const uint8_t *>(src.data()) + 1, body.size(), n,
                              TBLOB_DTYPE_F32, raw.data() + 3, n * 4, d),
                TBLOB_OK);
      EXPECT_EQ(std::memcmp(raw.data() + 3, ref.data(), n * 4), 0) << t->name << " " << k->name << " misaligned";
      std::vector<float> streamed(n);
      k->to_f32[slot](reinterpret_cast<const uint8_t *>(body.data()), nblocks, streamed.data(), g::kStream);
      EXPECT_EQ(std::memcmp(streamed.data(), ref.data(), n * 4), 0) << t->name << " " << k->name << " streaming";
      for (uint32_t out : {static_cast<uint32_t>(TBLOB_DTYPE_F16), static_cast<uint32_t>(TBLOB_DTYPE_BF16)}) {
        std::vector<uint16_t> a(n), b(n);
        ASSERT_EQ(run(g::scalar_kernels(), t->id, body, n, out, a.data(), n * 2), TBLOB_OK);
        ASSERT_EQ(run(*k, t->id, body, n, out, b.data(), n * 2), TBLOB_OK);
        EXPECT_EQ(a, b) << t->name << " " << k->name << " out " << out;
      }
    }
  }
}

// Q8_1 and Q8_K have no gguf-py dequantizer: their struct definitions (ggml-common.h).
TEST(Ggml, Q8_1AndQ8_KByDefinition) {
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

TEST(Ggml, Statuses) {
  const std::string q40(18 * 2, '\0');
  std::vector<float> out(64);
  EXPECT_EQ(run(g::scalar_kernels(), 4, q40, 64, TBLOB_DTYPE_F32, out.data(), 256), TBLOB_E_UNSUPPORTED);  // id 4 removed
  EXPECT_EQ(run(g::scalar_kernels(), 99, q40, 64, TBLOB_DTYPE_F32, out.data(), 256), TBLOB_E_UNSUPPORTED);
  EXPECT_EQ(run(g::scalar_kernels(), g::kTypeQ4_0, q40, 63, TBLOB_DTYPE_F32, out.data(), 256), TBLOB_E_TENSOR_SIZE);
  EXPECT_EQ(run(g::scalar_kernels(), g::kTypeQ4_0, q40.substr(1), 64, TBLOB_DTYPE_F32, out.data(), 256),
            TBLOB_E_TENSOR_SIZE);  // truncated block
  EXPECT_EQ(run(g::scalar_kernels(), g::kTypeQ4_0, q40 + "x", 64, TBLOB_DTYPE_F32, out.data(), 256),
            TBLOB_E_TENSOR_SIZE);
  EXPECT_EQ(run(g::scalar_kernels(), g::kTypeQ4_0, q40, 64, TBLOB_DTYPE_F32, out.data(), 255), TBLOB_E_BUFFER_TOO_SMALL);
  EXPECT_EQ(run(g::scalar_kernels(), g::kTypeQ4_0, q40, 64, TBLOB_DTYPE_I8, out.data(), 256), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(run(g::scalar_kernels(), g::kTypeQ4_0, q40, 64, TBLOB_DTYPE_F32, out.data(), 256), TBLOB_OK);
  // The public entry point.
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(tblob_ggml_dequantize(g::kTypeQ4_0, q40.data(), q40.size(), 64, TBLOB_DTYPE_F32, out.data(), 8, &d),
            TBLOB_E_BUFFER_TOO_SMALL);
  EXPECT_NE(std::strstr(d.message, "256"), nullptr) << d.message;
  EXPECT_EQ(tblob_ggml_dequantize(g::kTypeQ4_0, q40.data(), q40.size(), 64, TBLOB_DTYPE_F32, out.data(), 256, &d), TBLOB_OK);
  const std::string kn = tblob_ggml_kernel_name();
  EXPECT_TRUE(kn == "scalar" || kn == "avx2") << kn;
}

}  // namespace
