// Scalar reference dequantization: bit-exact against MLX (mx.dequantize fixtures), ml_dtypes
// (code tables), numpy/ml_dtypes (f16/bf16 rounding), the hand vectors of
// shared/reference/ollama_mlx.md section 8, and the descriptor validation statuses.
//
// Fixtures: tests/data/dequant/, written by tests/oracles/gen_mlx_fixtures.py. The directory
// is taken from TBLOB_DEQUANT_DATA_DIR (compile-time, set by meson) or the environment
// variable of the same name, else tests/data/dequant relative to the working directory.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "dequant/convert.h"
#include "dequant/dequant.h"
#include "dequant/minifloat.h"
#include "dequant/quant_desc.h"
#include "dequant/scalar/scalar.h"

using namespace tblob;

namespace {

// ---------------------------------------------------------------------------------------------
// Test helpers
// ---------------------------------------------------------------------------------------------
std::string data_dir() {
  if (const char *e = std::getenv("TBLOB_DEQUANT_DATA_DIR")) return e;
#ifdef TBLOB_DEQUANT_DATA_DIR
  return TBLOB_DEQUANT_DATA_DIR;
#else
  return "tests/data/dequant";
#endif
}

bool read_file(const std::string &path, std::vector<uint8_t> *out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return true;
}

// Minimal safetensors reader for the fixtures only (the library's own reader is separate and
// deliberately not used here). Understands the compact JSON MLX writes.
struct MiniTensor {
  std::string dtype;
  std::vector<uint64_t> shape;
  const uint8_t *data = nullptr;
  uint64_t bytes = 0;
};

struct MiniSafetensors {
  std::vector<uint8_t> buf;
  std::string header;
  uint64_t data_start = 0;

  bool load(const std::string &path) {
    if (!read_file(path, &buf) || buf.size() < 8) return false;
    uint64_t n = 0;
    for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(buf[i]) << (8 * i);
    if (n > buf.size() - 8) return false;
    header.assign(reinterpret_cast<const char *>(buf.data() + 8), n);
    data_start = 8 + n;
    return true;
  }

  static std::vector<uint64_t> parse_list(const std::string &s, size_t pos) {
    std::vector<uint64_t> v;
    size_t end = s.find(']', pos);
    std::string inner = s.substr(pos, end - pos);
    std::stringstream ss(inner);
    std::string item;
    while (std::getline(ss, item, ',')) {
      if (!item.empty()) v.push_back(std::strtoull(item.c_str(), nullptr, 10));
    }
    return v;
  }

  bool find(const std::string &name, MiniTensor *t) const {
    const std::string key = "\"" + name + "\":{";
    size_t p = header.find(key);
    if (p == std::string::npos) return false;
    size_t obj_end = header.find('}', p);
    std::string obj = header.substr(p + key.size(), obj_end - p - key.size());
    size_t d = obj.find("\"dtype\":\"");
    size_t s = obj.find("\"shape\":[");
    size_t o = obj.find("\"data_offsets\":[");
    if (d == std::string::npos || s == std::string::npos || o == std::string::npos) return false;
    t->dtype = obj.substr(d + 9, obj.find('"', d + 9) - d - 9);
    t->shape = parse_list(obj, s + 9);
    std::vector<uint64_t> off = parse_list(obj, o + 16);
    if (off.size() != 2 || off[1] < off[0] || data_start + off[1] > buf.size()) return false;
    t->data = buf.data() + data_start + off[0];
    t->bytes = off[1] - off[0];
    return true;
  }

  std::string meta(const std::string &key) const {
    const std::string k = "\"" + key + "\":\"";
    size_t p = header.find(k);
    if (p == std::string::npos) return "";
    p += k.size();
    return header.substr(p, header.find('"', p) - p);
  }
};

// Bytes placed so that the last byte sits right before an inaccessible page: a kernel that
// reads past the end of its range crashes the test instead of passing by luck.
class GuardedBytes {
 public:
  GuardedBytes() = default;
  explicit GuardedBytes(const std::vector<uint8_t> &bytes) { assign(bytes.data(), bytes.size()); }
  GuardedBytes(const uint8_t *p, size_t n) { assign(p, n); }
  GuardedBytes(const GuardedBytes &) = delete;
  GuardedBytes &operator=(const GuardedBytes &) = delete;
  ~GuardedBytes() {
    if (map_) munmap(map_, map_len_);
  }
  const uint8_t *data() const { return n_ ? ptr_ : nullptr; }
  size_t size() const { return n_; }

 private:
  void assign(const uint8_t *p, size_t n) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t body = (n + page - 1) / page * page;
    map_len_ = body + page;
    void *m = mmap(nullptr, map_len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
      map_ = nullptr;
      return;
    }
    map_ = static_cast<uint8_t *>(m);
    mprotect(map_ + body, page, PROT_NONE);
    ptr_ = map_ + body - n;
    if (n) std::memcpy(ptr_, p, n);
    n_ = n;
  }
  uint8_t *map_ = nullptr;
  size_t map_len_ = 0;
  uint8_t *ptr_ = nullptr;
  size_t n_ = 0;
};

bool f32_is_nan(uint32_t u) { return (u & 0x7FFFFFFFu) > 0x7F800000u; }
bool f16_is_nan(uint16_t h) { return (h & 0x7FFFu) > 0x7C00u; }
bool bf16_is_nan(uint16_t h) { return (h & 0x7FFFu) > 0x7F80u; }

uint32_t out_dtype_of(int slot) {
  return slot == 0 ? TBLOB_DTYPE_F32 : slot == 1 ? TBLOB_DTYPE_F16 : TBLOB_DTYPE_BF16;
}

// Dequantizes all rows into a vector of raw output bytes.
Status run(const QuantDesc &d, uint32_t out_dtype, std::vector<uint8_t> *out,
           uint64_t rb = 0, uint64_t re = UINT64_MAX) {
  if (re == UINT64_MAX) re = d.rows;
  out->assign((re - rb) * d.cols * dequant_out_size(out_dtype), 0xA5);
  return dequantize_rows(d, out_dtype, rb, re, out->data(), out->size());
}

std::vector<float> run_f32(const QuantDesc &d) {
  std::vector<uint8_t> raw;
  EXPECT_EQ(run(d, TBLOB_DTYPE_F32, &raw), TBLOB_OK);
  std::vector<float> v(raw.size() / 4);
  if (!raw.empty()) std::memcpy(v.data(), raw.data(), raw.size());
  return v;
}

// Compares outputs bit for bit; where the oracle holds a NaN only NaN-ness is required
// (oracle payloads are implementation artefacts; ours are canonical, see quant_desc.h).
// Returns the number of mismatches and prints the first few.
size_t compare_outputs(const std::string &what, int slot, const uint8_t *got,
                       const uint8_t *want, uint64_t n) {
  size_t bad = 0;
  for (uint64_t i = 0; i < n; ++i) {
    bool ok;
    uint32_t g, w;
    if (slot == 0) {
      std::memcpy(&g, got + 4 * i, 4);
      std::memcpy(&w, want + 4 * i, 4);
      ok = f32_is_nan(w) ? f32_is_nan(g) : g == w;
    } else {
      uint16_t g16, w16;
      std::memcpy(&g16, got + 2 * i, 2);
      std::memcpy(&w16, want + 2 * i, 2);
      g = g16;
      w = w16;
      ok = (slot == 1 ? f16_is_nan(w16) : bf16_is_nan(w16))
               ? (slot == 1 ? f16_is_nan(g16) : bf16_is_nan(g16))
               : g16 == w16;
    }
    if (!ok && bad++ < 5) {
      ADD_FAILURE() << what << " out=" << slot << " element " << i << ": got 0x" << std::hex
                    << g << " want 0x" << w << std::dec;
    }
  }
  return bad;
}

// ---------------------------------------------------------------------------------------------
// MLX fixtures
// ---------------------------------------------------------------------------------------------
struct Case {
  std::string name, mode, scale_dtype, global_mode;
  uint32_t bits = 0, group = 0;
  uint64_t rows = 0, cols = 0;
};

struct Manifest {
  std::vector<Case> cases;
  std::string special;  // "mlx" or "mlx0324"
  bool ok = false;
};

