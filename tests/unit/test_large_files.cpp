// Files larger than 4 GiB (sparse, so they cost no disk): every format's offsets are 64-bit.
// Where size_t is 64 bits they open and a tensor past the 4 GiB mark is read at its true
// offset; where size_t is 32 bits the file cannot fit the address space, and the open is
// refused with TBLOB_E_UNSUPPORTED before anything is mapped or allocated, never truncated
// to the low 32 bits of its size.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tensorblob.h"

namespace {

// Whether this build has a feature ("format:gguf"), as the library lists it: a test skips only
// for a part that is really compiled out, never for a failure that looks like one.
bool built_with(const char *feature) {
  for (const char *const *f = tblob_features(nullptr); *f; ++f)
    if (std::strcmp(*f, feature) == 0) return true;
  return false;
}

constexpr uint64_t k4G = uint64_t{1} << 32;
constexpr bool kSize64 = sizeof(size_t) >= 8;

// The tail tensor's bytes: 8 little-endian f32 1..8, distinct from the sparse zeros.
std::string tail_bytes() {
  std::string b;
  for (int i = 1; i <= 8; ++i) {
    float f = static_cast<float>(i);
    char c[4];
    std::memcpy(c, &f, 4);
    b.append(c, 4);
  }
  return b;
}

void put_u32(std::string *s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s->push_back(static_cast<char>(v >> (8 * i)));
}
void put_u64(std::string *s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s->push_back(static_cast<char>(v >> (8 * i)));
}

// Records the largest request and refuses anything of 256 MiB or more, so a 64-bit READ-mode
// open shows the whole file size reaching the allocator without holding 4 GiB in this test.
struct CountingAlloc {
  uint64_t largest = 0;
  static void *alloc(void *o, size_t n) {
    auto *self = static_cast<CountingAlloc *>(o);
    if (n > self->largest) self->largest = n;
    return n >= (size_t{256} << 20) ? nullptr : std::malloc(n);
  }
  static void free_(void *, void *p, size_t) { std::free(p); }
};

struct LargeFiles : ::testing::Test {
  std::string dir;
  std::vector<std::string> made;
  void SetUp() override {
    const char *base = std::getenv("TMPDIR");
    std::string t = std::string(base && *base ? base : "/tmp") + "/large-XXXXXX";
    std::vector<char> buf(t.begin(), t.end());
    buf.push_back('\0');
    ASSERT_NE(::mkdtemp(buf.data()), nullptr);
    dir = buf.data();
  }
  void TearDown() override {
    for (const auto &p : made) ::unlink(p.c_str());
    if (!dir.empty()) ::rmdir(dir.c_str());
  }
  // Writes head at 0 and tail at `tail_at`; the gap stays a hole.
  std::string sparse(const char *name, const std::string &head, uint64_t tail_at, const std::string &tail) {
    const std::string p = dir + "/" + name;
    const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    EXPECT_GE(fd, 0) << p;
    if (fd < 0) return p;
    made.push_back(p);
    EXPECT_EQ(::pwrite(fd, head.data(), head.size(), 0), static_cast<ssize_t>(head.size()));
    EXPECT_EQ(::pwrite(fd, tail.data(), tail.size(), static_cast<off_t>(tail_at)),
              static_cast<ssize_t>(tail.size()));
    ::close(fd);
    struct stat st;
    EXPECT_EQ(::stat(p.c_str(), &st), 0);
    EXPECT_EQ(static_cast<uint64_t>(st.st_size), tail_at + tail.size());
    return p;
  }

