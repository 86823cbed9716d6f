// tensorblob dequant [--to f32|f16|bf16] [--rows A:B] [--kernel NAME] [--json] --out FILE PATH TENSOR
// Writes the dequantized values of one tensor (or a row range) as raw little-endian values,
// row-major, rows = the logical shape with all but the last axis folded. FILE "-" is stdout.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli.h"
#include "commands.h"
#include "http_source.h"
#include "json_bytes.h"
#include "json_writer.h"
#include "numbers.h"
#include "term.h"
#include "tblob_config.h"
#include "tensorblob.h"

namespace tbcli {

uint32_t dtype_from_name(const char *v) {
  return std::strcmp(v, "f16") == 0 ? TBLOB_DTYPE_F16 : std::strcmp(v, "bf16") == 0 ? TBLOB_DTYPE_BF16 : TBLOB_DTYPE_F32;
}

// "A:B", "A:", ":B" -> [A, B); B = TBLOB_ALL_ROWS when omitted.
bool parse_rows(const char *s, uint64_t *a, uint64_t *b) {
  const char *colon = std::strchr(s, ':');
  if (!colon) return false;
  const size_t na = static_cast<size_t>(colon - s);
  const size_t nb = std::strlen(colon + 1);
  *a = 0;
  *b = TBLOB_ALL_ROWS;
  // TBLOB_ALL_ROWS (2^64 - 1) means "through the last row": no row number reaches it.
  if (na && !parse_number(s, na, TBLOB_ALL_ROWS - 1, a)) return false;
  if (nb && !parse_number(colon + 1, nb, TBLOB_ALL_ROWS - 1, b)) return false;
  return true;
}

bool parse_threads(const char *s, uint32_t *out) {
  uint64_t v;
  if (!parse_number(s, 4096, &v)) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

namespace {

// The failure on stderr, and with --json also as the summary object on stdout.
bool g_json = false;
const char *g_tensor = "";
HttpStats g_before;  // fetched before the model was opened

int fail(const char *path, tblob_status s, const tblob_diag &d) {
  const char *msg = d.message[0] ? d.message : tblob_status_message(s);
  const std::string detail = is_url(path) ? http_last_error() : std::string();
  std::fprintf(stderr, "tensorblob dequant: %s: %s: %s%s%s\n", path, tblob_status_name(s), msg,
               detail.empty() ? "" : "; ", detail.c_str());
  if (g_json) {
    JsonWriter w;
    w.lit("{\"path\":");
    w.str(path);
    w.field("tensor", g_tensor);
    w.lit(",\"ok\":false,\"error\":{\"status\":");
    w.str(tblob_status_name(s));
    w.field("message", msg);
    if (!detail.empty()) w.field("detail", detail.c_str());
    w.raw('}');
    if (is_url(path)) json_fetched(w, g_before);
    w.raw('}');
    w.flush_line(stdout);
  }
  return kExitInvalid;
}

int fail_errno(const char *out_path, const char *what) {
  const int e = errno;
  std::fprintf(stderr, "tensorblob dequant: %s: %s%s\n", out_path, what, std::strerror(e));
  if (g_json) {
    JsonWriter w;
    w.lit("{\"out\":");
    w.str(out_path);
    w.lit(",\"ok\":false,\"error\":{\"status\":\"TBLOB_E_IO\"");
    w.field("message", std::strerror(e));
    w.lit("}}");
    w.flush_line(stdout);
  }
  return kExitInvalid;
}

}  // namespace

int cmd_dequant(const Args &a) {
  uint32_t out_dtype = TBLOB_DTYPE_F32;
  uint64_t row_begin = 0, row_end = TBLOB_ALL_ROWS;
  if (const char *v = a.get("--to")) out_dtype = dtype_from_name(v);
  if (const char *v = a.get("--rows"))
    if (!parse_rows(v, &row_begin, &row_end)) return usage_error(*a.cmd, "--rows wants A:B, not '%s'", v);
  tblob_dequant_options dopt = TBLOB_DEQUANT_OPTIONS_INIT;  // threads 0: one per CPU
  if (const char *v = a.get("--threads"))
    if (!parse_threads(v, &dopt.threads))
      return usage_error(*a.cmd, "--threads wants a number from 0 to 4096, not '%s'", v);
  const char *kernel = a.get("--kernel"), *out_path = a.get("--out"), *store = a.get("--store");
  const char *pos[2] = {a.positional[0], a.positional[1]};
  // With --store, PATH is MODEL[:TAG] in that Ollama store; tblob_model_open resolves the
  // "<store root>/<model>" form itself.
  std::string store_path;
  if (store) store_path = std::string(store) + "/" + pos[0];
  const char *path = store ? store_path.c_str() : pos[0];
  // The name as --json printed it (U+10FFXX for a byte that is not UTF-8) or as raw bytes.
  const std::string tensor_name = arg_bytes(pos[1]);
  const char *tensor = tensor_name.c_str();
  g_json = a.json;
  g_tensor = tensor;

  tblob_diag d = TBLOB_DIAG_INIT;
  if (kernel) {
    const tblob_status s = tblob_kernel_set(kernel, &d);
    if (s != TBLOB_OK) return fail(kernel, s, d);
  }
  if (store) {  // a non-store says so, as inspect --store does (not "model not found")
    tblob_store *st = nullptr;
    const tblob_status r = tblob_store_open(store, nullptr, &st, &d);
    if (r != TBLOB_OK) return fail(store, r, d);
    tblob_store_close(st);
  }
  tblob_model *m = nullptr;
  g_before = http_stats();
  tblob_status s = TBLOB_OK;
#if TBLOB_HAVE_OLLAMA
  if (const char *layer = a.get("--layer")) {  // a part of a store model (main.cpp: needs --store)
    tblob_store_open_options part;
    if (!parse_layer_spec(layer, &part))
      return usage_error(*a.cmd, "--layer wants model, projector[:N], adapter[:N] or a layer index, not '%s'", layer);
    tblob_store *st = nullptr;
    if ((s = tblob_store_open(store, nullptr, &st, &d)) == TBLOB_OK)
      s = tblob_store_open_model(st, pos[0], std::strlen(pos[0]), &part, &m, &d);
    tblob_store_close(st);
  } else
#endif
  {
    s = open_model_any(path, nullptr, &m, &d);
  }
  if (s != TBLOB_OK) return fail(path, s, d);
  int rc = kExitOk;
  FILE *out = nullptr;
  do {
    uint64_t index = 0;
    if ((s = tblob_tensor_find(m, tensor, tensor_name.size(), &index, &d)) != TBLOB_OK) {
      rc = fail(path, s, d);
      break;
    }
    tblob_quant_info qi = TBLOB_QUANT_INFO_INIT;
    if ((s = tblob_tensor_quant_info(m, index, &qi, &d)) != TBLOB_OK) {
      rc = fail(path, s, d);
      break;
    }
    if (row_end == TBLOB_ALL_ROWS) row_end = qi.rows;
    // Validates the descriptor, the output type and the range before any file is written.
    if ((s = tblob_tensor_dequantize(m, index, out_dtype, row_begin, row_end, nullptr, 0, &d)) != TBLOB_OK &&
        s != TBLOB_E_BUFFER_TOO_SMALL) {
      rc = fail(path, s, d);
      break;
    }
    const uint64_t esize = out_dtype == TBLOB_DTYPE_F32 ? 4 : 2;
    const uint64_t row_bytes = qi.cols * esize;
    // About 16 MiB per call (at least one row): streaming, constant memory.
    uint64_t chunk_rows = row_bytes ? (uint64_t{16} << 20) / row_bytes : row_end - row_begin;
    if (chunk_rows == 0) chunk_rows = 1;
    if (chunk_rows > row_end - row_begin) chunk_rows = row_end - row_begin;
    if (row_bytes && chunk_rows > SIZE_MAX / row_bytes) chunk_rows = 1;
    std::vector<unsigned char> buf;
    buf.resize(static_cast<size_t>(chunk_rows * row_bytes) + 1);
    const bool to_stdout = std::strcmp(out_path, "-") == 0;
    out = to_stdout ? stdout : std::fopen(out_path, "wb");
    if (!out) {
      rc = fail_errno(out_path, "");
      break;
    }
    // Large outputs only: a bar that flashes by for a small tensor is noise.
    const uint64_t total = (row_end - row_begin) * row_bytes;
    ProgressBar bar("dequantizing", total > (uint64_t{16} << 20));
    for (uint64_t r = row_begin; r < row_end; r += chunk_rows) {
      bar.update((r - row_begin) * row_bytes, total);
      const uint64_t e = row_end - r < chunk_rows ? row_end : r + chunk_rows;
      const size_t n = static_cast<size_t>((e - r) * row_bytes);
      if ((s = tblob_tensor_dequantize_opts(m, index, out_dtype, r, e, buf.data(), buf.size(), &dopt, &d)) !=
          TBLOB_OK) {
        rc = fail(path, s, d);
        break;
      }
      if (n && std::fwrite(buf.data(), 1, n, out) != n) {
        bar.clear();
        rc = fail_errno(out_path, "write failed: ");
        break;
      }
    }
    bar.finish(rc == kExitOk);
    if (!to_stdout) {
      if (std::fclose(out) != 0 && rc == kExitOk) rc = fail_errno(out_path, "");
    } else if (std::fflush(out) != 0 && rc == kExitOk) {
      rc = kExitInvalid;
    }
    if (rc == kExitOk && a.json) {
      JsonWriter w;
      w.lit("{\"path\":");
      w.str(path);
      w.field("tensor", tensor);
      w.lit(",\"ok\":true");
      w.field("to", tblob_dtype_name(out_dtype));
      w.field_u64("row_begin", row_begin);
      w.field_u64("row_end", row_end);
      w.field_u64("cols", qi.cols);
      w.field_u64("bytes", total);
      w.field("out", out_path);
      w.field("kernel", tblob_kernel_active());
      w.field_u64("threads", dopt.threads);  // 0: one per CPU
      if (is_url(path)) json_fetched(w, g_before);
      w.raw('}');
      w.flush_line(stdout);
    }
  } while (false);
  tblob_model_close(m);
  return rc;
}

}  // namespace tbcli
