// One implementation object per instruction set: everything a set runs (the MLX/FP8/SLM1
// dequantization table, the GGML block kernels, its streaming copy, and a slot for the
// quantizers), so choosing a set chooses all of them at once. Each object lives beside its
// kernels (scalar/scalar_set.cpp, x86/x86_sets.cpp, arm/neon_set.cpp); dispatch.cpp lists the
// ones compiled in and picks one for the process (dispatch.h).
#pragma once
#include <cstddef>
#include <cstdint>

#include "dequant/kernel_table.h"

namespace tblob {
namespace ggml {
struct Kernels;
}
namespace quant {
struct Kernels;  // the quantizers' per-set table (lib/quant/), once they register
}

// Every set name this library knows, whether or not this build has it, best first: the one
// place the names are spelled (tblob_kernel_set, TBLOB_KERNEL, tblob_kernel_active, the GGML
// lookups and the set objects take them from here).
constexpr const char kSetAvx512[] = "avx512";
constexpr const char kSetAvx2[] = "avx2";
constexpr const char kSetNeon[] = "neon";
constexpr const char kSetScalar[] = "scalar";
constexpr const char *const kKernelSetNames[] = {kSetAvx512, kSetAvx2, kSetNeon, kSetScalar};
constexpr uint32_t kKernelSetNameCount = sizeof(kKernelSetNames) / sizeof(kKernelSetNames[0]);
// One of kKernelSetNames (compiled in or not).
bool kernel_set_known(const char *name);

using StreamCopyFn = void (*)(void *dst, const void *src, size_t n);

struct KernelSet {
  const char *name;  // one of kKernelSetNames
  // The CPU and OS run it (cpuid + xgetbv on x86; NEON is the AArch64 baseline).
  bool (*runnable)();
  // The dequantization table (kernel_table.h): built on first use, only once runnable() said
  // yes; the scalar table with the set's own entries written over it.
  const KernelTable &(*dequant)();
  // The GGML block kernels this set runs (ggml/ggml.h): scalar, AVX2 (avx2 and avx512: there
  // is no AVX-512 GGML set) or NEON.
  const ggml::Kernels *(*ggml)();
  // Non-temporal copy for large outputs; nullptr for none (scalar).
  StreamCopyFn stream;
  // The quantizers' table; nullptr until lib/quant registers its kernels here.
  const quant::Kernels *(*quant)();
};

// The objects compiled into this build, defined beside their kernels.
extern const KernelSet kScalarSet;
extern const KernelSet kAvx2Set;    // TBLOB_DEQUANT_AVX2
extern const KernelSet kAvx512Set;  // TBLOB_DEQUANT_AVX512
extern const KernelSet kNeonSet;    // TBLOB_DEQUANT_NEON

}  // namespace tblob
