// The AVX2 kernel set: vec_kernels.h instantiated with VAvx2. Compiled with -mavx2 -mf16c
// -ffp-contract=off (no FMA: MLX's affine arithmetic rounds the product and the sum apart).
#include <cstring>

#include "dequant/x86/avx2_vec.h"
#include "dequant/x86/x86_kernels.h"

namespace tblob {
namespace {

// nvfp4 -> f32: 16-code groups are too short to pay for the byte-plane table of
// VAvx2::expand4 (8 shuffles per group), so each group's two 8-entry halves of the result
// table (the same values hot_nvfp4 computes) are looked up with vpermps and blended on code
// bit 3, 8 outputs at a time. NT: streaming stores (dst 32-byte aligned).
template <bool NT>
void nvfp4_f32_rows(const QuantDesc &d, uint64_t rb, uint64_t re, void *dst) {
  using V = vk::VAvx2;
  using U = V::U;
  U f[2];
  vk::fp4_table<V>(f);
  const vk::NvScale ns(d);
  const uint64_t ngroups = d.cols / 16;
  const uint64_t total = (re - rb) * ngroups, g_first = rb * ngroups;
  const uint8_t *p = d.data + rb * (d.cols / 2);
  uint8_t *out = static_cast<uint8_t *>(dst);
  alignas(64) uint32_t sa[vk::kChunkGroups];
  const __m128i m = _mm_set1_epi8(0x0F);
  for (uint64_t c0 = 0; c0 < total; c0 += vk::kChunkGroups) {
    const uint64_t n = vk::min_u64(vk::kChunkGroups, total - c0);
    vk::decode_chunk<V>(d.scales, 1, g_first + c0, n, sa, [&](U c) {
      U s = vk::Ops<V>::e4m3(c, ns.max_finite);
      if (ns.mode == GlobalScaleMode::kMlxAmax) s = V::asu(V::mul(V::asf(s), V::asf(V::set1(dq::f32_bits(ns.amax_factor)))));
      return s;
    });
    for (uint64_t g = 0; g < n; ++g, p += 8, out += 64) {
      const U s = V::set1(sa[g]);
      const __m256 lo = V::asf(vk::nv_value<V>(ns, f[0], s)), hi = V::asf(vk::nv_value<V>(ns, f[1], s));
      const __m128i x = _mm_loadl_epi64(reinterpret_cast<const __m128i *>(p));
      const __m128i c = _mm_unpacklo_epi8(_mm_and_si128(x, m), _mm_and_si128(_mm_srli_epi16(x, 4), m));
      const __m256i i0 = _mm256_cvtepu8_epi32(c), i1 = _mm256_cvtepu8_epi32(_mm_srli_si128(c, 8));
      V::st256<NT>(out, _mm256_castps_si256(_mm256_blendv_ps(_mm256_permutevar8x32_ps(lo, i0),
                                                             _mm256_permutevar8x32_ps(hi, i0),
                                                             _mm256_castsi256_ps(_mm256_slli_epi32(i0, 28)))));
      V::st256<NT>(out + 32, _mm256_castps_si256(_mm256_blendv_ps(_mm256_permutevar8x32_ps(lo, i1),
                                                                  _mm256_permutevar8x32_ps(hi, i1),
                                                                  _mm256_castsi256_ps(_mm256_slli_epi32(i1, 28)))));
    }
  }
}

void nvfp4_f32(const QuantDesc &d, uint64_t rb, uint64_t re, void *dst) { nvfp4_f32_rows<false>(d, rb, re, dst); }
bool nvfp4_f32_nt(const QuantDesc &d, uint64_t rb, uint64_t re, void *dst) {
  nvfp4_f32_rows<true>(d, rb, re, dst);
  return true;
}

}  // namespace

void avx2_fill_kernels(KernelTable *t) {
  vk::fill_table<vk::VAvx2>(t);
  t->rows[static_cast<uint32_t>(QuantScheme::kNvfp4)][kOutF32] = &nvfp4_f32;
  t->nt[static_cast<uint32_t>(QuantScheme::kNvfp4)][kOutF32] = &nvfp4_f32_nt;
}

void avx2_stream_copy(void *dst, const void *src, size_t n) {
  uint8_t *d = static_cast<uint8_t *>(dst);
  const uint8_t *s = static_cast<const uint8_t *>(src);
  size_t head = (32u - (reinterpret_cast<uintptr_t>(d) & 31u)) & 31u;
  if (head > n) head = n;
  std::memcpy(d, s, head);
  d += head;
  s += head;
  n -= head;
  for (; n >= 128; n -= 128, d += 128, s += 128) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(s));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(s + 32));
    const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(s + 64));
    const __m256i e = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(s + 96));
    _mm256_stream_si256(reinterpret_cast<__m256i *>(d), a);
    _mm256_stream_si256(reinterpret_cast<__m256i *>(d + 32), b);
    _mm256_stream_si256(reinterpret_cast<__m256i *>(d + 64), c);
    _mm256_stream_si256(reinterpret_cast<__m256i *>(d + 96), e);
  }
  for (; n >= 32; n -= 32, d += 32, s += 32) {
    _mm256_stream_si256(reinterpret_cast<__m256i *>(d), _mm256_loadu_si256(reinterpret_cast<const __m256i *>(s)));
  }
  std::memcpy(d, s, n);
}

}  // namespace tblob
