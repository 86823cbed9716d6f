// SLM1 q8_0 / q4_0 quantizers (docs/slm1.md section 8), the one implementation behind both the
// SLM1 writer and tblob_quant_quantize:
//   scale = f32(amax / QMAX) (1.0 when that is 0), q = roundTiesToEven(f32(x / scale)),
//   clamped to [-QMAX, QMAX]; QMAX 127 for q8_0 (one scale per row), 7 for q4_0 (one scale
//   per block of a row; low nibble first). Assumes the default floating-point rounding mode.
#pragma once
#include <cstdint>

namespace tblob {
namespace quant {

float slm1_scale(float amax, float qmax);
int32_t slm1_code(float x, float scale, int32_t qmax);

}  // namespace quant
}  // namespace tblob
