// tblob_mlx_convert: a safetensors model to an MLX (mlx_lm) directory, quantized with
// lib/quant (docs/quantize.md, "Converting to MLX"). Streams each tensor in row pieces through
// one bounded work area: the tensor cast to the target dtype (tblob_tensor_dequantize), then
// its codes, scales and biases (tblob_quant_quantize), each written at its place in the output
// file (pwrite). Output goes to OUT.tmp-<pid>, renamed to OUT when complete.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "convert/mlx_convert.h"
#include "core/checked.h"
#include "core/struct_size.h"
#include "io/file.h"

namespace tblob {
namespace convert {

namespace {

using tblob::Diag;
using tblob::Status;

// Work area: 4 Mi values of the cast tensor (16 MiB as f32) plus its quantized piece.
constexpr uint64_t kPieceValues = uint64_t{1} << 22;

enum Kind { kQuantized, kCast, kCopy };

// A growable byte buffer on malloc (no std::vector<uint8_t> instantiation leaves this object:
// the library exports only tblob_ symbols).
class Bytes {
 public:
  Bytes() = default;
  Bytes(const Bytes &) = delete;
  Bytes &operator=(const Bytes &) = delete;
  ~Bytes() { std::free(p_); }
  bool reserve(size_t n) {
    if (n <= n_) return true;
    void *q = std::realloc(p_, n ? n : 1);
    if (!q) return false;
    p_ = static_cast<uint8_t *>(q);
    n_ = n;
    return true;
  }
  uint8_t *data() const { return p_; }
  size_t size() const { return n_; }

