// Store safety under faults.
// 1. An import killed with SIGKILL before each of its file-system calls in turn (kill_points.c
//    counts them; the loop runs until an import completes unkilled): afterwards verify accepts
//    the whole store (so no manifest names a missing, partial or wrong blob), gc --remove
//    cleans what the kill left (no temporary file remains, verify still accepts), and the
//    import run again completes with the source's tensors.
// 2. gc --remove never removes or follows anything outside the store root: symlinks in blobs/
//    and manifests/ pointing outside, a hard link to an outside file, and a manifest whose
//    digest climbs out with "..", against a sentinel tree outside that must not change.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>

#include <functional>

#include "test_util.h"

extern "C" {
extern long tb_kill_at;
extern long tb_kill_calls;
}

namespace {

using tw::T;

std::string examples() {
  const char *e = std::getenv("TBLOB_EXAMPLES");
  return e ? e : "examples";
}

// Every path under root whose last component starts with ".tblob-tmp-" or is an Ollama temp
// blob name ("sha256-" + digits).
void temp_files(const std::string &p, std::vector<std::string> *out) {
  struct stat st;
  if (::lstat(p.c_str(), &st) != 0) return;
  const std::string base = p.substr(p.rfind('/') + 1);
  if (base.rfind(".tblob-tmp-", 0) == 0) out->push_back(p);
  if (!S_ISDIR(st.st_mode)) return;
  if (DIR *d = ::opendir(p.c_str())) {
    while (struct dirent *e = ::readdir(d))
      if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) temp_files(p + "/" + e->d_name, out);
    ::closedir(d);
  }
}

struct StoreSafety : tt::Fixture {
  tblob_status import(const char *name, const std::string &src, tblob_diag *d) {
    tblob_store_options so = TBLOB_STORE_OPTIONS_INIT;
    so.flags = TBLOB_STORE_CREATE;
    tblob_store *s = nullptr;
    tblob_status r = tblob_store_open(root.c_str(), &so, &s, d);
    if (r != TBLOB_OK) return r;
    r = tblob_store_import(s, name, std::strlen(name), src.c_str(), nullptr, nullptr, d);
    tblob_store_close(s);
    return r;
  }
  tblob_status gc(uint32_t flags, std::vector<std::string> *listed, tblob_diag *d) {
    tblob_store *s = open_store();
    if (!s) return TBLOB_E_IO;
    tblob_gc_options o = TBLOB_GC_OPTIONS_INIT;
    o.flags = flags;
    o.min_age_seconds = 0;
    o.on_entry = [](void *u, const tblob_gc_entry *e) {
      static_cast<std::vector<std::string> *>(u)->emplace_back(e->file_name, e->file_name_len);
      return 0;
    };
    o.user = listed;
    tblob_gc_result r = TBLOB_GC_RESULT_INIT;
    const tblob_status st = tblob_store_gc(s, &o, &r, d);
    tblob_store_close(s);
    return st;
  }
  bool manifest_exists(const char *model) {
    struct stat st;
    return ::lstat((root + "/manifests/registry.ollama.ai/library/" + model + "/latest").c_str(), &st) == 0;
  }
};

