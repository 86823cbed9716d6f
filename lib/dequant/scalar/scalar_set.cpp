// The scalar set: the reference every other set must equal bit for bit, always built, always
// runnable.
#include "dequant/ggml/ggml.h"
#include "dequant/kernel_set.h"
#include "dequant/scalar/scalar.h"

namespace tblob {
namespace {

bool runs() { return true; }
const ggml::Kernels *ggml_blocks() { return &ggml::scalar_kernels(); }

}  // namespace

const KernelSet kScalarSet = {kSetScalar, &runs, &scalar_kernel_table, &ggml_blocks, nullptr, nullptr};

}  // namespace tblob
