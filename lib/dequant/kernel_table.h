// A kernel set: one function pointer per (scheme, output dtype). The scalar set (scalar/) is
// the definition; SIMD sets (AVX2, AVX-512, NEON) provide the same table and take every entry
// they do not specialise from the scalar set, so no entry is ever null.
//
// Contract of every entry: the descriptor has passed validate_desc(), the scheme is the one
// the slot is for, 0 <= row_begin <= row_end <= d.rows, and dst has room for
// (row_end - row_begin) * d.cols outputs of the slot's dtype (any alignment). The kernel
// writes exactly those outputs, reads only inside the descriptor's byte ranges, allocates
// nothing and cannot fail. Results must equal the scalar kernel's bit for bit.
#pragma once
#include <cstdint>

#include "dequant/quant_desc.h"

namespace tblob {

enum DequantOut : uint32_t { kOutF32 = 0, kOutF16 = 1, kOutBF16 = 2 };
constexpr uint32_t kDequantOutCount = 3;

// TBLOB_DTYPE_F32/F16/BF16 -> slot; kDequantOutCount for anything else.
inline uint32_t dequant_out_slot(uint32_t out_dtype) {
  switch (out_dtype) {
    case TBLOB_DTYPE_F32: return kOutF32;
    case TBLOB_DTYPE_F16: return kOutF16;
    case TBLOB_DTYPE_BF16: return kOutBF16;
    default: return kDequantOutCount;
  }
}

using DequantRowsFn = void (*)(const QuantDesc &d, uint64_t row_begin, uint64_t row_end,
                               void *dst);

// The same rows written with non-temporal (streaming) stores, for large outputs: dst must be
// aligned to kNtAlign, the caller fences (stream_fence) afterwards. Returns false, having
// written nothing, for shapes the set has no such kernel for; null for a whole slot.
using DequantNtFn = bool (*)(const QuantDesc &d, uint64_t row_begin, uint64_t row_end, void *dst);
constexpr uintptr_t kNtAlign = 64;

struct KernelTable {
  const char *name;  // its set's name (kernel_set.h kKernelSetNames)
  DequantRowsFn rows[kQuantSchemeCount][kDequantOutCount];  // [scheme][DequantOut]
  DequantNtFn nt[kQuantSchemeCount][kDequantOutCount];      // [scheme][DequantOut], may be null
};

}  // namespace tblob
