// Multi-threaded dequantization (tblob_tensor_dequantize_opts, tblob_tensors_dequantize):
// the bytes equal the single-thread tblob_tensor_dequantize call's for every tensor of every
// fixture (every scheme the library decodes: MLX affine 2-8 bits, mxfp4, mxfp8, nvfp4, block
// FP8, the plain float types, GGUF/UQFF GGML blocks, SLM1 rows), every row range and thread
// counts 1..5, including more threads than rows (one row per piece); bytes past the output
// are untouched; a batch that fails its checks decodes nothing and reports the job and the
// diag the single call gives. scripts/sanitize.sh runs this under TSan.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tensorblob.h"

namespace {

const std::string kRoot = THREADS_SOURCE_ROOT;

struct Model {
  tblob_model *m = nullptr;
  std::string what;
  std::string buf;  // backing bytes of a memory model
  ~Model() { tblob_model_close(m); }
};

// One safetensors buffer: (name, dtype, shape, bytes) in order, with __metadata__ pairs.
struct Entry {
  std::string name, dtype;
  std::vector<uint64_t> shape;
  std::string bytes;
};

std::string safetensors(const std::vector<Entry> &es, const std::string &meta_json) {
  std::string h = "{\"__metadata__\":" + meta_json;
  uint64_t off = 0;
  std::string data;
  for (const Entry &e : es) {
    h += ",\"" + e.name + "\":{\"dtype\":\"" + e.dtype + "\",\"shape\":[";
    for (size_t i = 0; i < e.shape.size(); ++i) h += (i ? "," : "") + std::to_string(e.shape[i]);
    h += "],\"data_offsets\":[" + std::to_string(off) + "," + std::to_string(off + e.bytes.size()) + "]}";
    off += e.bytes.size();
    data += e.bytes;
  }
  h += "}";
  while (h.size() % 8) h += ' ';
  std::string out(8, '\0');
  const uint64_t n = h.size();
  std::memcpy(&out[0], &n, 8);
  return out + h + data;
}

std::string random_bytes(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(g() & 0xFF);
  return s;
}

// Scales as finite positive floats of the given width (random bits would be NaN often).
std::string scales(size_t count, const char *dtype, uint32_t seed) {
  std::mt19937 g(seed);
  std::string s;
  for (size_t i = 0; i < count; ++i) {
    const float v = 0.001f + static_cast<float>(g() % 1000) / 4096.0f;
    uint32_t b;
    std::memcpy(&b, &v, 4);
    if (std::strcmp(dtype, "F32") == 0) {
      s.append(reinterpret_cast<const char *>(&b), 4);
    } else if (std::strcmp(dtype, "BF16") == 0) {
      const uint16_t h = static_cast<uint16_t>(b >> 16);
      s.append(reinterpret_cast<const char *>(&h), 2);
    } else {  // F16 of a value in [2^-10, 1): exponent and 10 mantissa bits
      const int e = static_cast<int>((b >> 23) & 0xFF) - 127 + 15;
      const uint16_t h = static_cast<uint16_t>((e << 10) | ((b >> 13) & 0x3FF));
      s.append(reinterpret_cast<const char *>(&h), 2);
    }
  }
  return s;
}

// Ollama combined tensors of every width and MX scheme, and plain float tensors, with odd row
// counts (3, 7) so that pieces do not divide evenly.
std::string synthetic_blob() {
  std::vector<Entry> es;
  std::string meta = "{";
  uint32_t seed = 1;
  auto affine = [&](const std::string &n, uint32_t bits, uint32_t group, const char *sdt, uint64_t rows,
                    uint64_t cols) {
    es.push_back({n, "U32", {rows, cols * bits / 32}, random_bytes(rows * cols * bits / 8, seed++)});
    es.push_back({n + ".scale", sdt, {rows, cols / group}, scales(rows * cols / group, sdt, seed++)});
    es.push_back({n + ".bias", sdt, {rows, cols / group}, scales(rows * cols / group, sdt, seed++)});
    meta += (meta.size() > 1 ? "," : "") + std::string("\"") + n + ".quant_type\":\"int" + std::to_string(bits) +
            "\",\"" + n + ".group_size\":\"" + std::to_string(group) + "\"";
  };
  affine("a2", 2, 32, "F16", 7, 128);
  affine("a3", 3, 32, "BF16", 3, 96 * 4);
  affine("a4", 4, 64, "BF16", 7, 256);
  affine("a5", 5, 32, "F32", 3, 64 * 4);
  affine("a6", 6, 64, "F16", 7, 128);
  affine("a8", 8, 32, "BF16", 7, 96);
  auto mx = [&](const std::string &n, const char *qt, uint32_t bits, uint32_t group, uint64_t rows, uint64_t cols,
                bool global) {
    es.push_back({n, "U32", {rows, cols * bits / 32}, random_bytes(rows * cols * bits / 8, seed++)});
    std::string sc = random_bytes(rows * cols / group, seed++);
    for (char &c : sc) c = static_cast<char>((static_cast<unsigned char>(c) % 40) + 100);  // sane exponents
    es.push_back({n + ".scale", "U8", {rows, cols / group}, sc});
    if (global) {
      const float g = 0.75f;
      es.push_back({n + ".global_scale", "F32", {}, std::string(reinterpret_cast<const char *>(&g), 4)});
    }
    meta += std::string(",\"") + n + ".quant_type\":\"" + qt + "\"";
  };
  mx("m4", "mxfp4", 4, 32, 7, 128, false);
  mx("m8", "mxfp8", 8, 32, 3, 256, false);
  mx("n4", "nvfp4", 4, 16, 7, 64, true);
  auto plain = [&](const std::string &n, const char *dt, uint32_t bits, uint64_t rows, uint64_t cols) {
    es.push_back({n, dt, {rows, cols}, random_bytes(rows * cols * bits / 8, seed++)});
  };
  plain("p_e4m3", "F8_E4M3", 8, 7, 40);
  plain("p_e5m2", "F8_E5M2", 8, 3, 33);
  plain("p_f4", "F4", 4, 7, 16);
  plain("p_f16", "F16", 16, 5, 9);
  plain("p_bf16", "BF16", 16, 7, 12);
  plain("p_f32", "F32", 32, 3, 5);
  es.push_back({"p_vec", "BF16", {11}, random_bytes(22, seed++)});
  es.push_back({"p_3d", "F16", {2, 3, 8}, random_bytes(96, seed++)});
  es.push_back({"ints", "I32", {4, 4}, random_bytes(64, seed++)});
  meta += "}";
  return safetensors(es, meta);
}

std::vector<std::string> fixture_paths() {
  const std::string d = kRoot + "/tests/data";
  std::vector<std::string> p = {
      d + "/companions/mlx_community/model.safetensors", d + "/companions/mlx_community_mxfp4/model.safetensors",
      d + "/companions/hf_fp8/model.safetensors",        d + "/companions/hf_fp8_block64/model.safetensors",
      d + "/companions/ollama_per_tensor.safetensors", d + "/companions/ollama_inferred.safetensors",
      d + "/gguf/quant_types.gguf",        d + "/gguf/good_v3.gguf",
      d + "/gguf/small_v2.gguf",           d + "/slm1/tiny_btok.slm",
      d + "/uqff/real/moe/q4k",            kRoot + "/examples/tiny-llama/model.safetensors"};
  for (const char *f : {"afq2", "afq3", "afq4", "afq6", "afq8", "f8q8", "fp8", "hqq4", "hqq8", "mxfp4", "q2k",
                        "q3k", "q4_0", "q4_1", "q4k", "q5_0", "q5_1", "q5k", "q6k", "q8_0", "q8_1", "q8k"})
    p.push_back(d + "/uqff/real/dense/" + f);
  return p;
}

// Every fixture the build can open (parts compiled out are skipped) plus the synthetic blob.
std::vector<Model *> open_all() {
  std::vector<Model *> out;
  for (const std::string &p : fixture_paths()) {
    Model *m = new Model;
    m->what = p;
    tblob_diag d = TBLOB_DIAG_INIT;
    if (tblob_model_open(p.c_str(), nullptr, &m->m, &d) != TBLOB_OK) {
      // Parts compiled out (UQFF, GGUF, SLM1) are skipped; anything else is a broken fixture.
      EXPECT_TRUE(d.status == TBLOB_E_FEATURE_DISABLED || d.status == TBLOB_E_UNKNOWN_FORMAT) << p << ": "
                                                                                            << d.message;
      delete m;
      continue;
    }
    out.push_back(m);
  }
  Model *s = new Model;
  s->what = "synthetic";
  s->buf = synthetic_blob();
  EXPECT_EQ(tblob_model_open_memory(s->buf.data(), s->buf.size(), nullptr, &s->m, nullptr), TBLOB_OK);
  out.push_back(s);
  return out;
}

// Defined first so that it runs first: the process's first dequantization is a parallel one
// (the kernel tables are set up by the call before its workers start) and gives the bytes of
// the single-thread call.
TEST(ParallelDequant, FirstCallOfTheProcess) {
  const std::string buf = synthetic_blob();
  tblob_model *m = nullptr;
  ASSERT_EQ(tblob_model_open_memory(buf.data(), buf.size(), nullptr, &m, nullptr), TBLOB_OK);
  uint64_t a4 = 0, need = 0;
  ASSERT_EQ(tblob_tensor_find(m, "a4", 2, &a4, nullptr), TBLOB_OK);
  ASSERT_EQ(tblob_tensor_dequant_size(m, a4, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, &need, nullptr), TBLOB_OK);
  std::string par(need, '\0'), one(need, '\1');
  tblob_dequant_options o = TBLOB_DEQUANT_OPTIONS_INIT;
  o.threads = 4;
  o.piece_bytes = 1;
  ASSERT_EQ(tblob_tensor_dequantize_opts(m, a4, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, &par[0], need, &o, nullptr), TBLOB_OK);
  ASSERT_EQ(tblob_tensor_dequantize(m, a4, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, &one[0], need, nullptr), TBLOB_OK);
  EXPECT_EQ(par, one);
  tblob_model_close(m);
}

struct Ref {
  uint64_t index;
  uint32_t dtype;
  uint64_t rows, row_bytes;
  std::string bytes;
};

// Single-thread reference of every dequantizable tensor: the rows and bytes per row.
std::vector<Ref> references(const tblob_model *m, const uint32_t *dtypes, size_t ndt) {
  std::vector<Ref> refs;
  const uint64_t n = tblob_model_tensor_count(m);
  for (uint64_t i = 0; i < n; ++i)
    for (size_t k = 0; k < ndt; ++k) {
      uint64_t bytes = 0, one = 0;
      if (tblob_tensor_dequant_size(m, i, dtypes[k], 0, TBLOB_ALL_ROWS, &bytes, nullptr) != TBLOB_OK || !bytes)
        continue;
      EXPECT_EQ(tblob_tensor_dequant_size(m, i, dtypes[k], 0, 1, &one, nullptr), TBLOB_OK);
      Ref r{i, dtypes[k], bytes / one, one, std::string(bytes, '\0')};
      EXPECT_EQ(tblob_tensor_dequantize(m, i, dtypes[k], 0, TBLOB_ALL_ROWS, &r.bytes[0], bytes, nullptr), TBLOB_OK);
      refs.push_back(std::move(r));
    }
  return refs;
}

constexpr unsigned char kFill = 0xA5;
constexpr size_t kTail = 64;

TEST(ParallelDequant, EveryTensorEveryRangeEveryThreadCount) {
  const uint32_t dts[] = {TBLOB_DTYPE_F32, TBLOB_DTYPE_BF16, TBLOB_DTYPE_F16};
  std::vector<Model *> models = open_all();
  ASSERT_GE(models.size(), 2u);
  size_t checked = 0, schemes_seen = 0;
  bool seen[32] = {};
  for (Model *mm : models) {
    SCOPED_TRACE(mm->what);
    const std::vector<Ref> refs = references(mm->m, dts, 3);
    for (const Ref &r : refs) {
      tblob_quant_info qi = TBLOB_QUANT_INFO_INIT;
      if (tblob_tensor_quant_info(mm->m, r.index, &qi, nullptr) == TBLOB_OK && qi.scheme < 32 && !seen[qi.scheme]) {
        seen[qi.scheme] = true;
        ++schemes_seen;
      }
      // Ranges: whole, everything but the ends, one row, the last row, empty.
      std::vector<std::pair<uint64_t, uint64_t>> ranges = {{0, TBLOB_ALL_ROWS}, {r.rows / 2, r.rows / 2 + 1},
                                                           {r.rows - 1, r.rows}, {r.rows / 2, r.rows / 2}};
      if (r.rows > 2) ranges.push_back({1, r.rows - 1});
      for (const auto &rg : ranges) {
        const uint64_t e = rg.second == TBLOB_ALL_ROWS ? r.rows : rg.second;
        const size_t len = static_cast<size_t>((e - rg.first) * r.row_bytes);
        for (uint32_t threads = 1; threads <= 5; ++threads)
          for (uint64_t piece : {uint64_t{1}, r.row_bytes * 2, uint64_t{0}}) {
            std::string out(len + kTail, static_cast<char>(kFill));
            tblob_dequant_options o = TBLOB_DEQUANT_OPTIONS_INIT;
            o.threads = threads;
            o.piece_bytes = piece;
            tblob_diag d = TBLOB_DIAG_INIT;
            ASSERT_EQ(tblob_tensor_dequantize_opts(mm->m, r.index, r.dtype, rg.first, rg.second, &out[0],
                                                   out.size(), &o, &d),
                      TBLOB_OK)
                << d.message;
            ASSERT_EQ(0, std::memcmp(out.data(), r.bytes.data() + rg.first * r.row_bytes, len))
                << "tensor " << r.index << " dtype " << r.dtype << " rows [" << rg.first << "," << e << ") threads "
                << threads << " piece " << piece;
            ASSERT_EQ(out.substr(len), std::string(kTail, static_cast<char>(kFill))) << "wrote past the output";
            ++checked;
          }
      }
    }
  }
  // The fixtures reach every scheme the MLX / Ollama / HF paths decode.
  for (uint32_t s : {TBLOB_QUANT_MLX_AFFINE, TBLOB_QUANT_MXFP4, TBLOB_QUANT_MXFP8, TBLOB_QUANT_NVFP4,
                     TBLOB_QUANT_BLOCK_FP8, TBLOB_QUANT_F8_E4M3, TBLOB_QUANT_F8_E5M2, TBLOB_QUANT_F4,
                     TBLOB_QUANT_F16, TBLOB_QUANT_BF16, TBLOB_QUANT_F32})
    EXPECT_TRUE(seen[s]) << "no fixture tensor of scheme " << tblob_quant_scheme_name(s);
  EXPECT_GT(checked, 1000u);
  for (Model *m : models) delete m;
}

// Many tensors in one call, mixed output dtypes, against the references.
TEST(ParallelDequant, BatchEqualsSingleCalls) {
  const uint32_t dts[] = {TBLOB_DTYPE_BF16, TBLOB_DTYPE_F32};
  std::vector<Model *> models = open_all();
  for (Model *mm : models) {
    SCOPED_TRACE(mm->what);
    const std::vector<Ref> refs = references(mm->m, dts, 2);
    if (refs.empty()) continue;
    for (uint32_t threads = 0; threads <= 5; ++threads)
      for (uint64_t piece : {uint64_t{1}, uint64_t{0}}) {
        std::vector<std::string> outs(refs.size());
        std::vector<tblob_dequant_job> jobs(refs.size());
        for (size_t k = 0; k < refs.size(); ++k) {
          outs[k].assign(refs[k].bytes.size() + kTail, static_cast<char>(kFill));
          tblob_dequant_job j = TBLOB_DEQUANT_JOB_INIT;
          j.index = refs[k].index;
          j.out_dtype = refs[k].dtype;
          j.dst = &outs[k][0];
          j.dst_bytes = outs[k].size();
          j.status = TBLOB_E_IO;  // overwritten
          jobs[k] = j;
        }
        tblob_dequant_options o = TBLOB_DEQUANT_OPTIONS_INIT;
        o.threads = threads;
        o.piece_bytes = piece;
        tblob_diag d = TBLOB_DIAG_INIT;
        ASSERT_EQ(tblob_tensors_dequantize(mm->m, jobs.data(), jobs.size(), sizeof(tblob_dequant_job), &o, &d),
                  TBLOB_OK)
            << d.message;
        for (size_t k = 0; k < refs.size(); ++k) {
          EXPECT_EQ(jobs[k].status, TBLOB_OK);
          ASSERT_EQ(outs[k].substr(0, refs[k].bytes.size()), refs[k].bytes)
              << "tensor " << refs[k].index << " threads " << threads;
          ASSERT_EQ(outs[k].substr(refs[k].bytes.size()), std::string(kTail, static_cast<char>(kFill)));
        }
      }
  }
  for (Model *m : models) delete m;
}

// A batch with a bad job decodes nothing and reports what the single call reports.
TEST(ParallelDequant, FailedCheckDecodesNothing) {
  Model s;
  s.buf = synthetic_blob();
  ASSERT_EQ(tblob_model_open_memory(s.buf.data(), s.buf.size(), nullptr, &s.m, nullptr), TBLOB_OK);
  const uint64_t n = tblob_model_tensor_count(s.m);
  uint64_t a4 = 0, ints = 0;
  ASSERT_EQ(tblob_tensor_find(s.m, "a4", 2, &a4, nullptr), TBLOB_OK);
  ASSERT_EQ(tblob_tensor_find(s.m, "ints", 4, &ints, nullptr), TBLOB_OK);
  uint64_t need = 0;
  ASSERT_EQ(tblob_tensor_dequant_size(s.m, a4, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, &need, nullptr), TBLOB_OK);

  struct Case {
    const char *what;
    uint64_t index;
    uint32_t dtype;
    uint64_t rb, re;
    size_t dst_bytes;
    tblob_status want;
  };
  const Case cases[] = {
      {"short buffer", a4, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, static_cast<size_t>(need - 1), TBLOB_E_BUFFER_TOO_SMALL},
      {"index past the table", n, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, 1 << 20, TBLOB_E_RANGE},
      {"rows past the tensor", a4, TBLOB_DTYPE_F32, 0, 8, 1 << 20, TBLOB_E_RANGE},
      {"output dtype", a4, TBLOB_DTYPE_I32, 0, TBLOB_ALL_ROWS, 1 << 20, TBLOB_E_DEQUANT_OUT_DTYPE},
      {"integers", ints, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, 1 << 20, TBLOB_E_NOT_DEQUANTIZABLE},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.what);
    std::vector<std::string> outs(4, std::string(1 << 20, static_cast<char>(kFill)));
    std::vector<tblob_dequant_job> jobs(4);
    for (size_t k = 0; k < 4; ++k) {
      tblob_dequant_job j = TBLOB_DEQUANT_JOB_INIT;
      j.index = a4;
      j.out_dtype = TBLOB_DTYPE_F32;
      j.dst = &outs[k][0];
      j.dst_bytes = outs[k].size();
      jobs[k] = j;
    }
    jobs[2].index = c.index;
    jobs[2].out_dtype = c.dtype;
    jobs[2].row_begin = c.rb;
    jobs[2].row_end = c.re;
    jobs[2].dst_bytes = c.dst_bytes;
    tblob_dequant_options o = TBLOB_DEQUANT_OPTIONS_INIT;
    o.threads = 3;
    o.piece_bytes = 1;
    tblob_diag d = TBLOB_DIAG_INIT, single = TBLOB_DIAG_INIT;
    EXPECT_EQ(tblob_tensors_dequantize(s.m, jobs.data(), 4, sizeof(tblob_dequant_job), &o, &d), c.want);
    EXPECT_EQ(tblob_tensor_dequantize(s.m, c.index, c.dtype, c.rb, c.re, &outs[3][0], c.dst_bytes, &single), c.want);
    EXPECT_STREQ(d.message, single.message);
    EXPECT_EQ(d.tensor_index, single.tensor_index);
    EXPECT_EQ(jobs[2].status, c.want);
    EXPECT_EQ(jobs[0].status, TBLOB_OK);
    for (size_t k = 0; k < 4; ++k)
      EXPECT_EQ(outs[k], std::string(1 << 20, static_cast<char>(kFill))) << "job " << k << " was written";
  }
  // Argument errors.
  tblob_dequant_job j = TBLOB_DEQUANT_JOB_INIT;
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(tblob_tensors_dequantize(nullptr, &j, 1, sizeof(j), nullptr, &d), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_tensors_dequantize(s.m, nullptr, 1, sizeof(j), nullptr, &d), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_tensors_dequantize(s.m, &j, 1, 16, nullptr, &d), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_tensors_dequantize(s.m, nullptr, 0, 0, nullptr, &d), TBLOB_OK);  // nothing to do
  tblob_dequant_options o = TBLOB_DEQUANT_OPTIONS_INIT;
  o.struct_size = 4;
  EXPECT_EQ(tblob_tensor_dequantize_opts(s.m, a4, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, nullptr, 0, &o, &d),
            TBLOB_E_INVALID_ARGUMENT);
  // A NULL destination for a non-empty output, as the single call says.
  EXPECT_EQ(tblob_tensor_dequantize_opts(s.m, a4, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, nullptr, need, nullptr, &d),
            TBLOB_E_INVALID_ARGUMENT);
  // The init functions give the macros' defaults.
  tblob_dequant_options oi;
  std::memset(&oi, 0xFF, sizeof oi);
  ASSERT_EQ(tblob_dequant_options_init(&oi, sizeof oi), TBLOB_OK);
  const tblob_dequant_options om = TBLOB_DEQUANT_OPTIONS_INIT;
  EXPECT_EQ(0, std::memcmp(&oi, &om, sizeof oi));
  tblob_dequant_job ji;
  std::memset(&ji, 0xFF, sizeof ji);
  ASSERT_EQ(tblob_dequant_job_init(&ji, sizeof ji), TBLOB_OK);
  const tblob_dequant_job jm = TBLOB_DEQUANT_JOB_INIT;
  EXPECT_EQ(0, std::memcmp(&ji, &jm, sizeof ji));
  EXPECT_EQ(ji.row_end, TBLOB_ALL_ROWS);
}

