// GGUF reader through the public API: files written by the `gguf` package against what its own
// GGUFReader and gguf.quants.dequantize report (tests/data/gguf/*.manifest, *.f32, made by
// tests/gguf/gen_gguf_fixtures.py), and one hand-built bad input per validation rule with the
// status docs/gguf.md gives it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tensorblob.h"

namespace {

std::string data_dir() { return std::string(TBLOB_GGUF_DATA_DIR) + "/"; }

std::string slurp(const std::string &p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string unhex(const std::string &h) {
  if (h == "-") return "";
  std::string o;
  for (size_t i = 0; i + 1 < h.size(); i += 2) o.push_back(static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16)));
  return o;
}

struct Kv {
  std::string key;
  uint32_t type;
  std::string value;  // as the manifest writes it
  bool array;
};
struct Tensor {
  std::string name;
  uint32_t type;
  uint64_t offset, bytes;
  std::vector<uint64_t> shape;
  long long deq;
};
struct Manifest {
  uint32_t version = 0, alignment = 0;
  uint64_t tensors = 0, kvs = 0;
  std::vector<Kv> kv;
  std::vector<Tensor> t;
};

Manifest load(const std::string &name) {
  Manifest m;
  std::ifstream f(data_dir() + name + ".manifest");
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag == "file") {
      ls >> m.version >> m.alignment >> m.tensors >> m.kvs;
    } else if (tag == "kv") {
      Kv k;
      k.array = false;
      ls >> k.key >> k.type >> k.value;
      m.kv.push_back(k);
    } else if (tag == "arr") {
      Kv k;
      k.array = true;
      ls >> k.key >> k.type >> k.value;
      m.kv.push_back(k);
    } else if (tag == "tensor") {
      Tensor t;
      uint32_t rank;
      ls >> t.name >> t.type >> t.offset >> t.bytes >> rank;
      t.shape.resize(rank);
      for (auto &d : t.shape) ls >> d;
      ls >> t.deq;
      m.t.push_back(t);
    }
  }
  return m;
}

uint32_t dtype_of_ggml(uint32_t type) {
  switch (type) {
    case 0: return TBLOB_DTYPE_F32;
    case 1: return TBLOB_DTYPE_F16;
    case 30: return TBLOB_DTYPE_BF16;
    case 28: return TBLOB_DTYPE_F64;
    case 24: return TBLOB_DTYPE_I8;
    case 25: return TBLOB_DTYPE_I16;
    case 26: return TBLOB_DTYPE_I32;
    case 27: return TBLOB_DTYPE_I64;
    default: return TBLOB_DTYPE_U8;  // ggml blocks
  }
}

