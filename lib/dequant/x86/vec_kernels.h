// ISA-neutral dequantization kernels, templated over a vector abstraction V (one per ISA:
// x86/avx2_vec.h, x86/avx512_vec.h, arm/neon_vec.h). Each ISA translation unit includes this
// header once and instantiates the templates with its own V, compiled with its own -m flags.
// (The header lives in x86/ for path-ownership reasons only; arm/ includes it too.)
//
// Two layers:
//   * generic kernels (gen_*): every scheme, any group size, any bit width; element-wise over
//     W lanes, with exact f32 arithmetic that mirrors scalar/ step by step;
//   * hot kernels (hot_*, slm1_*): MLX int4/int8 affine, mxfp4/mxfp8, nvfp4, SLM1 q8_0/q4_0
//     for the group sizes the formats use. 4-bit codes go through a per-group 16-entry result table expanded with the
//     ISA's shuffle/permute (V::Lut / V::expand4, hand-written per ISA); 8-bit codes are
//     computed directly in blocks of 16 codes, with NaN canonicalisation skipped for groups
//     whose scale/bias are finite (no NaN can arise there).
//
// Bit-exactness (quant_desc.h): every rounding that scalar/ does with integer code is done
// here with the same integer code on vectors (bf16), or with the hardware f32<->f16
// conversion, which rounds to nearest-even exactly like convert.h (NaN lanes are fixed up
// where a payload could differ). Multiplies and adds stay separate instructions: every ISA
// TU is compiled with -ffp-contract=off. Subnormal codes are decoded with integer ops or
// exact normal-range float products, so results never depend on DAZ.
//
// ODR: everything here has internal linkage (anonymous namespace), so an inline helper
// compiled with AVX-512 flags can never be picked by the linker for a baseline caller.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/endian.h"
#include "dequant/convert.h"
#include "dequant/kernel_table.h"
#include "dequant/quant_desc.h"

// Forced inlining for what runs once per group or per vector inside the hot loops: GCC
// otherwise leaves some of them (the f16-scale table builder, the bf16 table, the f16
// expansion) out of line, and a call per group costs its spills on top of the call.
#define TBLOB_VK_INLINE __attribute__((always_inline))

namespace tblob {
namespace {
namespace vk {

constexpr uint32_t kQNaN = 0x7FC00000u;
constexpr uint32_t kInfBits = 0x7F800000u;

using dq::f32_bits;
using dq::f32_from_bits;
inline bool finite_bits(uint32_t u) { return (u & kInfBits) != kInfBits; }
inline uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

template <uint32_t OUT>
constexpr uint32_t out_bytes() {
  return OUT == kOutF32 ? 4u : 2u;
}

// Whole-vector stores to the output, plain or non-temporal (NT: the x86 sets' streaming
// stores, which need dst aligned to the store's width; only the *_nt entries below use them).
template <class V, bool NT>
void store32(uint8_t *p, typename V::U x) {
  if constexpr (NT) {
    V::stream32(p, x);
  } else {
    V::store32(p, x);
  }
}
template <class V, bool NT>
void store_f16(uint8_t *p, typename V::U x) {
  if constexpr (NT) {
    V::stream_f16(p, x);
  } else {
    V::store_f16(p, x);
  }
}
template <class V, bool NT>
void store_n16(uint8_t *p, typename V::U x) {
  if constexpr (NT) {
    V::stream_n16(p, x);
  } else {
    V::store_n16(p, x);
  }
}

// ---- lane-wise helpers over V -----------------------------------------------------------
template <class V>
struct Ops {
  using U = typename V::U;
  using F = typename V::F;
  using M = typename V::M;

  TBLOB_VK_INLINE static U canon(U x) { return V::sel(V::isnan(V::asf(x)), V::set1(kQNaN), x); }

  // convert.h f32_to_bf16, lanes (result in the low 16 bits).
  template <bool kMaybeNaN = true>
  TBLOB_VK_INLINE static U to_bf16(U x) {
    const U lsb = V::band(V::template shr<16>(x), V::set1(1));
    const U r = V::template shr<16>(V::add(x, V::add(V::set1(0x7FFFu), lsb)));
    if (!kMaybeNaN) return r;
    const U n = V::bor(V::template shr<16>(x), V::set1(0x40u));
    return V::sel(V::isnan(V::asf(x)), n, r);
  }
  // round_to_bf16 (value as f32 bits). NaN lanes keep NaN-ness (callers canonicalise).
  template <bool kMaybeNaN = true>
  TBLOB_VK_INLINE static U round_bf16(U x) {
    const U lsb = V::band(V::template shr<16>(x), V::set1(1));
    const U r = V::band(V::add(x, V::add(V::set1(0x7FFFu), lsb)), V::set1(0xFFFF0000u));
    if (!kMaybeNaN) return r;
    return V::sel(V::isnan(V::asf(x)), x, r);
  }
  // round_f16 in integer code (RNE at bit 13, as round_bf16 at bit 16) for x a multiple of
  // 2^-24 with |x| < 65520, which is every f32 product q*s and every f32 sum t+b of f16
  // values below that bound (f32 rounding keeps multiples of 2^-24): there it equals the F16C
  // round trip, f16 subnormals included (a multiple of 2^-24 below 2^-14 is an f16 subnormal
  // and the integer rounding, finer there, keeps it), without its conversion uops.
  static U round_f16_int(U x) {
    const U lsb = V::band(V::template shr<13>(x), V::set1(1));
    return V::band(V::add(x, V::add(V::set1(0x0FFFu), lsb)), V::set1(0xFFFFE000u));
  }
  // The same rounding (x a multiple of 2^-24, |x| < 65520) by Veltkamp splitting in f32:
  // c = x * (2^13 + 1), x rounded to 24 - 13 = 11 significant bits is c - (c - x), to nearest
  // even, and -0 stays -0 (checked for every such f32, both signs, against the F16C round trip).
  // Below 2^-14 the 11 bits are finer than f16's subnormal step, which x (a multiple of 2^-24)
  // already fits, as in round_f16_int. Three float ops instead of five integer ones; cx, when
  // the caller has it, is c itself (the exact x times 8193 rounded once, e.g. s times q * 8193).
  TBLOB_VK_INLINE static F round_f16_split(F x) { return round_f16_split(x, V::mul(x, V::asf(V::set1(0x46000400u)))); }
  TBLOB_VK_INLINE static F round_f16_split(F x, F cx) { return V::subf(cx, V::subf(cx, x)); }
  // round_bf16 by float arithmetic, for |x| < 2^111 normal, +0, or a multiple of 2^-134:
  // c = 2^16 times x's power of two (same sign; 2^-111 for subnormals); x + c rounds x to a
  // multiple of 2^(e-7), i.e. to 8 significant bits, to nearest even (c is an even multiple
  // of that quantum), and subtracting c again is exact. Four operations instead of five.
  // (-0 comes out +0.)
  static U round_bf16_fp(U x) {
    const U c = V::add(V::band(x, V::set1(0xFF800000u)), V::set1(16u << 23));
    return V::asu(V::subf(V::addf(V::asf(x), V::asf(c)), V::asf(c)));
  }
  template <uint32_t DT>  // TBLOB_DTYPE_*: rounding of affine arithmetic to the scale dtype
  static U round_s(U x) {
    if (DT == TBLOB_DTYPE_BF16) return round_bf16<true>(x);
    if (DT == TBLOB_DTYPE_F16) return V::round_f16(x);
    return x;
  }
  template <uint32_t OUT>  // rounding "in the output dtype" (mx*, nvfp4)
  static U round_out(U x) {
    if (OUT == kOutBF16) return round_bf16<true>(x);
    if (OUT == kOutF16) return V::round_f16(x);
    return x;
  }

  // Stores W outputs (f32 bits in, converted to OUT).
  template <uint32_t OUT, bool kMaybeNaN = true, bool NT = false>
  TBLOB_VK_INLINE static void put(uint8_t *dst, U x) {
    if (OUT == kOutF32) {
      store32<V, NT>(dst, x);
    } else if (OUT == kOutF16) {
      store_f16<V, NT>(dst, x);
    } else {
      store_n16<V, NT>(dst, to_bf16<kMaybeNaN>(x));
    }
  }
  // Stores the first n (< W allowed) outputs.
  template <uint32_t OUT>
  static void put_n(uint8_t *dst, U x, uint64_t n) {
    if (n == static_cast<uint64_t>(V::W)) {
      put<OUT>(dst, x);
      return;
    }
    alignas(64) uint8_t tmp[V::W * 4];
    put<OUT>(tmp, x);
    std::memcpy(dst, tmp, static_cast<size_t>(n) * out_bytes<OUT>());
  }

