// Reads config.json (model_type, num_hidden_layers, tie_word_embeddings, expert count) and
// checks the table holds what that architecture's loader asks for, naming the missing key.
#include "formats/uqff/uqff_config.h"

#include <cstdio>
#include <cstring>

#include "json/json_walk.h"
#include "io/source.h"

namespace tblob {
namespace uqff {

Status read_config(tblob_model *m, const char *path, const Limits &limits, ConfigFacts *out, const Diag &diag) {
  Source src;
  Status s = source_read_bounded(path, kMaxConfigJsonBytes, TBLOB_E_UQFF_CONFIG, m->alloc, &src, diag);
  if (s != TBLOB_OK) return s;
  json::Cursor c{src.data, src.data, src.data + src.len};
  const uint32_t maxd = limits.max_json_depth;
  bool ok = src.len > 0 && json::walk_object(c, 0, maxd, [&](const json::StringSlice &k, json::Cursor &cc) {
    bool good;
    if (json::decoded_equals(k, "model_type", 10)) {
      json::skip_ws(cc);
      if (cc.p < cc.end && *cc.p == '"') {
        json::StringSlice v;
        if (!json::scan_string(cc, &v)) return false;
        const size_t n = json::decode_into(v, out->model_type, sizeof(out->model_type) - 1);
        out->model_type[n < sizeof(out->model_type) ? n : sizeof(out->model_type) - 1] = '\0';
        return true;
      }
      return json::skip_value(cc, 1, maxd);
    }
    if (json::decoded_equals(k, "num_hidden_layers", 17)) {
      if (!json::u64_value(cc, 1, maxd, &out->num_hidden_layers, &good)) return false;
      out->has_layers = good;
      return true;
    }
    if (json::decoded_equals(k, "tie_word_embeddings", 19)) {
      bool v = false;
      if (!json::bool_value(cc, 1, maxd, &v, &good)) return false;
      if (good) out->tie_word_embeddings = v;
      return true;
    }
    if (json::decoded_equals(k, "num_experts", 11) || json::decoded_equals(k, "num_local_experts", 17) ||
        json::decoded_equals(k, "n_routed_experts", 16)) {
      uint64_t v = 0;
      if (!json::u64_value(cc, 1, maxd, &v, &good)) return false;
      if (good) out->num_experts = v;
      return true;
    }
    return json::skip_value(cc, 1, maxd);
  });
  if (ok) ok = json::at_end(c);
  if (!ok)
    s = diag.fail(TBLOB_E_UQFF_CONFIG, c.offset(c.err_at ? c.err_at : c.p), -1, "%s is not valid JSON at byte %llu: %s",
                  path, static_cast<unsigned long long>(c.offset(c.err_at ? c.err_at : c.p)),
                  c.err_what ? c.err_what : "empty file");
  source_close(&src, m->alloc);
  return s;
}

size_t completeness_messages(const tblob_model *m, const ConfigFacts &cf,
                             void (*emit)(void *ctx, const char *msg), void *ctx) {
  size_t count = 0;
  char msg[240];
  auto has = [&](const char *name) { return m->tensor_index.find(name, std::strlen(name)) != SIZE_MAX; };
  auto need = [&](const char *name) {
    if (has(name)) return;
    std::snprintf(msg, sizeof(msg), "config.json (model_type \"%s\") needs %s, which neither the shards nor "
                  "residual.safetensors hold", cf.model_type, name);
    emit(ctx, msg);
    ++count;
  };
  const char *mt = cf.model_type;
  const bool dense = !std::strcmp(mt, "llama") || !std::strcmp(mt, "mistral") || !std::strcmp(mt, "qwen2") ||
                     !std::strcmp(mt, "qwen3");
  const bool moe = !std::strcmp(mt, "qwen3_moe") || !std::strcmp(mt, "qwen2_moe");
  if (dense || moe) {
    need("model.embed_tokens.weight");
    need("model.norm.weight");
    if (!cf.tie_word_embeddings) need("lm_head.weight");
  }
  if (!cf.has_layers) return count;
  // Every hidden layer index must have something.
  const uint64_t nl = cf.num_hidden_layers;
  const uint64_t check = nl < 4096 ? nl : 4096;
  for (uint64_t l = 0; l < check; ++l) {
    char p[96];
    std::snprintf(p, sizeof(p), "model.layers.%llu.", static_cast<unsigned long long>(l));
    const size_t pl = std::strlen(p);
    if (dense || moe) {
      static const char *const kAttn[] = {"q_proj", "k_proj", "v_proj", "o_proj"};
      for (const char *a : kAttn) {
        char name[128];
        std::snprintf(name, sizeof(name), "%sself_attn.%s.weight", p, a);
        need(name);
      }
      static const char *const kMlp[] = {"gate_proj", "up_proj", "down_proj"};
      for (const char *a : kMlp) {
        char name[128];
        if (moe)
          std::snprintf(name, sizeof(name), "%smlp.experts.%s.weight", p, a);
        else
          std::snprintf(name, sizeof(name), "%smlp.%s.weight", p, a);
        need(name);
      }
      continue;
    }
    bool any = false;
    for (size_t i = 0; i < m->tensors.size() && !any; ++i)
      any = m->tensors[i].name_len > pl && std::memcmp(m->tensors[i].name, p, pl) == 0;
    if (!any) {
      std::snprintf(msg, sizeof(msg), "config.json has num_hidden_layers = %llu but no tensor starts with %s",
                    static_cast<unsigned long long>(nl), p);
      emit(ctx, msg);
      ++count;
    }
  }
  return count;
}

}  // namespace uqff
}  // namespace tblob