// The model against the manifest: listing, shapes, bytes, metadata.
void check_model(const tblob_model *m, const Manifest &man, const std::string &file) {
  ASSERT_EQ(tblob_model_format(m), static_cast<uint32_t>(TBLOB_FORMAT_GGUF));
  EXPECT_STREQ(tblob_format_name(TBLOB_FORMAT_GGUF), "gguf");
  ASSERT_EQ(tblob_model_tensor_count(m), man.tensors);
  ASSERT_EQ(man.t.size(), man.tensors);
  for (uint64_t i = 0; i < man.tensors; ++i) {
    const Tensor &want = man.t[i];
    tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
    ASSERT_EQ(tblob_tensor_at(m, i, &info, nullptr), TBLOB_OK);
    EXPECT_EQ(std::string(info.name, info.name_len), want.name);
    EXPECT_EQ(info.dtype, dtype_of_ggml(want.type)) << want.name;
    ASSERT_EQ(info.rank, want.shape.size()) << want.name;
    uint64_t elems = 1;
    for (uint32_t d = 0; d < info.rank; ++d) {
      EXPECT_EQ(info.shape[d], want.shape[d]) << want.name << " dim " << d;
      elems *= want.shape[d];
    }
    EXPECT_EQ(info.element_count, elems) << want.name;
    EXPECT_EQ(info.file_offset, want.offset) << want.name;
    EXPECT_EQ(info.data_length, want.bytes) << want.name;
    const void *data = nullptr;
    uint64_t len = 0;
    ASSERT_EQ(tblob_tensor_data(m, i, &data, &len, nullptr), TBLOB_OK);
    ASSERT_EQ(len, want.bytes);
    EXPECT_EQ(std::memcmp(data, file.data() + want.offset, len), 0) << want.name;
    uint64_t found = UINT64_MAX;
    ASSERT_EQ(tblob_tensor_find(m, want.name.data(), want.name.size(), &found, nullptr), TBLOB_OK);
    EXPECT_EQ(found, i);
  }
  // Metadata: every string and scalar, arrays left out.
  uint64_t scalars = 0;
  for (const Kv &k : man.kv) {
    const char *v = nullptr;
    size_t vn = 0;
    const tblob_status s = tblob_metadata_find(m, k.key.data(), k.key.size(), &v, &vn, nullptr);
    if (k.array) {
      EXPECT_EQ(s, TBLOB_E_NOT_FOUND) << k.key;
      continue;
    }
    ++scalars;
    ASSERT_EQ(s, TBLOB_OK) << k.key;
    const std::string got(v, vn);
    switch (k.type) {
      case 8: EXPECT_EQ(got, unhex(k.value)) << k.key; break;
      case 7: EXPECT_EQ(got, k.value == "1" ? "true" : "false") << k.key; break;
      case 6: {  // f32: the text reads back to the same bits
        const float f = std::strtof(got.c_str(), nullptr);
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        EXPECT_EQ(bits, static_cast<uint32_t>(std::stoul(k.value, nullptr, 16))) << k.key << " " << got;
        break;
      }
      case 12: {
        const double f = std::strtod(got.c_str(), nullptr);
        uint64_t bits;
        std::memcpy(&bits, &f, 8);
        EXPECT_EQ(bits, std::stoull(k.value, nullptr, 16)) << k.key << " " << got;
        break;
      }
      default: EXPECT_EQ(got, k.value) << k.key; break;
    }
  }
  EXPECT_EQ(tblob_metadata_count(m), scalars);
  EXPECT_EQ(man.kv.size(), man.kvs);
}

void check_dequant(const tblob_model *m, const Manifest &man, const std::string &expected) {
  int compared = 0;
  for (uint64_t i = 0; i < man.tensors; ++i) {
    const Tensor &t = man.t[i];
    uint64_t elems = 1;
    for (uint64_t d : t.shape) elems *= d;
    std::vector<float> got(elems);
    tblob_diag d = TBLOB_DIAG_INIT;
    const tblob_status s = tblob_tensor_dequantize(m, i, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, got.data(), elems * 4, &d);
    if (t.deq < 0) {
      if (t.type >= 24 && t.type <= 28)
        EXPECT_EQ(s, TBLOB_E_NOT_DEQUANTIZABLE) << t.name << ": " << d.message;
      else
        EXPECT_EQ(s, TBLOB_E_UNSUPPORTED) << t.name << ": " << d.message;
      continue;
    }
    ASSERT_EQ(s, TBLOB_OK) << t.name << ": " << d.message;
    ASSERT_LE((t.deq + elems) * 4, expected.size());
    EXPECT_EQ(std::memcmp(got.data(), expected.data() + t.deq * 4, elems * 4), 0) << t.name << " " << tblob_ggml_kernel_name();
    // A row range: the same values.
    const uint64_t cols = t.shape.back(), rows = elems / cols;
    if (rows >= 2) {
      std::vector<float> part(cols);
      ASSERT_EQ(tblob_tensor_dequantize(m, i, TBLOB_DTYPE_F32, 1, 2, part.data(), cols * 4, &d), TBLOB_OK) << d.message;
      EXPECT_EQ(std::memcmp(part.data(), expected.data() + (t.deq + cols) * 4, cols * 4), 0) << t.name;
    }
    ++compared;
  }
  EXPECT_GE(compared, 1);
}

