// tensorblob convert --to slm1 [--dtype f32|q8_0|q4_0] [--block-size N] [--config FILE]
//                    [--tokenizer FILE] [--skip-integer] SRC OUT
//
// Converts a safetensors file (or sharded checkpoint) of f32/f16/bf16 tensors into an SLM1
// file (docs/slm1.md). SLM1 stores f32, q8_0 and q4_0 only, so an integer or bool tensor
// (BERT's embeddings.position_ids, I64) cannot be copied as it is: it is refused, or with
// --skip-integer left out and named on stderr. Tensors of rank 2-4 are stored as --dtype (default f32); rank-1 tensors
// (norms, biases) always stay f32. Header fields come from config.json beside SRC (or
// --config); the tokenizer section defaults to the byte tokenizer BTOK, --tokenizer takes a
// whole BTOK/BPE1 section from a file. The output is written atomically, then reopened and
// fully validated (checksum included).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli.h"
#include "commands.h"
#include "json_writer.h"
#include "numbers.h"
#include "term.h"
#include "tensorblob.h"

namespace tbcli {

namespace {

// Reads a whole regular file. On failure *why says what went wrong. O_NONBLOCK keeps open()
// of a FIFO without a writer from waiting forever; anything but a regular file is refused
// after fstat (whose answer, not a stale errno, names it).
bool read_whole(const std::string &path, std::string *out, std::string *why) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    *why = std::strerror(errno);
    return false;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    *why = std::strerror(errno);
    ::close(fd);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *why = S_ISDIR(st.st_mode)    ? "is a directory"
           : S_ISFIFO(st.st_mode) ? "is a FIFO, not a regular file"
           : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "is a device, not a regular file"
                                                         : "is not a regular file";
    ::close(fd);
    return false;
  }
  const int fl = ::fcntl(fd, F_GETFL);
  FILE *f = fl >= 0 && ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0 ? ::fdopen(fd, "rb") : nullptr;
  if (!f) {
    *why = std::strerror(errno);
    ::close(fd);
    return false;
  }
  out->clear();
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out->append(buf, n);
  const bool ok = !std::ferror(f);
  if (!ok) *why = "read error";
  std::fclose(f);
  return ok;
}

bool is_directory(const std::string &path) {
  FILE *f = std::fopen((path + "/.").c_str(), "rb");
  if (!f) return false;
  std::fclose(f);
  return true;
}

