// fuzz_quantize: tblob_ggml_quantize with an arbitrary type, shape, source dtype, importance
// and input bytes. Every call returns a status from the contract's list; on TBLOB_OK:
//   - the bytes do not depend on the thread count (1 and 3 threads agree);
//   - nothing past rows x row size is written;
//   - tblob_ggml_dequantize reads the blocks back (OK), and for finite input every value is
//     within the type's error bound of the input, in blocks whose largest magnitude A lies in
//     [2^-8, 2^12] (its scale is then a normal f16; outside that ggml's f16 scale itself
//     overflows or loses bits). Bounds without importance (A: the block's largest magnitude,
//     R: its max - min): Q4_0 A/8, Q5_0 A/16, Q8_0 A/254, Q4_1 R/30, Q5_1 R/62 (codes to the
//     nearest step, plus 2^-9 A for the f16 scale and minimum), IQ4_NL 12/127 of the scale step
//     A/127 times the refit (A/4 loose), TQ1_0/TQ2_0 A/2, MXFP4 A/2 (values past 1.5 * 2^floor
//     (log2 A) clamp to it), Q8_K A/254 (an f32 scale A/127); the K-quants' sub-block scales
//     and minimums are themselves quantized against the block's largest, so their bounds are
//     about 2.5x the worst measured over 40,000 seeded adversarial blocks (sub-blocks scaled
//     2^0..2^-11 apart, offsets, outliers; /tmp harness): Q2_K 1.5 A (worst 0.65 A), Q3_K 0.75 A
//     (0.28), Q4_K 0.375 A (0.12), Q5_K 0.25 A (0.071), Q6_K A/8 (0.028), IQ4_XS A/2 (0.14).
//     With importance weights the scale is a weighted least-squares fit
//     (zero weights may leave a value anywhere in range): |y| <= 16 A only, on rows whose
//     values and weights cannot overflow ggml's f32 sums (|x| <= 2^12, weights <= 2^20). Raw
//     values and weights (flags bit 2) get no bound: ggml writes NaN scales when its sums
//     overflow, and so does the library. Types without a bound here (added later) get the
//     status and thread checks.
//
// Input: an 8-byte header, then the values (cycled when short; at least 4 bytes used):
//   [0] type: < 0xC0 picks from kTypes (% count), else the raw byte is the type id
//   [1] source dtype: % 4 -> F32, F16, BF16, or I8 (refused)
//   [2] rows % 9 (0 allowed)   [3..4] cols (LE) % 1025, rounded up to the type's block unless
//   flags bit 0   [5] flags: bit 0 raw cols, bit 1 importance (from the values, made |x|),
//   bit 2 keep NaN/Inf and raw weights (else values replaced by 0, weights by |w|, or 1 past
//   2^20), bit 3 src_bytes one short, bit 4 dst one short, bit 5 source misaligned by one
//   byte, bit 6 importance through the options
//   [6] value scale: the values are multiplied by 2^(byte - 128) (f32 input only after that)
//   [7] unused
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fuzz_common.h"
#include "tensorblob.h"

namespace {

struct TypeRow {
  uint32_t id;
  uint32_t block;
  float bound;      // x A (or x R for the min/max types), 0: no bound known
  bool range_based; // bound times max - min instead of the largest magnitude
};
constexpr TypeRow kTypes[] = {
    {2, 32, 1.0f / 8, false},   {3, 32, 1.0f / 30, true},   {6, 32, 1.0f / 16, false},
    {7, 32, 1.0f / 62, true},   {8, 32, 1.0f / 254, false}, {20, 32, 1.0f / 4, false},
    {34, 256, 0.5f, false},     {35, 256, 0.5f, false},     {39, 32, 0.5f, false},
    {10, 256, 1.5f, false},     {11, 256, 0.75f, false},    {12, 256, 0.375f, false},
    {13, 256, 0.25f, false},    {14, 256, 0.125f, false},   {15, 256, 1.0f / 254, false},
    {23, 256, 0.5f, false},     {1, 1, 0, false},           {16, 256, 0, false},
};
constexpr size_t kTypeCount = sizeof(kTypes) / sizeof(kTypes[0]);

const TypeRow *row_of(uint32_t id) {
  for (const TypeRow &t : kTypes)
    if (t.id == id) return &t;
  return nullptr;
}

float f16_value(uint16_t h) {
  const int e = (h >> 10) & 31;
  const float m = static_cast<float>(h & 1023);
  float v = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m != 0 ? NAN : INFINITY) : std::ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -v : v;
}

