// The row quantizers of lib/quant/ggml, one declaration per type, grouped by the file that
// defines them. quant_table.cpp lists them by ggml type id.
#pragma once
#include <cstdint>

namespace tblob {
namespace ggml {

// legacy.cpp: the 32-element blocks of ggml's first formats.
void quantize_row_q4_0(const float *row, void *dst, int64_t cols, const float *importance);
void quantize_row_q4_1(const float *row, void *dst, int64_t cols, const float *importance);
void quantize_row_q5_0(const float *row, void *dst, int64_t cols, const float *importance);
void quantize_row_q5_1(const float *row, void *dst, int64_t cols, const float *importance);
void quantize_row_q8_0(const float *row, void *dst, int64_t cols, const float *importance);
// iq4_nl.cpp
void quantize_row_iq4_nl(const float *row, void *dst, int64_t cols, const float *importance);
// ternary.cpp
void quantize_row_tq1_0(const float *row, void *dst, int64_t cols, const float *importance);
void quantize_row_tq2_0(const float *row, void *dst, int64_t cols, const float *importance);
// mxfp4.cpp
void quantize_row_mxfp4(const float *row, void *dst, int64_t cols, const float *importance);

}  // namespace ggml
}  // namespace tblob
