// Dequantization of model tensors with a Diag already opened: the C API's single-tensor calls
// (lib/capi/dequant_api.cpp) and the multi-threaded ones (dequant_parallel_api.cpp) both come
// here, so they report exactly the same statuses.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/status.h"
#include "table/model.h"
#include "table/tensor_view.h"

namespace tblob {

Status tensor_dequantize(const tblob_model *model, uint64_t index, uint32_t out_dtype,
                         uint64_t row_begin, uint64_t row_end, void *dst, size_t dst_bytes,
                         const Diag &d);
Status tensor_dequant_size(const tblob_model *model, uint64_t index, uint32_t out_dtype,
                           uint64_t row_begin, uint64_t row_end, uint64_t *bytes, const Diag &d);

// Reports status s for model tensor `index` (resolved as v) with its name, the companion the
// status is about and file offsets; the arguments are those of the failed call.
Status tensor_fail(const Diag &d, const tblob_model *m, uint64_t index, const TensorView &v, Status s,
                   uint32_t out_dtype, uint64_t rb, uint64_t re, size_t dst_bytes);

}  // namespace tblob
