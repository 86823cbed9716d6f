// SLM1 q8_0 / q4_0 in the kernel table (QuantScheme::kSlm1Q8 / kSlm1Q4, quant_desc.h and
// docs/slm1.md section 6): values worked out by hand, run through every kernel set this host
// runs and through the public tblob_quant_dequantize; validate_desc's exact-length rules.
// (Random bit-exact comparisons of every SIMD set against scalar: test_kernels.cpp.)
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "dequant/dequant.h"
#include "dequant/dispatch.h"
#include "dequant/quant_desc.h"
#include "dequant/scalar/scalar.h"
#include "tensorblob.h"

using namespace tblob;

namespace {

std::vector<uint8_t> f32_bytes(std::initializer_list<uint32_t> bits) {
  std::vector<uint8_t> out;
  for (uint32_t b : bits) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(b >> (8 * i)));
  }
  return out;
}

// Expected outputs of one case, as bit patterns per output dtype.
struct Expect {
  std::vector<uint32_t> f32;
  std::vector<uint16_t> f16, bf16;
};

// An SLM1 descriptor over caller-owned codes and f32 scales.
QuantDesc slm1_desc(QuantScheme scheme, uint32_t group, uint64_t rows, uint64_t cols, const std::vector<uint8_t> &codes,
                    const std::vector<uint8_t> &scales) {
  QuantDesc d;
  d.scheme = scheme;
  d.group_size = group;
  d.scale_dtype = TBLOB_DTYPE_F32;
  d.rows = rows;
  d.cols = cols;
  d.data = codes.data();
  d.data_bytes = codes.size();
  d.scales = scales.data();
  d.scales_bytes = scales.size();
  return d;
}

// Every kernel set the host runs (scalar first), every output dtype, whole tensor and each
// single row.
void check_everywhere(const QuantDesc &d, const Expect &e) {
  ASSERT_EQ(validate_desc(d), TBLOB_OK);
  uint32_t n = 0;
  const char *const *names = supported_kernels(&n);
  ASSERT_GE(n, 1u);
  const uint64_t cols = d.cols;
  for (uint32_t k = 0; k < n; ++k) {
    const KernelTable *kt = kernel_table_by_name(names[k]);
    ASSERT_NE(kt, nullptr);
    for (uint64_t rb = 0; rb <= d.rows; ++rb) {
      const uint64_t re = rb == d.rows ? d.rows : rb + 1;  // each row, then the whole tensor
      const uint64_t r0 = rb == d.rows ? 0 : rb;
      const uint64_t cnt = (re - r0) * cols;
      std::vector<uint32_t> o32(cnt + 1, 0xDEADBEEF);
      std::vector<uint16_t> o16(cnt + 1, 0xBEEF), ob16(cnt + 1, 0xBEEF);
      ASSERT_EQ(dequantize_rows_with(*kt, d, TBLOB_DTYPE_F32, r0, re, o32.data(), cnt * 4), TBLOB_OK);
      ASSERT_EQ(dequantize_rows_with(*kt, d, TBLOB_DTYPE_F16, r0, re, o16.data(), cnt * 2), TBLOB_OK);
      ASSERT_EQ(dequantize_rows_with(*kt, d, TBLOB_DTYPE_BF16, r0, re, ob16.data(), cnt * 2), TBLOB_OK);
      for (uint64_t i = 0; i < cnt; ++i) {
        const uint64_t j = r0 * cols + i;
        EXPECT_EQ(o32[i], e.f32[j]) << names[k] << " f32 element " << j;
        EXPECT_EQ(o16[i], e.f16[j]) << names[k] << " f16 element " << j;
        EXPECT_EQ(ob16[i], e.bf16[j]) << names[k] << " bf16 element " << j;
      }
      EXPECT_EQ(o32[cnt], 0xDEADBEEFu) << "wrote past the output";
      EXPECT_EQ(o16[cnt], 0xBEEF);
      EXPECT_EQ(ob16[cnt], 0xBEEF);
    }
  }
  // The public raw-descriptor API gives the same bits (scheme numbers 15 / 16).
  tblob_quant_desc p = TBLOB_QUANT_DESC_INIT;
  p.scheme = static_cast<uint32_t>(d.scheme);
  p.group_size = d.group_size;
  p.scale_dtype = d.scale_dtype;
  p.rows = d.rows;
  p.cols = d.cols;
  p.data = d.data;
  p.data_bytes = d.data_bytes;
  p.scales = d.scales;
  p.scales_bytes = d.scales_bytes;
  std::vector<uint32_t> o(d.rows * cols);
  ASSERT_EQ(tblob_quant_dequantize(&p, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, o.data(), o.size() * 4, nullptr), TBLOB_OK);
  EXPECT_EQ(o, e.f32);
}

