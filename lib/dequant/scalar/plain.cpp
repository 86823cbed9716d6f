// Scalar reference: plain element types (safetensors F8_*, F4, F16, BF16, F32). Each code
// decodes exactly to f32 and is rounded once to the output dtype; same-dtype float outputs
// copy the bits unchanged.
#include "dequant/scalar/common.h"

namespace tblob {
namespace scalar {
namespace {

template <uint32_t SCHEME>
inline uint32_t decode8(const QuantDesc &d, uint8_t c) {
  switch (static_cast<QuantScheme>(SCHEME)) {
    case QuantScheme::kF8E4M3:
      return dq::e4m3_to_f32(c, (d.special & kSpecE4M3MaxFinite) != 0);
    case QuantScheme::kF8E5M2:
      return dq::e5m2_to_f32(c);
    case QuantScheme::kF8E8M0:
      return dq::e8m0_to_f32(c, (d.special & kSpecE8M0MaxInf) != 0,
                             (d.special & kSpecE8M0ZeroIsZero) != 0);
    case QuantScheme::kF8E4M3Fnuz:
      return dq::e4m3fnuz_to_f32(c);
    default:
      return dq::e5m2fnuz_to_f32(c);
  }
}

}  // namespace

template <uint32_t SCHEME, uint32_t OUT>
void plain_rows(const QuantDesc &d, uint64_t rb, uint64_t re, void *dst) {
  uint8_t *out = static_cast<uint8_t *>(dst);
  const uint64_t begin = rb * d.cols, end = re * d.cols;  // element range (fits: validated)
  const QuantScheme s = static_cast<QuantScheme>(SCHEME);
  uint64_t o = 0;
  if (s == QuantScheme::kF4E2M1) {
    for (uint64_t e = begin; e < end; ++e) {
      const uint8_t byte = d.data[e >> 1];
      const uint8_t c = (e & 1u) ? static_cast<uint8_t>(byte >> 4) : static_cast<uint8_t>(byte & 0xFu);
      dq::store_out<OUT>(out, o++, dq::e2m1_to_f32(c));
    }
  } else if (s == QuantScheme::kF16 || s == QuantScheme::kBF16) {
    const bool same = (s == QuantScheme::kF16 && OUT == kOutF16) ||
                      (s == QuantScheme::kBF16 && OUT == kOutBF16);
    if (same) {
      if (end > begin) std::memcpy(out, d.data + begin * 2, (end - begin) * 2);
      return;
    }
    for (uint64_t e = begin; e < end; ++e) {
      const uint16_t h = static_cast<uint16_t>(load_le16(d.data + e * 2));
      dq::store_out<OUT>(out, o++, s == QuantScheme::kF16 ? dq::f16_to_f32(h) : dq::bf16_to_f32(h));
    }
  } else if (s == QuantScheme::kF32) {
    for (uint64_t e = begin; e < end; ++e) dq::store_out<OUT>(out, o++, load_le32(d.data + e * 4));
  } else {
    for (uint64_t e = begin; e < end; ++e) dq::store_out<OUT>(out, o++, decode8<SCHEME>(d, d.data[e]));
  }
}

#define TBLOB_INSTANTIATE(scheme)                                                         \
  template void plain_rows<static_cast<uint32_t>(scheme), kOutF32>(const QuantDesc &,      \
                                                                   uint64_t, uint64_t, void *); \
  template void plain_rows<static_cast<uint32_t>(scheme), kOutF16>(const QuantDesc &,      \
                                                                   uint64_t, uint64_t, void *); \
  template void plain_rows<static_cast<uint32_t>(scheme), kOutBF16>(const QuantDesc &,     \
                                                                    uint64_t, uint64_t, void *);
TBLOB_INSTANTIATE(QuantScheme::kF8E4M3)
TBLOB_INSTANTIATE(QuantScheme::kF8E5M2)
TBLOB_INSTANTIATE(QuantScheme::kF8E8M0)
TBLOB_INSTANTIATE(QuantScheme::kF8E4M3Fnuz)
TBLOB_INSTANTIATE(QuantScheme::kF8E5M2Fnuz)
TBLOB_INSTANTIATE(QuantScheme::kF4E2M1)
TBLOB_INSTANTIATE(QuantScheme::kF16)
TBLOB_INSTANTIATE(QuantScheme::kBF16)
TBLOB_INSTANTIATE(QuantScheme::kF32)
#undef TBLOB_INSTANTIATE

}  // namespace scalar
}  // namespace tblob