 private:
  uint8_t *p_ = nullptr;
  size_t n_ = 0;
};

// a + b.
std::string cat(const std::string &a, const char *b) {
  std::string r(a);
  r.append(b);
  return r;
}

struct Plan {
  uint64_t src_index;
  Kind kind;
  uint32_t out_dtype;          // kCast: the target; kQuantized: the dtype quantized from
  std::string name;            // output name of the tensor itself (X.weight for kQuantized)
  std::vector<uint64_t> shape; // stored (kCopy / kCast) or logical (kQuantized) shape
  uint64_t rows = 1, cols = 1;
  uint64_t bytes = 0;          // kCast / kCopy: the tensor's output length
  uint64_t offset = 0;         // in the data region
  tblob_quant_desc q = TBLOB_QUANT_DESC_INIT;  // kQuantized: lengths for the whole tensor
  uint64_t scales_offset = 0, biases_offset = 0;
};

// One output tensor of the header (a quantized plan has two or three).
struct Entry {
  std::string name;
  uint32_t dtype;
  std::vector<uint64_t> shape;
  uint64_t bytes;
  size_t plan;
  int part;  // 0 the tensor / codes, 1 scales, 2 biases
};

uint32_t esize(uint32_t dt) { return dt == TBLOB_DTYPE_F32 ? 4u : 2u; }

bool is_float(uint32_t dt) {
  return dt == TBLOB_DTYPE_F32 || dt == TBLOB_DTYPE_F16 || dt == TBLOB_DTYPE_BF16;
}

bool ends_with(const std::string &s, const char *suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

bool read_file(const std::string &path, std::string *out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (int64_t{1} << 30)) {
    ::close(fd);
    return false;
  }
  out->resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < out->size()) {
    const ssize_t n = ::read(fd, &(*out)[got], out->size() - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  return got == out->size();
}

bool write_file(const std::string &path, const void *p, size_t n) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const bool ok = tblob::write_all(fd, p, n);
  return (::close(fd) == 0) && ok;
}

bool pwrite_all(int fd, const void *p, uint64_t n, uint64_t off) {
  const uint8_t *b = static_cast<const uint8_t *>(p);
  while (n) {
    const size_t chunk = n > (uint64_t{1} << 30) ? (size_t{1} << 30) : static_cast<size_t>(n);
    const ssize_t w = ::pwrite(fd, b, chunk, static_cast<off_t>(off));
    if (w <= 0) return false;
    b += w;
    n -= static_cast<uint64_t>(w);
    off += static_cast<uint64_t>(w);
  }
  return true;
}

// The value of a top-level string member `"key": "value"` of a JSON object, found by text
// (config.json as Hugging Face writes it); empty when absent.
std::string json_string_member(const std::string &json, const char *key) {
  const std::string k = std::string("\"") + key + "\"";
  size_t p = json.find(k);
  if (p == std::string::npos) return "";
  p = json.find_first_not_of(" \t\r\n", p + k.size());
  if (p == std::string::npos || json[p] != ':') return "";
  p = json.find_first_not_of(" \t\r\n", p + 1);
  if (p == std::string::npos || json[p] != '"') return "";
  const size_t e = json.find('"', p + 1);
  return e == std::string::npos ? "" : json.substr(p + 1, e - p - 1);
}

// s as Python's json.dumps writes it (ensure_ascii): quotes, \" \\ \n \r \t \b \f, other controls
// and every non-ASCII code point as \uXXXX (UTF-16, surrogate pairs). Input is valid UTF-8
// (tensor names are checked at open).
void json_string(std::string *out, const std::string &s) {
  out->push_back('"');
  char buf[16];
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    uint32_t cp = c;
    size_t len = 1;
    if (c >= 0xF0 && i + 3 < s.size()) {
      cp = ((c & 0x07u) << 18) | ((s[i + 1] & 0x3Fu) << 12) | ((s[i + 2] & 0x3Fu) << 6) | (s[i + 3] & 0x3Fu);
      len = 4;
    } else if (c >= 0xE0 && i + 2 < s.size()) {
      cp = ((c & 0x0Fu) << 12) | ((s[i + 1] & 0x3Fu) << 6) | (s[i + 2] & 0x3Fu);
      len = 3;
    } else if (c >= 0xC0 && i + 1 < s.size()) {
      cp = ((c & 0x1Fu) << 6) | (s[i + 1] & 0x3Fu);
      len = 2;
    }
    i += len;
    if (cp == '"' || cp == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(cp));
    } else if (cp >= 0x20 && cp < 0x7F) {
      out->push_back(static_cast<char>(cp));
    } else if (cp == '\n' || cp == '\r' || cp == '\t' || cp == '\b' || cp == '\f') {
      out->push_back('\\');
      out->push_back(cp == '\n' ? 'n' : cp == '\r' ? 'r' : cp == '\t' ? 't' : cp == '\b' ? 'b' : 'f');
    } else if (cp >= 0x10000) {
      const uint32_t v = cp - 0x10000;
      std::snprintf(buf, sizeof(buf), "\\u%04x\\u%04x", 0xD800u + (v >> 10), 0xDC00u + (v & 0x3FFu));
      out->append(buf);
    } else {
      std::snprintf(buf, sizeof(buf), "\\u%04x", cp);
      out->append(buf);
    }
  }
  out->push_back('"');
}

const char *mode_name(uint32_t scheme) {
  switch (scheme) {
    case TBLOB_QUANT_MXFP4: return "mxfp4";
    case TBLOB_QUANT_MXFP8: return "mxfp8";
    case TBLOB_QUANT_NVFP4: return "nvfp4";
    default: return "affine";
  }
}

// Removes a temporary output directory and the files written into it.
void remove_tree(const std::string &dir) {
  if (DIR *d = ::opendir(dir.c_str())) {
    while (struct dirent *e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, ".."))
        ::unlink((dir + "/" + e->d_name).c_str());
    }
    ::closedir(d);
  }
  ::rmdir(dir.c_str());
}

class Job {
 public:
  Job(const Diag &d, const tblob_mlx_convert_options &o) : d_(d), o_(o) {}
  ~Job() {
    if (model_) tblob_model_close(model_);
    if (fd_ >= 0) ::close(fd_);
    if (!tmp_.empty()) remove_tree(tmp_);
  }
  Status run(const char *src, const char *out);

 private:
  Status fail(Status s, const char *fmt, const std::string &what) const {
    return d_.fail(s, TBLOB_NO_OFFSET, -1, fmt, what.c_str());
  }
  Status forward(Status s, const tblob_diag &inner) const {
    return d_.fail(s, TBLOB_NO_OFFSET, -1, "%s", inner.message);
  }
  Status plan_tensors(uint32_t dtype, uint32_t bits, uint32_t group);
  Status write_model();
  Status write_tensor(const Plan &p, uint64_t data_start);

  const Diag &d_;
  tblob_mlx_convert_options o_;
  tblob_model *model_ = nullptr;
  std::vector<Plan> plans_;
  std::vector<Entry> entries_;
  std::string tmp_;
  int fd_ = -1;
  Bytes work_, qdata_, qscales_, qbiases_;
};