std::string config_beside(const std::string &src) {
  if (is_directory(src)) return src + "/config.json";
  const size_t slash = src.rfind('/');
  return slash == std::string::npos ? std::string("config.json") : src.substr(0, slash + 1) + "config.json";
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112u) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    exp = 113;
    while (!(mant & 0x400u)) {
      mant <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Widens the stored values to f32 (exactly). False for other dtypes.
bool widen(uint32_t dtype, const uint8_t *p, uint64_t n, std::vector<float> *out) {
  out->resize(static_cast<size_t>(n));
  for (uint64_t k = 0; k < n; ++k) {
    float v;
    if (dtype == TBLOB_DTYPE_F32) {
      std::memcpy(&v, p + 4 * k, 4);
    } else if (dtype == TBLOB_DTYPE_F16) {
      uint16_t h;
      std::memcpy(&h, p + 2 * k, 2);
      v = f16_to_f32(h);
    } else if (dtype == TBLOB_DTYPE_BF16) {
      uint16_t h;
      std::memcpy(&h, p + 2 * k, 2);
      const uint32_t bits = static_cast<uint32_t>(h) << 16;
      std::memcpy(&v, &bits, 4);
    } else {
      return false;
    }
    (*out)[static_cast<size_t>(k)] = v;
  }
  return true;
}

// Integer and bool dtypes: no SLM1 dtype holds them, and widening to f32 would change them.
bool is_integer(uint32_t dtype) {
  switch (dtype) {
    case TBLOB_DTYPE_BOOL:
    case TBLOB_DTYPE_U8:
    case TBLOB_DTYPE_I8:
    case TBLOB_DTYPE_I16:
    case TBLOB_DTYPE_U16:
    case TBLOB_DTYPE_I32:
    case TBLOB_DTYPE_U32:
    case TBLOB_DTYPE_I64:
    case TBLOB_DTYPE_U64:
      return true;
    default:
      return false;
  }
}

std::string dtype_and_shape(const tblob_tensor_info &t) {
  std::string s = tblob_dtype_name(t.dtype) ? tblob_dtype_name(t.dtype) : "?";
  s += " [";
  for (uint32_t k = 0; k < t.rank; ++k) s += (k ? ", " : "") + std::to_string(t.shape[k]);
  return s + "]";
}

// With --json a failure is also the one JSON object on stdout.
bool g_json = false;

int fail_msg(const char *status, const char *msg) {
  if (g_json) {
    JsonWriter w;
    w.lit("{\"ok\":false,\"error\":{\"status\":");
    w.str(status);
    w.field("message", msg);
    w.lit("}}");
    w.flush_line(stdout);
  }
  return kExitInvalid;
}

int fail(const char *what, const tblob_diag &d, tblob_status s) {
  const char *msg = d.message[0] ? d.message : tblob_status_message(s);
  std::fprintf(stderr, "tensorblob convert: %s: %s: %s\n", what, tblob_status_name(s), msg);
  return fail_msg(tblob_status_name(s), msg);
}

// A failure the library did not report (a refused tensor, an unreadable file): message on
// stderr, status "invalid" in JSON.
int fail_text(const std::string &msg) {
  std::fprintf(stderr, "tensorblob convert: %s\n", msg.c_str());
  return fail_msg("invalid", msg.c_str());
}

// --to mlx: the library job (tblob_mlx_convert) with the flags mlx_lm.convert -q takes.
int convert_mlx(const Args &a) {
  tblob_mlx_convert_options o = TBLOB_MLX_CONVERT_OPTIONS_INIT;
  const char *mode = a.get("--q-mode") ? a.get("--q-mode") : "affine";
  if (std::strcmp(mode, "affine") == 0) o.q_scheme = TBLOB_QUANT_MLX_AFFINE;
  else if (std::strcmp(mode, "mxfp4") == 0) o.q_scheme = TBLOB_QUANT_MXFP4;
  else if (std::strcmp(mode, "mxfp8") == 0) o.q_scheme = TBLOB_QUANT_MXFP8;
  else if (std::strcmp(mode, "nvfp4") == 0) o.q_scheme = TBLOB_QUANT_NVFP4;
  else return usage_error(*a.cmd, "--q-mode is affine, mxfp4, mxfp8 or nvfp4, not '%s'", mode);
  for (const char *flag : {"--q-bits", "--q-group-size"}) {
    if (!a.has(flag)) continue;
    const char *v = a.get(flag);
    char *end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (!*v || *end || n < 1 || n > 1024) return usage_error(*a.cmd, "%s wants a positive number, not '%s'", flag, v);
    (std::strcmp(flag, "--q-bits") == 0 ? o.q_bits : o.q_group_size) = static_cast<uint32_t>(n);
  }
  if (const char *dt = a.get("--dtype")) {
    if (std::strcmp(dt, "bf16") == 0) o.dtype = TBLOB_DTYPE_BF16;
    else if (std::strcmp(dt, "f16") == 0) o.dtype = TBLOB_DTYPE_F16;
    else if (std::strcmp(dt, "f32") == 0) o.dtype = TBLOB_DTYPE_F32;
    else return usage_error(*a.cmd, "--dtype with --to mlx is bf16, f16 or f32, not '%s'", dt);
  }
  if (a.has("--block-size") || a.has("--config") || a.has("--tokenizer"))
    return usage_error(*a.cmd, "--block-size, --config and --tokenizer are for --to slm1");
  g_json = a.json;
  const char *src = a.positional[0], *out = a.positional[1];
  tblob_diag d = TBLOB_DIAG_INIT;
  const tblob_status s = tblob_mlx_convert(src, out, &o, &d);
  if (s != TBLOB_OK) return fail(src, d, s);
  if (a.json) {
    JsonWriter jw;
    jw.lit("{\"src\":");
    jw.str(src);
    jw.field("out", out);
    jw.lit(",\"ok\":true,\"format\":\"mlx\"");
    jw.field("mode", mode);
    jw.raw('}');
    jw.flush_line(stdout);
  } else {
    std::printf("%s: mlx, %s\n", out, mode);
  }
  return kExitOk;
}

}  // namespace

