// Threads: what docs/api.md ("Writing a binding", "Threads") promises, run at once and checked
// against the same calls made on one thread beforehand. Built for TSan in CI
// (scripts/sanitize.sh); in a plain build it still checks that concurrent results are equal.
//
// Covered statements:
//  - a model is immutable after open: many threads list (tblob_tensors_at, tblob_tensor_at),
//    look up, take views, read metadata and dequantize one shared model at once, while other
//    threads open and close their own models of the same files;
//  - a store is shared the same way: tblob_store_list, tblob_store_open_model,
//    tblob_store_manifest_open and tblob_store_verify at once on one handle (verify also with
//    its own worker threads);
//  - a manifest is shared: tblob_manifest_layer_at and tblob_store_read_layer at once;
//  - verifiers and SLM1 writers: one per thread, each used by one thread at a time;
//  - callbacks run on the calling thread (list entries, verify results and progress);
//  - tblob_kernel_set is process-wide and may change while other threads dequantize: every
//    call then uses one whole set, and every set gives the same bits.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tensorblob.h"

#if THREADS_HAVE_OLLAMA
#include "../ollama/store_writer.h"
#include "../ollama/test_util.h"
#endif

namespace {

const std::string kRoot = THREADS_SOURCE_ROOT;

constexpr int kWorkers = 4;
constexpr int kRounds = 3;

void put_u64(std::string *o, uint64_t v) { o->append(reinterpret_cast<const char *>(&v), sizeof(v)); }
void put_str(std::string *o, const char *p, size_t n) {
  put_u64(o, n);
  if (n) o->append(p, n);
}

// Everything a caller can learn from a model, as one byte string: two snapshots are equal when
// every call returned the same status and the same bytes.
std::string snapshot(const tblob_model *m, bool with_paths = true) {
  std::string o;
  const uint64_t n = tblob_model_tensor_count(m);
  put_u64(&o, tblob_model_format(m));
  put_u64(&o, n);
  const uint32_t files = tblob_model_file_count(m);
  put_u64(&o, files);
  for (uint32_t f = 0; f < files; ++f) {
    const char *p = nullptr;
    size_t pl = 0;
    put_u64(&o, static_cast<uint64_t>(tblob_model_file_path(m, f, &p, &pl, nullptr)));
    if (with_paths) put_str(&o, p, pl);
  }
  std::vector<tblob_tensor_info> infos(n);
  put_u64(&o, static_cast<uint64_t>(tblob_tensors_at(m, 0, n, infos.data(), sizeof(tblob_tensor_info), nullptr)));
  for (uint64_t i = 0; i < n; ++i) {
    const tblob_tensor_info &t = infos[i];
    tblob_tensor_info one = TBLOB_TENSOR_INFO_INIT;
    put_u64(&o, static_cast<uint64_t>(tblob_tensor_at(m, i, &one, nullptr)));
    // The one-call table and the per-tensor call describe the same tensor.
    put_u64(&o, one.name == t.name && one.shape == t.shape && one.data_offset == t.data_offset &&
                    one.logical_shape == t.logical_shape && one.quant_scheme == t.quant_scheme);
    put_str(&o, t.name, t.name_len);
    put_u64(&o, t.dtype);
    put_u64(&o, t.rank);
    for (uint32_t r = 0; r < t.rank; ++r) put_u64(&o, t.shape[r]);
    put_u64(&o, t.file_index);
    put_u64(&o, t.data_offset);
    put_u64(&o, t.data_length);
    put_u64(&o, t.file_offset);
    put_u64(&o, t.element_count);
    put_u64(&o, t.logical_rank);
    for (uint32_t r = 0; r < t.logical_rank; ++r) put_u64(&o, t.logical_shape[r]);
    put_u64(&o, t.quant_scheme);
    put_u64(&o, t.quant_flags);

    uint64_t found = ~0ull;
    put_u64(&o, static_cast<uint64_t>(tblob_tensor_find(m, t.name, t.name_len, &found, nullptr)));
    put_u64(&o, found);

    const void *data = nullptr;
    uint64_t len = 0;
    put_u64(&o, static_cast<uint64_t>(tblob_tensor_data(m, i, &data, &len, nullptr)));
    put_str(&o, static_cast<const char *>(data), static_cast<size_t>(len));

    tblob_quant_info qi = TBLOB_QUANT_INFO_INIT;
    put_u64(&o, static_cast<uint64_t>(tblob_tensor_quant_info(m, i, &qi, nullptr)));
    put_u64(&o, qi.scheme);
    put_u64(&o, static_cast<uint64_t>(qi.status));
    put_u64(&o, qi.rows);
    put_u64(&o, qi.cols);

    for (uint32_t dt : {static_cast<uint32_t>(TBLOB_DTYPE_F32), static_cast<uint32_t>(TBLOB_DTYPE_BF16)}) {
      uint64_t bytes = 0;
      const tblob_status s = tblob_tensor_dequant_size(m, i, dt, 0, TBLOB_ALL_ROWS, &bytes, nullptr);
      put_u64(&o, static_cast<uint64_t>(s));
      if (s != TBLOB_OK) continue;
      std::string out(static_cast<size_t>(bytes), '\0');
      put_u64(&o, static_cast<uint64_t>(
                      tblob_tensor_dequantize(m, i, dt, 0, TBLOB_ALL_ROWS, &out[0], out.size(), nullptr)));
      o += out;
      if (qi.rows > 1) {  // a row range too: the kernels start mid-tensor
        uint64_t part = 0;
        put_u64(&o, static_cast<uint64_t>(tblob_tensor_dequant_size(m, i, dt, 1, qi.rows, &part, nullptr)));
        std::string p(static_cast<size_t>(part), '\0');
        put_u64(&o, static_cast<uint64_t>(tblob_tensor_dequantize(m, i, dt, 1, qi.rows, &p[0], p.size(), nullptr)));
        o += p;
      }
    }
  }
  const uint64_t meta = tblob_metadata_count(m);
  put_u64(&o, meta);
  for (uint64_t i = 0; i < meta; ++i) {
    const char *k = nullptr, *v = nullptr;
    size_t kl = 0, vl = 0;
    put_u64(&o, static_cast<uint64_t>(tblob_metadata_at(m, i, &k, &kl, &v, &vl, nullptr)));
    put_str(&o, k, kl);
    put_str(&o, v, vl);
    const char *v2 = nullptr;
    size_t vl2 = 0;
    put_u64(&o, static_cast<uint64_t>(tblob_metadata_find(m, k, kl, &v2, &vl2, nullptr)));
    put_str(&o, v2, vl2);
  }
  return o;
}

std::string open_and_snapshot(const std::string &path) {
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  const tblob_status s = tblob_model_open(path.c_str(), nullptr, &m, &d);
  if (s != TBLOB_OK) return std::string("open failed: ") + tblob_status_name(s) + ": " + d.message;
  std::string o = snapshot(m);
  tblob_model_close(m);
  return o;
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

// Raw GGML blocks (tests/data/ggml): type id, blocks, element count.
struct GgmlCase {
  uint32_t type;
  std::string blocks;
  uint64_t elements;
};

std::vector<GgmlCase> ggml_cases() {
  std::vector<GgmlCase> v;
  FILE *f = std::fopen((kRoot + "/tests/data/ggml/MANIFEST").c_str(), "r");
  if (!f) return v;
  char line[256];
  while (std::fgets(line, sizeof(line), f)) {
    unsigned type = 0;
    char name[32];
    unsigned long long blocks = 0, elements = 0;
    if (line[0] == '#' || std::sscanf(line, "%u %31s %llu %llu", &type, name, &blocks, &elements) != 4) continue;
    v.push_back({type, read_file(kRoot + "/tests/data/ggml/" + name + ".blocks"), elements});
  }
  std::fclose(f);
  return v;
}

std::string ggml_snapshot(const std::vector<GgmlCase> &cases) {
  std::string o;
  for (const GgmlCase &c : cases) {
    std::string out(static_cast<size_t>(c.elements * 4), '\0');
    put_u64(&o, static_cast<uint64_t>(tblob_ggml_dequantize(c.type, c.blocks.data(), c.blocks.size(), c.elements,
                                                            TBLOB_DTYPE_F32, &out[0], out.size(), nullptr)));
    o += out;
  }
  return o;
}

#if THREADS_HAVE_OLLAMA
uint16_t bf16_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return static_cast<uint16_t>(b >> 16);  // the values below are exact in bf16
}

std::string bf16_values(size_t n, unsigned seed) {
  std::string o;
  for (size_t i = 0; i < n; ++i) {
    const uint16_t h = bf16_of(static_cast<float>(static_cast<int>((i * 7 + seed) % 13) - 6) / 64.0f);
    o.push_back(static_cast<char>(h & 0xff));
    o.push_back(static_cast<char>(h >> 8));
  }
  return o;
}

std::string f32_values(size_t n, unsigned seed) {
  std::string o;
  for (size_t i = 0; i < n; ++i) {
    const float f = static_cast<float>(static_cast<int>((i * 5 + seed) % 17) - 8) / 8.0f;
    o.append(reinterpret_cast<const char *>(&f), 4);
  }
  return o;
}

// A store with a quantized model (MLX affine int4 g64, wide enough for the SIMD kernels, and
// nvfp4) and a plain one, written as Ollama writes them.
void build_store(const std::string &root) {
  using tw::T;
  tw::Store st(root);
  std::vector<tw::Layer> q;
  // int4 g64: [32 rows, 512 cols] = 64 u32 words per row; scale/bias [32, 8] BF16.
  std::vector<T> w = {T{"model.layers.0.mlp.up_proj.weight", "U32", {32, 64}, tw::pattern(32 * 64 * 4, 3)},
                      T{"model.layers.0.mlp.up_proj.weight.scale", "BF16", {32, 8}, bf16_values(256, 1)},
                      T{"model.layers.0.mlp.up_proj.weight.bias", "BF16", {32, 8}, bf16_values(256, 2)}};
  q.push_back(st.blob(tw::mlx_blob(w, {{"quant_type", "int4"}, {"group_size", "64"}}, {1, 0, 2}),
                      "model.layers.0.mlp.up_proj.weight"));
  // nvfp4 [16 rows, 64 cols]: 8 u32 words per row, one E4M3 scale per 16 (0x38 = 1.0).
  std::vector<T> nv = {T{"a.weight", "U32", {16, 8}, tw::pattern(16 * 8 * 4, 6)},
                       T{"a.weight.scale", "U8", {16, 4}, std::string(64, '\x38')}};
  q.push_back(st.blob(tw::mlx_blob(nv, {{"a.weight.quant_type", "nvfp4"}, {"a.weight.group_size", "16"}}),
                      "a.weight"));
  std::vector<T> norm = {T{"model.norm.weight", "F32", {256}, f32_values(256, 4)}};
  q.push_back(st.blob(tw::go_blob(norm), "model.norm.weight"));
  st.manifest("quant", q);

  std::vector<tw::Layer> p;
  std::vector<T> e = {T{"model.embed_tokens.weight", "BF16", {64, 32}, bf16_values(64 * 32, 5)}};
  p.push_back(st.blob(tw::go_blob(e), "model.embed_tokens.weight"));
  p.push_back(st.blob(tw::go_blob(norm), "model.norm.weight"));  // the same blob as in "quant"
  st.manifest("plain", p, "v1");
}

// Set when a callback runs on a thread other than the caller's (docs/api.md: never).
std::atomic<bool> g_callback_off_thread{false};

struct ListCtx {
  std::string out;
  std::thread::id caller;
};

int on_entry(void *user, const tblob_store_entry *e) {
  ListCtx *c = static_cast<ListCtx *>(user);
  if (std::this_thread::get_id() != c->caller) g_callback_off_thread = true;
  put_u64(&c->out, static_cast<uint64_t>(e->status));
  put_str(&c->out, e->name, e->name_len);
  put_str(&c->out, e->short_name, e->short_name_len);
  put_str(&c->out, e->manifest_id, e->manifest_id_len);
  put_u64(&c->out, e->manifest_bytes);
  put_u64(&c->out, e->total_bytes);
  put_u64(&c->out, e->layer_count);
  put_u64(&c->out, e->tensor_layer_count);
  return 0;
}

struct VerifyCtx {
  std::vector<std::string> results;  // sorted afterwards: worker threads finish in any order
  std::thread::id caller;
};

int on_blob(void *user, const tblob_blob_result *r) {
  VerifyCtx *c = static_cast<VerifyCtx *>(user);
  if (std::this_thread::get_id() != c->caller) g_callback_off_thread = true;
  std::string o;
  put_u64(&o, static_cast<uint64_t>(r->status));
  put_str(&o, r->digest, r->digest_len);
  put_str(&o, r->actual_digest, r->actual_digest_len);
  put_u64(&o, r->expected_size);
  put_u64(&o, r->actual_size);
  c->results.push_back(o);
  return 0;
}

int on_progress(void *user, const tblob_verify_progress *) {
  VerifyCtx *c = static_cast<VerifyCtx *>(user);
  if (std::this_thread::get_id() != c->caller) g_callback_off_thread = true;
  return 0;
}

// Every layer of a shared manifest, with its blob bytes.
std::string manifest_snapshot(const tblob_store *s, const tblob_manifest *m) {
  std::string o;
  const uint64_t n = tblob_manifest_layer_count(m);
  put_u64(&o, n);
  for (uint64_t i = 0; i <= n; ++i) {
    const uint64_t idx = i == n ? TBLOB_LAYER_CONFIG_INDEX : i;
    tblob_layer_info li = TBLOB_LAYER_INFO_INIT;
    put_u64(&o, static_cast<uint64_t>(tblob_manifest_layer_at(m, idx, &li, nullptr)));
    put_u64(&o, li.kind);
    put_str(&o, li.media_type, li.media_type_len);
    put_str(&o, li.digest, li.digest_len);
    put_u64(&o, li.size);
    put_str(&o, li.name, li.name_len);
    size_t need = 0;
    put_u64(&o, static_cast<uint64_t>(tblob_store_read_layer(s, m, idx, nullptr, 0, &need, nullptr)));
    std::string buf(need, '\0');
    size_t got = 0;
    put_u64(&o, static_cast<uint64_t>(tblob_store_read_layer(s, m, idx, need ? &buf[0] : nullptr, need, &got, nullptr)));
    put_u64(&o, got);
    o += buf;
  }
  return o;
}

// Everything the shared store answers: the list, each model opened from it, verification.
std::string store_snapshot(const tblob_store *s) {
  std::string o;
  ListCtx lc;
  lc.caller = std::this_thread::get_id();
  put_u64(&o, static_cast<uint64_t>(tblob_store_list(s, on_entry, &lc, nullptr)));
  o += lc.out;
  for (const char *name : {"quant", "plain:v1", "registry.ollama.ai/library/quant:latest", "missing"}) {
    tblob_model *m = nullptr;
    const tblob_status st = tblob_store_open_model(s, name, std::strlen(name), nullptr, &m, nullptr);
    put_u64(&o, static_cast<uint64_t>(st));
    if (st == TBLOB_OK) o += snapshot(m);
    tblob_model_close(m);
  }
  tblob_manifest *man = nullptr;
  put_u64(&o, static_cast<uint64_t>(tblob_store_manifest_open(s, "plain:v1", 8, &man, nullptr)));
  if (man) o += manifest_snapshot(s, man);
  tblob_manifest_close(man);
  for (uint32_t threads : {1u, 2u}) {
    VerifyCtx vc;
    vc.caller = std::this_thread::get_id();
    tblob_verify_options vo = TBLOB_VERIFY_OPTIONS_INIT;
    vo.threads = threads;
    vo.on_blob = on_blob;
    vo.on_blob_user = &vc;
    vo.progress = on_progress;
    vo.progress_user = &vc;
    tblob_verify_summary sum = TBLOB_VERIFY_SUMMARY_INIT;
    put_u64(&o, static_cast<uint64_t>(tblob_store_verify(s, nullptr, 0, &vo, &sum, nullptr)));
    put_u64(&o, sum.manifests);
    put_u64(&o, sum.manifests_bad);
    put_u64(&o, sum.blobs);
    put_u64(&o, sum.blobs_bad);
    put_u64(&o, sum.bytes_hashed);
    std::sort(vc.results.begin(), vc.results.end());
    for (const std::string &r : vc.results) o += r;
  }
  return o;
}

// One verifier per call, fed in uneven chunks.
std::string verifier_snapshot(const std::string &root, const tblob_manifest *m) {
  std::string o;
  for (uint64_t i = 0; i < tblob_manifest_layer_count(m); ++i) {
    tblob_layer_info li = TBLOB_LAYER_INFO_INIT;
    if (tblob_manifest_layer_at(m, i, &li, nullptr) != TBLOB_OK) continue;
    std::string hex(li.digest + 7, li.digest_len - 7);
    const std::string bytes = read_file(root + "/blobs/sha256-" + hex);
    tblob_verifier *v = nullptr;
    put_u64(&o, static_cast<uint64_t>(tblob_verifier_open(li.digest, li.digest_len, li.size, &v, nullptr)));
    for (size_t at = 0; v && at < bytes.size();) {
      const size_t n = std::min<size_t>(bytes.size() - at, 1 + (at % 97));
      put_u64(&o, static_cast<uint64_t>(tblob_verifier_update(v, bytes.data() + at, n, nullptr)));
      at += n;
    }
    char actual[80] = {0};
    if (v) put_u64(&o, static_cast<uint64_t>(tblob_verifier_final(v, actual, sizeof(actual), nullptr)));
    o += actual;
    tblob_verifier_close(v);
  }
  return o;
}
#endif  // THREADS_HAVE_OLLAMA

#if THREADS_HAVE_SLM1
// One SLM1 writer per call (config parsed, f32 / q8_0 / q4_0 tensors added, written to path),
// then the file reopened and read back through the kernels: the file bytes and the model.
std::string slm1_snapshot(const std::string &path) {
  std::string o;
  static const char kConfig[] =
      "{\"hidden_size\": 8, \"intermediate_size\": 16, \"num_hidden_layers\": 1, "
      "\"num_attention_heads\": 2, \"max_position_embeddings\": 64, \"rope_theta\": 10000.0, "
      "\"rms_norm_eps\": 1e-06}";
  tblob_slm1_writer_options wo = TBLOB_SLM1_WRITER_OPTIONS_INIT;
  put_u64(&o, static_cast<uint64_t>(tblob_slm1_writer_options_from_config(&wo, kConfig, sizeof(kConfig) - 1, nullptr)));
  tblob_slm1_writer *w = nullptr;
  put_u64(&o, static_cast<uint64_t>(tblob_slm1_writer_new(&wo, &w, nullptr)));
  if (!w) return o;
  std::vector<float> v(16 * 64);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>((i * 11) % 23) - 11) / 4.0f;
  const uint64_t s1[1] = {8}, s2[2] = {16, 64};
  put_u64(&o, static_cast<uint64_t>(tblob_slm1_writer_add_f32(w, "norm.weight", 11, s1, 1, v.data(), 8, TBLOB_SLM1_F32, 0, nullptr)));
  put_u64(&o, static_cast<uint64_t>(tblob_slm1_writer_add_f32(w, "q.weight", 8, s2, 2, v.data(), v.size(), TBLOB_SLM1_Q8_0, 0, nullptr)));
  put_u64(&o, static_cast<uint64_t>(tblob_slm1_writer_add_f32(w, "up.weight", 9, s2, 2, v.data(), v.size(), TBLOB_SLM1_Q4_0, 32, nullptr)));
  put_u64(&o, static_cast<uint64_t>(tblob_slm1_writer_finish(w, path.c_str(), nullptr)));
  tblob_slm1_writer_free(w);
  o += read_file(path);
  tblob_model *m = nullptr;
  put_u64(&o, static_cast<uint64_t>(tblob_model_open(path.c_str(), nullptr, &m, nullptr)));
  if (m) o += snapshot(m, false);
  tblob_model_close(m);
  return o;
}
#endif