  // ---- element decoders (minifloat.h, lanes hold the code in the low bits) ----
  static U fp4(U c) {
    const U sign = V::template shl<28>(V::band(c, V::set1(8)));
    const U mag = V::band(c, V::set1(7));
    U x = V::add(V::template shl<22>(mag), V::set1(126u << 23));
    x = V::sel(V::eq(mag, V::set1(1)), V::set1(0x3F000000u), x);
    x = V::sel(V::eq(mag, V::zero()), V::zero(), x);
    return V::bor(x, sign);
  }
  static U e4m3(U c, bool max_finite) {
    const U a = V::band(c, V::set1(0x7F));
    const U sign = V::template shl<24>(V::band(c, V::set1(0x80)));
    const U norm = V::add(V::template shl<20>(a), V::set1(120u << 23));
    const U sub = V::asu(V::mul(V::cvt(a), V::asf(V::set1(0x3B000000u))));  // * 2^-9
    U x = V::sel(V::gt(V::set1(8), a), sub, norm);
    if (!max_finite) x = V::sel(V::eq(a, V::set1(0x7F)), V::set1(kQNaN), x);
    return V::bor(x, sign);
  }
  static U e5m2(U c) {
    const U a = V::band(c, V::set1(0x7F));
    const U m = V::band(c, V::set1(3));
    const U e = V::template shr<2>(a);
    const U sign = V::template shl<24>(V::band(c, V::set1(0x80)));
    const U norm = V::add(V::template shl<21>(a), V::set1(112u << 23));
    const U sub = V::asu(V::mul(V::cvt(m), V::asf(V::set1(0x37800000u))));  // * 2^-16
    U x = V::sel(V::eq(e, V::zero()), sub, norm);
    const U special = V::sel(V::eq(m, V::zero()), V::set1(kInfBits), V::set1(kQNaN));
    x = V::sel(V::eq(e, V::set1(31)), special, x);
    return V::bor(x, sign);
  }
  static U e8m0(U c, bool ff_inf, bool zero_zero) {
    U x = V::template shl<23>(c);
    x = V::sel(V::eq(c, V::zero()), V::set1(zero_zero ? 0u : 0x00400000u), x);
    x = V::sel(V::eq(c, V::set1(0xFF)), V::set1(ff_inf ? kInfBits : kQNaN), x);
    return x;
  }
  static U e4m3fnuz(U c) {
    const U a = V::band(c, V::set1(0x7F));
    const U sign = V::template shl<24>(V::band(c, V::set1(0x80)));
    const U norm = V::add(V::template shl<20>(a), V::set1(119u << 23));
    const U sub = V::asu(V::mul(V::cvt(a), V::asf(V::set1(0x3A800000u))));  // * 2^-10
    U x = V::bor(V::sel(V::gt(V::set1(8), a), sub, norm), sign);
    return V::sel(V::eq(c, V::set1(0x80)), V::set1(0xFFC00000u), x);
  }
  static U e5m2fnuz(U c) {
    const U a = V::band(c, V::set1(0x7F));
    const U sign = V::template shl<24>(V::band(c, V::set1(0x80)));
    const U norm = V::add(V::template shl<21>(a), V::set1(111u << 23));
    const U sub = V::asu(V::mul(V::cvt(V::band(c, V::set1(3))), V::asf(V::set1(0x37000000u))));
    U x = V::bor(V::sel(V::gt(V::set1(4), a), sub, norm), sign);  // * 2^-17 above
    return V::sel(V::eq(c, V::set1(0x80)), V::set1(0xFFC00000u), x);
  }
  // f16 bits (low 16) -> f32 bits exactly (convert.h f16_to_f32: NaN payloads kept, no quieting).
  static U f16(U h) {
    const U fast = V::h2f_fast(h);
    const M special = V::eq(V::band(h, V::set1(0x7C00)), V::set1(0x7C00));
    const U exact = V::bor(V::bor(V::template shl<16>(V::band(h, V::set1(0x8000))), V::set1(kInfBits)),
                           V::template shl<13>(V::band(h, V::set1(0x3FF))));
    return V::sel(special, exact, fast);
  }
};

// Lane i holds i * b (code bit offsets inside a chunk).
template <class V>
typename V::U lane_bits(uint32_t b) {
  alignas(64) uint32_t t[V::W];
  for (int i = 0; i < V::W; ++i) t[i] = static_cast<uint32_t>(i) * b;
  return V::load32(reinterpret_cast<const uint8_t *>(t));
}

// A 16-byte window starting at p: p itself when 16 bytes remain before end, else a zero-padded
// copy (never reads outside [p, end)).
inline const uint8_t *window16(const uint8_t *p, const uint8_t *end, uint8_t *tmp) {
  if (end - p >= 16) return p;
  std::memset(tmp, 0, 16);
  if (end > p) std::memcpy(tmp, p, static_cast<size_t>(end - p));
  return tmp;
}

// Codes [j, j + W) of a LSB-first bit stream with b-bit codes (b <= 8). Lanes past the caller's
// count hold garbage from inside the window, never from outside [stream, end).
template <class V>
typename V::U extract_codes(const uint8_t *stream, const uint8_t *end, uint64_t j, uint32_t b,
                            typename V::U lanebits, typename V::U mask) {
  const uint64_t bit0 = j * b;
  alignas(16) uint8_t tmp[16];
  const uint8_t *w = window16(stream + (bit0 >> 3), end, tmp);
  const typename V::U bits = V::add(lanebits, V::set1(static_cast<uint32_t>(bit0 & 7u)));
  const typename V::U two = V::gather2(w, V::template shr<3>(bits));
  return V::band(V::shrv(two, V::band(bits, V::set1(7))), mask);
}

// Loads n (<= W) elements of `esize` bytes each into a zero-padded buffer so that a full
// vector load never reads outside the input.
inline const uint8_t *tail_copy(const uint8_t *p, uint64_t n, uint32_t esize, uint8_t *tmp,
                                size_t tmp_size) {
  std::memset(tmp, 0, tmp_size);
  std::memcpy(tmp, p, static_cast<size_t>(n) * esize);
  return tmp;
}

// Scale element i of an F32/F16/BF16 array, broadcast (f32 bits, exact).
template <class V, uint32_t SDT>
typename V::U scale_vec(const uint8_t *base, uint64_t i) {
  if (SDT == TBLOB_DTYPE_F32) return V::set1(load_le32(base + 4 * i));
  if (SDT == TBLOB_DTYPE_BF16) return V::set1(static_cast<uint32_t>(load_le16(base + 2 * i)) << 16);
  return Ops<V>::f16(V::set1(load_le16(base + 2 * i)));
}

inline bool spec_e4m3_max_finite(const QuantDesc &d) { return (d.special & kSpecE4M3MaxFinite) != 0; }
inline bool spec_ff_inf(const QuantDesc &d) { return (d.special & kSpecE8M0MaxInf) != 0; }
inline bool spec_zero_zero(const QuantDesc &d) { return (d.special & kSpecE8M0ZeroIsZero) != 0; }

// =============================================================================================
// Generic kernels
// =============================================================================================

// MLX affine, any bits and group size.
template <class V, uint32_t SDT, uint32_t OUT>
void gen_affine(const QuantDesc &d, uint64_t rb, uint64_t re, uint8_t *out) {
  using O = Ops<V>;
  using U = typename V::U;
  const uint32_t b = d.bits;
  const uint64_t cols = d.cols, gsize = d.group_size, ngroups = cols / gsize;
  const uint64_t row_bytes = cols * b / 8;
  const uint8_t *end = d.data + d.data_bytes;
  const U lanebits = lane_bits<V>(b);
  const U mask = V::set1((1u << b) - 1u);
  for (uint64_t r = rb; r < re; ++r) {
    const uint8_t *row = d.data + r * row_bytes;
    for (uint64_t g = 0; g < ngroups; ++g) {
      const uint64_t si = r * ngroups + g;
      const U s = scale_vec<V, SDT>(d.scales, si);
      const U bias = scale_vec<V, SDT>(d.biases, si);
      const bool finite = finite_bits(V::lane0(s)) && finite_bits(V::lane0(bias));
      const uint64_t j_end = (g + 1) * gsize;
      for (uint64_t j = g * gsize; j < j_end; j += V::W) {
        const uint64_t n = min_u64(V::W, j_end - j);
        const U q = extract_codes<V>(row, end, j, b, lanebits, mask);
        U t = O::template round_s<SDT>(V::asu(V::mul(V::cvt(q), V::asf(s))));
        U v = O::template round_s<SDT>(V::asu(V::addf(V::asf(t), V::asf(bias))));
        if (!finite) v = O::canon(v);
        O::template put_n<OUT>(out, v, n);
        out += n * out_bytes<OUT>();
      }
    }
  }
}

// nvfp4 block scale for group si (f32 bits), with MLX's amax factor applied when asked.
struct NvScale {
  GlobalScaleMode mode;
  float g = 1.0f;
  float amax_factor = 1.0f;
  bool max_finite;
  explicit NvScale(const QuantDesc &d) : mode(d.global_scale_mode), max_finite(spec_e4m3_max_finite(d)) {
    if (mode != GlobalScaleMode::kNone) g = f32_from_bits(load_le32(d.global_scale));
    amax_factor = g / 2688.0f;
  }
};

// v = fp4 * s [* g], canonical NaN (kMaybeNaN false: s and g are finite, so v is not NaN).
template <class V, bool kMaybeNaN = true>
TBLOB_VK_INLINE inline typename V::U nv_value(const NvScale &ns, typename V::U fp4, typename V::U s) {
  typename V::U v = V::asu(V::mul(V::asf(fp4), V::asf(s)));
  if (ns.mode == GlobalScaleMode::kMultiplier) v = V::asu(V::mul(V::asf(v), V::asf(V::set1(f32_bits(ns.g)))));
  return kMaybeNaN ? Ops<V>::canon(v) : v;
}

// Plain element types over the element range [rb*cols, re*cols).
template <class V, uint32_t SCHEME, uint32_t OUT>
void gen_plain(const QuantDesc &d, uint64_t rb, uint64_t re, uint8_t *out) {
  using O = Ops<V>;
  using U = typename V::U;
  const QuantScheme s = static_cast<QuantScheme>(SCHEME);
  const uint64_t begin = rb * d.cols, end = re * d.cols;
  const uint8_t *dend = d.data + d.data_bytes;
  const bool mf = spec_e4m3_max_finite(d), ffi = spec_ff_inf(d), zz = spec_zero_zero(d);
  if (s == QuantScheme::kF4E2M1) {
    const U lanebits = lane_bits<V>(4);
    const U mask = V::set1(15);
    for (uint64_t e = begin; e < end; e += V::W) {
      const uint64_t n = min_u64(V::W, end - e);
      const U c = extract_codes<V>(d.data, dend, e, 4, lanebits, mask);
      O::template put_n<OUT>(out, O::fp4(c), n);
      out += n * out_bytes<OUT>();
    }
    return;
  }
  const uint32_t esize = (s == QuantScheme::kF32) ? 4 : (s == QuantScheme::kF16 || s == QuantScheme::kBF16) ? 2 : 1;
  alignas(64) uint8_t tmp[V::W * 4];
  for (uint64_t e = begin; e < end; e += V::W) {
    const uint64_t n = min_u64(V::W, end - e);
    const uint8_t *p = d.data + e * esize;
    if (n < static_cast<uint64_t>(V::W)) p = tail_copy(p, n, esize, tmp, sizeof(tmp));
    U x;
    switch (s) {
      case QuantScheme::kF8E4M3: x = O::e4m3(V::load8(p), mf); break;
      case QuantScheme::kF8E5M2: x = O::e5m2(V::load8(p)); break;
      case QuantScheme::kF8E8M0: x = O::e8m0(V::load8(p), ffi, zz); break;
      case QuantScheme::kF8E4M3Fnuz: x = O::e4m3fnuz(V::load8(p)); break;
      case QuantScheme::kF8E5M2Fnuz: x = O::e5m2fnuz(V::load8(p)); break;
      case QuantScheme::kF16: x = O::f16(V::load16(p)); break;
      case QuantScheme::kBF16: x = V::template shl<16>(V::load16(p)); break;
      default: x = V::load32(p); break;
    }
    O::template put_n<OUT>(out, x, n);
    out += n * out_bytes<OUT>();
  }
}

// =============================================================================================
// Hot kernels
// =============================================================================================
// The hot kernels walk the row range as one flat run of groups (rows of whole groups are
// contiguous in the code stream and in the scale arrays). Scales (and biases) are decoded
// kChunkGroups at a time with vector code into small stack arrays, so the per-group work is
// a broadcast load plus the group's codes.
constexpr uint64_t kChunkGroups = 64;

// Decodes n (<= kChunkGroups) scale elements of `esize` bytes starting at element i0 into
// f32 bits at out[0..n); dec maps a vector of raw elements (zero-extended) to f32 bits.
template <class V, class Dec>
void decode_chunk(const uint8_t *base, uint32_t esize, uint64_t i0, uint64_t n, uint32_t *out,
                  const Dec &dec) {
  alignas(64) uint8_t tmp[V::W * 4];
  for (uint64_t i = 0; i < n; i += V::W) {
    const uint64_t m = min_u64(V::W, n - i);
    const uint8_t *p = base + (i0 + i) * esize;
    if (m < static_cast<uint64_t>(V::W)) p = tail_copy(p, m, esize, tmp, sizeof(tmp));
    const typename V::U raw = esize == 1 ? V::load8(p) : esize == 2 ? V::load16(p) : V::load32(p);
    V::store32(reinterpret_cast<uint8_t *>(out + i), dec(raw));
  }
}

// F32/F16/BF16 scale arrays -> f32 bits. (f16 NaN payloads may differ from convert.h: every
// affine result passes through NaN canonicalisation when a scale or bias is not finite.)
template <class V, uint32_t SDT>
void decode_affine_chunk(const uint8_t *base, uint64_t i0, uint64_t n, uint32_t *out) {
  using U = typename V::U;
  if (SDT == TBLOB_DTYPE_F32) {
    std::memcpy(out, base + i0 * 4, static_cast<size_t>(n) * 4);
  } else if (SDT == TBLOB_DTYPE_BF16) {
    decode_chunk<V>(base, 2, i0, n, out, [](U x) { return V::template shl<16>(x); });
  } else {
    decode_chunk<V>(base, 2, i0, n, out, [](U x) { return V::h2f_fast(x); });
  }
}

// Group loop of a 4-bit scheme (affine b=4, mxfp4, nvfp4) with a group size that is a
// multiple of 16: prep(first_group, n, s, b) decodes a chunk of scales, make(s, b, vals)
// fills the group's 16 results (f32 bits, 16 / W vectors; any NaN is the canonical
// 0x7FC00000, which V's 16-bit tables rely on to round to bf16 without a NaN rule; for bf16
// output, any f32 whose RNE to bf16 is the result); V turns them into its lookup table and
// expands the group's codes.
// GS: the group size when known at compile time (16, 32, 64: the expansion loop then unrolls
// fully), else 0 and d.group_size.
template <class V, class = void>
struct HasPairs : std::false_type {};
template <class V>
struct HasPairs<V, typename std::enable_if<V::kPairs>::type> : std::true_type {};

// Groups for V::affine8_bf16_x32 and V::affine4_bf16_pair (sets with kBf16Pack: vcvtne2ps2bf16, which reads subnormal
// inputs as zero): s and b each zero or 2^-119 <= |x| < 2^100 (exponent field 8..226). Then
// for q in 0..255, q*s is zero or normal (|q*s| >= |s|) and below 2^108, t = round(q*s) is
// zero or a multiple of s's bf16 quantum, b one of b's, both at least 2^-126, so t + b (f32
// rounding keeps that: its quantum there is coarser) is zero or normal, and below 2^109: no
// subnormal, infinity or NaN ever reaches the conversion.
inline bool affine8_bf16_pack_ok(uint32_t sb, uint32_t bb) {
  auto ok = [](uint32_t x) {
    const uint32_t e = (x >> 23) & 0xFFu;
    return (x & 0x7FFFFFFFu) == 0 || (e >= 8u && e <= 226u);
  };
  return ok(sb) && ok(bb);
}
template <class V, class = void>
struct HasBf16Pack : std::false_type {};
template <class V>
struct HasBf16Pack<V, typename std::enable_if<V::kBf16Pack>::type> : std::true_type {};

// The default pair hook of hot_lut4: no two-group table of the scheme's own.
struct NoPair {
  template <class L>
  bool operator()(const uint32_t *, const uint32_t *, L *) const {
    return false;
  }
};

template <class V, uint32_t OUT, bool NT, uint64_t GS, bool kExact, bool kHalf, class Prep, class Make, class Pair>
void hot_lut4_gs(const QuantDesc &d, uint64_t rb, uint64_t re, uint8_t *out, const Prep &prep,
                 const Make &make, const Pair &pair) {
  using Lut = typename V::template Lut<OUT>;
  const uint64_t gsize = GS != 0 ? GS : d.group_size, ngroups = d.cols / gsize;
  const uint64_t total = (re - rb) * ngroups, g_first = rb * ngroups;
  const uint8_t *p = d.data + rb * (d.cols / 2);
  alignas(64) uint32_t sa[kChunkGroups], ba[kChunkGroups];
  for (uint64_t c0 = 0; c0 < total; c0 += kChunkGroups) {
    const uint64_t n = min_u64(kChunkGroups, total - c0);
    prep(g_first + c0, n, sa, ba);
    uint64_t g = 0;
    if constexpr (HasPairs<V>::value && OUT != kOutF32) {
      // AVX-512, 16-bit outputs: two groups per table (one per 256-bit half), built by one
      // permute of both groups' values (make_pair); 16-code groups (nvfp4) share each 32-code
      // expansion, longer ones expand group a then group b (expand4_pair).
      if (gsize == 16 || gsize % 32 == 0) {
        for (; g + 2 <= n; g += 2) {
          typename V::Lut16 lut;
          if (!pair(sa + g, ba + g, &lut)) {
            typename V::U va[16 / V::W], vb[16 / V::W];
            make(sa[g], ba[g], va);
            make(sa[g + 1], ba[g + 1], vb);
            lut = V::template make_pair<OUT, kExact>(va, vb);
          }
          if (gsize == 16) {
            V::template expand4x2<NT>(p, lut, out);
          } else {
            V::template expand4_pair<NT>(p, gsize, lut, out);
          }
          p += gsize;
          out += 2 * gsize * out_bytes<OUT>();
        }
      }
    } else if constexpr (V::W == 8 && OUT != kOutF32 && (GS == 16 || GS == 0)) {
      // AVX2, 16-bit outputs of 16-code groups (nvfp4): two groups per table (one per lane)
      // and per 32-code expansion, instead of a half-empty table and 16-code tails each.
      for (; gsize == 16 && g + 2 <= n; g += 2) {
        typename V::U va[2], vb[2];
        make(sa[g], ba[g], va);
        make(sa[g + 1], ba[g + 1], vb);
        V::template expand4x2<NT>(p, V::template make_lut2<OUT>(va, vb), out);
        p += 16;
        out += 32 * out_bytes<OUT>();
      }
    }
    for (; g < n; ++g) {
      typename V::U vals[16 / V::W];
      make(sa[g], ba[g], vals);
      if constexpr (kHalf && V::W == 8 && OUT == kOutF32) {
        // AVX2, f32, results that are f16 values: an f16 table, widened after the lookup.
        V::template expand4_h2f<NT>(p, gsize, V::template make_lut<kOutF16>(vals), out);
        p += gsize / 2;
        out += gsize * out_bytes<OUT>();
        continue;
      }
      if constexpr (V::W == 8 && OUT == kOutF32 && GS == 16) {
        // AVX2, f32, 16-code groups (nvfp4): the byte-plane table (make_lut) costs more than
        // it saves over so few codes, direct permutes are faster (bench_fill_ratio: nvfp4
        // 18.3 GB/s vs 17.0 with planes; at 32 codes planes win, mxfp4 6.5 vs 6.1 Gelem/s).
        V::template expand4_perm_f32<NT>(p, gsize, vals, out);
        p += gsize / 2;
        out += gsize * out_bytes<OUT>();
        continue;
      }
      const Lut lut = V::template make_lut<OUT>(vals);
      if constexpr (NT) {
        V::template expand4<OUT, true>(p, gsize, lut, out);
      } else {
        V::template expand4<OUT>(p, gsize, lut, out);
      }
      p += gsize / 2;
      out += gsize * out_bytes<OUT>();
    }
  }
}
// kExact: make's finite values are exact bf16 values (V::make_pair takes their top halves).
// kHalf (AVX2, f32 output): make's results are f16 values, or any
// f32 whose RNE to f16 is the result (canonical NaN), and go through an f16 table
// (V::expand4_h2f).
// pair(s, b, &lut): the two-group table of groups with scales s[0..1], biases b[0..1] built by
// the scheme itself (true), or false for make + make_pair.
template <class V, uint32_t OUT, bool NT, bool kExact = false, bool kHalf = false, class Prep, class Make,
          class Pair = NoPair>
void hot_lut4(const QuantDesc &d, uint64_t rb, uint64_t re, uint8_t *out, const Prep &prep,
              const Make &make, const Pair &pair = Pair()) {
  // AVX2 only: the AVX-512 instantiations trip GCC 12's -Wuninitialized inside its intrinsic
  // headers when unrolled, and were not measured.
  if constexpr (V::W == 8) {
    switch (d.group_size) {
      case 16: return hot_lut4_gs<V, OUT, NT, 16, kExact, kHalf>(d, rb, re, out, prep, make, pair);
      case 32: return hot_lut4_gs<V, OUT, NT, 32, kExact, kHalf>(d, rb, re, out, prep, make, pair);
      case 64: return hot_lut4_gs<V, OUT, NT, 64, kExact, kHalf>(d, rb, re, out, prep, make, pair);
      default: break;
    }
  }
  hot_lut4_gs<V, OUT, NT, 0, kExact, kHalf>(d, rb, re, out, prep, make, pair);
}

template <class V>
void iota_f32(typename V::U *q) {  // q[k] = float(lane + k*W), 16 values
  alignas(64) float t[16];
  for (int i = 0; i < 16; ++i) t[i] = static_cast<float>(i);
  for (int k = 0; k < 16 / V::W; ++k) q[k] = V::load32(reinterpret_cast<const uint8_t *>(t + k * V::W));
}
template <class V>
void fp4_table(typename V::U *f) {  // f[k] = FP4 decode of codes k*W .. k*W+W-1
  alignas(64) uint32_t t[16];
  for (uint32_t i = 0; i < 16; ++i) t[i] = i;
  for (int k = 0; k < 16 / V::W; ++k) f[k] = Ops<V>::fp4(V::load32(reinterpret_cast<const uint8_t *>(t + k * V::W)));
}

template <class V, uint32_t SDT, uint32_t OUT, bool NT = false>
void hot_affine4(const QuantDesc &d, uint64_t rb, uint64_t re, uint8_t *out) {
  using O = Ops<V>;
  using U = typename V::U;
  U q[16 / V::W], qc[16 / V::W];
  iota_f32<V>(q);
  for (int k = 0; k < 16 / V::W; ++k) qc[k] = V::asu(V::mul(V::asf(q[k]), V::asf(V::set1(0x46000400u))));  // q * 8193
  auto prep = [&d](uint64_t g0, uint64_t n, uint32_t *sa, uint32_t *ba) {
    decode_affine_chunk<V, SDT>(d.scales, g0, n, sa);
    decode_affine_chunk<V, SDT>(d.biases, g0, n, ba);
  };
  // kHalf: the f16 table's conversion does the last rounding (make_lut<kOutF16>, make_lut2,
  // V::expand4_h2f), so make leaves the guarded groups' sums unrounded.
  auto make_for = [&q, &qc](auto half) {
    constexpr bool kH = decltype(half)::value;
    return [&q, &qc](uint32_t sb, uint32_t bb, U *vals) TBLOB_VK_INLINE {
      const U s = V::set1(sb), bias = V::set1(bb);
      // f16 scales with |s| < 2048 and |b| < 16384 (every real model): |q*s| and |t + b| stay
      // below 47200, so both roundings are round_f16_split's (q <= 15; q*s is exact, so s times
      // q * 8193 is its split constant). AVX2 only: there it beats the four F16C round trips per
      // group (int4 g32 f16: 4.14 vs 3.85 Gelem/s in cache with round_f16_int); on AVX-512 one
      // round trip covers all 16 entries and is faster (7.6 vs 7.0).
      if (SDT == TBLOB_DTYPE_F16 && V::W == 8 && (sb & 0x7FFFFFFFu) < 0x45000000u && (bb & 0x7FFFFFFFu) < 0x46800000u) {
        for (int k = 0; k < 16 / V::W; ++k) {
          const typename V::F t = O::round_f16_split(V::mul(V::asf(q[k]), V::asf(s)), V::mul(V::asf(qc[k]), V::asf(s)));
          const typename V::F v = V::addf(t, V::asf(bias));
          vals[k] = V::asu(kH ? v : O::round_f16_split(v));
        }
      } else if (finite_bits(sb) && finite_bits(bb)) {
        for (int k = 0; k < 16 / V::W; ++k) {
          const U p = V::asu(V::mul(V::asf(q[k]), V::asf(s)));
          const U t = SDT == TBLOB_DTYPE_BF16 ? O::template round_bf16<false>(p) : O::template round_s<SDT>(p);
          const U v = V::asu(V::addf(V::asf(t), V::asf(bias)));
          // bf16 -> bf16: make_lut's RNE to bf16 is this rounding already (a second RNE of an
          // exact bf16 value changes nothing), so the sum goes in unrounded.
          if (SDT == TBLOB_DTYPE_BF16 && OUT == kOutBF16) {
            vals[k] = v;
          } else {
            vals[k] = SDT == TBLOB_DTYPE_BF16 ? O::template round_bf16<false>(v) : O::template round_s<SDT>(v);
          }
        }
      } else {
        for (int k = 0; k < 16 / V::W; ++k) {
          const U t = O::template round_s<SDT>(V::asu(V::mul(V::asf(q[k]), V::asf(s))));
          vals[k] = O::canon(O::template round_s<SDT>(V::asu(V::addf(V::asf(t), V::asf(bias)))));
        }
      }
    };
  };
  const auto make = make_for(std::false_type());
  if constexpr (SDT == TBLOB_DTYPE_F16 && V::W == 8 && OUT == kOutF16) {
    // every AVX2 f16 table (make_lut, make_lut2) converts with RNE
    hot_lut4<V, OUT, NT>(d, rb, re, out, prep, make_for(std::true_type()));
  } else if constexpr (SDT == TBLOB_DTYPE_F16 && V::W == 8 && OUT == kOutF32) {
    hot_lut4<V, OUT, NT, false, true>(d, rb, re, out, prep, make_for(std::true_type()));
  } else if constexpr (HasBf16Pack<V>::value && SDT == TBLOB_DTYPE_BF16 && OUT == kOutBF16) {
    // Both roundings of two groups' 32 entries by two vcvtne2ps2bf16 (affine4_bf16_pair), for
    // pairs of groups whose arithmetic stays normal (the int8 guard covers q <= 15).
    auto pair = [](const uint32_t *sp, const uint32_t *bp, typename V::Lut16 *l) TBLOB_VK_INLINE {
      if (!affine8_bf16_pack_ok(sp[0], bp[0]) || !affine8_bf16_pack_ok(sp[1], bp[1])) return false;
      *l = V::affine4_bf16_pair(sp, bp);
      return true;
    };
    hot_lut4<V, OUT, NT>(d, rb, re, out, prep, make, pair);
  } else {
    hot_lut4<V, OUT, NT>(d, rb, re, out, prep, make);
  }
}

template <class V, uint32_t OUT, bool NT = false>
void hot_mxfp4(const QuantDesc &d, uint64_t rb, uint64_t re, uint8_t *out) {
  using O = Ops<V>;
  using U = typename V::U;
  U f[16 / V::W];
  fp4_table<V>(f);
  const bool ffi = spec_ff_inf(d), zz = spec_zero_zero(d);
  auto prep = [&](uint64_t g0, uint64_t n, uint32_t *sa, uint32_t *) {
    decode_chunk<V>(d.scales, 1, g0, n, sa, [&](U c) { return O::template round_out<OUT>(O::e8m0(c, ffi, zz)); });
  };
  auto make = [&f](uint32_t sb, uint32_t, U *vals) TBLOB_VK_INLINE {
    const U s = V::set1(sb);
    if (finite_bits(sb)) {  // FP4 values are finite: no NaN without a non-finite scale
      for (int k = 0; k < 16 / V::W; ++k) vals[k] = V::asu(V::mul(V::asf(f[k]), V::asf(s)));
    } else {
      for (int k = 0; k < 16 / V::W; ++k) vals[k] = O::canon(V::asu(V::mul(V::asf(f[k]), V::asf(s))));
    }
  };
  // Exact bf16 values: an FP4 value (2 significant bits, 0.5..6) times a power of two is
  // exact in f32 down to 2^-128 (s >= 2^-127) and overflows to inf, and the few significant
  // bits leave the low 16 bits zero; NaN is canonical.
  hot_lut4<V, OUT, NT, true>(d, rb, re, out, prep, make);
}

template <class V, class = void>
struct HasNv4F32 : std::false_type {};
template <class V>
struct HasNv4F32<V, decltype(void(&V::template nvfp4_f32_x2<false>))> : std::true_type {};
template <class V, uint32_t OUT, bool NT = false>
void hot_nvfp4(const QuantDesc &d, uint64_t rb, uint64_t re, uint8_t *out) {
  using U = typename V::U;
  U f[16 / V::W];
  fp4_table<V>(f);
  const NvScale ns(d);
  auto prep = [&](uint64_t g0, uint64_t n, uint32_t *sa, uint32_t *) {
    decode_chunk<V>(d.scales, 1, g0, n, sa, [&](U c) {
      U s = Ops<V>::e4m3(c, ns.max_finite);
      if (ns.mode == GlobalScaleMode::kMlxAmax) s = V::asu(V::mul(V::asf(s), V::asf(V::set1(f32_bits(ns.amax_factor)))));
      return s;
    });
  };
  const bool g_finite = ns.mode != GlobalScaleMode::kMultiplier || finite_bits(f32_bits(ns.g));
  auto make = [&](uint32_t sb, uint32_t, U *vals) TBLOB_VK_INLINE {
    const U s = V::set1(sb);
    if (g_finite && finite_bits(sb)) {
      for (int k = 0; k < 16 / V::W; ++k) vals[k] = nv_value<V, false>(ns, f[k], s);
    } else {
      for (int k = 0; k < 16 / V::W; ++k) vals[k] = nv_value<V>(ns, f[k], s);
    }
  };
  if constexpr (HasNv4F32<V>::value && OUT == kOutF32) {
    // AVX2, f32: pairs of groups with finite scales (and a finite multiplier) straight from
    // the FP4 codes (V::nvfp4_f32_x2); other groups through make and expand4_perm_f32.
    const bool mul_g = ns.mode == GlobalScaleMode::kMultiplier;
    const U gv = V::set1(f32_bits(ns.g));
    const uint64_t ngroups = d.cols / 16, total = (re - rb) * ngroups, g_first = rb * ngroups;
    const uint8_t *p = d.data + rb * (d.cols / 2);
    alignas(64) uint32_t sa[kChunkGroups];
    for (uint64_t c0 = 0; c0 < total; c0 += kChunkGroups) {
      const uint64_t n = min_u64(kChunkGroups, total - c0);
      prep(g_first + c0, n, sa, nullptr);
      for (uint64_t g = 0; g < n;) {
        if (g + 2 <= n && g_finite && finite_bits(sa[g]) && finite_bits(sa[g + 1])) {
          V::template nvfp4_f32_x2<NT>(p, V::set1(sa[g]), V::set1(sa[g + 1]), mul_g, gv, out);
          p += 16;
          out += 128;
          g += 2;
          continue;
        }
        U vals[16 / V::W];
        make(sa[g], 0, vals);
        V::template expand4_perm_f32<NT>(p, 16, vals, out);
        p += 8;
        out += 64;
        ++g;
      }
    }
    return;
  }
  // Without a global scale the values are exact bf16 values: an E4M3 scale (at most 4
  // significant bits, 2^-9 <= |s| <= 480) times an FP4 value (2 bits, 0.5..6) is exact and
  // normal in f32 with at most 6 significant bits; NaN scales give the canonical NaN.
  if (ns.mode == GlobalScaleMode::kNone) {
    hot_lut4<V, OUT, NT, true>(d, rb, re, out, prep, make);
  } else {
    hot_lut4<V, OUT, NT>(d, rb, re, out, prep, make);
  }
}

// One value of affine int8 for a block lane: round_S(round_S(q*s) + b), OUT conversion fused.
template <class V, uint32_t SDT, uint32_t OUT, bool kFinite, bool NT>
TBLOB_VK_INLINE inline void affine8_store(uint8_t *dst, typename V::U q, typename V::U s, typename V::U bias) {
  using O = Ops<V>;
  using U = typename V::U;
  const U prod = V::asu(V::mul(V::cvt(q), V::asf(s)));
  const U t = kFinite && SDT == TBLOB_DTYPE_BF16 ? O::template round_bf16<false>(prod) : O::template round_s<SDT>(prod);
  const U sum = V::asu(V::addf(V::asf(t), V::asf(bias)));
  if (kFinite && SDT == TBLOB_DTYPE_F16 && OUT == kOutF16) {
    store_f16<V, NT>(dst, sum);  // round to f16 once = round_S then exact conversion
    return;
  }
  U v = kFinite && SDT == TBLOB_DTYPE_BF16 ? O::template round_bf16<false>(sum) : O::template round_s<SDT>(sum);
  if (!kFinite) v = O::canon(v);
  if (SDT == TBLOB_DTYPE_BF16 && OUT == kOutBF16) {
    store_n16<V, NT>(dst, V::template shr<16>(v));  // already a bf16 value (canonical NaN too)
    return;
  }
  O::template put<OUT, !kFinite, NT>(dst, v);
}

// bf16 scales and biases below 2^100 in magnitude, b not -0: every q*s and t + b is below
// 2^109 and either normal or, below 2^-126, a multiple of 2^-133 (t and b are bf16 values),
// which round_bf16_fp keeps exactly, as round_bf16 does. The one difference, t = +0 for q = 0
// and s < 0 where round_bf16 gives -0, cannot reach the sum since b is not -0.
inline bool affine8_bf16_fp_ok(uint32_t sb, uint32_t bb) {
  return ((sb >> 23) & 0xFFu) <= 226u && ((bb >> 23) & 0xFFu) <= 226u && bb != 0x80000000u;
}
// The value of such a group's lane (f32 bits, exactly bf16).
template <class V>
TBLOB_VK_INLINE inline typename V::U affine8_bf16_fp(typename V::U q, typename V::U s, typename V::U bias) {
  using O = Ops<V>;
  const typename V::U t = O::round_bf16_fp(V::asu(V::mul(V::cvt(q), V::asf(s))));
  return O::round_bf16_fp(V::asu(V::addf(V::asf(t), V::asf(bias))));
}

// The value of a lane of a group inside affine8_bf16_pack_ok (f32 bits, exactly bf16), both
// roundings by Veltkamp splitting with C = 2^16 + 1: for normal |x| < 2^111, c = x * C and
// c - (c - x) is x rounded to 8 significant bits, to nearest even, i.e. round_bf16 (checked
// for every f32 of 24 binades from 2^-126 to 2^111, both signs; -0 stays -0). Inside the
// guard every q*s and t + b is zero or normal and below 2^109 (affine8_bf16_pack_ok), and
// sc = s * C is exact (8 significant bits times 17), so q * sc is the split constant of the
// exact product q*s. Nine float ops after the widening, against eleven for affine8_bf16_fp.
template <class V>
TBLOB_VK_INLINE inline typename V::U affine8_bf16_split(typename V::U q, typename V::F s, typename V::F sc,
                                                        typename V::F bias) {
  const typename V::F qf = V::cvt(q);
  const typename V::F p = V::mul(qf, s), c = V::mul(qf, sc);
  const typename V::F v = V::addf(V::subf(c, V::subf(c, p)), bias);
  const typename V::F c2 = V::mul(v, V::asf(V::set1(0x47800080u)));  // 65537
  return V::asu(V::subf(c2, V::subf(c2, v)));
}

// bf16 output of a finite-group affine int8 lane, in the low 16 bits: with bf16 (or f32)
// scales the last rounding to the scale dtype and the conversion to bf16 are one RNE.
template <class V, uint32_t SDT>
TBLOB_VK_INLINE inline typename V::U affine8_bf16(typename V::U q, typename V::U s, typename V::U bias) {
  using O = Ops<V>;
  using U = typename V::U;
  const U prod = V::asu(V::mul(V::cvt(q), V::asf(s)));
  const U t = SDT == TBLOB_DTYPE_BF16 ? O::template round_bf16<false>(prod) : O::template round_s<SDT>(prod);
  const U sum = V::asu(V::addf(V::asf(t), V::asf(bias)));
  return O::template to_bf16<false>(SDT == TBLOB_DTYPE_F16 ? V::round_f16(sum) : sum);
}

// MLX affine int8 with the group size a multiple of 16: blocks of 16 codes.
template <class V, uint32_t SDT, uint32_t OUT, bool NT = false>
void hot_affine8(const QuantDesc &d, uint64_t rb, uint64_t re, uint8_t *out) {
  using U = typename V::U;
  constexpr int kPer = 16 / V::W;
  const uint64_t gsize = d.group_size, ngroups = d.cols / gsize;
  const uint64_t total = (re - rb) * ngroups, g_first = rb * ngroups;
  const uint8_t *p = d.data + rb * d.cols;
  alignas(64) uint32_t sa[kChunkGroups], ba[kChunkGroups];
  for (uint64_t c0 = 0; c0 < total; c0 += kChunkGroups) {
    const uint64_t n = min_u64(kChunkGroups, total - c0);
    decode_affine_chunk<V, SDT>(d.scales, g_first + c0, n, sa);
    decode_affine_chunk<V, SDT>(d.biases, g_first + c0, n, ba);
    for (uint64_t g = 0; g < n; ++g) {
      const U s = V::set1(sa[g]), bias = V::set1(ba[g]);
      if constexpr (HasBf16Pack<V>::value && SDT == TBLOB_DTYPE_BF16 && OUT == kOutBF16) {
        if (gsize % 32 == 0 && affine8_bf16_pack_ok(sa[g], ba[g])) {
          for (uint64_t j = 0; j < gsize; j += 32, p += 32, out += 64) V::template affine8_bf16_x32<NT>(p, s, bias, out);
          continue;
        }
      }
      if (SDT == TBLOB_DTYPE_BF16 && OUT != kOutF16 && affine8_bf16_pack_ok(sa[g], ba[g])) {
        const typename V::F sf = V::asf(s), bf = V::asf(bias);
        const typename V::F sc = V::mul(sf, V::asf(V::set1(0x47800080u)));  // s * 65537, exact
        for (uint64_t j = 0; j < gsize; j += 16, p += 16) {
          U q[kPer];
          // Streaming: the code stream prefetched 1 KiB ahead, once per line (8192 x 8192 ->
          // f32, AVX2: 0.77 -> 0.86 of the fill; 512 and 2048 bytes alike)
          if (NT && (j & 63) == 0) __builtin_prefetch(p + 1024);
          V::load8x16(p, q);
          if constexpr (OUT == kOutF32) {
            for (int k = 0; k < kPer; ++k, out += V::W * 4) store32<V, NT>(out, affine8_bf16_split<V>(q[k], sf, sc, bf));
          } else if constexpr (V::W == 8) {  // bf16, AVX2: 16 outputs narrowed and stored at once
            V::template store_n16x2<NT>(out, V::template shr<16>(affine8_bf16_split<V>(q[0], sf, sc, bf)),
                                        V::template shr<16>(affine8_bf16_split<V>(q[1], sf, sc, bf)));
            out += 32;
          } else {
            for (int k = 0; k < kPer; ++k, out += V::W * 2) {
              store_n16<V, NT>(out, V::template shr<16>(affine8_bf16_split<V>(q[k], sf, sc, bf)));
            }
          }
        }
      } else if (SDT == TBLOB_DTYPE_BF16 && OUT != kOutF16 && affine8_bf16_fp_ok(sa[g], ba[g])) {
        for (uint64_t j = 0; j < gsize; j += 16, p += 16) {
          U q[kPer];
          V::load8x16(p, q);
          if constexpr (OUT == kOutF32) {
            for (int k = 0; k < kPer; ++k, out += V::W * 4) store32<V, NT>(out, affine8_bf16_fp<V>(q[k], s, bias));
          } else if constexpr (V::W == 8) {  // bf16, AVX2: 16 outputs narrowed and stored at once
            V::template store_n16x2<NT>(out, V::template shr<16>(affine8_bf16_fp<V>(q[0], s, bias)),
                                        V::template shr<16>(affine8_bf16_fp<V>(q[1], s, bias)));
            out += 32;
          } else {
            for (int k = 0; k < kPer; ++k, out += V::W * 2) {
              store_n16<V, NT>(out, V::template shr<16>(affine8_bf16_fp<V>(q[k], s, bias)));
            }
          }
        }
      } else if (finite_bits(sa[g]) && finite_bits(ba[g])) {
        for (uint64_t j = 0; j < gsize; j += 16, p += 16) {
          U q[kPer];
          V::load8x16(p, q);
          if constexpr (V::W == 8 && OUT == kOutBF16) {  // AVX2: 16 outputs narrowed and stored at once
            V::template store_n16x2<NT>(out, affine8_bf16<V, SDT>(q[0], s, bias), affine8_bf16<V, SDT>(q[1], s, bias));
            out += 32;
            continue;
          }
          for (int k = 0; k < kPer; ++k, out += V::W * out_bytes<OUT>()) {
            affine8_store<V, SDT, OUT, true, NT>(out, q[k], s, bias);
          }
        }
      } else {
        for (uint64_t j = 0; j < gsize; j += 16, p += 16) {
          U q[kPer];
          V::load8x16(p, q);
          for (int k = 0; k < kPer; ++k, out += V::W * out_bytes<OUT>()) {
            affine8_store<V, SDT, OUT, false, NT>(out, q[k], s, bias);
          }
        }
      }
    }
  }
}

template <class V, class = void>
struct HasMx8F32 : std::false_type {};
template <class V>
struct HasMx8F32<V, decltype(void(&V::template mxfp8_f32_x32<false>))> : std::true_type {};
template <class V, class = void>
struct HasMx8Bits : std::false_type {};
template <class V>
struct HasMx8Bits<V, typename std::enable_if<V::kMx8Bits>::type> : std::true_type {};

// mxfp8: E4M3 * round_O(E8M0), 32 codes per scale, blocks of 16. The fast path decodes
// E4M3 / 256 exactly through the f16 widening and multiplies once by s' = 256 * s, which is
// the same single rounding of the same exact product as E4M3 * s whenever 256 * s is exact
// (s = 0, inf, NaN, or |s| <= 2^119); other groups take the two-step decode. NaN
// canonicalisation only when a NaN can arise (OCP E4M3 NaN codes, or a non-finite scale).
template <class V, uint32_t OUT, bool NT = false>
void hot_mxfp8(const QuantDesc &d, uint64_t rb, uint64_t re, uint8_t *out) {
  using O = Ops<V>;
  using U = typename V::U;
  constexpr int kPer = 16 / V::W;
  const uint64_t ngroups = d.cols / 32;
  const uint64_t total = (re - rb) * ngroups, g_first = rb * ngroups;
  const bool mf = spec_e4m3_max_finite(d), ffi = spec_ff_inf(d), zz = spec_zero_zero(d);
  const uint8_t *p = d.data + rb * d.cols;
  const U k256 = V::set1(0x43800000u);
  alignas(64) uint32_t sa[kChunkGroups];
  for (uint64_t c0 = 0; c0 < total; c0 += kChunkGroups) {
    const uint64_t n = min_u64(kChunkGroups, total - c0);
    decode_chunk<V>(d.scales, 1, g_first + c0, n, sa, [&](U c) { return O::template round_out<OUT>(O::e8m0(c, ffi, zz)); });
    for (uint64_t g = 0; g < n; ++g) {
      const uint32_t sb = sa[g];
      const bool may_nan = !mf || !finite_bits(sb);
      const uint32_t sexp = (sb >> 23) & 0xFFu;
      if constexpr (HasMx8Bits<V>::value && OUT == kOutBF16) {
        if (sexp >= 10u && sexp <= 246u) {
          V::template mxfp8_bf16_x32<NT>(p, sexp, !mf, out);
          p += 32;
          out += 64;
          continue;
        }
      }
      if constexpr (HasMx8F32<V>::value && OUT == kOutF32) {
        if (sexp <= 246u) {  // finite s, 256 * s exact: NaN only from the codes
          if (NT && (g & 1) == 0) __builtin_prefetch(p + 1024);  // as in hot_affine8 (0.84 -> 0.87)
          V::template mxfp8_f32_x32<NT>(p, V::asu(V::mul(V::asf(V::set1(sb)), V::asf(k256))), !mf, out);
          p += 32;
          out += 128;
          continue;
        }
      }
      if (sexp <= 246u || sexp == 255u) {
        const U s256 = V::asu(V::mul(V::asf(V::set1(sb)), V::asf(k256)));  // exact here
        // bf16 output: the scale is a power of two (or 0, inf, NaN), so with sexp >= 10 every
        // product (|E4M3| >= 2^-9) is normal, zero, inf or NaN with at most 4 significant
        // bits: its bf16 is its top half (canonical NaN: 0x7FC0, the NaN rule's too).
        const bool bf16_exact = OUT == kOutBF16 && sexp >= 10u;
        if (NT && (g & 1) == 0) __builtin_prefetch(p + 1024);  // as in hot_affine8
        for (int h = 0; h < 2; ++h, p += 16) {
          U e[kPer];
          V::e4m3_div256x16(p, e, !mf);
          if constexpr (V::W == 8 && OUT == kOutBF16) {  // AVX2: 16 outputs narrowed and stored at once
            U v[2];
            for (int k = 0; k < 2; ++k) {
              v[k] = V::asu(V::mul(V::asf(e[k]), V::asf(s256)));
              if (may_nan) v[k] = O::canon(v[k]);
              // a canonical NaN rounds to 0x7FC0 like the NaN rule
              v[k] = bf16_exact ? V::template shr<16>(v[k]) : O::template to_bf16<false>(v[k]);
            }
            V::template store_n16x2<NT>(out, v[0], v[1]);
            out += 32;
            continue;
          }
          for (int k = 0; k < kPer; ++k, out += V::W * out_bytes<OUT>()) {
            const U v = V::asu(V::mul(V::asf(e[k]), V::asf(s256)));
            if (bf16_exact) {
              store_n16<V, NT>(out, V::template shr<16>(may_nan ? O::canon(v) : v));
            } else if (may_nan) {
              O::template put<OUT, true, NT>(out, O::canon(v));
            } else {
              O::template put<OUT, false, NT>(out, v);
            }
          }
        }
        continue;
      }
      const U s = V::set1(sb);
      for (int h = 0; h < 2; ++h, p += 16) {
        U c[kPer];
        V::load8x16(p, c);
        for (int k = 0; k < kPer; ++k, out += V::W * out_bytes<OUT>()) {
          const U v = V::asu(V::mul(V::asf(O::e4m3(c[k], mf)), V::asf(s)));
          if (may_nan) {
            O::template put<OUT, true, NT>(out, O::canon(v));
          } else {
            O::template put<OUT, false, NT>(out, v);
          }
        }
      }
    }
  }
}

// =============================================================================================
// SLM1 q8_0 / q4_0 (kSlm1Q8 / kSlm1Q4): v = f32(q) * s, canonical NaN, rounded once to OUT.
// A finite scale times a code in -128..127 is never NaN (it may overflow to +-inf, which every
// conversion keeps), so NaN canonicalisation runs only for rows/blocks whose scale is not
// finite. f16 output goes through the hardware RNE conversion, bf16 through the integer RNE.
// =============================================================================================

// q4_0 code tables: lanes of codes k*W .. k*W+W-1 sign-extended (8..15 -> -8..-1), as f32.
template <class V>
void sint4_table(typename V::U *q) {
  alignas(64) float t[16];
  for (int i = 0; i < 16; ++i) t[i] = static_cast<float>(i < 8 ? i : i - 16);
  for (int k = 0; k < 16 / V::W; ++k) q[k] = V::load32(reinterpret_cast<const uint8_t *>(t + k * V::W));
}

// One row of q8_0: cols int8 codes at p, one scale.
template <class V, uint32_t OUT, bool kFinite>
uint8_t *slm1_q8_row(const uint8_t *p, uint64_t cols, typename V::U s, uint8_t *out) {
  using O = Ops<V>;
  using U = typename V::U;
  constexpr int kPer = 16 / V::W;
  uint64_t j = 0;
  for (; j + 16 <= cols; j += 16, p += 16) {
    U q[kPer];
    V::load8x16s(p, q);
    for (int k = 0; k < kPer; ++k, out += V::W * out_bytes<OUT>()) {
      const U v = V::asu(V::mul(V::cvt(q[k]), V::asf(s)));
      if (kFinite) {
        O::template put<OUT, false>(out, v);
      } else {
        O::template put<OUT>(out, O::canon(v));
      }
    }
  }
  if (j < cols) {  // fewer than 16 codes left: a zero-padded copy (never read past the row)
    alignas(16) uint8_t tmp[16];
    const uint8_t *w = tail_copy(p, cols - j, 1, tmp, sizeof(tmp));
    U q[kPer];
    V::load8x16s(w, q);
    for (int k = 0; k < kPer && j < cols; ++k) {
      const uint64_t n = min_u64(V::W, cols - j);
      O::template put_n<OUT>(out, O::canon(V::asu(V::mul(V::cvt(q[k]), V::asf(s)))), n);
      out += n * out_bytes<OUT>();
      j += n;
    }
  }
  return out;
}

template <class V, uint32_t OUT>
void slm1_q8(const QuantDesc &d, uint64_t rb, uint64_t re, uint8_t *out) {
  const uint64_t cols = d.cols;
  for (uint64_t r = rb; r < re; ++r) {
    const uint32_t sb = load_le32(d.scales + 4 * r);
    const uint8_t *p = d.data + r * cols;
    if (finite_bits(sb)) {
      out = slm1_q8_row<V, OUT, true>(p, cols, V::set1(sb), out);
    } else {
      out = slm1_q8_row<V, OUT, false>(p, cols, V::set1(sb), out);
    }
  }
}

// q4_0 with the block a multiple of 16 (32/64/128 in practice): the per-block 16-entry result
// table, expanded by the ISA's shuffle (hot_lut4).
template <class V, uint32_t OUT>
void hot_slm1_q4(const QuantDesc &d, uint64_t rb, uint64_t re, uint8_t *out) {
  using O = Ops<V>;
  using U = typename V::U;
  U q[16 / V::W];
  sint4_table<V>(q);
  auto prep = [&d](uint64_t g0, uint64_t n, uint32_t *sa, uint32_t *) {
    decode_affine_chunk<V, TBLOB_DTYPE_F32>(d.scales, g0, n, sa);
  };
  auto make = [&q](uint32_t sb, uint32_t, U *vals) TBLOB_VK_INLINE {
    const U s = V::set1(sb);
    if (finite_bits(sb)) {
      for (int k = 0; k < 16 / V::W; ++k) vals[k] = V::asu(V::mul(V::asf(q[k]), V::asf(s)));
    } else {
      for (int k = 0; k < 16 / V::W; ++k) vals[k] = O::canon(V::asu(V::mul(V::asf(q[k]), V::asf(s))));
    }
  };
  hot_lut4<V, OUT, false>(d, rb, re, out, prep, make);
}

// q4_0, any even block: W columns at a time along each row, lane scales looked up per lane.
template <class V, uint32_t OUT>
void gen_slm1_q4(const QuantDesc &d, uint64_t rb, uint64_t re, uint8_t *out) {
  using O = Ops<V>;
  using U = typename V::U;
  const uint64_t cols = d.cols, gsize = d.group_size, nblocks = cols / gsize;
  const uint8_t *end = d.data + d.data_bytes;
  const U lanebits = lane_bits<V>(4);
  const U mask = V::set1(15);
  alignas(64) uint32_t sl[V::W];
  for (uint64_t r = rb; r < re; ++r) {
    const uint8_t *row = d.data + r * (cols / 2);
    const uint8_t *srow = d.scales + 4 * r * nblocks;
    for (uint64_t j = 0; j < cols; j += V::W) {
      const uint64_t n = min_u64(V::W, cols - j);
      for (int i = 0; i < V::W; ++i) {
        const uint64_t c = j + static_cast<uint64_t>(i) < cols ? j + static_cast<uint64_t>(i) : j;
        sl[i] = load_le32(srow + 4 * (c / gsize));
      }
      const U c = extract_codes<V>(row, end, j, 4, lanebits, mask);
      const U q = V::sel(V::gt(c, V::set1(7)), V::add(c, V::set1(0xFFFFFFF0u)), c);  // sign-extend
      const U s = V::load32(reinterpret_cast<const uint8_t *>(sl));
      O::template put_n<OUT>(out, O::canon(V::asu(V::mul(V::cvt(q), V::asf(s)))), n);
      out += n * out_bytes<OUT>();
    }
  }
}

// =============================================================================================
// Entry points (the kernel table slots) and the table
// =============================================================================================
template <class V, uint32_t OUT>
void affine_entry(const QuantDesc &d, uint64_t rb, uint64_t re, void *dst) {
  uint8_t *out = static_cast<uint8_t *>(dst);
  const bool hot4 = d.bits == 4 && d.group_size % 16 == 0;
  const bool hot8 = d.bits == 8 && d.group_size % 16 == 0;
  switch (d.scale_dtype) {
    case TBLOB_DTYPE_BF16:
      if (hot4) return hot_affine4<V, TBLOB_DTYPE_BF16, OUT>(d, rb, re, out);
      if (hot8) return hot_affine8<V, TBLOB_DTYPE_BF16, OUT>(d, rb, re, out);
      return gen_affine<V, TBLOB_DTYPE_BF16, OUT>(d, rb, re, out);
    case TBLOB_DTYPE_F16:
      if (hot4) return hot_affine4<V, TBLOB_DTYPE_F16, OUT>(d, rb, re, out);
      if (hot8) return hot_affine8<V, TBLOB_DTYPE_F16, OUT>(d, rb, re, out);
      return gen_affine<V, TBLOB_DTYPE_F16, OUT>(d, rb, re, out);
    default:
      if (hot4) return hot_affine4<V, TBLOB_DTYPE_F32, OUT>(d, rb, re, out);
      if (hot8) return hot_affine8<V, TBLOB_DTYPE_F32, OUT>(d, rb, re, out);
      return gen_affine<V, TBLOB_DTYPE_F32, OUT>(d, rb, re, out);
  }
}
template <class V, uint32_t OUT>
void mxfp4_entry(const QuantDesc &d, uint64_t rb, uint64_t re, void *dst) {
  hot_mxfp4<V, OUT>(d, rb, re, static_cast<uint8_t *>(dst));  // group size is always 32
}
template <class V, uint32_t OUT>
void mxfp8_entry(const QuantDesc &d, uint64_t rb, uint64_t re, void *dst) {
  hot_mxfp8<V, OUT>(d, rb, re, static_cast<uint8_t *>(dst));
}
template <class V, uint32_t OUT>
void nvfp4_entry(const QuantDesc &d, uint64_t rb, uint64_t re, void *dst) {
  hot_nvfp4<V, OUT>(d, rb, re, static_cast<uint8_t *>(dst));  // group size is always 16
}
template <class V, uint32_t OUT>
void slm1_q8_entry(const QuantDesc &d, uint64_t rb, uint64_t re, void *dst) {
  slm1_q8<V, OUT>(d, rb, re, static_cast<uint8_t *>(dst));
}
template <class V, uint32_t OUT>
void slm1_q4_entry(const QuantDesc &d, uint64_t rb, uint64_t re, void *dst) {
  if (d.group_size % 16 == 0) return hot_slm1_q4<V, OUT>(d, rb, re, static_cast<uint8_t *>(dst));
  gen_slm1_q4<V, OUT>(d, rb, re, static_cast<uint8_t *>(dst));
}

// Non-temporal entries (sets whose V has streaming stores): the hot kernels writing the
// destination directly, which dequant.cpp calls for large outputs with dst aligned to
// kNtAlign, so decoding overlaps the drain of the stores instead of alternating with a
// staging copy. Every store of a hot kernel lands on a multiple of its own width from dst
// (W outputs per put; the 4-bit expansions store whole 32-code runs from each group start)
// except AVX-512's 64-byte runs of 16-bit outputs in groups that are not a multiple of 32
// codes (other than lone 16-code groups): those shapes, like the generic kernels, return
// false without writing and take the staging path.
template <class V, uint32_t OUT>
bool affine_nt(const QuantDesc &d, uint64_t rb, uint64_t re, void *dst) {
  uint8_t *out = static_cast<uint8_t *>(dst);
  const bool runs_aligned = V::W == 8 || OUT == kOutF32 || d.group_size % 32 == 0 || d.group_size == 16;
  const bool hot4 = d.bits == 4 && d.group_size % 16 == 0 && runs_aligned;
  const bool hot8 = d.bits == 8 && d.group_size % 16 == 0;
  if (!hot4 && !hot8) return false;
  switch (d.scale_dtype) {
    case TBLOB_DTYPE_BF16:
      if (hot4) {
        hot_affine4<V, TBLOB_DTYPE_BF16, OUT, true>(d, rb, re, out);
      } else {
        hot_affine8<V, TBLOB_DTYPE_BF16, OUT, true>(d, rb, re, out);
      }
      return true;
    case TBLOB_DTYPE_F16:
      if (hot4) {
        hot_affine4<V, TBLOB_DTYPE_F16, OUT, true>(d, rb, re, out);
      } else {
        hot_affine8<V, TBLOB_DTYPE_F16, OUT, true>(d, rb, re, out);
      }
      return true;
    default:
      if (hot4) {
        hot_affine4<V, TBLOB_DTYPE_F32, OUT, true>(d, rb, re, out);
      } else {
        hot_affine8<V, TBLOB_DTYPE_F32, OUT, true>(d, rb, re, out);
      }
      return true;
  }
}
template <class V, uint32_t OUT>
bool mxfp4_nt(const QuantDesc &d, uint64_t rb, uint64_t re, void *dst) {
  hot_mxfp4<V, OUT, true>(d, rb, re, static_cast<uint8_t *>(dst));
  return true;
}
template <class V, uint32_t OUT>
bool mxfp8_nt(const QuantDesc &d, uint64_t rb, uint64_t re, void *dst) {
  hot_mxfp8<V, OUT, true>(d, rb, re, static_cast<uint8_t *>(dst));
  return true;
}
template <class V, uint32_t OUT>
bool nvfp4_nt(const QuantDesc &d, uint64_t rb, uint64_t re, void *dst) {
  hot_nvfp4<V, OUT, true>(d, rb, re, static_cast<uint8_t *>(dst));
  return true;
}
template <class V, class = void>
struct HasStream : std::false_type {};
template <class V>
struct HasStream<V, decltype(void(&V::stream32))> : std::true_type {};

template <class V, uint32_t SCHEME, uint32_t OUT>
void plain_entry(const QuantDesc &d, uint64_t rb, uint64_t re, void *dst) {
  gen_plain<V, SCHEME, OUT>(d, rb, re, static_cast<uint8_t *>(dst));
}
// Overwrites the slots this ISA implements in a copy of the scalar table (x86_sets.cpp makes
// the copy, so schemes added later keep their scalar entry until a SIMD one exists). The
// same-dtype float copies (F16->F16, BF16->BF16, F32->F32) stay the scalar memcpy.
template <class V>
void fill_table(KernelTable *t) {
  auto set3 = [t](QuantScheme s, DequantRowsFn a, DequantRowsFn b, DequantRowsFn c) {
    DequantRowsFn *row = t->rows[static_cast<uint32_t>(s)];
    if (a != nullptr) row[kOutF32] = a;
    if (b != nullptr) row[kOutF16] = b;
    if (c != nullptr) row[kOutBF16] = c;
  };
#define TBLOB_VK_PLAIN(s) \
  &plain_entry<V, static_cast<uint32_t>(s), kOutF32>, &plain_entry<V, static_cast<uint32_t>(s), kOutF16>, \
      &plain_entry<V, static_cast<uint32_t>(s), kOutBF16>
  set3(QuantScheme::kMlxAffine, &affine_entry<V, kOutF32>, &affine_entry<V, kOutF16>, &affine_entry<V, kOutBF16>);
  set3(QuantScheme::kMxfp4, &mxfp4_entry<V, kOutF32>, &mxfp4_entry<V, kOutF16>, &mxfp4_entry<V, kOutBF16>);
  set3(QuantScheme::kMxfp8, &mxfp8_entry<V, kOutF32>, &mxfp8_entry<V, kOutF16>, &mxfp8_entry<V, kOutBF16>);
  set3(QuantScheme::kNvfp4, &nvfp4_entry<V, kOutF32>, &nvfp4_entry<V, kOutF16>, &nvfp4_entry<V, kOutBF16>);
  set3(QuantScheme::kF8E4M3, TBLOB_VK_PLAIN(QuantScheme::kF8E4M3));
  set3(QuantScheme::kF8E5M2, TBLOB_VK_PLAIN(QuantScheme::kF8E5M2));
  set3(QuantScheme::kF8E8M0, TBLOB_VK_PLAIN(QuantScheme::kF8E8M0));
  set3(QuantScheme::kF8E4M3Fnuz, TBLOB_VK_PLAIN(QuantScheme::kF8E4M3Fnuz));
  set3(QuantScheme::kF8E5M2Fnuz, TBLOB_VK_PLAIN(QuantScheme::kF8E5M2Fnuz));
  set3(QuantScheme::kF4E2M1, TBLOB_VK_PLAIN(QuantScheme::kF4E2M1));
  set3(QuantScheme::kSlm1Q8, &slm1_q8_entry<V, kOutF32>, &slm1_q8_entry<V, kOutF16>, &slm1_q8_entry<V, kOutBF16>);
  set3(QuantScheme::kSlm1Q4, &slm1_q4_entry<V, kOutF32>, &slm1_q4_entry<V, kOutF16>, &slm1_q4_entry<V, kOutBF16>);
#undef TBLOB_VK_PLAIN
  constexpr uint32_t kF16 = static_cast<uint32_t>(QuantScheme::kF16);
  constexpr uint32_t kBF16 = static_cast<uint32_t>(QuantScheme::kBF16);
  constexpr uint32_t kF32 = static_cast<uint32_t>(QuantScheme::kF32);
  set3(QuantScheme::kF16, &plain_entry<V, kF16, kOutF32>, nullptr, &plain_entry<V, kF16, kOutBF16>);
  set3(QuantScheme::kBF16, &plain_entry<V, kBF16, kOutF32>, &plain_entry<V, kBF16, kOutF16>, nullptr);
  set3(QuantScheme::kF32, nullptr, &plain_entry<V, kF32, kOutF16>, &plain_entry<V, kF32, kOutBF16>);
  if constexpr (HasStream<V>::value) {
    auto nt3 = [t](QuantScheme s, DequantNtFn a, DequantNtFn b, DequantNtFn c) {
      DequantNtFn *row = t->nt[static_cast<uint32_t>(s)];
      row[kOutF32] = a;
      row[kOutF16] = b;
      row[kOutBF16] = c;
    };
    nt3(QuantScheme::kMlxAffine, &affine_nt<V, kOutF32>, &affine_nt<V, kOutF16>, &affine_nt<V, kOutBF16>);
    nt3(QuantScheme::kMxfp4, &mxfp4_nt<V, kOutF32>, &mxfp4_nt<V, kOutF16>, &mxfp4_nt<V, kOutBF16>);
    nt3(QuantScheme::kMxfp8, &mxfp8_nt<V, kOutF32>, &mxfp8_nt<V, kOutF16>, &mxfp8_nt<V, kOutBF16>);
    nt3(QuantScheme::kNvfp4, &nvfp4_nt<V, kOutF32>, &nvfp4_nt<V, kOutF16>, &nvfp4_nt<V, kOutBF16>);
  }
}

}  // namespace vk
}  // namespace
}  // namespace tblob
