// Q8_K (ggml's quantize_row_q8_K_ref; ggml_quantize_chunk does not offer the type): 256
// values as int8 levels of d = max/-127 (max the value of largest magnitude), an f32 d, and
// sixteen int16 sums of 16 levels each. A block whose largest magnitude is zero is all zero,
// sums included (ggml leaves its sums unwritten). There is no importance path.
#include <cmath>

#include "quant/ggml/kquant_search.h"
#include "quant/ggml/kquants.h"

namespace tblob {
namespace ggml {

using namespace q;

void quantize_row_q8_k(const float *row, void *dst, int64_t cols, const float * /*importance*/) {
  uint8_t *blk = static_cast<uint8_t *>(dst);
  for (int64_t b = 0; b < cols / kQK; ++b, blk += kQ8KBytes) {
    const float *x = row + b * kQK;
    // ggml takes the first value of largest magnitude. The largest magnitude itself does not
    // depend on the order it is found in, so eight running maxima (a loop the compiler
    // vectorizes) find it, and a scan finds its first value.
    float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int i = 0; i < kQK; i += 8) {
      for (int l = 0; l < 8; ++l) {
        const float a = std::fabs(x[i + l]);
        lane[l] = a > lane[l] ? a : lane[l];
      }
    }
    float amax = 0.0f;
    for (int l = 0; l < 8; ++l) amax = lane[l] > amax ? lane[l] : amax;
    float max = 0.0f;
    for (int i = 0; i < kQK && amax > 0.0f; ++i) {
      if (std::fabs(x[i]) == amax) {
        max = x[i];
        break;
      }
    }
    if (amax == 0.0f) {
      std::memset(blk, 0, kQ8KBytes);
      continue;
    }
    const float iscale = -127.0f / max;
    // Levels go to a local array first: stores through the byte pointer could alias x, which
    // would keep the compiler from vectorizing the loop.
    int8_t qs[kQK];
    for (int i = 0; i < kQK; ++i) {
      const int v = nearest_int(iscale * x[i]);
      qs[i] = static_cast<int8_t>(v < 127 ? v : 127);
    }
    std::memcpy(blk + 4, qs, kQK);
    for (int j = 0; j < 16; ++j) {
      int sum = 0;
      for (int i = 0; i < 16; ++i) sum += qs[16 * j + i];
      store_le(blk + 4 + kQK + 2 * j, static_cast<uint16_t>(sum));
    }
    store_le_f32(blk, 1.0f / iscale);
  }
}

}  // namespace ggml
}  // namespace tblob
