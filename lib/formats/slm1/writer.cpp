#include "formats/slm1/writer.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <sys/stat.h>
#include <unistd.h>

#include "core/checked.h"
#include "formats/slm1/format.h"
#include "formats/slm1/tokenizer.h"
#include "hash/fnv1a.h"
#include "io/file.h"
#include "json/json_lex.h"
#include "quant/quantize.h"

// ---- the writer -------------------------------------------------------------------------------
tblob_slm1_writer::~tblob_slm1_writer() {
  for (size_t i = 0; i < tensors.size(); ++i) {
    const tblob::slm1::Pending &p = tensors[i];
    alloc.free(p.name, p.name_len ? p.name_len : 1);
    alloc.free(p.payload, static_cast<size_t>(p.e.payload_bytes));
    if (p.scales) alloc.free(p.scales, static_cast<size_t>(p.e.scale_bytes));
  }
  if (tokenizer) alloc.free(tokenizer, tokenizer_len);
}

namespace tblob {
namespace slm1 {

namespace {

using ull = unsigned long long;

constexpr uint8_t kZeros[64] = {0};

Status bad_arg(const Diag &diag, const char *what) {
  return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1, "invalid argument: %s", what);
}

Status oom(const Diag &diag) {
  return diag.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "out of memory in the SLM1 writer");
}

// Checks name, shape and dtype and fills e (hash, fields, derived sizes).
Status prepare(tblob_slm1_writer *w, const char *name, size_t name_len, const uint64_t *shape,
               uint32_t rank, uint32_t dtype, uint32_t block_size, Entry *e, const Diag &diag) {
  if (!w) return bad_arg(diag, "writer is required");
  if (w->finished) return bad_arg(diag, "the writer has already finished");
  if (!name && name_len) return bad_arg(diag, "name is NULL with a non-zero length");
  const ShownName shown_name(name, name_len);
  const int shown = shown_name.len;
  const char *ell = shown_name.ell;
  if (name_len == 0) return bad_arg(diag, "tensor names must be non-empty");
  if (std::memchr(name, 0, name_len))
    return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1,
                     "invalid argument: tensor name \"%.*s%s\" contains a NUL byte", shown, shown_name.text, ell);
  if (json::first_invalid_utf8(reinterpret_cast<const uint8_t *>(name), name_len) >= 0)
    return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1,
                     "invalid argument: tensor name \"%.*s%s\" is not valid UTF-8", shown, shown_name.text, ell);
  if (!shape && rank) return bad_arg(diag, "shape is NULL");
  *e = Entry{};
  e->dtype = dtype;
  e->rank = rank;
  if (rank < 1 || rank > kMaxRank)
    return diag.fail(TBLOB_E_SLM1_ENTRY, TBLOB_NO_OFFSET, -1,
                     "tensor \"%.*s%s\": rank %u is outside 1-4", shown, shown_name.text, ell, rank);
  for (uint32_t k = 0; k < rank; ++k) {
    if (shape[k] == 0 || shape[k] > UINT32_MAX)
      return diag.fail(TBLOB_E_SLM1_ENTRY, TBLOB_NO_OFFSET, -1,
                       "tensor \"%.*s%s\": dim %u is %llu; SLM1 dims are 1 to 2^32-1", shown, shown_name.text,
                       ell, k, static_cast<ull>(shape[k]));
    e->dims[k] = static_cast<uint32_t>(shape[k]);
  }
  e->block_size = block_size;
  if (block_size == 0 && dtype == kDtypeQ8_0) e->block_size = e->dims[rank - 1];
  if (block_size == 0 && dtype == kDtypeQ4_0) e->block_size = 32;
  EntryProblem p;
  if (!check_entry_shape(e, UINT32_MAX, &p))
    return diag.fail(p.status, TBLOB_NO_OFFSET, -1, "tensor \"%.*s%s\": %s", shown, shown_name.text, ell, p.why);
  e->hash = fnv1a64(name, name_len);
  e->byte_length = e->payload_bytes;
  return TBLOB_OK;
}

