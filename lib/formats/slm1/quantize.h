// The SLM1 writer's quantizers, bit-exact as docs/slm1.md section 8 pins them:
//   scale = f32(amax / QMAX) (1.0 when that is 0), q = roundTiesToEven(f32(x / scale)),
//   clamped to [-QMAX, QMAX]; QMAX 127 for q8_0 (one scale per row), 7 for q4_0 (one scale
//   per block_size values of a row; low nibble first). Assumes the default floating-point
//   rounding mode, as every f32 division does.
#pragma once
#include <cstdint>

namespace tblob {
namespace slm1 {

float quant_scale(float amax, float qmax);
int32_t quant_code(float x, float scale, int32_t qmax);

// Index of the first value that is not finite among n f32 at x (any alignment), or n.
uint64_t first_non_finite(const float *x, uint64_t n);

// Encode rows x cols values (row-major, all finite). payload: rows*cols bytes (q8_0) or
// rows*cols/2 (q4_0); scales: rows (q8_0) or rows*cols/block (q4_0) little-endian f32.
void encode_q8_0(const float *x, uint64_t rows, uint64_t cols, uint8_t *payload, uint8_t *scales);
void encode_q4_0(const float *x, uint64_t rows, uint64_t cols, uint32_t block, uint8_t *payload,
                 uint8_t *scales);

}  // namespace slm1
}  // namespace tblob
