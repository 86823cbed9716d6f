// The shared mechanisms of lib/ that every format uses: little-endian loads, the header
// length read, PodVec/ByteBuf, the bounded side-file reader, no-follow opens and atomic
// file replacement. Expected values are hand-computed bytes and what POSIX reports.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "core/allocator.h"
#include "core/endian.h"
#include "io/file.h"
#include "io/source.h"
#include "json/st_scanner.h"

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    const char *base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/tblob_mech_XXXXXX";
    char *p = ::mkdtemp(&tmpl[0]);
    if (p) path = p;
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string file(const char *name) const { return path + "/" + name; }
  size_t entries() const {
    FILE *f = ::popen(("ls -A '" + path + "' | wc -l").c_str(), "r");
    int n = -1;
    if (f) {
      if (std::fscanf(f, "%d", &n) != 1) n = -1;
      ::pclose(f);
    }
    return static_cast<size_t>(n);
  }
};

void write_file(const std::string &path, const std::string &bytes) {
  FILE *f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  std::fclose(f);
}

std::string read_file(const std::string &path) {
  std::string out;
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) return "<missing>";
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  std::fclose(f);
  return out;
}

TEST(Endian, LoadsAreLittleEndianAtAnyAlignment) {
  const uint8_t b[11] = {0xAA, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0xFF, 0x80};
  EXPECT_EQ(tblob::load_le16(b + 1), 0x0201u);
  EXPECT_EQ(tblob::load_le32(b + 1), 0x04030201u);
  EXPECT_EQ(tblob::load_le64(b + 1), 0x0807060504030201ull);
  EXPECT_EQ(tblob::load_le16(b + 9), 0x80FFu);
  // 1.5f is 0x3FC00000.
  const uint8_t f[4] = {0x00, 0x00, 0xC0, 0x3F};
  EXPECT_EQ(tblob::load_le_f32(f), 1.5f);
  uint8_t out[9] = {0};
  tblob::store_le64(out + 1, 0x1122334455667788ull);
  const uint8_t want64[9] = {0, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11};
  EXPECT_EQ(std::string(reinterpret_cast<char *>(out), 9), std::string(reinterpret_cast<const char *>(want64), 9));
  tblob::store_le32(out, 0xA1B2C3D4u);
  EXPECT_EQ(out[0], 0xD4);
  EXPECT_EQ(out[3], 0xA1);
  tblob::store_le_f32(out, -2.0f);  // 0xC0000000
  EXPECT_EQ(tblob::load_le32(out), 0xC0000000u);
}

TEST(Endian, SafetensorsHeaderLength) {
  const uint8_t h[9] = {0x10, 0x01, 0, 0, 0, 0, 0, 0, '{'};
  uint64_t n = 0;
  ASSERT_TRUE(tblob::st_header_length(h, 9, &n));
  EXPECT_EQ(n, 0x110u);
  EXPECT_FALSE(tblob::st_header_length(h, 7, &n));
  EXPECT_EQ(n, 0x110u);  // untouched
}

TEST(PodVec, AppendResizeAndGrowth) {
  const tblob::Allocator a;
  tblob::PodVec<uint32_t> v(&a);
  for (uint32_t i = 0; i < 1000; ++i) ASSERT_TRUE(v.push(i));
  const uint32_t more[3] = {7, 8, 9};
  ASSERT_TRUE(v.append(more, 3));
  ASSERT_EQ(v.size(), 1003u);
  for (uint32_t i = 0; i < 1000; ++i) ASSERT_EQ(v[i], i);
  EXPECT_EQ(v[1002], 9u);
  ASSERT_TRUE(v.resize(10));
  EXPECT_EQ(v.size(), 10u);
  EXPECT_EQ(v[9], 9u);
  ASSERT_TRUE(v.resize(5000));
  EXPECT_EQ(v.size(), 5000u);
  EXPECT_EQ(v[9], 9u);  // kept across the growth
  EXPECT_FALSE(v.resize(UINT64_MAX / 2));  // more than size_t can count in bytes
  EXPECT_EQ(v.size(), 5000u);
  v.clear();
  EXPECT_EQ(v.size(), 0u);
}

TEST(PodVec, ByteBufTextAppends) {
  const tblob::Allocator a;
  tblob::ByteBuf b(&a);
  ASSERT_TRUE(b.append("ab"));
  ASSERT_TRUE(b.push(','));
  for (uint64_t v : {uint64_t{0}, uint64_t{7}, uint64_t{1234567890}, UINT64_MAX}) {
    ASSERT_TRUE(b.append_u64(v));
    ASSERT_TRUE(b.push(' '));
  }
  const uint8_t raw[2] = {0, 'z'};
  ASSERT_TRUE(b.append(raw, 2));
  EXPECT_EQ(std::string(b.data(), b.size()),
            std::string("ab,0 7 1234567890 18446744073709551615 ") + std::string("\0z", 2));
}

