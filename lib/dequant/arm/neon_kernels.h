// Entry points of the NEON kernel set (AArch64 baseline: no run-time check needed).
#pragma once
#include <cstddef>

#include "dequant/kernel_table.h"

namespace tblob {

// Writes the NEON kernels into a copy of the scalar table.
void neon_fill_kernels(KernelTable *t);
// Copies n bytes with STNP (non-temporal pair) stores for the 32-byte-aligned middle.
void neon_stream_copy(void *dst, const void *src, size_t n);

}  // namespace tblob