int cmd_convert(const Args &a) {
  if (a.get("--to") && std::strcmp(a.get("--to"), "mlx") == 0) return convert_mlx(a);
  if (a.has("--q-mode") || a.has("--q-bits") || a.has("--q-group-size"))
    return usage_error(*a.cmd, "--q-mode, --q-bits and --q-group-size are for --to mlx");
  const char *to = a.get("--to"), *dtype_arg = a.get("--dtype") ? a.get("--dtype") : "f32";
  const char *config_arg = a.get("--config"), *tokenizer_arg = a.get("--tokenizer");
  const bool skip_integer = a.has("--skip-integer");
  long block = 0;
  const bool block_given = a.has("--block-size");
  if (block_given) {
    const char *v = a.get("--block-size");
    uint64_t n = 0;
    if (!parse_number(v, INT32_MAX, &n) || n < 2)
      return usage_error(*a.cmd, "--block-size wants a number of at least 2, not '%s'", v);
    block = static_cast<long>(n);
  }
  if (!to) return usage_error(*a.cmd, "--to slm1 or --to mlx is required");
  uint32_t dtype = TBLOB_SLM1_F32;
  if (std::strcmp(dtype_arg, "q8_0") == 0) dtype = TBLOB_SLM1_Q8_0;
  else if (std::strcmp(dtype_arg, "q4_0") == 0) dtype = TBLOB_SLM1_Q4_0;
  if (block_given && dtype != TBLOB_SLM1_Q4_0) return usage_error(*a.cmd, "--block-size applies to --dtype q4_0 only");
  g_json = a.json;
  const std::vector<const char *> &pos = a.positional;
  const std::string src = pos[0], out = pos[1];

  tblob_diag d = TBLOB_DIAG_INIT;
  tblob_model *m = nullptr;
  tblob_status s = tblob_model_open(src.c_str(), nullptr, &m, &d);
  if (s != TBLOB_OK) return fail(src.c_str(), d, s);
  const uint32_t fmt = tblob_model_format(m);
  if (fmt != TBLOB_FORMAT_SAFETENSORS && fmt != TBLOB_FORMAT_SAFETENSORS_SHARDED) {
    tblob_model_close(m);
    return fail_text(src + " is " + tblob_format_name(fmt) + "; the source must be safetensors");
  }

  tblob_slm1_writer_options wo = TBLOB_SLM1_WRITER_OPTIONS_INIT;
  const std::string config_path = config_arg ? config_arg : config_beside(src);
  std::string config, tokenizer;
  std::string why;
  if (!read_whole(config_path, &config, &why)) {
    tblob_model_close(m);
    return fail_text("cannot read " + config_path + ": " + why +
                     " (the SLM1 header needs its hyperparameters; pass --config FILE)");
  }
  s = tblob_slm1_writer_options_from_config(&wo, config.data(), config.size(), &d);
  if (s != TBLOB_OK) {
    tblob_model_close(m);
    return fail(config_path.c_str(), d, s);
  }
  if (tokenizer_arg) {
    if (!read_whole(tokenizer_arg, &tokenizer, &why)) {
      tblob_model_close(m);
      return fail_text(std::string("cannot read ") + tokenizer_arg + ": " + why);
    }
    wo.tokenizer = tokenizer.data();
    wo.tokenizer_length = tokenizer.size();
  }
  tblob_slm1_writer *w = nullptr;
  s = tblob_slm1_writer_new(&wo, &w, &d);
  if (s != TBLOB_OK) {
    tblob_model_close(m);
    return fail("header", d, s);
  }

  uint64_t counts[4] = {0, 0, 0, 0};
  std::vector<std::string> skipped;
  std::vector<float> values;
  const uint64_t n = tblob_model_tensor_count(m);
  int rc = kExitOk;
  uint64_t total = 0, done = 0;
  for (uint64_t i = 0; i < n; ++i) {
    tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
    if (tblob_tensor_at(m, i, &t, nullptr) == TBLOB_OK) total += t.data_length;
  }
  ProgressBar bar("converting", true);
  for (uint64_t i = 0; i < n && rc == kExitOk; ++i) {
    bar.update(done, total, i, n, "tensors");
    tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
    const void *data = nullptr;
    uint64_t len = 0;
    if ((s = tblob_tensor_at(m, i, &t, &d)) != TBLOB_OK || (s = tblob_tensor_data(m, i, &data, &len, &d)) != TBLOB_OK) {
      rc = fail(src.c_str(), d, s);
      break;
    }
    const std::string name(t.name, t.name_len);
    if (t.rank < 1 || t.rank > 4) {
      rc = fail_text("tensor \"" + name + "\" has rank " + std::to_string(t.rank) + "; SLM1 holds ranks 1-4");
      break;
    }
    if (is_integer(t.dtype)) {
      if (!skip_integer) {
        rc = fail_text("tensor \"" + name + "\" is " + dtype_and_shape(t) +
                       "; SLM1 holds f32, q8_0 and q4_0 only, so integer and bool tensors cannot be copied: "
                       "pass --skip-integer to leave them out (BERT's embeddings.position_ids, 0..n-1, is "
                       "rebuilt by the model code)");
        break;
      }
      bar.clear();
      std::fprintf(stderr, "tensorblob convert: skipped \"%s\" (%s): SLM1 holds no integer tensors\n", name.c_str(),
                   dtype_and_shape(t).c_str());
      skipped.push_back(name);
      done += t.data_length;
      continue;
    }
    if (!widen(t.dtype, static_cast<const uint8_t *>(data), t.element_count, &values)) {
      rc = fail_text("tensor \"" + name + "\" is " + (tblob_dtype_name(t.dtype) ? tblob_dtype_name(t.dtype) : "?") +
                     "; only F32, F16 and BF16 convert");
      break;
    }
    const uint32_t as = t.rank == 1 ? static_cast<uint32_t>(TBLOB_SLM1_F32) : dtype;
    const uint32_t bs = as == TBLOB_SLM1_Q4_0 ? static_cast<uint32_t>(block) : 0u;
    s = tblob_slm1_writer_add_f32(w, t.name, t.name_len, t.shape, t.rank, values.data(), values.size(),
                                  as, bs, &d);
    if (s != TBLOB_OK) {
      rc = fail(src.c_str(), d, s);
      break;
    }
    ++counts[as];
    done += t.data_length;
  }
  bar.update(done, total, n, n, "tensors");
  tblob_model_close(m);
  if (rc == kExitOk && (s = tblob_slm1_writer_finish(w, out.c_str(), &d)) != TBLOB_OK) rc = fail(out.c_str(), d, s);
  tblob_slm1_writer_free(w);
  bar.finish(rc == kExitOk);
  if (rc != kExitOk) return rc;

  // Reopen and validate everything, checksum included.
  s = tblob_model_open(out.c_str(), nullptr, &m, &d);
  if (s != TBLOB_OK) return fail(out.c_str(), d, s);
  tblob_slm1_header_info h = TBLOB_SLM1_HEADER_INFO_INIT;
  s = tblob_slm1_header(m, &h, &d);
  if (s != TBLOB_OK) {
    tblob_model_close(m);
    return fail(out.c_str(), d, s);
  }
  if (a.json) {
    JsonWriter jw;
    jw.lit("{\"src\":");
    jw.str(src.c_str());
    jw.field("out", out.c_str());
    jw.lit(",\"ok\":true,\"format\":\"slm1\"");
    jw.field_u64("tensors", h.tensor_count);
    jw.field_u64("f32", counts[1]);
    jw.field_u64("q8_0", counts[2]);
    jw.field_u64("q4_0", counts[3]);
    jw.lit(",\"skipped\":[");
    for (size_t k = 0; k < skipped.size(); ++k) {
      if (k) jw.raw(',');
      jw.str(skipped[k].c_str());
    }
    jw.raw(']');
    jw.field("tokenizer", h.tokenizer_kind == TBLOB_SLM1_TOKENIZER_BTOK ? "BTOK" : "BPE1");
    jw.field_u64("vocab_size", h.vocab_size);
    char sum[24];
    std::snprintf(sum, sizeof(sum), "%016llx", static_cast<unsigned long long>(h.checksum));
    jw.field("checksum", sum);
    jw.raw('}');
    jw.flush_line(stdout);
    tblob_model_close(m);
    return kExitOk;
  }
  const std::string skip_note = skipped.empty() ? "" : ", " + std::to_string(skipped.size()) + " integer skipped";
  std::printf("%s: slm1, %u tensors (%llu f32, %llu q8_0, %llu q4_0%s), %s tokenizer, vocab %u, checksum %016llx\n",
              out.c_str(), h.tensor_count, static_cast<unsigned long long>(counts[1]),
              static_cast<unsigned long long>(counts[2]), static_cast<unsigned long long>(counts[3]), skip_note.c_str(),
              h.tokenizer_kind == TBLOB_SLM1_TOKENIZER_BTOK ? "BTOK" : "BPE1", h.vocab_size,
              static_cast<unsigned long long>(h.checksum));
  tblob_model_close(m);
  return kExitOk;
}

}  // namespace tbcli