// q8_0, 3 rows x 5 columns, one scale per row.
TEST(Slm1Dequant, HandVectorsQ8) {
  const std::vector<uint8_t> codes = {
      0x01, 0xFF, 0x80, 0x7F, 0x00,  // 1, -1, -128, 127, 0
      0x03, 0xF9, 0x00, 0x00, 0x00,  // 3, -7, 0, 0, 0
      0x05, 0x00, 0xFF, 0x02, 0x80,  // 5, 0, -1, 2, -128
  };
  // Row 0: s = 0.5 (0x3F000000). Row 1: s = 0.1f (0x3DCCCCCD). Row 2: s = +inf.
  const std::vector<uint8_t> scales = f32_bytes({0x3F000000u, 0x3DCCCCCDu, 0x7F800000u});
  const QuantDesc d = slm1_desc(QuantScheme::kSlm1Q8, 5, 3, 5, codes, scales);
  Expect e;
  // Row 0, exact: 0.5, -0.5, -64, 63.5, 0.
  //   f16: 0.5 = 2^-1 -> exponent 14 -> 0x3800; -64 = -2^6 -> exponent 21 -> 0xD400;
  //        63.5 = 1.984375 * 2^5 -> exponent 20, mantissa .984375 * 1024 = 1008 = 0x3F0 -> 0x53F0.
  //   bf16: the top halves (all exact).
  // Row 1: 0.1f = 13421773 * 2^-27.
  //   3 * 13421773 = 40265319 (26 bits): /4 = 10066329.75 -> 10066330 * 2^-25 = 0x3E99999A (0.3f);
  //     f16: 1.2 * 2^-2 -> exponent 13 (0x3400), mantissa 0x19999A / 2^23 * 1024 = 204.8 -> 205
  //     (0xCD) -> 0x34CD; bf16: 0x3E99 | low half 0x999A > 0x8000 -> round up -> 0x3E9A.
  //   -7 * 13421773 = -93952411 (27 bits): /8 = 11744051.375 -> 11744051 * 2^-24 = 0xBF333333;
  //     f16: 1.4 * 2^-1 -> exponent 14 (0x3800), mantissa 0x333333 / 2^23 * 1024 = 409.6 -> 410
  //     (0x19A) -> 0xB99A; bf16: 0xBF33 | 0x3333 < 0x8000 -> 0xBF33.
  // Row 2: s = +inf: 5 -> +inf, 0 * inf -> NaN (canonical 0x7FC00000 / 0x7E00 / 0x7FC0),
  //   -1 -> -inf, 2 -> +inf, -128 -> -inf.
  e.f32 = {0x3F000000, 0xBF000000, 0xC2800000, 0x427E0000, 0x00000000,
           0x3E99999A, 0xBF333333, 0x00000000, 0x00000000, 0x00000000,
           0x7F800000, 0x7FC00000, 0xFF800000, 0x7F800000, 0xFF800000};
  e.f16 = {0x3800, 0xB800, 0xD400, 0x53F0, 0x0000,
           0x34CD, 0xB99A, 0x0000, 0x0000, 0x0000,
           0x7C00, 0x7E00, 0xFC00, 0x7C00, 0xFC00};
  e.bf16 = {0x3F00, 0xBF00, 0xC280, 0x427E, 0x0000,
            0x3E9A, 0xBF33, 0x0000, 0x0000, 0x0000,
            0x7F80, 0x7FC0, 0xFF80, 0x7F80, 0xFF80};
  check_everywhere(d, e);
}