// tblob_dequant_options.stores: non-temporal (every piece from 64 KiB with STREAM), cached or
// by size, the bytes are those of the single call, to aligned and misaligned destinations.
// Tensors of 128-256 KiB and more of output, so STREAM really takes the streaming paths.
TEST(ParallelDequant, StoresChoiceKeepsTheBytes) {
  std::vector<Entry> es;
  std::string meta = "{";
  uint32_t seed = 100;
  auto add = [&](const std::string &n, const char *qt, uint32_t bits, uint32_t group, const char *sdt, uint64_t rows,
                 uint64_t cols) {
    es.push_back({n, "U32", {rows, cols * bits / 32}, random_bytes(rows * cols * bits / 8, seed++)});
    if (sdt) {
      es.push_back({n + ".scale", sdt, {rows, cols / group}, scales(rows * cols / group, sdt, seed++)});
      es.push_back({n + ".bias", sdt, {rows, cols / group}, scales(rows * cols / group, sdt, seed++)});
      meta += (meta.size() > 1 ? "," : "") + std::string("\"") + n + ".quant_type\":\"" + qt + "\",\"" + n +
              ".group_size\":\"" + std::to_string(group) + "\"";
      return;
    }
    std::string sc = random_bytes(rows * cols / group, seed++);
    for (char &c : sc) c = static_cast<char>((static_cast<unsigned char>(c) % 40) + 100);
    es.push_back({n + ".scale", "U8", {rows, cols / group}, sc});
    meta += (meta.size() > 1 ? "," : "") + std::string("\"") + n + ".quant_type\":\"" + qt + "\"";
  };
  add("int4", "int4", 4, 64, "BF16", 256, 512);
  add("int8", "int8", 8, 64, "BF16", 128, 512);
  add("mxfp4", "mxfp4", 4, 32, nullptr, 256, 512);
  add("mxfp8", "mxfp8", 8, 32, nullptr, 128, 512);
  add("nvfp4", "nvfp4", 4, 16, nullptr, 256, 512);
  es.push_back({"plain", "BF16", {128, 512}, random_bytes(128 * 512 * 2, seed++)});
  Model mm;
  mm.buf = safetensors(es, meta + "}");
  tblob_diag od = TBLOB_DIAG_INIT;
  ASSERT_EQ(tblob_model_open_memory(mm.buf.data(), mm.buf.size(), nullptr, &mm.m, &od), TBLOB_OK) << od.message;
  size_t checked = 0;
  for (const char *name : {"int4", "int8", "mxfp4", "mxfp8", "nvfp4", "plain"}) {
    SCOPED_TRACE(name);
    uint64_t index = 0;
    ASSERT_EQ(tblob_tensor_find(mm.m, name, std::strlen(name), &index, nullptr), TBLOB_OK);
    for (uint32_t dt : {TBLOB_DTYPE_F32, TBLOB_DTYPE_BF16}) {
      uint64_t need = 0;
      ASSERT_EQ(tblob_tensor_dequant_size(mm.m, index, dt, 0, TBLOB_ALL_ROWS, &need, nullptr), TBLOB_OK);
      ASSERT_GE(need, uint64_t{128} << 10);
      std::string want(need, '\0');
      ASSERT_EQ(tblob_tensor_dequantize(mm.m, index, dt, 0, TBLOB_ALL_ROWS, &want[0], want.size(), nullptr), TBLOB_OK);
      std::vector<unsigned char> buf(need + 64 + 2 + kTail);
      unsigned char *aligned = buf.data() + ((64 - reinterpret_cast<uintptr_t>(buf.data()) % 64) % 64);
      for (uint32_t stores : {TBLOB_STORES_AUTO, TBLOB_STORES_STREAM, TBLOB_STORES_CACHE})
        for (uint32_t threads : {1u, 2u, 3u})
          for (uint64_t piece : {uint64_t{0}, uint64_t{64} << 10})
            for (size_t shift : {size_t{0}, size_t{2}}) {
              unsigned char *dst = aligned + shift;
              std::memset(buf.data(), kFill, buf.size());
              tblob_dequant_options o = TBLOB_DEQUANT_OPTIONS_INIT;
              o.threads = threads;
              o.piece_bytes = piece;
              o.stores = stores;
              tblob_diag d = TBLOB_DIAG_INIT;
              ASSERT_EQ(tblob_tensor_dequantize_opts(mm.m, index, dt, 0, TBLOB_ALL_ROWS, dst, need, &o, &d), TBLOB_OK)
                  << d.message;
              ASSERT_EQ(0, std::memcmp(dst, want.data(), need))
                  << "stores " << stores << " threads " << threads << " piece " << piece << " shift " << shift;
              for (size_t k = 0; k < kTail; ++k) ASSERT_EQ(dst[need + k], kFill) << "wrote past the output";
              ++checked;
            }
    }
  }
  EXPECT_EQ(checked, 6u * 2 * 3 * 3 * 2 * 2);
  // An unknown choice and a non-zero reserved field are argument errors; a struct that ends
  // before `stores` (the first version) means TBLOB_STORES_AUTO.
  uint64_t index = 0;
  ASSERT_EQ(tblob_tensor_find(mm.m, "int4", 4, &index, nullptr), TBLOB_OK);
  std::string out(uint64_t{256} * 512 * 4, '\0');
  tblob_dequant_options o = TBLOB_DEQUANT_OPTIONS_INIT;
  tblob_diag d = TBLOB_DIAG_INIT;
  o.stores = 3;
  EXPECT_EQ(tblob_tensor_dequantize_opts(mm.m, index, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, &out[0], out.size(), &o, &d),
            TBLOB_E_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(d.message, "stores"), nullptr) << d.message;
  o.stores = TBLOB_STORES_STREAM;
  o.reserved = 1;
  EXPECT_EQ(tblob_tensor_dequantize_opts(mm.m, index, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, &out[0], out.size(), &o, &d),
            TBLOB_E_INVALID_ARGUMENT);
  o = TBLOB_DEQUANT_OPTIONS_INIT;
  o.struct_size = static_cast<uint32_t>(offsetof(tblob_dequant_options, stores));
  o.stores = 99;  // beyond the caller's struct: not read
  EXPECT_EQ(tblob_tensor_dequantize_opts(mm.m, index, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, &out[0], out.size(), &o, &d),
            TBLOB_OK)
      << d.message;
}

