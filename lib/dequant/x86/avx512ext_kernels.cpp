// Entries of the "avx512" kernel set that need AVX512_BF16 and AVX512_VBMI besides F+BW+VL:
// vec_kernels.h's MLX affine to bf16 entries instantiated with VAvx512Ext, which x86_sets.cpp
// writes over the avx512 table only when cpuid reports both (the plain avx512 entries stay for
// CPUs without them). Compiled with the avx512 flags plus -mavx512bf16 -mavx512vbmi
// -ffp-contract=off, in a translation unit of its own so that no entry of the plain set can
// pick up these instructions.
//
// vcvtne2ps2bf16 rounds 32 f32 lanes to bf16 to nearest even in one instruction, but reads
// subnormal inputs as zero and quiets NaNs its own way (convert.h's f32_to_bf16 keeps
// subnormals): it is used only for affine groups whose arithmetic cannot produce a
// subnormal, an infinity or a NaN (affine8_bf16_pack_ok).
#include <cstring>

#include "dequant/x86/avx512_vec.h"
#include "dequant/x86/x86_kernels.h"

namespace tblob {
namespace {
namespace vk {

struct VAvx512Ext : VAvx512 {
  static constexpr bool kBf16Pack = true;

  static __m512i pack_bf16(__m512 words16_31, __m512 words0_15) {
    return reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(words16_31, words0_15));
  }
  // The bf16 values, in order, of round_bf16(round_bf16(q * s) + b) for the 32 int8 codes at
  // p (a group that affine8_bf16_pack_ok accepts). The codes are zero-extended by vpermb in
  // the order codes 0,16,1,17,..,7,23 (lo) and 8,24,..,15,31 (hi): the first pack then holds
  // code i in word 2i and code 16 + i in word 2i + 1, so its dword view gives codes 0..15
  // (low words, shifted up) and 16..31 (high words, masked) as f32 in order, and the second
  // pack (words 0-15 from its second operand) stores them in order with no permute.
  template <bool NT>
  TBLOB_VK_INLINE static void affine8_bf16_x32(const uint8_t *p, U s, U bias, uint8_t *dst) {
    const __m512i c = _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)));
    const __mmask64 m = 0x1111111111111111ull;  // byte 0 of each dword; the rest zero
    const __m512i lo_codes = _mm512_maskz_permutexvar_epi8(m, lo_idx(), c);
    const __m512i hi_codes = _mm512_maskz_permutexvar_epi8(m, hi_idx(), c);
    const __m512 sf = _mm512_castsi512_ps(s), bf = _mm512_castsi512_ps(bias);
    const __m512i t = pack_bf16(_mm512_mul_ps(_mm512_cvtepi32_ps(hi_codes), sf), _mm512_mul_ps(_mm512_cvtepi32_ps(lo_codes), sf));
    const __m512 even = _mm512_castsi512_ps(_mm512_slli_epi32(t, 16));
    const __m512 odd = _mm512_castsi512_ps(_mm512_and_si512(t, _mm512_set1_epi32(static_cast<int>(0xFFFF0000u))));
    st512<NT>(dst, pack_bf16(_mm512_add_ps(odd, bf), _mm512_add_ps(even, bf)));
  }
  // The bf16 table of two affine int4 groups (scales sp[0..1], biases bp[0..1] as f32 bits,
  // both accepted by affine8_bf16_pack_ok): group a's 16 entries in words 0-15, b's in 16-31.
  // The same interleave as affine8_bf16_x32: the first pack's lanes alternate a's and b's
  // entries (q = lane / 2 and 8 + lane / 2, the scale pair broadcast as a qword), so its
  // dword view gives a's rounded products (low words) and b's (high words) in order.
  TBLOB_VK_INLINE static Avx512Lut16 affine4_bf16_pair(const uint32_t *sp, const uint32_t *bp) {
    uint64_t s2;
    std::memcpy(&s2, sp, 8);
    const __m512 s = _mm512_castsi512_ps(_mm512_set1_epi64(static_cast<long long>(s2)));
    const __m512 qlo = _mm512_set_ps(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
    const __m512 qhi = _mm512_set_ps(15, 15, 14, 14, 13, 13, 12, 12, 11, 11, 10, 10, 9, 9, 8, 8);
    const __m512i t = pack_bf16(_mm512_mul_ps(qhi, s), _mm512_mul_ps(qlo, s));
    const __m512 a = _mm512_castsi512_ps(_mm512_slli_epi32(t, 16));
    const __m512 b = _mm512_castsi512_ps(_mm512_and_si512(t, _mm512_set1_epi32(static_cast<int>(0xFFFF0000u))));
    const __m512 ba = _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int>(bp[0])));
    const __m512 bb = _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int>(bp[1])));
    return Avx512Lut16{pack_bf16(_mm512_add_ps(b, bb), _mm512_add_ps(a, ba))};
  }
  static __m512i lo_idx() {  // dword 2i: byte i, dword 2i + 1: byte 16 + i (i < 8)
    return _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  }
  static __m512i hi_idx() {
    return _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);
  }
};

}  // namespace vk
}  // namespace

// Only the slots whose kernels use the extensions (MLX affine to bf16: the int4 / int8 paths
// for bf16 scales); the rest of the avx512 table stays as it is.
void avx512ext_fill_kernels(KernelTable *t) {
  constexpr uint32_t affine = static_cast<uint32_t>(QuantScheme::kMlxAffine);
  t->rows[affine][kOutBF16] = &vk::affine_entry<vk::VAvx512Ext, kOutBF16>;
  t->nt[affine][kOutBF16] = &vk::affine_nt<vk::VAvx512Ext, kOutBF16>;
}

}  // namespace tblob
