// tensorblob inspect [--json] PATH... and tensorblob verify PATH (a model that is not UQFF)
#include <cstdio>
#include <cstring>
#include <string>

#include "cli.h"
#include "commands.h"
#include "http_source.h"
#include "json_writer.h"
#include "term.h"
#include "tensorblob.h"

namespace tbcli {

const char *base_name(const char *p, size_t n, size_t *len) {
  size_t i = n;
  while (i > 0 && p[i - 1] != '/') --i;
  *len = n - i;
  return p + i;
}

namespace {

// A quantized logical tensor (resolved companions): scheme, bits, group size, logical shape
// and its companions. Nothing for other tensors.
bool quant_info(const tblob_model *m, uint64_t i, tblob_quant_info *q) {
  return tblob_tensor_quant_info(m, i, q, nullptr) == TBLOB_OK && (q->flags & TBLOB_TENSOR_QUANTIZED);
}

void json_quant(JsonWriter &w, const tblob_model *m, uint64_t i) {
  tblob_quant_info q = TBLOB_QUANT_INFO_INIT;
  if (!quant_info(m, i, &q)) return;
  w.lit(",\"quant\":{\"scheme\":");
  w.str(tblob_quant_scheme_name(q.scheme));
  w.lit(",\"bits\":");
  w.u64(q.bits);
  w.lit(",\"group_size\":");
  w.u64(q.group_size);
  w.lit(",\"logical_shape\":[");
  for (uint32_t k = 0; k < q.rank; ++k) {
    if (k) w.raw(',');
    w.u64(q.shape[k]);
  }
  w.lit("],\"status\":");
  w.str(tblob_status_name(q.status));
  w.lit(",\"companions\":[");
  const int64_t comp[3] = {q.scale_index, q.bias_index, q.global_scale_index};
  bool first = true;
  for (int64_t c : comp) {
    tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
    if (c < 0 || tblob_tensor_at(m, static_cast<uint64_t>(c), &t, nullptr) != TBLOB_OK) continue;
    if (!first) w.raw(',');
    first = false;
    w.str(t.name, t.name_len);
  }
  w.lit("]}");
}

void text_quant(const tblob_model *m, uint64_t i) {
  tblob_quant_info q = TBLOB_QUANT_INFO_INIT;
  if (!quant_info(m, i, &q)) return;
  std::string shape = "[";
  for (uint32_t k = 0; k < q.rank; ++k) shape += (k ? ", " : "") + std::to_string(q.shape[k]);
  shape += "]";
  std::printf("    quantized %s %u-bit group %u, logical shape %s%s%s\n", tblob_quant_scheme_name(q.scheme),
              q.bits, q.group_size, shape.c_str(), q.status == TBLOB_OK ? "" : ", cannot dequantize: ",
              q.status == TBLOB_OK ? "" : tblob_status_name(q.status));
  const int64_t comp[3] = {q.scale_index, q.bias_index, q.global_scale_index};
  static const char *const kRole[3] = {"scale", "bias", "global scale"};
  for (int k = 0; k < 3; ++k) {
    tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
    if (comp[k] < 0 || tblob_tensor_at(m, static_cast<uint64_t>(comp[k]), &t, nullptr) != TBLOB_OK) continue;
    std::printf("      %-12s %s\n", kRole[k], name_text(t.name, t.name_len).c_str());
  }
}

// The server's side of a failed read of a URL (the library sees only the status).
std::string remote_detail(const char *path) { return is_url(path) ? http_last_error() : std::string(); }

}  // namespace

void json_error(JsonWriter &w, const char *path, const tblob_diag &d) {
  w.raw("{");
  w.key("path");
  w.str(path);
  w.raw(",\"ok\":false,\"error\":{");
  w.key("status");
  w.str(tblob_status_name(d.status));
  w.field("message", d.message[0] ? d.message : tblob_status_message(d.status));
  w.raw(',');
  w.key("offset");
  if (d.offset == TBLOB_NO_OFFSET)
    w.raw("null");
  else
    w.u64(d.offset);
  const std::string detail = remote_detail(path);
  if (!detail.empty()) w.field("detail", detail.c_str());
  w.raw("}}");
}

void json_model(JsonWriter &w, const char *path, const tblob_model *m, bool every_file) {
  const bool with_file = every_file || tblob_model_file_count(m) > 1 ||
                         tblob_model_format(m) == TBLOB_FORMAT_SAFETENSORS_SHARDED;
  w.raw("{");
  w.key("path");
  w.str(path);
  w.raw(",\"ok\":true,");
  w.key("format");
  w.str(tblob_format_name(tblob_model_format(m)));
  w.raw(",\"tensors\":[");
  const uint64_t n = tblob_model_tensor_count(m);
  for (uint64_t i = 0; i < n; ++i) {
    tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
    if (tblob_tensor_at(m, i, &t, nullptr) != TBLOB_OK) continue;
    if (i) w.raw(',');
    w.lit("{\"name\":");
    w.str(t.name, t.name_len);
    w.lit(",\"dtype\":\"");
    w.raw(tblob_dtype_name(t.dtype));
    w.lit("\",\"shape\":[");
    for (uint32_t k = 0; k < t.rank; ++k) {
      if (k) w.raw(',');
      w.u64(t.shape[k]);
    }
    w.lit("],\"offset\":");
    w.u64(t.data_offset);
    w.lit(",\"length\":");
    w.u64(t.data_length);
    if (with_file) {
      const char *fp;
      size_t fl;
      if (tblob_model_file_path(m, t.file_index, &fp, &fl, nullptr) == TBLOB_OK) {
        size_t bl;
        const char *b = base_name(fp, fl, &bl);
        w.field("file", b, bl);
      }
    }
    if (t.quant_flags & TBLOB_TENSOR_QUANTIZED) json_quant(w, m, i);  // the rare case
    w.raw('}');
    w.maybe_flush();
  }
  w.raw("],\"metadata\":{");
  // Each key once (the first file or blob that has it): shards and blobs may repeat keys.
  // The row is the first of its key when the library's lookup lands on it (its value, in
  // place): no set of keys on the side, which cost three times the metadata itself.
  const uint64_t nm = tblob_metadata_count(m);
  bool first = true;
  for (uint64_t i = 0; i < nm; ++i) {
    const char *k, *v, *fv;
    size_t kl, vl, fvl;
    if (tblob_metadata_at(m, i, &k, &kl, &v, &vl, nullptr) != TBLOB_OK) continue;
    if (tblob_metadata_find(m, k, kl, &fv, &fvl, nullptr) == TBLOB_OK && (fv != v || fvl != vl)) continue;
    if (!first) w.raw(',');
    first = false;
    w.str(k, kl);
    w.raw(':');
    w.str(v, vl);
  }
  w.raw("}}");
}

namespace {

void text_model(const char *path, const tblob_model *m) {
  const uint64_t n = tblob_model_tensor_count(m);
  uint64_t bytes = 0;
  for (uint64_t i = 0; i < n; ++i) {
    tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
    if (tblob_tensor_at(m, i, &t, nullptr) == TBLOB_OK) bytes += t.data_length;
  }
  std::printf("%s: %s, %llu tensors, %u file%s, %s of tensor data\n", path, tblob_format_name(tblob_model_format(m)),
              static_cast<unsigned long long>(n), tblob_model_file_count(m),
              tblob_model_file_count(m) == 1 ? "" : "s", human_bytes(bytes).c_str());
  const uint64_t nm = tblob_metadata_count(m);
  for (uint64_t i = 0; i < nm; ++i) {
    const char *k, *v;
    size_t kl, vl;
    if (tblob_metadata_at(m, i, &k, &kl, &v, &vl, nullptr) == TBLOB_OK)
      std::printf("  metadata %s = %s\n", name_text(k, kl).c_str(), name_text(v, vl).c_str());
  }
  for (uint64_t i = 0; i < n; ++i) {
    tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
    if (tblob_tensor_at(m, i, &t, nullptr) != TBLOB_OK) continue;
    std::string shape = "[";
    for (uint32_t k = 0; k < t.rank; ++k) {
      if (k) shape += ", ";
      shape += std::to_string(t.shape[k]);
    }
    shape += "]";
    std::printf("  %-40s %-8s %-20s offset %llu length %llu\n", name_text(t.name, t.name_len).c_str(),
                tblob_dtype_name(t.dtype), shape.c_str(), static_cast<unsigned long long>(t.data_offset),
                static_cast<unsigned long long>(t.data_length));
    if (t.quant_flags & TBLOB_TENSOR_QUANTIZED) text_quant(m, i);
  }
}

}  // namespace

int cmd_inspect(const Args &a) {
  const bool json = a.json;
  tblob_open_options opts = TBLOB_OPEN_OPTIONS_INIT;
  if (a.has("--no-checksum")) opts.flags |= TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM;  // SLM1: skip only the checksum
  int rc = kExitOk;
  JsonWriter w(stdout);
  for (const char *path : a.positional) {
    tblob_diag d = TBLOB_DIAG_INIT;
    tblob_model *m = nullptr;
    const HttpStats before = http_stats();
    const bool remote = is_url(path);
    const tblob_status s = open_model_any(path, &opts, &m, &d);
    if (s != TBLOB_OK) {
      rc = kExitInvalid;
      if (json) {
        json_error(w, path, d);
        if (remote) {  // inside the object: `..."offset":N}}` -> `..."offset":N},"fetched":{...}}`
          w.unput();
          json_fetched(w, before);
          w.raw('}');
        }
        w.flush_line(stdout);
      } else {
        const std::string detail = remote_detail(path);
        std::fprintf(stderr, "%s: %s: %s%s%s\n", path, tblob_status_name(s), d.message, detail.empty() ? "" : "; ",
                     detail.c_str());
      }
      continue;
    }
    if (json) {
      json_model(w, path, m, false);
      if (remote) {
        w.unput();
        json_fetched(w, before);
        w.raw('}');
      }
      w.flush_line(stdout);
    } else {
      text_model(path, m);
      if (remote) {
        const HttpStats now = http_stats();
        std::printf("  fetched %s in %llu request%s\n", human_bytes(now.bytes - before.bytes).c_str(),
                    static_cast<unsigned long long>(now.requests - before.requests),
                    now.requests - before.requests == 1 ? "" : "s");
      }
    }
    tblob_model_close(m);
  }
  return rc;
}

// Opens PATH with every check and asks each quantized tensor whether it would dequantize
// (companions present, shapes and scale counts consistent).
int cmd_verify_model(const Args &a, const char *path) {
  const HttpStats before = http_stats();
  tblob_diag d = TBLOB_DIAG_INIT;
  tblob_model *m = nullptr;
  const tblob_status s = open_model_any(path, nullptr, &m, &d);
  JsonWriter w(stdout);
  if (s != TBLOB_OK) {
    if (a.json) {
      json_error(w, path, d);
      w.flush_line(stdout);
    } else {
      std::printf("%s: INVALID: %s: %s\n", path, tblob_status_name(s), d.message);
    }
    return kExitInvalid;
  }
  const uint64_t n = tblob_model_tensor_count(m);
  uint64_t quantized = 0, bad = 0;
  if (a.json) {
    w.lit("{\"path\":");
    w.str(path);
    w.lit(",\"format\":");
    w.str(tblob_format_name(tblob_model_format(m)));
    w.lit(",\"problems\":[");
  }
  for (uint64_t i = 0; i < n; ++i) {
    tblob_quant_info q = TBLOB_QUANT_INFO_INIT;
    tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
    if (tblob_tensor_at(m, i, &t, nullptr) != TBLOB_OK || !quant_info(m, i, &q)) continue;
    ++quantized;
    if (q.status == TBLOB_OK) continue;
    tblob_diag qd = TBLOB_DIAG_INIT;
    uint64_t bytes = 0;
    tblob_tensor_dequant_size(m, i, TBLOB_DTYPE_F32, 0, q.rows, &bytes, &qd);
    if (a.json) {
      if (bad) w.raw(',');
      w.lit("{\"tensor\":");
      w.str(t.name, t.name_len);
      w.field("status", tblob_status_name(q.status));
      w.field("message", qd.message[0] ? qd.message : tblob_status_message(q.status));
      w.raw('}');
    } else {
      std::printf("%s: %s: %s: %s\n", path, name_text(t.name, t.name_len).c_str(), tblob_status_name(q.status),
                  qd.message[0] ? qd.message : tblob_status_message(q.status));
    }
    ++bad;
  }
  if (a.json) {
    w.lit("],\"ok\":");
    w.raw(bad ? "false" : "true");
    w.field_u64("tensors", n);
    w.field_u64("quantized", quantized);
    if (is_url(path)) json_fetched(w, before);
    w.raw('}');
    w.flush_line(stdout);
  } else {
    std::printf("%s: %s, %llu tensors (%llu quantized): %s\n", path, tblob_format_name(tblob_model_format(m)),
                static_cast<unsigned long long>(n), static_cast<unsigned long long>(quantized),
                bad ? "INVALID" : "OK");
  }
  tblob_model_close(m);
  return bad ? kExitInvalid : kExitOk;
}

}  // namespace tbcli