  // Opens path mapped and read; on 64-bit checks tensor `tail` holds tail_bytes() at
  // file offset `tail_at`, on 32-bit checks the refusal.
  void check(const std::string &path, uint64_t file_size, uint64_t tail_at, uint64_t big_len) {
    for (uint32_t mode : {uint32_t{TBLOB_OPEN_MAP}, uint32_t{TBLOB_OPEN_READ}}) {
      SCOPED_TRACE(mode == TBLOB_OPEN_MAP ? "map" : "read");
      CountingAlloc counter;
      tblob_allocator al = TBLOB_ALLOCATOR_INIT;
      al.alloc = &CountingAlloc::alloc;
      al.free = &CountingAlloc::free_;
      al.opaque = &counter;
      tblob_open_options o = TBLOB_OPEN_OPTIONS_INIT;
      o.mode = mode;
      o.allocator = &al;
      tblob_diag d = TBLOB_DIAG_INIT;
      tblob_model *m = nullptr;
      const tblob_status s = tblob_model_open(path.c_str(), &o, &m, &d);
      if (!kSize64) {
        EXPECT_EQ(s, TBLOB_E_UNSUPPORTED) << d.message;
        EXPECT_EQ(m, nullptr);
        EXPECT_NE(std::strstr(d.message, "address space"), nullptr) << d.message;
        EXPECT_NE(std::strstr(d.message, std::to_string(file_size).c_str()), nullptr) << d.message;
        EXPECT_LT(counter.largest, uint64_t{1} << 20);  // nothing file-sized was asked for
        continue;
      }
      if (mode == TBLOB_OPEN_READ) {
        // The whole length, not its low 32 bits, is what the reader asks for.
        EXPECT_EQ(s, TBLOB_E_OUT_OF_MEMORY) << d.message;
        EXPECT_EQ(counter.largest, file_size);
        tblob_model_close(m);
        continue;
      }
      ASSERT_EQ(s, TBLOB_OK) << d.message;
      uint64_t big = 0, tail = 0;
      ASSERT_EQ(tblob_tensor_find(m, "big", 3, &big, &d), TBLOB_OK) << d.message;
      ASSERT_EQ(tblob_tensor_find(m, "tail", 4, &tail, &d), TBLOB_OK) << d.message;
      tblob_tensor_info bi = TBLOB_TENSOR_INFO_INIT, ti = TBLOB_TENSOR_INFO_INIT;
      ASSERT_EQ(tblob_tensor_at(m, big, &bi, &d), TBLOB_OK) << d.message;
      ASSERT_EQ(tblob_tensor_at(m, tail, &ti, &d), TBLOB_OK) << d.message;
      EXPECT_EQ(bi.data_length, big_len);
      EXPECT_EQ(ti.file_offset, tail_at);
      EXPECT_EQ(ti.data_length, 32u);
      const void *p = nullptr;
      uint64_t n = 0;
      ASSERT_EQ(tblob_tensor_data(m, tail, &p, &n, &d), TBLOB_OK) << d.message;
      ASSERT_EQ(n, 32u);
      EXPECT_EQ(std::string(static_cast<const char *>(p), 32), tail_bytes());
      ASSERT_EQ(tblob_tensor_data(m, big, &p, &n, &d), TBLOB_OK) << d.message;
      EXPECT_EQ(n, big_len);
      EXPECT_EQ(static_cast<const char *>(p)[big_len - 1], 0);  // the hole reads as zeros
      tblob_model_close(m);
    }
  }
};

// safetensors: a U8 tensor of 4 GiB + 8 bytes, then an f32 tensor past the 4 GiB mark.
TEST_F(LargeFiles, SafetensorsTensorBeyond4GiB) {
  const uint64_t big_len = k4G + 8;
  std::string json = "{\"big\":{\"dtype\":\"U8\",\"shape\":[" + std::to_string(big_len) +
                     "],\"data_offsets\":[0," + std::to_string(big_len) +
                     "]},\"tail\":{\"dtype\":\"F32\",\"shape\":[8],\"data_offsets\":[" +
                     std::to_string(big_len) + "," + std::to_string(big_len + 32) + "]}}";
  while ((8 + json.size()) % 8) json.push_back(' ');
  std::string head;
  put_u64(&head, json.size());
  head += json;
  const uint64_t tail_at = head.size() + big_len;
  const std::string p = sparse("big.safetensors", head, tail_at, tail_bytes());
  check(p, tail_at + 32, tail_at, big_len);
}

// GGUF v3: an I8 tensor of 4 GiB + 32 bytes at offset 0 and an F32 tensor at data offset
// 4 GiB + 32, both offsets 64-bit fields of the tensor infos.
TEST_F(LargeFiles, GgufOffsetBeyond4GiB) {
  const uint64_t big_len = k4G + 32;
  std::string h = "GGUF";
  put_u32(&h, 3);
  put_u64(&h, 2);  // tensors
  put_u64(&h, 0);  // metadata pairs
  auto info = [&](const char *name, uint64_t ne, uint32_t type, uint64_t off) {
    put_u64(&h, std::strlen(name));
    h += name;
    put_u32(&h, 1);  // n_dims
    put_u64(&h, ne);
    put_u32(&h, type);
    put_u64(&h, off);
  };
  info("big", big_len, 24 /* GGML_TYPE_I8 */, 0);
  info("tail", 8, 0 /* GGML_TYPE_F32 */, big_len);
  while (h.size() % 32) h.push_back('\0');  // default alignment
  const uint64_t tail_at = h.size() + big_len;
  const std::string p = sparse("big.gguf", h, tail_at, tail_bytes());
  tblob_diag d = TBLOB_DIAG_INIT;
  tblob_model *m = nullptr;
  const tblob_status s = tblob_model_open(p.c_str(), nullptr, &m, &d);
  if (!built_with("format:gguf")) GTEST_SKIP() << "GGUF compiled out";
  // UNKNOWN_FORMAT here is a failure, not a skip; a 32-bit build refuses the file by its size.
  ASSERT_EQ(s, kSize64 ? TBLOB_OK : TBLOB_E_UNSUPPORTED) << d.message;
  tblob_model_close(m);
  check(p, tail_at + 32, tail_at, big_len);
}

// A buffer over 4 GiB cannot exist with 32-bit size_t; the memory path is the 64-bit one:
// the length is taken as given, not reduced.
TEST_F(LargeFiles, MemoryLengthIsKeptWhole) {
  if (!kSize64) GTEST_SKIP() << "no buffer over 4 GiB with 32-bit size_t";
  // Declares a tensor ending past 4 GiB in a 4 KiB buffer: truncated, with the full end named.
  std::string json = "{\"t\":{\"dtype\":\"U8\",\"shape\":[" + std::to_string(k4G + 1) +
                     "],\"data_offsets\":[0," + std::to_string(k4G + 1) + "]}}";
  std::string buf;
  put_u64(&buf, json.size());
  buf += json;
  buf.resize(4096, '\0');
  tblob_diag d = TBLOB_DIAG_INIT;
  tblob_model *m = nullptr;
  EXPECT_EQ(tblob_model_open_memory(buf.data(), buf.size(), nullptr, &m, &d), TBLOB_E_TRUNCATED) << d.message;
  EXPECT_EQ(m, nullptr);
}

}  // namespace