const Manifest &manifest() {
  static Manifest m = [] {
    Manifest r;
    std::ifstream f(data_dir() + "/manifest.txt");
    if (!f) return r;
    std::string line;
    while (std::getline(f, line)) {
      if (line.rfind("# special ", 0) == 0) r.special = line.substr(10);
      if (line.empty() || line[0] == '#') continue;
      std::istringstream ss(line);
      Case c;
      ss >> c.name >> c.mode >> c.bits >> c.group >> c.scale_dtype >> c.rows >> c.cols >>
          c.global_mode;
      r.cases.push_back(c);
    }
    r.ok = !r.cases.empty() && !r.special.empty();
    return r;
  }();
  return m;
}

uint32_t manifest_special() {
  return manifest().special == "mlx0324" ? kSpecialMlx0324 : kSpecialMlx;
}

uint32_t scale_dtype_of(const Case &c) {
  if (c.mode == "affine") {
    if (c.scale_dtype == "bf16") return TBLOB_DTYPE_BF16;
    if (c.scale_dtype == "f16") return TBLOB_DTYPE_F16;
    return TBLOB_DTYPE_F32;
  }
  return c.mode == "nvfp4" ? TBLOB_DTYPE_F8_E4M3 : TBLOB_DTYPE_F8_E8M0;
}

QuantScheme scheme_of(const std::string &mode) {
  if (mode == "affine") return QuantScheme::kMlxAffine;
  if (mode == "mxfp4") return QuantScheme::kMxfp4;
  if (mode == "mxfp8") return QuantScheme::kMxfp8;
  if (mode == "nvfp4") return QuantScheme::kNvfp4;
  return QuantScheme::kInvalid;
}

TEST(DequantMlx, ManifestPresent) {
  ASSERT_TRUE(manifest().ok) << "no fixtures in " << data_dir()
                             << " (run tests/oracles/gen_mlx_fixtures.py)";
  EXPECT_GE(manifest().cases.size(), 70u);
}

TEST(DequantMlx, AllFixturesBitExact) {
  ASSERT_TRUE(manifest().ok);
  size_t checked = 0;
  for (const Case &c : manifest().cases) {
    SCOPED_TRACE(c.name);
    MiniSafetensors blob, exp;
    ASSERT_TRUE(blob.load(data_dir() + "/mlx/" + c.name + ".safetensors"));
    ASSERT_TRUE(exp.load(data_dir() + "/mlx_expected/" + c.name + ".safetensors"));
    // Ollama combined-blob layout and metadata.
    EXPECT_EQ(blob.meta("group_size"), std::to_string(c.group));
    EXPECT_FALSE(blob.meta("quant_type").empty());
    MiniTensor w, s, b, g;
    ASSERT_TRUE(blob.find("w", &w));
    ASSERT_TRUE(blob.find("w.scale", &s));
    EXPECT_EQ(w.dtype, "U32");
    // Copy each range into guarded memory: reading one byte past any range faults.
    GuardedBytes gw(w.data, w.bytes), gs(s.data, s.bytes);
    std::unique_ptr<GuardedBytes> gb, gg;
    QuantDesc d;
    d.scheme = scheme_of(c.mode);
    d.bits = c.bits;
    d.group_size = c.group;
    d.scale_dtype = scale_dtype_of(c);
    d.special = manifest_special();
    d.rows = c.rows;
    d.cols = c.cols;
    d.data = gw.data();
    d.data_bytes = w.bytes;
    d.scales = gs.data();
    d.scales_bytes = s.bytes;
    if (c.mode == "affine") {
      ASSERT_TRUE(blob.find("w.bias", &b));
      gb.reset(new GuardedBytes(b.data, b.bytes));
      d.bias_dtype = d.scale_dtype;
      d.biases = gb->data();
      d.biases_bytes = b.bytes;
    } else {
      EXPECT_FALSE(blob.find("w.bias", &b));
    }
    if (c.global_mode != "none") {
      ASSERT_TRUE(blob.find("w.global_scale", &g));
      EXPECT_EQ(g.dtype, "F32");
      gg.reset(new GuardedBytes(g.data, g.bytes));
      d.global_scale = gg->data();
      d.global_scale_bytes = g.bytes;
      d.global_scale_mode = c.global_mode == "multiplier" ? GlobalScaleMode::kMultiplier
                                                          : GlobalScaleMode::kMlxAmax;
    }
    ASSERT_EQ(validate_desc(d), TBLOB_OK);
    static const char *kExpName[3] = {"w", "w.f16", "w.bf16"};
    static const char *kExpDtype[3] = {"F32", "F16", "BF16"};
    for (int slot = 0; slot < 3; ++slot) {
      MiniTensor e;
      ASSERT_TRUE(exp.find(kExpName[slot], &e));
      ASSERT_EQ(e.dtype, kExpDtype[slot]);
      std::vector<uint8_t> got;
      ASSERT_EQ(run(d, out_dtype_of(slot), &got), TBLOB_OK);
      ASSERT_EQ(got.size(), e.bytes);
      EXPECT_EQ(compare_outputs(c.name, slot, got.data(), e.data, c.rows * c.cols), 0u);
      ++checked;
    }
  }
  EXPECT_EQ(checked, manifest().cases.size() * 3);
}

