// Header fields for the SLM1 writer from a Hugging Face config.json (top-level keys only).
#pragma once
#include <cstddef>

#include "core/status.h"
#include "tensorblob.h"

namespace tblob {
namespace slm1 {

// Sets the fields present: hidden_size, num_hidden_layers, num_attention_heads,
// num_key_value_heads, head_dim, intermediate_size, max_position_embeddings (u32 integers),
// rope_theta, rms_norm_eps (numbers, rounded once to the nearest f32), tie_word_embeddings
// (bool, header flag bit 0). null counts as absent; other keys are skipped. TBLOB_E_JSON for
// bad JSON, TBLOB_E_SCHEMA for a known key twice or of the wrong type or range.
Status options_from_config(tblob_slm1_writer_options *o, const char *json, size_t len,
                           const Diag &diag);

}  // namespace slm1
}  // namespace tblob
