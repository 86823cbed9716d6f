// A path writer killed with SIGKILL before each of its file-system calls in turn, and failing
// (EIO) at each of them in turn (tests/ollama/kill_points.c counts the calls), until it runs
// through: the final name holds its old content, or, once finish returned, the whole new file.
// A failed call also leaves no temporary file (a kill cannot remove one; the name starts with
// .tblob-tmp-, which tblob_store_gc and users recognise).
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tensorblob.h"

extern "C" {
extern long tb_kill_at;
extern long tb_fail_at;
extern long tb_kill_calls;
}

namespace {

std::string read_file(const std::string &p) {
  std::string s;
  if (FILE *f = std::fopen(p.c_str(), "rb")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) s.append(buf, n);
    std::fclose(f);
  }
  return s;
}

void write_file(const std::string &p, const std::string &s) {
  FILE *f = std::fopen(p.c_str(), "wb");
  ASSERT_TRUE(f);
  std::fwrite(s.data(), 1, s.size(), f);
  std::fclose(f);
}

std::vector<std::string> temps(const std::string &d) {
  std::vector<std::string> out;
  if (DIR *dd = ::opendir(d.c_str())) {
    while (dirent *e = ::readdir(dd))
      if (std::strncmp(e->d_name, ".tblob-tmp-", 11) == 0) out.push_back(e->d_name);
    ::closedir(dd);
  }
  return out;
}

void remove_temps(const std::string &d) {
  for (const std::string &t : temps(d)) ::unlink((d + "/" + t).c_str());
}

// Three tensors written in pieces: several write calls, then fsync and rename.
tblob_status write_model(const std::string &path) {
  tblob_gguf_writer *w = nullptr;
  tblob_status st = tblob_gguf_writer_open(path.c_str(), nullptr, &w, nullptr);
  if (st != TBLOB_OK) return st;
  const tblob_gguf_value arch{TBLOB_META_STRING, 0, "llama", 5};
  st = tblob_gguf_writer_add_value(w, "general.architecture", 20, &arch, nullptr);
  const uint64_t shape[] = {4, 8};
  const char *names[] = {"a", "b", "c"};
  for (int t = 0; t < 3 && st == TBLOB_OK; ++t)
    st = tblob_gguf_writer_add_tensor(w, names[t], 1, shape, 2, 0, nullptr, nullptr);
  std::vector<float> data(32);
  for (int t = 0; t < 3 && st == TBLOB_OK; ++t) {
    for (int i = 0; i < 32; ++i) data[i] = static_cast<float>(t * 100 + i);
    st = tblob_gguf_writer_write(w, t, data.data(), 64, nullptr);
    if (st == TBLOB_OK) st = tblob_gguf_writer_write(w, t, data.data() + 16, 64, nullptr);
  }
  if (st == TBLOB_OK) st = tblob_gguf_writer_finish(w, nullptr, nullptr);
  tblob_gguf_writer_close(w);
  return st;
}

struct Dir {
  std::string path;
  Dir() {
    const char *t = std::getenv("TMPDIR");
    std::string tmpl = std::string(t ? t : "/tmp") + "/gguf_kill_XXXXXX";
    std::vector<char> b(tmpl.begin(), tmpl.end());
    b.push_back('\0');
    if (!::mkdtemp(b.data())) std::abort();
    path = b.data();
  }
};

TEST(GgufWriterKill, KilledAtEveryStepLeavesTheOldFileOrTheWholeNewOne) {
  Dir d;
  const std::string out = d.path + "/model.gguf", ref = d.path + "/ref.gguf";
  ASSERT_EQ(write_model(ref), TBLOB_OK);
  const std::string whole = read_file(ref);
  ASSERT_GT(whole.size(), 0u);
  long kills = 0;
  bool completed = false;
  for (long k = 1; k < 1000 && !completed; ++k) {
    SCOPED_TRACE("killed before file-system call " + std::to_string(k));
    write_file(out, "OLD");
    remove_temps(d.path);
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      tb_kill_calls = 0;
      tb_kill_at = k;
      ::_exit(write_model(out) == TBLOB_OK ? 0 : 1);
    }
    int ws = 0;
    ASSERT_EQ(::waitpid(pid, &ws, 0), pid);
    if (WIFEXITED(ws)) {
      ASSERT_EQ(WEXITSTATUS(ws), 0) << "the unkilled writer failed";
      completed = true;
      EXPECT_EQ(read_file(out), whole);
      EXPECT_TRUE(temps(d.path).empty());
    } else {
      ASSERT_TRUE(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL) << ws;
      ++kills;
      const std::string now = read_file(out);
      // Killed before the rename: the old file. Killed at the directory fsync after it (the
      // last step): the new one, whole.
      EXPECT_TRUE(now == "OLD" || now == whole) << now.size();
    }
  }
  EXPECT_TRUE(completed);
  // open, 3 x (2 data + 1 padding) writes + the header's writes, fsync, rename, dir fsync.
  EXPECT_GE(kills, 10);
  std::printf("writer killed at %ld file-system calls in turn\n", kills);
}

TEST(GgufWriterKill, FailingAtEveryStepLeavesTheOldFileAndNoTemporary) {
  Dir d;
  const std::string out = d.path + "/model.gguf", ref = d.path + "/ref.gguf";
  ASSERT_EQ(write_model(ref), TBLOB_OK);
  const std::string whole = read_file(ref);
  long failures = 0;
  bool completed = false;
  for (long k = 1; k < 1000 && !completed; ++k) {
    SCOPED_TRACE("failing file-system call " + std::to_string(k));
    write_file(out, "OLD");
    remove_temps(d.path);
    tb_kill_calls = 0;
    tb_fail_at = k;
    const tblob_status st = write_model(out);
    const long calls = tb_kill_calls;
    tb_fail_at = 0;
    if (calls < k) {  // no call failed: it ran through
      ASSERT_EQ(st, TBLOB_OK);
      completed = true;
      EXPECT_EQ(read_file(out), whole);
      continue;
    }
    ++failures;
    const std::string now = read_file(out);
    if (st == TBLOB_OK) {
      // Only the directory fsync after the rename may fail without failing the write.
      EXPECT_EQ(now, whole);
    } else {
      EXPECT_EQ(now, "OLD");
      // The temporary file is removed, unless removing it was the call that failed (the last).
      EXPECT_TRUE(temps(d.path).empty() || calls == k) << temps(d.path).front();
    }
  }
  EXPECT_TRUE(completed);
  EXPECT_GE(failures, 10);
}

}  // namespace
