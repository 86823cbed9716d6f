// The streaming GGUF writer. The layout is ggml's and gguf-py's: the header, zero padding to
// the alignment, then each tensor's bytes followed by zero padding to the alignment (the last
// one too), each tensor's offset the previous one's padded end. Every rule the reader checks
// (gguf_reader.cpp, docs/gguf.md) is checked here, with the same status, before anything of a
// call is kept, so a refused call changes nothing and every finished file opens.
#include "formats/gguf/gguf_writer.h"

#include <cerrno>
#include <cstring>
#include <new>

#include "core/checked.h"
#include "core/endian.h"
#include "formats/gguf/gguf.h"

namespace tblob {
namespace gguf {

namespace {

using ull = unsigned long long;
constexpr uint32_t kMaxNesting = 8;  // arrays in arrays: deeper is refused (bounded recursion)

Status bad_arg(const Diag &d, const char *what) {
  return d.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1, "invalid argument: %s", what);
}
Status oom(const Diag &d) { return d.fail_plain(TBLOB_E_OUT_OF_MEMORY); }

bool put_u32(ByteBuf *b, uint32_t v) {
  uint8_t t[4];
  store_le32(t, v);
  return b->append(t, 4);
}
bool put_u64(ByteBuf *b, uint64_t v) {
  uint8_t t[8];
  store_le64(t, v);
  return b->append(t, 8);
}
bool put_str(ByteBuf *b, const void *p, size_t n) { return put_u64(b, n) && b->append(p, n); }

// count host scalars of a value type, little-endian (bool as 0/1).
bool put_scalars(ByteBuf *b, uint32_t type, const uint8_t *p, uint64_t count) {
  const uint32_t size = scalar_bytes(type);
  if (type == kBool) {
    for (uint64_t i = 0; i < count; ++i)
      if (!b->push(p[i] ? 1 : 0)) return false;
    return true;
  }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  for (uint64_t i = 0; i < count; ++i)
    for (uint32_t k = size; k-- > 0;)
      if (!b->push(static_cast<char>(p[i * size + k]))) return false;
  return true;
#else
  return b->append(p, static_cast<size_t>(count * size));
#endif
}

class Encoder {
 public:
  Encoder(ByteBuf *out, uint32_t flags, const Diag &d, const char *key, size_t key_len)
      : out_(out), flags_(flags), d_(d), key_(key), kn_(static_cast<int>(key_len > 120 ? 120 : key_len)) {}
  // The value's bytes after its type (the type itself is written by the caller).
  Status value(const tblob_gguf_value &v, uint32_t depth) {
    if (v.value_type == kString) return string(v);
    if (v.value_type == kArray) return array(v, depth);
    if (scalar_bytes(v.value_type) == 0) return bad_type(v.value_type);
    if (!v.data) return bad_arg(d_, "a scalar value's data is NULL");
    return put_scalars(out_, v.value_type, static_cast<const uint8_t *>(v.data), 1) ? TBLOB_OK : oom(d_);
  }