// The kernel sets this host runs ("scalar" always), found by forcing each.
std::vector<const char *> runnable_kernels() {
  std::vector<const char *> v;
  for (const char *k : {"scalar", "avx2", "avx512", "neon"})
    if (tblob_kernel_set(k, nullptr) == TBLOB_OK) v.push_back(k);
  tblob_kernel_set(nullptr, nullptr);
  return v;
}

TEST(Threads, SharedModelsStoreAndKernelChoice) {
  // Fixtures: a plain safetensors file, a sharded checkpoint (directory and index), quantized
  // companions (mlx-community affine and mxfp4, Ollama combined, HF block FP8).
  const std::vector<std::string> paths = {
      kRoot + "/examples/tiny-llama/model.safetensors",
      kRoot + "/examples/sharded",
      kRoot + "/examples/sharded/model.safetensors.index.json",
      kRoot + "/tests/data/companions/mlx_community/model.safetensors",
      kRoot + "/tests/data/companions/mlx_community_mxfp4/model.safetensors",
      kRoot + "/tests/data/companions/ollama_per_tensor.safetensors",
      kRoot + "/tests/data/companions/hf_fp8/model.safetensors",
  };
  const std::vector<const char *> kernels = runnable_kernels();
  ASSERT_FALSE(kernels.empty());
  ASSERT_EQ(tblob_kernel_set(nullptr, nullptr), TBLOB_OK);

  // Single-threaded answers first, with the automatic kernel choice.
  std::vector<std::string> expected;
  std::vector<tblob_model *> shared;
  for (const std::string &p : paths) {
    tblob_model *m = nullptr;
    tblob_diag d = TBLOB_DIAG_INIT;
    ASSERT_EQ(tblob_model_open(p.c_str(), nullptr, &m, &d), TBLOB_OK) << p << ": " << d.message;
    shared.push_back(m);
    expected.push_back(snapshot(m));
    ASSERT_EQ(open_and_snapshot(p), expected.back()) << p << ": two opens differ";
  }
  // Each fixture dequantizes something (the kernels must run).
  size_t dequantized = 0;
  for (tblob_model *m : shared)
    for (uint64_t i = 0; i < tblob_model_tensor_count(m); ++i) {
      tblob_quant_info qi = TBLOB_QUANT_INFO_INIT;
      if (tblob_tensor_quant_info(m, i, &qi, nullptr) == TBLOB_OK && qi.status == TBLOB_OK &&
          (qi.flags & TBLOB_TENSOR_QUANTIZED))
        ++dequantized;
    }
  EXPECT_GE(dequantized, 4u) << "the fixtures lost their quantized tensors";
  const std::vector<GgmlCase> ggml = ggml_cases();
  ASSERT_FALSE(ggml.empty());
  const std::string ggml_expected = ggml_snapshot(ggml);
  // Every kernel set gives the same bits (what makes changing sets under readers harmless).
  for (const char *k : kernels) {
    ASSERT_EQ(tblob_kernel_set(k, nullptr), TBLOB_OK);
    for (size_t i = 0; i < shared.size(); ++i) EXPECT_EQ(snapshot(shared[i]), expected[i]) << paths[i] << " with " << k;
    EXPECT_EQ(ggml_snapshot(ggml), ggml_expected) << "ggml with " << k;
  }
  ASSERT_EQ(tblob_kernel_set(nullptr, nullptr), TBLOB_OK);

#if THREADS_HAVE_OLLAMA
  const std::string dir = tt::temp_dir("threads");
  ASSERT_FALSE(dir.empty());
  const std::string root = dir + "/store";
  build_store(root);
  tblob_store *store = nullptr;
  tblob_diag sd = TBLOB_DIAG_INIT;
  ASSERT_EQ(tblob_store_open(root.c_str(), nullptr, &store, &sd), TBLOB_OK) << sd.message;
  tblob_manifest *manifest = nullptr;
  ASSERT_EQ(tblob_store_manifest_open(store, "quant", 5, &manifest, &sd), TBLOB_OK) << sd.message;
  const std::string store_expected = store_snapshot(store);
  const std::string manifest_expected = manifest_snapshot(store, manifest);
  const std::string verifier_expected = verifier_snapshot(root, manifest);
  {  // the store answers what the fixture holds (so equality below means something)
    tblob_verify_summary sum = TBLOB_VERIFY_SUMMARY_INIT;
    EXPECT_EQ(tblob_store_verify(store, nullptr, 0, nullptr, &sum, nullptr), TBLOB_OK);
    EXPECT_EQ(sum.manifests, 2u);
    EXPECT_EQ(sum.blobs, 5u);  // one config blob (both identical), 3 tensor blobs + 1 more in "plain"
  }
#endif

#if THREADS_HAVE_SLM1
  std::string slm1_dir = (std::getenv("TMPDIR") && *std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
  slm1_dir += "/threads-slm1-XXXXXX";
  ASSERT_NE(::mkdtemp(&slm1_dir[0]), nullptr);
  const std::string slm1_expected = slm1_snapshot(slm1_dir + "/base.slm");
  ASSERT_GT(slm1_expected.size(), 1024u);
  {  // the writer's file opens and its quantized tensors decode (so equality means something)
    tblob_model *m = nullptr;
    ASSERT_EQ(tblob_model_open((slm1_dir + "/base.slm").c_str(), nullptr, &m, nullptr), TBLOB_OK);
    EXPECT_EQ(tblob_model_tensor_count(m), 3u);
    tblob_model_close(m);
  }
#endif

  // Then everything at once, while one thread keeps forcing and resetting the kernel set.
  // Workers wait, before each round, for the kernel thread to have switched again, so every
  // round runs under a set chosen after the previous round (no timing involved).
  std::atomic<int> running{kWorkers};
  std::atomic<uint64_t> switches{0};
  std::atomic<bool> kernel_error{false};
  std::thread kernel_thread([&] {
    uint64_t i = 0;
    while (running.load() > 0) {
      const char *k = (i % (kernels.size() + 1)) == kernels.size() ? nullptr : kernels[i % (kernels.size() + 1)];
      if (tblob_kernel_set(k, nullptr) != TBLOB_OK) kernel_error = true;
      const char *active = tblob_kernel_active();
      bool known = false;
      for (const char *n : kernels) known = known || std::strcmp(active, n) == 0;
      if (!known) kernel_error = true;
      if (tblob_ggml_kernel_name() == nullptr) kernel_error = true;
      ++i;
      switches.store(i);
      std::this_thread::yield();
    }
  });

  std::mutex mu;
  std::vector<std::string> failures;
  auto fail = [&](const std::string &what) {
    std::lock_guard<std::mutex> g(mu);
    failures.push_back(what);
  };
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      uint64_t seen = 0;
      for (int round = 0; round < kRounds; ++round) {
        while (switches.load() <= seen) std::this_thread::yield();
        seen = switches.load();
        const std::string tag = "worker " + std::to_string(w) + " round " + std::to_string(round) + ": ";
        // Start at a different fixture in each worker so different calls overlap.
        for (size_t j = 0; j < paths.size(); ++j) {
          const size_t i = (j + static_cast<size_t>(w)) % paths.size();
          if (snapshot(shared[i]) != expected[i]) fail(tag + "shared model " + paths[i]);
          if (open_and_snapshot(paths[i]) != expected[i]) fail(tag + "own model " + paths[i]);
        }
        if (ggml_snapshot(ggml) != ggml_expected) fail(tag + "ggml blocks");
#if THREADS_HAVE_SLM1
        const std::string own = slm1_dir + "/w" + std::to_string(w) + ".slm";
        if (slm1_snapshot(own) != slm1_expected) fail(tag + "own SLM1 writer");
        ::unlink(own.c_str());
#endif
#if THREADS_HAVE_OLLAMA
        if (store_snapshot(store) != store_expected) fail(tag + "shared store");
        if (manifest_snapshot(store, manifest) != manifest_expected) fail(tag + "shared manifest");
        if (verifier_snapshot(root, manifest) != verifier_expected) fail(tag + "own verifiers");
#endif
      }
      running.fetch_sub(1);
    });
  }
  for (std::thread &t : workers) t.join();
  kernel_thread.join();
  EXPECT_FALSE(kernel_error.load()) << "tblob_kernel_set or tblob_kernel_active misbehaved under load";
  EXPECT_GE(switches.load(), static_cast<uint64_t>(kRounds));
  for (const std::string &f : failures) ADD_FAILURE() << f << " differs from the single-threaded result";
  EXPECT_EQ(tblob_kernel_set(nullptr, nullptr), TBLOB_OK);

  for (tblob_model *m : shared) tblob_model_close(m);
