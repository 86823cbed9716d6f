// Test helper for tests/gguf/writer_oracle.py: drives tblob_gguf_writer_* from files gguf-py
// wrote, so the Python side can compare bytes with gguf-py's GGUFWriter and read the result
// with gguf-py's GGUFReader.
//   gguf_write_tool copy IN OUT [--callback] [--chunk N]
//       reads IN through the library (typed metadata, tensor table, ggml types) and writes the
//       same content to OUT with the writer: to a path, or through the write callback into a
//       FILE; tensor data in pieces of N bytes (default: whole tensors).
//   gguf_write_tool dump MODEL DIR
//       opens MODEL with tblob_model_open (a split set from any part) and writes DIR/index.txt:
//       the status, then per tensor a line "name file_index ggml_type rank dims...", the typed
//       keys as "key KEY TYPE"; DIR/<i>.bytes (the tensor's bytes through a view) and
//       DIR/<i>.f32 (tblob_tensor_dequantize to f32, when it dequantizes); for split_oracle.py.
//   gguf_write_tool nested OUT
//       writes the fixed content writer_oracle.py expects: nested arrays and empty arrays,
//       which gguf-py cannot write or the library cannot read back.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "formats/gguf/gguf.h"
#include "table/model.h"
#include "tensorblob.h"

