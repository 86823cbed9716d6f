// tensorblob convert --to slm1 [--dtype f32|q8_0|q4_0] [--block-size N] [--config FILE]
//                    [--tokenizer FILE] SRC OUT
//
// Converts a safetensors file (or sharded checkpoint) of f32/f16/bf16 tensors into an SLM1
// file (docs/slm1.md). Tensors of rank 2-4 are stored as --dtype (default f32); rank-1 tensors
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

#include "commands.h"
#include "tensorblob.h"

namespace tbcli {

namespace {

void usage_convert(FILE *f) {
  std::fprintf(f,
               "usage: tensorblob convert --to slm1 [--dtype f32|q8_0|q4_0] [--block-size N]\n"
               "                          [--config FILE] [--tokenizer FILE] SRC OUT\n");
}

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

int fail(const char *what, const tblob_diag &d, tblob_status s) {
  std::fprintf(stderr, "tensorblob convert: %s: %s: %s\n", what, tblob_status_name(s),
               d.message[0] ? d.message : tblob_status_message(s));
  return kExitInvalid;
}

}  // namespace

int cmd_convert(int argc, char **argv) {
  const char *to = nullptr, *dtype_arg = "f32", *config_arg = nullptr, *tokenizer_arg = nullptr;
  long block = 0;
  bool block_given = false;
  std::vector<const char *> pos;
  for (int i = 0; i < argc; ++i) {
    const char *a = argv[i];
    auto value = [&](const char **dst) {
      if (i + 1 >= argc) return false;
      *dst = argv[++i];
      return true;
    };
    bool ok = true;
    if (std::strcmp(a, "--to") == 0) {
      ok = value(&to);
    } else if (std::strcmp(a, "--dtype") == 0) {
      ok = value(&dtype_arg);
    } else if (std::strcmp(a, "--config") == 0) {
      ok = value(&config_arg);
    } else if (std::strcmp(a, "--tokenizer") == 0) {
      ok = value(&tokenizer_arg);
    } else if (std::strcmp(a, "--block-size") == 0) {
      const char *v = nullptr;
      ok = value(&v);
      if (ok) {
        char *end = nullptr;
        block = std::strtol(v, &end, 10);
        ok = *v && !*end && block >= 2 && block <= INT32_MAX;
        block_given = true;
      }
    } else if (std::strcmp(a, "-h") == 0 || std::strcmp(a, "--help") == 0) {
      usage_convert(stdout);
      return kExitOk;
    } else if (a[0] == '-' && a[1] != '\0') {
      std::fprintf(stderr, "tensorblob convert: unknown option '%s'\n", a);
      usage_convert(stderr);
      return kExitUsage;
    } else {
      pos.push_back(a);
    }
    if (!ok) {
      std::fprintf(stderr, "tensorblob convert: bad or missing value for %s\n", a);
      usage_convert(stderr);
      return kExitUsage;
    }
  }
  if (!to || std::strcmp(to, "slm1") != 0 || pos.size() != 2) {
    if (to && std::strcmp(to, "slm1") != 0)
      std::fprintf(stderr, "tensorblob convert: --to %s: only slm1 is supported\n", to);
    usage_convert(stderr);
    return kExitUsage;
  }
  uint32_t dtype;
  if (std::strcmp(dtype_arg, "f32") == 0) {
    dtype = TBLOB_SLM1_F32;
  } else if (std::strcmp(dtype_arg, "q8_0") == 0) {
    dtype = TBLOB_SLM1_Q8_0;
  } else if (std::strcmp(dtype_arg, "q4_0") == 0) {
    dtype = TBLOB_SLM1_Q4_0;
  } else {
    std::fprintf(stderr, "tensorblob convert: --dtype %s: use f32, q8_0 or q4_0\n", dtype_arg);
    return kExitUsage;
  }
  if (block_given && dtype != TBLOB_SLM1_Q4_0) {
    std::fprintf(stderr, "tensorblob convert: --block-size applies to --dtype q4_0 only\n");
    return kExitUsage;
  }
  const std::string src = pos[0], out = pos[1];

  tblob_diag d = TBLOB_DIAG_INIT;
  tblob_model *m = nullptr;
  tblob_status s = tblob_model_open(src.c_str(), nullptr, &m, &d);
  if (s != TBLOB_OK) return fail(src.c_str(), d, s);
  const uint32_t fmt = tblob_model_format(m);
  if (fmt != TBLOB_FORMAT_SAFETENSORS && fmt != TBLOB_FORMAT_SAFETENSORS_SHARDED) {
    std::fprintf(stderr, "tensorblob convert: %s is %s; the source must be safetensors\n", src.c_str(),
                 tblob_format_name(fmt));
    tblob_model_close(m);
    return kExitInvalid;
  }

  tblob_slm1_writer_options wo = TBLOB_SLM1_WRITER_OPTIONS_INIT;
  const std::string config_path = config_arg ? config_arg : config_beside(src);
  std::string config, tokenizer;
  std::string why;
  if (!read_whole(config_path, &config, &why)) {
    std::fprintf(stderr, "tensorblob convert: cannot read %s: %s (the SLM1 header needs its hyperparameters; "
                 "pass --config FILE)\n", config_path.c_str(), why.c_str());
    tblob_model_close(m);
    return kExitInvalid;
  }
  s = tblob_slm1_writer_options_from_config(&wo, config.data(), config.size(), &d);
  if (s != TBLOB_OK) {
    tblob_model_close(m);
    return fail(config_path.c_str(), d, s);
  }
  if (tokenizer_arg) {
    if (!read_whole(tokenizer_arg, &tokenizer, &why)) {
      std::fprintf(stderr, "tensorblob convert: cannot read %s: %s\n", tokenizer_arg, why.c_str());
      tblob_model_close(m);
      return kExitInvalid;
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
  std::vector<float> values;
  const uint64_t n = tblob_model_tensor_count(m);
  int rc = kExitOk;
  for (uint64_t i = 0; i < n && rc == kExitOk; ++i) {
    tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
    const void *data = nullptr;
    size_t len = 0;
    if ((s = tblob_tensor_at(m, i, &t, &d)) != TBLOB_OK || (s = tblob_tensor_data(m, i, &data, &len, &d)) != TBLOB_OK) {
      rc = fail(src.c_str(), d, s);
      break;
    }
    const std::string name(t.name, t.name_len);
    if (t.rank < 1 || t.rank > 4) {
      std::fprintf(stderr, "tensorblob convert: tensor \"%s\" has rank %u; SLM1 holds ranks 1-4\n",
                   name.c_str(), t.rank);
      rc = kExitInvalid;
      break;
    }
    if (!widen(t.dtype, static_cast<const uint8_t *>(data), t.element_count, &values)) {
      std::fprintf(stderr, "tensorblob convert: tensor \"%s\" is %s; only F32, F16 and BF16 convert\n",
                   name.c_str(), tblob_dtype_name(t.dtype) ? tblob_dtype_name(t.dtype) : "?");
      rc = kExitInvalid;
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
  }
  tblob_model_close(m);
  if (rc == kExitOk && (s = tblob_slm1_writer_finish(w, out.c_str(), &d)) != TBLOB_OK) rc = fail(out.c_str(), d, s);
  tblob_slm1_writer_free(w);
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
  std::printf("%s: slm1, %u tensors (%llu f32, %llu q8_0, %llu q4_0), %s tokenizer, vocab %u, checksum %016llx\n",
              out.c_str(), h.tensor_count, static_cast<unsigned long long>(counts[1]),
              static_cast<unsigned long long>(counts[2]), static_cast<unsigned long long>(counts[3]),
              h.tokenizer_kind == TBLOB_SLM1_TOKENIZER_BTOK ? "BTOK" : "BPE1", h.vocab_size,
              static_cast<unsigned long long>(h.checksum));
  tblob_model_close(m);
  return kExitOk;
}

}  // namespace tbcli