// Every row range gives the same bytes as the matching slice of the whole tensor, and the
// kernel writes nothing past its output.
TEST(DequantMlx, RowRangesMatchWholeTensor) {
  ASSERT_TRUE(manifest().ok);
  for (const Case &c : manifest().cases) {
    if (c.name != "affine_b3_g64_bf16" && c.name != "affine_b5_g32_f16" &&
        c.name != "mxfp4_bf16" && c.name != "nvfp4_gs_multiplier" &&
        c.name != "affine_b4_g32_bf16_3d" && c.name != "mxfp8_codes") {
      continue;
    }
    SCOPED_TRACE(c.name);
    MiniSafetensors blob;
    ASSERT_TRUE(blob.load(data_dir() + "/mlx/" + c.name + ".safetensors"));
    MiniTensor w, s, b, g;
    ASSERT_TRUE(blob.find("w", &w));
    ASSERT_TRUE(blob.find("w.scale", &s));
    QuantDesc d;
    d.scheme = scheme_of(c.mode);
    d.bits = c.bits;
    d.group_size = c.group;
    d.scale_dtype = scale_dtype_of(c);
    d.special = manifest_special();
    d.rows = c.rows;
    d.cols = c.cols;
    d.data = w.data;
    d.data_bytes = w.bytes;
    d.scales = s.data;
    d.scales_bytes = s.bytes;
    if (blob.find("w.bias", &b)) {
      d.bias_dtype = d.scale_dtype;
      d.biases = b.data;
      d.biases_bytes = b.bytes;
    }
    if (blob.find("w.global_scale", &g)) {
      d.global_scale = g.data;
      d.global_scale_bytes = g.bytes;
      d.global_scale_mode = GlobalScaleMode::kMultiplier;
    }
    for (int slot = 0; slot < 3; ++slot) {
      const uint32_t odt = out_dtype_of(slot);
      const uint64_t es = dequant_out_size(odt);
      std::vector<uint8_t> full;
      ASSERT_EQ(run(d, odt, &full), TBLOB_OK);
      for (uint64_t rb = 0; rb <= d.rows; ++rb) {
        for (uint64_t re = rb; re <= d.rows; ++re) {
          const uint64_t n = (re - rb) * d.cols * es;
          std::vector<uint8_t> part(n + 16, 0x5A);
          ASSERT_EQ(dequantize_rows(d, odt, rb, re, part.data(), part.size()), TBLOB_OK);
          EXPECT_EQ(0, std::memcmp(part.data(), full.data() + rb * d.cols * es, n));
          for (size_t k = n; k < part.size(); ++k) ASSERT_EQ(part[k], 0x5A);
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Code tables (ml_dtypes, MLX) and f16/bf16 conversion (numpy, ml_dtypes)
// ---------------------------------------------------------------------------------------------
std::map<std::string, std::vector<uint32_t>> load_tables() {
  std::map<std::string, std::vector<uint32_t>> t;
  std::ifstream f(data_dir() + "/minifloat_tables.txt");
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    std::string name, hex;
    unsigned code;
    ss >> name >> code >> hex;
    auto &v = t[name];
    if (v.size() <= code) v.resize(code + 1);
    v[code] = static_cast<uint32_t>(std::strtoul(hex.c_str(), nullptr, 16));
  }
  return t;
}

void expect_table(const std::vector<uint32_t> &want, size_t n, uint32_t (*fn)(uint8_t),
                  const char *what) {
  ASSERT_EQ(want.size(), n) << what;
  for (size_t c = 0; c < n; ++c) {
    EXPECT_EQ(fn(static_cast<uint8_t>(c)), want[c]) << what << " code " << c;
  }
}

TEST(DequantTables, MlDtypesExact) {
  auto t = load_tables();
  ASSERT_FALSE(t.empty()) << "minifloat_tables.txt missing";
  // OCP semantics are ml_dtypes' semantics, NaN bit patterns included.
  expect_table(t["e4m3fn"], 256, [](uint8_t c) { return dq::e4m3_to_f32(c, false); }, "e4m3fn");
  expect_table(t["e5m2"], 256, [](uint8_t c) { return dq::e5m2_to_f32(c); }, "e5m2");
  expect_table(t["e8m0fnu"], 256, [](uint8_t c) { return dq::e8m0_to_f32(c, false, false); },
               "e8m0fnu");
  expect_table(t["e4m3fnuz"], 256, [](uint8_t c) { return dq::e4m3fnuz_to_f32(c); }, "e4m3fnuz");
  expect_table(t["e5m2fnuz"], 256, [](uint8_t c) { return dq::e5m2fnuz_to_f32(c); }, "e5m2fnuz");
  expect_table(t["e2m1fn"], 16, [](uint8_t c) { return dq::e2m1_to_f32(c); }, "e2m1fn");
  expect_table(t["f6_e2m3fn"], 64, [](uint8_t c) { return dq::f6_e2m3_to_f32(c); }, "f6_e2m3");
  expect_table(t["f6_e3m2fn"], 64, [](uint8_t c) { return dq::f6_e3m2_to_f32(c); }, "f6_e3m2");
}

TEST(DequantTables, MlxDecodersExact) {
  auto t = load_tables();
  ASSERT_EQ(t["mlx_e4m3"].size(), 256u);
  ASSERT_EQ(t["mlx_e8m0"].size(), 256u);
  const bool finite = (manifest_special() & kSpecE4M3MaxFinite) != 0;
  for (unsigned c = 0; c < 256; ++c) {
    const uint32_t want = t["mlx_e4m3"][c];
    const uint32_t got = dq::e4m3_to_f32(static_cast<uint8_t>(c), finite);
    if (f32_is_nan(want)) {
      EXPECT_TRUE(f32_is_nan(got)) << "code " << c;
    } else {
      EXPECT_EQ(got, want) << "code " << c;
    }
    EXPECT_EQ(dq::e8m0_to_f32(static_cast<uint8_t>(c), true, false), t["mlx_e8m0"][c])
        << "code " << c;
  }
  // The MLX that Ollama pins (<= 0.32.2) decodes 0x7F/0xFF to +-480 (section 7.5).
  EXPECT_EQ(dq::e4m3_to_f32(0x7F, true), 0x43F00000u);
  EXPECT_EQ(dq::e4m3_to_f32(0xFF, true), 0xC3F00000u);
}

TEST(DequantConvert, NumpyAndMlDtypesRounding) {
  std::ifstream f(data_dir() + "/convert_cases.txt");
  ASSERT_TRUE(f.good());
  std::string line;
  size_t n = 0;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    uint32_t u, h, b;
    ASSERT_EQ(std::sscanf(line.c_str(), "%x %x %x", &u, &h, &b), 3);
    const uint16_t gh = dq::f32_to_f16(u), gb = dq::f32_to_bf16(u);
    if (f32_is_nan(u)) {
      // Our NaN policy: quiet, same sign, top payload bits kept.
      EXPECT_TRUE(f16_is_nan(gh));
      EXPECT_TRUE(bf16_is_nan(gb));
      EXPECT_EQ(gh & 0x8000u, (u >> 16) & 0x8000u);
      EXPECT_EQ(gb, static_cast<uint16_t>((u >> 16) | 0x40u));
      EXPECT_EQ(gh, static_cast<uint16_t>(((u >> 16) & 0x8000u) | 0x7E00u | ((u >> 13) & 0x3FFu)));
    } else {
      EXPECT_EQ(gh, h) << std::hex << "f32 0x" << u;
      EXPECT_EQ(gb, b) << std::hex << "f32 0x" << u;
    }
    ++n;
  }
  EXPECT_GT(n, 5000u);
}

TEST(DequantConvert, HalfWideningExhaustive) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint32_t f = dq::f16_to_f32(static_cast<uint16_t>(h));
    if (f16_is_nan(static_cast<uint16_t>(h))) {
      EXPECT_TRUE(f32_is_nan(f));
      continue;
    }
    // Exact: narrowing the widened value gives the same bits back.
    ASSERT_EQ(dq::f32_to_f16(f), h) << h;
    ASSERT_EQ(dq::f32_to_bf16(dq::bf16_to_f32(static_cast<uint16_t>(h))), h) << h;
#if defined(__FLT16_MAX__) && (defined(__x86_64__) || defined(__aarch64__))
    _Float16 x;
    const uint16_t hb = static_cast<uint16_t>(h);
    std::memcpy(&x, &hb, 2);
    ASSERT_EQ(dq::f32_from_bits(f), static_cast<float>(x)) << h;
#endif
  }
#if defined(__FLT16_MAX__) && (defined(__x86_64__) || defined(__aarch64__))
  // Narrowing against the compiler's conversion on random and boundary f32 patterns.
  std::mt19937 rng(99);
  for (int i = 0; i < 2000000; ++i) {
    uint32_t u = rng();
    if (i & 1) u = (u & 0x87FFFFFFu) | 0x30000000u;  // concentrate near the f16 range
    if (f32_is_nan(u)) continue;
    const _Float16 x = static_cast<_Float16>(dq::f32_from_bits(u));
    uint16_t want;
    std::memcpy(&want, &x, 2);
    ASSERT_EQ(dq::f32_to_f16(u), want) << std::hex << u;
  }
#endif
}

// The SIMD kernels round to f16 / bf16 by Veltkamp splitting (vec_kernels.h round_f16_split,
// affine8_bf16_split): c = x * (2^k + 1), c - (c - x) is x rounded to 24 - k significant bits,
// to nearest even. Against convert.h's integer roundings: f16 (k = 13) for every f32 multiple
// of 2^-24 below 65520 in binades at both ends and in the middle (both signs, zeros), bf16
// (k = 16) for whole binades from 2^-126 up to just below 2^111. Separate statements and
// no_contract keep the operations separately rounded (no FMA).
float veltkamp(float x, float c_factor) {
  const float c = dq::no_contract(x * c_factor);
  const float d = dq::no_contract(c - x);
  return dq::no_contract(c - d);
}
TEST(DequantConvert, VeltkampSplitRoundsToNearestEven) {
  auto check = [](uint32_t e, uint32_t step, float factor, bool f16) {
    for (uint32_t m = 0; m < (1u << 23); m += step) {
      for (uint32_t sign : {0u, 0x80000000u}) {
        const float x = dq::f32_from_bits(sign | (e << 23) | m);
        if (f16 && std::fabs(x) >= 65520.0f) return;
        const float want = f16 ? dq::round_to_f16(x) : dq::round_to_bf16(x);
        ASSERT_EQ(dq::f32_bits(veltkamp(x, factor)), dq::f32_bits(want)) << std::hexfloat << x;
      }
    }
  };
  // f16: multiples of 2^-24 (f16 subnormal steps below 2^-14), exponent field 103 = 2^-24
  for (uint32_t e : {103u, 104u, 110u, 112u, 113u, 114u, 127u, 141u, 142u}) {
    check(e, e < 126 ? 1u << (126 - e) : 1u, 8193.0f, true);
  }
  for (uint32_t e : {1u, 2u, 9u, 127u, 200u, 236u, 237u}) check(e, 1, 65537.0f, false);
  for (float z : {0.0f, -0.0f}) {
    EXPECT_EQ(dq::f32_bits(veltkamp(z, 8193.0f)), dq::f32_bits(z));
    EXPECT_EQ(dq::f32_bits(veltkamp(z, 65537.0f)), dq::f32_bits(z));
  }
  // Just past the bf16 range the split overflows (c = inf): the kernels' guards stay below.
  EXPECT_TRUE(std::isnan(veltkamp(dq::f32_from_bits(0x77FFFFFFu), 65537.0f)));
}

// ---------------------------------------------------------------------------------------------
// Hand vectors, shared/reference/ollama_mlx.md section 8
// ---------------------------------------------------------------------------------------------
std::vector<uint8_t> le_words(std::initializer_list<uint32_t> w) {
  std::vector<uint8_t> b;
  for (uint32_t x : w) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(x >> (8 * i)));
  }
  return b;
}
std::vector<uint8_t> le16s(std::initializer_list<uint16_t> v) {
  std::vector<uint8_t> b;
  for (uint16_t x : v) {
    b.push_back(static_cast<uint8_t>(x));
    b.push_back(static_cast<uint8_t>(x >> 8));
  }
  return b;
}