Status Job::plan_tensors(uint32_t dtype, uint32_t bits, uint32_t group) {
  const uint64_t count = tblob_model_tensor_count(model_);
  tblob_diag inner = TBLOB_DIAG_INIT;
  Status s;
  for (uint64_t i = 0; i < count; ++i) {
    tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
    s = tblob_tensor_at(model_, i, &t, &inner);
    if (s != TBLOB_OK) return forward(s, inner);
    Plan p;
    p.src_index = i;
    p.name.assign(t.name, t.name_len);
    if (t.quant_flags != 0)
      return fail(TBLOB_E_UNSUPPORTED, "tensor \"%s\" is already quantized: convert a float model", p.name);
    p.shape.assign(t.shape, t.shape + t.rank);
    for (uint32_t k = 0; k + 1 < t.rank; ++k) p.rows *= t.shape[k];
    p.cols = t.rank ? t.shape[t.rank - 1] : 1;
    const uint32_t target = dtype ? dtype : t.dtype;
    if (is_float(t.dtype) && t.rank == 2 && ends_with(p.name, ".weight") && p.cols % group == 0 && p.cols) {
      p.kind = kQuantized;
      p.out_dtype = target;
      p.q.scheme = o_.q_scheme;
      p.q.bits = o_.q_scheme == TBLOB_QUANT_MLX_AFFINE ? bits : 0;
      p.q.group_size = group;
      p.q.scale_dtype = o_.q_scheme == TBLOB_QUANT_MLX_AFFINE ? target
                        : o_.q_scheme == TBLOB_QUANT_NVFP4    ? uint32_t{TBLOB_DTYPE_F8_E4M3}
                                                              : uint32_t{TBLOB_DTYPE_F8_E8M0};
      p.q.bias_dtype = o_.q_scheme == TBLOB_QUANT_MLX_AFFINE ? target : 0;
      p.q.rows = p.rows;
      p.q.cols = p.cols;
      s = tblob_quant_size(&p.q, &inner);
      if (s != TBLOB_OK) return forward(s, inner);
      const std::string base = p.name.substr(0, p.name.size() - 7);
      const uint64_t words = p.cols * bits / 32;
      entries_.push_back({p.name, TBLOB_DTYPE_U32, {p.rows, words}, p.q.data_bytes, plans_.size(), 0});
      const uint32_t sdt = o_.q_scheme == TBLOB_QUANT_MLX_AFFINE ? target : uint32_t{TBLOB_DTYPE_U8};
      entries_.push_back({base + ".scales", sdt, {p.rows, p.cols / group}, p.q.scales_bytes, plans_.size(), 1});
      if (p.q.biases_bytes)
        entries_.push_back({base + ".biases", sdt, {p.rows, p.cols / group}, p.q.biases_bytes, plans_.size(), 2});
    } else if (is_float(t.dtype)) {
      p.kind = kCast;
      p.out_dtype = target;
      uint64_t n;
      if (!tblob::checked_mul(p.rows, p.cols, &n) || !tblob::checked_mul(n, esize(target), &p.bytes))
        return fail(TBLOB_E_SHAPE_OVERFLOW, "tensor \"%s\": size overflows", p.name);
      entries_.push_back({p.name, target, p.shape, p.bytes, plans_.size(), 0});
    } else {
      p.kind = kCopy;
      p.out_dtype = t.dtype;
      p.bytes = t.data_length;
      entries_.push_back({p.name, t.dtype, p.shape, p.bytes, plans_.size(), 0});
    }
    plans_.push_back(p);
  }
  // mx.save_safetensors' order is not pinned; ours: by name, data in that order.
  std::sort(entries_.begin(), entries_.end(), [](const Entry &a, const Entry &b) { return a.name < b.name; });
  for (size_t k = 1; k < entries_.size(); ++k)
    if (entries_[k].name == entries_[k - 1].name)
      return fail(TBLOB_E_DUPLICATE_NAME, "two output tensors are named \"%s\" (a .scales/.biases already there?)",
                  entries_[k].name);
  return TBLOB_OK;
}

