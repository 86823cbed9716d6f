// The public dequantization API (include/tensorblob.h): tblob_quant_dequantize on hand-made
// descriptors (section 8 vectors of reference/ollama_mlx.md, block FP8), every descriptor
// status through both APIs, buffer sizes, row ranges, kernel control, and the MLX fixtures of
// tests/data/dequant opened with tblob_model_open as Ollama combined blobs, which must
// dequantize through tblob_tensor_dequantize to MLX's expected outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tensorblob.h"

namespace {

std::string dequant_dir() {
  if (const char *e = std::getenv("TBLOB_DEQUANT_DATA_DIR")) return e;
#ifdef TBLOB_DEQUANT_DATA_DIR
  return TBLOB_DEQUANT_DATA_DIR;
#else
  return "tests/data/dequant";
#endif
}

float f32_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
bool f32_nan(uint32_t u) { return (u & 0x7FFFFFFFu) > 0x7F800000u; }
bool f16_nan(uint16_t h) { return (h & 0x7FFFu) > 0x7C00u; }
bool bf16_nan(uint16_t h) { return (h & 0x7FFFu) > 0x7F80u; }

std::vector<float> raw_f32(const tblob_quant_desc &d, tblob_status *st = nullptr) {
  std::vector<float> out(static_cast<size_t>(d.rows * d.cols));
  tblob_diag diag = TBLOB_DIAG_INIT;
  const tblob_status s = tblob_quant_dequantize(&d, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, out.data(),
                                           out.size() * 4, &diag);
  if (st) *st = s;
  else EXPECT_EQ(s, TBLOB_OK) << diag.message;
  return out;
}

// A valid affine 4-bit, group 32, bf16-scaled descriptor of 2 x 64 (codes = column % 16).
struct AffineFixture {
  std::vector<uint32_t> words;
  std::vector<uint16_t> scales, biases;
  tblob_quant_desc d = TBLOB_QUANT_DESC_INIT;
  AffineFixture() {
    const uint64_t rows = 2, cols = 64;
    words.assign(rows * cols / 8, 0);
    for (uint64_t r = 0; r < rows; ++r)
      for (uint64_t c = 0; c < cols; ++c)
        words[(r * cols + c) / 8] |= static_cast<uint32_t>(c % 16) << (4 * (c % 8));
    scales.assign(rows * 2, 0x3F00);  // 0.5
    biases.assign(rows * 2, 0xBF80);  // -1
    d.scheme = TBLOB_QUANT_MLX_AFFINE;
    d.bits = 4;
    d.group_size = 32;
    d.scale_dtype = TBLOB_DTYPE_BF16;
    d.bias_dtype = TBLOB_DTYPE_BF16;
    d.special = TBLOB_SPECIAL_MLX;
    d.rows = rows;
    d.cols = cols;
    d.data = words.data();
    d.data_bytes = words.size() * 4;
    d.scales = scales.data();
    d.scales_bytes = scales.size() * 2;
    d.biases = biases.data();
    d.biases_bytes = biases.size() * 2;
  }
};

tblob_status raw_status(const tblob_quant_desc &d, tblob_diag *diag, uint32_t out = TBLOB_DTYPE_F32) {
  std::vector<uint8_t> buf(1 << 16);
  return tblob_quant_dequantize(&d, out, 0, TBLOB_ALL_ROWS, buf.data(), buf.size(), diag);
}

// ---------------------------------------------------------------------------------------------
TEST(DequantApi, StatusesArePinned) {
  struct {
    tblob_status s;
    int v;
    const char *name;
  } k[] = {
      {TBLOB_E_QUANT_SCHEME, -70, "TBLOB_E_QUANT_SCHEME"},
      {TBLOB_E_QUANT_GROUP_SIZE, -71, "TBLOB_E_QUANT_GROUP_SIZE"},
      {TBLOB_E_QUANT_PACKING, -72, "TBLOB_E_QUANT_PACKING"},
      {TBLOB_E_QUANT_DATA_SIZE, -73, "TBLOB_E_QUANT_DATA_SIZE"},
      {TBLOB_E_QUANT_SCALE_DTYPE, -74, "TBLOB_E_QUANT_SCALE_DTYPE"},
      {TBLOB_E_QUANT_SCALE_SIZE, -75, "TBLOB_E_QUANT_SCALE_SIZE"},
      {TBLOB_E_QUANT_BIAS_DTYPE, -76, "TBLOB_E_QUANT_BIAS_DTYPE"},
      {TBLOB_E_QUANT_BIAS_SIZE, -77, "TBLOB_E_QUANT_BIAS_SIZE"},
      {TBLOB_E_QUANT_GLOBAL_SCALE, -78, "TBLOB_E_QUANT_GLOBAL_SCALE"},
      {TBLOB_E_DEQUANT_OUT_DTYPE, -79, "TBLOB_E_DEQUANT_OUT_DTYPE"},
      {TBLOB_E_KERNEL_UNAVAILABLE, -80, "TBLOB_E_KERNEL_UNAVAILABLE"},
      {TBLOB_E_NOT_DEQUANTIZABLE, -81, "TBLOB_E_NOT_DEQUANTIZABLE"},
      {TBLOB_E_QUANT_NONFINITE, -87, "TBLOB_E_QUANT_NONFINITE"},
      {TBLOB_E_QUANT_IMPORTANCE, -88, "TBLOB_E_QUANT_IMPORTANCE"},
  };
  for (const auto &e : k) {
    EXPECT_EQ(e.s, e.v);
    EXPECT_STREQ(tblob_status_name(e.s), e.name);
    EXPECT_STRNE(tblob_status_message(e.s), "unknown status");
  }
  EXPECT_STREQ(tblob_quant_scheme_name(TBLOB_QUANT_BLOCK_FP8), "block-fp8");
  EXPECT_STREQ(tblob_quant_scheme_name(TBLOB_QUANT_NONE), "none");
  EXPECT_EQ(tblob_quant_scheme_name(99), nullptr);
}

// Section 8 hand vectors through the public descriptor.
TEST(DequantApi, RawHandVectors) {
  {  // 1. affine b4 g32
    const uint32_t w[4] = {0x76543210u, 0xFEDCBA98u, 0u, 0xFFFFFFFFu};
    const uint16_t s = 0x3F00, b = 0xBF80;
    tblob_quant_desc d = TBLOB_QUANT_DESC_INIT;
    d.scheme = TBLOB_QUANT_MLX_AFFINE;
    d.bits = 4;
    d.group_size = 32;
    d.scale_dtype = d.bias_dtype = TBLOB_DTYPE_BF16;
    d.rows = 1;
    d.cols = 32;
    d.data = w;
    d.data_bytes = 16;
    d.scales = &s;
    d.scales_bytes = 2;
    d.biases = &b;
    d.biases_bytes = 2;
    const std::vector<float> v = raw_f32(d);
    for (int i = 0; i < 16; ++i) EXPECT_EQ(v[i], -1.0f + 0.5f * i) << i;
    for (int i = 16; i < 24; ++i) EXPECT_EQ(v[i], -1.0f);
    for (int i = 24; i < 32; ++i) EXPECT_EQ(v[i], 6.5f);
  }
  {  // 4. mxfp4 and 6. mxfp8
    uint32_t w4[4] = {0xF7A18290u, 0, 0, 0};
    const uint8_t s4 = 0x80;
    tblob_quant_desc d = TBLOB_QUANT_DESC_INIT;
    d.scheme = TBLOB_QUANT_MXFP4;
    d.group_size = 32;
    d.scale_dtype = TBLOB_DTYPE_F8_E8M0;
    d.special = TBLOB_SPECIAL_MLX;
    d.rows = 1;
    d.cols = 32;
    d.data = w4;
    d.data_bytes = 16;
    d.scales = &s4;
    d.scales_bytes = 1;
    const float e4[8] = {0, -1, 2, -0.0f, 1, -2, 12, -12};
    std::vector<float> v = raw_f32(d);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(bits_of(v[i]), bits_of(e4[i])) << i;
    uint32_t w8[8] = {0xC0B83800u, 0, 0, 0, 0, 0, 0, 0};
    const uint8_t s8 = 0x7E;
    d.scheme = TBLOB_QUANT_MXFP8;
    d.data = w8;
    d.data_bytes = 32;
    d.scales = &s8;
    v = raw_f32(d);
    EXPECT_EQ(v[0], 0.0f);
    EXPECT_EQ(v[1], 0.5f);
    EXPECT_EQ(v[2], -0.5f);
    EXPECT_EQ(v[3], -1.0f);
  }
  {  // 5. nvfp4, with and without Ollama's global multiplier
    uint32_t w[2] = {0xF7A18290u, 0};
    const uint8_t s = 0x3C;
    const float g = 0.01f;
    tblob_quant_desc d = TBLOB_QUANT_DESC_INIT;
    d.scheme = TBLOB_QUANT_NVFP4;
    d.group_size = 16;
    d.scale_dtype = TBLOB_DTYPE_F8_E4M3;
    d.rows = 1;
    d.cols = 16;
    d.data = w;
    d.data_bytes = 8;
    d.scales = &s;
    d.scales_bytes = 1;
    std::vector<float> v = raw_f32(d);
    EXPECT_EQ(v[6], 9.0f);
    EXPECT_EQ(v[1], -0.75f);
    d.global_scale_mode = TBLOB_GLOBAL_SCALE_MULTIPLIER;
    d.global_scale = &g;
    d.global_scale_bytes = 4;
    v = raw_f32(d);
    EXPECT_EQ(bits_of(v[6]), bits_of(0.0899999961f));
  }
}

TEST(DequantApi, RawBlockFp8) {
  // 3 x 5 codes, 2 x 2 blocks (partial at the edges): 2 x 3 scales.
  std::vector<uint8_t> codes(15, 0x38);  // 1.0
  codes[0] = 0x7F;                       // NaN in OCP, 480 with MAX_FINITE
  codes[14] = 0x40;                      // 2.0
  const float scales[6] = {1, 2, 4, 8, 16, 32};
  tblob_quant_desc d = TBLOB_QUANT_DESC_INIT;
  d.scheme = TBLOB_QUANT_BLOCK_FP8;
  d.group_size = 2;
  d.scale_dtype = TBLOB_DTYPE_F32;
  d.rows = 3;
  d.cols = 5;
  d.data = codes.data();
  d.data_bytes = 15;
  d.scales = scales;
  d.scales_bytes = sizeof(scales);
  std::vector<float> v = raw_f32(d);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 5; ++c) {
      if (r == 0 && c == 0) {
        EXPECT_TRUE(std::isnan(v[0]));
        EXPECT_EQ(bits_of(v[0]), 0x7FC00000u);  // canonical NaN
        continue;
      }
      const float e = (r == 2 && c == 4 ? 2.0f : 1.0f) * scales[(r / 2) * 3 + c / 2];
      EXPECT_EQ(v[r * 5 + c], e) << r << "," << c;
    }
  d.special = TBLOB_SPECIAL_E4M3_MAX_FINITE;
  v = raw_f32(d);
  EXPECT_EQ(v[0], 480.0f);
  // bf16 output: one rounding of the f32 product.
  std::vector<uint16_t> h(15);
  ASSERT_EQ(tblob_quant_dequantize(&d, TBLOB_DTYPE_BF16, 1, 3, h.data(), 20, nullptr), TBLOB_OK);
  EXPECT_EQ(h[0], 0x3F80);  // row 1, col 0: 1.0 * 1
  // Statuses.
  tblob_diag diag = TBLOB_DIAG_INIT;
  tblob_quant_desc bad = d;
  bad.scales_bytes = 20;
  EXPECT_EQ(raw_status(bad, &diag), TBLOB_E_QUANT_SCALE_SIZE);
  EXPECT_NE(std::strstr(diag.message, "scales"), nullptr) << diag.message;
  bad = d;
  bad.scale_dtype = TBLOB_DTYPE_U8;
  EXPECT_EQ(raw_status(bad, &diag), TBLOB_E_QUANT_SCALE_DTYPE);
  bad = d;
  bad.group_size = 0;
  EXPECT_EQ(raw_status(bad, &diag), TBLOB_E_QUANT_GROUP_SIZE);
  bad = d;
  bad.bias_dtype = TBLOB_DTYPE_F32;
  EXPECT_EQ(raw_status(bad, &diag), TBLOB_E_QUANT_BIAS_DTYPE);
  bad = d;
  bad.data_bytes = 14;
  EXPECT_EQ(raw_status(bad, &diag), TBLOB_E_QUANT_DATA_SIZE);
  bad = d;
  bad.bits = 4;
  EXPECT_EQ(raw_status(bad, &diag), TBLOB_E_QUANT_SCHEME);
}