QuantDesc affine_desc(uint32_t bits, uint32_t group, uint64_t rows, uint64_t cols,
                      const std::vector<uint8_t> &data, const std::vector<uint8_t> &scales,
                      const std::vector<uint8_t> &biases, uint32_t sdt = TBLOB_DTYPE_BF16) {
  QuantDesc d;
  d.scheme = QuantScheme::kMlxAffine;
  d.bits = bits;
  d.group_size = group;
  d.scale_dtype = d.bias_dtype = sdt;
  d.special = kSpecialMlx;
  d.rows = rows;
  d.cols = cols;
  d.data = data.data();
  d.data_bytes = data.size();
  d.scales = scales.data();
  d.scales_bytes = scales.size();
  d.biases = biases.data();
  d.biases_bytes = biases.size();
  return d;
}

TEST(DequantHandVectors, AffineInt4) {
  auto data = le_words({0x76543210, 0xFEDCBA98, 0x00000000, 0xFFFFFFFF});
  auto sc = le16s({0x3F00}), bi = le16s({0xBF80});
  auto v = run_f32(affine_desc(4, 32, 1, 32, data, sc, bi));
  ASSERT_EQ(v.size(), 32u);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(v[i], -1.0f + 0.5f * i) << i;
  for (int i = 16; i < 24; ++i) EXPECT_EQ(v[i], -1.0f);
  for (int i = 24; i < 32; ++i) EXPECT_EQ(v[i], 6.5f);
  // g = 64: append more words.
  auto data64 = le_words({0x76543210, 0xFEDCBA98, 0x00000000, 0xFFFFFFFF,
                          0x76543210, 0xFEDCBA98, 0x00000000, 0xFFFFFFFF});
  auto v64 = run_f32(affine_desc(4, 64, 1, 64, data64, sc, bi));
  for (int i = 0; i < 32; ++i) EXPECT_EQ(v64[i + 32], v[i]);
  // Negative scale: codes 8, 15, 0, ... -> 0, -1.75, 2, 2, ...
  auto dn = le_words({0x000000F8, 0, 0, 0});
  auto vn = run_f32(affine_desc(4, 32, 1, 32, dn, le16s({0xBE80}), le16s({0x4000})));
  const float want[8] = {0, -1.75f, 2, 2, 2, 2, 2, 2};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(vn[i], want[i]) << i;
  EXPECT_EQ(dq::f32_bits(vn[0]), 0u);  // -2 + 2 = +0
}

TEST(DequantHandVectors, AffineInt8) {
  auto data = le_words({0x80FF0100, 0, 0, 0, 0, 0, 0, 0});
  auto v = run_f32(affine_desc(8, 32, 1, 32, data, le16s({0x3E80}), le16s({0xC200})));
  EXPECT_EQ(v[0], -32.0f);
  EXPECT_EQ(v[1], -31.75f);
  EXPECT_EQ(v[2], 31.75f);
  EXPECT_EQ(v[3], 0.0f);
}

TEST(DequantHandVectors, AffineOddWidths) {
  auto one = le16s({0x3F80}), zero = le16s({0x0000});
  // b = 3: codes j mod 8, words 0x88FAC688, 0xC688FAC6, 0xFAC688FA.
  auto d3 = le_words({0x88FAC688, 0xC688FAC6, 0xFAC688FA});
  auto v3 = run_f32(affine_desc(3, 32, 1, 32, d3, one, zero));
  for (int j = 0; j < 32; ++j) EXPECT_EQ(v3[j], static_cast<float>(j % 8)) << j;
  // b = 5: codes 31..24 <-> bytes DF 77 BE 75 C6 (one pack; pad the row to 32 codes).
  std::vector<uint8_t> d5 = {0xDF, 0x77, 0xBE, 0x75, 0xC6};
  d5.resize(20, 0);
  auto v5 = run_f32(affine_desc(5, 32, 1, 32, d5, one, zero));
  for (int j = 0; j < 8; ++j) EXPECT_EQ(v5[j], 31.0f - j) << j;
  // b = 6: codes 1, 2, 3, 63 <-> bytes 81 30 FC.
  std::vector<uint8_t> d6 = {0x81, 0x30, 0xFC};
  d6.resize(24, 0);
  auto v6 = run_f32(affine_desc(6, 32, 1, 32, d6, one, zero));
  EXPECT_EQ(v6[0], 1.0f);
  EXPECT_EQ(v6[1], 2.0f);
  EXPECT_EQ(v6[2], 3.0f);
  EXPECT_EQ(v6[3], 63.0f);
  // b = 2: word 0xE4E4E4E4 <-> codes 0, 1, 2, 3 repeated.
  auto d2 = le_words({0xE4E4E4E4, 0xE4E4E4E4});
  auto v2 = run_f32(affine_desc(2, 32, 1, 32, d2, one, zero));
  for (int j = 0; j < 32; ++j) EXPECT_EQ(v2[j], static_cast<float>(j % 4)) << j;
}

QuantDesc fp_desc(QuantScheme s, uint32_t group, uint64_t cols, const std::vector<uint8_t> &data,
                  const std::vector<uint8_t> &scales, uint32_t special = kSpecialMlx) {
  QuantDesc d;
  d.scheme = s;
  d.group_size = group;
  d.scale_dtype = s == QuantScheme::kNvfp4 ? TBLOB_DTYPE_F8_E4M3 : TBLOB_DTYPE_F8_E8M0;
  d.special = special;
  d.rows = 1;
  d.cols = cols;
  d.data = data.data();
  d.data_bytes = data.size();
  d.scales = scales.data();
  d.scales_bytes = scales.size();
  return d;
}

TEST(DequantHandVectors, Mxfp4Nvfp4Mxfp8) {
  auto w = le_words({0xF7A18290, 0, 0, 0});
  // mxfp4, E8M0 0x80 = 2.0.
  auto v = run_f32(fp_desc(QuantScheme::kMxfp4, 32, 32, w, {0x80}));
  const float mx4[8] = {0, -1, 2, -0.0f, 1, -2, 12, -12};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(dq::f32_bits(v[i]), dq::f32_bits(mx4[i])) << i;
  // nvfp4, E4M3 0x3C = 1.5 (g = 16: two words per group).
  auto w16 = le_words({0xF7A18290, 0});
  auto n = run_f32(fp_desc(QuantScheme::kNvfp4, 16, 16, w16, {0x3C}));
  const float nv[8] = {0, -0.75f, 1.5f, -0.0f, 0.75f, -1.5f, 9, -9};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(dq::f32_bits(n[i]), dq::f32_bits(nv[i])) << i;
  // nvfp4 with Ollama's .global_scale 0.01f: 9 -> 0.0899999961f.
  const std::vector<uint8_t> s3c = {0x3C};
  QuantDesc dg = fp_desc(QuantScheme::kNvfp4, 16, 16, w16, s3c);
  const float gval = 0.01f;
  uint8_t gbytes[4];
  std::memcpy(gbytes, &gval, 4);
  dg.global_scale = gbytes;
  dg.global_scale_bytes = 4;
  dg.global_scale_mode = GlobalScaleMode::kMultiplier;
  auto ng = run_f32(dg);
  EXPECT_EQ(ng[6], 0.0899999961f);
  EXPECT_EQ(ng[6], 9.0f * 0.01f);
  // MLX convention: global_scale 26.88 gives the same factor 26.88 / 2688.
  const float amax = 26.88f;
  std::memcpy(gbytes, &amax, 4);
  dg.global_scale_mode = GlobalScaleMode::kMlxAmax;
  auto na = run_f32(dg);
  EXPECT_NEAR(na[6], 0.09f, 1e-7f);
  // mxfp8: bytes 00 38 B8 C0, E8M0 0x7E = 0.5 -> 0, 0.5, -0.5, -1.
  auto w8 = le_words({0xC0B83800, 0, 0, 0, 0, 0, 0, 0});
  auto m8 = run_f32(fp_desc(QuantScheme::kMxfp8, 32, 32, w8, {0x7E}));
  EXPECT_EQ(m8[0], 0.0f);
  EXPECT_EQ(m8[1], 0.5f);
  EXPECT_EQ(m8[2], -0.5f);
  EXPECT_EQ(m8[3], -1.0f);
}