// Takes ownership of the buffers on success; frees them on failure.
Status push(tblob_slm1_writer *w, const Entry &e, const char *name, size_t name_len,
            uint8_t *payload, uint8_t *scales, const Diag &diag) {
  Pending p;
  p.e = e;
  p.name = static_cast<char *>(w->alloc.alloc(name_len));
  p.name_len = name_len;
  p.payload = payload;
  p.scales = scales;
  if (p.name) std::memcpy(p.name, name, name_len);
  if (!p.name || !w->tensors.push(p)) {
    w->alloc.free(p.name, name_len);
    w->alloc.free(payload, static_cast<size_t>(e.payload_bytes));
    w->alloc.free(scales, static_cast<size_t>(e.scale_bytes));
    return oom(diag);
  }
  return TBLOB_OK;
}

bool allocate_buffers(tblob_slm1_writer *w, const Entry &e, uint8_t **payload, uint8_t **scales) {
  *payload = static_cast<uint8_t *>(w->alloc.alloc(static_cast<size_t>(e.payload_bytes)));
  *scales = nullptr;
  if (e.dtype != kDtypeF32) *scales = static_cast<uint8_t *>(w->alloc.alloc(static_cast<size_t>(e.scale_bytes)));
  if (*payload && (e.dtype == kDtypeF32 || *scales)) return true;
  w->alloc.free(*payload, static_cast<size_t>(e.payload_bytes));
  w->alloc.free(*scales, static_cast<size_t>(e.scale_bytes));
  return false;
}

// Forwards to a sink while computing the checksum over everything written.
class Emitter {
 public:
  Emitter(ByteSink *sink) : sink_(sink) {}
  bool write(const uint8_t *p, size_t n) {
    sum_.update(p, n);
    return sink_->write(p, n);
  }
  bool pad_to(uint64_t offset) {
    while (sum_.position() < offset) {
      const uint64_t left = offset - sum_.position();
      if (!write(kZeros, left < sizeof(kZeros) ? static_cast<size_t>(left) : sizeof(kZeros))) return false;
    }
    return true;
  }
  uint64_t position() const { return sum_.position(); }
  uint64_t checksum() const { return sum_.value(); }

 private:
  ByteSink *sink_;
  ChecksumStream sum_;
};

class FdSink final : public ByteSink {
 public:
  explicit FdSink(int fd) : fd_(fd) {}
  bool write(const uint8_t *p, size_t n) override { return write_all(fd_, p, n); }
  bool patch(uint64_t offset, const uint8_t *p, size_t n) override {
    return ::pwrite(fd_, p, n, static_cast<off_t>(offset)) == static_cast<ssize_t>(n);
  }

 private:
  int fd_;
};

}  // namespace

Status writer_create(const tblob_slm1_writer_options *options, tblob_slm1_writer **out,
                     const Diag &diag) {
  if (!out) return bad_arg(diag, "out is required");
  *out = nullptr;
  tblob_slm1_writer_options o = TBLOB_SLM1_WRITER_OPTIONS_INIT;
  if (options) {
    if (options->struct_size < offsetof(tblob_slm1_writer_options, rms_norm_epsilon) + sizeof(float))
      return bad_arg(diag, "options->struct_size too small (use TBLOB_SLM1_WRITER_OPTIONS_INIT)");
    const size_t n = options->struct_size < sizeof(o) ? options->struct_size : sizeof(o);
    std::memcpy(static_cast<void *>(&o), options, n);
    o.struct_size = sizeof(o);
  }
  if (!o.tokenizer && o.tokenizer_length) return bad_arg(diag, "tokenizer is NULL with a non-zero length");
  Allocator a(o.allocator);
  void *mem = a.alloc(sizeof(tblob_slm1_writer));
  if (!mem) return oom(diag);
  tblob_slm1_writer *w = new (mem) tblob_slm1_writer(o.allocator);
  Header &h = w->header;
  h.version = kVersion;
  h.header_length = static_cast<uint32_t>(kHeaderBytes);
  h.model_type = o.model_type;
  h.flags = o.flags;
  h.special_token_count = o.special_token_count ? o.special_token_count : kSpecialCount;
  h.hidden_size = o.hidden_size;
  h.layer_count = o.layer_count;
  h.head_count = o.head_count;
  h.kv_head_count = o.kv_head_count ? o.kv_head_count : o.head_count;
  h.head_dim = o.head_dim ? o.head_dim : (o.head_count ? o.hidden_size / o.head_count : 0);
  h.ffn_size = o.ffn_size;
  h.max_context = o.max_context;
  h.rope_theta = o.rope_theta;
  h.rms_norm_epsilon = o.rms_norm_epsilon;
  w->tokenizer_len = o.tokenizer ? o.tokenizer_length : kBtokBytes;
  w->tokenizer = static_cast<uint8_t *>(a.alloc(w->tokenizer_len ? w->tokenizer_len : 1));
  if (!w->tokenizer) {
    w->tokenizer_len = 0;
    writer_free(w);
    return oom(diag);
  }
  if (o.tokenizer) {
    if (w->tokenizer_len) std::memcpy(w->tokenizer, o.tokenizer, w->tokenizer_len);
  } else {
    encode_btok(w->tokenizer);
  }
  TokenizerInfo tk;
  Status s = check_tokenizer(w->tokenizer, w->tokenizer_len, kHeaderBytes, 0, a, &tk, diag);
  if (s != TBLOB_OK) {
    writer_free(w);
    return s;
  }
  h.vocab_size = tk.vocab_size;
  HeaderProblem p;
  if (!header_fields_ok(h, &p)) {
    writer_free(w);
    return diag.fail(TBLOB_E_SLM1_HEADER, TBLOB_NO_OFFSET, -1, "writer header field %s %s", p.field, p.why);
  }
  *out = w;
  return TBLOB_OK;
}

