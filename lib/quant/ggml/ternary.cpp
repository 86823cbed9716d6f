// TQ1_0 and TQ2_0: ternary blocks of 256 values (BitNet b1.58), codes t = lroundf(x / d) in
// -1..1 with d = the block's largest magnitude; ggml takes no importance for them.
// TQ1_0 (54 bytes): 48 bytes of five base-3 digits each (elements m + 32n for bytes 0-31 over
// elements 0-159, m + 16n for bytes 32-47 over 160-239), 4 bytes of four digits (elements
// 240 + j + 4m) shifted up one digit, each byte the digits' value v stored as
// ceil(v * 256 / 243) mod 256; then f16 d. TQ2_0 (66 bytes): 64 bytes of four 2-bit codes t + 1
// (element m + 32n of each 128 in bits 2n), then f16 d.
#include <cmath>

#include "quant/ggml/quant_common.h"
#include "quant/ggml/quant_rows.h"

namespace tblob {
namespace ggml {

using namespace q;

namespace {

constexpr int kQK = 256;

// amax and its inverse as ggml's ternary quantizers take them.
float block_inverse(const float *x, float *d_out) {
  float amax = 0;
  for (int j = 0; j < kQK; ++j) {
    const float a = std::fabs(x[j]);
    amax = amax > a ? amax : a;
  }
  *d_out = amax;
  return amax != 0.0f ? 1.0f / amax : 0.0f;
}

// lroundf(x * id) + 1 as ggml stores it in an int (x86-64 conversions).
inline int trit(float v, float id) {
  return static_cast<int>(static_cast<uint32_t>(static_cast<uint64_t>(lround_x86(v * id)) + 1u));
}

// ceil(q * 256 / 243) of the digits' value q (a byte), kept to a byte.
inline uint8_t spread(uint8_t q) { return static_cast<uint8_t>((static_cast<unsigned>(q) * 256u + 242u) / 243u); }

}  // namespace

void quantize_row_tq1_0(const float *x, void *dst, int64_t cols, const float * /*importance*/) {
  uint8_t *y = static_cast<uint8_t *>(dst);
  for (int64_t ib = 0; ib < cols / kQK; ++ib, y += 54) {
    const float *xb = x + ib * kQK;
    float d;
    const float id = block_inverse(xb, &d);
    for (int m = 0; m < 32; ++m) {
      uint8_t q8 = 0;
      for (int n = 0; n < 5; ++n) q8 = static_cast<uint8_t>(q8 * 3 + trit(xb[m + n * 32], id));
      y[m] = spread(q8);
    }
    for (int m = 0; m < 16; ++m) {
      uint8_t q8 = 0;
      for (int n = 0; n < 5; ++n) q8 = static_cast<uint8_t>(q8 * 3 + trit(xb[160 + m + n * 16], id));
      y[32 + m] = spread(q8);
    }
    for (int j = 0; j < 4; ++j) {
      uint8_t q8 = 0;
      for (int m = 0; m < 4; ++m) q8 = static_cast<uint8_t>(q8 * 3 + trit(xb[240 + j + m * 4], id));
      q8 = static_cast<uint8_t>(q8 * 3);
      y[48 + j] = spread(q8);
    }
    store_fp16(y + 52, d);
  }
}

void quantize_row_tq2_0(const float *x, void *dst, int64_t cols, const float * /*importance*/) {
  uint8_t *y = static_cast<uint8_t *>(dst);
  for (int64_t ib = 0; ib < cols / kQK; ++ib, y += 66) {
    const float *xb = x + ib * kQK;
    float d;
    const float id = block_inverse(xb, &d);
    for (int half = 0; half < 2; ++half) {
      for (int m = 0; m < 32; ++m) {
        unsigned q8 = 0;
        for (int n = 0; n < 4; ++n) q8 += static_cast<unsigned>(trit(xb[half * 128 + m + n * 32], id) & 3) << (2 * n);
        y[half * 32 + m] = static_cast<uint8_t>(q8);
      }
    }
    store_fp16(y + 64, d);
  }
}

}  // namespace ggml
}  // namespace tblob
