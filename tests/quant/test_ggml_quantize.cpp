// tblob_ggml_quantize / tblob_ggml_row_size: ggml's own bytes from committed fixtures
// (tests/data/ggml_quant, written by gen_ggml_quant_fixtures.py from the llama-cpp-python
// sdist's ggml-quants.c), so every build (arm64 under qemu, i386) checks them without the
// oracle, through every kernel set the host runs and on 1 and 3 threads; plus every status
// and the buffer rules of the contract.
#include <dirent.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tensorblob.h"

#ifndef TBLOB_GGML_QUANT_DATA_DIR
#error "TBLOB_GGML_QUANT_DATA_DIR must name tests/data/ggml_quant"
#endif

namespace {

std::vector<uint8_t> read_file(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

struct Reader {
  const std::vector<uint8_t> &b;
  size_t pos = 0;
  bool ok = true;
  template <class T>
  T get() {
    T v{};
    if (pos + sizeof(T) > b.size()) {
      ok = false;
      return v;
    }
    std::memcpy(&v, b.data() + pos, sizeof(T));  // fixtures are little-endian, as every tested host
    pos += sizeof(T);
    return v;
  }
  const uint8_t *take(size_t n) {
    if (pos + n > b.size()) {
      ok = false;
      return nullptr;
    }
    const uint8_t *p = b.data() + pos;
    pos += n;
    return p;
  }
};

struct Case {
  std::string name;
  uint64_t rows, cols;
  std::vector<float> x;
};
struct Weights {
  std::string name;
  std::vector<float> w;
};

bool load_inputs(std::vector<Case> *cases, std::vector<Weights> *weights) {
  const std::vector<uint8_t> b = read_file(std::string(TBLOB_GGML_QUANT_DATA_DIR) + "/inputs.bin");
  Reader r{b};
  const uint8_t *magic = r.take(4);
  if (!magic || std::memcmp(magic, "TBQI", 4) != 0 || r.get<uint32_t>() != 1) return false;
  const uint32_t nc = r.get<uint32_t>(), nw = r.get<uint32_t>();
  for (uint32_t i = 0; i < nc && r.ok; ++i) {
    Case c;
    const uint32_t len = r.get<uint32_t>();
    const uint8_t *name = r.take(len);
    if (!name) return false;
    c.name.assign(reinterpret_cast<const char *>(name), len);
    c.rows = r.get<uint64_t>();
    c.cols = r.get<uint64_t>();
    const uint8_t *p = r.take(c.rows * c.cols * 4);
    if (!p) return false;
    c.x.resize(c.rows * c.cols);
    std::memcpy(c.x.data(), p, c.x.size() * 4);
    cases->push_back(std::move(c));
  }
  for (uint32_t i = 0; i < nw && r.ok; ++i) {
    Weights w;
    const uint32_t len = r.get<uint32_t>();
    const uint8_t *name = r.take(len);
    if (!name) return false;
    w.name.assign(reinterpret_cast<const char *>(name), len);
    const uint64_t n = r.get<uint64_t>();
    const uint8_t *p = r.take(n * 4);
    if (!p) return false;
    w.w.resize(n);
    std::memcpy(w.w.data(), p, n * 4);
    weights->push_back(std::move(w));
  }
  return r.ok && r.pos == b.size();
}

std::vector<std::string> fixture_types() {
  std::vector<std::string> out;
  if (DIR *d = opendir(TBLOB_GGML_QUANT_DATA_DIR)) {
    while (const dirent *e = readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() > 4 && n.compare(n.size() - 4, 4, ".bin") == 0 && n != "inputs.bin") out.push_back(n);
    }
    closedir(d);
  }
  return out;
}

std::vector<std::string> kernel_sets() {
  std::vector<std::string> out;
  for (const char *k : {"scalar", "avx2", "avx512", "neon"})
    if (tblob_kernel_set(k, nullptr) == TBLOB_OK) out.push_back(k);
  tblob_kernel_set(nullptr, nullptr);
  return out;
}

tblob_status quantize(uint32_t type, const std::vector<float> &x, uint64_t rows, uint64_t cols, const float *w,
                      std::vector<uint8_t> *out, uint32_t threads = 1, tblob_diag *d = nullptr) {
  uint64_t rs = 0;
  tblob_status s = tblob_ggml_row_size(type, cols, &rs, nullptr);
  if (s != TBLOB_OK) return s;
  out->assign(rows * rs, 0xA5);
  tblob_quantize_options o = TBLOB_QUANTIZE_OPTIONS_INIT;
  o.threads = threads;
  return tblob_ggml_quantize(type, TBLOB_DTYPE_F32, x.data(), x.size() * 4, rows, cols, w, out->data(), out->size(),
                             &o, d);
}

TEST(GgmlQuantize, FixturesFromGgml) {
  std::vector<Case> cases;
  std::vector<Weights> weights;
  ASSERT_TRUE(load_inputs(&cases, &weights)) << "tests/data/ggml_quant/inputs.bin unreadable";
  const std::vector<std::string> types = fixture_types();
  ASSERT_GE(types.size(), 9u) << "fixture files missing";
  const std::vector<std::string> sets = kernel_sets();
  ASSERT_FALSE(sets.empty());
  size_t checked = 0;
  for (const std::string &file : types) {
    const std::vector<uint8_t> b = read_file(std::string(TBLOB_GGML_QUANT_DATA_DIR) + "/" + file);
    Reader r{b};
    const uint8_t *magic = r.take(4);
    ASSERT_TRUE(magic && std::memcmp(magic, "TBQE", 4) == 0) << file;
    ASSERT_EQ(r.get<uint32_t>(), 1u) << file;
    const uint32_t type = r.get<uint32_t>(), count = r.get<uint32_t>();
    for (uint32_t i = 0; i < count; ++i) {
      const uint32_t ci = r.get<uint32_t>();
      const int32_t wi = r.get<int32_t>();
      const uint64_t n = r.get<uint64_t>();
      const uint8_t *want = r.take(n);
      ASSERT_TRUE(r.ok && ci < cases.size() && wi < static_cast<int32_t>(weights.size())) << file << " record " << i;
      const Case &c = cases[ci];
      const float *w = wi >= 0 ? weights[wi].w.data() : nullptr;
      for (const std::string &k : sets) {
        ASSERT_EQ(tblob_kernel_set(k.c_str(), nullptr), TBLOB_OK);
        for (uint32_t threads : {1u, 3u}) {
          std::vector<uint8_t> got;
          tblob_diag d = TBLOB_DIAG_INIT;
          ASSERT_EQ(quantize(type, c.x, c.rows, c.cols, w, &got, threads, &d), TBLOB_OK) << d.message;
          ASSERT_EQ(got.size(), n) << file << " " << c.name;
          EXPECT_EQ(std::memcmp(got.data(), want, n), 0)
              << file << " case " << c.name << " importance " << (wi >= 0 ? weights[wi].name : "none")
              << " kernels " << k << " threads " << threads;
          ++checked;
        }
      }
    }
    EXPECT_EQ(r.pos, b.size()) << file << ": trailing bytes";
  }
  tblob_kernel_set(nullptr, nullptr);
  EXPECT_GT(checked, 0u);
}

TEST(GgmlQuantize, RowSize) {
  uint64_t n = 7;
  EXPECT_EQ(tblob_ggml_row_size(8, 64, &n, nullptr), TBLOB_OK);  // Q8_0: 2 blocks of 34
  EXPECT_EQ(n, 68u);
  EXPECT_EQ(tblob_ggml_row_size(12, 512, &n, nullptr), TBLOB_OK);  // Q4_K: 2 blocks of 144
  EXPECT_EQ(n, 288u);
  EXPECT_EQ(tblob_ggml_row_size(0, 3, &n, nullptr), TBLOB_OK);  // F32
  EXPECT_EQ(n, 12u);
  EXPECT_EQ(tblob_ggml_row_size(8, 0, &n, nullptr), TBLOB_OK);
  EXPECT_EQ(n, 0u);
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(tblob_ggml_row_size(2, 33, &n, &d), TBLOB_E_QUANT_GROUP_SIZE);
  EXPECT_NE(std::strstr(d.message, "33"), nullptr) << d.message;
  EXPECT_EQ(tblob_ggml_row_size(999, 32, &n, nullptr), TBLOB_E_UNSUPPORTED);
  EXPECT_EQ(tblob_ggml_row_size(8, 32, nullptr, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_ggml_row_size(8, UINT64_MAX - 31, &n, nullptr), TBLOB_E_SHAPE_OVERFLOW);
}

std::vector<float> ramp(size_t n) {
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = std::sin(static_cast<float>(i) * 0.37f) * 3.0f;
  return x;
}

TEST(GgmlQuantize, Statuses) {
  const std::vector<float> x = ramp(2 * 64);
  std::vector<uint8_t> out(2 * 68 + 16, 0);
  tblob_diag d = TBLOB_DIAG_INIT;
  auto q = [&](uint32_t type, uint32_t dt, const void *src, size_t sb, uint64_t rows, uint64_t cols, const float *w,
               void *dst, size_t db, const tblob_quantize_options *o) {
    d = TBLOB_DIAG_INIT;
    return tblob_ggml_quantize(type, dt, src, sb, rows, cols, w, dst, db, o, &d);
  };
  const size_t sb = x.size() * 4;
  EXPECT_EQ(q(8, TBLOB_DTYPE_F32, x.data(), sb, 2, 64, nullptr, out.data(), 136, nullptr), TBLOB_OK);
  // Types without a quantizer: float types, IQ2..IQ3 (grid searches), unknown ids.
  for (uint32_t t : {0u, 1u, 16u, 19u, 30u, 40u, 41u, 42u, 999u})
    EXPECT_EQ(q(t, TBLOB_DTYPE_F32, x.data(), sb, 2, 64, nullptr, out.data(), out.size(), nullptr), TBLOB_E_UNSUPPORTED) << t;
  EXPECT_EQ(q(8, TBLOB_DTYPE_F32, x.data(), 4 * 2 * 48, 2, 48, nullptr, out.data(), out.size(), nullptr),
            TBLOB_E_QUANT_GROUP_SIZE);
  EXPECT_EQ(q(34, TBLOB_DTYPE_F32, x.data(), sb, 1, 128, nullptr, out.data(), out.size(), nullptr),
            TBLOB_E_QUANT_GROUP_SIZE);  // TQ1_0 blocks are 256
  EXPECT_EQ(q(8, TBLOB_DTYPE_I8, x.data(), sb, 2, 64, nullptr, out.data(), out.size(), nullptr), TBLOB_E_DTYPE);
  EXPECT_EQ(q(8, TBLOB_DTYPE_F64, x.data(), sb, 2, 64, nullptr, out.data(), out.size(), nullptr), TBLOB_E_DTYPE);
  EXPECT_EQ(q(8, TBLOB_DTYPE_F32, x.data(), sb - 1, 2, 64, nullptr, out.data(), out.size(), nullptr), TBLOB_E_QUANT_DATA_SIZE);
  EXPECT_EQ(q(8, TBLOB_DTYPE_F32, x.data(), sb + 4, 2, 64, nullptr, out.data(), out.size(), nullptr), TBLOB_E_QUANT_DATA_SIZE);
  EXPECT_EQ(q(8, TBLOB_DTYPE_F16, x.data(), sb, 2, 64, nullptr, out.data(), out.size(), nullptr), TBLOB_E_QUANT_DATA_SIZE);
  EXPECT_EQ(q(8, TBLOB_DTYPE_F32, x.data(), sb, 2, 64, nullptr, out.data(), 135, nullptr), TBLOB_E_BUFFER_TOO_SMALL);
  EXPECT_EQ(q(8, TBLOB_DTYPE_F32, nullptr, sb, 2, 64, nullptr, out.data(), out.size(), nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(q(8, TBLOB_DTYPE_F32, x.data(), sb, 2, 64, nullptr, nullptr, 136, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(q(8, TBLOB_DTYPE_F32, x.data(), sb, 1ull << 62, 1024, nullptr, out.data(), out.size(), nullptr),
            TBLOB_E_SHAPE_OVERFLOW);
  // Nothing to do: no rows, or no columns.
  EXPECT_EQ(q(8, TBLOB_DTYPE_F32, nullptr, 0, 0, 64, nullptr, nullptr, 0, nullptr), TBLOB_OK);
  EXPECT_EQ(q(8, TBLOB_DTYPE_F32, nullptr, 0, 5, 0, nullptr, nullptr, 0, nullptr), TBLOB_OK);
  // Options: struct_size, reserved.
  tblob_quantize_options o = TBLOB_QUANTIZE_OPTIONS_INIT;
  o.struct_size = 4;
  EXPECT_EQ(q(8, TBLOB_DTYPE_F32, x.data(), sb, 2, 64, nullptr, out.data(), out.size(), &o), TBLOB_E_INVALID_ARGUMENT);
  o = TBLOB_QUANTIZE_OPTIONS_INIT;
  o.reserved[1] = 1;
  EXPECT_EQ(q(8, TBLOB_DTYPE_F32, x.data(), sb, 2, 64, nullptr, out.data(), out.size(), &o), TBLOB_E_INVALID_ARGUMENT);
  // A diag too small to write into.
  tblob_diag small = TBLOB_DIAG_INIT;
  small.struct_size = 8;
  EXPECT_EQ(tblob_ggml_quantize(8, TBLOB_DTYPE_F32, x.data(), sb, 2, 64, nullptr, out.data(), out.size(), nullptr, &small),
            TBLOB_E_INVALID_ARGUMENT);
}

TEST(GgmlQuantize, NonFiniteInput) {
  for (float bad : {NAN, INFINITY, -INFINITY}) {
    std::vector<float> x = ramp(4 * 64);
    x[2 * 64 + 5] = bad;
    x[3 * 64 + 1] = bad;  // the lowest row is the one reported, whatever the threads
    for (uint32_t t : {1u, 4u}) {
      std::vector<uint8_t> out;
      tblob_diag d = TBLOB_DIAG_INIT;
      EXPECT_EQ(quantize(2, x, 4, 64, nullptr, &out, t, &d), TBLOB_E_QUANT_NONFINITE);
      EXPECT_NE(std::strstr(d.message, "row 2, column 5"), nullptr) << d.message;
      EXPECT_EQ(d.offset, (2u * 64 + 5) * 4);
    }
  }
  // Rows of 288 values: the scan tests runs of 64, then the rest; the first bad value is found
  // in any run and in the partial last one.
  for (uint64_t col : {5u, 70u, 130u, 270u}) {
    std::vector<float> x = ramp(2 * 288);
    x[288 + col] = NAN;
    x[288 + 287] = INFINITY;
    std::vector<uint8_t> out;
    tblob_diag d = TBLOB_DIAG_INIT;
    EXPECT_EQ(quantize(8, x, 2, 288, nullptr, &out, 1, &d), TBLOB_E_QUANT_NONFINITE);
    const std::string want = "row 1, column " + std::to_string(col);
    EXPECT_NE(std::strstr(d.message, want.c_str()), nullptr) << d.message;
    EXPECT_EQ(d.offset, (288 + col) * 4);
  }
  // F16 and BF16 inputs: infinity and NaN bit patterns.
  std::vector<uint16_t> h(64, 0x3C00);  // 1.0
  std::vector<uint8_t> out(68);
  tblob_diag d = TBLOB_DIAG_INIT;
  h[40] = 0x7C00;
  EXPECT_EQ(tblob_ggml_quantize(8, TBLOB_DTYPE_F16, h.data(), 128, 1, 64, nullptr, out.data(), 68, nullptr, &d),
            TBLOB_E_QUANT_NONFINITE);
  EXPECT_NE(std::strstr(d.message, "column 40"), nullptr) << d.message;
  std::vector<uint16_t> bh(64, 0x3F80);  // 1.0
  bh[63] = 0xFFC1;
  EXPECT_EQ(tblob_ggml_quantize(8, TBLOB_DTYPE_BF16, bh.data(), 128, 1, 64, nullptr, out.data(), 68, nullptr, &d),
            TBLOB_E_QUANT_NONFINITE);
  EXPECT_NE(std::strstr(d.message, "column 63"), nullptr) << d.message;
}

TEST(GgmlQuantize, Importance) {
  const std::vector<float> x = ramp(2 * 64);
  std::vector<float> w(64, 1.0f);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 5);
  std::vector<uint8_t> a, b(2 * 36), plain;
  ASSERT_EQ(quantize(2, x, 2, 64, w.data(), &a), TBLOB_OK);
  ASSERT_EQ(quantize(2, x, 2, 64, nullptr, &plain), TBLOB_OK);
  EXPECT_NE(a, plain);  // Q4_0 takes the weights
  // The same weights through the options.
  tblob_quantize_options o = TBLOB_QUANTIZE_OPTIONS_INIT;
  o.importance = w.data();
  o.importance_count = 64;
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(tblob_ggml_quantize(2, TBLOB_DTYPE_F32, x.data(), x.size() * 4, 2, 64, nullptr, b.data(), b.size(), &o, &d),
            TBLOB_OK) << d.message;
  EXPECT_EQ(a, b);
  // Given twice, or with a count other than cols.
  EXPECT_EQ(tblob_ggml_quantize(2, TBLOB_DTYPE_F32, x.data(), x.size() * 4, 2, 64, w.data(), b.data(), b.size(), &o, &d),
            TBLOB_E_QUANT_IMPORTANCE);
  o.importance_count = 63;
  EXPECT_EQ(tblob_ggml_quantize(2, TBLOB_DTYPE_F32, x.data(), x.size() * 4, 2, 64, nullptr, b.data(), b.size(), &o, &d),
            TBLOB_E_QUANT_IMPORTANCE);
  // Negative, NaN, infinite weights; -0 is a zero weight.
  for (float bad : {-1.0f, -1e-30f, NAN, INFINITY}) {
    std::vector<float> wb = w;
    wb[17] = bad;
    std::vector<uint8_t> out;
    d = TBLOB_DIAG_INIT;
    EXPECT_EQ(quantize(2, x, 2, 64, wb.data(), &out, 1, &d), TBLOB_E_QUANT_IMPORTANCE) << bad;
    EXPECT_NE(std::strstr(d.message, "column 17"), nullptr) << d.message;
    EXPECT_EQ(quantize(8, x, 2, 64, wb.data(), &out, 1, &d), TBLOB_E_QUANT_IMPORTANCE) << "checked for Q8_0 too";
  }
  std::vector<float> wz = w;
  wz[3] = -0.0f;
  std::vector<uint8_t> out;
  EXPECT_EQ(quantize(2, x, 2, 64, wz.data(), &out), TBLOB_OK);
  // Q8_0, TQ*, MXFP4 ignore the weights, as ggml does.
  std::vector<uint8_t> q8a, q8b;
  ASSERT_EQ(quantize(8, x, 2, 64, w.data(), &q8a), TBLOB_OK);
  ASSERT_EQ(quantize(8, x, 2, 64, nullptr, &q8b), TBLOB_OK);
  EXPECT_EQ(q8a, q8b);
}

TEST(GgmlQuantize, HalfInputsAndBuffers) {
  // F16 / BF16 input quantizes exactly as the F32 values it holds; dst past the rows is left
  // untouched; unaligned F32 input reads the same values.
  const size_t cols = 256, rows = 3;
  std::vector<uint16_t> h(rows * cols), bh(rows * cols);
  std::vector<float> xh(rows * cols), xb(rows * cols);
  for (size_t i = 0; i < h.size(); ++i) {
    h[i] = static_cast<uint16_t>(0x3000 + (i * 37) % 0x1800) | static_cast<uint16_t>((i % 3 == 0) << 15);
    bh[i] = static_cast<uint16_t>(0x3E00 + (i * 53) % 0x300) | static_cast<uint16_t>((i % 5 == 0) << 15);
    // f16 -> f32 by value: sign, exponent (bias 15), 10 mantissa bits (no subnormals here).
    const int e = (h[i] >> 10) & 31;
    const float m = 1.0f + static_cast<float>(h[i] & 1023) / 1024.0f;
    xh[i] = std::ldexp(m, e - 15) * ((h[i] & 0x8000) ? -1.0f : 1.0f);
    const uint32_t u = static_cast<uint32_t>(bh[i]) << 16;
    std::memcpy(&xb[i], &u, 4);
  }
  for (uint32_t type : {2u, 3u, 6u, 7u, 8u, 20u, 34u, 35u, 39u}) {
    std::vector<uint8_t> want, got;
    ASSERT_EQ(quantize(type, xh, rows, cols, nullptr, &want), TBLOB_OK);
    got.assign(want.size() + 7, 0x5A);
    ASSERT_EQ(tblob_ggml_quantize(type, TBLOB_DTYPE_F16, h.data(), h.size() * 2, rows, cols, nullptr, got.data(),
                                  got.size(), nullptr, nullptr),
              TBLOB_OK);
    EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size()), 0) << type;
    for (size_t i = want.size(); i < got.size(); ++i) EXPECT_EQ(got[i], 0x5A) << "byte past the rows " << i;
    ASSERT_EQ(quantize(type, xb, rows, cols, nullptr, &want), TBLOB_OK);
    got.assign(want.size(), 0);
    ASSERT_EQ(tblob_ggml_quantize(type, TBLOB_DTYPE_BF16, bh.data(), bh.size() * 2, rows, cols, nullptr, got.data(),
                                  got.size(), nullptr, nullptr),
              TBLOB_OK);
    EXPECT_EQ(got, want) << type;
    std::vector<uint8_t> raw(xb.size() * 4 + 1);
    std::memcpy(raw.data() + 1, xb.data(), xb.size() * 4);
    ASSERT_EQ(tblob_ggml_quantize(type, TBLOB_DTYPE_F32, raw.data() + 1, xb.size() * 4, rows, cols, nullptr, got.data(),
                                  got.size(), nullptr, nullptr),
              TBLOB_OK);
    EXPECT_EQ(got, want) << type << " unaligned";
  }
}

TEST(GgmlQuantize, HandValues) {
  // Q8_0 of 0, 1, ..., 31: d = 31/127 (f16 0x33D0 = 0.244140625... rounded from 0.24409449),
  // codes round(j * 127/31): 0 4 8 12 16 20 25 29 33 37 41 45 49 53 57 61 66 70 74 78 82 86 90
  // 94 98 102 107 111 115 119 123 127 (26 * 4.0967741 = 106.52).
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(j);
  std::vector<uint8_t> out;
  ASSERT_EQ(quantize(8, x, 1, 32, nullptr, &out), TBLOB_OK);
  const uint8_t want[34] = {0xD0, 0x33, 0,  4,  8,  12, 16, 20, 25, 29, 33,  37,  41,  45,  49,  53,  57,
                            61,   66,   70, 74, 78, 82, 86, 90, 94, 98, 102, 107, 111, 115, 119, 123, 127};
  EXPECT_EQ(std::memcmp(out.data(), want, 34), 0);
  // Q4_0 of a block whose largest magnitude is -8: d = -8 / -8 = 1 (f16 0x3C00); code = x + 8.
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(j % 16) - 8.0f;
  ASSERT_EQ(quantize(2, x, 1, 32, nullptr, &out), TBLOB_OK);
  EXPECT_EQ(out[0], 0x00);
  EXPECT_EQ(out[1], 0x3C);
  for (int j = 0; j < 16; ++j) EXPECT_EQ(out[2 + j], (j % 16) | ((j % 16) << 4)) << j;
}

}  // namespace