// Several callers at once, each with its own worker threads, on one shared model.
TEST(ParallelDequant, ConcurrentCallers) {
  Model s;
  s.buf = synthetic_blob();
  ASSERT_EQ(tblob_model_open_memory(s.buf.data(), s.buf.size(), nullptr, &s.m, nullptr), TBLOB_OK);
  const uint32_t dt = TBLOB_DTYPE_F32;
  const std::vector<Ref> refs = references(s.m, &dt, 1);
  std::vector<int> ok(3, 0);
  std::vector<std::thread> ts;
  for (int t = 0; t < 3; ++t)
    ts.emplace_back([&, t] {
      int good = 1;
      for (int round = 0; round < 3; ++round)
        for (const Ref &r : refs) {
          std::string out(r.bytes.size(), '\0');
          tblob_dequant_options o = TBLOB_DEQUANT_OPTIONS_INIT;
          o.threads = 2 + static_cast<uint32_t>(t);
          o.piece_bytes = r.row_bytes;
          if (tblob_tensor_dequantize_opts(s.m, r.index, dt, 0, TBLOB_ALL_ROWS, &out[0], out.size(), &o, nullptr) !=
                  TBLOB_OK ||
              out != r.bytes)
            good = 0;
        }
      ok[static_cast<size_t>(t)] = good;
    });
  for (std::thread &t : ts) t.join();
  for (int t = 0; t < 3; ++t) EXPECT_EQ(ok[static_cast<size_t>(t)], 1) << "caller " << t;
}

}  // namespace