void writer_free(tblob_slm1_writer *w) {
  if (!w) return;
  Allocator a = w->alloc;
  w->~tblob_slm1_writer();
  a.free(w, sizeof(tblob_slm1_writer));
}

Status writer_add_f32(tblob_slm1_writer *w, const char *name, size_t name_len,
                      const uint64_t *shape, uint32_t rank, const float *values,
                      uint64_t value_count, uint32_t dtype, uint32_t block_size, const Diag &diag) {
  Entry e;
  Status s = prepare(w, name, name_len, shape, rank, dtype, block_size, &e, diag);
  if (s != TBLOB_OK) return s;
  const ShownName shown_name(name, name_len);
  const int shown = shown_name.len;
  const char *ell = shown_name.ell;
  if (value_count != e.elements)
    return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1,
                     "invalid argument: tensor \"%.*s%s\": %llu values for a shape of %llu elements",
                     shown, shown_name.text, ell, static_cast<ull>(value_count), static_cast<ull>(e.elements));
  if (!values) return bad_arg(diag, "values is NULL");
  const uint64_t bad = first_non_finite(values, e.elements);
  if (bad != e.elements)
    return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1,
                     "invalid argument: tensor \"%.*s%s\": value %llu is not finite", shown, shown_name.text, ell,
                     static_cast<ull>(bad));
  uint8_t *payload, *scales;
  if (!allocate_buffers(w, e, &payload, &scales)) return oom(diag);
  switch (e.dtype) {
    case kDtypeF32:
      for (uint64_t k = 0; k < e.elements; ++k) {
        float v;
        std::memcpy(&v, values + k, 4);
        store_le_f32(payload + 4 * k, v);
      }
      break;
    case kDtypeQ8_0:
      encode_q8_0(values, e.rows, e.cols, payload, scales);
      break;
    default:
      encode_q4_0(values, e.rows, e.cols, e.block_size, payload, scales);
      break;
  }
  return push(w, e, name, name_len, payload, scales, diag);
}

