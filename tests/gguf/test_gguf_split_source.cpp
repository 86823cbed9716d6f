// Split GGUF sets through byte sources: a set written with tblob_gguf_writer_* (part 1 with a
// 20,000-string vocabulary, so its header is larger than the first prefix read), opened with
// tblob_model_open_source from each part (siblings through open_sibling, sizes declared or
// unknown), is the model tblob_model_open gives for the same part (split_oracle.py checks that
// one against gguf-py): names, shapes, file indexes, bytes, f32, metadata. A missing sibling
// is TBLOB_E_GGUF_SPLIT_MISSING; a source without a split name holding split.count 3 is
// TBLOB_E_GGUF_SPLIT.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tensorblob.h"

namespace {

std::string temp_dir() {
  const char *t = std::getenv("TMPDIR");
  std::string tmpl = std::string(t ? t : "/tmp") + "/gguf_split_src_XXXXXX";
  std::vector<char> b(tmpl.begin(), tmpl.end());
  b.push_back('\0');
  if (!::mkdtemp(b.data())) std::abort();
  return b.data();
}

struct FileSource {
  int fd;
  std::string dir;
  bool known_size;
  std::vector<std::string> *opened;
};

int64_t read_fn(void *user, uint64_t off, void *dst, size_t len) {
  const ssize_t r = ::pread(static_cast<FileSource *>(user)->fd, dst, len, static_cast<off_t>(off));
  return r < 0 ? static_cast<int64_t>(TBLOB_E_IO) : static_cast<int64_t>(r);
}
void close_fn(void *user) {
  FileSource *f = static_cast<FileSource *>(user);
  ::close(f->fd);
  delete f;
}
tblob_status sibling_fn(void *user, const char *name, size_t len, tblob_byte_source *out);

bool make_source(const std::string &dir, const std::string &name, bool known_size, std::vector<std::string> *opened,
                 tblob_byte_source *out) {
  const std::string path = dir + "/" + name;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  if (opened) opened->push_back(name);
  FileSource *f = new FileSource{fd, dir, known_size, opened};
  out->size = known_size ? static_cast<uint64_t>(::lseek(fd, 0, SEEK_END)) : TBLOB_SOURCE_SIZE_UNKNOWN;
  out->read = read_fn;
  out->open_sibling = sibling_fn;
  out->close = close_fn;
  out->user = f;
  out->name = nullptr;
  static thread_local std::string name_copy;
  name_copy = path;  // copied by the library
  out->name = name_copy.c_str();
  return true;
}

tblob_status sibling_fn(void *user, const char *name, size_t len, tblob_byte_source *out) {
  const FileSource *f = static_cast<FileSource *>(user);
  return make_source(f->dir, std::string(name, len), f->known_size, f->opened, out) ? TBLOB_OK : TBLOB_E_NOT_FOUND;
}

tblob_status open_source(const std::string &dir, const std::string &name, bool known, tblob_model **m,
                         tblob_diag *d, std::vector<std::string> *opened = nullptr) {
  tblob_byte_source bs = TBLOB_BYTE_SOURCE_INIT;
  if (!make_source(dir, name, known, opened, &bs)) return TBLOB_E_IO;
  return tblob_model_open_source(&bs, nullptr, m, d);
}

void write_part(const std::string &path, uint16_t no, uint16_t count, int32_t total, int tensors, int first,
                size_t vocab) {
  tblob_diag d = TBLOB_DIAG_INIT;
  tblob_gguf_writer *w = nullptr;
  ASSERT_EQ(tblob_gguf_writer_open(path.c_str(), nullptr, &w, &d), TBLOB_OK) << d.message;
  const tblob_gguf_value vno{TBLOB_META_U16, 0, &no, 0}, vcount{TBLOB_META_U16, 0, &count, 0},
      vtotal{TBLOB_META_I32, 0, &total, 0};
  std::vector<std::string> toks(vocab);
  std::vector<tblob_gguf_value> tv(vocab);
  for (size_t i = 0; i < vocab; ++i) {
    toks[i] = "token-" + std::to_string(i);
    tv[i] = tblob_gguf_value{TBLOB_META_STRING, 0, toks[i].data(), toks[i].size()};
  }
  const tblob_gguf_value vtoks{TBLOB_META_ARRAY, TBLOB_META_STRING, tv.data(), vocab};
  if (vocab) {
    ASSERT_EQ(tblob_gguf_writer_add_value(w, "tokenizer.ggml.tokens", 21, &vtoks, &d), TBLOB_OK);
  }
  ASSERT_EQ(tblob_gguf_writer_add_value(w, "split.no", 8, &vno, &d), TBLOB_OK);
  ASSERT_EQ(tblob_gguf_writer_add_value(w, "split.count", 11, &vcount, &d), TBLOB_OK);
  ASSERT_EQ(tblob_gguf_writer_add_value(w, "split.tensors.count", 19, &vtotal, &d), TBLOB_OK);
  for (int t = 0; t < tensors; ++t) {
    const std::string name = "blk." + std::to_string(first + t) + ".w";
    const uint64_t shape[] = {3, 8};
    ASSERT_EQ(tblob_gguf_writer_add_tensor(w, name.data(), name.size(), shape, 2, 1 /* F16 */, nullptr, &d), TBLOB_OK);
  }
  for (int t = 0; t < tensors; ++t) {
    uint16_t h[24];
    for (int i = 0; i < 24; ++i) h[i] = static_cast<uint16_t>(0x3C00 + (first + t) * 24 + i);  // 1.0 and up
    ASSERT_EQ(tblob_gguf_writer_write(w, t, h, sizeof(h), &d), TBLOB_OK);
  }
  ASSERT_EQ(tblob_gguf_writer_finish(w, nullptr, &d), TBLOB_OK) << d.message;
  tblob_gguf_writer_close(w);
}

std::string part(int k) { return "model-0000" + std::to_string(k) + "-of-00003.gguf"; }

struct Row {
  std::string name;
  std::vector<uint64_t> shape;
  uint32_t file_index;
  std::string bytes, f32;
  bool operator==(const Row &o) const {
    return name == o.name && shape == o.shape && file_index == o.file_index && bytes == o.bytes && f32 == o.f32;
  }
};

std::vector<Row> rows(const tblob_model *m) {
  std::vector<Row> out;
  for (uint64_t i = 0; i < tblob_model_tensor_count(m); ++i) {
    tblob_tensor_info ti = TBLOB_TENSOR_INFO_INIT;
    EXPECT_EQ(tblob_tensor_at(m, i, &ti, nullptr), TBLOB_OK);
    Row r{std::string(ti.name, ti.name_len), std::vector<uint64_t>(ti.shape, ti.shape + ti.rank), ti.file_index, {}, {}};
    r.bytes.resize(static_cast<size_t>(ti.data_length));
    EXPECT_EQ(tblob_tensor_read(m, i, 0, &r.bytes[0], r.bytes.size(), nullptr), TBLOB_OK);
    r.f32.resize(static_cast<size_t>(ti.element_count) * 4);
    EXPECT_EQ(tblob_tensor_dequantize(m, i, TBLOB_DTYPE_F32, 0, ti.shape[0], &r.f32[0], r.f32.size(), nullptr),
              TBLOB_OK);
    uint64_t found = 0;
    EXPECT_EQ(tblob_tensor_find(m, ti.name, ti.name_len, &found, nullptr), TBLOB_OK);
    EXPECT_EQ(found, i);
    out.push_back(r);
  }
  return out;
}

TEST(GgufSplitSource, OpensTheWholeSetFromEachPart) {
  const std::string dir = temp_dir();
  write_part(dir + "/" + part(1), 0, 3, 5, 2, 0, 20000);
  write_part(dir + "/" + part(2), 1, 3, 5, 2, 2, 0);
  write_part(dir + "/" + part(3), 2, 3, 5, 1, 4, 0);
  tblob_diag d = TBLOB_DIAG_INIT;
  tblob_model *ref = nullptr;
  ASSERT_EQ(tblob_model_open((dir + "/" + part(1)).c_str(), nullptr, &ref, &d), TBLOB_OK) << d.message;
  const std::vector<Row> want = rows(ref);
  ASSERT_EQ(want.size(), 5u);
  EXPECT_EQ(want[4].file_index, 2u);
  for (bool known : {true, false})
    for (int k = 1; k <= 3; ++k) {
      SCOPED_TRACE("part " + std::to_string(k) + (known ? ", size declared" : ", size unknown"));
      tblob_model *m = nullptr;
      std::vector<std::string> opened;
      ASSERT_EQ(open_source(dir, part(k), known, &m, &d, &opened), TBLOB_OK) << d.message;
      EXPECT_EQ(opened.size(), 3u);  // the part and its two siblings, each once
      EXPECT_EQ(rows(m), want);
      EXPECT_EQ(tblob_metadata_typed_count(m), tblob_metadata_typed_count(ref));
      tblob_metadata_value v = TBLOB_METADATA_VALUE_INIT;
      ASSERT_EQ(tblob_metadata_typed_find(m, "tokenizer.ggml.tokens", 21, &v, &d), TBLOB_OK);
      EXPECT_EQ(v.count, 20000u);
      const char *s = nullptr;
      size_t sn = 0;
      ASSERT_EQ(tblob_metadata_find(m, "split.no", 8, &s, &sn, &d), TBLOB_OK);
      EXPECT_EQ(std::string(s, sn), "0");  // part 1's
      tblob_model_close(m);
    }
  tblob_model_close(ref);
  // The first tensor is F16 1.0, 1.0009765625, ...: f32 through the set's dequantization.
  float first;
  std::memcpy(&first, want[0].f32.data(), 4);
  EXPECT_EQ(first, 1.0f);
  // A missing sibling, and a part under a name without the split tail.
  ASSERT_EQ(::rename((dir + "/" + part(3)).c_str(), (dir + "/lone.gguf").c_str()), 0);
  tblob_model *m = nullptr;
  EXPECT_EQ(open_source(dir, part(1), true, &m, &d), TBLOB_E_GGUF_SPLIT_MISSING);
  EXPECT_EQ(m, nullptr);
  EXPECT_EQ(open_source(dir, part(2), false, &m, &d), TBLOB_E_GGUF_SPLIT_MISSING);
  EXPECT_EQ(open_source(dir, "lone.gguf", true, &m, &d), TBLOB_E_GGUF_SPLIT);
  EXPECT_EQ(tblob_model_open((dir + "/lone.gguf").c_str(), nullptr, &m, &d), TBLOB_E_GGUF_SPLIT);
}

}  // namespace