TEST_F(StoreSafety, ImportKilledAtEveryStepLeavesAStoreVerifyAcceptsAndGcCleans) {
  const std::string src = dir + "/src", other = dir + "/other";
  tw::mkdirs(src);
  tw::mkdirs(other);
  const std::string st_bytes = tw::read_file(examples() + "/tiny-llama/model.safetensors");
  ASSERT_FALSE(st_bytes.empty());
  tw::write_file(src + "/model.safetensors", st_bytes);
  tw::write_file(src + "/config.json", "{\"model_type\":\"llama\",\"architectures\":[\"LlamaForCausalLM\"]}");
  tw::write_file(src + "/tokenizer_config.json", "{}");
  // A model already in the store, sharing nothing with the one being imported.
  tw::write_file(other + "/model.safetensors",
                 tw::go_blob({T{"only", "F32", {4}, tw::pattern(16, 7)}}));
  tblob_model *src_m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(tblob_model_open((src + "/model.safetensors").c_str(), nullptr, &src_m, &d), TBLOB_OK) << d.message;
  const std::vector<std::string> names = tt::tensor_names(src_m);

  long kills = 0, kills_after_manifest = 0;
  bool completed = false;
  for (long k = 1; k < 20000 && !completed; ++k) {
    SCOPED_TRACE("killed before file-system call " + std::to_string(k));
    tt::rm_rf(root);
    ASSERT_EQ(import("other", other, &d), TBLOB_OK) << d.message;
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      tb_kill_calls = 0;
      tb_kill_at = k;
      tblob_diag cd = TBLOB_DIAG_INIT;
      ::_exit(import("tiny", src, &cd) == TBLOB_OK ? 0 : 1);
    }
    int ws = 0;
    ASSERT_EQ(::waitpid(pid, &ws, 0), pid);
    if (WIFEXITED(ws)) {
      ASSERT_EQ(WEXITSTATUS(ws), 0) << "the unkilled import failed";
      completed = true;
    } else {
      ASSERT_TRUE(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL) << ws;
      ++kills;
    }
    const bool have_tiny = manifest_exists("tiny");
    kills_after_manifest += !completed && have_tiny;
    // Whatever the kill left, every manifest names complete, correct blobs.
    tblob_verify_summary sum = TBLOB_VERIFY_SUMMARY_INIT;
    ASSERT_EQ(verify(nullptr, &d, &sum, 1), TBLOB_OK) << d.message;
    EXPECT_EQ(sum.manifests, have_tiny ? 2u : 1u);
    EXPECT_EQ(sum.manifests_bad, 0u);
    if (have_tiny) {
      tblob_model *m = nullptr;
      ASSERT_EQ(open_model("tiny", &m, &d), TBLOB_OK) << d.message;
      EXPECT_EQ(tt::tensor_names(m), names);
      tblob_model_close(m);
    }
    // gc cleans up after the kill: afterwards no temporary file anywhere, nothing to list,
    // both models still verify.
    std::vector<std::string> listed, left;
    ASSERT_EQ(gc(TBLOB_GC_REMOVE, &listed, &d), TBLOB_OK) << d.message;
    temp_files(root, &left);
    EXPECT_TRUE(left.empty()) << left.front();
    listed.clear();
    ASSERT_EQ(gc(0, &listed, &d), TBLOB_OK) << d.message;
    EXPECT_TRUE(listed.empty()) << listed.front();
    ASSERT_EQ(verify(nullptr, &d, &sum, 1), TBLOB_OK) << d.message;
    EXPECT_EQ(sum.manifests, have_tiny ? 2u : 1u);
    // And the import run again completes, with every source tensor byte-identical.
    if (!completed) {
      ASSERT_EQ(import("tiny", src, &d), TBLOB_OK) << d.message;
      tblob_model *m = nullptr;
      ASSERT_EQ(open_model("tiny", &m, &d), TBLOB_OK) << d.message;
      for (const std::string &n : names) EXPECT_EQ(tt::tensor_bytes(m, n), tt::tensor_bytes(src_m, n)) << n;
      tblob_model_close(m);
      ASSERT_EQ(verify(nullptr, &d, &sum, 1), TBLOB_OK) << d.message;
    }
    if (HasFatalFailure()) break;
  }
  tblob_model_close(src_m);
  std::printf("import killed at %ld file-system calls in turn (%ld after its manifest was in place)\n", kills,
              kills_after_manifest);
  EXPECT_TRUE(completed);
  // 24 blobs of several calls each, then the manifest: far more than 50 kill points, and the
  // last ones (the directory sync after the manifest's rename) leave the manifest in place.
  EXPECT_GT(kills, 50);
  EXPECT_GE(kills_after_manifest, 1);
}