bool ok_status(tblob_status s) {
  switch (s) {
    case TBLOB_OK: case TBLOB_E_UNSUPPORTED: case TBLOB_E_QUANT_GROUP_SIZE: case TBLOB_E_DTYPE:
    case TBLOB_E_QUANT_DATA_SIZE: case TBLOB_E_BUFFER_TOO_SMALL: case TBLOB_E_SHAPE_OVERFLOW:
    case TBLOB_E_QUANT_NONFINITE: case TBLOB_E_QUANT_IMPORTANCE: case TBLOB_E_INVALID_ARGUMENT:
      return true;
    default:
      return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t h[8] = {0};
  std::memcpy(h, data, size < 8 ? size : 8);
  const uint8_t *vals = size > 8 ? data + 8 : nullptr;
  const size_t nvals = size > 8 ? size - 8 : 0;

  const uint32_t type = h[0] < 0xC0 ? kTypes[h[0] % kTypeCount].id : h[0];
  const TypeRow *tr = row_of(type);
  const uint32_t dtypes[4] = {TBLOB_DTYPE_F32, TBLOB_DTYPE_F16, TBLOB_DTYPE_BF16, TBLOB_DTYPE_I8};
  const uint32_t dt = dtypes[h[1] % 4];
  const uint64_t rows = h[2] % 9;
  uint64_t cols = (h[3] | (h[4] << 8)) % 1025;
  const uint8_t flags = h[5];
  if (!(flags & 1) && tr) cols = (cols + tr->block - 1) / tr->block * tr->block;
  const size_t esize = dt == TBLOB_DTYPE_F32 ? 4 : dt == TBLOB_DTYPE_I8 ? 1 : 2;
  const size_t n = static_cast<size_t>(rows * cols);

  // Values as f32 (the reference), and the source bytes of the chosen dtype.
  std::vector<float> x(n);
  std::vector<uint8_t> src(n * esize + 1);
  const float scale = std::ldexp(1.0f, static_cast<int>(h[6]) - 128);
  for (size_t i = 0; i < n; ++i) {
    uint8_t b[4] = {0, 0, 0, 0};
    if (nvals)
      for (int k = 0; k < 4; ++k) b[k] = vals[(i * esize + static_cast<size_t>(k)) % nvals];
    float v;
    if (dt == TBLOB_DTYPE_F16) {
      uint16_t u = static_cast<uint16_t>(b[0] | (b[1] << 8));
      if (!(flags & 4) && (u & 0x7C00) == 0x7C00) u = 0;
      std::memcpy(&src[i * 2], &u, 2);
      v = f16_value(u);
    } else if (dt == TBLOB_DTYPE_BF16) {
      uint16_t u = static_cast<uint16_t>(b[0] | (b[1] << 8));
      if (!(flags & 4) && (u & 0x7F80) == 0x7F80) u = 0;
      std::memcpy(&src[i * 2], &u, 2);
      const uint32_t w = static_cast<uint32_t>(u) << 16;
      std::memcpy(&v, &w, 4);
    } else {
      std::memcpy(&v, b, 4);
      if (!(flags & 4) && !std::isfinite(v)) v = 0;
      if (std::isfinite(v) && std::isfinite(v * scale)) v *= scale;
      if (dt == TBLOB_DTYPE_F32) std::memcpy(&src[i * 4], &v, 4);
      else src[i] = b[0];
    }
    x[i] = v;
  }
  std::vector<float> imp;
  const bool use_imp = (flags & 2) && cols <= (1u << 16);
  if (use_imp) {
    imp.resize(static_cast<size_t>(cols));
    for (size_t c = 0; c < imp.size(); ++c) {
      uint8_t b[4] = {0, 0, 0, 0};
      if (nvals)
        for (int k = 0; k < 4; ++k) b[k] = vals[(c * 4 + 3 + static_cast<size_t>(k)) % nvals];
      float w;
      std::memcpy(&w, b, 4);
      imp[c] = (flags & 4) ? w : (std::fabs(w) <= 0x1p20f ? std::fabs(w) : 1.0f);
    }
  }

  uint64_t row_bytes = 0;
  const tblob_status rs = tblob_ggml_row_size(type, cols, &row_bytes, nullptr);
  const size_t need = rs == TBLOB_OK ? static_cast<size_t>(rows * row_bytes) : 0;
  const size_t dst_len = (flags & 16) && need ? need - 1 : need;
  std::vector<uint8_t> dst(need + 16, 0xA5), dst3(need + 16, 0x5A);
  const uint8_t *sp = src.data();
  std::vector<uint8_t> shifted;
  if (flags & 32) {
    shifted.assign(src.size() + 1, 0);
    std::memcpy(shifted.data() + 1, src.data(), src.size());
    sp = shifted.data() + 1;
  }
  const size_t sbytes = n * esize - ((flags & 8) && n ? 1 : 0);
  tblob_quantize_options o = TBLOB_QUANTIZE_OPTIONS_INIT;
  const float *imp_arg = use_imp ? imp.data() : nullptr;
  if (use_imp && (flags & 64)) {
    o.importance = imp.data();
    o.importance_count = cols;
    imp_arg = nullptr;
  }
  o.threads = 1;
  tblob_diag d = TBLOB_DIAG_INIT;
  const tblob_status s = tblob_ggml_quantize(type, dt, sp, sbytes, rows, cols, imp_arg, dst.data(), dst_len, &o, &d);
  FUZZ_ASSERT_MSG(ok_status(s), "status %d: %s", static_cast<int>(s), d.message);
  FUZZ_ASSERT(d.status == s);
  o.threads = 3;
  const tblob_status s3 = tblob_ggml_quantize(type, dt, sp, sbytes, rows, cols, imp_arg, dst3.data(), dst_len, &o, nullptr);
  FUZZ_ASSERT_MSG(s3 == s, "status %d with 1 thread, %d with 3", static_cast<int>(s), static_cast<int>(s3));
  if (s != TBLOB_OK) return 0;
  FUZZ_ASSERT(std::memcmp(dst.data(), dst3.data(), need) == 0);
  for (size_t i = need; i < dst.size(); ++i) FUZZ_ASSERT_MSG(dst[i] == 0xA5, "byte %zu past the rows written", i);
  if (n == 0 || !tr || tr->bound == 0 || (flags & 4)) return 0;
  // With importance ggml sums x^2 over the whole row and multiplies by the weights in f32: a
  // row past 2^12 (or raw weights, bit 2) may overflow them, and ggml then writes NaN scales
  // (so does this library): the bound is checked on rows that cannot overflow.
  float row_amax = 0;
  for (float v : x) row_amax = std::fmax(row_amax, std::fabs(v));
  if (use_imp && !(row_amax <= 0x1p12f)) return 0;

  std::vector<float> y(n);
  const tblob_status ds = tblob_ggml_dequantize(type, dst.data(), need, n, TBLOB_DTYPE_F32, y.data(), n * 4, nullptr);
  FUZZ_ASSERT_MSG(ds == TBLOB_OK, "dequantize status %d", static_cast<int>(ds));
  for (size_t b0 = 0; b0 < n; b0 += tr->block) {
    float amax = 0, mn = x[b0], mx = x[b0];
    for (size_t j = b0; j < b0 + tr->block; ++j) {
      amax = std::fmax(amax, std::fabs(x[j]));
      mn = std::fmin(mn, x[j]);
      mx = std::fmax(mx, x[j]);
    }
    if (!(amax >= 0x1p-8f && amax <= 0x1p12f)) continue;
    const double bound = use_imp ? 17.0 * amax
                                 : (tr->range_based ? static_cast<double>(mx) - mn : amax) * tr->bound +
                                       amax * 0x1p-9 + 1e-30;
    for (size_t j = b0; j < b0 + tr->block; ++j)
      FUZZ_ASSERT_MSG(std::isfinite(y[j]) && std::fabs(static_cast<double>(y[j]) - x[j]) <= bound,
                      "type %u element %zu: input %g, dequantized %g, bound %g", type, j, static_cast<double>(x[j]),
                      static_cast<double>(y[j]), bound);
  }
  return 0;
}