TEST(DequantApi, RawBadDescriptors) {
  struct Case {
    const char *what;
    void (*edit)(tblob_quant_desc &);
    tblob_status want;
    const char *mention;  // a word the message must contain
  };
  static const Case cases[] = {
      {"group size not dividing the row", [](tblob_quant_desc &d) { d.group_size = 48; },
       TBLOB_E_QUANT_GROUP_SIZE, "does not divide"},
      {"group size 0", [](tblob_quant_desc &d) { d.group_size = 0; }, TBLOB_E_QUANT_GROUP_SIZE, "0"},
      {"scale tensor too short", [](tblob_quant_desc &d) { d.scales_bytes -= 2; },
       TBLOB_E_QUANT_SCALE_SIZE, "scales are 6 bytes"},
      {"wrong scale dtype", [](tblob_quant_desc &d) { d.scale_dtype = d.bias_dtype = TBLOB_DTYPE_U8; },
       TBLOB_E_QUANT_SCALE_DTYPE, "U8"},
      {"odd packing (3 bits x 64 is not whole words? it is; 3 x 40 is not)",
       [](tblob_quant_desc &d) {
         d.bits = 3;
         d.cols = 40;
         d.group_size = 20;
       },
       TBLOB_E_QUANT_PACKING, "32-bit words"},
      {"data too long", [](tblob_quant_desc &d) { d.data_bytes += 4; }, TBLOB_E_QUANT_DATA_SIZE, "need 64"},
      {"bias dtype differs", [](tblob_quant_desc &d) { d.bias_dtype = TBLOB_DTYPE_F16; },
       TBLOB_E_QUANT_BIAS_DTYPE, "bias"},
      {"bias too short", [](tblob_quant_desc &d) { d.biases_bytes = 2; }, TBLOB_E_QUANT_BIAS_SIZE, "biases"},
      {"global scale on affine",
       [](tblob_quant_desc &d) {
         static const float g = 1;
         d.global_scale_mode = TBLOB_GLOBAL_SCALE_MULTIPLIER;
         d.global_scale = &g;
         d.global_scale_bytes = 4;
       },
       TBLOB_E_QUANT_GLOBAL_SCALE, "nvfp4"},
      {"unknown scheme", [](tblob_quant_desc &d) { d.scheme = 99; }, TBLOB_E_QUANT_SCHEME, "99"},
      {"7 bits", [](tblob_quant_desc &d) { d.bits = 7; }, TBLOB_E_QUANT_SCHEME, "bits 7"},
      {"unknown special bit", [](tblob_quant_desc &d) { d.special = 8; }, TBLOB_E_QUANT_SCHEME, "special"},
      {"mxfp4 with affine scales", [](tblob_quant_desc &d) { d.scheme = TBLOB_QUANT_MXFP4; d.bits = 0; },
       TBLOB_E_QUANT_SCALE_DTYPE, "F8_E8M0"},
      {"NULL data", [](tblob_quant_desc &d) { d.data = nullptr; }, TBLOB_E_INVALID_ARGUMENT, "NULL"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.what);
    AffineFixture f;
    c.edit(f.d);
    tblob_diag diag = TBLOB_DIAG_INIT;
    EXPECT_EQ(raw_status(f.d, &diag), c.want);
    EXPECT_EQ(diag.status, c.want);
    EXPECT_NE(std::strstr(diag.message, c.mention), nullptr) << diag.message;
  }
  AffineFixture f;
  tblob_diag diag = TBLOB_DIAG_INIT;
  EXPECT_EQ(raw_status(f.d, &diag, TBLOB_DTYPE_F64), TBLOB_E_DEQUANT_OUT_DTYPE);
  EXPECT_EQ(raw_status(f.d, &diag, TBLOB_DTYPE_U8), TBLOB_E_DEQUANT_OUT_DTYPE);
  std::vector<float> out(128);
  EXPECT_EQ(tblob_quant_dequantize(nullptr, TBLOB_DTYPE_F32, 0, 1, out.data(), 512, &diag), TBLOB_E_INVALID_ARGUMENT);
  tblob_quant_desc small = f.d;
  small.struct_size = 8;
  EXPECT_EQ(tblob_quant_dequantize(&small, TBLOB_DTYPE_F32, 0, 1, out.data(), 512, &diag), TBLOB_E_INVALID_ARGUMENT);
  // A valid descriptor decodes and a NULL diag is fine.
  EXPECT_EQ(tblob_quant_dequantize(&f.d, TBLOB_DTYPE_F32, 0, 2, out.data(), 512, nullptr), TBLOB_OK);
  EXPECT_EQ(out[0], -1.0f);
  EXPECT_EQ(out[15], 6.5f);
}