// q4_0, block 2: 2 rows x 4 columns, two blocks per row, low nibble first.
TEST(Slm1Dequant, HandVectorsQ4) {
  // Row 0: 0x8F -> c0 = 0xF = -1, c1 = 0x8 = -8; 0x71 -> c2 = 1, c3 = 7.
  // Row 1: 0x30 -> c0 = 0, c1 = 3;  0x9E -> c2 = 0xE = -2, c3 = 0x9 = -7.
  const std::vector<uint8_t> codes = {0x8F, 0x71, 0x30, 0x9E};
  // Scales (row-major, block inner): r0b0 = 2.0, r0b1 = -0.25, r1b0 = 2^-149 (smallest
  // subnormal), r1b1 = NaN with a payload (0x7FA00000).
  const std::vector<uint8_t> scales = f32_bytes({0x40000000u, 0xBE800000u, 0x00000001u, 0x7FA00000u});
  const QuantDesc d = slm1_desc(QuantScheme::kSlm1Q4, 2, 2, 4, codes, scales);
  Expect e;
  // Row 0: -1 * 2 = -2 (0xC0000000), -8 * 2 = -16 (0xC1800000), 1 * -0.25 = -0.25 (0xBE800000),
  //   7 * -0.25 = -1.75 (0xBFE00000). f16: -2 = 0xC000, -16 = 0xCC00, -0.25 = 0xB400,
  //   -1.75 = -1.75 * 2^0 -> exponent 15 (0x3C00), mantissa .75 * 1024 = 0x300 -> 0xBF00.
  // Row 1: 0 * 2^-149 = +0; 3 * 2^-149 = 0x00000003 (exact, subnormal: no flush to zero);
  //   f16 of 3 * 2^-149 underflows to +0; bf16: 0x0000 | low 0x0003 < 0x8000 -> 0x0000.
  //   NaN scale: both outputs the canonical NaN whatever the payload.
  e.f32 = {0xC0000000, 0xC1800000, 0xBE800000, 0xBFE00000, 0x00000000, 0x00000003, 0x7FC00000, 0x7FC00000};
  e.f16 = {0xC000, 0xCC00, 0xB400, 0xBF00, 0x0000, 0x0000, 0x7E00, 0x7E00};
  e.bf16 = {0xC000, 0xC180, 0xBE80, 0xBFE0, 0x0000, 0x0000, 0x7FC0, 0x7FC0};
  check_everywhere(d, e);
}