#if THREADS_HAVE_SLM1
  ::unlink((slm1_dir + "/base.slm").c_str());
  ::rmdir(slm1_dir.c_str());
#endif
#if THREADS_HAVE_OLLAMA
  EXPECT_FALSE(g_callback_off_thread.load()) << "a list or verify callback ran on another thread";
  tblob_manifest_close(manifest);
  tblob_store_close(store);
  tt::rm_rf(dir);
#endif
}

}  // namespace

// A model opened through a byte source and shared: the read function is called from every
// worker at once (docs/api.md "Byte sources"); each worker's tblob_tensor_read and
// dequantization equal the mapped model's.
namespace {
struct SharedBytes {
  std::vector<uint8_t> bytes;
  std::atomic<uint64_t> calls{0};
  std::atomic<int> closes{0};
};
int64_t shared_read(void *user, uint64_t offset, void *dst, size_t len) {
  SharedBytes *s = static_cast<SharedBytes *>(user);
  s->calls.fetch_add(1);
  if (offset > s->bytes.size()) return 0;
  const size_t n = std::min<uint64_t>(len, s->bytes.size() - offset);
  std::memcpy(dst, s->bytes.data() + offset, n);
  return static_cast<int64_t>(n);
}
void shared_close(void *user) { static_cast<SharedBytes *>(user)->closes.fetch_add(1); }
}  // namespace