TEST(DequantApi, BufferSizesAndRowRanges) {
  AffineFixture f;
  const size_t row_f32 = 64 * 4, row_16 = 64 * 2;
  std::vector<uint8_t> buf(4 * row_f32, 0x5A);
  tblob_diag diag = TBLOB_DIAG_INIT;
  // Exact and larger buffers; bytes past the output stay untouched.
  EXPECT_EQ(tblob_quant_dequantize(&f.d, TBLOB_DTYPE_F32, 0, 2, buf.data(), 2 * row_f32, &diag), TBLOB_OK);
  EXPECT_EQ(tblob_quant_dequantize(&f.d, TBLOB_DTYPE_BF16, 0, 2, buf.data(), buf.size(), &diag), TBLOB_OK);
  EXPECT_EQ(buf[2 * row_16], 0x00);  // from the f32 call before
  for (size_t i = 2 * row_f32; i < buf.size(); ++i) ASSERT_EQ(buf[i], 0x5A) << i;
  // One byte short.
  EXPECT_EQ(tblob_quant_dequantize(&f.d, TBLOB_DTYPE_F32, 0, 2, buf.data(), 2 * row_f32 - 1, &diag),
            TBLOB_E_BUFFER_TOO_SMALL);
  EXPECT_NE(std::strstr(diag.message, "need 512 bytes"), nullptr) << diag.message;
  EXPECT_EQ(tblob_quant_dequantize(&f.d, TBLOB_DTYPE_F16, 1, 2, buf.data(), row_16 - 1, &diag),
            TBLOB_E_BUFFER_TOO_SMALL);
  // Ranges.
  EXPECT_EQ(tblob_quant_dequantize(&f.d, TBLOB_DTYPE_F32, 2, 1, buf.data(), buf.size(), &diag), TBLOB_E_RANGE);
  EXPECT_EQ(tblob_quant_dequantize(&f.d, TBLOB_DTYPE_F32, 0, 3, buf.data(), buf.size(), &diag), TBLOB_E_RANGE);
  EXPECT_NE(std::strstr(diag.message, "rows [0, 3)"), nullptr) << diag.message;
  EXPECT_EQ(tblob_quant_dequantize(&f.d, TBLOB_DTYPE_F32, 2, 2, nullptr, 0, &diag), TBLOB_OK);  // empty
  EXPECT_EQ(tblob_quant_dequantize(&f.d, TBLOB_DTYPE_F32, 0, 1, nullptr, 1024, &diag), TBLOB_E_INVALID_ARGUMENT);
  // Row 1 alone equals the second half of the whole tensor.
  std::vector<float> all(128), one(64);
  ASSERT_EQ(tblob_quant_dequantize(&f.d, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, all.data(), 512, nullptr), TBLOB_OK);
  ASSERT_EQ(tblob_quant_dequantize(&f.d, TBLOB_DTYPE_F32, 1, 2, one.data(), 256, nullptr), TBLOB_OK);
  EXPECT_EQ(0, std::memcmp(one.data(), all.data() + 64, 256));
}