 private:
  Status bad_type(uint32_t t) {
    return d_.fail(TBLOB_E_GGUF_VALUE_TYPE, TBLOB_NO_OFFSET, -1, "key \"%.*s\": value type %u is unknown", kn_, key_, t);
  }
  Status string(const tblob_gguf_value &v) {
    if (v.length > kMaxStringBytes)
      return d_.fail(TBLOB_E_GGUF_STRING, TBLOB_NO_OFFSET, -1, "key \"%.*s\": a string of %llu bytes (GGUF allows 2^30)",
                     kn_, key_, static_cast<ull>(v.length));
    if (!v.data && v.length) return bad_arg(d_, "a string value's data is NULL");
    return put_str(out_, v.data, static_cast<size_t>(v.length)) ? TBLOB_OK : oom(d_);
  }
  Status array(const tblob_gguf_value &v, uint32_t depth) {
    const uint32_t et = v.element_type;
    if (et >= kValueTypeCount) return bad_type(et);
    if (et == kArray && (!(flags_ & TBLOB_GGUF_WRITE_NESTED_ARRAYS) || depth + 1 >= kMaxNesting))
      return d_.fail(TBLOB_E_GGUF_ARRAY, TBLOB_NO_OFFSET, -1, "key \"%.*s\": %s", kn_, key_,
                     (flags_ & TBLOB_GGUF_WRITE_NESTED_ARRAYS) ? "arrays nested more than 8 deep"
                                                               : "an array of arrays (ggml and the reader refuse them; "
                                                                 "TBLOB_GGUF_WRITE_NESTED_ARRAYS writes them for gguf-py)");
    if (v.length > kMaxArrayElems)
      return d_.fail(TBLOB_E_GGUF_ARRAY, TBLOB_NO_OFFSET, -1, "key \"%.*s\": an array of %llu elements (GGUF allows 2^30)",
                     kn_, key_, static_cast<ull>(v.length));
    if (!v.data && v.length) return bad_arg(d_, "an array value's data is NULL");
    if (!put_u32(out_, et) || !put_u64(out_, v.length)) return oom(d_);
    if (et != kString && et != kArray)
      return put_scalars(out_, et, static_cast<const uint8_t *>(v.data), v.length) ? TBLOB_OK : oom(d_);
    const tblob_gguf_value *e = static_cast<const tblob_gguf_value *>(v.data);
    for (uint64_t i = 0; i < v.length; ++i) {
      if (e[i].value_type != et)
        return d_.fail(TBLOB_E_GGUF_VALUE_TYPE, TBLOB_NO_OFFSET, -1,
                       "key \"%.*s\": element %llu is of type %u in an array of type %u", kn_, key_,
                       static_cast<ull>(i), e[i].value_type, et);
      Status st = et == kString ? string(e[i]) : array(e[i], depth + 1);
      if (st != TBLOB_OK) return st;
    }
    return TBLOB_OK;
  }