namespace {

int die(const char *what, const tblob_diag &d) {
  std::fprintf(stderr, "gguf_write_tool: %s: %s (%d)\n", what, d.message, static_cast<int>(d.status));
  return 1;
}

int file_sink(void *user, const void *p, size_t n) {
  return std::fwrite(p, 1, n, static_cast<FILE *>(user)) == n ? 0 : 1;
}

// Keeps the host-order bytes of every value alive until the writer has encoded it.
struct Value {
  tblob_gguf_value v{};
  std::vector<uint8_t> bytes;
  std::vector<std::string> strings;
  std::vector<tblob_gguf_value> elems;
};

int copy(const char *in, const char *out, bool callback, size_t chunk) {
  tblob_diag d = TBLOB_DIAG_INIT;
  tblob_model *m = nullptr;
  if (tblob_model_open(in, nullptr, &m, &d) != TBLOB_OK) return die("open", d);
  const tblob::gguf::GgufExt *ext = tblob::gguf::ext_of(m);
  if (!ext) return die("not a GGUF model", d);
  tblob_gguf_writer_options o = TBLOB_GGUF_WRITER_OPTIONS_INIT;
  o.version = ext->version;
  tblob_gguf_writer *w = nullptr;
  FILE *f = nullptr;
  if (callback) {
    f = std::fopen(out, "wb");
    if (!f) return die("fopen", d);
    if (tblob_gguf_writer_open_callback(file_sink, f, &o, &w, &d) != TBLOB_OK) return die("open_callback", d);
  } else if (tblob_gguf_writer_open(out, &o, &w, &d) != TBLOB_OK) {
    return die("writer_open", d);
  }
  for (uint64_t i = 0; i < tblob_metadata_typed_count(m); ++i) {
    tblob_metadata_value mv = TBLOB_METADATA_VALUE_INIT;
    if (tblob_metadata_typed_at(m, i, &mv, &d) != TBLOB_OK) return die("typed_at", d);
    Value val;
    val.v.value_type = mv.value_type;
    if (mv.value_type == TBLOB_META_STRING) {
      val.v.data = mv.string;
      val.v.length = mv.string_len;
    } else if (mv.value_type == TBLOB_META_ARRAY) {
      val.v.element_type = mv.element_type;
      val.v.length = mv.count;
      if (mv.element_type == TBLOB_META_STRING) {
        if (tblob_metadata_array_strings(
                m, i, 0, UINT64_MAX, nullptr,
                [](void *u, uint64_t, const char *s, size_t len) {
                  static_cast<std::vector<std::string> *>(u)->emplace_back(s, len);
                  return 0;
                },
                &val.strings, &d) != TBLOB_OK)
          return die("array_strings", d);
        for (const std::string &s : val.strings) {
          tblob_gguf_value e{};
          e.value_type = TBLOB_META_STRING;
          e.data = s.data();
          e.length = s.size();
          val.elems.push_back(e);
        }
        val.v.data = val.elems.data();
      } else {
        val.bytes.resize(static_cast<size_t>(mv.data_bytes) + 1);
        if (tblob_metadata_array_get(m, i, 0, UINT64_MAX, val.bytes.data(), val.bytes.size(), &d) != TBLOB_OK)
          return die("array_get", d);
        val.v.data = val.bytes.data();
      }
    } else {
      // The scalar in host representation, from the field of its kind.
      val.bytes.resize(8);
      const uint32_t t = mv.value_type;
      if (t == TBLOB_META_F32) {
        const float x = static_cast<float>(mv.float_value);
        std::memcpy(val.bytes.data(), &x, 4);
      } else if (t == TBLOB_META_F64) {
        std::memcpy(val.bytes.data(), &mv.float_value, 8);
      } else if (t == TBLOB_META_I8 || t == TBLOB_META_I16 || t == TBLOB_META_I32 || t == TBLOB_META_I64) {
        const int64_t x = mv.int_value;
        if (t == TBLOB_META_I8) { const int8_t y = static_cast<int8_t>(x); std::memcpy(val.bytes.data(), &y, 1); }
        if (t == TBLOB_META_I16) { const int16_t y = static_cast<int16_t>(x); std::memcpy(val.bytes.data(), &y, 2); }
        if (t == TBLOB_META_I32) { const int32_t y = static_cast<int32_t>(x); std::memcpy(val.bytes.data(), &y, 4); }
        if (t == TBLOB_META_I64) std::memcpy(val.bytes.data(), &x, 8);
      } else {
        const uint64_t x = mv.uint_value;
        if (t == TBLOB_META_U8 || t == TBLOB_META_BOOL) { const uint8_t y = static_cast<uint8_t>(x); std::memcpy(val.bytes.data(), &y, 1); }
        if (t == TBLOB_META_U16) { const uint16_t y = static_cast<uint16_t>(x); std::memcpy(val.bytes.data(), &y, 2); }
        if (t == TBLOB_META_U32) { const uint32_t y = static_cast<uint32_t>(x); std::memcpy(val.bytes.data(), &y, 4); }
        if (t == TBLOB_META_U64) std::memcpy(val.bytes.data(), &x, 8);
      }
      val.v.data = val.bytes.data();
    }
    if (tblob_gguf_writer_add_value(w, mv.key, mv.key_len, &val.v, &d) != TBLOB_OK) return die("add_value", d);
  }
  const uint64_t n = tblob_model_tensor_count(m);
  for (uint64_t i = 0; i < n; ++i) {
    tblob_tensor_info ti = TBLOB_TENSOR_INFO_INIT;
    if (tblob_tensor_at(m, i, &ti, &d) != TBLOB_OK) return die("tensor_at", d);
    uint64_t bytes = 0;
    if (tblob_gguf_writer_add_tensor(w, ti.name, ti.name_len, ti.shape, ti.rank,
                                     ext->types[i - ext->first_row], &bytes, &d) != TBLOB_OK)
      return die("add_tensor", d);
    if (bytes != ti.data_length) return die("byte count differs from the reader's", d);
  }
  for (uint64_t i = 0; i < n; ++i) {
    const void *p = nullptr;
    uint64_t len = 0;
    if (tblob_tensor_data(m, i, &p, &len, &d) != TBLOB_OK) return die("tensor_data", d);
    const uint8_t *q = static_cast<const uint8_t *>(p);
    uint64_t at = 0;
    do {
      const size_t k = static_cast<size_t>(chunk && len - at > chunk ? chunk : len - at);
      if (tblob_gguf_writer_write(w, i, q + at, k, &d) != TBLOB_OK) return die("write", d);
      at += k;
    } while (at < len);
  }
  uint64_t total = 0;
  if (tblob_gguf_writer_finish(w, &total, &d) != TBLOB_OK) return die("finish", d);
  tblob_gguf_writer_close(w);
  tblob_model_close(m);
  if (f && std::fclose(f) != 0) return die("fclose", d);
  return 0;
}

int dump(const char *path, const std::string &dir) {
  tblob_diag d = TBLOB_DIAG_INIT;
  tblob_model *m = nullptr;
  FILE *idx = std::fopen((dir + "/index.txt").c_str(), "w");
  if (!idx) return die("index.txt", d);
  const tblob_status st = tblob_model_open(path, nullptr, &m, &d);
  std::fprintf(idx, "status %d\n", static_cast<int>(st));
  if (st != TBLOB_OK) {
    std::fprintf(idx, "message %s\n", d.message);
    std::fclose(idx);
    return 0;
  }
  const tblob::gguf::GgufExt *ext = tblob::gguf::ext_of(m);
  std::fprintf(idx, "files %zu\n", m->files.size());
  for (uint64_t i = 0; i < tblob_metadata_typed_count(m); ++i) {
    tblob_metadata_value mv = TBLOB_METADATA_VALUE_INIT;
    if (tblob_metadata_typed_at(m, i, &mv, &d) != TBLOB_OK) return die("typed_at", d);
    std::fprintf(idx, "key %.*s %u\n", static_cast<int>(mv.key_len), mv.key, mv.value_type);
  }
  for (uint64_t i = 0; i < tblob_model_tensor_count(m); ++i) {
    tblob_tensor_info ti = TBLOB_TENSOR_INFO_INIT;
    if (tblob_tensor_at(m, i, &ti, &d) != TBLOB_OK) return die("tensor_at", d);
    uint64_t found = UINT64_MAX;
    if (tblob_tensor_find(m, ti.name, ti.name_len, &found, &d) != TBLOB_OK || found != i) return die("find", d);
    std::fprintf(idx, "tensor %.*s %u %u %u", static_cast<int>(ti.name_len), ti.name, ti.file_index,
                 ext->types[i], ti.rank);
    for (uint32_t k = 0; k < ti.rank; ++k) std::fprintf(idx, " %llu", static_cast<unsigned long long>(ti.shape[k]));
    std::fprintf(idx, "\n");
    const void *p = nullptr;
    uint64_t len = 0;
    if (tblob_tensor_data(m, i, &p, &len, &d) != TBLOB_OK) return die("tensor_data", d);
    std::string copy(static_cast<size_t>(len), '\0');
    if (len && tblob_tensor_read(m, i, 0, &copy[0], copy.size(), &d) != TBLOB_OK) return die("tensor_read", d);
    if (copy != std::string(static_cast<const char *>(p), len)) return die("read differs from the view", d);
    FILE *f = std::fopen((dir + "/" + std::to_string(i) + ".bytes").c_str(), "wb");
    std::fwrite(p, 1, len, f);
    std::fclose(f);
    const uint64_t rows = ti.rank == 0 || ti.shape[ti.rank - 1] == 0 ? (ti.rank == 0 ? 1 : 0)
                                                                    : ti.element_count / ti.shape[ti.rank - 1];
    uint64_t bytes = 0;
    if (rows == 0 || tblob_tensor_dequant_size(m, i, TBLOB_DTYPE_F32, 0, rows, &bytes, &d) != TBLOB_OK) continue;
    std::vector<char> out(static_cast<size_t>(bytes));
    if (tblob_tensor_dequantize(m, i, TBLOB_DTYPE_F32, 0, rows, out.data(), out.size(), &d) != TBLOB_OK)
      return die("dequantize", d);
    f = std::fopen((dir + "/" + std::to_string(i) + ".f32").c_str(), "wb");
    std::fwrite(out.data(), 1, out.size(), f);
    std::fclose(f);
  }
  std::fclose(idx);
  tblob_model_close(m);
  return 0;
}

int nested(const char *out) {
  tblob_diag d = TBLOB_DIAG_INIT;
  tblob_gguf_writer_options o = TBLOB_GGUF_WRITER_OPTIONS_INIT;
  o.flags = TBLOB_GGUF_WRITE_NESTED_ARRAYS;
  tblob_gguf_writer *w = nullptr;
  if (tblob_gguf_writer_open(out, &o, &w, &d) != TBLOB_OK) return die("open", d);
  // [[1, 2, 3], [4], []] of i32 and [["a", "bc"], ["def"]] of strings.
  const int32_t a0[] = {1, 2, 3}, a1[] = {4};
  tblob_gguf_value ints[3] = {{TBLOB_META_ARRAY, TBLOB_META_I32, a0, 3},
                              {TBLOB_META_ARRAY, TBLOB_META_I32, a1, 1},
                              {TBLOB_META_ARRAY, TBLOB_META_I32, nullptr, 0}};
  tblob_gguf_value s0[2] = {{TBLOB_META_STRING, 0, "a", 1}, {TBLOB_META_STRING, 0, "bc", 2}};
  tblob_gguf_value s1[1] = {{TBLOB_META_STRING, 0, "def", 3}};
  tblob_gguf_value strs[2] = {{TBLOB_META_ARRAY, TBLOB_META_STRING, s0, 2},
                              {TBLOB_META_ARRAY, TBLOB_META_STRING, s1, 1}};
  const tblob_gguf_value kvs[] = {
      {TBLOB_META_ARRAY, TBLOB_META_ARRAY, ints, 3},
      {TBLOB_META_ARRAY, TBLOB_META_ARRAY, strs, 2},
      {TBLOB_META_ARRAY, TBLOB_META_F32, nullptr, 0},
  };
  const char *keys[] = {"test.nested_ints", "test.nested_strings", "test.empty_f32"};
  for (int k = 0; k < 3; ++k)
    if (tblob_gguf_writer_add_value(w, keys[k], std::strlen(keys[k]), &kvs[k], &d) != TBLOB_OK)
      return die("add_value", d);
  const uint64_t shape[] = {2, 3};
  if (tblob_gguf_writer_add_tensor(w, "t", 1, shape, 2, 0, nullptr, &d) != TBLOB_OK) return die("add_tensor", d);
  const float data[6] = {1, 2, 3, 4, 5, 6};
  if (tblob_gguf_writer_write(w, 0, data, sizeof(data), &d) != TBLOB_OK) return die("write", d);
  if (tblob_gguf_writer_finish(w, nullptr, &d) != TBLOB_OK) return die("finish", d);
  tblob_gguf_writer_close(w);
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc >= 4 && std::strcmp(argv[1], "copy") == 0) {
    bool callback = false;
    size_t chunk = 0;
    for (int i = 4; i < argc; ++i) {
      if (std::strcmp(argv[i], "--callback") == 0) callback = true;
      else if (std::strcmp(argv[i], "--chunk") == 0 && i + 1 < argc) chunk = std::strtoull(argv[++i], nullptr, 10);
    }
    return copy(argv[2], argv[3], callback, chunk);
  }
  if (argc == 3 && std::strcmp(argv[1], "nested") == 0) return nested(argv[2]);
  if (argc == 4 && std::strcmp(argv[1], "dump") == 0) return dump(argv[2], argv[3]);
  std::fprintf(stderr, "usage: gguf_write_tool copy IN OUT [--callback] [--chunk N] | dump MODEL DIR | nested OUT\n");
  return 2;
}
