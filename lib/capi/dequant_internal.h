// The model dequantization calls with a Diag already opened, shared by dequant_api.cpp and the
// multi-threaded calls (dequant_parallel_api.cpp), so both report exactly the same statuses.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/status.h"
#include "tensorblob.h"

namespace tblob {

Status tensor_dequantize(const tblob_model *model, uint64_t index, uint32_t out_dtype,
                         uint64_t row_begin, uint64_t row_end, void *dst, size_t dst_bytes,
                         const Diag &d);
Status tensor_dequant_size(const tblob_model *model, uint64_t index, uint32_t out_dtype,
                           uint64_t row_begin, uint64_t row_end, uint64_t *bytes, const Diag &d);

}  // namespace tblob