TEST(Threads, SharedByteSourceModel) {
  for (const std::string &path : {kRoot + "/examples/tiny-llama/model.safetensors",
                                 kRoot + "/tests/data/companions/ollama_per_tensor.safetensors"}) {
    SharedBytes sb;
    FILE *f = std::fopen(path.c_str(), "rb");
    ASSERT_NE(f, nullptr);
    uint8_t buf[65536];
    size_t got;
    while ((got = std::fread(buf, 1, sizeof(buf), f)) > 0) sb.bytes.insert(sb.bytes.end(), buf, buf + got);
    std::fclose(f);
    tblob_model *mapped = nullptr, *src = nullptr;
    ASSERT_EQ(tblob_model_open(path.c_str(), nullptr, &mapped, nullptr), TBLOB_OK);
    tblob_byte_source bs = TBLOB_BYTE_SOURCE_INIT;
    bs.size = sb.bytes.size();
    bs.read = shared_read;
    bs.close = shared_close;
    bs.user = &sb;
    ASSERT_EQ(tblob_model_open_source(&bs, nullptr, &src, nullptr), TBLOB_OK);
    const uint64_t n = tblob_model_tensor_count(src);
    std::atomic<int> bad{0};
    std::vector<std::thread> workers;
    for (int w = 0; w < kWorkers; ++w)
      workers.emplace_back([&] {
        for (int r = 0; r < kRounds; ++r)
          for (uint64_t i = 0; i < n; ++i) {
            const void *view = nullptr;
            uint64_t len = 0;
            if (tblob_tensor_data(mapped, i, &view, &len, nullptr) != TBLOB_OK) ++bad;
            std::vector<uint8_t> b(len);
            if (tblob_tensor_read(src, i, 0, b.data(), b.size(), nullptr) != TBLOB_OK ||
                (len && std::memcmp(b.data(), view, len) != 0))
              ++bad;
            uint64_t need = 0;
            if (tblob_tensor_dequant_size(mapped, i, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, &need, nullptr) != TBLOB_OK)
              continue;
            std::vector<uint8_t> x(need), y(need);
            const tblob_status sx = tblob_tensor_dequantize(src, i, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, x.data(), need, nullptr);
            const tblob_status sy =
                tblob_tensor_dequantize(mapped, i, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, y.data(), need, nullptr);
            if (sx != sy || x != y) ++bad;
          }
      });
    for (std::thread &t : workers) t.join();
    EXPECT_EQ(bad.load(), 0) << path;
    EXPECT_GT(sb.calls.load(), static_cast<uint64_t>(kWorkers * kRounds)) << path;
    tblob_model_close(src);
    tblob_model_close(mapped);
    EXPECT_EQ(sb.closes.load(), 1) << path;
  }
}