Status writer_add_encoded(tblob_slm1_writer *w, const char *name, size_t name_len,
                          const uint64_t *shape, uint32_t rank, uint32_t dtype,
                          uint32_t block_size, const void *payload, size_t payload_len,
                          const void *scales, size_t scale_len, const Diag &diag) {
  Entry e;
  Status s = prepare(w, name, name_len, shape, rank, dtype, block_size, &e, diag);
  if (s != TBLOB_OK) return s;
  const ShownName shown_name(name, name_len);
  const int shown = shown_name.len;
  const char *ell = shown_name.ell;
  if (payload_len != e.payload_bytes || (!payload && payload_len))
    return diag.fail(TBLOB_E_TENSOR_SIZE, TBLOB_NO_OFFSET, -1,
                     "tensor \"%.*s%s\": payload of %zu bytes; %s of %llu elements needs exactly %llu",
                     shown, shown_name.text, ell, payload_len, dtype_name(e.dtype), static_cast<ull>(e.elements),
                     static_cast<ull>(e.payload_bytes));
  if (scale_len != e.scale_bytes || (!scales && scale_len))
    return diag.fail(TBLOB_E_TENSOR_SIZE, TBLOB_NO_OFFSET, -1,
                     "tensor \"%.*s%s\": scale array of %zu bytes; %s needs exactly %llu", shown, shown_name.text,
                     ell, scale_len, dtype_name(e.dtype), static_cast<ull>(e.scale_bytes));
  if (e.dtype != kDtypeF32) {
    const uint64_t count = e.scale_bytes / 4;
    const uint64_t k = first_bad_scale(static_cast<const uint8_t *>(scales), count);
    if (k != count)
      return diag.fail(TBLOB_E_SLM1_SCALE, TBLOB_NO_OFFSET, -1,
                       "tensor \"%.*s%s\": scale %llu (f32 bits 0x%08x) is not finite and positive",
                       shown, shown_name.text, ell, static_cast<ull>(k),
                       load_le32(static_cast<const uint8_t *>(scales) + 4 * k));
  }
  uint8_t *p, *sc;
  if (!allocate_buffers(w, e, &p, &sc)) return oom(diag);
  std::memcpy(p, payload, payload_len);
  if (sc) std::memcpy(sc, scales, scale_len);
  return push(w, e, name, name_len, p, sc, diag);
}

Status writer_emit(tblob_slm1_writer *w, ByteSink *sink, uint64_t *file_len, const Diag &diag) {
  if (!w || !sink) return bad_arg(diag, "writer is required");
  if (w->finished) return bad_arg(diag, "the writer has already finished");
  Pending *t = w->tensors.data();
  const size_t n = w->tensors.size();
  if (n > UINT32_MAX) return diag.fail(TBLOB_E_LIMIT_TENSORS, TBLOB_NO_OFFSET, -1, "more than 2^32-1 tensors");
  std::sort(t, t + n, [](const Pending &a, const Pending &b) { return a.e.hash < b.e.hash; });
  for (size_t i = 1; i < n; ++i) {
    if (t[i].e.hash != t[i - 1].e.hash) continue;
    const char *e1, *e2;
    const int s1 = clip_name(t[i - 1].name_len, &e1), s2 = clip_name(t[i].name_len, &e2);
    if (t[i].name_len == t[i - 1].name_len && std::memcmp(t[i].name, t[i - 1].name, t[i].name_len) == 0)
      return diag.fail(TBLOB_E_DUPLICATE_NAME, TBLOB_NO_OFFSET, -1, "tensor \"%.*s%s\" was added twice",
                       s2, t[i].name, e2);
    return diag.fail(TBLOB_E_HASH_COLLISION, TBLOB_NO_OFFSET, -1,
                     "tensors \"%.*s%s\" and \"%.*s%s\" share FNV-1a 64 hash %016llx; SLM1 cannot "
                     "hold both",
                     s1, t[i - 1].name, e1, s2, t[i].name, e2, static_cast<ull>(t[i].e.hash));
  }
  // Layout (section 1): checked arithmetic throughout.
  Header h = w->header;
  h.tokenizer_offset = kHeaderBytes;
  h.tokenizer_length = w->tokenizer_len;
  h.tensor_count = static_cast<uint32_t>(n);
  h.checksum = 0;
  uint64_t tok_end, dir_bytes, cursor;
  bool ok = checked_add(kHeaderBytes, h.tokenizer_length, &tok_end) &&
            checked_align_up(tok_end, kAlign, &h.directory_offset) &&
            checked_mul(n, kEntryBytes, &dir_bytes) &&
            checked_add(h.directory_offset, dir_bytes, &h.data_offset);
  cursor = h.data_offset;
  for (size_t i = 0; ok && i < n; ++i) {
    Entry &e = t[i].e;
    ok = checked_align_up(cursor, kAlign, &e.byte_offset) &&
         checked_add(e.byte_offset, e.byte_length, &cursor);
    e.scale_offset = 0;
    if (ok && e.dtype != kDtypeF32)
      ok = checked_align_up(cursor, kAlign, &e.scale_offset) &&
           checked_add(e.scale_offset, e.scale_bytes, &cursor);
  }
  if (!ok) return diag.fail(TBLOB_E_SHAPE_OVERFLOW, TBLOB_NO_OFFSET, -1, "the file would be larger than 2^64 bytes");
  Emitter out(sink);
  uint8_t buf[kHeaderBytes];
  encode_header(h, buf);
  ok = out.write(buf, kHeaderBytes) && out.write(w->tokenizer, w->tokenizer_len) &&
       out.pad_to(h.directory_offset);
  uint8_t entry[kEntryBytes];
  for (size_t i = 0; ok && i < n; ++i) {
    encode_entry(t[i].e, entry);
    ok = out.write(entry, kEntryBytes);
  }
  for (size_t i = 0; ok && i < n; ++i) {
    const Entry &e = t[i].e;
    ok = out.pad_to(e.byte_offset) && out.write(t[i].payload, static_cast<size_t>(e.byte_length));
    if (ok && e.dtype != kDtypeF32)
      ok = out.pad_to(e.scale_offset) && out.write(t[i].scales, static_cast<size_t>(e.scale_bytes));
  }
  if (!ok) return diag.fail(TBLOB_E_IO, TBLOB_NO_OFFSET, -1, "writing the SLM1 file failed: %s", std::strerror(errno));
  const uint64_t c = out.checksum();
  if (c == 0)
    return diag.fail(TBLOB_E_SLM1_CHECKSUM, kOffChecksum, -1,
                     "the file's checksum is 0, which SLM1 cannot store; change any byte (e.g. a name)");
  uint8_t cb[8];
  store_le64(cb, c);
  if (!sink->patch(kOffChecksum, cb, 8))
    return diag.fail(TBLOB_E_IO, TBLOB_NO_OFFSET, -1, "writing the SLM1 checksum failed: %s", std::strerror(errno));
  if (file_len) *file_len = out.position();
  return TBLOB_OK;
}

