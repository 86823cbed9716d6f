// Row quantizers of ggml's K-quant family and IQ4_XS: one row of `cols` floats (a multiple of
// 256, which the caller checks) into cols/256 blocks at dst, bit-exact with ggml's
// quantize_<type> (what ggml_quantize_chunk calls) and, for Q8_K, quantize_row_q8_K_ref. The
// sub-block searches run in the active kernel set's lanes (kquant_batch.h), the rest is scalar.
// importance: null, or `cols` non-negative weights, one per column (an imatrix row); without
// it each type takes ggml's reference path, with it ggml's importance path. Q8_K has no
// importance path and ignores it. The rules are in docs/quantize.md, "GGML blocks".
#pragma once
#include <cstddef>
#include <cstdint>

namespace tblob {
namespace ggml {

// Bytes of one 256-value block.
constexpr size_t kQ2KBytes = 84;
constexpr size_t kQ3KBytes = 110;
constexpr size_t kQ4KBytes = 144;
constexpr size_t kQ5KBytes = 176;
constexpr size_t kQ6KBytes = 210;
constexpr size_t kQ8KBytes = 292;
constexpr size_t kIQ4XSBytes = 136;

void quantize_row_q2_k(const float *row, void *dst, int64_t cols, const float *importance);
void quantize_row_q3_k(const float *row, void *dst, int64_t cols, const float *importance);
void quantize_row_q4_k(const float *row, void *dst, int64_t cols, const float *importance);
void quantize_row_q5_k(const float *row, void *dst, int64_t cols, const float *importance);
void quantize_row_q6_k(const float *row, void *dst, int64_t cols, const float *importance);
void quantize_row_q8_k(const float *row, void *dst, int64_t cols, const float *importance);
void quantize_row_iq4_xs(const float *row, void *dst, int64_t cols, const float *importance);

}  // namespace ggml
}  // namespace tblob
