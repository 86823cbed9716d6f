// fuzz_gguf_write: the streaming GGUF writer (tblob_gguf_writer_*) driven by arbitrary
// metadata and tensor specs. Input: fuzz_common.h (file + 3-byte trailer; `fail` fails the
// writer's Nth allocation); the file part is a little program:
//   byte 0: bits 0-2 alignment key (none, 1, 2, 8, 16, 32, 64, 3 = not a power of two),
//           bit 3 nested arrays allowed, bit 4 version 2, bit 5 data in 1..16-byte pieces
//   then ops until the bytes run out: op % 3 == 0 a key/value, 1 a tensor info, 2 a misuse
//   probe (data for a tensor out of order or too long: its status, and nothing changes).
// Checks: every call returns TBLOB_OK or one of the statuses its rules name (never anything
// else); a duplicate key or tensor name is refused; when everything accepted is written, the
// output opens with tblob_model_open_memory (unless it holds a nested array: then
// TBLOB_E_GGUF_ARRAY, as ggml) and reads back exactly what was accepted: keys, types, values
// and array bytes (the harness's own encoding), tensor names, shapes, data; each tensor at a
// multiple of the alignment.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "tensorblob.h"

namespace {

constexpr size_t kMaxData = size_t{1} << 20;  // tensor bytes actually written per input
constexpr size_t kMaxOut = size_t{4} << 20;

struct In {
  const uint8_t *p;
  size_t n, at = 0;
  bool more() const { return at < n; }
  uint8_t byte() { return at < n ? p[at++] : 0; }
  const uint8_t *take(size_t k, size_t *got) {
    *got = k < n - at ? k : n - at;
    const uint8_t *r = p + at;
    at += *got;
    return r;
  }
};

uint32_t scalar_size(uint32_t t) {
  switch (t) {
    case 0: case 1: case 7: return 1;
    case 2: case 3: return 2;
    case 4: case 5: case 6: return 4;
    case 10: case 11: case 12: return 8;
    default: return 0;
  }
}

void put64(std::string *s, uint64_t v) {
  for (int k = 0; k < 8; ++k) s->push_back(static_cast<char>(v >> (8 * k)));
}

// A value built from the input, with the storage it points to, and what the file must hold.
struct Built {
  tblob_gguf_value v{};
  std::deque<std::string> store;        // strings and scalar bytes (deque: stable addresses)
  std::deque<std::vector<tblob_gguf_value>> elems;  // deque: references stay valid as it grows
  std::string expect;                   // scalars/strings: the bytes; arrays: the element bytes
  bool nested = false;
  bool valid_shape = true;              // false when the harness made something it knows is invalid
};

void build(In &in, Built &b, tblob_gguf_value *v, uint32_t depth, std::string *expect) {
  const uint32_t type = in.byte() % 14;  // 13: unknown
  v->value_type = type;
  if (type == 8) {
    size_t got = 0;
    const uint8_t *s = in.take(in.byte() % 24, &got);
    b.store.emplace_back(reinterpret_cast<const char *>(s), got);
    v->data = b.store.back().data();
    v->length = got;
    if (depth > 0) put64(expect, got);
    expect->append(b.store.back());
    return;
  }
  if (type == 9) {
    const uint32_t et = in.byte() % 14;
    const uint64_t count = in.byte() % 6;
    v->element_type = et;
    v->length = count;
    if (depth > 0) {  // an element array: its own type and count come first
      expect->append(reinterpret_cast<const char *>(&et), 4);
      put64(expect, count);
    }
    if (et == 8 || et == 9) {
      if (et == 9) b.nested = true;
      b.elems.emplace_back(count);
      std::vector<tblob_gguf_value> &e = b.elems.back();
      for (uint64_t i = 0; i < count; ++i) {
        if (depth >= 3) {  // keep the recursion small: an empty inner array
          e[i] = tblob_gguf_value{et, 0, nullptr, 0};
          if (et == 8) put64(expect, 0);
          else { expect->append(std::string("\0\0\0\0", 4)); put64(expect, 0); }
          continue;
        }
        build(in, b, &e[i], depth + 1, expect);
        if (e[i].value_type != et) b.valid_shape = false;
      }
      v->data = e.data();
      return;
    }
    const uint32_t size = scalar_size(et);
    std::string bytes(static_cast<size_t>(count) * (size ? size : 1), '\0');
    for (char &c : bytes) c = static_cast<char>(in.byte());
    b.store.push_back(bytes);
    v->data = b.store.back().data();
    if (et == 7)
      for (char c : bytes) expect->push_back(c ? 1 : 0);
    else
      expect->append(bytes);
    if (size == 0) b.valid_shape = false;
    return;
  }
  const uint32_t size = scalar_size(type);
  std::string bytes(8, '\0');
  for (uint32_t k = 0; k < size; ++k) bytes[k] = static_cast<char>(in.byte());
  b.store.push_back(bytes);
  v->data = b.store.back().data();
  if (type == 7) expect->push_back(bytes[0] ? 1 : 0);
  else expect->append(bytes.data(), size);
}

struct Kv {
  std::string key;
  uint32_t type, element_type;
  uint64_t count;
  std::string bytes;
  bool nested;
};
struct Tensor {
  std::string name;
  std::vector<uint64_t> shape;
  uint64_t bytes;
};

int sink(void *user, const void *p, size_t n) {
  std::string *s = static_cast<std::string *>(user);
  if (s->size() + n > kMaxOut) return 1;
  s->append(static_cast<const char *>(p), n);
  return 0;
}

std::string data_of(size_t t, uint64_t n) {
  std::string s(static_cast<size_t>(n), '\0');
  for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<char>(t * 31 + i * 7);
  return s;
}

bool oom_or(tblob_status st, bool failed, std::initializer_list<tblob_status> ok) {
  if (st == TBLOB_E_OUT_OF_MEMORY) return failed;
  for (tblob_status s : ok)
    if (st == s) return true;
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace fuzz;
  const Params prm = split_input(data, size);
  In in{prm.file, prm.file_len};
  const uint8_t flags = in.byte();
  FailingAllocator fa(prm.fail_at, prm.file_len);
  tblob_gguf_writer_options o = TBLOB_GGUF_WRITER_OPTIONS_INIT;
  o.flags = (flags & 8) ? TBLOB_GGUF_WRITE_NESTED_ARRAYS : 0;
  o.version = (flags & 16) ? 2 : 3;
  o.allocator = fa.hook();
  std::string out;
  tblob_gguf_writer *w = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  tblob_status st = tblob_gguf_writer_open_callback(sink, &out, &o, &w, &d);
  FUZZ_ASSERT(oom_or(st, fa.failed(), {TBLOB_OK}));
  if (st != TBLOB_OK) return 0;
  std::vector<Kv> kvs;
  std::vector<Tensor> tensors;
  uint32_t alignment = 32;
  static const uint32_t kAlign[8] = {0, 1, 2, 8, 16, 32, 64, 3};
  if (kAlign[flags & 7]) {
    const uint32_t a = kAlign[flags & 7];
    const tblob_gguf_value v{4, 0, &a, 0};
    st = tblob_gguf_writer_add_value(w, "general.alignment", 17, &v, &d);
    FUZZ_ASSERT_MSG(oom_or(st, fa.failed(), {a == 3 ? TBLOB_E_GGUF_ALIGNMENT : TBLOB_OK}), "%d", st);
    if (st == TBLOB_OK) {
      alignment = a;
      std::string b(reinterpret_cast<const char *>(&a), 4);
      kvs.push_back(Kv{"general.alignment", 4, 0, 1, b, false});
    }
  }
  bool nested = false;
  while (in.more() && kvs.size() + tensors.size() < 256) {
    const uint8_t op = in.byte() % 3;
    if (op == 0) {
      size_t kn = 0;
      const uint8_t *k = in.take(in.byte() % 12, &kn);
      const std::string key(reinterpret_cast<const char *>(k), kn);
      Built b;
      std::string expect;
      build(in, b, &b.v, 0, &expect);
      st = tblob_gguf_writer_add_value(w, key.data(), key.size(), &b.v, &d);
      bool dup = false;
      for (const Kv &x : kvs) dup |= x.key == key;
      FUZZ_ASSERT_MSG(oom_or(st, fa.failed(),
                             {TBLOB_OK, TBLOB_E_GGUF_KEY, TBLOB_E_GGUF_VALUE_TYPE, TBLOB_E_GGUF_ARRAY,
                              TBLOB_E_GGUF_ALIGNMENT}),
                      "add_value: %d", st);
      if (dup || key.empty()) FUZZ_ASSERT_MSG(st == TBLOB_E_GGUF_KEY, "duplicate/empty key accepted: %d", st);
      if (st == TBLOB_OK) {
        FUZZ_ASSERT(b.valid_shape);
        FUZZ_ASSERT(!b.nested || (o.flags & TBLOB_GGUF_WRITE_NESTED_ARRAYS));
        nested |= b.nested;
        kvs.push_back(Kv{key, b.v.value_type, b.v.element_type, b.v.value_type == 9 ? b.v.length : 1, expect, b.nested});
      }
    } else if (op == 1) {
      size_t nn = 0;
      const uint8_t *np = in.take(in.byte() % 70, &nn);
      const std::string name(reinterpret_cast<const char *>(np), nn);
      const uint32_t rank = in.byte() % 6;
      std::vector<uint64_t> shape(rank);
      for (uint64_t &x : shape) {
        const uint8_t b = in.byte();
        x = b == 255 ? (uint64_t{1} << 62) : (b & 0x80) ? static_cast<uint64_t>(b & 0x7F) * 32 : b;
      }
      const uint32_t type = in.byte() % 45;
      uint64_t bytes = 0;
      st = tblob_gguf_writer_add_tensor(w, name.data(), name.size(), shape.data(), rank, type, &bytes, &d);
      bool dup = false;
      for (const Tensor &x : tensors) dup |= x.name == name;
      FUZZ_ASSERT_MSG(oom_or(st, fa.failed(),
                             {TBLOB_OK, TBLOB_E_GGUF_NAME, TBLOB_E_GGUF_DIMS, TBLOB_E_GGUF_TYPE, TBLOB_E_GGUF_ROW,
                              TBLOB_E_SHAPE_OVERFLOW, TBLOB_E_DUPLICATE_NAME}),
                      "add_tensor: %d", st);
      if (st == TBLOB_OK) {
        FUZZ_ASSERT(!dup && name.size() <= 63 && rank <= 4);
        tensors.push_back(Tensor{name, shape, bytes});
      }
    } else if (!tensors.empty()) {
      // Out of order before any data: a later tensor with bytes while an earlier one has some.
      const uint64_t t = in.byte() % tensors.size();
      uint64_t first = 0;
      while (first < tensors.size() && tensors[first].bytes == 0) ++first;
      if (t > first) {
        st = tblob_gguf_writer_write(w, t, "x", 1, &d);
        FUZZ_ASSERT_MSG(st == TBLOB_E_GGUF_WRITE_ORDER, "out of order: %d", st);
      }
      if (t == first && tensors[t].bytes < 64) {
        const std::string big(static_cast<size_t>(tensors[t].bytes) + 1, 'x');
        st = tblob_gguf_writer_write(w, t, big.data(), big.size(), &d);
        FUZZ_ASSERT_MSG(st == TBLOB_E_GGUF_WRITE_SIZE, "too long: %d", st);
      }
    }
  }
  uint64_t total = 0;
  bool fits = true;
  for (const Tensor &t : tensors) {
    fits &= t.bytes <= kMaxData && total + t.bytes <= kMaxData;
    if (fits) total += t.bytes;
  }
  if (!fits) {
    // Too much data to write here: finish names the first tensor still owed bytes.
    st = tblob_gguf_writer_finish(w, nullptr, &d);
    FUZZ_ASSERT_MSG(st == TBLOB_E_GGUF_WRITE_SIZE, "finish with data owed: %d", st);
    tblob_gguf_writer_close(w);
    FUZZ_ASSERT(fa.live_bytes() == 0);
    return 0;
  }
  st = TBLOB_OK;
  for (size_t t = 0; t < tensors.size() && st == TBLOB_OK; ++t) {
    const std::string bytes = data_of(t, tensors[t].bytes);
    size_t at = 0;
    do {
      size_t k = bytes.size() - at;
      if ((flags & 32) && k > 1) k = 1 + (at * 7 + t) % (k < 16 ? k : 16);
      st = tblob_gguf_writer_write(w, t, bytes.data() + at, k, &d);
      at += k;
    } while (st == TBLOB_OK && at < bytes.size());
  }
  if (st == TBLOB_OK) st = tblob_gguf_writer_finish(w, nullptr, &d);
  FUZZ_ASSERT_MSG(oom_or(st, fa.failed(), {TBLOB_OK, TBLOB_E_CANCELLED, TBLOB_E_SHAPE_OVERFLOW}), "write: %d", st);
  tblob_gguf_writer_close(w);
  FUZZ_ASSERT(fa.live_bytes() == 0);
  if (st != TBLOB_OK) return 0;

  // Read back.
  tblob_model *m = nullptr;
  st = tblob_model_open_memory(out.data(), out.size(), nullptr, &m, &d);
  if (nested) {
    FUZZ_ASSERT_MSG(st == TBLOB_E_GGUF_ARRAY, "nested array file opened: %d", st);
    return 0;
  }
  FUZZ_ASSERT_MSG(st == TBLOB_OK, "written file refused: %d %s", st, d.message);
  FUZZ_ASSERT(tblob_metadata_typed_count(m) == kvs.size());
  for (size_t i = 0; i < kvs.size(); ++i) {
    tblob_metadata_value v = TBLOB_METADATA_VALUE_INIT;
    FUZZ_ASSERT(tblob_metadata_typed_at(m, i, &v, &d) == TBLOB_OK);
    const Kv &k = kvs[i];
    FUZZ_ASSERT(std::string(v.key, v.key_len) == k.key);
    FUZZ_ASSERT(v.value_type == k.type);
    FUZZ_ASSERT(v.count == k.count);
    if (k.type == 9) FUZZ_ASSERT(v.element_type == k.element_type);
    FUZZ_ASSERT_MSG(std::string(static_cast<const char *>(v.data), v.data_bytes) == k.bytes, "key %s bytes %zu vs %zu",
                    k.key.c_str(), static_cast<size_t>(v.data_bytes), k.bytes.size());
  }
  FUZZ_ASSERT(tblob_model_tensor_count(m) == tensors.size());
  for (size_t t = 0; t < tensors.size(); ++t) {
    tblob_tensor_info ti = TBLOB_TENSOR_INFO_INIT;
    FUZZ_ASSERT(tblob_tensor_at(m, t, &ti, &d) == TBLOB_OK);
    FUZZ_ASSERT(std::string(ti.name, ti.name_len) == tensors[t].name);
    FUZZ_ASSERT(std::vector<uint64_t>(ti.shape, ti.shape + ti.rank) == tensors[t].shape);
    FUZZ_ASSERT(ti.data_length == tensors[t].bytes);
    FUZZ_ASSERT(ti.file_offset % alignment == 0);
    const void *p = nullptr;
    uint64_t len = 0;
    FUZZ_ASSERT(tblob_tensor_data(m, t, &p, &len, &d) == TBLOB_OK);
    FUZZ_ASSERT(std::string(static_cast<const char *>(p), len) == data_of(t, tensors[t].bytes));
  }
  tblob_model_close(m);
  return 0;
}