// q4_0 with block 32 (the hot path of the SIMD sets): one row of 64 codes, all 16 nibbles.
TEST(Slm1Dequant, HandVectorsQ4Block32) {
  std::vector<uint8_t> codes(32);
  for (int i = 0; i < 32; ++i) codes[i] = static_cast<uint8_t>(((2 * i) & 15) | (((2 * i + 1) & 15) << 4));
  // Block 0: s = 1.00390625 = 1 + 2^-8 (0x3F808000). Block 1: s = FLT_MAX (0x7F7FFFFF).
  const std::vector<uint8_t> scales = f32_bytes({0x3F808000u, 0x7F7FFFFFu});
  const QuantDesc d = slm1_desc(QuantScheme::kSlm1Q4, 32, 1, 64, codes, scales);
  // Column c holds code c & 15 (nibble order), signed q = (c & 15) < 8 ? c & 15 : (c & 15) - 16.
  // Block 0 (exact products, q * (1 + 2^-8) needs at most 12 bits):
  //   q = 1 -> 0x3F808000; f16: 1 + 2^-8 -> mantissa 1024 * 2^-8 = 4 -> 0x3C04; bf16: low half
  //     0x8000 is a tie, 0x3F80 is even -> stays 0x3F80.
  //   q = 3 -> 3.01171875 = 0x4040C000; bf16: low 0xC000 > 0x8000 -> 0x4041; f16: 1.505859375 * 2
  //     -> exponent 16 (0x4000), mantissa .505859375 * 1024 = 518 (0x206) -> 0x4206.
  //   q = -8 -> -8.03125 = 0xC1008000; bf16: tie, 0xC100 even -> 0xC100; f16: -1.00390625 * 2^3
  //     -> exponent 18 (0x4800), mantissa 4 -> 0xC804.
  // Block 1, s = FLT_MAX: q = 0 -> +0; q = +-1 -> +-FLT_MAX (f16 +-inf 0x7C00/0xFC00, bf16:
  //   0x7F7F | low 0xFFFF rounds up -> 0x7F80 = +inf, 0xFF80); |q| >= 2 overflows -> +-inf.
  std::vector<uint32_t> f32(64);
  std::vector<uint16_t> f16(64), bf16(64);
  auto put = [&](int c, uint32_t a, uint16_t b, uint16_t h) {
    f32[c] = a;
    bf16[c] = b;
    f16[c] = h;
  };
  for (int c = 0; c < 64; ++c) {
    const int q = (c & 15) < 8 ? (c & 15) : (c & 15) - 16;
    if (c < 32) {
      if (q == 1) put(c, 0x3F808000u, 0x3F80, 0x3C04);
      else if (q == 3) put(c, 0x4040C000u, 0x4041, 0x4206);
      else if (q == -8) put(c, 0xC1008000u, 0xC100, 0xC804);
      else if (q == 0) put(c, 0, 0, 0);
      else {  // other codes: computed, then only the spot values above are hand-checked
        float s;
        const uint32_t sb = 0x3F808000u;
        std::memcpy(&s, &sb, 4);
        const float v = static_cast<float>(q) * s;
        uint32_t vb;
        std::memcpy(&vb, &v, 4);
        f32[c] = vb;
        f16[c] = 0xFFFF;  // not checked
        bf16[c] = 0xFFFF;
      }
    } else {
      if (q == 0) put(c, 0, 0, 0);
      else if (q == 1) put(c, 0x7F7FFFFFu, 0x7F80, 0x7C00);
      else if (q == -1) put(c, 0xFF7FFFFFu, 0xFF80, 0xFC00);
      else if (q > 0) put(c, 0x7F800000u, 0x7F80, 0x7C00);
      else put(c, 0xFF800000u, 0xFF80, 0xFC00);
    }
  }
  uint32_t n = 0;
  const char *const *names = supported_kernels(&n);
  for (uint32_t k = 0; k < n; ++k) {
    const KernelTable &kt = *kernel_table_by_name(names[k]);
    std::vector<uint32_t> o32(64);
    std::vector<uint16_t> o16(64), ob16(64);
    ASSERT_EQ(dequantize_rows_with(kt, d, TBLOB_DTYPE_F32, 0, 1, o32.data(), 256), TBLOB_OK);
    ASSERT_EQ(dequantize_rows_with(kt, d, TBLOB_DTYPE_F16, 0, 1, o16.data(), 128), TBLOB_OK);
    ASSERT_EQ(dequantize_rows_with(kt, d, TBLOB_DTYPE_BF16, 0, 1, ob16.data(), 128), TBLOB_OK);
    for (int c = 0; c < 64; ++c) {
      EXPECT_EQ(o32[c], f32[c]) << names[k] << " col " << c;
      if (f16[c] != 0xFFFF) {
        EXPECT_EQ(o16[c], f16[c]) << names[k] << " col " << c;
      }
      if (bf16[c] != 0xFFFF) {
        EXPECT_EQ(ob16[c], bf16[c]) << names[k] << " col " << c;
      }
    }
  }
}