TEST(DequantApi, KernelControl) {
  ASSERT_NE(tblob_kernel_active(), nullptr);
  tblob_diag diag = TBLOB_DIAG_INIT;
  ASSERT_EQ(tblob_kernel_set("scalar", &diag), TBLOB_OK) << diag.message;
  EXPECT_STREQ(tblob_kernel_active(), "scalar");
  AffineFixture f;
  std::vector<float> ref(128), got(128);
  ASSERT_EQ(tblob_quant_dequantize(&f.d, TBLOB_DTYPE_F32, 0, 2, ref.data(), 512, nullptr), TBLOB_OK);
  EXPECT_EQ(tblob_kernel_set("no-such-kernel", &diag), TBLOB_E_KERNEL_UNAVAILABLE);
  EXPECT_EQ(diag.status, TBLOB_E_KERNEL_UNAVAILABLE);
  EXPECT_NE(std::strstr(diag.message, "no-such-kernel"), nullptr) << diag.message;
  EXPECT_STREQ(tblob_kernel_active(), "scalar");  // unchanged
  for (const char *k : {"avx2", "avx512", "neon"}) {
    const tblob_status s = tblob_kernel_set(k, &diag);
    if (s == TBLOB_E_KERNEL_UNAVAILABLE) {
      EXPECT_STREQ(tblob_kernel_active(), "scalar");
      continue;
    }
    ASSERT_EQ(s, TBLOB_OK) << k;
    EXPECT_STREQ(tblob_kernel_active(), k);
    std::fill(got.begin(), got.end(), 0.0f);
    ASSERT_EQ(tblob_quant_dequantize(&f.d, TBLOB_DTYPE_F32, 0, 2, got.data(), 512, nullptr), TBLOB_OK);
    EXPECT_EQ(0, std::memcmp(ref.data(), got.data(), 512)) << k;
    ASSERT_EQ(tblob_kernel_set("scalar", nullptr), TBLOB_OK);
  }
  EXPECT_EQ(tblob_kernel_set(nullptr, &diag), TBLOB_OK);  // back to automatic
  EXPECT_EQ(tblob_kernel_set("auto", &diag), TBLOB_OK);
  EXPECT_STRNE(tblob_kernel_active(), "unavailable");
}

// ---------------------------------------------------------------------------------------------
// MLX fixtures, opened as files (Ollama combined-blob layout).
// ---------------------------------------------------------------------------------------------
struct Case {
  std::string name, mode, scale_dtype, global_mode;
  uint32_t bits = 0, group = 0;
  uint64_t rows = 0, cols = 0;
};

struct Manifest {
  std::vector<Case> cases;
  std::string special;
};

Manifest load_manifest() {
  Manifest m;
  std::ifstream f(dequant_dir() + "/manifest.txt");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("# special ", 0) == 0) m.special = line.substr(10);
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    Case c;
    ss >> c.name >> c.mode >> c.bits >> c.group >> c.scale_dtype >> c.rows >> c.cols >> c.global_mode;
    m.cases.push_back(c);
  }
  return m;
}

uint32_t scheme_of(const std::string &mode) {
  if (mode == "affine") return TBLOB_QUANT_MLX_AFFINE;
  if (mode == "mxfp4") return TBLOB_QUANT_MXFP4;
  if (mode == "mxfp8") return TBLOB_QUANT_MXFP8;
  if (mode == "nvfp4") return TBLOB_QUANT_NVFP4;
  return TBLOB_QUANT_NONE;
}

