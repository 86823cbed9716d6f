// Scalar reference: MLX affine, w = round_S(round_S(q * s) + b) with S the scale dtype
// (see the arithmetic notes in quant_desc.h).
#include "dequant/scalar/common.h"

namespace tblob {
namespace scalar {
namespace {

template <uint32_t SDT, uint32_t OUT>
void affine_impl(const QuantDesc &d, uint64_t rb, uint64_t re, uint8_t *out) {
  const uint32_t b = d.bits;
  const uint64_t cols = d.cols;
  const uint64_t gsize = d.group_size;
  const uint64_t ngroups = cols / gsize;
  const uint64_t row_bytes = cols * b / 8;  // validated: whole words, fits in data_bytes
  uint64_t o = 0;
  for (uint64_t r = rb; r < re; ++r) {
    const uint8_t *row = d.data + r * row_bytes;
    for (uint64_t g = 0; g < ngroups; ++g) {
      const uint64_t si = r * ngroups + g;
      const float s = dq::load_float<SDT>(d.scales, si);
      const float bias = dq::load_float<SDT>(d.biases, si);
      const uint64_t j_end = (g + 1) * gsize;
      for (uint64_t j = g * gsize; j < j_end; ++j) {
        const float q = static_cast<float>(dq::extract_code(row, j, b));
        const float t = dq::round_to<SDT>(dq::no_contract(q * s));
        const float v = dq::round_to<SDT>(t + bias);
        dq::store_out<OUT>(out, o++, dq::canon_nan(dq::f32_bits(v)));
      }
    }
  }
}

}  // namespace

template <uint32_t OUT>
void affine_rows(const QuantDesc &d, uint64_t rb, uint64_t re, void *dst) {
  uint8_t *out = static_cast<uint8_t *>(dst);
  switch (d.scale_dtype) {
    case TBLOB_DTYPE_BF16:
      affine_impl<TBLOB_DTYPE_BF16, OUT>(d, rb, re, out);
      break;
    case TBLOB_DTYPE_F16:
      affine_impl<TBLOB_DTYPE_F16, OUT>(d, rb, re, out);
      break;
    default:
      affine_impl<TBLOB_DTYPE_F32, OUT>(d, rb, re, out);
      break;
  }
}

template void affine_rows<kOutF32>(const QuantDesc &, uint64_t, uint64_t, void *);
template void affine_rows<kOutF16>(const QuantDesc &, uint64_t, uint64_t, void *);
template void affine_rows<kOutBF16>(const QuantDesc &, uint64_t, uint64_t, void *);

}  // namespace scalar
}  // namespace tblob
