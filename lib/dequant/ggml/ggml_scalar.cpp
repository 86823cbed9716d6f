// Scalar reference decoders for GGML blocks: the definition every other kernel set matches.
// Layouts and formulas: ggml `src/ggml-common.h`,
// `dequantize_row_*` in `src/ggml-quants.c`. Integer bit code plus separately rounded f32
// operations; NaN results are canonical (see ggml.h).
#include <cstring>

#include "dequant/convert.h"
#include "dequant/ggml/ggml_blocks.h"
#include "dequant/ggml/iq_grids.h"
#include "dequant/kernel_set.h"

namespace tblob {
namespace ggml {
namespace {

using dq::f32_bits;
using dq::f32_from_bits;
using dq::no_contract;

// Writes v, canonicalising NaN (only blocks with non-finite scales can produce one).
inline void put(float *y, float v) {
  uint32_t u = f32_bits(v);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) u = 0x7FC00000u;
  std::memcpy(y, &u, 4);
}

void blk_q4_0(const uint8_t *b, float *y) {
  const float d = half(b);
  const uint8_t *qs = b + 2;
  for (int j = 0; j < 16; ++j) {
    put(y + j, static_cast<float>((qs[j] & 0xF) - 8) * d);
    put(y + j + 16, static_cast<float>((qs[j] >> 4) - 8) * d);
  }
}

void blk_q4_1(const uint8_t *b, float *y) {
  const float d = half(b), m = half(b + 2);
  const uint8_t *qs = b + 4;
  for (int j = 0; j < 16; ++j) {
    put(y + j, no_contract(static_cast<float>(qs[j] & 0xF) * d) + m);
    put(y + j + 16, no_contract(static_cast<float>(qs[j] >> 4) * d) + m);
  }
}

void blk_q5_0(const uint8_t *b, float *y) {
  const float d = half(b);
  const uint32_t qh = load_le32(b + 2);
  const uint8_t *qs = b + 6;
  for (int j = 0; j < 16; ++j) {
    const int x0 = static_cast<int>((qs[j] & 0xF) | (((qh >> j) & 1u) << 4)) - 16;
    const int x1 = static_cast<int>((qs[j] >> 4) | (((qh >> (j + 16)) & 1u) << 4)) - 16;
    put(y + j, static_cast<float>(x0) * d);
    put(y + j + 16, static_cast<float>(x1) * d);
  }
}

void blk_q5_1(const uint8_t *b, float *y) {
  const float d = half(b), m = half(b + 2);
  const uint32_t qh = load_le32(b + 4);
  const uint8_t *qs = b + 8;
  for (int j = 0; j < 16; ++j) {
    const uint32_t x0 = (qs[j] & 0xFu) | (((qh >> j) & 1u) << 4);
    const uint32_t x1 = (qs[j] >> 4) | (((qh >> (j + 16)) & 1u) << 4);
    put(y + j, no_contract(static_cast<float>(x0) * d) + m);
    put(y + j + 16, no_contract(static_cast<float>(x1) * d) + m);
  }
}

void blk_q8_0(const uint8_t *b, float *y) {
  const float d = half(b);
  const int8_t *qs = reinterpret_cast<const int8_t *>(b + 2);
  for (int j = 0; j < 32; ++j) put(y + j, static_cast<float>(qs[j]) * d);
}

void blk_q8_1(const uint8_t *b, float *y) {
  const float d = half(b);  // b + 2 holds s = d * sum(qs): not used to decode
  const int8_t *qs = reinterpret_cast<const int8_t *>(b + 4);
  for (int j = 0; j < 32; ++j) put(y + j, static_cast<float>(qs[j]) * d);
}

void blk_q2_k(const uint8_t *b, float *y) {
  const uint8_t *sc = b;
  const uint8_t *q = b + 16;
  const float d = half(b + 80), dmin = half(b + 82);
  int is = 0;
  for (int n = 0; n < 256; n += 128) {
    for (int shift = 0; shift < 8; shift += 2) {
      for (int g = 0; g < 2; ++g) {
        const uint8_t s = sc[is++];
        const float dl = d * static_cast<float>(s & 0xF);
        const float ml = dmin * static_cast<float>(s >> 4);
        for (int l = 0; l < 16; ++l)
          put(y++, no_contract(dl * static_cast<float>((q[l + 16 * g] >> shift) & 3)) - ml);
      }
    }
    q += 32;
  }
}

void blk_q3_k(const uint8_t *b, float *y) {
  const uint8_t *hm = b;
  const uint8_t *q = b + 32;
  const uint8_t *s = b + 96;
  const float d = half(b + 108);
  int8_t scales[16];
  q3k_scales(s, scales);
  int is = 0;
  uint32_t m = 1;
  for (int n = 0; n < 256; n += 128) {
    for (int shift = 0; shift < 8; shift += 2) {
      for (int g = 0; g < 2; ++g) {
        const float dl = d * static_cast<float>(scales[is++] - 32);
        for (int l = 0; l < 16; ++l) {
          const int v = static_cast<int>((q[l + 16 * g] >> shift) & 3) - ((hm[l + 16 * g] & m) ? 0 : 4);
          put(y++, dl * static_cast<float>(v));
        }
      }
      m <<= 1;
    }
    q += 32;
  }
}

// Q4_K / Q5_K: scale and min of sub-blocks 2c and 2c+1 (6-bit fields times d / dmin).
struct PairScales {
  float d1, m1, d2, m2;
};
PairScales pair_scales(int c, float d, float dmin, const uint8_t *sc) {
  uint8_t s1, m1, s2, m2;
  scale_min_k4(2 * c, sc, &s1, &m1);
  scale_min_k4(2 * c + 1, sc, &s2, &m2);
  return {d * static_cast<float>(s1), dmin * static_cast<float>(m1), d * static_cast<float>(s2),
          dmin * static_cast<float>(m2)};
}

void blk_q4_k(const uint8_t *b, float *y) {
  const float d = half(b), dmin = half(b + 2);
  const uint8_t *sc = b + 4;
  const uint8_t *q = b + 16;
  for (int c = 0; c < 4; ++c) {
    const PairScales ps = pair_scales(c, d, dmin, sc);
    const float d1 = ps.d1, mm1 = ps.m1, d2 = ps.d2, mm2 = ps.m2;
    for (int l = 0; l < 32; ++l) put(y + l, no_contract(d1 * static_cast<float>(q[l] & 0xF)) - mm1);
    for (int l = 0; l < 32; ++l) put(y + 32 + l, no_contract(d2 * static_cast<float>(q[l] >> 4)) - mm2);
    y += 64;
    q += 32;
  }
}

void blk_q5_k(const uint8_t *b, float *y) {
  const float d = half(b), dmin = half(b + 2);
  const uint8_t *sc = b + 4;
  const uint8_t *qh = b + 16;
  const uint8_t *ql = b + 48;
  uint32_t u1 = 1, u2 = 2;
  for (int c = 0; c < 4; ++c) {
    const PairScales ps = pair_scales(c, d, dmin, sc);
    const float d1 = ps.d1, mm1 = ps.m1, d2 = ps.d2, mm2 = ps.m2;
    for (int l = 0; l < 32; ++l) {
      const uint32_t v = (ql[l] & 0xFu) + ((qh[l] & u1) ? 16u : 0u);
      put(y + l, no_contract(d1 * static_cast<float>(v)) - mm1);
    }
    for (int l = 0; l < 32; ++l) {
      const uint32_t v = (ql[l] >> 4) + ((qh[l] & u2) ? 16u : 0u);
      put(y + 32 + l, no_contract(d2 * static_cast<float>(v)) - mm2);
    }
    y += 64;
    ql += 32;
    u1 <<= 2;
    u2 <<= 2;
  }
}

void blk_q6_k(const uint8_t *b, float *y) {
  const uint8_t *ql = b;
  const uint8_t *qh = b + 128;
  const int8_t *sc = reinterpret_cast<const int8_t *>(b + 192);
  const float d = half(b + 208);
  for (int n = 0; n < 256; n += 128) {
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q1 = static_cast<int>((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
      const int q2 = static_cast<int>((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
      const int q3 = static_cast<int>((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      const int q4 = static_cast<int>((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      put(y + l, (d * static_cast<float>(sc[is])) * static_cast<float>(q1));
      put(y + l + 32, (d * static_cast<float>(sc[is + 2])) * static_cast<float>(q2));
      put(y + l + 64, (d * static_cast<float>(sc[is + 4])) * static_cast<float>(q3));
      put(y + l + 96, (d * static_cast<float>(sc[is + 6])) * static_cast<float>(q4));
    }
    y += 128;
    ql += 64;
    qh += 32;
    sc += 8;
  }
}

void blk_q8_k(const uint8_t *b, float *y) {
  const float d = f32_from_bits(load_le32(b));
  const int8_t *qs = reinterpret_cast<const int8_t *>(b + 4);
  for (int j = 0; j < 256; ++j) put(y + j, d * static_cast<float>(qs[j]));
}


// d (f16), then 16 bytes: element j is the low nibble of byte j, element j + 16 the high one.
void blk_iq4_nl(const uint8_t *b, float *y) {
  const float d = half(b);
  const uint8_t *qs = b + 2;
  for (int j = 0; j < 16; ++j) {
    put(y + j, d * static_cast<float>(kIq4Grid[qs[j] & 0xF]));
    put(y + j + 16, d * static_cast<float>(kIq4Grid[qs[j] >> 4]));
  }
}

// d (f16), scales_h (u16: 2 high bits per sub-block), scales_l (4 bytes: a nibble per
// sub-block), then eight IQ4_NL-style 16-byte sub-blocks of 32 with scale d * (ls - 32).
void blk_iq4_xs(const uint8_t *b, float *y) {
  const float d = half(b);
  const uint32_t sh = load_le16(b + 2);
  const uint8_t *sl = b + 4, *qs = b + 8;
  for (int ib = 0; ib < 8; ++ib) {
    const uint32_t ls = ((sl[ib / 2] >> (4 * (ib % 2))) & 0xFu) | (((sh >> (2 * ib)) & 3u) << 4);
    const float dl = d * static_cast<float>(static_cast<int>(ls) - 32);
    const uint8_t *q = qs + 16 * ib;
    float *o = y + 32 * ib;
    for (int j = 0; j < 16; ++j) {
      put(o + j, dl * static_cast<float>(kIq4Grid[q[j] & 0xF]));
      put(o + j + 16, dl * static_cast<float>(kIq4Grid[q[j] >> 4]));
    }
  }
}

// One base-3 digit of a TQ1_0 byte: the byte times 3^n modulo 256 moves digit n to the top,
// and (x * 3) >> 8 reads it (0..2), minus 1.
inline float tq1_digit(uint8_t byte, uint32_t pow3) {
  const uint32_t x = (byte * pow3) & 0xFFu;
  return static_cast<float>(static_cast<int>((x * 3u) >> 8) - 1);
}

// qs[48] (five digits per byte: bytes 0-31 give elements n*32 + m, bytes 32-47 give
// 160 + n*16 + m), qh[4] (four digits: 240 + n*4 + m), d (f16) at byte 52.
void blk_tq1_0(const uint8_t *b, float *y) {
  static constexpr uint32_t kPow3[5] = {1, 3, 9, 27, 81};
  const float d = half(b + 52);
  for (int n = 0; n < 5; ++n) {
    for (int m = 0; m < 32; ++m) put(y + n * 32 + m, d * tq1_digit(b[m], kPow3[n]));
    for (int m = 0; m < 16; ++m) put(y + 160 + n * 16 + m, d * tq1_digit(b[32 + m], kPow3[n]));
  }
  for (int n = 0; n < 4; ++n)
    for (int m = 0; m < 4; ++m) put(y + 240 + n * 4 + m, d * tq1_digit(b[48 + m], kPow3[n]));
}

// qs[64] (four 2-bit codes per byte, code - 1 in -1..1), d (f16) at byte 64: element
// j*128 + l*32 + m is bits 2l..2l+1 of byte j*32 + m.
void blk_tq2_0(const uint8_t *b, float *y) {
  const float d = half(b + 64);
  for (int j = 0; j < 2; ++j)
    for (int l = 0; l < 4; ++l)
      for (int m = 0; m < 32; ++m)
        put(y + j * 128 + l * 32 + m, d * static_cast<float>(static_cast<int>((b[j * 32 + m] >> (2 * l)) & 3u) - 1));
}


// e (E8M0), then 16 bytes: element j is the low nibble of byte j, j + 16 the high one.
void blk_mxfp4(const uint8_t *b, float *y) {
  const float d = e8m0_half(b[0]);
  const uint8_t *qs = b + 1;
  for (int j = 0; j < 16; ++j) {
    put(y + j, d * static_cast<float>(kMxfp4Grid[qs[j] & 0xF]));
    put(y + j + 16, d * static_cast<float>(kMxfp4Grid[qs[j] >> 4]));
  }
}

// Four UE4M3 scales (one per 16 elements), then 32 bytes: sub-block s's byte 8s + j holds
// element 16s + j (low nibble) and 16s + 8 + j (high nibble).
void blk_nvfp4(const uint8_t *b, float *y) {
  const uint8_t *qs = b + 4;
  for (int s = 0; s < 4; ++s) {
    const float d = ue4m3_half(b[s]);
    for (int j = 0; j < 8; ++j) {
      put(y + 16 * s + j, d * static_cast<float>(kMxfp4Grid[qs[8 * s + j] & 0xF]));
      put(y + 16 * s + 8 + j, d * static_cast<float>(kMxfp4Grid[qs[8 * s + j] >> 4]));
    }
  }
}

// d (f16), then 16 bytes: bit j % 8 of byte j / 8 set gives d, clear gives -d.
void blk_q1_0(const uint8_t *b, float *y) {
  const float d = half(b), nd = -d;
  for (int j = 0; j < 128; ++j) put(y + j, ((b[2 + j / 8] >> (j % 8)) & 1u) ? d : nd);
}

// IQ sign patterns: 7 stored bits, the eighth makes the count of set bits even.
inline uint32_t ksign(uint32_t i7) { return i7 | ((static_cast<uint32_t>(__builtin_popcount(i7)) & 1u) << 7); }
inline float sign_of(uint32_t bits, int j) { return ((bits >> j) & 1u) ? -1.0f : 1.0f; }

// d (f16), then per 32-element sub-block two u32: four grid indices (bytes of the first);
// four 7-bit sign patterns and a 4-bit scale (the second).
void blk_iq2_xxs(const uint8_t *b, float *y) {
  const float d = half(b);
  for (int ib = 0; ib < 8; ++ib) {
    const uint32_t a0 = load_le32(b + 2 + 8 * ib), a1 = load_le32(b + 6 + 8 * ib);
    const float db = no_contract(d * (0.5f + static_cast<float>(a1 >> 28))) * 0.25f;
    for (int l = 0; l < 4; ++l) {
      const uint8_t *g = kIq2xxsGrid[(a0 >> (8 * l)) & 0xFFu];
      const uint32_t sg = ksign((a1 >> (7 * l)) & 127u);
      for (int j = 0; j < 8; ++j) put(y + 32 * ib + 8 * l + j, no_contract(db * static_cast<float>(g[j])) * sign_of(sg, j));
    }
  }
}

// d, 32 u16 (9-bit grid index, 7-bit sign pattern), 8 bytes of 4-bit scales (one per 16).
void blk_iq2_xs(const uint8_t *b, float *y) {
  const float d = half(b);
  const uint8_t *sc = b + 66;
  for (int i = 0; i < 32; ++i) {
    const uint32_t q = load_le16(b + 2 + 2 * i);
    const uint32_t s = (sc[i / 4] >> (4 * ((i / 2) % 2))) & 0xFu;
    const float db = no_contract(d * (0.5f + static_cast<float>(s))) * 0.25f;
    const uint8_t *g = kIq2xsGrid[q & 511u];
    const uint32_t sg = ksign(q >> 9);
    for (int j = 0; j < 8; ++j) put(y + 8 * i + j, no_contract(db * static_cast<float>(g[j])) * sign_of(sg, j));
  }
}

// d, qs[32] (low 8 index bits), signs[32] (a bit per element), qh[8] (2 high index bits per
// group of 8), scales[8] (4 bits per 16 elements).
void blk_iq2_s(const uint8_t *b, float *y) {
  const float d = half(b);
  const uint8_t *qs = b + 2, *sn = b + 34, *qh = b + 66, *sc = b + 74;
  for (int i = 0; i < 32; ++i) {
    const uint32_t s = (sc[i / 4] >> (4 * ((i / 2) % 2))) & 0xFu;
    const float db = no_contract(d * (0.5f + static_cast<float>(s))) * 0.25f;
    const uint8_t *g = kIq2sGrid[qs[i] | (((qh[i / 4] >> (2 * (i % 4))) & 3u) << 8)];
    for (int j = 0; j < 8; ++j) put(y + 8 * i + j, no_contract(db * static_cast<float>(g[j])) * sign_of(sn[i], j));
  }
}

// d, qs[64] (grid indices, 4 values each), then per sub-block a u32: four 7-bit sign
// patterns and a 4-bit scale.
void blk_iq3_xxs(const uint8_t *b, float *y) {
  const float d = half(b);
  const uint8_t *qs = b + 2;
  for (int ib = 0; ib < 8; ++ib) {
    const uint32_t a = load_le32(b + 66 + 4 * ib);
    const float db = no_contract(d * (0.5f + static_cast<float>(a >> 28))) * 0.5f;
    for (int l = 0; l < 4; ++l) {
      const uint32_t sg = ksign((a >> (7 * l)) & 127u);
      const uint8_t *g0 = kIq3xxsGrid[qs[8 * ib + 2 * l]], *g1 = kIq3xxsGrid[qs[8 * ib + 2 * l + 1]];
      float *o = y + 32 * ib + 8 * l;
      for (int j = 0; j < 4; ++j) {
        put(o + j, no_contract(db * static_cast<float>(g0[j])) * sign_of(sg, j));
        put(o + 4 + j, no_contract(db * static_cast<float>(g1[j])) * sign_of(sg, j + 4));
      }
    }
  }
}

// d, qs[64] (low index bits), qh[8] (the ninth bit), signs[32], scales[4] (4 bits per 32).
void blk_iq3_s(const uint8_t *b, float *y) {
  const float d = half(b);
  const uint8_t *qs = b + 2, *qh = b + 66, *sn = b + 74, *sc = b + 106;
  for (int i = 0; i < 64; ++i) {
    const int ib = i / 8;
    const uint32_t s = (sc[ib / 2] >> (4 * (ib % 2))) & 0xFu;
    const float db = d * static_cast<float>(1u + 2u * s);
    const uint8_t *g = kIq3sGrid[qs[i] | (((qh[i / 8] >> (i % 8)) & 1u) << 8)];
    for (int j = 0; j < 4; ++j) {
      const int e = 4 * i + j;
      put(y + e, no_contract(db * static_cast<float>(g[j])) * sign_of(sn[e / 8], e % 8));
    }
  }
}

constexpr float kIq1Delta = 0.125f;

// d, qs[32] (low index bits), qh u16[8]: per 32 elements three high index bits per group of
// 8, a 3-bit scale (bits 12-14) and the delta's sign (bit 15).
void blk_iq1_s(const uint8_t *b, float *y) {
  const float d = half(b);
  const uint8_t *qs = b + 2;
  for (int ib = 0; ib < 8; ++ib) {
    const uint32_t h = load_le16(b + 34 + 2 * ib);
    const float dl = d * static_cast<float>(2u * ((h >> 12) & 7u) + 1u);
    const float delta = (h & 0x8000u) ? -kIq1Delta : kIq1Delta;
    for (int l = 0; l < 4; ++l) {
      const int8_t *g = kIq1sGrid[qs[4 * ib + l] | (((h >> (3 * l)) & 7u) << 8)];
      for (int j = 0; j < 8; ++j) put(y + 32 * ib + 8 * l + j, dl * (static_cast<float>(g[j]) + delta));
    }
  }
}

// qs[32], qh[16] (a nibble per group of 8: three index bits and the delta's sign), then four
// u16: 3-bit scales (four per u16, one per 16 elements) and, in their top nibbles, the f16 d.
void blk_iq1_m(const uint8_t *b, float *y) {
  const uint8_t *qs = b, *qh = b + 32;
  uint32_t sc[4];
  for (int k = 0; k < 4; ++k) sc[k] = load_le16(b + 48 + 2 * k);
  const float d = dq::f32_from_bits(dq::f16_to_f32(static_cast<uint16_t>(iq1m_d_bits(b))));
  for (int i = 0; i < 32; ++i) {
    const uint32_t s = (sc[i / 8] >> (3 * ((i / 2) % 4))) & 7u;
    const float dl = d * static_cast<float>(2u * s + 1u);
    const uint32_t nib = (qh[i / 2] >> (4 * (i % 2))) & 0xFu;
    const float delta = (nib & 8u) ? -kIq1Delta : kIq1Delta;
    const int8_t *g = kIq1sGrid[qs[i] | ((nib & 7u) << 8)];
    for (int j = 0; j < 8; ++j) put(y + 8 * i + j, dl * (static_cast<float>(g[j]) + delta));
  }
}

// Float "blocks" of one element: exact widening, values (NaN payloads included) unchanged.
void blk_f32(const uint8_t *b, float *y) { std::memcpy(y, b, 4); }
void blk_f16(const uint8_t *b, float *y) {
  const uint32_t u = dq::f16_to_f32(load_le16(b));
  std::memcpy(y, &u, 4);
}
void blk_bf16(const uint8_t *b, float *y) {
  const uint32_t u = dq::bf16_to_f32(load_le16(b));
  std::memcpy(y, &u, 4);
}

using BlockFn = void (*)(const uint8_t *, float *);
constexpr BlockFn kBlock[kSlotCount] = {blk_f32,  blk_f16,  blk_bf16, blk_q4_0, blk_q4_1,
                                        blk_q5_0, blk_q5_1, blk_q8_0, blk_q8_1, blk_q2_k,
                                        blk_q3_k, blk_q4_k, blk_q5_k, blk_q6_k, blk_q8_k,
                                        blk_iq4_nl, blk_iq4_xs, blk_tq2_0, blk_mxfp4, blk_tq1_0,
                                        blk_iq2_xxs, blk_iq2_xs, blk_iq2_s, blk_iq3_xxs, blk_iq3_s,
                                        blk_iq1_s, blk_iq1_m, blk_nvfp4, blk_q1_0};

template <uint32_t SLOT>
void rows(const uint8_t *src, size_t nblocks, float *dst, uint32_t /*flags*/) {
  const TypeInfo *t = type_info_by_slot(SLOT);
  const size_t bb = t->block_bytes, be = t->block_elems;
  for (size_t i = 0; i < nblocks; ++i) kBlock[SLOT](src + i * bb, dst + i * be);
}

void to_f16(const float *src, size_t n, uint16_t *dst) {
  for (size_t i = 0; i < n; ++i) {
    const uint16_t h = dq::f32_to_f16(f32_bits(src[i]));
    std::memcpy(dst + i, &h, 2);
  }
}
void to_bf16(const float *src, size_t n, uint16_t *dst) {
  for (size_t i = 0; i < n; ++i) {
    const uint16_t h = dq::f32_to_bf16(f32_bits(src[i]));
    std::memcpy(dst + i, &h, 2);
  }
}

constexpr Kernels kScalar = {
    kSetScalar,
    {rows<kSlotF32>, rows<kSlotF16>, rows<kSlotBF16>, rows<kSlotQ4_0>, rows<kSlotQ4_1>,
     rows<kSlotQ5_0>, rows<kSlotQ5_1>, rows<kSlotQ8_0>, rows<kSlotQ8_1>, rows<kSlotQ2_K>,
     rows<kSlotQ3_K>, rows<kSlotQ4_K>, rows<kSlotQ5_K>, rows<kSlotQ6_K>, rows<kSlotQ8_K>,
     rows<kSlotIQ4_NL>, rows<kSlotIQ4_XS>, rows<kSlotTQ2_0>, rows<kSlotMXFP4>, rows<kSlotTQ1_0>,
     rows<kSlotIQ2_XXS>, rows<kSlotIQ2_XS>, rows<kSlotIQ2_S>, rows<kSlotIQ3_XXS>, rows<kSlotIQ3_S>,
     rows<kSlotIQ1_S>, rows<kSlotIQ1_M>, rows<kSlotNVFP4>, rows<kSlotQ1_0>},
    to_f16,
    to_bf16,
};

}  // namespace

void scalar_block(uint32_t slot, const uint8_t *src, float *dst) {
  if (slot < kSlotCount) kBlock[slot](src, dst);
}

const Kernels &scalar_kernels() { return kScalar; }

template <uint32_t SLOT>
void scalar_rows(const uint8_t *src, size_t nblocks, float *dst, uint32_t flags) {
  rows<SLOT>(src, nblocks, dst, flags);
}
#define TBLOB_INSTANTIATE(fn, slot) \
  template void scalar_rows<slot>(const uint8_t *, size_t, float *, uint32_t);
TBLOB_GGML_AVX2_TYPES(TBLOB_INSTANTIATE)
TBLOB_GGML_SCALAR_ONLY_TYPES(TBLOB_INSTANTIATE)
#undef TBLOB_INSTANTIATE

}  // namespace ggml
}  // namespace tblob