struct Model {
  tblob_model *m = nullptr;
  explicit Model(const std::string &path) {
    tblob_diag d = TBLOB_DIAG_INIT;
    EXPECT_EQ(tblob_model_open(path.c_str(), nullptr, &m, &d), TBLOB_OK) << path << ": " << d.message;
  }
  ~Model() { tblob_model_close(m); }
  uint64_t find(const char *name) const {
    uint64_t i = UINT64_MAX;
    EXPECT_EQ(tblob_tensor_find(m, name, std::strlen(name), &i, nullptr), TBLOB_OK) << name;
    return i;
  }
  std::vector<uint8_t> bytes(const char *name) const {
    const void *p = nullptr;
    uint64_t n = 0;
    EXPECT_EQ(tblob_tensor_data(m, find(name), &p, &n, nullptr), TBLOB_OK);
    const uint8_t *b = static_cast<const uint8_t *>(p);
    return std::vector<uint8_t>(b, b + n);
  }
};

// Compares outputs; where the oracle holds NaN, ours must be NaN too, unless nan_free is
// false (then any value is accepted there: the oracle's special-value preset differs).
size_t compare(int slot, const std::vector<uint8_t> &got, const std::vector<uint8_t> &want,
               bool nan_must_match, const std::string &what) {
  size_t bad = 0;
  const size_t es = slot == 0 ? 4 : 2;
  EXPECT_EQ(got.size(), want.size()) << what;
  const size_t n = std::min(got.size(), want.size()) / es;
  for (size_t i = 0; i < n; ++i) {
    bool ok, wnan;
    uint32_t g = 0, w = 0;
    std::memcpy(&g, got.data() + i * es, es);
    std::memcpy(&w, want.data() + i * es, es);
    if (slot == 0) {
      wnan = f32_nan(w);
      ok = wnan ? f32_nan(g) : g == w;
    } else {
      wnan = slot == 1 ? f16_nan(static_cast<uint16_t>(w)) : bf16_nan(static_cast<uint16_t>(w));
      const bool gnan = slot == 1 ? f16_nan(static_cast<uint16_t>(g)) : bf16_nan(static_cast<uint16_t>(g));
      ok = wnan ? gnan : g == w;
    }
    if (wnan && !nan_must_match) ok = true;
    if (!ok && bad++ < 5)
      ADD_FAILURE() << what << " out " << slot << " element " << i << ": got 0x" << std::hex << g
                    << " want 0x" << w;
  }
  return bad;
}

const uint32_t kOut[3] = {TBLOB_DTYPE_F32, TBLOB_DTYPE_F16, TBLOB_DTYPE_BF16};
const char *const kExp[3] = {"w", "w.f16", "w.bf16"};

TEST(DequantApiMlx, FixturesThroughOpenPath) {
  const Manifest man = load_manifest();
  ASSERT_GE(man.cases.size(), 70u) << "no fixtures in " << dequant_dir();
  // The fixtures' special-value preset (mlx 0.32.4 decodes E4M3 0x7F as NaN); the model
  // decodes Ollama blobs with TBLOB_SPECIAL_MLX (Ollama pins an MLX with 0x7F = 480).
  const uint32_t oracle_special =
      man.special == "mlx0324" ? TBLOB_SPECIAL_E8M0_MAX_INF : TBLOB_SPECIAL_MLX;
  size_t checked = 0;
  for (const Case &c : man.cases) {
    SCOPED_TRACE(c.name);
    Model blob(dequant_dir() + "/mlx/" + c.name + ".safetensors");
    Model exp(dequant_dir() + "/mlx_expected/" + c.name + ".safetensors");
    ASSERT_NE(blob.m, nullptr);
    ASSERT_NE(exp.m, nullptr);
    const uint64_t w = blob.find("w");
    tblob_quant_info qi = TBLOB_QUANT_INFO_INIT;
    ASSERT_EQ(tblob_tensor_quant_info(blob.m, w, &qi, nullptr), TBLOB_OK);
    EXPECT_EQ(qi.flags, TBLOB_TENSOR_QUANTIZED);
    EXPECT_EQ(qi.source, static_cast<uint32_t>(TBLOB_QUANT_SOURCE_OLLAMA));
    EXPECT_EQ(qi.scheme, scheme_of(c.mode));
    EXPECT_EQ(qi.bits, c.bits);
    EXPECT_EQ(qi.group_size, c.group);
    EXPECT_EQ(qi.rows, c.rows);
    EXPECT_EQ(qi.cols, c.cols);
    EXPECT_EQ(qi.special, static_cast<uint32_t>(TBLOB_SPECIAL_MLX));
    EXPECT_EQ(qi.status, TBLOB_OK);
    EXPECT_EQ(qi.scale_index, static_cast<int64_t>(blob.find("w.scale")));
    tblob_tensor_info ti = TBLOB_TENSOR_INFO_INIT;
    ASSERT_EQ(tblob_tensor_at(blob.m, w, &ti, nullptr), TBLOB_OK);
    EXPECT_EQ(ti.quant_scheme, qi.scheme);
    EXPECT_EQ(ti.quant_flags, TBLOB_TENSOR_QUANTIZED);
    EXPECT_EQ(ti.logical_elements, c.rows * c.cols);
    ASSERT_GE(ti.logical_rank, 1u);
    EXPECT_EQ(ti.logical_shape[ti.logical_rank - 1], c.cols);
    EXPECT_EQ(ti.shape[ti.rank - 1] * 32 / c.bits, c.cols);  // the stored shape stays packed

    // Ollama stores a global scale as a direct multiplier; MLX's amax convention needs the
    // descriptor changed by the caller.
    const bool amax = c.global_mode == "mlx_amax";
    tblob_quant_desc qd = TBLOB_QUANT_DESC_INIT;
    ASSERT_EQ(tblob_tensor_quant_desc(blob.m, w, &qd, nullptr), TBLOB_OK);
    EXPECT_EQ(qd.rows, c.rows);
    if (amax) qd.global_scale_mode = TBLOB_GLOBAL_SCALE_MLX_AMAX;
    tblob_quant_desc qo = qd;
    qo.special = oracle_special;
    for (int slot = 0; slot < 3; ++slot) {
      const std::vector<uint8_t> want = exp.bytes(kExp[slot]);
      std::vector<uint8_t> got(want.size() + 8, 0xEE);
      tblob_diag d = TBLOB_DIAG_INIT;
      if (!amax) {
        ASSERT_EQ(tblob_tensor_dequantize(blob.m, w, kOut[slot], 0, TBLOB_ALL_ROWS, got.data(), got.size(), &d),
                  TBLOB_OK)
            << d.message;
        for (size_t k = want.size(); k < got.size(); ++k) ASSERT_EQ(got[k], 0xEE);
        got.resize(want.size());
        EXPECT_EQ(compare(slot, got, want, oracle_special == TBLOB_SPECIAL_MLX, c.name), 0u);
      }
      got.assign(want.size(), 0);
      // With the oracle's own special values: bit for bit, NaNs included.
      ASSERT_EQ(tblob_quant_dequantize(&qo, kOut[slot], 0, TBLOB_ALL_ROWS, got.data(), got.size(), &d), TBLOB_OK)
          << d.message;
      EXPECT_EQ(compare(slot, got, want, true, c.name + " (raw)"), 0u);
      ++checked;
    }
  }
  EXPECT_EQ(checked, man.cases.size() * 3);
}