TEST(Gguf, V3FileMatchesGgufPy) {
  const Manifest man = load("good_v3");
  ASSERT_EQ(man.version, 3u);
  const std::string path = data_dir() + "good_v3.gguf";
  const std::string file = slurp(path);
  const std::string expected = slurp(data_dir() + "good_v3.f32");
  for (uint32_t mode : {TBLOB_OPEN_MAP, TBLOB_OPEN_READ}) {
    tblob_open_options o = TBLOB_OPEN_OPTIONS_INIT;
    o.mode = mode;
    tblob_model *m = nullptr;
    tblob_diag d = TBLOB_DIAG_INIT;
    ASSERT_EQ(tblob_model_open(path.c_str(), &o, &m, &d), TBLOB_OK) << d.message;
    check_model(m, man, file);
    check_dequant(m, man, expected);
    tblob_model_close(m);
  }
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(tblob_model_open_memory(file.data(), file.size(), nullptr, &m, &d), TBLOB_OK) << d.message;
  check_model(m, man, file);
  check_dequant(m, man, expected);
  tblob_model_close(m);
}

// IQ4_NL, IQ4_XS, TQ1_0, TQ2_0, MXFP4, NVFP4 and the IQ1/IQ2/IQ3 tensors equal
// gguf.quants.dequantize through tblob_tensor_dequantize.
TEST(Gguf, NewBlockTypesMatchGgufPy) {
  const Manifest man = load("quant_types");
  const std::string path = data_dir() + "quant_types.gguf";
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(tblob_model_open(path.c_str(), nullptr, &m, &d), TBLOB_OK) << d.message;
  check_model(m, man, slurp(path));
  check_dequant(m, man, slurp(data_dir() + "quant_types.f32"));
  tblob_model_close(m);
}

// Blocks quantized by real ggml (tests/gguf/gen_ggml_real_fixtures.sh: TQ1_0, the IQ1/IQ2/IQ3
// types, NVFP4, Q1_0) equal gguf.quants.dequantize (Q1_0: ggml's dequantize_row_q1_0) through
// every kernel set this host runs.
TEST(Gguf, RealGgmlBlocksMatchOracle) {
  const Manifest man = load("ggml_real");
  const std::string path = data_dir() + "ggml_real.gguf";
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(tblob_model_open(path.c_str(), nullptr, &m, &d), TBLOB_OK) << d.message;
  check_model(m, man, slurp(path));
  size_t decoded = 0;
  for (const Tensor &t : man.t) decoded += t.deq >= 0;
  EXPECT_EQ(decoded, 10u);
  const std::string expected = slurp(data_dir() + "ggml_real.f32");
  int sets = 0;
  for (const char *set : {"scalar", "avx2", "avx512", "neon"}) {
    if (tblob_kernel_set(set, nullptr) != TBLOB_OK) continue;
    ++sets;
    check_dequant(m, man, expected);
  }
  ASSERT_EQ(tblob_kernel_set("auto", nullptr), TBLOB_OK);
  EXPECT_GE(sets, 1);
  tblob_model_close(m);
}

TEST(Gguf, V2AndAlignment64) {
  for (const char *name : {"small_v2", "align64"}) {
    const Manifest man = load(name);
    const std::string path = data_dir() + name + ".gguf";
    tblob_model *m = nullptr;
    tblob_diag d = TBLOB_DIAG_INIT;
    ASSERT_EQ(tblob_model_open(path.c_str(), nullptr, &m, &d), TBLOB_OK) << name << ": " << d.message;
    check_model(m, man, slurp(path));
    tblob_model_close(m);
  }
  EXPECT_EQ(load("small_v2").version, 2u);
  EXPECT_EQ(load("align64").alignment, 64u);
}