TEST(DequantHandVectors, ScaleSpotValues) {
  struct {
    uint8_t code;
    float value;
  } e4[] = {{0x00, 0.0f},  {0x01, 0.001953125f}, {0x03, 0.005859375f}, {0x08, 0.015625f},
            {0x38, 1.0f},  {0x3C, 1.5f},        {0x40, 2.0f},         {0x7E, 448.0f},
            {0x7F, 480.0f}, {0x80, -0.0f},      {0xB8, -1.0f},        {0xFE, -448.0f}};
  for (auto &p : e4) {
    EXPECT_EQ(dq::e4m3_to_f32(p.code, true), dq::f32_bits(p.value)) << int(p.code);
  }
  EXPECT_TRUE(f32_is_nan(dq::e4m3_to_f32(0x7F, false)));  // OCP
  EXPECT_TRUE(f32_is_nan(dq::e4m3_to_f32(0xFF, false)));
  EXPECT_EQ(dq::e8m0_to_f32(0x00, true, false), 0x00400000u);  // 2^-127
  EXPECT_EQ(dq::f32_from_bits(dq::e8m0_to_f32(0x01, true, false)), std::ldexp(1.0f, -126));
  EXPECT_EQ(dq::f32_from_bits(dq::e8m0_to_f32(0x7E, true, false)), 0.5f);
  EXPECT_EQ(dq::f32_from_bits(dq::e8m0_to_f32(0x7F, true, false)), 1.0f);
  EXPECT_EQ(dq::f32_from_bits(dq::e8m0_to_f32(0x80, true, false)), 2.0f);
  EXPECT_EQ(dq::f32_from_bits(dq::e8m0_to_f32(0xFE, true, false)), std::ldexp(1.0f, 127));
  EXPECT_EQ(dq::e8m0_to_f32(0xFF, true, false), 0x7F800000u);       // MLX: +inf
  EXPECT_TRUE(f32_is_nan(dq::e8m0_to_f32(0xFF, false, false)));     // OCP: NaN
  EXPECT_EQ(dq::e8m0_to_f32(0x00, true, true), 0u);                 // mistral.rs: 0.0
  // 2^-127 underflows to 0 in f16 output, stays exact in bf16.
  EXPECT_EQ(dq::f32_to_f16(0x00400000u), 0u);
  EXPECT_EQ(dq::f32_to_bf16(0x00400000u), 0x0040u);
}

// Special-value presets change decoding of the stored scale / code bytes.
TEST(DequantHandVectors, SpecialValuePresets) {
  auto w = le_words({0x22222222, 0, 0, 0});  // FP4 code 2 = 1.0 in 8 slots
  // E8M0 0xFF scale: MLX +inf, OCP NaN; 0x00: 2^-127 (MLX, OCP) or 0 (mistral.rs).
  EXPECT_EQ(run_f32(fp_desc(QuantScheme::kMxfp4, 32, 32, w, {0xFF}, kSpecialMlx))[0], INFINITY);
  EXPECT_TRUE(std::isnan(run_f32(fp_desc(QuantScheme::kMxfp4, 32, 32, w, {0xFF}, kSpecialOcp))[0]));
  EXPECT_EQ(run_f32(fp_desc(QuantScheme::kMxfp4, 32, 32, w, {0x00}, kSpecialOcp))[0],
            std::ldexp(1.0f, -127));
  EXPECT_EQ(run_f32(fp_desc(QuantScheme::kMxfp4, 32, 32, w, {0x00}, kSpecialMistralRs))[0], 0.0f);
  // 0 * inf = NaN: written as the canonical quiet NaN in every output dtype.
  std::vector<uint8_t> raw;
  ASSERT_EQ(run(fp_desc(QuantScheme::kMxfp4, 32, 32, w, {0xFF}, kSpecialMlx), TBLOB_DTYPE_F32,
                &raw), TBLOB_OK);
  uint32_t bits;
  std::memcpy(&bits, raw.data() + 4 * 8, 4);  // element 8: code 0
  EXPECT_EQ(bits, 0x7FC00000u);
  ASSERT_EQ(run(fp_desc(QuantScheme::kMxfp4, 32, 32, w, {0xFF}, kSpecialMlx), TBLOB_DTYPE_BF16,
                &raw), TBLOB_OK);
  EXPECT_EQ(raw[16] | (raw[17] << 8), 0x7FC0);
  ASSERT_EQ(run(fp_desc(QuantScheme::kMxfp4, 32, 32, w, {0xFF}, kSpecialMlx), TBLOB_DTYPE_F16,
                &raw), TBLOB_OK);
  EXPECT_EQ(raw[16] | (raw[17] << 8), 0x7E00);
  // nvfp4 scale 0x7F: 480 (MLX as pinned by Ollama) or NaN (OCP).
  auto w16 = le_words({0x22222222, 0});
  EXPECT_EQ(run_f32(fp_desc(QuantScheme::kNvfp4, 16, 16, w16, {0x7F}, kSpecialMlx))[0], 480.0f);
  EXPECT_TRUE(std::isnan(run_f32(fp_desc(QuantScheme::kNvfp4, 16, 16, w16, {0x7F}, kSpecialOcp))[0]));
}

// ---------------------------------------------------------------------------------------------
// Plain dtypes
// ---------------------------------------------------------------------------------------------
QuantDesc plain_desc(QuantScheme s, uint64_t rows, uint64_t cols, const std::vector<uint8_t> &b,
                     uint32_t special = kSpecialOcp) {
  QuantDesc d;
  d.scheme = s;
  d.special = special;
  d.rows = rows;
  d.cols = cols;
  d.data = b.data();
  d.data_bytes = b.size();
  return d;
}

TEST(DequantPlain, F8AllCodesAllOutputs) {
  std::vector<uint8_t> codes(256);
  for (int i = 0; i < 256; ++i) codes[i] = static_cast<uint8_t>(i);
  struct {
    QuantScheme s;
    uint32_t (*fn)(uint8_t);
  } kinds[] = {
      {QuantScheme::kF8E4M3, [](uint8_t c) { return dq::e4m3_to_f32(c, false); }},
      {QuantScheme::kF8E5M2, [](uint8_t c) { return dq::e5m2_to_f32(c); }},
      {QuantScheme::kF8E8M0, [](uint8_t c) { return dq::e8m0_to_f32(c, false, false); }},
      {QuantScheme::kF8E4M3Fnuz, [](uint8_t c) { return dq::e4m3fnuz_to_f32(c); }},
      {QuantScheme::kF8E5M2Fnuz, [](uint8_t c) { return dq::e5m2fnuz_to_f32(c); }},
  };
  for (auto &k : kinds) {
    GuardedBytes g(codes);
    QuantDesc d = plain_desc(k.s, 16, 16, codes);
    d.data = g.data();
    std::vector<uint8_t> f32, f16, bf16;
    ASSERT_EQ(run(d, TBLOB_DTYPE_F32, &f32), TBLOB_OK);
    ASSERT_EQ(run(d, TBLOB_DTYPE_F16, &f16), TBLOB_OK);
    ASSERT_EQ(run(d, TBLOB_DTYPE_BF16, &bf16), TBLOB_OK);
    for (int c = 0; c < 256; ++c) {
      const uint32_t want = k.fn(static_cast<uint8_t>(c));
      uint32_t g32;
      uint16_t g16, gb;
      std::memcpy(&g32, f32.data() + 4 * c, 4);
      std::memcpy(&g16, f16.data() + 2 * c, 2);
      std::memcpy(&gb, bf16.data() + 2 * c, 2);
      EXPECT_EQ(g32, want) << quant_scheme_name(k.s) << " " << c;
      EXPECT_EQ(g16, dq::f32_to_f16(want)) << quant_scheme_name(k.s) << " " << c;
      EXPECT_EQ(gb, dq::f32_to_bf16(want)) << quant_scheme_name(k.s) << " " << c;
    }
  }
  // MLX preset on a plain E4M3 tensor: 0x7F = 480.
  auto v = run_f32(plain_desc(QuantScheme::kF8E4M3, 1, 256, codes, kSpecialMlx));
  EXPECT_EQ(v[0x7F], 480.0f);
  EXPECT_EQ(v[0xFF], -480.0f);
  // E5M2 is the top byte of an f16: f16 output is exact for every non-NaN code.
  std::vector<uint8_t> h;
  ASSERT_EQ(run(plain_desc(QuantScheme::kF8E5M2, 1, 256, codes), TBLOB_DTYPE_F16, &h), TBLOB_OK);
  for (int c = 0; c < 256; ++c) {
    if ((c & 0x7C) == 0x7C && (c & 3)) continue;  // NaN codes
    EXPECT_EQ(h[2 * c] | (h[2 * c + 1] << 8), c << 8) << c;
  }
}

