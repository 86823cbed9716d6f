#include "formats/slm1/dequant.h"

#include <cstring>

#include "core/checked.h"
#include "formats/slm1/format.h"

namespace tblob {

namespace {

inline float scale_at(const uint8_t *scales, uint64_t k) { return slm1::load_f32(scales + 4 * k); }

bool view_sizes_ok(const Slm1View &v) {
  if (v.rows == 0 || v.cols == 0 || !v.payload) return false;
  uint64_t n, scales;
  if (!checked_mul(v.rows, v.cols, &n)) return false;
  switch (v.dtype) {
    case slm1::kDtypeF32:
      return v.block_size == 0 && checked_mul(n, 4, &scales) && v.payload_bytes == scales;
    case slm1::kDtypeQ8_0:
      return v.block_size == v.cols && v.payload_bytes == n && v.scales &&
             checked_mul(v.rows, 4, &scales) && v.scale_bytes == scales;
    case slm1::kDtypeQ4_0:
      return v.block_size >= 2 && v.block_size % 2 == 0 && v.cols % v.block_size == 0 &&
             v.payload_bytes == n / 2 && v.scales &&
             checked_mul(v.rows, v.cols / v.block_size, &scales) && checked_mul(scales, 4, &scales) &&
             v.scale_bytes == scales;
    default:
      return false;
  }
}

}  // namespace

Status slm1_dequant_rows(const Slm1View &v, uint64_t row_begin, uint64_t row_end, float *dst,
                         size_t dst_count) {
  if (!view_sizes_ok(v)) return TBLOB_E_INVALID_ARGUMENT;
  if (row_begin > row_end || row_end > v.rows) return TBLOB_E_RANGE;
  uint64_t need;
  if (!checked_mul(row_end - row_begin, v.cols, &need)) return TBLOB_E_SHAPE_OVERFLOW;
  if (need > dst_count) return TBLOB_E_BUFFER_TOO_SMALL;
  if (need == 0) return TBLOB_OK;
  if (!dst) return TBLOB_E_INVALID_ARGUMENT;
  const uint64_t cols = v.cols;
  switch (v.dtype) {
    case slm1::kDtypeF32:
      std::memcpy(dst, v.payload + row_begin * cols * 4, static_cast<size_t>(need) * 4);
      break;
    case slm1::kDtypeQ8_0:
      for (uint64_t r = row_begin; r < row_end; ++r) {
        const float s = scale_at(v.scales, r);
        const uint8_t *q = v.payload + r * cols;
        float *o = dst + (r - row_begin) * cols;
        for (uint64_t c = 0; c < cols; ++c) o[c] = static_cast<float>(static_cast<int8_t>(q[c])) * s;
      }
      break;
    default: {  // q4_0
      const uint64_t blocks = cols / v.block_size;
      for (uint64_t r = row_begin; r < row_end; ++r) {
        const uint8_t *q = v.payload + r * cols / 2;
        float *o = dst + (r - row_begin) * cols;
        for (uint64_t b = 0; b < blocks; ++b) {
          const float s = scale_at(v.scales, r * blocks + b);
          for (uint64_t c = b * v.block_size; c < (b + 1) * v.block_size; ++c) {
            const int32_t nib = (q[c / 2] >> ((c & 1) * 4)) & 0xf;
            o[c] = static_cast<float>(nib >= 8 ? nib - 16 : nib) * s;
          }
        }
      }
      break;
    }
  }
  return TBLOB_OK;
}

}  // namespace tblob
