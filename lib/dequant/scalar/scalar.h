// The scalar reference kernel set: the definition every other kernel set must match.
#pragma once
#include "dequant/kernel_table.h"

namespace tblob {
const KernelTable &scalar_kernel_table();
}  // namespace tblob
