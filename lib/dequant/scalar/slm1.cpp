// Scalar reference: SLM1 q8_0 / q4_0 (QuantScheme::kSlm1Q8 / kSlm1Q4, quant_desc.h):
// v = f32(q) * s, one f32 multiply, canonical NaN, rounded once to the output dtype.
#include "dequant/scalar/common.h"

namespace tblob {
namespace scalar {

namespace {
// Sign-extends a 4-bit two's-complement code: 8..15 -> -8..-1.
inline int32_t sext4(uint32_t nib) { return static_cast<int32_t>(nib ^ 8u) - 8; }
}  // namespace

template <uint32_t OUT>
void slm1_q8_rows(const QuantDesc &d, uint64_t rb, uint64_t re, void *dst) {
  uint8_t *out = static_cast<uint8_t *>(dst);
  const uint64_t cols = d.cols;
  uint64_t o = 0;
  for (uint64_t r = rb; r < re; ++r) {
    const float s = dq::load_float<TBLOB_DTYPE_F32>(d.scales, r);
    const uint8_t *row = d.data + r * cols;
    for (uint64_t c = 0; c < cols; ++c) {
      const float q = static_cast<float>(static_cast<int8_t>(row[c]));
      dq::store_out<OUT>(out, o++, dq::canon_nan(dq::f32_bits(q * s)));
    }
  }
}

template <uint32_t OUT>
void slm1_q4_rows(const QuantDesc &d, uint64_t rb, uint64_t re, void *dst) {
  uint8_t *out = static_cast<uint8_t *>(dst);
  const uint64_t cols = d.cols, gsize = d.group_size, nblocks = cols / gsize;
  uint64_t o = 0;
  for (uint64_t r = rb; r < re; ++r) {
    const uint8_t *row = d.data + r * (cols / 2);
    for (uint64_t b = 0; b < nblocks; ++b) {
      const float s = dq::load_float<TBLOB_DTYPE_F32>(d.scales, r * nblocks + b);
      for (uint64_t c = b * gsize; c < (b + 1) * gsize; ++c) {
        const uint32_t nib = (row[c / 2] >> ((c & 1u) * 4)) & 0xFu;
        const float q = static_cast<float>(sext4(nib));
        dq::store_out<OUT>(out, o++, dq::canon_nan(dq::f32_bits(q * s)));
      }
    }
  }
}

template void slm1_q8_rows<kOutF32>(const QuantDesc &, uint64_t, uint64_t, void *);
template void slm1_q8_rows<kOutF16>(const QuantDesc &, uint64_t, uint64_t, void *);
template void slm1_q8_rows<kOutBF16>(const QuantDesc &, uint64_t, uint64_t, void *);
template void slm1_q4_rows<kOutF32>(const QuantDesc &, uint64_t, uint64_t, void *);
template void slm1_q4_rows<kOutF16>(const QuantDesc &, uint64_t, uint64_t, void *);
template void slm1_q4_rows<kOutBF16>(const QuantDesc &, uint64_t, uint64_t, void *);

}  // namespace scalar
}  // namespace tblob
