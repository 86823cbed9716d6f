// tensorblob inspect [--json] PATH...
#include <cstdio>
#include <cstring>
#include <string>

#include "commands.h"
#include "json_writer.h"
#include "tensorblob.h"

namespace tbcli {

namespace {

// Base name of a file path (for the "file" field of sharded models).
const char *base_name(const char *p, size_t n, size_t *len) {
  size_t i = n;
  while (i > 0 && p[i - 1] != '/') --i;
  *len = n - i;
  return p + i;
}

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
    std::printf("      %-12s %.*s\n", kRole[k], static_cast<int>(t.name_len), t.name);
  }
}

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
  w.raw("}}");
}

void json_model(JsonWriter &w, const char *path, const tblob_model *m) {
  const bool sharded = tblob_model_file_count(m) > 1 ||
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
    if (sharded) {
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
  const uint64_t nm = tblob_metadata_count(m);
  for (uint64_t i = 0; i < nm; ++i) {
    const char *k, *v;
    size_t kl, vl;
    if (tblob_metadata_at(m, i, &k, &kl, &v, &vl, nullptr) != TBLOB_OK) continue;
    if (i) w.raw(',');
    w.str(k, kl);
    w.raw(':');
    w.str(v, vl);
  }
  w.raw("}}");
}

void text_model(const char *path, const tblob_model *m) {
  const uint64_t n = tblob_model_tensor_count(m);
  std::printf("%s: %s, %llu tensors, %u file%s\n", path, tblob_format_name(tblob_model_format(m)),
              static_cast<unsigned long long>(n), tblob_model_file_count(m),
              tblob_model_file_count(m) == 1 ? "" : "s");
  const uint64_t nm = tblob_metadata_count(m);
  for (uint64_t i = 0; i < nm; ++i) {
    const char *k, *v;
    size_t kl, vl;
    if (tblob_metadata_at(m, i, &k, &kl, &v, &vl, nullptr) == TBLOB_OK)
      std::printf("  metadata %.*s = %.*s\n", static_cast<int>(kl), k, static_cast<int>(vl), v);
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
    std::printf("  %-40.*s %-8s %-20s offset %llu length %llu\n", static_cast<int>(t.name_len), t.name,
                tblob_dtype_name(t.dtype), shape.c_str(), static_cast<unsigned long long>(t.data_offset),
                static_cast<unsigned long long>(t.data_length));
    if (t.quant_flags & TBLOB_TENSOR_QUANTIZED) text_quant(m, i);
  }
}

}  // namespace

int cmd_inspect(int argc, char **argv) {
  bool json = false;
  tblob_open_options opts = TBLOB_OPEN_OPTIONS_INIT;
  int first = 0;
  for (; first < argc; ++first) {
    if (std::strcmp(argv[first], "--json") == 0) {
      json = true;
    } else if (std::strcmp(argv[first], "--no-checksum") == 0) {  // SLM1: skip only the checksum
      opts.flags |= TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM;
    } else if (std::strcmp(argv[first], "--") == 0) {
      ++first;
      break;
    } else if (argv[first][0] == '-' && argv[first][1] != '\0') {
      std::fprintf(stderr, "tensorblob inspect: unknown option '%s'\n", argv[first]);
      return kExitUsage;
    } else {
      break;
    }
  }
  if (first >= argc) {
    std::fprintf(stderr, "usage: tensorblob inspect [--json] [--no-checksum] PATH...\n");
    return kExitUsage;
  }
  int rc = kExitOk;
  JsonWriter w(stdout);
  for (int i = first; i < argc; ++i) {
    tblob_diag d = TBLOB_DIAG_INIT;
    tblob_model *m = nullptr;
    const tblob_status s = tblob_model_open(argv[i], &opts, &m, &d);
    if (s != TBLOB_OK) {
      rc = kExitInvalid;
      if (json) {
        json_error(w, argv[i], d);
        w.flush_line(stdout);
      } else {
        std::fprintf(stderr, "%s: %s: %s\n", argv[i], tblob_status_name(s), d.message);
      }
      continue;
    }
    if (json) {
      json_model(w, argv[i], m);
      w.flush_line(stdout);
    } else {
      text_model(argv[i], m);
    }
    tblob_model_close(m);
  }
  return rc;
}

}  // namespace tbcli