// A valid descriptor to break one field at a time.
struct Valid {
  std::vector<uint8_t> data, scales;
  QuantDesc d;
  Valid(QuantScheme s, uint64_t rows, uint64_t cols, uint32_t g) {
    const bool q8 = s == QuantScheme::kSlm1Q8;
    data.resize(q8 ? rows * cols : rows * cols / 2);
    scales.resize(4 * (q8 ? rows : rows * (cols / g)), 0x3F);
    d = slm1_desc(s, g, rows, cols, data, scales);
  }
};

TEST(Slm1Dequant, ValidateDescQ8) {
  Valid v(QuantScheme::kSlm1Q8, 3, 10, 10);
  EXPECT_EQ(validate_desc(v.d), TBLOB_OK);
  QuantDesc d = v.d;
  d.bits = 8;
  EXPECT_EQ(validate_desc(d), TBLOB_OK);
  d.bits = 4;
  EXPECT_EQ(validate_desc(d), kStatusQuantScheme);
  d = v.d;
  d.data_bytes = 29;  // rows * cols = 30
  EXPECT_EQ(validate_desc(d), kStatusQuantDataSize);
  d.data_bytes = 31;
  EXPECT_EQ(validate_desc(d), kStatusQuantDataSize);
  d.data_bytes = 15;  // q4-sized
  EXPECT_EQ(validate_desc(d), kStatusQuantDataSize);
  d = v.d;
  d.scales_bytes = 8;  // rows * 4 = 12
  EXPECT_EQ(validate_desc(d), kStatusQuantScaleSize);
  d.scales_bytes = 16;
  EXPECT_EQ(validate_desc(d), kStatusQuantScaleSize);
  d.scales_bytes = 13;
  EXPECT_EQ(validate_desc(d), kStatusQuantScaleSize);
  d = v.d;
  for (uint32_t g : {0u, 5u, 2u, 20u, 1u}) {  // one scale per row: group == cols only
    d.group_size = g;
    EXPECT_EQ(validate_desc(d), kStatusQuantGroupSize) << g;
  }
  d = v.d;
  d.scale_dtype = TBLOB_DTYPE_F16;
  EXPECT_EQ(validate_desc(d), kStatusQuantScaleDtype);
  d.scale_dtype = TBLOB_DTYPE_BF16;
  EXPECT_EQ(validate_desc(d), kStatusQuantScaleDtype);
  d = v.d;
  d.bias_dtype = TBLOB_DTYPE_F32;
  EXPECT_EQ(validate_desc(d), kStatusQuantBiasDtype);
  d = v.d;
  d.biases = v.scales.data();
  d.biases_bytes = 12;
  EXPECT_EQ(validate_desc(d), kStatusQuantBiasSize);
  d = v.d;
  d.global_scale_mode = GlobalScaleMode::kMultiplier;
  d.global_scale = v.scales.data();
  d.global_scale_bytes = 4;
  EXPECT_EQ(validate_desc(d), kStatusQuantGlobalScale);
  d = v.d;
  d.data = nullptr;
  EXPECT_EQ(validate_desc(d), TBLOB_E_INVALID_ARGUMENT);
  d = v.d;
  d.scales = nullptr;
  EXPECT_EQ(validate_desc(d), TBLOB_E_INVALID_ARGUMENT);
  // rows * cols overflows 64 bits.
  d = v.d;
  d.rows = uint64_t{1} << 62;
  d.cols = 8;
  d.group_size = 8;
  EXPECT_EQ(validate_desc(d), TBLOB_E_SHAPE_OVERFLOW);
  // Largest q8_0 row the group size can name: cols = 2^32 - 1 is fine, 2^32 is not.
  d = v.d;
  d.rows = 1;
  d.cols = 0xFFFFFFFFull;
  d.group_size = 0xFFFFFFFFu;
  d.data_bytes = d.cols;
  d.scales_bytes = 4;
  EXPECT_EQ(validate_desc(d), TBLOB_OK);
  d.cols = uint64_t{1} << 32;
  d.data_bytes = d.cols;
  EXPECT_EQ(validate_desc(d), kStatusQuantGroupSize);
}