TEST(Gguf, DequantOutputsAndStatuses) {
  const std::string path = data_dir() + "good_v3.gguf";
  tblob_model *m = nullptr;
  ASSERT_EQ(tblob_model_open(path.c_str(), nullptr, &m, nullptr), TBLOB_OK);
  uint64_t q;
  ASSERT_EQ(tblob_tensor_find(m, "q4_0", 4, &q, nullptr), TBLOB_OK);
  std::vector<float> f32(4 * 64);
  std::vector<uint16_t> half(4 * 64);
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(tblob_tensor_dequantize(m, q, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, f32.data(), f32.size() * 4, &d), TBLOB_OK);
  // bf16 output: the f32 value rounded to nearest even (every q4_0 value is d * small int, so
  // check against the f32 result's own rounding).
  ASSERT_EQ(tblob_tensor_dequantize(m, q, TBLOB_DTYPE_BF16, 0, TBLOB_ALL_ROWS, half.data(), half.size() * 2, &d), TBLOB_OK);
  for (size_t i = 0; i < f32.size(); ++i) {
    uint32_t b;
    std::memcpy(&b, &f32[i], 4);
    const uint32_t r = (b + 0x7FFFu + ((b >> 16) & 1u)) >> 16;
    ASSERT_EQ(half[i], static_cast<uint16_t>(r)) << i;
  }
  uint64_t bytes = 0;
  ASSERT_EQ(tblob_tensor_dequant_size(m, q, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, &bytes, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(bytes, 4u * 64 * 4);
  ASSERT_EQ(tblob_tensor_dequant_size(m, q, TBLOB_DTYPE_BF16, 1, 3, &bytes, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(bytes, 2u * 64 * 2);
  EXPECT_EQ(tblob_tensor_dequant_size(m, q, TBLOB_DTYPE_F32, 0, 5, &bytes, &d), TBLOB_E_RANGE);
  uint64_t iq = 0;
  ASSERT_EQ(tblob_tensor_find(m, "iq4_nl", 6, &iq, nullptr), TBLOB_OK);
  ASSERT_EQ(tblob_tensor_dequant_size(m, iq, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, &bytes, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(bytes, 4u * 2 * 64);
  EXPECT_EQ(tblob_tensor_dequantize(m, q, TBLOB_DTYPE_I8, 0, TBLOB_ALL_ROWS, f32.data(), f32.size() * 4, &d),
            TBLOB_E_DEQUANT_OUT_DTYPE);
  EXPECT_EQ(tblob_tensor_dequantize(m, q, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, f32.data(), f32.size() * 4 - 1, &d),
            TBLOB_E_BUFFER_TOO_SMALL);
  EXPECT_EQ(tblob_tensor_dequantize(m, q, TBLOB_DTYPE_F32, 3, 5, f32.data(), f32.size() * 4, &d), TBLOB_E_RANGE);
  EXPECT_EQ(tblob_tensor_dequantize(m, q, TBLOB_DTYPE_F32, 2, 1, f32.data(), f32.size() * 4, &d), TBLOB_E_RANGE);
  EXPECT_NE(std::strstr(d.message, "q4_0"), nullptr) << d.message;
  tblob_model_close(m);
}

TEST(Gguf, BigEndianFileHasItsStatus) {
  const std::string path = data_dir() + "big_endian.gguf";
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(tblob_model_open(path.c_str(), nullptr, &m, &d), TBLOB_E_GGUF_BIG_ENDIAN);
  EXPECT_EQ(m, nullptr);
  EXPECT_EQ(d.offset, 4u);
  EXPECT_STREQ(tblob_status_name(TBLOB_E_GGUF_BIG_ENDIAN), "TBLOB_E_GGUF_BIG_ENDIAN");
}

// ---- hand-built files, one rule each -----------------------------------------------------------
struct G {
  std::string b;
  G &u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<char>(v >> (8 * i)));
    return *this;
  }
  G &u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) b.push_back(static_cast<char>(v >> (8 * i)));
    return *this;
  }
  G &str(const std::string &s) {
    u64(s.size());
    b += s;
    return *this;
  }
  G &head(uint64_t tensors, uint64_t kvs, uint32_t version = 3) {
    b = "GGUF";
    u32(version);
    u64(tensors);
    return u64(kvs);
  }
  G &kv_u32(const std::string &k, uint32_t v) { return str(k).u32(4).u32(v); }
  G &kv_str(const std::string &k, const std::string &v) { return str(k).u32(8).str(v); }
  // ne innermost first, as GGUF stores it
  G &tensor(const std::string &name, std::vector<uint64_t> ne, uint32_t type, uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(ne.size()));
    for (uint64_t d : ne) u64(d);
    return u32(type).u64(offset);
  }
  G &pad(size_t a = 32) {
    while (b.size() % a) b.push_back('\0');
    return *this;
  }
  G &zeros(size_t n) {
    b.append(n, '\0');
    return *this;
  }
};

tblob_status open_buf(const std::string &b, tblob_diag *d, const tblob_open_options *o = nullptr) {
  tblob_model *m = nullptr;
  const tblob_status s = tblob_model_open_memory(b.data(), b.size(), o, &m, d);
  if (s == TBLOB_OK) {
    EXPECT_NE(m, nullptr);
  } else {
    EXPECT_EQ(m, nullptr);
  }
  tblob_model_close(m);
  return s;
}

#define EXPECT_STATUS(buf, want)                                  \
  do {                                                            \
    tblob_diag d_ = TBLOB_DIAG_INIT;                              \
    EXPECT_EQ(open_buf((buf), &d_), (want)) << d_.message;        \
    EXPECT_STREQ(tblob_status_name(d_.status), #want);            \
  } while (0)

// Two f32 [8] tensors back to back: the valid base the bad cases change one field of.
std::string two_tensors(uint64_t off_a = 0, uint64_t off_b = 32, uint32_t type_b = 0, const std::string &name_b = "b") {
  G g;
  g.head(2, 1).kv_str("general.architecture", "llama");
  g.tensor("a", {8}, 0, off_a).tensor(name_b, {8}, type_b, off_b).pad();
  return g.zeros(64).b;
}

TEST(GgufBad, ValidBasesOpen) {
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(open_buf(two_tensors(), &d), TBLOB_OK) << d.message;
  EXPECT_EQ(open_buf(G().head(0, 0).b, &d), TBLOB_OK) << d.message;  // nothing at all
  // A 0-d tensor (rank 0, one element) and a tensor with a zero dimension.
  G g;
  g.head(2, 0).tensor("scalar", {}, 0, 0).tensor("empty", {0, 4}, 2, 32).pad().zeros(32);
  tblob_model *m = nullptr;
  ASSERT_EQ(tblob_model_open_memory(g.b.data(), g.b.size(), nullptr, &m, &d), TBLOB_OK) << d.message;
  tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
  ASSERT_EQ(tblob_tensor_at(m, 0, &info, nullptr), TBLOB_OK);
  EXPECT_EQ(info.rank, 0u);
  EXPECT_EQ(info.element_count, 1u);
  ASSERT_EQ(tblob_tensor_at(m, 1, &info, nullptr), TBLOB_OK);
  EXPECT_EQ(info.element_count, 0u);
  EXPECT_EQ(info.shape[0], 4u);  // outermost first
  EXPECT_EQ(info.shape[1], 0u);
  tblob_model_close(m);
  // A zero dimension empties the tensor; the other dimensions still multiply to below 2^63
  // (GgufBad.Dimensions has the overflowing case).
  G z;
  z.head(1, 0).tensor("z", {0, uint64_t{1} << 30, uint64_t{1} << 30}, 0, 0).pad();
  ASSERT_EQ(tblob_model_open_memory(z.b.data(), z.b.size(), nullptr, &m, &d), TBLOB_OK) << d.message;
  ASSERT_EQ(tblob_tensor_at(m, 0, &info, nullptr), TBLOB_OK);
  EXPECT_EQ(info.element_count, 0u);
  EXPECT_EQ(info.data_length, 0u);
  tblob_model_close(m);
  // A name of 63 bytes is ggml's longest.
  EXPECT_EQ(open_buf(two_tensors(0, 32, 0, std::string(63, 'n')), &d), TBLOB_OK) << d.message;
}

TEST(GgufBad, Versions) {
  EXPECT_STATUS(G().head(0, 0, 1).b, TBLOB_E_GGUF_V1);
  EXPECT_STATUS(G().head(0, 0, 0).b, TBLOB_E_GGUF_VERSION);
  EXPECT_STATUS(G().head(0, 0, 4).b, TBLOB_E_GGUF_VERSION);
  EXPECT_STATUS(G().head(0, 0, 0x02000000u).b, TBLOB_E_GGUF_BIG_ENDIAN);
}

TEST(GgufBad, TruncatedHeader) {
  EXPECT_STATUS(std::string("GGUF\x03\x00\x00", 7), TBLOB_E_GGUF_TRUNCATED);
  EXPECT_STATUS(G().head(0, 0).b.substr(0, 20), TBLOB_E_GGUF_TRUNCATED);
  G g;
  g.head(0, 1).str("general.x").u32(4).u32(7);  // then cut inside the value
  g.zeros(8);                                    // room for the count bound
  std::string cut = g.b.substr(0, g.b.size() - 8 - 2);
  // The count bound needs 14 bytes per key/value: this entry is 25, cut to 23.
  EXPECT_STATUS(cut, TBLOB_E_GGUF_TRUNCATED);
}

TEST(GgufBad, CountsBoundedByBytesLeft) {
  EXPECT_STATUS(G().head(0, 1000).kv_u32("k", 1).b, TBLOB_E_GGUF_COUNT);
  EXPECT_STATUS(G().head(UINT64_MAX, 0).zeros(64).b, TBLOB_E_GGUF_COUNT);
  EXPECT_STATUS(G().head(3, 0).tensor("a", {8}, 0, 0).zeros(8).b, TBLOB_E_GGUF_COUNT);
}

TEST(GgufBad, StringLengths) {
  G g;
  g.head(0, 1).u64(1000).b += "key";  // key length past the end
  g.zeros(16);
  EXPECT_STATUS(g.b, TBLOB_E_GGUF_STRING);
  G v;
  v.head(0, 1).str("k").u32(8).u64(UINT64_MAX).zeros(8);  // value length past the end
  EXPECT_STATUS(v.b, TBLOB_E_GGUF_STRING);
  G t;
  t.head(1, 0).u64(1u << 20).zeros(24);  // tensor name
  EXPECT_STATUS(t.b, TBLOB_E_GGUF_STRING);
}

TEST(GgufBad, Arrays) {
  G g;
  g.head(0, 1).str("k").u32(9).u32(4).u64(1000).zeros(16);  // 1000 u32 in 16 bytes
  EXPECT_STATUS(g.b, TBLOB_E_GGUF_ARRAY);
  G s;
  s.head(0, 1).str("k").u32(9).u32(8).u64(3).str("a").zeros(8);  // 3 strings, room for 2 lengths
  EXPECT_STATUS(s.b, TBLOB_E_GGUF_ARRAY);
  G n;
  n.head(0, 1).str("k").u32(9).u32(9).u64(0).zeros(8);  // nested
  EXPECT_STATUS(n.b, TBLOB_E_GGUF_ARRAY);
  G big;
  big.head(0, 1).str("k").u32(9).u32(0).u64((uint64_t{1} << 30) + 1).zeros(8);
  EXPECT_STATUS(big.b, TBLOB_E_GGUF_ARRAY);
  G inner;  // a string inside an array whose length runs past the end
  inner.head(0, 1).str("k").u32(9).u32(8).u64(1).u64(500).zeros(8);
  EXPECT_STATUS(inner.b, TBLOB_E_GGUF_STRING);
  // A valid array is skipped, not listed.
  G ok;
  ok.head(0, 2).str("k").u32(9).u32(8).u64(2).str("x").str("yz").kv_u32("after", 5);
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(tblob_model_open_memory(ok.b.data(), ok.b.size(), nullptr, &m, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(tblob_metadata_count(m), 1u);
  const char *v;
  size_t vn;
  ASSERT_EQ(tblob_metadata_find(m, "after", 5, &v, &vn, nullptr), TBLOB_OK);
  EXPECT_EQ(std::string(v, vn), "5");
  tblob_model_close(m);
}

TEST(GgufBad, ValueTypes) {
  EXPECT_STATUS(G().head(0, 1).str("k").u32(13).u32(0).zeros(4).b, TBLOB_E_GGUF_VALUE_TYPE);
  EXPECT_STATUS(G().head(0, 1).str("k").u32(9).u32(13).u64(0).b, TBLOB_E_GGUF_VALUE_TYPE);
}

TEST(GgufBad, Keys) {
  EXPECT_STATUS(G().head(0, 1).str("").u32(4).u32(1).zeros(2).b, TBLOB_E_GGUF_KEY);
  EXPECT_STATUS(G().head(0, 2).kv_u32("k", 1).kv_u32("k", 2).b, TBLOB_E_GGUF_KEY);
  G g;  // an array and a scalar of one key
  g.head(0, 2).str("k").u32(9).u32(4).u64(1).u32(0).kv_u32("k", 2);
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(open_buf(g.b, &d), TBLOB_E_GGUF_KEY);
  EXPECT_EQ(d.offset, 24u + 8 + 1 + 4 + 4 + 8 + 4) << d.message;  // the second "k"
}

TEST(GgufBad, Alignment) {
  EXPECT_STATUS(G().head(0, 1).kv_u32("general.alignment", 48).b, TBLOB_E_GGUF_ALIGNMENT);
  EXPECT_STATUS(G().head(0, 1).kv_u32("general.alignment", 0).b, TBLOB_E_GGUF_ALIGNMENT);
  EXPECT_STATUS(G().head(0, 1).str("general.alignment").u32(10).u64(64).b, TBLOB_E_GGUF_ALIGNMENT);
  // A valid alignment moves the data region and the offsets rule.
  G g;
  g.head(2, 1).kv_u32("general.alignment", 64).tensor("a", {8}, 0, 0).tensor("b", {8}, 0, 64).pad(64).zeros(96);
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(open_buf(g.b, &d), TBLOB_OK) << d.message;
  G h;
  h.head(2, 1).kv_u32("general.alignment", 64).tensor("a", {8}, 0, 0).tensor("b", {8}, 0, 32).pad(64).zeros(96);
  EXPECT_STATUS(h.b, TBLOB_E_GGUF_OFFSET_ALIGN);
}

TEST(GgufBad, TensorNames) {
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(open_buf(two_tensors(0, 32, 0, std::string(64, 'n')), &d), TBLOB_E_GGUF_NAME);
  EXPECT_EQ(d.tensor_index, 1);
  EXPECT_STATUS(two_tensors(0, 32, 0, "a"), TBLOB_E_DUPLICATE_NAME);
}

TEST(GgufBad, Dimensions) {
  G g;
  g.head(1, 0).tensor("a", {1, 1, 1, 1, 1}, 0, 0).pad().zeros(4);
  EXPECT_STATUS(g.b, TBLOB_E_GGUF_DIMS);
  G n;
  n.head(1, 0).tensor("a", {uint64_t{1} << 63}, 0, 0).pad().zeros(4);
  EXPECT_STATUS(n.b, TBLOB_E_GGUF_DIMS);
  G o;
  o.head(1, 0).tensor("a", {uint64_t{1} << 32, uint64_t{1} << 32}, 0, 0).pad().zeros(4);
  EXPECT_STATUS(o.b, TBLOB_E_SHAPE_OVERFLOW);
  G zo;  // a zero dimension does not excuse the others from fitting (ggml lets this pass)
  zo.head(1, 0).tensor("a", {0, uint64_t{1} << 40, uint64_t{1} << 40}, 0, 0).pad().zeros(4);
  EXPECT_STATUS(zo.b, TBLOB_E_SHAPE_OVERFLOW);
  G bytes;  // elements fit int64, bytes do not
  bytes.head(1, 0).tensor("a", {uint64_t{1} << 62}, 0, 0).pad().zeros(4);
  EXPECT_STATUS(bytes.b, TBLOB_E_SHAPE_OVERFLOW);
}

TEST(GgufBad, Types) {
  EXPECT_STATUS(two_tensors(0, 32, 4), TBLOB_E_GGUF_TYPE);   // Q4_2, removed
  EXPECT_STATUS(two_tensors(0, 32, 31), TBLOB_E_GGUF_TYPE);  // Q4_0_4_4, removed
  EXPECT_STATUS(two_tensors(0, 32, 99), TBLOB_E_GGUF_TYPE);
  G g;  // q4_0 rows of 48 elements: not whole 32-element blocks
  g.head(1, 0).tensor("q", {48, 2}, 2, 0).pad().zeros(64);
  EXPECT_STATUS(g.b, TBLOB_E_GGUF_ROW);
  G s;  // a 0-d q8_0 tensor: one element, not a block
  s.head(1, 0).tensor("q", {}, 8, 0).pad().zeros(64);
  EXPECT_STATUS(s.b, TBLOB_E_GGUF_ROW);
}

TEST(GgufBad, Offsets) {
  EXPECT_STATUS(two_tensors(0, 33), TBLOB_E_GGUF_OFFSET_ALIGN);
  EXPECT_STATUS(two_tensors(0, 64), TBLOB_E_GGUF_DATA_RANGE);   // 64 + 32 > 64 bytes of data
  EXPECT_STATUS(two_tensors(0, UINT64_MAX - 31), TBLOB_E_GGUF_DATA_RANGE);
  EXPECT_STATUS(two_tensors(0, 0), TBLOB_E_GGUF_OVERLAP);
  EXPECT_STATUS(two_tensors(32, 0), TBLOB_E_GGUF_LAYOUT);       // swapped: ggml reads in header order
  G hole;                                                        // a hole between the tensors
  hole.head(2, 0).tensor("a", {8}, 0, 0).tensor("b", {8}, 0, 64).pad().zeros(96);
  EXPECT_STATUS(hole.b, TBLOB_E_GGUF_LAYOUT);
  G first;                                                       // the first tensor not at 0
  first.head(1, 0).tensor("a", {8}, 0, 32).pad().zeros(64);
  EXPECT_STATUS(first.b, TBLOB_E_GGUF_LAYOUT);
  G past;                                                        // data region past the file end
  past.head(1, 0).tensor("a", {0}, 0, 0);
  EXPECT_STATUS(past.b, TBLOB_E_GGUF_DATA_RANGE);
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(open_buf(two_tensors(0, 33), &d), TBLOB_E_GGUF_OFFSET_ALIGN);
  EXPECT_EQ(d.tensor_index, 1);
  EXPECT_NE(std::strstr(d.message, "\"b\""), nullptr) << d.message;
}

TEST(GgufBad, Limits) {
  tblob_open_options o = TBLOB_OPEN_OPTIONS_INIT;
  tblob_diag d = TBLOB_DIAG_INIT;
  o.max_tensors = 1;
  EXPECT_EQ(open_buf(two_tensors(), &d, &o), TBLOB_E_LIMIT_TENSORS);
  o = TBLOB_OPEN_OPTIONS_INIT;
  o.max_name_bytes = 8;  // "general.architecture" is 20
  EXPECT_EQ(open_buf(two_tensors(), &d, &o), TBLOB_E_LIMIT_NAME_BYTES);
  o = TBLOB_OPEN_OPTIONS_INIT;
  o.max_rank = 0;
  EXPECT_EQ(open_buf(two_tensors(), &d, &o), TBLOB_E_LIMIT_RANK);
  o = TBLOB_OPEN_OPTIONS_INIT;
  o.max_header_bytes = 40;
  EXPECT_EQ(open_buf(two_tensors(), &d, &o), TBLOB_E_LIMIT_HEADER_BYTES);
  o = TBLOB_OPEN_OPTIONS_COMPACT_INIT;
  EXPECT_EQ(open_buf(two_tensors(), &d, &o), TBLOB_OK) << d.message;
}

// Every prefix of a valid file is refused with a status, never read past its end.
TEST(GgufBad, EveryPrefixFails) {
  const std::string full = slurp(data_dir() + "small_v2.gguf");
  ASSERT_GT(full.size(), 100u);
  for (size_t n = 0; n < full.size(); ++n) {
    const std::string cut = full.substr(0, n);
    tblob_diag d = TBLOB_DIAG_INIT;
    EXPECT_NE(open_buf(cut, &d), TBLOB_OK) << n;
  }
}

}  // namespace
