// Builds without the x86 kernels (other ISAs, or simd_x86 disabled) have no AVX2 set.
#include "dequant/ggml/ggml.h"

namespace tblob {
namespace ggml {
const Kernels *avx2_kernels() { return nullptr; }
}  // namespace ggml
}  // namespace tblob