TEST(DequantApiMlx, RowRangesThroughModel) {
  Model blob(dequant_dir() + "/mlx/affine_b4_g32_bf16_3d.safetensors");
  ASSERT_NE(blob.m, nullptr);
  const uint64_t w = blob.find("w");
  tblob_quant_info qi = TBLOB_QUANT_INFO_INIT;
  ASSERT_EQ(tblob_tensor_quant_info(blob.m, w, &qi, nullptr), TBLOB_OK);
  ASSERT_EQ(qi.rank, 3u);
  EXPECT_EQ(qi.rows, 6u);  // 2 x 3 folded
  EXPECT_EQ(qi.cols, 96u);
  std::vector<float> all(qi.rows * qi.cols);
  ASSERT_EQ(tblob_tensor_dequantize(blob.m, w, TBLOB_DTYPE_F32, 0, qi.rows, all.data(), all.size() * 4, nullptr),
            TBLOB_OK);
  for (uint64_t rb = 0; rb <= qi.rows; ++rb)
    for (uint64_t re = rb; re <= qi.rows; ++re) {
      std::vector<float> part((re - rb) * qi.cols + 1, -7.0f);
      ASSERT_EQ(tblob_tensor_dequantize(blob.m, w, TBLOB_DTYPE_F32, rb, re, part.data(), part.size() * 4, nullptr),
                TBLOB_OK);
      EXPECT_EQ(0, std::memcmp(part.data(), all.data() + rb * qi.cols, (re - rb) * qi.cols * 4));
      EXPECT_EQ(part.back(), -7.0f);
    }
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(tblob_tensor_dequantize(blob.m, w, TBLOB_DTYPE_F32, 0, 7, all.data(), all.size() * 4, &d), TBLOB_E_RANGE);
  EXPECT_EQ(d.tensor_index, static_cast<int64_t>(w));
  EXPECT_NE(std::strstr(d.message, "\"w\""), nullptr) << d.message;
  EXPECT_EQ(tblob_tensor_dequantize(blob.m, w, TBLOB_DTYPE_F32, 0, 6, all.data(), all.size() * 4 - 1, &d),
            TBLOB_E_BUFFER_TOO_SMALL);
  EXPECT_EQ(tblob_tensor_dequantize(blob.m, w, TBLOB_DTYPE_F64, 0, 6, all.data(), all.size() * 4, &d),
            TBLOB_E_DEQUANT_OUT_DTYPE);
  EXPECT_EQ(tblob_tensor_dequantize(blob.m, 99, TBLOB_DTYPE_F32, 0, 6, all.data(), all.size() * 4, &d), TBLOB_E_RANGE);
  EXPECT_EQ(tblob_tensor_dequantize(nullptr, 0, TBLOB_DTYPE_F32, 0, 6, all.data(), all.size() * 4, &d),
            TBLOB_E_INVALID_ARGUMENT);
}

// ---------------------------------------------------------------------------------------------
// Bad companion sets through the model API (files built in memory).
// ---------------------------------------------------------------------------------------------
struct Tensor {
  std::string name, dtype;
  std::vector<uint64_t> shape;
  std::vector<uint8_t> bytes;
};

std::string build(const std::vector<Tensor> &ts, const std::string &meta = "") {
  std::string hdr = "{";
  if (!meta.empty()) hdr += "\"__metadata__\":{" + meta + "},";
  uint64_t off = 0;
  std::string data;
  for (size_t i = 0; i < ts.size(); ++i) {
    const Tensor &t = ts[i];
    if (i) hdr += ",";
    hdr += "\"" + t.name + "\":{\"dtype\":\"" + t.dtype + "\",\"shape\":[";
    for (size_t k = 0; k < t.shape.size(); ++k) hdr += (k ? "," : "") + std::to_string(t.shape[k]);
    hdr += "],\"data_offsets\":[" + std::to_string(off) + "," + std::to_string(off + t.bytes.size()) + "]}";
    off += t.bytes.size();
    data.append(t.bytes.begin(), t.bytes.end());
  }
  hdr += "}";
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((hdr.size() >> (8 * i)) & 0xFF);
  return out + hdr + data;
}

std::vector<uint8_t> filled(size_t n, uint8_t v) { return std::vector<uint8_t>(n, v); }

struct MemModel {
  std::string buf;
  tblob_model *m = nullptr;
  explicit MemModel(std::string b) : buf(std::move(b)) {
    tblob_diag d = TBLOB_DIAG_INIT;
    EXPECT_EQ(tblob_model_open_memory(buf.data(), buf.size(), nullptr, &m, &d), TBLOB_OK) << d.message;
  }
  ~MemModel() { tblob_model_close(m); }
  uint64_t find(const char *n) const {
    uint64_t i = UINT64_MAX;
    EXPECT_EQ(tblob_tensor_find(m, n, std::strlen(n), &i, nullptr), TBLOB_OK) << n;
    return i;
  }
};