Status writer_finish_path(tblob_slm1_writer *w, const char *path, const Diag &diag) {
  if (!w || !path) return bad_arg(diag, "writer and path are required");
  if (w->finished) return bad_arg(diag, "the writer has already finished");
  AtomicFile out;
  if (!out.create_beside(path, 0644))
    return diag.fail(TBLOB_E_IO, TBLOB_NO_OFFSET, -1, "cannot create a temporary file beside %s: %s", path,
                     std::strerror(errno));
  FdSink sink(out.fd());
  const Status s = writer_emit(w, &sink, nullptr, diag);
  if (s != TBLOB_OK) return s;
  const char *base = std::strrchr(path, '/');
  if (!out.commit(base ? base + 1 : path, true))
    return diag.fail(TBLOB_E_IO, TBLOB_NO_OFFSET, -1, "cannot write %s: %s", path, std::strerror(errno));
  w->finished = true;
  return TBLOB_OK;
}

}  // namespace slm1
}  // namespace tblob

// ---- the quantizers (lib/quant/slm1: one implementation with tblob_quant_quantize) ---------
namespace tblob {
namespace slm1 {

uint64_t first_non_finite(const float *x, uint64_t n) {
  for (uint64_t k = 0; k < n; ++k) {
    float v;
    std::memcpy(&v, x + k, sizeof(v));
    if (!std::isfinite(v)) return k;
  }
  return n;
}

namespace {
// The writer's values as a descriptor plus source for lib/quant (finite, checked before).
void encode(QuantScheme scheme, const float *x, uint64_t rows, uint64_t cols, uint32_t block,
            uint8_t *payload, uint8_t *scales) {
  QuantDesc d;
  d.scheme = scheme;
  d.group_size = block;
  d.rows = rows;
  d.cols = cols;
  d.data = payload;
  d.scales = scales;
  quant::Source src;
  src.p = reinterpret_cast<const uint8_t *>(x);  // host f32: little-endian on every target
  src.dtype = TBLOB_DTYPE_F32;
  src.cols = cols;
  quant::ValueError err;
  quant::slm1_rows(d, src, 0, rows, &err);
}
}  // namespace

void encode_q8_0(const float *x, uint64_t rows, uint64_t cols, uint8_t *payload, uint8_t *scales) {
  encode(QuantScheme::kSlm1Q8, x, rows, cols, static_cast<uint32_t>(cols), payload, scales);
}

void encode_q4_0(const float *x, uint64_t rows, uint64_t cols, uint32_t block, uint8_t *payload,
                 uint8_t *scales) {
  encode(QuantScheme::kSlm1Q4, x, rows, cols, block, payload, scales);
}

}  // namespace slm1
}  // namespace tblob
