// A FIFO, a device or a directory where a file is expected: a clear status at once, never a
// wait in open() (a FIFO without a writer blocks a plain open forever, so a regression shows
// as this test hanging until meson's timeout), and a message that says what the path is
// rather than a stale errno text.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "tensorblob.h"

namespace {

std::string examples() {
  const char *e = std::getenv("TBLOB_EXAMPLES");
  return e ? e : "";
}

std::string read_file(const std::string &path) {
  std::string o;
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) return o;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) o.append(buf, n);
  std::fclose(f);
  return o;
}

void write_file(const std::string &path, const std::string &bytes) {
  FILE *f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
}

struct SpecialFiles : ::testing::Test {
  std::string dir;
  std::vector<std::string> made;
  void SetUp() override {
    if (examples().empty()) GTEST_SKIP() << "TBLOB_EXAMPLES not set";
    const char *base = std::getenv("TMPDIR");
    std::string t = std::string(base && *base ? base : "/tmp") + "/special-XXXXXX";
    std::vector<char> buf(t.begin(), t.end());
    buf.push_back('\0');
    ASSERT_NE(::mkdtemp(buf.data()), nullptr);
    dir = buf.data();
  }
  void TearDown() override {
    for (auto it = made.rbegin(); it != made.rend(); ++it) ::remove(it->c_str());
    if (!dir.empty()) ::rmdir(dir.c_str());
  }
  std::string fifo(const std::string &name) {
    const std::string p = dir + "/" + name;
    EXPECT_EQ(::mkfifo(p.c_str(), 0600), 0) << p;
    made.push_back(p);
    return p;
  }
  std::string subdir(const std::string &name) {
    const std::string p = dir + "/" + name;
    EXPECT_EQ(::mkdir(p.c_str(), 0700), 0) << p;
    made.push_back(p);
    return p;
  }
  std::string symlink_to(const std::string &target, const std::string &name) {
    const std::string p = dir + "/" + name;
    EXPECT_EQ(::symlink(target.c_str(), p.c_str()), 0) << p;
    made.push_back(p);
    return p;
  }
  std::string copy(const std::string &from, const std::string &name) {
    const std::string p = dir + "/" + name;
    write_file(p, read_file(from));
    made.push_back(p);
    return p;
  }
  // A sharded checkpoint in dir whose first shard is real and whose second is made by `second`.
  void sharded_with_second(const std::function<void(const std::string &)> &second) {
    const std::string src = examples() + "/sharded/";
    copy(src + "model.safetensors.index.json", "model.safetensors.index.json");
    copy(src + "model-00001-of-00002.safetensors", "model-00001-of-00002.safetensors");
    second("model-00002-of-00002.safetensors");
  }
};

// Opens path in both modes: the status and that the message names `kind`, not an errno text.
void expect_refused(const std::string &path, tblob_status want, const char *kind) {
  for (uint32_t mode : {static_cast<uint32_t>(TBLOB_OPEN_MAP), static_cast<uint32_t>(TBLOB_OPEN_READ)}) {
    tblob_open_options o = TBLOB_OPEN_OPTIONS_INIT;
    o.mode = mode;
    tblob_model *m = nullptr;
    tblob_diag d = TBLOB_DIAG_INIT;
    EXPECT_EQ(tblob_model_open(path.c_str(), &o, &m, &d), want) << path << ": " << d.message;
    EXPECT_EQ(m, nullptr);
    EXPECT_NE(std::strstr(d.message, kind), nullptr) << "message: " << d.message;
    EXPECT_EQ(std::strstr(d.message, "No such file"), nullptr) << "stale errno: " << d.message;
    EXPECT_EQ(std::strstr(d.message, "Success"), nullptr) << "stale errno: " << d.message;
    tblob_model_close(m);
  }
}

TEST_F(SpecialFiles, SinglePathFifo) {
  expect_refused(fifo("model.safetensors"), TBLOB_E_IO, "is a FIFO");
}

TEST_F(SpecialFiles, SinglePathCharacterDevice) {
  expect_refused("/dev/zero", TBLOB_E_IO, "is a character device");
  expect_refused(symlink_to("/dev/null", "model.safetensors"), TBLOB_E_IO, "is a character device");
}

TEST_F(SpecialFiles, SinglePathDirectoryWithoutIndex) {
  expect_refused(subdir("empty"), TBLOB_E_UNKNOWN_FORMAT, "directory");
}

TEST_F(SpecialFiles, ShardIsFifo) {
  sharded_with_second([&](const std::string &n) { fifo(n); });
  expect_refused(dir, TBLOB_E_IO, "model-00002-of-00002.safetensors is a FIFO");
  expect_refused(dir + "/model.safetensors.index.json", TBLOB_E_IO, "is a FIFO");
}

TEST_F(SpecialFiles, ShardIsDirectory) {
  sharded_with_second([&](const std::string &n) { subdir(n); });
  expect_refused(dir, TBLOB_E_IO, "model-00002-of-00002.safetensors is a directory");
}

TEST_F(SpecialFiles, ShardIsDevice) {
  sharded_with_second([&](const std::string &n) { symlink_to("/dev/zero", n); });
  expect_refused(dir, TBLOB_E_IO, "is a character device");
}

TEST_F(SpecialFiles, IndexIsFifoInsideDirectory) {
  fifo("model.safetensors.index.json");
  // The directory holds no readable index: said at once, not waited for.
  expect_refused(dir, TBLOB_E_UNKNOWN_FORMAT, "model.safetensors.index.json");
}

// The same checkpoint with real shards opens: the refusals above are about the special files.
TEST_F(SpecialFiles, ControlRealShardsOpen) {
  sharded_with_second([&](const std::string &n) {
    copy(examples() + "/sharded/" + n, n);
  });
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(tblob_model_open(dir.c_str(), nullptr, &m, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(tblob_model_file_count(m), 2u);
  tblob_model_close(m);
}

}  // namespace