TEST(Source, BoundedReadChecksBeforeReading) {
  TempDir t;
  ASSERT_FALSE(t.path.empty());
  const tblob::Allocator a;
  tblob::Diag quiet;
  tblob::Source s;
  write_file(t.file("config.json"), "{\"a\":1}");
  ASSERT_EQ(tblob::source_read_bounded(t.file("config.json").c_str(), 7, TBLOB_E_LIMIT_HEADER_BYTES, a, &s, quiet),
            TBLOB_OK);
  EXPECT_EQ(std::string(reinterpret_cast<const char *>(s.data), s.len), "{\"a\":1}");
  tblob::source_close(&s, a);
  // One byte over: the caller's status, nothing read.
  EXPECT_EQ(tblob::source_read_bounded(t.file("config.json").c_str(), 6, TBLOB_E_LIMIT_HEADER_BYTES, a, &s, quiet),
            TBLOB_E_LIMIT_HEADER_BYTES);
  EXPECT_EQ(s.data, nullptr);
  // A FIFO with no writer: refused at once (a plain open would wait for a writer forever).
  ASSERT_EQ(::mkfifo(t.file("fifo.json").c_str(), 0600), 0);
  EXPECT_EQ(tblob::source_read_bounded(t.file("fifo.json").c_str(), 1 << 20, TBLOB_E_LIMIT_HEADER_BYTES, a, &s, quiet),
            TBLOB_E_IO);
  EXPECT_EQ(tblob::source_open_file(t.file("fifo.json").c_str(), TBLOB_OPEN_READ, a, &s, quiet), TBLOB_E_IO);
  // A device and a directory.
  EXPECT_EQ(tblob::source_read_bounded("/dev/null", 1 << 20, TBLOB_E_LIMIT_HEADER_BYTES, a, &s, quiet), TBLOB_E_IO);
  EXPECT_EQ(tblob::source_read_bounded(t.path.c_str(), 1 << 20, TBLOB_E_LIMIT_HEADER_BYTES, a, &s, quiet), TBLOB_E_IO);
  EXPECT_EQ(tblob::source_read_bounded(t.file("none.json").c_str(), 1 << 20, TBLOB_E_LIMIT_HEADER_BYTES, a, &s, quiet),
            TBLOB_E_NOT_FOUND);
}

TEST(File, NoFollowOpens) {
  TempDir t;
  ASSERT_FALSE(t.path.empty());
  write_file(t.file("real"), "x");
  ASSERT_EQ(::mkdir(t.file("dir").c_str(), 0700), 0);
  ASSERT_EQ(::symlink("real", t.file("link").c_str()), 0);
  ASSERT_EQ(::symlink("dir", t.file("dirlink").c_str()), 0);
  const int d = ::open(t.path.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(d, 0);
  int fd = tblob::open_nofollow(d, "real");
  EXPECT_GE(fd, 0);
  if (fd >= 0) ::close(fd);
  errno = 0;
  EXPECT_EQ(tblob::open_nofollow(d, "link"), -1);
  EXPECT_EQ(errno, ELOOP);
  fd = tblob::open_dir_nofollow(d, "dir");
  EXPECT_GE(fd, 0);
  if (fd >= 0) ::close(fd);
  EXPECT_EQ(tblob::open_dir_nofollow(d, "dirlink"), -1);
  EXPECT_EQ(tblob::open_dir_nofollow(d, "real"), -1);  // not a directory
  ::close(d);
}

TEST(File, AtomicReplaceLeavesOldOrNewNeverHalf) {
  TempDir t;
  ASSERT_FALSE(t.path.empty());
  const std::string target = t.file("out.bin");
  write_file(target, "old contents");
  {  // abandoned: the old file stays, the temporary goes
    tblob::AtomicFile f;
    ASSERT_TRUE(f.create_beside(target.c_str(), 0644));
    ASSERT_TRUE(f.write("partial", 7));
    EXPECT_EQ(t.entries(), 2u);  // the target and the temporary
  }
  EXPECT_EQ(read_file(target), "old contents");
  EXPECT_EQ(t.entries(), 1u);
  {  // committed: the new bytes under the final name, mode exactly 0644, nothing else left
    const mode_t old_mask = ::umask(077);
    tblob::AtomicFile f;
    ASSERT_TRUE(f.create_beside(target.c_str(), 0644));
    ::umask(old_mask);
    ASSERT_TRUE(f.write("new", 3));
    ASSERT_TRUE(f.commit("out.bin", true));
  }
  EXPECT_EQ(read_file(target), "new");
  EXPECT_EQ(t.entries(), 1u);
  struct stat st;
  ASSERT_EQ(::stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  {  // a directory that does not exist: false with ENOENT, nothing created
    tblob::AtomicFile f;
    errno = 0;
    EXPECT_FALSE(f.create_beside(t.file("no/such/x.bin").c_str(), 0644));
    EXPECT_EQ(errno, ENOENT);
  }
  {  // renaming over a directory fails; the temporary is removed
    ASSERT_EQ(::mkdir(t.file("adir").c_str(), 0700), 0);
    write_file(t.file("adir/keep"), "k");
    const int d = ::open(t.path.c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(d, 0);
    tblob::AtomicFile f;
    ASSERT_TRUE(f.create(d, "adir", 0644));
    ASSERT_TRUE(f.write("z", 1));
    EXPECT_FALSE(f.commit("adir", false));
    ::close(d);
    EXPECT_EQ(t.entries(), 2u);  // out.bin and adir
  }
}

}  // namespace