  ByteBuf *out_;
  uint32_t flags_;
  const Diag &d_;
  const char *key_;
  int kn_;
};

Status fail_writer(tblob_gguf_writer *w, Status s) {
  w->state = tblob_gguf_writer::kFailed;
  w->failed = s;
  w->file.abort();
  return s;
}

Status sink(tblob_gguf_writer *w, const void *p, size_t n, const Diag &d) {
  if (n == 0) return TBLOB_OK;
  if (w->fn) {
    if (w->fn(w->user, p, n) != 0) {
      fail_writer(w, TBLOB_E_CANCELLED);
      return d.fail(TBLOB_E_CANCELLED, w->written, -1, "the write callback returned non-zero at byte %llu",
                    static_cast<ull>(w->written));
    }
  } else if (!w->file.write(p, n)) {
    const int e = errno;
    fail_writer(w, TBLOB_E_IO);
    return d.fail(TBLOB_E_IO, w->written, -1, "writing the temporary file at byte %llu: %s",
                  static_cast<ull>(w->written), std::strerror(e));
  }
  w->written += n;
  return TBLOB_OK;
}

Status pad(tblob_gguf_writer *w, const Diag &d) {
  static const uint8_t kZeros[4096] = {};
  uint64_t n = (w->alignment - w->written % w->alignment) % w->alignment;
  while (n) {
    const size_t k = n < sizeof(kZeros) ? static_cast<size_t>(n) : sizeof(kZeros);
    Status st = sink(w, kZeros, k, d);
    if (st != TBLOB_OK) return st;
    n -= k;
  }
  return TBLOB_OK;
}

// Past the tensors that need no more bytes (empty ones).
void skip_empty(tblob_gguf_writer *w) {
  while (w->cur < w->tensors.size() && w->tensors[static_cast<size_t>(w->cur)].bytes == 0) ++w->cur;
}

// The header: counts, key/values, tensor infos with their offsets, padding.
Status write_header(tblob_gguf_writer *w, const Diag &d) {
  ByteBuf ti(&w->alloc);
  uint64_t offset = 0;
  for (size_t i = 0; i < w->tensors.size(); ++i) {
    const tblob_gguf_writer::Tensor &t = w->tensors[i];
    if (!put_str(&ti, w->names.data() + t.name_at, t.name_len) || !put_u32(&ti, t.n_dims)) return oom(d);
    for (uint32_t k = 0; k < t.n_dims; ++k)
      if (!put_u64(&ti, t.ne[k])) return oom(d);
    if (!put_u32(&ti, t.type) || !put_u64(&ti, offset)) return oom(d);
    uint64_t end;
    if (!checked_add(offset, t.bytes, &end) || !checked_align_up(end, w->alignment, &offset))
      return d.fail(TBLOB_E_SHAPE_OVERFLOW, TBLOB_NO_OFFSET, static_cast<int64_t>(i),
                    "tensor \"%.*s\": the data region passes 2^64 bytes", TBLOB_NAME_ARGS(w->names.data() + t.name_at, t.name_len));
  }
  ByteBuf head(&w->alloc);
  if (!head.append("GGUF", 4) || !put_u32(&head, w->version) || !put_u64(&head, w->tensors.size()) ||
      !put_u64(&head, w->kv_keys.size()))
    return oom(d);
  w->state = tblob_gguf_writer::kData;
  Status st = sink(w, head.data(), head.size(), d);
  if (st == TBLOB_OK) st = sink(w, w->kv.data(), w->kv.size(), d);
  if (st == TBLOB_OK) st = sink(w, ti.data(), ti.size(), d);
  if (st == TBLOB_OK) st = pad(w, d);
  if (st != TBLOB_OK) return st;
  // The header is out: what was kept to build it is no longer needed.
  w->kv.reset();
  w->kv_keys.reset();
  skip_empty(w);
  return TBLOB_OK;
}

Status usable(tblob_gguf_writer *w, const Diag &d) {
  if (!w) return bad_arg(d, "writer is NULL");
  if (w->state == tblob_gguf_writer::kFailed)
    return d.fail(w->failed, TBLOB_NO_OFFSET, -1, "an earlier write failed; the writer wrote nothing under its name");
  if (w->state == tblob_gguf_writer::kFinished)
    return d.fail(TBLOB_E_GGUF_WRITE_ORDER, TBLOB_NO_OFFSET, -1, "the writer has finished");
  return TBLOB_OK;
}

}  // namespace

Status writer_open(const char *path, tblob_gguf_write_fn fn, void *user, const tblob_gguf_writer_options *options,
                   tblob_gguf_writer **out, const Diag &diag) {
  if (!out) return bad_arg(diag, "out is NULL");
  *out = nullptr;
  tblob_gguf_writer_options o = TBLOB_GGUF_WRITER_OPTIONS_INIT;
  if (options) {
    if (options->struct_size < sizeof(o)) return bad_arg(diag, "options->struct_size is too small");
    std::memcpy(static_cast<void *>(&o), options, sizeof(o));
  }
  if (o.version == 0) o.version = 3;
  if (o.version != 2 && o.version != 3) return bad_arg(diag, "options->version is not 2 or 3");
  if (o.flags & ~TBLOB_GGUF_WRITE_NESTED_ARRAYS) return bad_arg(diag, "options->flags has unknown bits");
  const char *base = nullptr;
  if (!fn) {
    if (!path || !*path) return bad_arg(diag, "path is NULL or empty");
    const char *slash = std::strrchr(path, '/');
    base = slash ? slash + 1 : path;
    if (!*base || std::strcmp(base, ".") == 0 || std::strcmp(base, "..") == 0)
      return bad_arg(diag, "path names a directory");
  }
  Allocator a(o.allocator);
  void *mem = a.alloc(sizeof(tblob_gguf_writer));
  if (!mem) return oom(diag);
  tblob_gguf_writer *w = new (mem) tblob_gguf_writer(o.allocator);
  w->version = o.version;
  w->flags = o.flags;
  w->fn = fn;
  w->user = user;
  if (!fn) {
    w->final_name_size = std::strlen(base) + 1;
    w->final_name = static_cast<char *>(w->alloc.alloc(w->final_name_size));
    if (!w->final_name) {
      writer_close(w);
      return oom(diag);
    }
    std::memcpy(w->final_name, base, w->final_name_size);
    if (!w->file.create_beside(path, o.file_mode ? (o.file_mode & 07777u) : 0644u)) {
      const int e = errno;
      writer_close(w);
      return diag.fail(TBLOB_E_IO, TBLOB_NO_OFFSET, -1, "creating a temporary file beside %s: %s", path,
                       std::strerror(e));
    }
  }
  *out = w;
  return TBLOB_OK;
}

Status writer_add_value(tblob_gguf_writer *w, const char *key, size_t key_len, const tblob_gguf_value *value,
                        const Diag &d) {
  Status st = usable(w, d);
  if (st != TBLOB_OK) return st;
  if (!value) return bad_arg(d, "value is NULL");
  if (!key && key_len) return bad_arg(d, "key is NULL");
  if (w->state != tblob_gguf_writer::kCollecting)
    return d.fail(TBLOB_E_GGUF_WRITE_ORDER, TBLOB_NO_OFFSET, -1, "a key/value after the tensor data began");
  const int kn = static_cast<int>(key_len > 120 ? 120 : key_len);
  if (key_len == 0) return d.fail(TBLOB_E_GGUF_KEY, TBLOB_NO_OFFSET, -1, "an empty key");
  if (key_len > kMaxStringBytes)
    return d.fail(TBLOB_E_GGUF_STRING, TBLOB_NO_OFFSET, -1, "a key of %zu bytes (GGUF allows 2^30)", key_len);
  for (size_t i = 0; i < w->kv_keys.size(); ++i) {
    const tblob_gguf_writer::KeyRef &k = w->kv_keys[i];
    if (k.len == key_len && std::memcmp(w->kv.data() + k.at, key, key_len) == 0)
      return d.fail(TBLOB_E_GGUF_KEY, TBLOB_NO_OFFSET, -1, "key \"%.*s\" added twice", kn, key);
  }
  const bool is_alignment = key_len == 17 && std::memcmp(key, "general.alignment", 17) == 0;
  uint32_t alignment = 0;
  if (is_alignment) {
    if (value->value_type != kU32)
      return d.fail(TBLOB_E_GGUF_ALIGNMENT, TBLOB_NO_OFFSET, -1, "general.alignment is of type %u; it must be u32 (4)",
                    value->value_type);
    if (!value->data) return bad_arg(d, "a scalar value's data is NULL");
    std::memcpy(&alignment, value->data, 4);
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
      return d.fail(TBLOB_E_GGUF_ALIGNMENT, TBLOB_NO_OFFSET, -1, "general.alignment %u is not a power of two", alignment);
  }
  const size_t old = w->kv.size();
  if (!put_u64(&w->kv, key_len) || !w->kv.append(key, key_len) || !put_u32(&w->kv, value->value_type) ||
      !w->kv_keys.reserve(w->kv_keys.size() + 1)) {
    w->kv.resize(old);
    return oom(d);
  }
  Encoder e(&w->kv, w->flags, d, key, key_len);
  if ((st = e.value(*value, 0)) != TBLOB_OK) {
    w->kv.resize(old);
    return st;
  }
  w->kv_keys.push(tblob_gguf_writer::KeyRef{old + 8, key_len});
  if (is_alignment) w->alignment = alignment;
  return TBLOB_OK;
}

Status writer_add_tensor(tblob_gguf_writer *w, const char *name, size_t name_len, const uint64_t *shape,
                         uint32_t rank, uint32_t ggml_type, uint64_t *data_bytes, const Diag &d) {
  Status st = usable(w, d);
  if (st != TBLOB_OK) return st;
  if (!name && name_len) return bad_arg(d, "name is NULL");
  if (!shape && rank) return bad_arg(d, "shape is NULL");
  if (w->state != tblob_gguf_writer::kCollecting)
    return d.fail(TBLOB_E_GGUF_WRITE_ORDER, TBLOB_NO_OFFSET, -1, "a tensor info after the tensor data began");
  const int64_t ti = static_cast<int64_t>(w->tensors.size());
  const int nn = static_cast<int>(name_len > 120 ? 120 : name_len);
  if (name_len > kMaxNameBytes)
    return d.fail(TBLOB_E_GGUF_NAME, TBLOB_NO_OFFSET, ti, "tensor name \"%.*s...\" is %zu bytes; ggml allows %u", nn,
                  name, name_len, kMaxNameBytes);
  if (rank > kMaxDims)
    return d.fail(TBLOB_E_GGUF_DIMS, TBLOB_NO_OFFSET, ti, "tensor \"%.*s\" has %u dimensions; ggml allows %u", nn, name,
                  rank, kMaxDims);
  tblob_gguf_writer::Tensor t{};
  t.n_dims = rank;
  t.type = ggml_type;
  t.ne[0] = t.ne[1] = t.ne[2] = t.ne[3] = 1;
  bool any_zero = false;
  uint64_t elements = 1;
  for (uint32_t k = 0; k < rank; ++k) {
    const uint64_t n = shape[rank - 1 - k];  // ne is innermost first
    if (n > static_cast<uint64_t>(INT64_MAX))
      return d.fail(TBLOB_E_GGUF_DIMS, TBLOB_NO_OFFSET, ti, "tensor \"%.*s\": dimension %llu is >= 2^63", nn, name,
                    static_cast<ull>(n));
    t.ne[k] = n;
    any_zero |= n == 0;
    if (n != 0 && (!checked_mul(elements, n, &elements) || elements >= static_cast<uint64_t>(INT64_MAX)))
      return d.fail(TBLOB_E_SHAPE_OVERFLOW, TBLOB_NO_OFFSET, ti, "tensor \"%.*s\": the element count overflows int64",
                    nn, name);
  }
  if (any_zero) elements = 0;
  const TypeInfo *info = type_info(ggml_type);
  if (!info || info->block_elems == 0)
    return d.fail(TBLOB_E_GGUF_TYPE, TBLOB_NO_OFFSET, ti, "tensor \"%.*s\": ggml type %u %s%s", nn, name, ggml_type,
                  info ? info->name : "is unknown", info ? " was removed from ggml" : "");
  if (t.ne[0] % info->block_elems != 0)
    return d.fail(TBLOB_E_GGUF_ROW, TBLOB_NO_OFFSET, ti,
                  "tensor \"%.*s\" (%s): a row of %llu elements is not a whole number of %u-element blocks", nn, name,
                  info->name, static_cast<ull>(t.ne[0]), info->block_elems);
  if (!checked_mul(elements / info->block_elems, info->block_bytes, &t.bytes))
    return d.fail(TBLOB_E_SHAPE_OVERFLOW, TBLOB_NO_OFFSET, ti, "tensor \"%.*s\": the byte count overflows", nn, name);
  for (size_t i = 0; i < w->tensors.size(); ++i) {
    const tblob_gguf_writer::Tensor &o = w->tensors[i];
    if (o.name_len == name_len && (name_len == 0 || std::memcmp(w->names.data() + o.name_at, name, name_len) == 0))
      return d.fail(TBLOB_E_DUPLICATE_NAME, TBLOB_NO_OFFSET, ti, "tensor \"%.*s\" added twice (first as tensor %zu)", nn,
                    name, i);
  }
  t.name_at = w->names.size();
  t.name_len = name_len;
  if (!w->tensors.reserve(w->tensors.size() + 1) || !w->names.append(name, name_len)) {
    w->names.resize(t.name_at);
    return oom(d);
  }
  w->tensors.push(t);
  if (data_bytes) *data_bytes = t.bytes;
  return TBLOB_OK;
}

// The tensor that takes the next bytes: cur, or before the header the first with bytes.
static uint64_t next_tensor(const tblob_gguf_writer *w) {
  if (w->state != tblob_gguf_writer::kCollecting) return w->cur;
  uint64_t k = 0;
  while (k < w->tensors.size() && w->tensors[static_cast<size_t>(k)].bytes == 0) ++k;
  return k;
}

Status writer_write(tblob_gguf_writer *w, uint64_t tensor, const void *data, size_t length, const Diag &d) {
  Status st = usable(w, d);
  if (st != TBLOB_OK) return st;
  if (!data && length) return bad_arg(d, "data is NULL");
  const uint64_t n = w->tensors.size();
  if (tensor >= n)
    return d.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, -1, "tensor %llu: the writer has %llu tensors",
                  static_cast<ull>(tensor), static_cast<ull>(n));
  const tblob_gguf_writer::Tensor &t = w->tensors[static_cast<size_t>(tensor)];
  const char *name = w->names.data() + t.name_at;
  const int64_t ti = static_cast<int64_t>(tensor);
  const uint64_t next = next_tensor(w);
  const uint64_t done = w->state == tblob_gguf_writer::kCollecting ? 0 : w->cur_done;
  if (tensor < next) {
    if (t.bytes == 0 && length == 0) return TBLOB_OK;
    return d.fail(TBLOB_E_GGUF_WRITE_ORDER, TBLOB_NO_OFFSET, ti, "tensor \"%.*s\": its data is complete already",
                  TBLOB_NAME_ARGS(name, t.name_len));
  }
  if (tensor > next) {
    const tblob_gguf_writer::Tensor &c = w->tensors[static_cast<size_t>(next)];
    return d.fail(TBLOB_E_GGUF_WRITE_ORDER, TBLOB_NO_OFFSET, ti,
                  "tensor \"%.*s\" before tensor %llu \"%.*s\" has all its bytes (%llu of %llu; data goes in table "
                  "order)",
                  TBLOB_NAME_ARGS(name, t.name_len), static_cast<ull>(next),
                  TBLOB_NAME_ARGS(w->names.data() + c.name_at, c.name_len), static_cast<ull>(done),
                  static_cast<ull>(c.bytes));
  }
  if (length > t.bytes - done)
    return d.fail(TBLOB_E_GGUF_WRITE_SIZE, TBLOB_NO_OFFSET, ti,
                  "tensor \"%.*s\": %zu more bytes after %llu, it holds %llu", TBLOB_NAME_ARGS(name, t.name_len),
                  length, static_cast<ull>(done), static_cast<ull>(t.bytes));
  if (w->state == tblob_gguf_writer::kCollecting && (st = write_header(w, d)) != TBLOB_OK) return st;
  if ((st = sink(w, data, length, d)) != TBLOB_OK) return st;
  w->cur_done += length;
  if (w->cur_done == t.bytes) {
    if ((st = pad(w, d)) != TBLOB_OK) return st;
    ++w->cur;
    w->cur_done = 0;
    skip_empty(w);
  }
  return TBLOB_OK;
}

