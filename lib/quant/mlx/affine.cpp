// MLX affine quantization, as mlx 0.32.4's CPU fast::Quantize computes it (docs/quantize.md):
// everything in f32 from the exact input values, one rounding of scale and bias to the scale
// dtype at the end; codes use the f32 scale.
#include <cmath>
#include <cstring>

#include "quant/encode.h"
#include "quant/quantize.h"

namespace tblob {
namespace quant {

namespace {

// One group of n (32/64/128) finite values; false (and *why) when the group cannot be stored.
bool affine_group(const float *x, uint32_t n, uint32_t bits, uint32_t sdt, uint8_t *codes,
                  float *scale_out, float *bias_out, const char **why) {
  float wmax = -INFINITY, wmin = INFINITY;
  for (uint32_t j = 0; j < n; ++j) {  // std::max / std::min argument order, as MLX
    wmax = (wmax < x[j]) ? x[j] : wmax;
    wmin = (x[j] < wmin) ? x[j] : wmin;
  }
  const float n_bins = static_cast<float>((1u << bits) - 1u);
  const float eps = 1e-7f;
  const bool mask = std::fabs(wmin) > std::fabs(wmax);
  float scale = (wmax - wmin) / n_bins;
  scale = (scale < eps) ? eps : scale;
  if (!finite(scale)) {
    *why = "the group's range (max - min) overflows f32";
    return false;
  }
  scale = mask ? scale : -scale;
  const float edge = mask ? wmin : wmax;
  const float q0 = rint_even(edge / scale);
  float bias = 0.0f;
  if (q0 != 0.0f) {
    scale = edge / q0;
    bias = edge;
  }
  const float s_stored = round_dt(sdt, scale), b_stored = round_dt(sdt, bias);
  if (!finite(s_stored) || !finite(b_stored)) {
    *why = "the group's scale or bias overflows the scale dtype";
    return false;
  }
  // Codes: a little-endian bit stream, LSB first; n * bits is a multiple of 32.
  uint64_t acc = 0;
  uint32_t nacc = 0, out = 0;
  for (uint32_t j = 0; j < n; ++j) {
    const float d = x[j] - bias;
    float q;
    if (scale == 0.0f) {
      // A group of equal values so large that edge / eps overflowed: MLX divides by a zero
      // scale. d / +-0 is +inf (code n_bins) when the signs agree, else -inf or NaN (code 0,
      // what MLX's float-to-integer conversion gives on x86 and arm64). Written out: neither
      // the division by zero nor the conversion of NaN is defined C++ (fuzz_quant_mlx).
      q = (d != 0.0f && std::signbit(d) == std::signbit(scale)) ? n_bins : 0.0f;
    } else {
      q = rint_even(d / scale);
      q = (q < 0.0f) ? 0.0f : q;
    }
    q = (n_bins < q) ? n_bins : q;
    acc |= static_cast<uint64_t>(static_cast<uint32_t>(q)) << nacc;
    nacc += bits;
    while (nacc >= 8) {
      codes[out++] = static_cast<uint8_t>(acc);
      acc >>= 8;
      nacc -= 8;
    }
  }
  *scale_out = s_stored;
  *bias_out = b_stored;
  return true;
}

}  // namespace

void affine_rows(const QuantDesc &d, const Source &src, uint64_t ub, uint64_t ue, ValueError *err) {
  const uint32_t gs = d.group_size, bits = d.bits;
  const uint64_t ngroups = d.cols / gs, row_bytes = d.cols * bits / 8, group_bytes = gs * bits / 8u;
  uint8_t *data = const_cast<uint8_t *>(d.data);
  uint8_t *scales = const_cast<uint8_t *>(d.scales);
  uint8_t *biases = const_cast<uint8_t *>(d.biases);
  float x[128];
  for (uint64_t r = ub; r < ue; ++r) {
    for (uint64_t g = 0; g < ngroups; ++g) {
      const uint64_t c0 = g * gs;
      bool ok = true;
      src.span(r, c0, gs, x);
      for (uint32_t j = 0; j < gs; ++j) {
        if (ok && !finite(x[j])) {
          ValueError e;
          e.row = r, e.col = c0 + j, e.why = kNonFinite;
          err->keep(e);
          ok = false;
        }
      }
      float s = 0.0f, b = 0.0f;
      const char *why = nullptr;
      uint8_t *codes = data + r * row_bytes + g * group_bytes;
      if (ok && !affine_group(x, gs, bits, d.scale_dtype, codes, &s, &b, &why)) {
        ValueError e;
        e.row = r, e.col = c0, e.why = why;
        err->keep(e);
        ok = false;
      }
      if (!ok) std::memset(codes, 0, group_bytes);
      store_dt(d.scale_dtype, scales, r * ngroups + g, s);
      store_dt(d.bias_dtype, biases, r * ngroups + g, b);
    }
  }
}

}  // namespace quant
}  // namespace tblob
