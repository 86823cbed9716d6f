// The SLM1 data region (docs/slm1.md section 7): every payload and scale array inside the
// file, 64-byte aligned, packed in offset order from tensor_data_offset with zero padding of
// fewer than 64 bytes between regions, and nothing after the last one.
#pragma once
#include <cstdint>

#include "core/allocator.h"
#include "core/status.h"
#include "formats/slm1/entry.h"
#include "formats/slm1/header.h"

namespace tblob {
namespace slm1 {

// Section 11 step 7 over entries already checked by check_entry_shape. Scratch memory is
// proportional to n (bounded by the directory bytes).
Status check_data_region(const uint8_t *file, uint64_t file_len, const Header &h,
                         const Entry *entries, uint32_t n, const Allocator &a, const Diag &diag);

}  // namespace slm1
}  // namespace tblob
