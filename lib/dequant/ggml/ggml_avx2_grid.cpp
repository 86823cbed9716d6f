// AVX2 kernels of the IQ lattice types (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M),
// compiled like ggml_avx2.cpp. Table-driven: the grid rows of 32 elements (four 8-byte rows,
// or eight 4-byte ones) are read with scalar loads and assembled in one register (no gathers:
// they are slow on many cores), signs are applied as byte negation, and the bytes are widened
// and multiplied by the sub-block scale once. Bit-exact with ggml_scalar.cpp: for finite d the
// scale and each product are exact in f32 (ggml.h), so (db * g) * sign == db * (sign * g), and
// no grid value is 0, so no -0 is lost.
#include <cstring>

#include "dequant/ggml/ggml_avx2.h"
#include "dequant/ggml/iq_grids.h"

namespace tblob {
namespace ggml {
namespace {

using namespace avx2;

// IQ sign patterns: 7 stored bits, the eighth makes the count of set bits even.
struct KSigns {
  uint8_t v[128] = {};
  constexpr KSigns() {
    for (uint32_t i = 0; i < 128; ++i) {
      uint32_t p = 0;
      for (uint32_t b = 0; b < 7; ++b) p ^= (i >> b) & 1u;
      v[i] = static_cast<uint8_t>(i | (p << 7));
    }
  }
};
constexpr KSigns kKSigns{};

// Four 7-bit sign patterns (bits 0-27 of a) completed to a 32-bit sign word, byte l for group l.
inline uint32_t ksigns4(uint32_t a) {
  return kKSigns.v[a & 127u] | (static_cast<uint32_t>(kKSigns.v[(a >> 7) & 127u]) << 8) |
         (static_cast<uint32_t>(kKSigns.v[(a >> 14) & 127u]) << 16) |
         (static_cast<uint32_t>(kKSigns.v[(a >> 21) & 127u]) << 24);
}

inline uint64_t row8(const uint8_t (*grid)[8], uint32_t i) {
  uint64_t v;
  std::memcpy(&v, grid[i], 8);
  return v;
}
inline uint64_t row4x2(const uint8_t (*grid)[4], uint32_t i0, uint32_t i1) {
  uint32_t a, b;
  std::memcpy(&a, grid[i0], 4);
  std::memcpy(&b, grid[i1], 4);
  return a | (static_cast<uint64_t>(b) << 32);
}
// Four 8-byte rows as one register, r0 in the low bytes.
inline __m256i rows4(uint64_t r0, uint64_t r1, uint64_t r2, uint64_t r3) {
  return _mm256_set_epi64x(static_cast<long long>(r3), static_cast<long long>(r2), static_cast<long long>(r1),
                           static_cast<long long>(r0));
}

// Bit e of `bits` as a 0x00 / 0xFF mask in byte e.
inline __m256i bit_masks(uint32_t bits) {
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int>(bits)),
      _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  const __m256i sel = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ull));
  return _mm256_cmpeq_epi8(_mm256_and_si256(spread, sel), sel);
}

// 32 signed bytes times s0 (elements 0-15) and s1 (16-31), stored at y.
template <int M>
inline void store32(__m256i v, __m256 s0, __m256 s1, float *y) {
  __m256 f[4];
  widen32s(v, f);
  st<M>(y, _mm256_mul_ps(s0, f[0]));
  st<M>(y + 8, _mm256_mul_ps(s0, f[1]));
  st<M>(y + 16, _mm256_mul_ps(s1, f[2]));
  st<M>(y + 24, _mm256_mul_ps(s1, f[3]));
}

// 32 grid bytes (0..127) negated where bit e of `signs` is set, then as store32.
template <int M>
inline void signed32(__m256i g, uint32_t signs, __m256 s0, __m256 s1, float *y) {
  const __m256i neg = bit_masks(signs);
  store32<M>(_mm256_sub_epi8(_mm256_xor_si256(g, neg), neg), s0, s1, y);
}

// d * (0.5 + s) * 0.25 (IQ2 types) or * 0.5 (IQ3_XXS), each step rounded as the scalar code.
inline __m256 half_scale(float d, uint32_t s, float k) {
  const float t = d * (0.5f + static_cast<float>(s));
  return _mm256_set1_ps(t * k);
}

// d, then per 32 elements two u32: four grid indices (bytes of the first); four 7-bit sign
// patterns and a 4-bit scale (the second).
template <int M>
inline void iq2_xxs(const uint8_t *b, float *y) {
  const float d = f16s(b);
  for (int ib = 0; ib < 8; ++ib) {
    const uint32_t a0 = load_le32(b + 2 + 8 * ib), a1 = load_le32(b + 6 + 8 * ib);
    const __m256 db = half_scale(d, a1 >> 28, 0.25f);
    const __m256i g = rows4(row8(kIq2xxsGrid, a0 & 0xFFu), row8(kIq2xxsGrid, (a0 >> 8) & 0xFFu),
                            row8(kIq2xxsGrid, (a0 >> 16) & 0xFFu), row8(kIq2xxsGrid, a0 >> 24));
    signed32<M>(g, ksigns4(a1), db, db, y + 32 * ib);
  }
}

