// UQFF commands:
//   tensorblob verify [--json] PATH...      per-layer report of UQFF shard sets (cmd_uqff_verify)
//   tensorblob dequant [--to f32|f16|bf16] [--rows A:B] [--expert N] [--kernel NAME]
//                      --out FILE PATH TENSOR  (cmd_uqff_dequant, for UQFF inputs)
// main.cpp sends a path here when tblob_uqff_detect says it holds UQFF.
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli.h"
#include "commands.h"
#include "json_bytes.h"
#include "json_writer.h"
#include "numbers.h"
#include "term.h"
#include "tensorblob.h"

namespace tbcli {

namespace {

const char *family_text(uint32_t f) {
  switch (f) {
    case TBLOB_UQFF_GGUF: return "gguf";
    case TBLOB_UQFF_UNQUANT: return "unquant";
    case TBLOB_UQFF_HQQ: return "hqq";
    case TBLOB_UQFF_FP8: return "fp8";
    case TBLOB_UQFF_AFQ: return "afq";
    case TBLOB_UQFF_F8Q8: return "f8q8";
    case TBLOB_UQFF_MXFP4: return "mxfp4";
    default: return "none";
  }
}

std::string shape_text(const uint64_t *s, uint32_t r) {
  if (!s) return "?";
  std::string t = "[";
  for (uint32_t i = 0; i < r; ++i) {
    if (i) t += ", ";
    t += std::to_string(s[i]);
  }
  return t + "]";
}

const char *base_name(const char *p) {
  const char *b = std::strrchr(p, '/');
  return b ? b + 1 : p;
}

struct VerifyCtx {
  bool json = false;
  JsonWriter *w = nullptr;
  bool first_layer = true, first_shard = true;
  std::vector<std::string> shard_names;
  std::string set_json;  // the set entry, written last
  uint64_t errors = 0, warnings = 0;
};

void json_problems(JsonWriter &w, const tblob_uqff_report_entry *e) {
  w.raw("[");
  for (uint32_t i = 0; i < e->problem_count; ++i) {
    const tblob_uqff_problem &p = e->problems[i];
    if (i) w.raw(',');
    w.raw('{');
    w.key("severity");
    w.str(p.severity == TBLOB_UQFF_ERROR ? "error" : "warning");
    w.field("status", tblob_status_name(p.status));
    w.field("message", p.message, p.message_len);
    w.raw('}');
  }
  w.raw("]");
}

void text_problems(const tblob_uqff_report_entry *e, const char *indent) {
  for (uint32_t i = 0; i < e->problem_count; ++i) {
    const tblob_uqff_problem &p = e->problems[i];
    std::printf("%s%s %s: %.*s\n", indent, p.severity == TBLOB_UQFF_ERROR ? "error" : "warning",
                tblob_status_name(p.status), static_cast<int>(p.message_len), p.message);
  }
}

int on_entry(void *user, const tblob_uqff_report_entry *e) {
  VerifyCtx &c = *static_cast<VerifyCtx *>(user);
  for (uint32_t i = 0; i < e->problem_count; ++i)
    (e->problems[i].severity == TBLOB_UQFF_ERROR ? c.errors : c.warnings) += 1;
  if (e->kind == TBLOB_UQFF_ENTRY_SHARD) {
    c.shard_names.emplace_back(e->name, e->name_len);
    if (c.json) {
      JsonWriter &w = *c.w;
      if (c.first_shard) w.raw("\"shards\":[");
      else w.raw(',');
      c.first_shard = false;
      w.raw('{');
      w.key("path");
      w.str(e->name, e->name_len);
      w.field("role", e->label);
      w.field_u64("bytes", e->stored_bytes);
      w.raw(',');
      w.key("problems");
      json_problems(w, e);
      w.raw('}');
    } else {
      std::printf("  %s %s (%" PRIu64 " bytes)\n", e->label, name_text(e->name, e->name_len).c_str(),
                  e->stored_bytes);
      text_problems(e, "      ");
    }
    return 0;
  }
  if (e->kind == TBLOB_UQFF_ENTRY_LAYER) {
    const std::string shard = e->shard < c.shard_names.size() ? base_name(c.shard_names[e->shard].c_str()) : "?";
    if (c.json) {
      JsonWriter &w = *c.w;
      if (c.first_layer) {
        if (c.first_shard) w.raw("\"shards\":[");
        w.raw("],\"layers\":[");
      } else {
        w.raw(',');
      }
      c.first_layer = false;
      w.raw('{');
      w.key("name");
      w.str(e->name, e->name_len);
      w.field("family", family_text(e->family));
      w.field("type", e->label);
      w.field_u64("bits", e->bits);
      w.field_u64("group_size", e->group_size);
      if (e->ggml_type != UINT32_MAX) {
        w.field_u64("ggml_type", e->ggml_type);
      }
      w.field("shard", shard.c_str());
      w.field_u64("shard_span", e->shard_span);
      w.raw(',');
      w.key("shape");
      if (e->shape) {
        w.raw('[');
        for (uint32_t i = 0; i < e->rank; ++i) {
          if (i) w.raw(',');
          w.u64(e->shape[i]);
        }
        w.raw(']');
      } else {
        w.raw("null");
      }
      w.field_u64("experts", e->experts);
      w.raw(',');
      w.key("bias");
      w.raw(e->has_bias ? "true" : "false");
      w.field_u64("bytes", e->stored_bytes);
      w.raw(',');
      w.key("ok");
      bool ok = true;
      for (uint32_t i = 0; i < e->problem_count; ++i) ok &= e->problems[i].severity != TBLOB_UQFF_ERROR;
      w.raw(ok ? "true" : "false");
      w.raw(',');
      w.key("problems");
      json_problems(w, e);
      w.raw('}');
    } else {
      char bits[32] = "";
      if (e->bits) std::snprintf(bits, sizeof(bits), "%u-bit", e->bits);
      std::printf("  %-48s %-8s %-8s %-7s %-16s %s%s%s\n", name_text(e->name, e->name_len).c_str(),
                  family_text(e->family), e->label[0] ? e->label : "-", bits,
                  shape_text(e->shape, e->rank).c_str(), shard.c_str(), e->shard_span > 1 ? " (straddles)" : "",
                  e->has_bias ? " +bias" : "");
      text_problems(e, "      ");
    }
    return 0;
  }
  // The set (last).
  if (c.json) {
    JsonWriter &w = *c.w;
    if (c.first_layer) {
      if (c.first_shard) w.raw("\"shards\":[");
      w.raw("],\"layers\":[");
    }
    w.raw("],");
    w.key("version");
    char v[48];
    std::snprintf(v, sizeof(v), "%u.%u.%u", e->version_major, e->version_minor, e->version_patch);
    w.str(v);
    w.raw(',');
    w.key("problems");
    json_problems(w, e);
  } else {
    if (e->problem_count) std::printf("  set:\n");
    text_problems(e, "      ");
  }
  return 0;
}

}  // namespace

int cmd_uqff_verify(const Args &a, const char *path) {
  const bool json = a.json;
  int rc = kExitOk;
  {
    JsonWriter w;
    VerifyCtx c;
    c.json = json;
    c.w = &w;
    if (json) {
      w.raw('{');
      w.key("path");
      w.str(path);
      w.field("format", "uqff");
      w.raw(',');
    } else {
      std::printf("%s:\n", path);
    }
    tblob_diag d = TBLOB_DIAG_INIT;
    tblob_uqff_verify_result r = TBLOB_UQFF_VERIFY_RESULT_INIT;
    const char *paths[1] = {path};
    const tblob_status s = tblob_uqff_verify(paths, 1, nullptr, on_entry, &c, &r, &d);
    if (s != TBLOB_OK) rc = kExitInvalid;
    if (json) {
      if (c.first_shard && c.first_layer && w.last() == ',') {
        // nothing was reported (bad arguments): still a complete object
        w.raw("\"shards\":[],\"layers\":[],\"problems\":[]");
        w.raw(',');
      } else {
        w.raw(',');
      }
      w.key("ok");
      w.raw(s == TBLOB_OK ? "true" : "false");
      w.field("status", tblob_status_name(s));
      if (s != TBLOB_OK) {
        w.field("error", d.message[0] ? d.message : tblob_status_message(s));
      }
      w.field_u64("layers_count", r.layers);
      w.field_u64("tensors_count", r.tensors);
      w.field_u64("errors", r.errors);
      w.field_u64("warnings", r.warnings);
      w.raw('}');
      w.flush_line(stdout);
    } else {
      std::printf("%s: UQFF %u.%u.%u, %u shard%s, %" PRIu64 " layers, %" PRIu64 " other tensors: %s",
                  path, r.version_major, r.version_minor, r.version_patch, r.shards, r.shards == 1 ? "" : "s",
                  r.layers, r.tensors, s == TBLOB_OK ? "OK" : "INVALID");
      std::printf(" (%" PRIu64 " error%s, %" PRIu64 " warning%s)\n", r.errors, r.errors == 1 ? "" : "s",
                  r.warnings, r.warnings == 1 ? "" : "s");
      if (s != TBLOB_OK) std::printf("  first error %s: %s\n", tblob_status_name(s), d.message);
    }
  }
  return rc;
}

int cmd_uqff_dequant(const Args &a) {
  uint32_t to = TBLOB_DTYPE_F32;
  uint64_t rb = 0, re = UINT64_MAX, expert = UINT64_MAX;
  if (const char *v = a.get("--to")) to = dtype_from_name(v);
  if (const char *v = a.get("--rows"))
    if (!parse_rows(v, &rb, &re)) return usage_error(*a.cmd, "--rows wants A:B, not '%s'", v);
  tblob_dequant_options dopt = TBLOB_DEQUANT_OPTIONS_INIT;  // threads 0: one per CPU
  if (const char *v = a.get("--threads"))
    if (!parse_threads(v, &dopt.threads))
      return usage_error(*a.cmd, "--threads wants a number from 0 to 4096, not '%s'", v);
  // --expert N: digits only here; checked against the layer's expert count once it is known.
  const char *expert_arg = a.get("--expert");
  if (expert_arg && !parse_number(expert_arg, UINT64_MAX - 1, &expert))
    return usage_error(*a.cmd, "--expert wants a number, not '%s'", expert_arg);
  const char *out = a.get("--out"), *kernel = a.get("--kernel");
  // The name as --json printed it (U+10FFXX for a byte that is not UTF-8) or as raw bytes.
  const std::string name_bytes = arg_bytes(a.positional[1]);
  const char *path = a.positional[0], *name = name_bytes.c_str();
  tblob_diag d = TBLOB_DIAG_INIT;
  if (kernel && tblob_kernel_set(kernel, &d) != TBLOB_OK) {
    std::fprintf(stderr, "tensorblob dequant: kernel %s: %s\n", kernel, d.message);
    return kExitUsage;
  }
  tblob_model *m = nullptr;
  tblob_status s = tblob_model_open(path, nullptr, &m, &d);
  if (s != TBLOB_OK) {
    std::fprintf(stderr, "%s: %s: %s\n", path, tblob_status_name(s), d.message);
    return kExitInvalid;
  }
  int rc = kExitOk;
  uint64_t index = 0, bytes = 0;
  std::vector<uint8_t> buf;
  if (tblob_model_format(m) != TBLOB_FORMAT_UQFF) {
    std::fprintf(stderr, "%s: not a UQFF export\n", path);
    rc = kExitInvalid;
  } else if ((s = tblob_tensor_find(m, name, name_bytes.size(), &index, &d)) != TBLOB_OK) {
    std::fprintf(stderr, "%s: %s: %s\n", path, tblob_status_name(s), d.message);
    rc = kExitInvalid;
  } else {
    tblob_uqff_layer_info li = TBLOB_UQFF_LAYER_INFO_INIT;
    tblob_uqff_layer_info_at(m, index, &li, nullptr);
    // A stack [E, out, in] dequantizes as E * out rows; expert e is rows [e * out, (e + 1) * out),
    // and --rows A:B are rows of that expert: both are checked here, before any arithmetic.
    if (expert_arg) {
      if (li.experts == 0) {
        rc = usage_error(*a.cmd, "--expert: %s is not a stack of experts", name_text(name_bytes).c_str());
      } else if (expert >= li.experts) {
        rc = usage_error(*a.cmd, "--expert %s: the stack has experts 0 to %llu", expert_arg,
                         static_cast<unsigned long long>(li.experts - 1));
      } else {
        if (re == UINT64_MAX) re = li.rows;
        if (rb > re || re > li.rows) {
          rc = usage_error(*a.cmd, "--rows %s: expert %llu has rows 0:%llu", a.get("--rows"),
                           static_cast<unsigned long long>(expert), static_cast<unsigned long long>(li.rows));
        } else {
          const uint64_t base = expert * li.rows;  // expert < E: within the stack's E * out rows
          rb += base;
          re += base;
        }
      }
    }
    if (rc != kExitOk) {
      // a usage error, already reported
    } else if ((s = tblob_tensor_dequant_size(m, index, to, rb, re, &bytes, &d)) != TBLOB_OK) {
      std::fprintf(stderr, "%s: %s: %s\n", path, tblob_status_name(s), d.message);
      rc = s == TBLOB_E_RANGE ? kExitUsage : kExitInvalid;
    } else {
      // The range is valid: decode in chunks of about 16 MiB (constant memory, a progress bar
      // on a terminal for large outputs) and stream them out.
      const uint64_t row_bytes = li.cols * (to == TBLOB_DTYPE_F32 ? 4 : 2);
      const uint64_t rows = row_bytes ? bytes / row_bytes : 0;
      re = rb + rows;
      uint64_t chunk = row_bytes ? (uint64_t{16} << 20) / row_bytes : 1;
      if (chunk == 0) chunk = 1;
      if (chunk > rows) chunk = rows ? rows : 1;
      buf.resize(static_cast<size_t>(rows ? chunk * row_bytes : bytes) + 1);
      FILE *f = std::strcmp(out, "-") == 0 ? stdout : std::fopen(out, "wb");
      ProgressBar bar("dequantizing", bytes > (uint64_t{16} << 20));
      if (!f) {
        std::fprintf(stderr, "tensorblob dequant: cannot write %s: %s\n", out, std::strerror(errno));
        rc = kExitInvalid;
      } else if (rows == 0) {  // nothing to write (or a 0-d value: one call)
        if (bytes && ((s = tblob_tensor_dequantize(m, index, to, rb, re, buf.data(), bytes, &d)) != TBLOB_OK ||
                      std::fwrite(buf.data(), 1, bytes, f) != bytes))
          rc = kExitInvalid;
      } else {
        for (uint64_t r = rb; r < re && rc == kExitOk; r += chunk) {
          bar.update((r - rb) * row_bytes, bytes);
          const uint64_t e = re - r < chunk ? re : r + chunk;
          const size_t n = static_cast<size_t>((e - r) * row_bytes);
          if ((s = tblob_tensor_dequantize_opts(m, index, to, r, e, buf.data(), buf.size(), &dopt, &d)) != TBLOB_OK) {
            bar.clear();
            std::fprintf(stderr, "%s: %s: %s\n", path, tblob_status_name(s), d.message);
            rc = kExitInvalid;
          } else if (std::fwrite(buf.data(), 1, n, f) != n) {
            bar.clear();
            std::fprintf(stderr, "tensorblob dequant: cannot write %s: %s\n", out, std::strerror(errno));
            rc = kExitInvalid;
          }
        }
        bar.finish(rc == kExitOk);
      }
      if (f && f != stdout && std::fclose(f) != 0 && rc == kExitOk) {
        std::fprintf(stderr, "tensorblob dequant: cannot write %s: %s\n", out, std::strerror(errno));
        rc = kExitInvalid;
      }
      if (f == stdout && std::fflush(stdout) != 0) rc = kExitInvalid;
    }
  }
  tblob_model_close(m);
  if (rc != kExitOk) return rc;
  if (a.json) {
    JsonWriter w;
    w.lit("{\"path\":");
    w.str(path);
    w.field("tensor", name);
    w.lit(",\"ok\":true");
    w.field("to", tblob_dtype_name(to));
    w.field_u64("row_begin", rb);
    w.field_u64("row_end", re);
    w.field_u64("bytes", bytes);
    w.field("out", out);
    w.raw('}');
    w.flush_line(stdout);
  }
  return kExitOk;
}

}  // namespace tbcli
