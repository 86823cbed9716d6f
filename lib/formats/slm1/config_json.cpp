#include "formats/slm1/config_json.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include "json/json_lex.h"

namespace tblob {
namespace slm1 {

namespace {

using ull = unsigned long long;

enum class Kind { kU32, kF32, kBool };

struct Key {
  const char *name;
  Kind kind;
};

// Order matters: the index is the field below.
constexpr Key kKeys[] = {
    {"hidden_size", Kind::kU32},          {"num_hidden_layers", Kind::kU32},
    {"num_attention_heads", Kind::kU32},  {"num_key_value_heads", Kind::kU32},
    {"head_dim", Kind::kU32},             {"intermediate_size", Kind::kU32},
    {"max_position_embeddings", Kind::kU32}, {"rope_theta", Kind::kF32},
    {"rms_norm_eps", Kind::kF32},         {"tie_word_embeddings", Kind::kBool},
};
constexpr size_t kKeyCount = sizeof(kKeys) / sizeof(kKeys[0]);

Status json_error(const json::Cursor &c, const Diag &diag) {
  const uint64_t at = c.err_at ? c.offset(c.err_at) : c.offset(c.p);
  return diag.fail(TBLOB_E_JSON, at, -1, "config.json (byte %llu): %s", static_cast<ull>(at),
                   c.err_what ? c.err_what : "invalid JSON");
}

Status schema(const json::Cursor &c, const uint8_t *at, const char *key, const char *why,
              const Diag &diag) {
  return diag.fail(TBLOB_E_SCHEMA, c.offset(at), -1, "config.json (byte %llu): \"%s\" %s",
                   static_cast<ull>(c.offset(at)), key, why);
}

void apply(tblob_slm1_writer_options *o, size_t k, uint32_t u, float f, bool b) {
  switch (k) {
    case 0: o->hidden_size = u; break;
    case 1: o->layer_count = u; break;
    case 2: o->head_count = u; break;
    case 3: o->kv_head_count = u; break;
    case 4: o->head_dim = u; break;
    case 5: o->ffn_size = u; break;
    case 6: o->max_context = u; break;
    case 7: o->rope_theta = f; break;
    case 8: o->rms_norm_epsilon = f; break;
    default: o->flags = b ? (o->flags | 1u) : (o->flags & ~1u); break;
  }
}

}  // namespace

Status options_from_config(tblob_slm1_writer_options *o, const char *json, size_t len,
                           const Diag &diag) {
  json::Cursor c;
  c.begin = c.p = reinterpret_cast<const uint8_t *>(json);
  c.end = c.begin + len;
  // Validate the whole document first (grammar, UTF-8, depth), then read the keys.
  json::skip_ws(c);
  if (!json::skip_value(c, 0, TBLOB_DEFAULT_JSON_DEPTH)) return json_error(c, diag);
  json::skip_ws(c);
  if (c.p != c.end) {
    c.fail(json::Err::kGrammar, c.p, "bytes after the JSON value");
    return json_error(c, diag);
  }
  c.p = c.begin;
  json::skip_ws(c);
  if (*c.p != '{')
    return diag.fail(TBLOB_E_SCHEMA, c.offset(c.p), -1, "config.json is not a JSON object");
  ++c.p;
  tblob_slm1_writer_options tmp = *o;
  bool seen[kKeyCount] = {};
  for (;;) {
    json::skip_ws(c);
    if (*c.p == '}') break;
    if (*c.p == ',') {
      ++c.p;
      json::skip_ws(c);
    }
    json::StringSlice key;
    if (!json::scan_string(c, &key)) return json_error(c, diag);
    json::skip_ws(c);
    ++c.p;  // ':' (the grammar was checked above)
    json::skip_ws(c);
    size_t k = kKeyCount;
    for (size_t i = 0; i < kKeyCount; ++i)
      if (json::decoded_equals(key, kKeys[i].name, std::strlen(kKeys[i].name))) k = i;
    const uint8_t *at = c.p;
    if (k == kKeyCount || *c.p == 'n') {  // unknown key, or null: skip the value
      if (k != kKeyCount && seen[k]) return schema(c, key.at, kKeys[k].name, "appears twice", diag);
      if (k != kKeyCount) seen[k] = true;
      if (!json::skip_value(c, 1, TBLOB_DEFAULT_JSON_DEPTH)) return json_error(c, diag);
      continue;
    }
    if (seen[k]) return schema(c, key.at, kKeys[k].name, "appears twice", diag);
    seen[k] = true;
    uint32_t u = 0;
    float f = 0.0f;
    bool b = false;
    if (kKeys[k].kind == Kind::kBool) {
      if (*c.p != 't' && *c.p != 'f') return schema(c, at, kKeys[k].name, "must be true or false", diag);
      b = *c.p == 't';
      if (!json::skip_value(c, 1, TBLOB_DEFAULT_JSON_DEPTH)) return json_error(c, diag);
    } else {
      if (*c.p != '-' && (*c.p < '0' || *c.p > '9'))
        return schema(c, at, kKeys[k].name, "must be a number", diag);
      json::NumKind nk;
      uint64_t v;
      if (!json::scan_number(c, &nk, &v)) return json_error(c, diag);
      if (kKeys[k].kind == Kind::kU32) {
        if (nk != json::NumKind::kUnsigned || v > UINT32_MAX)
          return schema(c, at, kKeys[k].name, "must be an integer in [0, 2^32)", diag);
        u = static_cast<uint32_t>(v);
      } else {
        const std::from_chars_result r =
            std::from_chars(reinterpret_cast<const char *>(at), reinterpret_cast<const char *>(c.p), f);
        if (r.ec != std::errc() || !std::isfinite(f))
          return schema(c, at, kKeys[k].name, "is not representable as a finite f32", diag);
      }
    }
    apply(&tmp, k, u, f, b);
  }
  *o = tmp;
  return TBLOB_OK;
}

}  // namespace slm1
}  // namespace tblob
