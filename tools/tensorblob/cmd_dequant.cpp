// tensorblob dequant [--to f32|f16|bf16] [--rows A:B] [--kernel NAME] --out FILE PATH TENSOR
// Writes the dequantized values of one tensor (or a row range) as raw little-endian values,
// row-major, rows = the logical shape with all but the last axis folded. FILE "-" is stdout.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "commands.h"
#include "tensorblob.h"

namespace tbcli {

namespace {

const char kUsage[] =
    "usage: tensorblob dequant [--to f32|f16|bf16] [--rows A:B] [--kernel NAME] --out FILE\n"
    "                         (PATH | --store DIR MODEL[:TAG]) TENSOR\n"
    "  --to      output type (default f32); values are raw little-endian, row-major\n"
    "  --rows    rows [A, B) of the logical tensor (A: or :B allowed; default all)\n"
    "  --kernel  scalar|avx2|avx512|neon|auto (default: TBLOB_KERNEL or the best available)\n"
    "  --out     output file, - for stdout\n";

int usage_error(const char *fmt, const char *arg) {
  std::fprintf(stderr, "tensorblob dequant: ");
  std::fprintf(stderr, fmt, arg);
  std::fprintf(stderr, "\n%s", kUsage);
  return kExitUsage;
}

bool parse_u64(const char *s, size_t n, uint64_t *out) {
  if (n == 0 || n > 20) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    const uint64_t d = static_cast<uint64_t>(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

// "A:B", "A:", ":B" -> [A, B); B = TBLOB_ALL_ROWS when omitted.
bool parse_rows(const char *s, uint64_t *a, uint64_t *b) {
  const char *colon = std::strchr(s, ':');
  if (!colon) return false;
  const size_t na = static_cast<size_t>(colon - s);
  const size_t nb = std::strlen(colon + 1);
  *a = 0;
  *b = TBLOB_ALL_ROWS;
  if (na && !parse_u64(s, na, a)) return false;
  if (nb && !parse_u64(colon + 1, nb, b)) return false;
  return true;
}

int fail(const char *path, tblob_status s, const tblob_diag &d) {
  std::fprintf(stderr, "tensorblob dequant: %s: %s: %s\n", path, tblob_status_name(s),
               d.message[0] ? d.message : tblob_status_message(s));
  return kExitInvalid;
}

}  // namespace

int cmd_dequant(int argc, char **argv) {
  // Formats with their own dequant path (UQFF) hand over here.
  uint32_t out_dtype = TBLOB_DTYPE_F32;
  uint64_t row_begin = 0, row_end = TBLOB_ALL_ROWS;
  const char *kernel = nullptr, *out_path = nullptr, *store = nullptr;
  const char *pos[2] = {nullptr, nullptr};
  int npos = 0;
  for (int i = 0; i < argc; ++i) {
    const char *a = argv[i];
    auto value = [&]() -> const char * { return i + 1 < argc ? argv[++i] : nullptr; };
    if (std::strcmp(a, "-h") == 0 || std::strcmp(a, "--help") == 0) {
      std::fputs(kUsage, stdout);
      return kExitOk;
    } else if (std::strcmp(a, "--to") == 0) {
      const char *v = value();
      if (!v) return usage_error("%s needs a value", a);
      if (std::strcmp(v, "f32") == 0) out_dtype = TBLOB_DTYPE_F32;
      else if (std::strcmp(v, "f16") == 0) out_dtype = TBLOB_DTYPE_F16;
      else if (std::strcmp(v, "bf16") == 0) out_dtype = TBLOB_DTYPE_BF16;
      else return usage_error("--to must be f32, f16 or bf16, not '%s'", v);
    } else if (std::strcmp(a, "--rows") == 0) {
      const char *v = value();
      if (!v) return usage_error("%s needs a value", a);
      if (!parse_rows(v, &row_begin, &row_end)) return usage_error("--rows wants A:B, not '%s'", v);
    } else if (std::strcmp(a, "--store") == 0) {
      if (!(store = value())) return usage_error("%s needs a value", a);
    } else if (std::strcmp(a, "--kernel") == 0) {
      if (!(kernel = value())) return usage_error("%s needs a value", a);
    } else if (std::strcmp(a, "--out") == 0 || std::strcmp(a, "-o") == 0) {
      if (!(out_path = value())) return usage_error("%s needs a value", a);
    } else if (std::strcmp(a, "--") == 0) {
      for (++i; i < argc; ++i) {
        if (npos >= 2) return usage_error("unexpected argument '%s'", argv[i]);
        pos[npos++] = argv[i];
      }
    } else if (a[0] == '-' && a[1] != '\0') {
      return usage_error("unknown option '%s'", a);
    } else {
      if (npos >= 2) return usage_error("unexpected argument '%s'", a);
      pos[npos++] = a;
    }
  }
  if (npos != 2) return usage_error("%s", "PATH and TENSOR are required");
  if (!out_path) return usage_error("%s", "--out FILE is required");
  // With --store, PATH is MODEL[:TAG] in that Ollama store; tblob_model_open resolves the
  // "<store root>/<model>" form itself.
  std::string store_path;
  if (store) store_path = std::string(store) + "/" + pos[0];
  const char *path = store ? store_path.c_str() : pos[0];
  const char *tensor = pos[1];

  tblob_diag d = TBLOB_DIAG_INIT;
  if (kernel) {
    const tblob_status s = tblob_kernel_set(kernel, &d);
    if (s != TBLOB_OK) return fail(kernel, s, d);
  }
  tblob_model *m = nullptr;
  tblob_status s = tblob_model_open(path, nullptr, &m, &d);
  if (s != TBLOB_OK) return fail(path, s, d);
  int rc = kExitOk;
  FILE *out = nullptr;
  do {
    uint64_t index = 0;
    if ((s = tblob_tensor_find(m, tensor, std::strlen(tensor), &index, &d)) != TBLOB_OK) {
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
      std::fprintf(stderr, "tensorblob dequant: %s: %s\n", out_path, std::strerror(errno));
      rc = kExitInvalid;
      break;
    }
    for (uint64_t r = row_begin; r < row_end; r += chunk_rows) {
      const uint64_t e = row_end - r < chunk_rows ? row_end : r + chunk_rows;
      const size_t n = static_cast<size_t>((e - r) * row_bytes);
      if ((s = tblob_tensor_dequantize(m, index, out_dtype, r, e, buf.data(), buf.size(), &d)) != TBLOB_OK) {
        rc = fail(path, s, d);
        break;
      }
      if (n && std::fwrite(buf.data(), 1, n, out) != n) {
        std::fprintf(stderr, "tensorblob dequant: %s: write failed: %s\n", out_path, std::strerror(errno));
        rc = kExitInvalid;
        break;
      }
    }
    if (!to_stdout) {
      if (std::fclose(out) != 0 && rc == kExitOk) {
        std::fprintf(stderr, "tensorblob dequant: %s: %s\n", out_path, std::strerror(errno));
        rc = kExitInvalid;
      }
    } else if (std::fflush(out) != 0 && rc == kExitOk) {
      rc = kExitInvalid;
    }
  } while (false);
  tblob_model_close(m);
  return rc;
}

}  // namespace tbcli
