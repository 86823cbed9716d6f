// Entry points of the x86 kernel sets. Each is defined in a translation unit compiled with
// that ISA's flags: call them only after the set's runnable() (x86_sets.cpp) has said that the
// CPU (cpuid) and the OS (xgetbv) support the ISA.
#pragma once
#include <cstddef>

#include "dequant/kernel_table.h"

namespace tblob {

// Writes the AVX2 + F16C kernels into a copy of the scalar table (x86/avx2_kernels.cpp).
void avx2_fill_kernels(KernelTable *t);
// Copies n bytes with non-temporal 32-byte stores (unaligned head and tail stored normally).
void avx2_stream_copy(void *dst, const void *src, size_t n);

// AVX-512 F + BW + VL (x86/avx512_kernels.cpp).
void avx512_fill_kernels(KernelTable *t);
void avx512_stream_copy(void *dst, const void *src, size_t n);
// The avx512 entries that also need AVX512_BF16 + AVX512_VBMI (MLX affine to bf16), written
// over an avx512 table (x86/avx512ext_kernels.cpp).
void avx512ext_fill_kernels(KernelTable *t);

}  // namespace tblob