// An int4 g64 Ollama tensor "w" of 4 x 256 with edits applied to the tensor list.
std::vector<Tensor> int4_blob() {
  return {{"w", "U32", {4, 32}, filled(512, 0x21)},
          {"w.scale", "BF16", {4, 4}, filled(32, 0x3F)},
          {"w.bias", "BF16", {4, 4}, filled(32, 0x00)}};
}

void expect_model_status(const std::string &file, const char *tensor, tblob_status want,
                         const char *mention, const char *culprit) {
  MemModel mm(file);
  ASSERT_NE(mm.m, nullptr);
  const uint64_t w = mm.find(tensor);
  std::vector<uint8_t> out(1 << 16);
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(tblob_tensor_dequantize(mm.m, w, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, out.data(), out.size(), &d), want);
  EXPECT_EQ(d.tensor_index, static_cast<int64_t>(w));
  EXPECT_NE(std::strstr(d.message, mention), nullptr) << d.message;
  if (culprit) {
    EXPECT_NE(std::strstr(d.message, culprit), nullptr) << d.message;
    tblob_tensor_info ci = TBLOB_TENSOR_INFO_INIT;
    ASSERT_EQ(tblob_tensor_at(mm.m, mm.find(culprit), &ci, nullptr), TBLOB_OK);
    EXPECT_EQ(d.offset, ci.file_offset);
  }
  tblob_quant_info qi = TBLOB_QUANT_INFO_INIT;
  ASSERT_EQ(tblob_tensor_quant_info(mm.m, w, &qi, nullptr), TBLOB_OK);
  EXPECT_EQ(qi.status, want);
  tblob_quant_desc qd = TBLOB_QUANT_DESC_INIT;
  EXPECT_EQ(tblob_tensor_quant_desc(mm.m, w, &qd, nullptr), want);
}

TEST(DequantApiModel, ValidBlobDecodes) {
  MemModel mm(build(int4_blob(), "\"quant_type\":\"int4\",\"group_size\":\"64\""));
  ASSERT_NE(mm.m, nullptr);
  std::vector<float> out(1024);
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(tblob_tensor_dequantize(mm.m, mm.find("w"), TBLOB_DTYPE_F32, 0, 4, out.data(), 4096, &d), TBLOB_OK)
      << d.message;
  // code 1 (low nibble of 0x21) * bf16 0x3F3F + 0, code 2 * s + 0.
  const float s = f32_of(0x3F3F0000u);
  EXPECT_EQ(out[0], s);
  EXPECT_EQ(out[1], 2 * s);
}

TEST(DequantApiModel, BadCompanionStatuses) {
  const std::string meta = "\"quant_type\":\"int4\",\"group_size\":\"64\"";
  {  // group size not dividing the row (256 % 48), shapes fit nothing either
    std::vector<Tensor> t = int4_blob();
    t[1].shape = {4, 5};
    t[1].bytes = filled(40, 0x3F);
    t[2].shape = {4, 5};
    t[2].bytes = filled(40, 0);
    expect_model_status(build(t, "\"quant_type\":\"int4\",\"group_size\":\"48\""), "w",
                        TBLOB_E_QUANT_GROUP_SIZE, "does not divide the row length 256", "w.scale");
  }
  {  // scale tensor too short
    std::vector<Tensor> t = int4_blob();
    t[1].shape = {4, 3};
    t[1].bytes = filled(24, 0x3F);
    t[2].shape = {4, 3};
    t[2].bytes = filled(24, 0);
    expect_model_status(build(t, meta), "w", TBLOB_E_QUANT_SCALE_SIZE, "scales are 24 bytes", "w.scale");
  }
  {  // wrong scale dtype (I32 scales for int4)
    std::vector<Tensor> t = int4_blob();
    t[1].dtype = "I32";
    t[1].shape = {4, 2};
    expect_model_status(build(t, meta), "w", TBLOB_E_QUANT_SCALE_DTYPE, "I32", "w.scale");
  }
  {  // odd packing: 3-bit codes in a row of one u32 word
    std::vector<Tensor> t = {{"w", "U32", {4, 1}, filled(16, 1)},
                             {"w.scale", "BF16", {4, 1}, filled(8, 0x3F)},
                             {"w.bias", "BF16", {4, 1}, filled(8, 0)}};
    expect_model_status(build(t, "\"w.quant_type\":\"int3\",\"w.group_size\":\"32\""), "w",
                        TBLOB_E_QUANT_PACKING, "bit width", "w");
  }
  {  // per-tensor metadata is authoritative: a group size that does not divide the row
    std::vector<Tensor> t = int4_blob();
    expect_model_status(build(t, "\"w.quant_type\":\"int4\",\"w.group_size\":\"48\""), "w",
                        TBLOB_E_QUANT_GROUP_SIZE, "48", "w.scale");
  }
  {  // bias of another dtype
    std::vector<Tensor> t = int4_blob();
    t[2].dtype = "F16";
    expect_model_status(build(t, meta), "w", TBLOB_E_QUANT_BIAS_DTYPE, "F16", "w.bias");
  }
  {  // bias shape differs from the scales
    std::vector<Tensor> t = int4_blob();
    t[2].shape = {2, 8};
    expect_model_status(build(t, meta), "w", TBLOB_E_QUANT_BIAS_SIZE, "bias", "w.bias");
  }
  {  // global scale of the wrong dtype
    std::vector<Tensor> t = {{"w", "U32", {4, 16}, filled(256, 0x11)},
                             {"w.scale", "U8", {4, 8}, filled(32, 0x38)},
                             {"w.global_scale", "F16", {1}, filled(2, 0x3C)}};
    expect_model_status(build(t, "\"quant_type\":\"nvfp4\",\"group_size\":\"16\""), "w",
                        TBLOB_E_QUANT_GLOBAL_SCALE, "single F32", "w.global_scale");
  }
  {  // no metadata, shapes fit no known type
    std::vector<Tensor> t = int4_blob();
    t[1].shape = {4, 3};
    t[1].bytes = filled(24, 0x3F);
    t[2].shape = {4, 3};
    t[2].bytes = filled(24, 0);
    expect_model_status(build(t), "w", TBLOB_E_QUANT_SCHEME, "no quant_type", "w.scale");
  }
}

