// Import (`ollama create` for safetensors directories), de-duplication, re-runs, gc, and
// tblob_model_open on store paths.
#include <fcntl.h>

#include "test_util.h"

namespace {

using tw::T;

std::string examples() {
  const char *e = std::getenv("TBLOB_EXAMPLES");
  return e ? e : "examples";
}

struct Import : tt::Fixture {
  tblob_status import(const char *name, const std::string &src, tblob_import_result *res, tblob_diag *d,
                      uint32_t flags = 0, const tblob_import_options *given = nullptr) {
    tblob_store_options so = TBLOB_STORE_OPTIONS_INIT;
    so.flags = TBLOB_STORE_CREATE;
    tblob_store *s = nullptr;
    tblob_status r = tblob_store_open(root.c_str(), &so, &s, d);
    if (r != TBLOB_OK) return r;
    tblob_import_options o = TBLOB_IMPORT_OPTIONS_INIT;
    o.flags = flags;
    r = tblob_store_import(s, name, std::strlen(name), src.c_str(), given ? given : &o, res, d);
    tblob_store_close(s);
    return r;
  }
  // A source directory holding the tiny-llama example's weights: its path.
  std::string tiny_source() {
    const std::string src = dir + "/src";
    tw::mkdirs(src);
    tw::write_file(src + "/model.safetensors", tw::read_file(examples() + "/tiny-llama/model.safetensors"));
    return src;
  }
  std::vector<std::string> blob_files() {
    std::vector<std::string> v;
    if (DIR *d = ::opendir((root + "/blobs").c_str())) {
      while (struct dirent *e = ::readdir(d))
        if (e->d_name[0] != '.' || std::strlen(e->d_name) > 2) v.push_back(e->d_name);
      ::closedir(d);
    }
    v.erase(std::remove(v.begin(), v.end(), std::string("..")), v.end());
    std::sort(v.begin(), v.end());
    return v;
  }
};

TEST_F(Import, TinyLlamaRoundTripRerunAndDedup) {
  const std::string src = dir + "/src";
  tw::mkdirs(src);
  const std::string st_bytes = tw::read_file(examples() + "/tiny-llama/model.safetensors");
  ASSERT_FALSE(st_bytes.empty());
  tw::write_file(src + "/model.safetensors", st_bytes);
  tw::write_file(src + "/config.json", "{\"model_type\":\"llama\",\"architectures\":[\"LlamaForCausalLM\"]}");
  tw::write_file(src + "/tokenizer_config.json", "{}");
  tblob_import_result res = TBLOB_IMPORT_RESULT_INIT;
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(import("tiny", src, &res, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(res.tensors, 21u);
  EXPECT_EQ(res.layers, 23u);  // 21 tensors + 2 JSON files
  EXPECT_EQ(res.blobs_written, 24u);
  EXPECT_EQ(res.manifest_written, 1u);
  // Every tensor reads back byte-identical to the source.
  tblob_model *src_m = nullptr, *m = nullptr;
  ASSERT_EQ(tblob_model_open((src + "/model.safetensors").c_str(), nullptr, &src_m, &d), TBLOB_OK);
  ASSERT_EQ(open_model("tiny", &m, &d), TBLOB_OK) << d.message;
  ASSERT_EQ(tt::tensor_names(m), tt::tensor_names(src_m));
  for (const std::string &n : tt::tensor_names(src_m)) EXPECT_EQ(tt::tensor_bytes(m, n), tt::tensor_bytes(src_m, n)) << n;
  // Each blob is a Go-writer blob: header padded to 8 with spaces, no __metadata__.
  const char *fp;
  size_t fl;
  ASSERT_EQ(tblob_model_file_path(m, 0, &fp, &fl, nullptr), TBLOB_OK);
  const std::string blob = tw::read_file(std::string(fp, fl));
  uint64_t hl = 0;
  for (int i = 0; i < 8; ++i) hl |= uint64_t(static_cast<unsigned char>(blob[i])) << (8 * i);
  EXPECT_EQ(hl % 8, 0u);
  EXPECT_EQ(blob.find("__metadata__"), std::string::npos);
  tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
  ASSERT_EQ(tblob_tensor_at(m, 0, &t, nullptr), TBLOB_OK);
  EXPECT_EQ(blob.substr(8, hl), tw::go_header({T{std::string(t.name, t.name_len), tblob_dtype_name(t.dtype),
                                                 std::vector<uint64_t>(t.shape, t.shape + t.rank),
                                                 std::string(t.data_length, '\0')}}));
  tblob_model_close(m);
  tblob_model_close(src_m);
  EXPECT_EQ(verify("tiny", &d), TBLOB_OK) << d.message;
  // The manifest is Go's json.Encoder output: compact, one trailing newline, layer order
  // tensors by name then JSON files by file name; the config carries the family.
  const std::string man = tw::read_file(root + "/manifests/registry.ollama.ai/library/tiny/latest");
  EXPECT_EQ(man.back(), '\n');
  EXPECT_EQ(man.find('\n'), man.size() - 1);
  EXPECT_LT(man.find("\"name\":\"lm_head.weight\""), man.find("\"name\":\"model.embed_tokens.weight\""));
  EXPECT_LT(man.find("\"name\":\"config.json\""), man.find("\"name\":\"tokenizer_config.json\""));
  // Re-running changes nothing.
  const std::string snap = tt::tree(root);
  res = TBLOB_IMPORT_RESULT_INIT;
  ASSERT_EQ(import("tiny", src, &res, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(res.blobs_written, 0u);
  EXPECT_EQ(res.blobs_reused, 24u);
  EXPECT_EQ(res.manifest_written, 0u);
  EXPECT_EQ(tt::tree(root), snap);
  // A second model with the same tensors shares every blob.
  res = TBLOB_IMPORT_RESULT_INIT;
  ASSERT_EQ(import("me/tiny-copy:v2", src, &res, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(res.blobs_written, 0u);
  EXPECT_EQ(res.manifest_written, 1u);
  // No temporary files are left behind.
  for (const std::string &f : blob_files()) EXPECT_EQ(f.rfind("sha256-", 0), 0u) << f;
  // A corrupt existing blob is replaced (atomically) by the right bytes on re-import.
  const std::string some = root + "/blobs/" + blob_files()[0];
  std::string b = tw::read_file(some);
  b[0] ^= 1;
  tw::write_file(some, b);
  EXPECT_NE(verify(nullptr, &d), TBLOB_OK);
  res = TBLOB_IMPORT_RESULT_INIT;
  ASSERT_EQ(import("tiny", src, &res, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(res.blobs_written, 1u);
  EXPECT_EQ(verify(nullptr, &d), TBLOB_OK) << d.message;
}

// Progress: one call before the first blob, one after each tensor blob, counts that only grow
// and end at the totals; totals taken from the source independently. Non-zero cancels before
// the manifest; the next import reuses what was written.
struct ProgressLog {
  std::vector<tblob_import_progress> calls;
  size_t cancel_at = SIZE_MAX;  // return non-zero on this call
};

int log_progress(void *user, const tblob_import_progress *p) {
  ProgressLog *log = static_cast<ProgressLog *>(user);
  log->calls.push_back(*p);
  return log->calls.size() - 1 == log->cancel_at ? 1 : 0;
}

TEST_F(Import, ProgressAndCancel) {
  const std::string src = tiny_source();
  tw::write_file(src + "/config.json", "{\"model_type\":\"llama\"}");
  // Totals from the source itself.
  tblob_model *src_m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(tblob_model_open((src + "/model.safetensors").c_str(), nullptr, &src_m, &d), TBLOB_OK) << d.message;
  const uint64_t tensors = tblob_model_tensor_count(src_m);
  uint64_t bytes = 0;
  for (uint64_t i = 0; i < tensors; ++i) {
    tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
    ASSERT_EQ(tblob_tensor_at(src_m, i, &t, nullptr), TBLOB_OK);
    bytes += t.data_length;
  }
  tblob_model_close(src_m);
  ASSERT_GT(tensors, 2u);
  ASSERT_GT(bytes, 0u);

  // Cancelled on the third call (after two blobs): no manifest, two tensor blobs on disk.
  ProgressLog cancel;
  cancel.cancel_at = 2;
  tblob_import_options o = TBLOB_IMPORT_OPTIONS_INIT;
  o.progress = log_progress;
  o.progress_user = &cancel;
  tblob_import_result res = TBLOB_IMPORT_RESULT_INIT;
  EXPECT_EQ(import("tiny", src, &res, &d, 0, &o), TBLOB_E_CANCELLED);
  EXPECT_NE(std::string(d.message).find("cancelled"), std::string::npos) << d.message;
  ASSERT_EQ(cancel.calls.size(), 3u);
  EXPECT_EQ(res.blobs_written, 2u);
  EXPECT_EQ(res.manifest_written, 0u);
  struct stat man_st;
  EXPECT_NE(::stat((root + "/manifests/registry.ollama.ai/library/tiny/latest").c_str(), &man_st), 0);
  EXPECT_EQ(blob_files().size(), 2u);

  // The full run: calls grow to the totals and the two blobs are reused.
  ProgressLog log;
  o.progress_user = &log;
  res = TBLOB_IMPORT_RESULT_INIT;
  ASSERT_EQ(import("tiny", src, &res, &d, 0, &o), TBLOB_OK) << d.message;
  EXPECT_EQ(res.blobs_reused, 2u);
  ASSERT_EQ(log.calls.size(), tensors + 1);  // tiny-llama has no expert groups: one blob per tensor
  EXPECT_EQ(log.calls.front().tensors_done, 0u);
  EXPECT_EQ(log.calls.front().bytes_done, 0u);
  for (size_t i = 0; i < log.calls.size(); ++i) {
    const tblob_import_progress &p = log.calls[i];
    EXPECT_EQ(p.struct_size, sizeof(tblob_import_progress));
    EXPECT_EQ(p.tensors_total, tensors);
    EXPECT_EQ(p.bytes_total, bytes);
    if (i) {
      EXPECT_EQ(p.tensors_done, log.calls[i - 1].tensors_done + 1);
      EXPECT_GE(p.bytes_done, log.calls[i - 1].bytes_done);
    }
  }
  EXPECT_EQ(log.calls.back().tensors_done, tensors);
  EXPECT_EQ(log.calls.back().bytes_done, bytes);
  EXPECT_EQ(verify("tiny", &d), TBLOB_OK) << d.message;

  // A blob removed while the import runs (what a concurrent `gc --remove` would do to a blob
  // whose manifest is not written yet): the import fails before the manifest, naming it, and
  // the next run writes it again.
  struct Remover {
    std::string root;
    std::vector<std::string> removed;
  } rm{root, {}};
  tblob_import_options ro = TBLOB_IMPORT_OPTIONS_INIT;
  ro.progress = [](void *u, const tblob_import_progress *p) {
    Remover *r = static_cast<Remover *>(u);
    if (p->tensors_done == p->tensors_total && r->removed.empty()) {  // after the last tensor blob
      if (DIR *d = ::opendir((r->root + "/blobs").c_str())) {
        while (const dirent *e = ::readdir(d))
          if (std::strncmp(e->d_name, "sha256-", 7) == 0 && r->removed.size() < 1) r->removed.push_back(e->d_name);
        ::closedir(d);
      }
      for (const std::string &f : r->removed) ::unlink((r->root + "/blobs/" + f).c_str());
    }
    return 0;
  };
  ro.progress_user = &rm;
  res = TBLOB_IMPORT_RESULT_INIT;
  EXPECT_EQ(import("again", src, &res, &d, 0, &ro), TBLOB_E_OLLAMA_BLOB_MISSING);
  ASSERT_EQ(rm.removed.size(), 1u);
  EXPECT_NE(std::string(d.message).find(rm.removed[0]), std::string::npos) << d.message;
  EXPECT_NE(::stat((root + "/manifests/registry.ollama.ai/library/again/latest").c_str(), &man_st), 0);
  res = TBLOB_IMPORT_RESULT_INIT;
  ASSERT_EQ(import("again", src, &res, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(res.blobs_written, 1u);
  EXPECT_EQ(verify("again", &d), TBLOB_OK) << d.message;

  // Options from before the progress fields (struct_size without them): accepted, no calls.
  ProgressLog old_log;
  o.progress_user = &old_log;
  o.struct_size = offsetof(tblob_import_options, progress);
  res = TBLOB_IMPORT_RESULT_INIT;
  ASSERT_EQ(import("tiny", src, &res, &d, 0, &o), TBLOB_OK) << d.message;
  EXPECT_TRUE(old_log.calls.empty());
}

TEST_F(Import, ExpertGroupsAndComponents) {
  const std::string src = dir + "/moe";
  tw::mkdirs(src);
  std::vector<T> ts;
  for (int e = 0; e < 3; ++e)
    for (const char *p : {"gate_proj", "up_proj", "down_proj"})
      ts.push_back(T{"model.layers.0.mlp.experts." + std::to_string(e) + "." + p + ".weight", "BF16", {2, 4},
                     tw::pattern(16, e * 10 + p[0])});
  ts.push_back(T{"model.layers.0.mlp.shared_experts.up_proj.weight", "BF16", {2, 4}, tw::pattern(16, 99)});
  ts.push_back(T{"model.layers.0.mlp.gate.weight", "BF16", {3, 4}, tw::pattern(24, 98)});
  ts.push_back(T{"model.norm.weight", "F32", {4}, tw::pattern(16, 97)});
  tw::write_file(src + "/model.safetensors", tw::go_blob(ts));
  // An image-generation style component directory with its own config.
  tw::mkdirs(src + "/vae");
  tw::write_file(src + "/vae/diffusion_pytorch_model.safetensors", tw::go_blob({T{"decoder.w", "F32", {2}, tw::pattern(8, 5)}}));
  tw::write_file(src + "/vae/config.json", "{\"latent\":4}");
  tblob_import_result res = TBLOB_IMPORT_RESULT_INIT;
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(import("moe", src, &res, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(res.tensors, 13u);
  // layers: 2 non-expert + vae/decoder.w, 2 groups, 1 json = 6
  EXPECT_EQ(res.layers, 6u);
  tblob_store *s = open_store();
  tblob_manifest *man = nullptr;
  ASSERT_EQ(tblob_store_manifest_open(s, "moe", 3, &man, &d), TBLOB_OK);
  std::vector<std::string> names;
  for (uint64_t i = 0; i < tblob_manifest_layer_count(man); ++i) {
    tblob_layer_info li = TBLOB_LAYER_INFO_INIT;
    ASSERT_EQ(tblob_manifest_layer_at(man, i, &li, &d), TBLOB_OK);
    names.emplace_back(li.name, li.name_len);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"model.layers.0.mlp.gate.weight", "model.norm.weight", "vae/decoder.w",
                                             "model.layers.0.mlp.experts", "model.layers.0.mlp.shared_experts",
                                             "vae/config.json"}));
  tblob_manifest_close(man);
  tblob_store_close(s);
  tblob_model *m = nullptr;
  ASSERT_EQ(open_model("moe", &m, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(tblob_model_tensor_count(m), 13u);
  EXPECT_EQ(tblob_model_file_count(m), 5u);
  EXPECT_EQ(tt::tensor_bytes(m, "model.layers.0.mlp.experts.2.up_proj.weight"), tw::pattern(16, 20 + 'u'));
  EXPECT_EQ(tt::tensor_bytes(m, "vae/decoder.w"), tw::pattern(8, 5));
  tblob_model_close(m);
  ASSERT_EQ(open_model("moe", &m, &d, "vae"), TBLOB_OK) << d.message;
  EXPECT_EQ(tt::tensor_names(m), (std::vector<std::string>{"vae/decoder.w"}));
  tblob_model_close(m);
}

TEST_F(Import, BadSources) {
  tblob_diag d = TBLOB_DIAG_INIT;
  tw::mkdirs(dir + "/empty");
  EXPECT_EQ(import("x", dir + "/empty", nullptr, &d), TBLOB_E_OLLAMA_IMPORT_SOURCE);
  EXPECT_EQ(import("x", dir + "/absent", nullptr, &d), TBLOB_E_NOT_FOUND);
  EXPECT_EQ(import("../x", dir + "/empty", nullptr, &d), TBLOB_E_OLLAMA_NAME);
  tw::mkdirs(dir + "/two");
  tw::write_file(dir + "/two/a.safetensors", tw::go_blob({T{"w", "F32", {1}, tw::pattern(4, 1)}}));
  tw::write_file(dir + "/two/b.safetensors", tw::go_blob({T{"w", "F32", {1}, tw::pattern(4, 2)}}));
  EXPECT_EQ(import("x", dir + "/two", nullptr, &d), TBLOB_E_OLLAMA_IMPORT_SOURCE);
  tw::mkdirs(dir + "/badjson");
  tw::write_file(dir + "/badjson/a.safetensors", tw::go_blob({T{"w", "F32", {1}, tw::pattern(4, 1)}}));
  tw::write_file(dir + "/badjson/config.json", "{");
  EXPECT_EQ(import("x", dir + "/badjson", nullptr, &d), TBLOB_E_OLLAMA_IMPORT_SOURCE);
  tw::mkdirs(dir + "/badst");
  tw::write_file(dir + "/badst/a.safetensors", "xx");
  EXPECT_EQ(import("x", dir + "/badst", nullptr, &d), TBLOB_E_HEADER_TOO_SMALL);
  // Nothing was written for failed imports.
  struct stat sb;
  EXPECT_NE(::stat((root + "/manifests/registry.ollama.ai/library/x").c_str(), &sb), 0);
}

TEST_F(Import, ManifestAboveStoreLimitIsRefusedBeforeWriting) {
  const std::string src = dir + "/src";
  tw::mkdirs(src);
  // 40 tensors with 200-byte names: each layer's entry is over 300 bytes, so about 13 KB.
  std::vector<T> ts;
  for (int i = 0; i < 40; ++i) ts.push_back(T{std::string(200, 'a') + std::to_string(i), "F32", {1}, tw::pattern(4, i)});
  tw::write_file(src + "/model.safetensors", tw::go_blob(ts));
  tblob_store_options so = TBLOB_STORE_OPTIONS_INIT;
  so.flags = TBLOB_STORE_CREATE;
  so.max_manifest_bytes = 8192;
  tblob_store *s = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(tblob_store_open(root.c_str(), &so, &s, &d), TBLOB_OK) << d.message;
  tblob_import_result res = TBLOB_IMPORT_RESULT_INIT;
  EXPECT_EQ(tblob_store_import(s, "long", 4, src.c_str(), nullptr, &res, &d), TBLOB_E_OLLAMA_LIMIT_MANIFEST);
  EXPECT_NE(std::string(d.message).find("8192"), std::string::npos) << d.message;
  EXPECT_EQ(res.manifest_written, 0u);
  struct stat sb;
  EXPECT_NE(::lstat((root + "/manifests/registry.ollama.ai/library/long/latest").c_str(), &sb), 0);
  // The store stays usable: gc still runs (it would refuse the store over an oversized manifest).
  tblob_gc_result r = TBLOB_GC_RESULT_INIT;
  EXPECT_EQ(tblob_store_gc(s, nullptr, &r, &d), TBLOB_OK) << d.message;
  tblob_store_close(s);
}

TEST_F(Import, GcListsThenRemovesOnlyUnreferenced) {
  const std::string src = tiny_source();
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(import("tiny", src, nullptr, &d), TBLOB_OK) << d.message;
  tw::Store st(root);
  st.blob("orphan bytes");                                               // unreferenced
  tw::write_file(root + "/blobs/sha256-" + std::string(64, 'f') + "-partial", "p");  // partial
  tw::write_file(root + "/blobs/.tblob-tmp-x", "t");                     // temp
  tw::write_file(root + "/blobs/README", "not a blob");                 // unknown: never touched
  ASSERT_EQ(::symlink("/etc/hostname", (root + "/blobs/sha256-" + std::string(64, '1')).c_str()), 0);
  const size_t files_before = blob_files().size();
  tblob_store *s = open_store();
  std::vector<std::string> listed;
  tblob_gc_options o = TBLOB_GC_OPTIONS_INIT;
  o.min_age_seconds = 0;
  o.on_entry = [](void *u, const tblob_gc_entry *e) {
    static_cast<std::vector<std::string> *>(u)->emplace_back(e->file_name, e->file_name_len);
    return 0;
  };
  o.user = &listed;
  tblob_gc_result r = TBLOB_GC_RESULT_INIT;
  ASSERT_EQ(tblob_store_gc(s, &o, &r, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(listed.size(), 3u);
  EXPECT_EQ(r.removed_files, 0u);
  EXPECT_EQ(blob_files().size(), files_before);  // dry run
  listed.clear();
  o.flags = TBLOB_GC_REMOVE;
  ASSERT_EQ(tblob_store_gc(s, &o, &r, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(r.removed_files, 3u);
  EXPECT_EQ(blob_files().size(), files_before - 3);
  EXPECT_EQ(verify(nullptr, &d), TBLOB_OK) << d.message;  // nothing referenced was removed
  struct stat sb;
  EXPECT_EQ(::lstat((root + "/blobs/README").c_str(), &sb), 0);
  EXPECT_EQ(::lstat((root + "/blobs/sha256-" + std::string(64, '1')).c_str(), &sb), 0);
  // Young temp files are left alone by default.
  tw::write_file(root + "/blobs/.tblob-tmp-y", "t");
  tblob_gc_options def = TBLOB_GC_OPTIONS_INIT;
  def.flags = TBLOB_GC_REMOVE;
  ASSERT_EQ(tblob_store_gc(s, &def, &r, &d), TBLOB_OK);
  EXPECT_EQ(::lstat((root + "/blobs/.tblob-tmp-y").c_str(), &sb), 0);
  // A corrupt manifest stops gc before anything is removed.
  st.manifest_raw("broken", "{\"schemaVersion\":2");
  st.blob("another orphan");
  EXPECT_EQ(tblob_store_gc(s, &o, &r, &d), TBLOB_E_OLLAMA_CORRUPT_STORE);
  EXPECT_NE(std::string(d.message).find("broken"), std::string::npos) << d.message;
  tblob_store_close(s);
}

TEST_F(Import, GcFindsTemporaryManifestsLeftByAKilledImport) {
  const std::string src = tiny_source();
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(import("tiny", src, nullptr, &d), TBLOB_OK) << d.message;
  const std::string mdir = root + "/manifests/registry.ollama.ai/library/tiny";
  const std::string stale = mdir + "/.tblob-tmp-latest-12345";
  tw::write_file(stale, "{\"schemaVersion\":2");  // cut short by the kill
  ASSERT_EQ(::symlink((outside + "/secret").c_str(), (mdir + "/.tblob-tmp-link-1").c_str()), 0);
  const std::string before = outside_snapshot();
  tblob_store *s = open_store();
  std::vector<std::string> listed;
  tblob_gc_options o = TBLOB_GC_OPTIONS_INIT;
  o.on_entry = [](void *u, const tblob_gc_entry *e) {
    static_cast<std::vector<std::string> *>(u)->emplace_back(e->file_name, e->file_name_len);
    return 0;
  };
  o.user = &listed;
  o.flags = TBLOB_GC_REMOVE;
  tblob_gc_result r = TBLOB_GC_RESULT_INIT;
  // A young temporary manifest may be an import in progress: left alone by default.
  ASSERT_EQ(tblob_store_gc(s, &o, &r, &d), TBLOB_OK) << d.message;
  EXPECT_TRUE(listed.empty());
  struct stat sb;
  EXPECT_EQ(::lstat(stale.c_str(), &sb), 0);
  o.flags = 0;
  o.min_age_seconds = 0;
  ASSERT_EQ(tblob_store_gc(s, &o, &r, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(listed, std::vector<std::string>{"manifests/registry.ollama.ai/library/tiny/.tblob-tmp-latest-12345"});
  EXPECT_EQ(::lstat(stale.c_str(), &sb), 0);  // dry run
  listed.clear();
  o.flags = TBLOB_GC_REMOVE;
  ASSERT_EQ(tblob_store_gc(s, &o, &r, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(listed.size(), 1u);
  EXPECT_EQ(r.removed_files, 1u);
  EXPECT_NE(::lstat(stale.c_str(), &sb), 0);
  EXPECT_EQ(::lstat((mdir + "/.tblob-tmp-link-1").c_str(), &sb), 0);  // symlinks are never touched
  EXPECT_EQ(outside_snapshot(), before);
  EXPECT_EQ(verify("tiny", &d), TBLOB_OK) << d.message;
  tblob_store_close(s);
}

// A file system's clock can run a second ahead of time()'s coarse one, so a temporary file
// written a moment ago may carry a timestamp past gc's "now". With min_age_seconds 0 gc still
// takes every temporary (docs/ollama.md); with a positive age such a file counts as young.
TEST_F(Import, GcWithNoMinimumAgeTakesTemporariesStampedInTheFuture) {
  const std::string src = tiny_source();
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(import("tiny", src, nullptr, &d), TBLOB_OK) << d.message;
  const std::string blob_tmp = root + "/blobs/.tblob-tmp-ahead";
  const std::string manifest_tmp = root + "/manifests/registry.ollama.ai/library/tiny/.tblob-tmp-latest-1";
  const struct timespec ahead[2] = {{::time(nullptr) + 5, 0}, {::time(nullptr) + 5, 0}};
  for (const std::string &f : {blob_tmp, manifest_tmp}) {
    tw::write_file(f, "t");
    ASSERT_EQ(::utimensat(AT_FDCWD, f.c_str(), ahead, 0), 0) << f;
  }
  tblob_store *s = open_store();
  tblob_gc_options o = TBLOB_GC_OPTIONS_INIT;
  o.flags = TBLOB_GC_REMOVE;
  o.min_age_seconds = 60;
  tblob_gc_result r = TBLOB_GC_RESULT_INIT;
  ASSERT_EQ(tblob_store_gc(s, &o, &r, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(r.removed_files, 0u);
  struct stat sb;
  EXPECT_EQ(::lstat(blob_tmp.c_str(), &sb), 0);
  EXPECT_EQ(::lstat(manifest_tmp.c_str(), &sb), 0);
  o.min_age_seconds = 0;
  ASSERT_EQ(tblob_store_gc(s, &o, &r, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(r.removed_files, 2u);
  EXPECT_NE(::lstat(blob_tmp.c_str(), &sb), 0);
  EXPECT_NE(::lstat(manifest_tmp.c_str(), &sb), 0);
  EXPECT_EQ(verify("tiny", &d), TBLOB_OK) << d.message;
  tblob_store_close(s);
}

TEST_F(Import, OpenPathOnStorePaths) {
  const std::string src = tiny_source();
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(import("tiny", src, nullptr, &d), TBLOB_OK) << d.message;
  tblob_model *m = nullptr;
  // The store root with one model.
  ASSERT_EQ(tblob_model_open(root.c_str(), nullptr, &m, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(tblob_model_format(m), (uint32_t)TBLOB_FORMAT_OLLAMA);
  EXPECT_EQ(tblob_model_tensor_count(m), 21u);
  tblob_model_close(m);
  // <root>/<name>[:tag]
  for (const char *n : {"/tiny", "/tiny:latest", "/library/tiny", "/registry.ollama.ai/library/tiny:latest"}) {
    ASSERT_EQ(tblob_model_open((root + n).c_str(), nullptr, &m, &d), TBLOB_OK) << n << ": " << d.message;
    tblob_model_close(m);
  }
  EXPECT_EQ(tblob_model_open((root + "/tiny:v9").c_str(), nullptr, &m, &d), TBLOB_E_OLLAMA_MODEL_NOT_FOUND);
  EXPECT_EQ(tblob_model_open((root + "/..x").c_str(), nullptr, &m, &d), TBLOB_E_OLLAMA_NAME);
  // The manifest file itself.
  ASSERT_EQ(tblob_model_open((root + "/manifests/registry.ollama.ai/library/tiny/latest").c_str(), nullptr, &m, &d),
            TBLOB_OK)
      << d.message;
  EXPECT_EQ(tblob_model_tensor_count(m), 21u);
  tblob_model_close(m);
  // A manifest copied out of its store says where its blobs would be.
  tw::write_file(dir + "/loose-manifest", tw::read_file(root + "/manifests/registry.ollama.ai/library/tiny/latest"));
  EXPECT_EQ(tblob_model_open((dir + "/loose-manifest").c_str(), nullptr, &m, &d), TBLOB_E_OLLAMA_NOT_A_STORE);
  // Two models: the root alone is ambiguous.
  ASSERT_EQ(import("tiny:two", src, nullptr, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(tblob_model_open(root.c_str(), nullptr, &m, &d), TBLOB_E_OLLAMA_MODEL_REQUIRED);
  EXPECT_EQ(m, nullptr);
}

}  // namespace