TEST_F(StoreSafety, GcRemoveNeverTouchesAnythingOutsideTheRoot) {
  const std::string src = dir + "/src";
  tw::mkdirs(src);
  tw::write_file(src + "/model.safetensors", tw::go_blob({T{"w", "F32", {4}, tw::pattern(16, 3)}}));
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(import("m", src, &d), TBLOB_OK) << d.message;
  const std::string hex_a(64, 'a'), hex_b(64, 'b'), hex_c(64, 'c');
  // Outside files named as what gc removes.
  tw::mkdirs(outside + "/tmpdir");
  tw::write_file(outside + "/tmpdir/.tblob-tmp-latest-1", "outside temp manifest");
  tw::write_file(outside + "/sha256-" + hex_c, "outside blob");
  tw::write_file(outside + "/hard", "hard-linked from blobs/");
  const std::string blobs = root + "/blobs/";
  // blobs/: symlinks named as an unreferenced blob, a partial download, our temp file and
  // Ollama's, each pointing outside; a symlinked directory; a hard link to an outside file.
  ASSERT_EQ(::symlink((outside + "/secret").c_str(), (blobs + "sha256-" + hex_a).c_str()), 0);
  ASSERT_EQ(::symlink((outside + "/secret").c_str(), (blobs + "sha256-" + hex_b + "-partial").c_str()), 0);
  ASSERT_EQ(::symlink((outside + "/secret").c_str(), (blobs + ".tblob-tmp-x-1-1").c_str()), 0);
  ASSERT_EQ(::symlink((outside + "/secret").c_str(), (blobs + "sha256-123456").c_str()), 0);
  ASSERT_EQ(::symlink((outside + "/blobs").c_str(), (blobs + "sha256-" + hex_c + "-partial-0").c_str()), 0);
  ASSERT_EQ(::link((outside + "/hard").c_str(), (blobs + "sha256-" + std::string(64, 'd')).c_str()), 0);
  // manifests/: a temp-named symlink to an outside file inside the model's directory.
  const std::string mdir = root + "/manifests/registry.ollama.ai/library/m";
  ASSERT_EQ(::symlink((outside + "/tmpdir/.tblob-tmp-latest-1").c_str(), (mdir + "/.tblob-tmp-latest-2").c_str()), 0);
  const std::string before = outside_snapshot();

  std::vector<std::string> listed;
  ASSERT_EQ(gc(TBLOB_GC_REMOVE, &listed, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(outside_snapshot(), before);
  EXPECT_EQ(tw::read_file(outside + "/hard"), "hard-linked from blobs/");
  EXPECT_EQ(tw::read_file(outside + "/secret"), "do not touch");
  struct stat sb;
  // Symlinks are left alone (never followed, never removed); only the hard link's name in
  // blobs/, an unreferenced regular file of the store, is listed and removed.
  for (const std::string &l : {blobs + "sha256-" + hex_a, blobs + "sha256-" + hex_b + "-partial",
                               blobs + ".tblob-tmp-x-1-1", blobs + "sha256-123456",
                               blobs + "sha256-" + hex_c + "-partial-0", mdir + "/.tblob-tmp-latest-2"})
    EXPECT_EQ(::lstat(l.c_str(), &sb), 0) << l;
  EXPECT_EQ(listed, std::vector<std::string>{"sha256-" + std::string(64, 'd')});
  EXPECT_EQ(verify("m", &d), TBLOB_OK) << d.message;

  // A manifest whose layer digest climbs out of blobs/ with "..": the store cannot be read
  // whole, so gc refuses and removes nothing at all.
  tw::Store st(root);
  tw::Layer evil;
  evil.digest = "sha256:../../outside/secret";
  evil.size = 12;
  st.manifest_raw("evil", tw::Store::manifest_json(st.config(), {evil}));
  const std::string orphan = blobs + "sha256-" + tw::sha256_hex("orphan");
  tw::write_file(orphan, "orphan");
  listed.clear();
  EXPECT_EQ(gc(TBLOB_GC_REMOVE, &listed, &d), TBLOB_E_OLLAMA_CORRUPT_STORE) << d.message;
  EXPECT_TRUE(listed.empty());
  EXPECT_EQ(::lstat(orphan.c_str(), &sb), 0);
  EXPECT_EQ(outside_snapshot(), before);
  tblob_model *m = nullptr;
  EXPECT_EQ(open_model("evil", &m, &d), TBLOB_E_OLLAMA_DIGEST) << d.message;
}

}  // namespace