// d, 32 u16 (9-bit grid index, 7-bit sign pattern), 8 scale bytes (a nibble per 16 elements).
template <int M>
inline void iq2_xs(const uint8_t *b, float *y) {
  const float d = f16s(b);
  for (int ib = 0; ib < 8; ++ib) {
    const uint8_t *q = b + 2 + 8 * ib;
    const uint32_t q0 = load_le16(q), q1 = load_le16(q + 2), q2 = load_le16(q + 4), q3 = load_le16(q + 6);
    const uint32_t sc = b[66 + ib];
    const __m256i g = rows4(row8(kIq2xsGrid, q0 & 511u), row8(kIq2xsGrid, q1 & 511u), row8(kIq2xsGrid, q2 & 511u),
                            row8(kIq2xsGrid, q3 & 511u));
    const uint32_t signs = kKSigns.v[q0 >> 9] | (static_cast<uint32_t>(kKSigns.v[q1 >> 9]) << 8) |
                           (static_cast<uint32_t>(kKSigns.v[q2 >> 9]) << 16) |
                           (static_cast<uint32_t>(kKSigns.v[q3 >> 9]) << 24);
    signed32<M>(g, signs, half_scale(d, sc & 0xFu, 0.25f), half_scale(d, sc >> 4, 0.25f), y + 32 * ib);
  }
}

// d, qs[32] (low 8 index bits), signs[32] (a bit per element), qh[8] (2 high index bits per
// group of 8), scales[8] (a nibble per 16 elements).
template <int M>
inline void iq2_s(const uint8_t *b, float *y) {
  const float d = f16s(b);
  const uint8_t *qs = b + 2, *sn = b + 34, *qh = b + 66, *sc = b + 74;
  for (int ib = 0; ib < 8; ++ib) {
    const uint32_t h = qh[ib];
    const uint8_t *q = qs + 4 * ib;
    const __m256i g = rows4(row8(kIq2sGrid, q[0] | ((h & 3u) << 8)), row8(kIq2sGrid, q[1] | ((h & 0xCu) << 6)),
                            row8(kIq2sGrid, q[2] | ((h & 0x30u) << 4)), row8(kIq2sGrid, q[3] | ((h & 0xC0u) << 2)));
    signed32<M>(g, load_le32(sn + 4 * ib), half_scale(d, sc[ib] & 0xFu, 0.25f), half_scale(d, sc[ib] >> 4, 0.25f),
                y + 32 * ib);
  }
}

// d, qs[64] (grid indices, 4 values each), then per 32 elements a u32: four 7-bit sign
// patterns and a 4-bit scale.
template <int M>
inline void iq3_xxs(const uint8_t *b, float *y) {
  const float d = f16s(b);
  for (int ib = 0; ib < 8; ++ib) {
    const uint8_t *q = b + 2 + 8 * ib;
    const uint32_t a = load_le32(b + 66 + 4 * ib);
    const __m256 db = half_scale(d, a >> 28, 0.5f);
    const __m256i g = rows4(row4x2(kIq3xxsGrid, q[0], q[1]), row4x2(kIq3xxsGrid, q[2], q[3]),
                            row4x2(kIq3xxsGrid, q[4], q[5]), row4x2(kIq3xxsGrid, q[6], q[7]));
    signed32<M>(g, ksigns4(a), db, db, y + 32 * ib);
  }
}

// d, qs[64] (low index bits), qh[8] (the ninth bit), signs[32], scales[4] (a nibble per 32).
template <int M>
inline void iq3_s(const uint8_t *b, float *y) {
  const float d = f16s(b);
  const uint8_t *qs = b + 2, *qh = b + 66, *sn = b + 74, *sc = b + 106;
  for (int ib = 0; ib < 8; ++ib) {
    const uint32_t h = qh[ib];
    const uint8_t *q = qs + 8 * ib;
    const uint32_t s = (sc[ib / 2] >> (4 * (ib % 2))) & 0xFu;
    const __m256 db = _mm256_set1_ps(d * static_cast<float>(1u + 2u * s));
#define TBLOB_IDX(k) (q[k] | (((h >> (k)) & 1u) << 8))
    const __m256i g = rows4(row4x2(kIq3sGrid, TBLOB_IDX(0), TBLOB_IDX(1)), row4x2(kIq3sGrid, TBLOB_IDX(2), TBLOB_IDX(3)),
                            row4x2(kIq3sGrid, TBLOB_IDX(4), TBLOB_IDX(5)), row4x2(kIq3sGrid, TBLOB_IDX(6), TBLOB_IDX(7)));
#undef TBLOB_IDX
    signed32<M>(g, load_le32(sn + 4 * ib), db, db, y + 32 * ib);
  }
}

