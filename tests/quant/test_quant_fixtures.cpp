// tblob_quant_quantize on the committed MLX fixtures (tests/data/quant, written from
// mx.quantize of mlx 0.32.4 by tests/quant/mlx_quant_oracle.py --write-fixtures), so builds
// that cannot run MLX (arm64 under qemu, i386) check the same bytes; plus hand-computed
// block FP8 and the statuses of the quantizer's edge cases.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tensorblob.h"

#ifndef TBLOB_QUANT_DATA_DIR
#error "TBLOB_QUANT_DATA_DIR must name tests/data/quant"
#endif

namespace {

std::vector<uint8_t> read_all(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

uint32_t src_size(uint32_t dt) { return dt == TBLOB_DTYPE_F32 ? 4u : 2u; }

struct Quantized {
  tblob_status status = TBLOB_OK;
  std::string message;
  tblob_quant_desc desc = TBLOB_QUANT_DESC_INIT;
  std::vector<uint8_t> data, scales, biases;
  float global = 0.0f;
};

// Sizes the descriptor, allocates its buffers and quantizes src into them.
void quantize(Quantized *q, uint32_t src_dtype, const void *src, size_t src_bytes, uint32_t threads = 1) {
  tblob_diag diag = TBLOB_DIAG_INIT;
  q->status = tblob_quant_size(&q->desc, &diag);
  if (q->status != TBLOB_OK) {
    q->message = diag.message;
    return;
  }
  q->data.assign(q->desc.data_bytes, 0xAA);
  q->scales.assign(q->desc.scales_bytes, 0xAA);
  q->biases.assign(q->desc.biases_bytes, 0xAA);
  q->desc.data = q->data.empty() ? nullptr : q->data.data();
  q->desc.scales = q->scales.empty() ? nullptr : q->scales.data();
  q->desc.biases = q->biases.empty() ? nullptr : q->biases.data();
  q->desc.global_scale = q->desc.global_scale_bytes ? &q->global : nullptr;
  tblob_quantize_options opt = TBLOB_QUANTIZE_OPTIONS_INIT;
  opt.threads = threads;
  q->status = tblob_quant_quantize(&q->desc, src_dtype, src, src_bytes, &opt, &diag);
  q->message = diag.message;
}

TEST(QuantFixtures, EveryCaseEqualsMlx) {
  const std::string dir = TBLOB_QUANT_DATA_DIR;
  const std::vector<uint8_t> blob = read_all(dir + "/cases.bin");
  std::ifstream manifest(dir + "/manifest.txt");
  ASSERT_TRUE(manifest.good());
  ASSERT_FALSE(blob.empty());
  std::string line;
  size_t pos = 0, cases = 0;
  while (std::getline(manifest, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string name, ghex;
    uint32_t scheme, bits, group, src_dt, scale_dt, gmode;
    uint64_t rows, cols;
    ASSERT_TRUE(static_cast<bool>(in >> name >> scheme >> bits >> group >> src_dt >> scale_dt >> gmode >> ghex >>
                                  rows >> cols))
        << line;
    Quantized q;
    q.desc.scheme = scheme;
    q.desc.bits = bits;
    q.desc.group_size = group;
    q.desc.scale_dtype = scale_dt;
    q.desc.bias_dtype = scheme == TBLOB_QUANT_MLX_AFFINE ? scale_dt : 0;
    q.desc.global_scale_mode = gmode;
    q.desc.rows = rows;
    q.desc.cols = cols;
    uint32_t gbits = 0;
    for (int k = 0; k < 4; ++k)  // little-endian hex of the f32
      gbits |= static_cast<uint32_t>(std::stoul(ghex.substr(2 * k, 2), nullptr, 16)) << (8 * k);
    std::memcpy(&q.global, &gbits, 4);
    const size_t src_bytes = rows * cols * src_size(src_dt);
    ASSERT_LE(pos + src_bytes, blob.size()) << name;
    const uint8_t *src = blob.data() + pos;
    pos += src_bytes;
    quantize(&q, src_dt, src, src_bytes);
    ASSERT_EQ(q.status, TBLOB_OK) << name << ": " << q.message;
    for (const std::vector<uint8_t> *out : {&q.data, &q.scales, &q.biases}) {
      ASSERT_LE(pos + out->size(), blob.size()) << name;
      if (!out->empty()) {  // no biases: data() may be NULL, which memcmp must not get
        EXPECT_EQ(0, std::memcmp(out->data(), blob.data() + pos, out->size())) << name;
      }
      pos += out->size();
    }
    // Four threads write the same bytes.
    Quantized q4;
    q4.desc = q.desc;
    q4.global = q.global;
    quantize(&q4, src_dt, src, src_bytes, 4);
    EXPECT_EQ(q4.data, q.data) << name;
    EXPECT_EQ(q4.scales, q.scales) << name;
    ++cases;
  }
  EXPECT_EQ(pos, blob.size());
  EXPECT_GT(cases, 150u);
}

// Block FP8, values worked by hand: amax 896 -> scale 896 / 448 = 2; 3 / 2 = 1.5 (E4M3 0x3C),
// -896 / 2 = -448 (0xFE), 1 / 2 = 0.5 (0x30), 2^-10 / 2 = 2^-11 below half the smallest
// subnormal 2^-9 (0x00), 0.01 / 2 = 0.005 = 2.56 * 2^-9 -> 3 * 2^-9 (0x03), -0 (0x80).
TEST(QuantBlockFp8, HandValues) {
  const float x[6] = {3.0f, -896.0f, 1.0f, std::ldexp(1.0f, -10), 0.01f, -0.0f};
  Quantized q;
  q.desc.scheme = TBLOB_QUANT_BLOCK_FP8;
  q.desc.group_size = 128;
  q.desc.scale_dtype = TBLOB_DTYPE_F32;
  q.desc.rows = 1;
  q.desc.cols = 6;
  quantize(&q, TBLOB_DTYPE_F32, x, sizeof(x));
  ASSERT_EQ(q.status, TBLOB_OK) << q.message;
  EXPECT_EQ(q.data, (std::vector<uint8_t>{0x3C, 0xFE, 0x30, 0x00, 0x03, 0x80}));
  float s;
  std::memcpy(&s, q.scales.data(), 4);
  EXPECT_EQ(s, 2.0f);
  // A zero block gets scale 1; a 2 x 2 tensor with G = 1 has four blocks.
  const float y[4] = {0.0f, 448.0f, -1.0f, 5.0f};
  Quantized b;
  b.desc = q.desc;
  b.desc.group_size = 1;
  b.desc.rows = 2;
  b.desc.cols = 2;
  quantize(&b, TBLOB_DTYPE_F32, y, sizeof(y));
  ASSERT_EQ(b.status, TBLOB_OK) << b.message;
  EXPECT_EQ(b.data, (std::vector<uint8_t>{0x00, 0x7E, 0xFE, 0x7E}));
  float sc[4];
  std::memcpy(sc, b.scales.data(), 16);
  EXPECT_EQ(sc[0], 1.0f);
  EXPECT_EQ(sc[1], 1.0f);
  EXPECT_EQ(sc[2], 1.0f / 448.0f);
  EXPECT_EQ(sc[3], 5.0f / 448.0f);
}

Quantized affine(uint64_t cols, uint32_t group, const std::vector<float> &x, const tblob_quantize_options *opt = nullptr) {
  Quantized q;
  q.desc.scheme = TBLOB_QUANT_MLX_AFFINE;
  q.desc.bits = 4;
  q.desc.group_size = group;
  q.desc.scale_dtype = q.desc.bias_dtype = TBLOB_DTYPE_F32;
  q.desc.rows = x.size() / cols;
  q.desc.cols = cols;
  if (!opt) {
    quantize(&q, TBLOB_DTYPE_F32, x.data(), x.size() * 4);
    return q;
  }
  tblob_diag diag = TBLOB_DIAG_INIT;
  q.status = tblob_quant_size(&q.desc, &diag);
  q.data.resize(q.desc.data_bytes);
  q.scales.resize(q.desc.scales_bytes);
  q.biases.resize(q.desc.biases_bytes);
  q.desc.data = q.data.data();
  q.desc.scales = q.scales.data();
  q.desc.biases = q.biases.data();
  q.status = tblob_quant_quantize(&q.desc, TBLOB_DTYPE_F32, x.data(), x.size() * 4, opt, &diag);
  q.message = diag.message;
  return q;
}

// docs/quantize.md: a descriptor over rows [a, b) of the source writes exactly those rows'
// bytes (block FP8: a a multiple of G), so a tensor can be quantized in pieces.
TEST(QuantPieces, RowRangesEqualTheWhole) {
  const uint64_t rows = 300, cols = 256;
  std::vector<float> x(rows * cols);
  uint32_t s = 7;
  for (float &v : x) {
    s = s * 1103515245u + 12345u;
    v = static_cast<float>(static_cast<int32_t>(s >> 8) % 20001 - 10000) * 1e-3f;
  }
  struct Case {
    uint32_t scheme, bits, group, sdt;
    uint64_t cut;
  } cases[] = {{TBLOB_QUANT_MLX_AFFINE, 5, 64, TBLOB_DTYPE_BF16, 77},
               {TBLOB_QUANT_MXFP4, 0, 32, TBLOB_DTYPE_F8_E8M0, 1},
               {TBLOB_QUANT_NVFP4, 0, 16, TBLOB_DTYPE_F8_E4M3, 299},
               {TBLOB_QUANT_BLOCK_FP8, 0, 128, TBLOB_DTYPE_F32, 256}};
  for (const Case &c : cases) {
    Quantized whole, a, b;
    for (Quantized *q : {&whole, &a, &b}) {
      q->desc.scheme = c.scheme;
      q->desc.bits = c.bits;
      q->desc.group_size = c.group;
      q->desc.scale_dtype = c.sdt;
      q->desc.bias_dtype = c.scheme == TBLOB_QUANT_MLX_AFFINE ? c.sdt : 0;
      q->desc.cols = cols;
    }
    whole.desc.rows = rows;
    a.desc.rows = c.cut;
    b.desc.rows = rows - c.cut;
    quantize(&whole, TBLOB_DTYPE_F32, x.data(), x.size() * 4);
    quantize(&a, TBLOB_DTYPE_F32, x.data(), c.cut * cols * 4);
    quantize(&b, TBLOB_DTYPE_F32, x.data() + c.cut * cols, (rows - c.cut) * cols * 4);
    ASSERT_EQ(whole.status, TBLOB_OK) << whole.message;
    ASSERT_EQ(a.status, TBLOB_OK) << a.message;
    ASSERT_EQ(b.status, TBLOB_OK) << b.message;
    std::vector<uint8_t> data = a.data, scales = a.scales, biases = a.biases;
    data.insert(data.end(), b.data.begin(), b.data.end());
    scales.insert(scales.end(), b.scales.begin(), b.scales.end());
    biases.insert(biases.end(), b.biases.begin(), b.biases.end());
    EXPECT_EQ(data, whole.data) << c.scheme;
    EXPECT_EQ(scales, whole.scales) << c.scheme;
    EXPECT_EQ(biases, whole.biases) << c.scheme;
  }
}

TEST(QuantStatuses, EdgeCases) {
  // cols not a multiple of the group: a status, never a partial group.
  EXPECT_EQ(affine(48, 32, std::vector<float>(96, 1.0f)).status, TBLOB_E_QUANT_GROUP_SIZE);
  // MLX's group sizes only.
  EXPECT_EQ(affine(64, 16, std::vector<float>(64, 1.0f)).status, TBLOB_E_QUANT_GROUP_SIZE);
  // NaN and Inf: refused, the message names row and column.
  std::vector<float> x(128, 0.5f);
  x[70] = NAN;
  Quantized n = affine(64, 32, x);
  EXPECT_EQ(n.status, TBLOB_E_QUANT_NONFINITE);
  EXPECT_NE(n.message.find("row 1, column 6"), std::string::npos) << n.message;
  x[70] = 0.5f;
  x[3] = -INFINITY;
  EXPECT_EQ(affine(64, 32, x).status, TBLOB_E_QUANT_NONFINITE);
  // The affine range overflows f32.
  std::vector<float> big(32, 3e38f);
  big[1] = -3e38f;
  EXPECT_EQ(affine(32, 32, big).status, TBLOB_E_QUANT_VALUE);
  // Equal huge values: the scale is the eps floor, edge / scale overflows, the scale becomes
  // -0.0 and every code is 0 / -0.0: code 0, as mx.quantize writes on x86 and arm64 (the oracle
  // test's huge_equal case), with no undefined conversion on the way (fuzz_quant_mlx found it).
  Quantized h = affine(32, 32, std::vector<float>(32, 3.39e38f));
  ASSERT_EQ(h.status, TBLOB_OK) << h.message;
  for (uint8_t c : h.data) EXPECT_EQ(c, 0u);
  // No scheme here takes importance weights.
  std::vector<float> imp(64, 1.0f);
  tblob_quantize_options opt = TBLOB_QUANTIZE_OPTIONS_INIT;
  opt.importance = imp.data();
  opt.importance_count = imp.size();
  EXPECT_EQ(affine(64, 32, std::vector<float>(64, 1.0f), &opt).status, TBLOB_E_UNSUPPORTED);
  // Plain schemes have no quantizer.
  Quantized p;
  p.desc.scheme = TBLOB_QUANT_F8_E4M3;
  p.desc.rows = 1;
  p.desc.cols = 4;
  const float v[4] = {1, 2, 3, 4};
  quantize(&p, TBLOB_DTYPE_F32, v, sizeof(v));
  EXPECT_EQ(p.status, TBLOB_E_UNSUPPORTED);
  // Source dtype and length.
  Quantized s;
  s.desc.scheme = TBLOB_QUANT_MXFP8;
  s.desc.group_size = 32;
  s.desc.scale_dtype = TBLOB_DTYPE_F8_E8M0;
  s.desc.rows = 1;
  s.desc.cols = 32;
  std::vector<float> w(32, 1.0f);
  quantize(&s, TBLOB_DTYPE_F64, w.data(), w.size() * 4);
  EXPECT_EQ(s.status, TBLOB_E_DTYPE);
  quantize(&s, TBLOB_DTYPE_F32, w.data(), w.size() * 4 - 1);
  EXPECT_EQ(s.status, TBLOB_E_BUFFER_TOO_SMALL);
  // f32 subnormals below the E8M0 range (MLX wraps the exponent): refused.
  std::vector<float> sub(32, 1e-40f);
  quantize(&s, TBLOB_DTYPE_F32, sub.data(), sub.size() * 4);
  EXPECT_EQ(s.status, TBLOB_E_QUANT_VALUE);
  // nvfp4 with Ollama's multiplier convention: no quantizer; a zero MLX global scale: refused.
  Quantized g;
  g.desc.scheme = TBLOB_QUANT_NVFP4;
  g.desc.group_size = 16;
  g.desc.scale_dtype = TBLOB_DTYPE_F8_E4M3;
  g.desc.rows = 1;
  g.desc.cols = 32;
  g.desc.global_scale_mode = TBLOB_GLOBAL_SCALE_MULTIPLIER;
  g.global = 1.0f;
  quantize(&g, TBLOB_DTYPE_F32, w.data(), w.size() * 4);
  EXPECT_EQ(g.status, TBLOB_E_UNSUPPORTED);
  g.desc.global_scale_mode = TBLOB_GLOBAL_SCALE_MLX_AMAX;
  g.global = 0.0f;
  quantize(&g, TBLOB_DTYPE_F32, w.data(), w.size() * 4);
  EXPECT_EQ(g.status, TBLOB_E_QUANT_GLOBAL_SCALE);
  // tblob_quant_size: the lengths tblob_quant_dequantize checks.
  tblob_quant_desc d = TBLOB_QUANT_DESC_INIT;
  d.scheme = TBLOB_QUANT_MLX_AFFINE;
  d.bits = 3;
  d.group_size = 64;
  d.scale_dtype = d.bias_dtype = TBLOB_DTYPE_BF16;
  d.rows = 5;
  d.cols = 128;
  ASSERT_EQ(tblob_quant_size(&d, nullptr), TBLOB_OK);
  EXPECT_EQ(d.data_bytes, 5u * 128 * 3 / 8);
  EXPECT_EQ(d.scales_bytes, 5u * 2 * 2);
  EXPECT_EQ(d.biases_bytes, 5u * 2 * 2);
  EXPECT_EQ(d.global_scale_bytes, 0u);
  EXPECT_EQ(tblob_quant_size(nullptr, nullptr), TBLOB_E_INVALID_ARGUMENT);
}

}  // namespace
