// fuzz_quant_mlx: a random descriptor and source through tblob_quant_size and
// tblob_quant_quantize (public API). Checks: every call returns a status (no crash, no read or
// write outside the exact-size heap blocks: ASan sees any overrun); a refusal is one of the
// documented statuses; one thread and three threads give the same status and the same bytes;
// an accepted result dequantizes (tblob_quant_dequantize) without error, to values that are
// finite when the input is and the scheme cannot overflow (block FP8 and the mx modes decode
// E4M3/E2M1 codes times a finite scale) or, for affine, lie within the group's range widened
// by two scale steps and the scale dtype's rounding.
//
// Input: a 12-byte header, then the source bytes (cycled to fill rows x cols values):
//   [0] scheme (% 17)   [1] bits (% 9)   [2] group size selector   [3] scale dtype selector
//   [4] global scale mode (% 3)   [5] source dtype selector   [6] rows (% 9 + 1)
//   [7..8] cols (LE, % 1024 + 1; rounded up to a multiple of 32 unless [9] bit 0)
//   [9] flags: bit 0 raw cols, bit 1 short source, bit 2 importance weights
//   [10..11] global scale (f32 from these bits as the top half; low half 0)
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fuzz_common.h"

namespace {

constexpr size_t kHeader = 12;

const uint32_t kGroups[] = {0, 16, 32, 64, 128, 96, 2, 7};
const uint32_t kScaleDtypes[] = {0, TBLOB_DTYPE_F32, TBLOB_DTYPE_F16, TBLOB_DTYPE_BF16,
                                 TBLOB_DTYPE_F8_E8M0, TBLOB_DTYPE_F8_E4M3, TBLOB_DTYPE_U8, 99};
const uint32_t kSrcDtypes[] = {TBLOB_DTYPE_F32, TBLOB_DTYPE_F16, TBLOB_DTYPE_BF16, TBLOB_DTYPE_F64};

float load_src(const uint8_t *p, uint32_t dt, uint64_t i) {
  if (dt == TBLOB_DTYPE_F32) {
    float f;
    std::memcpy(&f, p + 4 * i, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, p + 2 * i, 2);
  uint32_t b;
  if (dt == TBLOB_DTYPE_BF16) {
    b = static_cast<uint32_t>(h) << 16;
  } else {  // f16
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu;
    uint32_t m = h & 0x3FFu;
    if (e == 0x1F) {
      b = sign | 0x7F800000u | (m << 13);
    } else if (e != 0) {
      b = sign | ((e + 112u) << 23) | (m << 13);
    } else {
      float f = std::ldexp(static_cast<float>(m), -24);
      std::memcpy(&b, &f, 4);
      b |= sign;
    }
  }
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

struct Out {
  std::vector<uint8_t> data, scales, biases;
};

tblob_status run(tblob_quant_desc d, Out *o, uint32_t src_dt, const uint8_t *src, size_t src_bytes,
                 uint32_t threads, const float *importance, uint64_t importance_count, float *global) {
  // Exact-size heap blocks (std::vector of exactly n; n 0 gives a null pointer).
  o->data.assign(d.data_bytes, 0);
  o->scales.assign(d.scales_bytes, 0);
  o->biases.assign(d.biases_bytes, 0);
  d.data = o->data.empty() ? nullptr : o->data.data();
  d.scales = o->scales.empty() ? nullptr : o->scales.data();
  d.biases = o->biases.empty() ? nullptr : o->biases.data();
  d.global_scale = d.global_scale_bytes ? global : nullptr;
  tblob_quantize_options opt = TBLOB_QUANTIZE_OPTIONS_INIT;
  opt.threads = threads;
  opt.importance = importance;
  opt.importance_count = importance_count;
  return tblob_quant_quantize(&d, src_dt, src, src_bytes, &opt, nullptr);
}

bool allowed_refusal(tblob_status s) {
  switch (s) {
    case TBLOB_E_QUANT_SCHEME:
    case TBLOB_E_QUANT_GROUP_SIZE:
    case TBLOB_E_QUANT_PACKING:
    case TBLOB_E_QUANT_SCALE_DTYPE:
    case TBLOB_E_QUANT_BIAS_DTYPE:
    case TBLOB_E_QUANT_GLOBAL_SCALE:
    case TBLOB_E_QUANT_VALUE:
    case TBLOB_E_QUANT_NONFINITE:
    case TBLOB_E_DTYPE:
    case TBLOB_E_BUFFER_TOO_SMALL:
    case TBLOB_E_UNSUPPORTED:
      return true;
    default:
      return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t h[kHeader] = {0};
  std::memcpy(h, data, size < kHeader ? size : kHeader);
  const uint8_t *body = size > kHeader ? data + kHeader : nullptr;
  const size_t body_len = size > kHeader ? size - kHeader : 0;

  tblob_quant_desc d = TBLOB_QUANT_DESC_INIT;
  d.scheme = h[0] % 17;
  d.bits = h[1] % 9;
  d.group_size = kGroups[h[2] % 8];
  d.scale_dtype = kScaleDtypes[h[3] % 8];
  d.bias_dtype = d.scheme == TBLOB_QUANT_MLX_AFFINE ? d.scale_dtype : 0;
  d.global_scale_mode = h[4] % 3;
  d.rows = h[6] % 9 + 1;
  uint64_t cols = (static_cast<uint64_t>(h[7]) | static_cast<uint64_t>(h[8]) << 8) % 1024 + 1;
  if (!(h[9] & 1)) cols = (cols + 31) / 32 * 32;
  d.cols = cols;
  if (d.scheme == TBLOB_QUANT_SLM1_Q8_0 && (h[2] & 8)) d.group_size = static_cast<uint32_t>(cols);
  const uint32_t src_dt = kSrcDtypes[h[5] % 4];
  const uint32_t es = src_dt == TBLOB_DTYPE_F32 ? 4 : 2;
  float global;
  const uint32_t gbits = (static_cast<uint32_t>(h[10]) | static_cast<uint32_t>(h[11]) << 8) << 16;
  std::memcpy(&global, &gbits, 4);

  tblob_status s = tblob_quant_size(&d, nullptr);
  if (s != TBLOB_OK) {
    FUZZ_ASSERT_MSG(s < 0 && s >= -99, "tblob_quant_size status %d", static_cast<int>(s));
    return 0;
  }
  // The source: rows x cols values cycled from the body (bytes 0x3F when empty).
  size_t src_bytes = static_cast<size_t>(d.rows * d.cols * es);
  std::vector<uint8_t> src(src_bytes);
  for (size_t i = 0; i < src_bytes; ++i) src[i] = body_len ? body[i % body_len] : 0x3F;
  if (h[9] & 2) src_bytes = src_bytes ? src_bytes - 1 : 0;
  std::vector<float> imp;
  if (h[9] & 4) imp.assign(static_cast<size_t>(d.cols), 1.0f);

  Out one, three;
  const tblob_status s1 = run(d, &one, src_dt, src.data(), src_bytes, 1, imp.empty() ? nullptr : imp.data(),
                              imp.size(), &global);
  const tblob_status s3 = run(d, &three, src_dt, src.data(), src_bytes, 3, imp.empty() ? nullptr : imp.data(),
                              imp.size(), &global);
  FUZZ_ASSERT_MSG(s1 == s3, "status %d with 1 thread, %d with 3", static_cast<int>(s1), static_cast<int>(s3));
  if (s1 != TBLOB_OK) {
    FUZZ_ASSERT_MSG(allowed_refusal(s1), "unexpected status %d", static_cast<int>(s1));
    return 0;
  }
  FUZZ_ASSERT(one.data == three.data && one.scales == three.scales && one.biases == three.biases);

  // The result decodes; finite inputs give bounded values.
  d.data = one.data.empty() ? nullptr : one.data.data();
  d.scales = one.scales.empty() ? nullptr : one.scales.data();
  d.biases = one.biases.empty() ? nullptr : one.biases.data();
  d.global_scale = d.global_scale_bytes ? &global : nullptr;
  const uint64_t n = d.rows * d.cols;
  std::vector<float> out(static_cast<size_t>(n));
  s = tblob_quant_dequantize(&d, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, out.data(), out.size() * 4, nullptr);
  FUZZ_ASSERT_MSG(s == TBLOB_OK, "dequantize of an accepted result: %d", static_cast<int>(s));
  if (d.scheme == TBLOB_QUANT_BLOCK_FP8 || d.scheme == TBLOB_QUANT_MXFP4 || d.scheme == TBLOB_QUANT_MXFP8 ||
      (d.scheme == TBLOB_QUANT_NVFP4 && d.global_scale_mode == TBLOB_GLOBAL_SCALE_NONE)) {
    for (uint64_t i = 0; i < n; ++i) FUZZ_ASSERT_MSG(!std::isnan(out[i]), "NaN decoded at %llu", (unsigned long long)i);
  }
  if (d.scheme == TBLOB_QUANT_MLX_AFFINE && d.scale_dtype == TBLOB_DTYPE_F32) {
    const uint64_t g = d.group_size, groups = d.cols / g;
    for (uint64_t r = 0; r < d.rows; ++r)
      for (uint64_t k = 0; k < groups; ++k) {
        float lo = INFINITY, hi = -INFINITY;
        for (uint64_t j = 0; j < g; ++j) {
          const float x = load_src(src.data(), src_dt, r * d.cols + k * g + j);
          lo = x < lo ? x : lo;
          hi = x > hi ? x : hi;
        }
        if (static_cast<double>(hi) - static_cast<double>(lo) > 1e37) continue;  // q * s may overflow
        float sc;
        std::memcpy(&sc, one.scales.data() + 4 * (r * groups + k), 4);
        const double step = std::fabs(static_cast<double>(sc));
        const double slack = 2.0 * step + 1e-6 * (std::fabs(static_cast<double>(lo)) + std::fabs(static_cast<double>(hi)));
        for (uint64_t j = 0; j < g; ++j) {
          const double v = out[static_cast<size_t>(r * d.cols + k * g + j)];
          FUZZ_ASSERT_MSG(v >= lo - slack && v <= hi + slack, "affine value %g outside [%g, %g] +- %g", v,
                          static_cast<double>(lo), static_cast<double>(hi), slack);
        }
      }
  }
  return 0;
}