TEST(DequantPlain, F4LowNibbleFirstAcrossRows) {
  // 3 rows x 3 cols = 9 codes would be odd: use 2 x 3 (6 codes, rows start mid-byte).
  std::vector<uint8_t> b = {0x10, 0x32, 0x54};  // codes 0,1,2,3,4,5
  QuantDesc d = plain_desc(QuantScheme::kF4E2M1, 2, 3, b);
  auto v = run_f32(d);
  const float want[6] = {0, 0.5f, 1, 1.5f, 2, 3};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(v[i], want[i]) << i;
  std::vector<uint8_t> row1;
  ASSERT_EQ(run(d, TBLOB_DTYPE_F32, &row1, 1, 2), TBLOB_OK);
  float r1[3];
  std::memcpy(r1, row1.data(), 12);
  EXPECT_EQ(r1[0], 1.5f);
  EXPECT_EQ(r1[2], 3.0f);
  b = {0xF8, 0xDC};  // codes 8 (-0), 15 (-6), 12 (-2), 13 (-3)
  auto n = run_f32(plain_desc(QuantScheme::kF4E2M1, 1, 4, b));
  EXPECT_EQ(dq::f32_bits(n[0]), 0x80000000u);
  EXPECT_EQ(n[1], -6.0f);
  EXPECT_EQ(n[2], -2.0f);
  EXPECT_EQ(n[3], -3.0f);
}

TEST(DequantPlain, FloatPassthrough) {
  // f16 -> f16 and bf16 -> bf16 copy bits exactly (signalling NaN included).
  std::vector<uint8_t> h = le16s({0x3C00, 0x7C01, 0xFE12, 0x0001, 0x7BFF, 0x8000});
  std::vector<uint8_t> out;
  ASSERT_EQ(run(plain_desc(QuantScheme::kF16, 2, 3, h), TBLOB_DTYPE_F16, &out), TBLOB_OK);
  EXPECT_EQ(out, h);
  ASSERT_EQ(run(plain_desc(QuantScheme::kBF16, 3, 2, h), TBLOB_DTYPE_BF16, &out), TBLOB_OK);
  EXPECT_EQ(out, h);
  // f16 -> f32 exact; f16 -> bf16 rounds once (65504 -> 65536 in bf16).
  auto f = run_f32(plain_desc(QuantScheme::kF16, 1, 6, h));
  EXPECT_EQ(f[0], 1.0f);
  EXPECT_EQ(f[3], std::ldexp(1.0f, -24));
  EXPECT_EQ(f[4], 65504.0f);
  ASSERT_EQ(run(plain_desc(QuantScheme::kF16, 1, 6, h), TBLOB_DTYPE_BF16, &out), TBLOB_OK);
  EXPECT_EQ(out[8] | (out[9] << 8), 0x4780);  // 65504 -> 65536
  // f32 -> bf16 / f16 round to nearest even; NaN stays NaN.
  std::vector<uint8_t> f32b = le_words({0x3F808000u, 0x3F818000u, 0x7F800001u, 0x477FF000u});
  ASSERT_EQ(run(plain_desc(QuantScheme::kF32, 1, 4, f32b), TBLOB_DTYPE_BF16, &out), TBLOB_OK);
  EXPECT_EQ(out[0] | (out[1] << 8), 0x3F80);  // tie -> even
  EXPECT_EQ(out[2] | (out[3] << 8), 0x3F82);  // tie -> even (up)
  EXPECT_EQ(out[4] | (out[5] << 8), 0x7FC0);  // sNaN -> quiet NaN, not inf
  ASSERT_EQ(run(plain_desc(QuantScheme::kF32, 1, 4, f32b), TBLOB_DTYPE_F16, &out), TBLOB_OK);
  EXPECT_EQ(out[6] | (out[7] << 8), 0x7C00);  // 65520 -> inf
}