TEST(Slm1Dequant, ValidateDescQ4) {
  Valid v(QuantScheme::kSlm1Q4, 3, 12, 4);  // 3 blocks per row
  EXPECT_EQ(validate_desc(v.d), TBLOB_OK);
  QuantDesc d = v.d;
  d.bits = 4;
  EXPECT_EQ(validate_desc(d), TBLOB_OK);
  d.bits = 8;
  EXPECT_EQ(validate_desc(d), kStatusQuantScheme);
  d = v.d;
  for (uint32_t g : {0u, 3u, 5u, 8u, 24u, 1u}) {  // odd, or not dividing 12
    d.group_size = g;
    EXPECT_EQ(validate_desc(d), kStatusQuantGroupSize) << g;
  }
  for (uint32_t g : {2u, 6u, 12u}) {  // valid blocks; the scale length must follow
    d.group_size = g;
    d.scales_bytes = 4 * 3 * (12 / g);
    EXPECT_EQ(validate_desc(d), TBLOB_OK) << g;
    d.scales_bytes += 4;
    EXPECT_EQ(validate_desc(d), kStatusQuantScaleSize) << g;
  }
  d = v.d;
  d.data_bytes = 17;  // rows * cols / 2 = 18
  EXPECT_EQ(validate_desc(d), kStatusQuantDataSize);
  d.data_bytes = 19;
  EXPECT_EQ(validate_desc(d), kStatusQuantDataSize);
  d.data_bytes = 36;  // one byte per code
  EXPECT_EQ(validate_desc(d), kStatusQuantDataSize);
  d = v.d;
  d.scales_bytes = 12;  // one scale per row instead of per block (36)
  EXPECT_EQ(validate_desc(d), kStatusQuantScaleSize);
  d.scales_bytes = 35;
  EXPECT_EQ(validate_desc(d), kStatusQuantScaleSize);
  d = v.d;
  d.scale_dtype = TBLOB_DTYPE_F8_E4M3;
  EXPECT_EQ(validate_desc(d), kStatusQuantScaleDtype);
  d.scale_dtype = 0;
  EXPECT_EQ(validate_desc(d), kStatusQuantScaleDtype);
  d = v.d;
  d.rows = uint64_t{1} << 61;
  d.cols = 8;
  d.group_size = 2;
  EXPECT_EQ(validate_desc(d), TBLOB_E_SHAPE_OVERFLOW);  // rows * cols * 4 bits
  // The public API names the field and the lengths.
  tblob_quant_desc p = TBLOB_QUANT_DESC_INIT;
  p.scheme = static_cast<uint32_t>(QuantScheme::kSlm1Q4);
  p.group_size = 4;
  p.scale_dtype = TBLOB_DTYPE_F32;
  p.rows = 3;
  p.cols = 12;
  p.data = v.data.data();
  p.data_bytes = v.data.size();
  p.scales = v.scales.data();
  p.scales_bytes = 12;
  float out[36];
  tblob_diag diag = TBLOB_DIAG_INIT;
  EXPECT_EQ(tblob_quant_dequantize(&p, TBLOB_DTYPE_F32, 0, 3, out, sizeof(out), &diag), TBLOB_E_QUANT_SCALE_SIZE);
  EXPECT_NE(std::strstr(diag.message, "slm1-q4_0"), nullptr) << diag.message;
  EXPECT_NE(std::strstr(diag.message, "need 36"), nullptr) << diag.message;
  p.scales_bytes = 36;
  p.group_size = 3;
  EXPECT_EQ(tblob_quant_dequantize(&p, TBLOB_DTYPE_F32, 0, 3, out, sizeof(out), &diag), TBLOB_E_QUANT_GROUP_SIZE);
  EXPECT_NE(std::strstr(diag.message, "odd"), nullptr) << diag.message;
  EXPECT_STREQ(tblob_quant_scheme_name(15), "slm1-q8_0");
  EXPECT_STREQ(tblob_quant_scheme_name(16), "slm1-q4_0");
  EXPECT_EQ(tblob_quant_scheme_name(17), nullptr);
}

}  // namespace
