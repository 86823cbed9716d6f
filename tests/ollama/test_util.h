// Shared helpers of the Ollama tests: temporary directories, a sentinel tree outside the
// store that must never change, and small wrappers over the C API.
#pragma once
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "../common/temp_tree.h"
#include "store_writer.h"
#include "tensorblob.h"

namespace tt {

inline std::string temp_dir(const char *tag) { return make_temp_dir(std::string("ollama-") + tag + "-"); }

// Every path under root with size and mtime: a snapshot to compare.
inline std::string tree(const std::string &root) {
  std::string out;
  std::vector<std::string> stack{root};
  std::vector<std::string> all;
  while (!stack.empty()) {
    std::string p = stack.back();
    stack.pop_back();
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0) continue;
    all.push_back(p + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
                  std::to_string(st.st_mtim.tv_nsec) + " " + std::to_string(st.st_mode));
    if (S_ISDIR(st.st_mode))
      if (DIR *d = ::opendir(p.c_str())) {
        while (struct dirent *e = ::readdir(d))
          if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) stack.push_back(p + "/" + e->d_name);
        ::closedir(d);
      }
  }
  std::sort(all.begin(), all.end());
  for (auto &s : all) out += s + "\n";
  return out;
}

struct Fixture : ::testing::Test {
  std::string dir, root, outside;
  void SetUp() override {
    dir = temp_dir("t");
    root = dir + "/store";
    outside = dir + "/outside";
    tw::mkdirs(outside + "/blobs");
    tw::write_file(outside + "/secret", "do not touch");
    tw::write_file(outside + "/blobs/sha256-" + std::string(64, 'a'), "not in the store");
  }
  void TearDown() override {
    rm_rf(dir);
  }
  std::string outside_snapshot() const { return tree(outside); }

  tblob_store *open_store(tblob_status *st = nullptr) {
    tblob_store *s = nullptr;
    tblob_diag d = TBLOB_DIAG_INIT;
    tblob_status r = tblob_store_open(root.c_str(), nullptr, &s, &d);
    if (st) *st = r;
    EXPECT_TRUE(st || r == TBLOB_OK) << d.message;
    return s;
  }
  tblob_status open_model(const char *name, tblob_model **m, tblob_diag *d, const char *component = nullptr) {
    tblob_store *s = open_store();
    if (!s) return TBLOB_E_IO;
    tblob_store_open_options o = TBLOB_STORE_OPEN_OPTIONS_INIT;
    o.component = component;
    o.component_len = component ? std::strlen(component) : 0;
    tblob_status r = tblob_store_open_model(s, name, std::strlen(name), &o, m, d);
    tblob_store_close(s);  // the model does not need the store
    return r;
  }
  tblob_status verify(const char *name, tblob_diag *d, tblob_verify_summary *sum = nullptr, uint32_t threads = 0) {
    tblob_store *s = open_store();
    if (!s) return TBLOB_E_IO;
    tblob_verify_options o = TBLOB_VERIFY_OPTIONS_INIT;
    o.threads = threads;
    tblob_status r = tblob_store_verify(s, name, name ? std::strlen(name) : 0, &o, sum, d);
    tblob_store_close(s);
    return r;
  }
};

inline std::vector<std::string> tensor_names(const tblob_model *m) {
  std::vector<std::string> v;
  for (uint64_t i = 0; i < tblob_model_tensor_count(m); ++i) {
    tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
    if (tblob_tensor_at(m, i, &t, nullptr) == TBLOB_OK) v.emplace_back(t.name, t.name_len);
  }
  std::sort(v.begin(), v.end());
  return v;
}

inline std::string tensor_bytes(const tblob_model *m, const std::string &name) {
  uint64_t idx;
  if (tblob_tensor_find(m, name.data(), name.size(), &idx, nullptr) != TBLOB_OK) return "<missing>";
  const void *p;
  uint64_t n;
  if (tblob_tensor_data(m, idx, &p, &n, nullptr) != TBLOB_OK) return "<error>";
  return std::string(static_cast<const char *>(p), n);
}

}  // namespace tt