// ---------------------------------------------------------------------------------------------
// Affine against an independent bit-stream model on random descriptors (every width, several
// group sizes, every scale dtype), with guarded buffers.
// ---------------------------------------------------------------------------------------------
TEST(DequantAffine, RandomAgainstBitModel) {
  std::mt19937_64 rng(4242);
  const uint32_t widths[] = {1, 2, 3, 4, 5, 6, 8};
  const uint32_t sdts[] = {TBLOB_DTYPE_BF16, TBLOB_DTYPE_F16, TBLOB_DTYPE_F32};
  for (int iter = 0; iter < 300; ++iter) {
    const uint32_t bits = widths[rng() % 7];
    const uint32_t sdt = sdts[rng() % 3];
    const uint32_t group = 32u << (rng() % 3);
    const uint64_t cols = group * (1 + rng() % 3);
    const uint64_t rows = 1 + rng() % 4;
    std::vector<uint8_t> data(rows * cols * bits / 8);
    for (auto &x : data) x = static_cast<uint8_t>(rng());
    const uint64_t ng = rows * (cols / group);
    const uint32_t ss = sdt == TBLOB_DTYPE_F32 ? 4 : 2;
    std::vector<uint8_t> sc(ng * ss), bi(ng * ss);
    std::vector<float> sv(ng), bv(ng);
    for (uint64_t i = 0; i < ng; ++i) {
      float s = std::ldexp(static_cast<float>(static_cast<int>(rng() % 2001) - 1000) / 1000.0f,
                           static_cast<int>(rng() % 20) - 10);
      float b = static_cast<float>(static_cast<int>(rng() % 20001) - 10000) / 100.0f;
      uint32_t su = dq::f32_bits(s), bu = dq::f32_bits(b);
      if (sdt == TBLOB_DTYPE_BF16) {
        su = dq::f32_to_bf16(su);
        bu = dq::f32_to_bf16(bu);
      } else if (sdt == TBLOB_DTYPE_F16) {
        su = dq::f32_to_f16(su);
        bu = dq::f32_to_f16(bu);
      }
      std::memcpy(sc.data() + i * ss, &su, ss);
      std::memcpy(bi.data() + i * ss, &bu, ss);
      sv[i] = sdt == TBLOB_DTYPE_BF16 ? dq::f32_from_bits(dq::bf16_to_f32(static_cast<uint16_t>(su)))
              : sdt == TBLOB_DTYPE_F16 ? dq::f32_from_bits(dq::f16_to_f32(static_cast<uint16_t>(su)))
                                       : dq::f32_from_bits(su);
      bv[i] = sdt == TBLOB_DTYPE_BF16 ? dq::f32_from_bits(dq::bf16_to_f32(static_cast<uint16_t>(bu)))
              : sdt == TBLOB_DTYPE_F16 ? dq::f32_from_bits(dq::f16_to_f32(static_cast<uint16_t>(bu)))
                                       : dq::f32_from_bits(bu);
    }
    GuardedBytes gd(data), gs(sc), gb(bi);
    QuantDesc d = affine_desc(bits, group, rows, cols, data, sc, bi, sdt);
    d.data = gd.data();
    d.scales = gs.data();
    d.biases = gb.data();
    ASSERT_EQ(validate_desc(d), TBLOB_OK);
    auto got = run_f32(d);
    // Model: a big-integer view of each row's bits; MLX arithmetic in double, rounded per op.
    const uint64_t row_bytes = cols * bits / 8;
    for (uint64_t r = 0; r < rows; ++r) {
      for (uint64_t j = 0; j < cols; ++j) {
        uint32_t q = 0;
        for (uint32_t k = 0; k < bits; ++k) {
          const uint64_t bit = j * bits + k;
          q |= static_cast<uint32_t>((data[r * row_bytes + bit / 8] >> (bit % 8)) & 1u) << k;
        }
        const uint64_t gi = r * (cols / group) + j / group;
        auto rnd = [&](double x) {
          const float f = static_cast<float>(x);  // x is exact in double for these inputs
          if (sdt == TBLOB_DTYPE_BF16) return dq::round_to_bf16(f);
          if (sdt == TBLOB_DTYPE_F16) return dq::round_to_f16(f);
          return f;
        };
        const float t = rnd(static_cast<double>(q) * sv[gi]);
        const float want = rnd(static_cast<double>(t) + bv[gi]);
        ASSERT_EQ(dq::f32_bits(got[r * cols + j]), dq::f32_bits(want))
            << "bits " << bits << " sdt " << sdt << " r " << r << " j " << j << " q " << q;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Bad descriptors and bad calls: a clear status, never a crash.
// ---------------------------------------------------------------------------------------------
class BadDesc : public ::testing::Test {
 protected:
  void SetUp() override {
    data.assign(4 * 64 * 4 / 8, 0x11);  // 4 rows x 64 cols int4
    sc.assign(4 * 2 * 2, 0x3F);          // 4 x 2 groups bf16
    bi.assign(4 * 2 * 2, 0x00);
    d = affine_desc(4, 32, 4, 64, data, sc, bi);
    ASSERT_EQ(validate_desc(d), TBLOB_OK);
  }
  Status call(const QuantDesc &x) {
    out.assign(1 << 12, 0);
    return dequantize_rows(x, TBLOB_DTYPE_F32, 0, x.rows, out.data(), out.size());
  }
  std::vector<uint8_t> data, sc, bi, out;
  QuantDesc d;
};

TEST_F(BadDesc, Scheme) {
  QuantDesc x = d;
  x.scheme = QuantScheme::kInvalid;
  EXPECT_EQ(call(x), kStatusQuantScheme);
  x.scheme = static_cast<QuantScheme>(99);
  EXPECT_EQ(call(x), kStatusQuantScheme);
  x = d;
  x.bits = 7;
  EXPECT_EQ(call(x), kStatusQuantScheme);
  x.bits = 0;
  EXPECT_EQ(call(x), kStatusQuantScheme);
  x.bits = 9;
  EXPECT_EQ(call(x), kStatusQuantScheme);
  x = d;
  x.special = 1u << 7;
  EXPECT_EQ(call(x), kStatusQuantScheme);
  x = d;
  x.global_scale_mode = static_cast<GlobalScaleMode>(9);
  EXPECT_EQ(call(x), kStatusQuantScheme);
  QuantDesc m = fp_desc(QuantScheme::kMxfp4, 32, 32, data, {0x7F});
  m.bits = 8;
  EXPECT_EQ(validate_desc(m), kStatusQuantScheme);
}

TEST_F(BadDesc, GroupSize) {
  QuantDesc x = d;
  x.group_size = 0;
  EXPECT_EQ(call(x), kStatusQuantGroupSize);
  x.group_size = 48;  // does not divide 64
  EXPECT_EQ(call(x), kStatusQuantGroupSize);
  std::vector<uint8_t> w(16), s1(1);
  QuantDesc m = fp_desc(QuantScheme::kMxfp4, 64, 32, w, s1);  // mxfp4 needs 32
  EXPECT_EQ(validate_desc(m), kStatusQuantGroupSize);
  m = fp_desc(QuantScheme::kNvfp4, 32, 32, w, s1);  // nvfp4 needs 16
  EXPECT_EQ(validate_desc(m), kStatusQuantGroupSize);
  QuantDesc p = plain_desc(QuantScheme::kF8E4M3, 1, 16, w);
  p.group_size = 16;
  EXPECT_EQ(validate_desc(p), kStatusQuantGroupSize);
}

TEST_F(BadDesc, Packing) {
  // 3-bit codes, 8 per group of 8 columns: 24 bits per row is not whole uint32 words.
  std::vector<uint8_t> w(3), s(2), b(2);
  QuantDesc x = affine_desc(3, 8, 1, 8, w, s, b);
  EXPECT_EQ(validate_desc(x), kStatusQuantPacking);
  std::vector<uint8_t> f4(2);
  EXPECT_EQ(validate_desc(plain_desc(QuantScheme::kF4E2M1, 3, 1, f4)), kStatusQuantPacking);
}

TEST_F(BadDesc, Lengths) {
  QuantDesc x = d;
  x.data_bytes -= 1;
  EXPECT_EQ(call(x), kStatusQuantDataSize);
  x = d;
  x.data_bytes += 4;
  EXPECT_EQ(call(x), kStatusQuantDataSize);
  x = d;
  x.scales_bytes -= 2;  // scales too short
  EXPECT_EQ(call(x), kStatusQuantScaleSize);
  x = d;
  x.scales_bytes += 2;  // too long
  EXPECT_EQ(call(x), kStatusQuantScaleSize);
  x = d;
  x.biases_bytes = 0;
  EXPECT_EQ(call(x), kStatusQuantBiasSize);
  x = d;
  x.data = nullptr;
  EXPECT_EQ(call(x), TBLOB_E_INVALID_ARGUMENT);
  x = d;
  x.rows = UINT64_MAX;
  x.cols = 64;
  EXPECT_EQ(validate_desc(x), TBLOB_E_SHAPE_OVERFLOW);
  x.rows = (UINT64_MAX / 64) / 2;  // rows*cols fits, *bits does not
  EXPECT_EQ(validate_desc(x), TBLOB_E_SHAPE_OVERFLOW);
}

TEST_F(BadDesc, ScaleAndBiasDtypes) {
  QuantDesc x = d;
  x.scale_dtype = x.bias_dtype = TBLOB_DTYPE_F8_E8M0;  // not an affine scale
  EXPECT_EQ(call(x), kStatusQuantScaleDtype);
  x.scale_dtype = x.bias_dtype = TBLOB_DTYPE_U8;
  EXPECT_EQ(call(x), kStatusQuantScaleDtype);
  x = d;
  x.bias_dtype = TBLOB_DTYPE_F16;  // differs from the scale dtype
  EXPECT_EQ(call(x), kStatusQuantBiasDtype);
  x.bias_dtype = TBLOB_DTYPE_INVALID;  // affine without bias
  EXPECT_EQ(call(x), kStatusQuantBiasDtype);
  std::vector<uint8_t> w(16), s1(1);
  QuantDesc m = fp_desc(QuantScheme::kMxfp4, 32, 32, w, s1);
  m.scale_dtype = TBLOB_DTYPE_F8_E4M3;  // mxfp4 scales are E8M0
  EXPECT_EQ(validate_desc(m), kStatusQuantScaleDtype);
  m = fp_desc(QuantScheme::kNvfp4, 16, 32, w, {1, 2});
  m.scale_dtype = TBLOB_DTYPE_F8_E8M0;  // nvfp4 scales are E4M3
  EXPECT_EQ(validate_desc(m), kStatusQuantScaleDtype);
  m = fp_desc(QuantScheme::kMxfp4, 32, 32, w, s1);
  m.bias_dtype = TBLOB_DTYPE_BF16;  // fp modes have no bias
  EXPECT_EQ(validate_desc(m), kStatusQuantBiasDtype);
  m = fp_desc(QuantScheme::kMxfp4, 32, 32, w, s1);
  m.biases = s1.data();
  EXPECT_EQ(validate_desc(m), kStatusQuantBiasDtype);
  QuantDesc p = plain_desc(QuantScheme::kF8E4M3, 1, 16, w);
  p.scale_dtype = TBLOB_DTYPE_F32;
  EXPECT_EQ(validate_desc(p), kStatusQuantScaleDtype);
  p = plain_desc(QuantScheme::kF8E4M3, 1, 16, w);
  p.scales = s1.data();
  EXPECT_EQ(validate_desc(p), kStatusQuantScaleDtype);
}

TEST_F(BadDesc, GlobalScale) {
  const float g = 2.0f;
  uint8_t gb[4];
  std::memcpy(gb, &g, 4);
  QuantDesc x = d;  // affine: no global scale allowed
  x.global_scale = gb;
  x.global_scale_bytes = 4;
  x.global_scale_mode = GlobalScaleMode::kMultiplier;
  EXPECT_EQ(call(x), kStatusQuantGlobalScale);
  std::vector<uint8_t> w(8), s1(1);
  QuantDesc n = fp_desc(QuantScheme::kNvfp4, 16, 16, w, s1);
  n.global_scale = gb;
  n.global_scale_bytes = 4;
  EXPECT_EQ(validate_desc(n), kStatusQuantGlobalScale);  // data without a mode
  n.global_scale_mode = GlobalScaleMode::kMultiplier;
  EXPECT_EQ(validate_desc(n), TBLOB_OK);
  n.global_scale_bytes = 8;  // two elements
  EXPECT_EQ(validate_desc(n), kStatusQuantGlobalScale);
  n.global_scale_bytes = 4;
  n.global_scale = nullptr;  // mode without data
  EXPECT_EQ(validate_desc(n), kStatusQuantGlobalScale);
}

TEST_F(BadDesc, CallArguments) {
  out.assign(4 * 64 * 4, 0);
  EXPECT_EQ(dequantize_rows(d, TBLOB_DTYPE_F32, 0, 4, out.data(), out.size()), TBLOB_OK);
  EXPECT_EQ(dequantize_rows(d, TBLOB_DTYPE_I8, 0, 4, out.data(), out.size()),
            kStatusDequantOutDtype);
  EXPECT_EQ(dequantize_rows(d, TBLOB_DTYPE_F64, 0, 4, out.data(), out.size()),
            kStatusDequantOutDtype);
  EXPECT_EQ(dequantize_rows(d, TBLOB_DTYPE_F32, 3, 2, out.data(), out.size()), TBLOB_E_RANGE);
  EXPECT_EQ(dequantize_rows(d, TBLOB_DTYPE_F32, 0, 5, out.data(), out.size()), TBLOB_E_RANGE);
  EXPECT_EQ(dequantize_rows(d, TBLOB_DTYPE_F32, 0, 4, out.data(), out.size() - 1),
            TBLOB_E_BUFFER_TOO_SMALL);
  EXPECT_EQ(dequantize_rows(d, TBLOB_DTYPE_BF16, 0, 4, out.data(), 4 * 64 * 2), TBLOB_OK);
  EXPECT_EQ(dequantize_rows(d, TBLOB_DTYPE_F32, 0, 4, nullptr, out.size()),
            TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(dequantize_rows(d, TBLOB_DTYPE_F32, 2, 2, nullptr, 0), TBLOB_OK);  // empty range
  uint64_t need = 0;
  EXPECT_EQ(dequant_output_bytes(d, TBLOB_DTYPE_F16, 1, 3, &need), TBLOB_OK);
  EXPECT_EQ(need, 2u * 64 * 2);
  // Empty tensor: valid, nothing to do.
  QuantDesc e = d;
  e.rows = 0;
  e.data = nullptr;
  e.data_bytes = e.scales_bytes = e.biases_bytes = 0;
  e.scales = e.biases = nullptr;
  EXPECT_EQ(dequantize_rows(e, TBLOB_DTYPE_F32, 0, 0, nullptr, 0), TBLOB_OK);
}

// Random descriptors: validation never crashes, and whatever validates decodes inside its
// guarded ranges for every output dtype.
TEST(DequantFuzzLite, RandomDescriptors) {
  std::mt19937_64 rng(777);
  const QuantScheme schemes[] = {QuantScheme::kMlxAffine, QuantScheme::kMxfp4,
                                 QuantScheme::kMxfp8,     QuantScheme::kNvfp4,
                                 QuantScheme::kF8E4M3,    QuantScheme::kF8E5M2,
                                 QuantScheme::kF8E8M0,    QuantScheme::kF4E2M1,
                                 QuantScheme::kF16,       QuantScheme::kBF16,
                                 QuantScheme::kF32,       QuantScheme::kF8E4M3Fnuz};
  const uint32_t dts[] = {0, TBLOB_DTYPE_F32, TBLOB_DTYPE_F16, TBLOB_DTYPE_BF16,
                          TBLOB_DTYPE_F8_E8M0, TBLOB_DTYPE_F8_E4M3, TBLOB_DTYPE_U8};
  int valid = 0;
  for (int iter = 0; iter < 4000; ++iter) {
    QuantDesc d;
    d.scheme = schemes[rng() % 12];
    // A well-formed descriptor for the scheme, then (sometimes) one field broken.
    switch (d.scheme) {
      case QuantScheme::kMlxAffine:
        d.bits = 1 + static_cast<uint32_t>(rng() % 8);
        if (d.bits == 7) d.bits = 8;
        d.group_size = 32u << (rng() % 3);
        d.scale_dtype = dts[1 + rng() % 3];
        d.bias_dtype = d.scale_dtype;
        break;
      case QuantScheme::kMxfp4:
      case QuantScheme::kMxfp8:
        d.group_size = 32;
        d.scale_dtype = TBLOB_DTYPE_F8_E8M0;
        break;
      case QuantScheme::kNvfp4:
        d.group_size = 16;
        d.scale_dtype = TBLOB_DTYPE_F8_E4M3;
        if (rng() % 2) d.global_scale_mode = static_cast<GlobalScaleMode>(1 + rng() % 2);
        break;
      default:
        break;
    }
    d.special = static_cast<uint32_t>(rng() % 8);
    d.rows = rng() % 4;
    d.cols = (d.group_size ? d.group_size : 1) * (rng() % 5);
    if (d.scheme == QuantScheme::kF4E2M1 && (d.rows * d.cols) % 2) d.cols += 1;
    switch (rng() % 16) {
      case 0: d.bits = static_cast<uint32_t>(rng() % 10); break;
      case 1: d.group_size = static_cast<uint32_t>(rng() % 70); break;
      case 2: d.scale_dtype = dts[rng() % 7]; break;
      case 3: d.bias_dtype = dts[rng() % 7]; break;
      case 4: d.cols += 1 + rng() % 15; break;
      default: break;
    }
    // Honest lengths most of the time, off by a little sometimes.
    const uint32_t bits = quant_element_bits(d) ? quant_element_bits(d) : 4;
    uint64_t db = d.rows * d.cols * bits / 8;
    uint64_t groups = d.group_size ? d.rows * (d.cols / d.group_size) : 0;
    auto esz = [](uint32_t dt) -> uint64_t {
      return dt == TBLOB_DTYPE_F32 ? 4 : (dt == TBLOB_DTYPE_F16 || dt == TBLOB_DTYPE_BF16) ? 2
                                                                                            : 1;
    };
    uint64_t sb = d.scale_dtype ? groups * esz(d.scale_dtype) : 0;
    uint64_t bb = d.bias_dtype ? groups * esz(d.bias_dtype) : 0;
    if (rng() % 10 == 0) db += rng() % 3;
    if (rng() % 10 == 0) sb = sb ? sb - 1 : 1;
    std::vector<uint8_t> data(db), sc(sb), bi(bb);
    for (auto &x : data) x = static_cast<uint8_t>(rng());
    for (auto &x : sc) x = static_cast<uint8_t>(rng());
    for (auto &x : bi) x = static_cast<uint8_t>(rng());
    GuardedBytes gd(data), gs(sc), gbi(bi);
    const float gval = 0.5f;
    uint8_t graw[4];
    std::memcpy(graw, &gval, 4);
    GuardedBytes gg(graw, 4);
    d.data = gd.data();
    d.data_bytes = db;
    d.scales = gs.data();
    d.scales_bytes = sb;
    d.biases = gbi.data();
    d.biases_bytes = bb;
    if (d.global_scale_mode != GlobalScaleMode::kNone) {
      d.global_scale = gg.data();
      d.global_scale_bytes = 4;
    }
    if (validate_desc(d) != TBLOB_OK) continue;
    ++valid;
    for (int slot = 0; slot < 3; ++slot) {
      std::vector<uint8_t> out;
      ASSERT_EQ(run(d, out_dtype_of(slot), &out), TBLOB_OK);
    }
  }
  EXPECT_GT(valid, 1500);
}

}  // namespace