Status writer_finish(tblob_gguf_writer *w, uint64_t *bytes_written, const Diag &d) {
  Status st = usable(w, d);
  if (st != TBLOB_OK) return st;
  const uint64_t next = next_tensor(w);
  if (next < w->tensors.size()) {
    const tblob_gguf_writer::Tensor &t = w->tensors[static_cast<size_t>(next)];
    return d.fail(TBLOB_E_GGUF_WRITE_SIZE, TBLOB_NO_OFFSET, static_cast<int64_t>(next),
                  "tensor %llu \"%.*s\" has %llu of its %llu bytes", static_cast<ull>(next),
                  TBLOB_NAME_ARGS(w->names.data() + t.name_at, t.name_len),
                  static_cast<ull>(w->state == tblob_gguf_writer::kCollecting ? 0 : w->cur_done),
                  static_cast<ull>(t.bytes));
  }
  if (w->state == tblob_gguf_writer::kCollecting && (st = write_header(w, d)) != TBLOB_OK) return st;
  if (!w->fn && !w->file.commit(w->final_name, true)) {
    const int e = errno;
    fail_writer(w, TBLOB_E_IO);
    return d.fail(TBLOB_E_IO, TBLOB_NO_OFFSET, -1, "fsync or rename to %s: %s", w->final_name, std::strerror(e));
  }
  w->state = tblob_gguf_writer::kFinished;
  if (bytes_written) *bytes_written = w->written;
  return TBLOB_OK;
}

void writer_close(tblob_gguf_writer *w) {
  if (!w) return;
  w->file.abort();  // nothing when finish renamed it
  if (w->final_name) w->alloc.free(w->final_name, w->final_name_size);
  const Allocator a = w->alloc;
  w->~tblob_gguf_writer();
  a.free(w, sizeof(tblob_gguf_writer));
}

}  // namespace gguf
}  // namespace tblob
