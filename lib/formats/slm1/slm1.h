// SLM1 containers (docs/slm1.md): detection and open, the entry points the format's
// operations (slm1_format.cpp) and the C API use.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/limits.h"
#include "table/model.h"
#include "core/status.h"
#include "formats/slm1/state.h"

namespace tblob {

// The first bytes start with the magic "SLM1".
bool slm1_looks_like(const uint8_t *p, size_t n);

// Validates file 0 of m (its source already set) in the order of docs/slm1.md section 11
// and fills the tensor table, metadata and lookup. names may be nullptr.
Status slm1_open_model(tblob_model *m, const Limits &limits, const slm1::NameList *names,
                       const Diag &diag);

// The same without a name list: what tblob_model_open uses after detecting the magic.
Status slm1_open_detected(tblob_model *m, const Limits &limits, const Diag &diag);

}  // namespace tblob