Status Job::write_tensor(const Plan &p, uint64_t data_start) {
  tblob_diag inner = TBLOB_DIAG_INIT;
  Status s;
  if (p.kind == kCopy) {
    uint64_t done = 0;
    while (done < p.bytes) {
      const uint64_t n = std::min<uint64_t>(p.bytes - done, work_.size());
      s = tblob_tensor_read(model_, p.src_index, done, work_.data(), static_cast<size_t>(n), &inner);
      if (s != TBLOB_OK) return forward(s, inner);
      if (!pwrite_all(fd_, work_.data(), n, data_start + p.offset + done))
        return fail(TBLOB_E_IO, "writing %s failed", tmp_ + "/model.safetensors");
      done += n;
    }
    return TBLOB_OK;
  }
  const uint32_t es = esize(p.out_dtype);
  const uint64_t piece_rows = std::max<uint64_t>(1, kPieceValues / std::max<uint64_t>(1, p.cols));
  for (uint64_t rb = 0; rb < p.rows; rb += piece_rows) {
    const uint64_t re = std::min(p.rows, rb + piece_rows), n = (re - rb) * p.cols;
    s = tblob_tensor_dequantize(model_, p.src_index, p.out_dtype, rb, re, work_.data(),
                                static_cast<size_t>(n * es), &inner);
    if (s != TBLOB_OK) return forward(s, inner);
    if (p.kind == kCast) {
      if (!pwrite_all(fd_, work_.data(), n * es, data_start + p.offset + rb * p.cols * es))
        return fail(TBLOB_E_IO, "writing %s failed", tmp_ + "/model.safetensors");
      continue;
    }
    tblob_quant_desc q = p.q;
    q.rows = re - rb;
    s = tblob_quant_size(&q, &inner);
    if (s != TBLOB_OK) return forward(s, inner);
    q.data = qdata_.data();
    q.scales = qscales_.data();
    q.biases = q.biases_bytes ? qbiases_.data() : nullptr;
    tblob_quantize_options qo = TBLOB_QUANTIZE_OPTIONS_INIT;
    qo.threads = o_.threads;
    s = tblob_quant_quantize(&q, p.out_dtype, work_.data(), static_cast<size_t>(n * es), &qo, &inner);
    if (s != TBLOB_OK)
      return d_.fail(s, TBLOB_NO_OFFSET, static_cast<int64_t>(p.src_index), "tensor \"%s\" (rows from %llu): %s",
                     p.name.c_str(), static_cast<unsigned long long>(rb), inner.message);
    const uint64_t row_data = p.q.data_bytes / p.rows, row_scales = p.q.scales_bytes / p.rows,
                   row_biases = p.q.biases_bytes / p.rows;
    if (!pwrite_all(fd_, qdata_.data(), q.data_bytes, data_start + p.offset + rb * row_data) ||
        !pwrite_all(fd_, qscales_.data(), q.scales_bytes, data_start + p.scales_offset + rb * row_scales) ||
        (q.biases_bytes && !pwrite_all(fd_, qbiases_.data(), q.biases_bytes,
                                       data_start + p.biases_offset + rb * row_biases)))
      return fail(TBLOB_E_IO, "writing %s failed", tmp_ + "/model.safetensors");
  }
  return TBLOB_OK;
}

Status Job::write_model() {
  // Offsets in the data region, in entry order.
  uint64_t off = 0;
  for (const Entry &e : entries_) {
    Plan &p = plans_[e.plan];
    (e.part == 0 ? p.offset : e.part == 1 ? p.scales_offset : p.biases_offset) = off;
    if (!tblob::checked_add(off, e.bytes, &off)) return fail(TBLOB_E_SHAPE_OVERFLOW, "%s", "output size overflows");
  }
  std::vector<tblob_st_tensor_spec> specs(entries_.size());
  for (size_t k = 0; k < entries_.size(); ++k) {
    specs[k].name = entries_[k].name.data();
    specs[k].name_len = entries_[k].name.size();
    specs[k].dtype = entries_[k].dtype;
    specs[k].rank = static_cast<uint32_t>(entries_[k].shape.size());
    specs[k].shape = entries_[k].shape.empty() ? nullptr : entries_[k].shape.data();
    specs[k].data_bytes = entries_[k].bytes;
  }
  const char *mk[] = {"format"}, *mv[] = {"mlx"};
  size_t hlen = 0;
  tblob_diag inner = TBLOB_DIAG_INIT;
  Status s = tblob_st_header_write(specs.data(), specs.size(), mk, mv, 1, nullptr, 0, &hlen, &inner);
  if (s != TBLOB_OK && s != TBLOB_E_BUFFER_TOO_SMALL) return forward(s, inner);
  std::vector<uint8_t> header(hlen);
  s = tblob_st_header_write(specs.data(), specs.size(), mk, mv, 1, header.data(), header.size(), &hlen, &inner);
  if (s != TBLOB_OK) return forward(s, inner);
  const std::string path = tmp_ + "/model.safetensors";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0 || !pwrite_all(fd_, header.data(), hlen, 0) || ::ftruncate(fd_, static_cast<off_t>(hlen + off)) != 0)
    return fail(TBLOB_E_IO, "cannot write %s", path);
  for (const Plan &p : plans_) {
    s = write_tensor(p, hlen);
    if (s != TBLOB_OK) return s;
  }
  if (::fsync(fd_) != 0 || ::close(fd_) != 0) {
    fd_ = -1;
    return fail(TBLOB_E_IO, "cannot write %s", path);
  }
  fd_ = -1;
  return TBLOB_OK;
}