TEST(DequantApiModel, PlainTensorsAndCompanions) {
  std::vector<Tensor> t = {
      {"bf", "BF16", {2, 2}, {0x80, 0x3F, 0x00, 0x40, 0x40, 0xC0, 0x00, 0x00}},  // 1, 2, -3, 0
      {"h", "F16", {3}, {0x00, 0x3C, 0x00, 0xC0, 0x00, 0x7C}},                  // 1, -2, inf
      {"f", "F32", {}, {0x00, 0x00, 0x80, 0x3F}},                               // 1 (scalar)
      {"e4", "F8_E4M3", {4}, {0x38, 0x7F, 0xB8, 0x7E}},                         // 1, NaN, -1, 448
      {"f4", "F4", {2, 2}, {0x72, 0xF9}},                                       // 1, 6, -0.5, -6
      {"i", "I32", {1}, {1, 0, 0, 0}},
      {"f6", "F6_E2M3", {4}, {0, 0, 0}},
      {"m", "U32", {2, 8}, filled(64, 0x88)},
      {"m.scale", "U8", {2, 1}, {0x7F, 0x80}},  // E8M0: 1, 2
  };
  MemModel mm(build(t, "\"quant_type\":\"mxfp8\",\"group_size\":\"32\""));
  ASSERT_NE(mm.m, nullptr);
  auto f32 = [&](const char *n, size_t count) {
    std::vector<float> v(count, -99.0f);
    tblob_diag d = TBLOB_DIAG_INIT;
    EXPECT_EQ(tblob_tensor_dequantize(mm.m, mm.find(n), TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, v.data(), count * 4, &d),
              TBLOB_OK)
        << n << ": " << d.message;
    return v;
  };
  EXPECT_EQ(f32("bf", 4), (std::vector<float>{1, 2, -3, 0}));
  std::vector<float> h = f32("h", 3);
  EXPECT_EQ(h[1], -2.0f);
  EXPECT_TRUE(std::isinf(h[2]));
  EXPECT_EQ(f32("f", 1)[0], 1.0f);
  std::vector<float> e4 = f32("e4", 4);
  EXPECT_EQ(e4[0], 1.0f);
  EXPECT_TRUE(std::isnan(e4[1]));  // a plain F8 tensor: OCP
  EXPECT_EQ(e4[3], 448.0f);
  EXPECT_EQ(f32("f4", 4), (std::vector<float>{1, 6, -0.5f, -6}));
  // bf16 -> bf16 copies the bits.
  uint16_t bb[4];
  ASSERT_EQ(tblob_tensor_dequantize(mm.m, mm.find("bf"), TBLOB_DTYPE_BF16, 1, 2, bb, 4, nullptr), TBLOB_OK);
  EXPECT_EQ(bb[0], 0xC040);
  tblob_diag d = TBLOB_DIAG_INIT;
  float out[8];
  EXPECT_EQ(tblob_tensor_dequantize(mm.m, mm.find("i"), TBLOB_DTYPE_F32, 0, 1, out, 32, &d), TBLOB_E_NOT_DEQUANTIZABLE);
  EXPECT_NE(std::strstr(d.message, "\"i\""), nullptr) << d.message;
  EXPECT_EQ(tblob_tensor_dequantize(mm.m, mm.find("f6"), TBLOB_DTYPE_F32, 0, 1, out, 32, &d), TBLOB_E_UNSUPPORTED);
  // The U8 scale companion of an mxfp8 weight decodes as E8M0 (with MLX's special values).
  std::vector<float> sc = f32("m.scale", 2);
  EXPECT_EQ(sc, (std::vector<float>{1, 2}));
  tblob_quant_info qi = TBLOB_QUANT_INFO_INIT;
  ASSERT_EQ(tblob_tensor_quant_info(mm.m, mm.find("m.scale"), &qi, nullptr), TBLOB_OK);
  EXPECT_EQ(qi.flags, TBLOB_TENSOR_COMPANION);
  EXPECT_EQ(qi.scheme, static_cast<uint32_t>(TBLOB_QUANT_F8_E8M0));
  EXPECT_EQ(qi.weight_index, static_cast<int64_t>(mm.find("m")));
  ASSERT_EQ(tblob_tensor_quant_info(mm.m, mm.find("i"), &qi, nullptr), TBLOB_OK);
  EXPECT_EQ(qi.scheme, static_cast<uint32_t>(TBLOB_QUANT_NONE));
  EXPECT_EQ(qi.status, TBLOB_E_NOT_DEQUANTIZABLE);
  EXPECT_EQ(qi.weight_index, -1);
  ASSERT_EQ(tblob_tensor_quant_info(mm.m, mm.find("bf"), &qi, nullptr), TBLOB_OK);
  EXPECT_EQ(qi.scheme, static_cast<uint32_t>(TBLOB_QUANT_BF16));
  EXPECT_EQ(qi.flags, 0u);
  EXPECT_EQ(qi.bits, 16u);
  // mxfp8 "m": 2 rows of 8 words = 32 codes 0x88 (E4M3 -2^-6), scales 1 and 2.
  std::vector<float> mv = f32("m", 64);
  EXPECT_EQ(mv[0], -0.015625f);
  EXPECT_EQ(mv[32], -0.03125f);
  // Old, shorter tblob_tensor_info structs are still accepted; the appended fields stay.
  tblob_tensor_info old = TBLOB_TENSOR_INFO_INIT;
  old.struct_size = static_cast<uint32_t>(offsetof(tblob_tensor_info, logical_shape));
  old.quant_flags = 77;
  ASSERT_EQ(tblob_tensor_at(mm.m, mm.find("m"), &old, nullptr), TBLOB_OK);
  EXPECT_EQ(old.quant_flags, 77u);
  EXPECT_EQ(old.logical_shape, nullptr);
  tblob_quant_info small = TBLOB_QUANT_INFO_INIT;
  small.struct_size = 16;
  EXPECT_EQ(tblob_tensor_quant_info(mm.m, 0, &small, &d), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_tensor_quant_info(mm.m, 999, &qi, &d), TBLOB_E_RANGE);
}

}  // namespace
