// The K-quant row quantizers' entries of the table (quant_table.cpp), as X(ggml type id,
// function). Q8_K is not a type ggml_quantize_chunk takes; its rule is quantize_row_q8_K_ref.
#pragma once

#include "quant/ggml/kquants.h"

#define TBLOB_GGML_QUANT_KQUANT_TYPES(X)                                                      \
  X(kTypeQ2_K, quantize_row_q2_k) X(kTypeQ3_K, quantize_row_q3_k) X(kTypeQ4_K, quantize_row_q4_k) \
  X(kTypeQ5_K, quantize_row_q5_k) X(kTypeQ6_K, quantize_row_q6_k) X(kTypeQ8_K, quantize_row_q8_k) \
  X(kTypeIQ4_XS, quantize_row_iq4_xs)