Status Job::run(const char *src, const char *out) {
  tblob_diag inner = TBLOB_DIAG_INIT;
  const uint32_t sch = o_.q_scheme;
  if (sch != TBLOB_QUANT_MLX_AFFINE && sch != TBLOB_QUANT_MXFP4 && sch != TBLOB_QUANT_MXFP8 && sch != TBLOB_QUANT_NVFP4)
    return fail(TBLOB_E_QUANT_SCHEME, "%s", "q_scheme must be MLX affine, mxfp4, mxfp8 or nvfp4");
  const uint32_t bits = o_.q_bits ? o_.q_bits : (sch == TBLOB_QUANT_MXFP8 ? 8u : 4u);
  const uint32_t group = o_.q_group_size ? o_.q_group_size
                         : sch == TBLOB_QUANT_MLX_AFFINE ? 64u
                         : sch == TBLOB_QUANT_NVFP4      ? 16u
                                                         : 32u;
  if (sch != TBLOB_QUANT_MLX_AFFINE && bits != (sch == TBLOB_QUANT_MXFP8 ? 8u : 4u))
    return fail(TBLOB_E_QUANT_SCHEME, "%s", "mxfp4 and nvfp4 take 4 bits, mxfp8 8");
  if (o_.dtype && !is_float(o_.dtype)) return fail(TBLOB_E_DTYPE, "%s", "dtype must be F32, F16 or BF16");
  // The source directory and its config.json.
  struct stat st;
  std::string dir = src;
  if (::stat(src, &st) != 0) return fail(TBLOB_E_IO, "%s: no such file or directory", dir);
  if (!S_ISDIR(st.st_mode)) {
    const size_t slash = dir.rfind('/');
    dir = slash == std::string::npos ? "." : dir.substr(0, slash ? slash : 1);
  }
  std::string config;
  if (!read_file(dir + "/config.json", &config))
    return fail(TBLOB_E_NOT_FOUND, "%s: cannot read it (the MLX model needs its config.json)", dir + "/config.json");
  const size_t open_brace = config.find_first_not_of(" \t\r\n");
  const size_t close_brace = config.find_last_not_of(" \t\r\n");
  if (open_brace == std::string::npos || config[open_brace] != '{' || config[close_brace] != '}')
    return fail(TBLOB_E_JSON, "%s: not a JSON object", dir + "/config.json");
  if (config.find("\"quantization\"") != std::string::npos || config.find("\"quantization_config\"") != std::string::npos)
    return fail(TBLOB_E_UNSUPPORTED, "%s: the model is already quantized (quantization in config.json)",
                dir + "/config.json");
  uint32_t dtype = o_.dtype;
  if (!dtype) {
    const std::string td = json_string_member(config, "torch_dtype");
    dtype = td == "bfloat16" ? TBLOB_DTYPE_BF16 : td == "float16" ? TBLOB_DTYPE_F16 : td == "float32" ? TBLOB_DTYPE_F32 : 0;
  }
  // A directory: its index (sharded), else its model.safetensors.
  std::string open_path = src;
  struct stat ist;
  if (S_ISDIR(st.st_mode) && ::stat((dir + "/model.safetensors.index.json").c_str(), &ist) != 0)
    open_path = dir + "/model.safetensors";
  Status s = tblob_model_open(open_path.c_str(), nullptr, &model_, &inner);
  if (s != TBLOB_OK) return forward(s, inner);
  s = plan_tensors(dtype, bits, group);
  if (s != TBLOB_OK) return s;

  // The work area: one piece of the cast tensor and its quantized form; a row longer than
  // the piece is a piece of its own.
  uint64_t widest = kPieceValues;
  for (const Plan &p : plans_)
    if (p.kind != kCopy && p.cols > widest) widest = p.cols;
  if (widest > (uint64_t{1} << 40) || !work_.reserve(static_cast<size_t>(widest * 4)) ||
      !qdata_.reserve(static_cast<size_t>(widest)) || !qscales_.reserve(static_cast<size_t>(widest / 16 * 4 + 4)) ||
      !qbiases_.reserve(static_cast<size_t>(widest / 16 * 4 + 4)))
    return fail(TBLOB_E_OUT_OF_MEMORY, "%s", "the work area (about 40 MiB) could not be allocated");

  if (::stat(out, &st) == 0) return fail(TBLOB_E_IO, "%s exists (the output directory must not)", out);
  char suffix[32];
  std::snprintf(suffix, sizeof(suffix), ".tmp-%ld", static_cast<long>(::getpid()));
  tmp_ = cat(out, suffix);
  if (::mkdir(tmp_.c_str(), 0755) != 0) {
    const std::string t = tmp_;
    tmp_.clear();
    return fail(TBLOB_E_IO, "cannot create %s", t);
  }
  s = write_model();
  if (s != TBLOB_OK) return s;

  // model.safetensors.index.json as mlx_lm writes it (json.dump, indent 4): total_size the
  // tensors' bytes, total_parameters the source tensors' element counts, names sorted.
  uint64_t total_size = 0, total_params = 0;
  for (const Entry &e : entries_) total_size += e.bytes;
  for (const Plan &p : plans_) {
    uint64_t n = 1;
    for (uint64_t dim : p.shape) n *= dim;
    total_params += n;
  }
  std::string index = "{\n    \"metadata\": {\n        \"total_size\": ";
  char num[64];
  std::snprintf(num, sizeof(num), "%llu,\n        \"total_parameters\": %llu\n    },\n",
                static_cast<unsigned long long>(total_size), static_cast<unsigned long long>(total_params));
  index.append(num);
  index.append("    \"weight_map\": {");
  for (size_t k = 0; k < entries_.size(); ++k) {
    index.append(k ? ",\n        " : "\n        ");
    json_string(&index, entries_[k].name);
    index.append(": \"model.safetensors\"");
  }
  index.append(entries_.empty() ? "}\n}" : "\n    }\n}");
  if (!write_file(cat(tmp_, "/model.safetensors.index.json"), index.data(), index.size()))
    return fail(TBLOB_E_IO, "cannot write %s", cat(tmp_, "/model.safetensors.index.json"));

  // config.json: the source text with the two blocks mlx_lm adds before its closing brace.
  char block[256];
  std::snprintf(block, sizeof(block), "{\"group_size\": %u, \"bits\": %u, \"mode\": \"%s\"}", group, bits,
                mode_name(sch));
  const size_t last = config.find_last_not_of(" \t\r\n", close_brace - 1);
  const bool empty = last == open_brace;
  std::string cfg = config.substr(0, last + 1) + (empty ? "\n" : ",\n") + "    \"quantization\": " + block +
                    ",\n    \"quantization_config\": " + block + "\n}\n";
  if (!write_file(tmp_ + "/config.json", cfg.data(), cfg.size()))
    return fail(TBLOB_E_IO, "cannot write %s", tmp_ + "/config.json");
  // The other files beside the weights (tokenizer, generation config, code).
  if (DIR *dh = ::opendir(dir.c_str())) {
    while (struct dirent *e = ::readdir(dh)) {
      const std::string n = e->d_name;
      if (n == "." || n == ".." || n == "config.json" || ends_with(n, ".safetensors") ||
          ends_with(n, ".safetensors.index.json"))
        continue;
      struct stat fs;
      std::string body;
      if (::stat((dir + "/" + n).c_str(), &fs) != 0 || !S_ISREG(fs.st_mode)) continue;
      if (!read_file(dir + "/" + n, &body) || !write_file(tmp_ + "/" + n, body.data(), body.size())) {
        ::closedir(dh);
        return fail(TBLOB_E_IO, "cannot copy %s", dir + "/" + n);
      }
    }
    ::closedir(dh);
  }
  if (::rename(tmp_.c_str(), out) != 0) return fail(TBLOB_E_IO, "cannot rename the output to %s", out);
  tmp_.clear();
  return TBLOB_OK;
}

}  // namespace

Status mlx_convert(const char *src, const char *out_dir, const tblob_mlx_convert_options &options, const Diag &d) {
  Job job(d, options);
  return job.run(src, out_dir);
}

}  // namespace convert
}  // namespace tblob