// IQ1 values: grid g (-1..1) plus delta +-1/8, as the exact integer 8g +- 1; the scale dl is
// taken / 8 (exact), so (dl / 8) * (8g +- 1) == dl * (g +- 0.125) bit for bit.
inline uint64_t row8s(uint32_t i) {
  uint64_t v;
  std::memcpy(&v, kIq1sGrid[i], 8);
  return v;
}
inline __m256i iq1_values(__m256i g, __m256i delta) {
  return _mm256_add_epi8(_mm256_sign_epi8(_mm256_set1_epi8(8), g), delta);
}
constexpr uint64_t kPlusOnes = 0x0101010101010101ull;

// d, qs[32] (low index bits), qh u16[8]: per 32 elements three high index bits per group of
// 8, a 3-bit scale (bits 12-14) and the delta's sign (bit 15).
template <int M>
inline void iq1_s(const uint8_t *b, float *y) {
  const float d = f16s(b);
  const uint8_t *qs = b + 2;
  for (int ib = 0; ib < 8; ++ib) {
    const uint32_t h = load_le16(b + 34 + 2 * ib);
    const uint8_t *q = qs + 4 * ib;
    const float dl = d * static_cast<float>(2u * ((h >> 12) & 7u) + 1u);
    const __m256 s = _mm256_set1_ps(dl * 0.125f);
    const __m256i g = rows4(row8s(q[0] | ((h & 7u) << 8)), row8s(q[1] | ((h & 0x38u) << 5)),
                            row8s(q[2] | ((h & 0x1C0u) << 2)), row8s(q[3] | ((h & 0xE00u) >> 1)));
    const __m256i delta = _mm256_set1_epi8((h & 0x8000u) ? -1 : 1);
    store32<M>(iq1_values(g, delta), s, s, y + 32 * ib);
  }
}

// qs[32], qh[16] (a nibble per group of 8: three index bits and the delta's sign), then four
// u16: 3-bit scales (one per 16 elements) and, in their top nibbles, the f16 d.
template <int M>
inline void iq1_m(const uint8_t *b, float *y) {
  const uint8_t *qs = b, *qh = b + 32;
  const float d = _cvtsh_ss(static_cast<unsigned short>(iq1m_d_bits(b)));
  for (int ib = 0; ib < 8; ++ib) {
    const uint32_t sw = load_le16(b + 48 + 2 * (ib / 2)) >> (6 * (ib % 2));
    const __m256 s0 = _mm256_set1_ps(d * static_cast<float>(2u * (sw & 7u) + 1u) * 0.125f);
    const __m256 s1 = _mm256_set1_ps(d * static_cast<float>(2u * ((sw >> 3) & 7u) + 1u) * 0.125f);
    const uint32_t h = load_le16(qh + 2 * ib);  // four nibbles, group l in bits 4l..4l+3
    const uint8_t *q = qs + 4 * ib;
    const __m256i g = rows4(row8s(q[0] | ((h & 7u) << 8)), row8s(q[1] | ((h & 0x70u) << 4)),
                            row8s(q[2] | (h & 0x700u)), row8s(q[3] | ((h & 0x7000u) >> 4)));
    const __m256i delta = rows4((h & 0x8u) ? ~0ull : kPlusOnes, (h & 0x80u) ? ~0ull : kPlusOnes,
                                (h & 0x800u) ? ~0ull : kPlusOnes, (h & 0x8000u) ? ~0ull : kPlusOnes);
    store32<M>(iq1_values(g, delta), s0, s1, y + 32 * ib);
  }
}

}  // namespace

TBLOB_GGML_AVX2_ROWS(iq2_xxs, kSlotIQ2_XXS)
TBLOB_GGML_AVX2_ROWS(iq2_xs, kSlotIQ2_XS)
TBLOB_GGML_AVX2_ROWS(iq2_s, kSlotIQ2_S)
TBLOB_GGML_AVX2_ROWS(iq3_xxs, kSlotIQ3_XXS)
TBLOB_GGML_AVX2_ROWS(iq3_s, kSlotIQ3_S)
TBLOB_GGML_AVX2_ROWS(iq1_s, kSlotIQ1_S)
TBLOB_GGML_AVX2_ROWS(iq1_m, kSlotIQ1_M)

}  // namespace ggml
}  // namespace tblob
