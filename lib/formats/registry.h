// The formats this build reads, each listed once (registry.cpp), in the order detection asks
// them (lib/formats/open.cpp).
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/status.h"
#include "table/format_ops.h"

namespace tblob {

// Every registered format, in detection order; the base container (safetensors) last.
const FormatOps *const *format_registry(size_t *count);

// A file whose magic names a format this build left out: TBLOB_E_FEATURE_DISABLED with its
// name (no such file is valid safetensors: "GGUF" or "SLM1" as the low bytes of the header
// length is over the format's 100 MB cap), else TBLOB_OK.
Status left_out_format(const uint8_t *head, size_t len, OpenInput input, const Diag &diag);

}  // namespace tblob
