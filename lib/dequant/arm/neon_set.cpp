// The neon set: AArch64's baseline Advanced SIMD (every AArch64 CPU runs it), with the NEON
// GGML set (ggml/ggml_neon.cpp, built exactly when this is).
#include "dequant/arm/neon_kernels.h"
#include "dequant/ggml/ggml.h"
#include "dequant/kernel_set.h"
#include "core/once.h"
#include "dequant/scalar/scalar.h"

#if !defined(TBLOB_GGML_NEON)
#error "the neon dequant set is built without the NEON GGML set"
#endif

namespace tblob {
namespace {

bool runs() { return true; }
Once<KernelTable> g_table;
const KernelTable &table() {
  return g_table.get([](KernelTable *t) {
    *t = scalar_kernel_table();
    t->name = kSetNeon;
    neon_fill_kernels(t);
  });
}

}  // namespace

const KernelSet kNeonSet = {kSetNeon, &runs, &table, &ggml::neon_kernels, &neon_stream_copy, nullptr};

}  // namespace tblob
