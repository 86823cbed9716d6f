// The x86-64 sets, avx2 and avx512 (baseline code: the ISA translation units are entered only
// once runnable() said yes). Their GGML blocks are the AVX2 GGML set (ggml/ggml_avx2.cpp,
// built exactly when these are); avx512 has no GGML set of its own.
#include "core/cpu.h"
#include "dequant/ggml/ggml.h"
#include "dequant/kernel_set.h"
#include "core/once.h"
#include "dequant/scalar/scalar.h"
#include "dequant/x86/x86_kernels.h"

#if !defined(TBLOB_GGML_AVX2)
#error "the x86 dequant sets are built without the AVX2 GGML set"
#endif

namespace tblob {
namespace {

// The scalar table with the ISA's entries written over it, so a scheme without a SIMD kernel
// keeps its scalar one.
void make_table(KernelTable *t, const char *name, void (*fill)(KernelTable *)) {
  *t = scalar_kernel_table();
  t->name = name;
  fill(t);
}

bool runs_avx2() { return (cpu_features() & kCpuAvx2) != 0; }
Once<KernelTable> g_avx2_table;
const KernelTable &avx2_table() {
  return g_avx2_table.get([](KernelTable *t) { make_table(t, kSetAvx2, &avx2_fill_kernels); });
}

bool runs_avx512() { return (cpu_features() & kCpuAvx512) != 0; }
Once<KernelTable> g_avx512_table;
Once<KernelTable> g_avx512_base_table;
// With AVX512_BF16 + VBMI, their entries replace some of the plain ones (same set name).
void avx512_fill(KernelTable *t) {
  avx512_fill_kernels(t);
#if defined(TBLOB_DEQUANT_AVX512EXT)
  if ((cpu_features() & kCpuAvx512Ext) != 0) avx512ext_fill_kernels(t);
#endif
}
const KernelTable &avx512_table() {
  return g_avx512_table.get([](KernelTable *t) { make_table(t, kSetAvx512, &avx512_fill); });
}

}  // namespace

const KernelSet kAvx2Set = {kSetAvx2, &runs_avx2, &avx2_table, &ggml::avx2_kernels, &avx2_stream_copy, nullptr};
const KernelSet kAvx512Set = {kSetAvx512, &runs_avx512, &avx512_table, &ggml::avx2_kernels, &avx512_stream_copy,
                              nullptr};

const KernelTable *avx512_plain_kernel_table() {
  if (!runs_avx512()) return nullptr;
  return &g_avx512_base_table.get([](KernelTable *t) { make_table(t, kSetAvx512, &avx512_fill_kernels); });
}

bool avx512_ext_entries() {
#if defined(TBLOB_DEQUANT_AVX512EXT)
  return (cpu_features() & kCpuAvx512Ext) != 0;
#else
  return false;
#endif
}

}  // namespace tblob
