// config.json beside a UQFF export: the few facts the completeness check needs. Missing
// tensors are warnings in the verify report (mistral.rs fails only when it loads them).
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/limits.h"
#include "table/model.h"
#include "core/status.h"

namespace tblob {
namespace uqff {

struct ConfigFacts {
  char model_type[64] = {0};
  uint64_t num_hidden_layers = 0;
  bool has_layers = false;
  bool tie_word_embeddings = false;
  uint64_t num_experts = 0;  // num_experts / num_local_experts / n_routed_experts
};

Status read_config(tblob_model *m, const char *path, const Limits &limits, ConfigFacts *out, const Diag &diag);

// Calls warn(message) for each tensor the architecture needs that the table lacks.
template <class Fn>
void check_completeness(const tblob_model *m, const ConfigFacts &cf, Fn warn);

// Implementation detail of check_completeness: returns the number of messages written.
size_t completeness_messages(const tblob_model *m, const ConfigFacts &cf,
                             void (*emit)(void *ctx, const char *msg), void *ctx);

template <class Fn>
void check_completeness(const tblob_model *m, const ConfigFacts &cf, Fn warn) {
  completeness_messages(m, cf, [](void *ctx, const char *msg) { (*static_cast<Fn *>(ctx))(msg); }, &warn);
}

}  // namespace uqff
}  // namespace tblob
