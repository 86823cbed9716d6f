// Differential test: the zero-allocation scanner (tblob_st_scan events, names decoded with
// tblob_json_unescape) sees the same table as simdjson's DOM parse of the same header,
// and both equal what the generator wrote. Headers come from an in-process seeded
// generator (names with every JSON escape, surrogate pairs and raw UTF-8, all dtypes,
// scalars and zero-size shapes, unknown fields, escaped field names and dtypes, metadata in
// every form, random whitespace) and, when TBLOB_GEN_DIR is set, from the files and
// manifest of tests/oracles/gen_headers.py. A mutation pass checks that the scanner and
// simdjson agree on which mutated headers are valid JSON.
#include <simdjson.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "st_builder.h"
#include "tensorblob.h"

namespace {

struct Tensor {
  std::string name;
  std::string dtype;
  std::vector<uint64_t> shape;
  uint64_t begin = 0, end = 0;
  bool operator==(const Tensor &o) const {
    return name == o.name && dtype == o.dtype && shape == o.shape && begin == o.begin && end == o.end;
  }
};
struct Table {
  std::vector<Tensor> tensors;                              // header order
  bool has_metadata = false;                                // present and not null
  std::vector<std::pair<std::string, std::string>> metadata;  // header order
};

std::string hex_name(const std::string &s) {
  std::string out;
  char b[8];
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7F && c != '\\') {
      out += static_cast<char>(c);
    } else {
      std::snprintf(b, sizeof(b), "\\x%02X", c);
      out += b;
    }
  }
  return out;
}

std::ostream &operator<<(std::ostream &os, const Tensor &t) {
  os << "{\"" << hex_name(t.name) << "\" " << t.dtype << " [";
  for (size_t i = 0; i < t.shape.size(); ++i) os << (i ? "," : "") << t.shape[i];
  return os << "] [" << t.begin << "," << t.end << "]}";
}

// ------------------------------------------------------------------------------------------
// Generator.
class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}

  uint64_t u(uint64_t n) { return n ? rng_() % n : 0; }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }

  // A random decoded name (valid UTF-8), as code points.
  std::vector<uint32_t> name_cps() {
    static const uint32_t kPool[] = {'"', '\\', '/', '\b', '\f', '\n', '\r', '\t', 0x00, 0x01, 0x1F, 0x7F, ' ',
                                     0xE9, 0xDF, 0xFF, 0x100, 0x7FF, 0x800, 0x4E2D, 0x2028, 0x2029, 0xFEFF,
                                     0xFFFD, 0xFFFF, 0xE000, 0xD7FF, 0x10000, 0x1F600, 0x1F916, 0x10FFFF};
    std::vector<uint32_t> cps;
    const size_t n = u(14);
    for (size_t i = 0; i < n; ++i) {
      if (chance(0.6)) {
        static const char kAscii[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-:[]{},@ #";
        cps.push_back(static_cast<uint8_t>(kAscii[u(sizeof(kAscii) - 1)]));
      } else {
        cps.push_back(kPool[u(sizeof(kPool) / sizeof(kPool[0]))]);
      }
    }
    return cps;
  }

  static void utf8(uint32_t cp, std::string *out) {
    if (cp < 0x80) {
      *out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      *out += static_cast<char>(0xC0 | (cp >> 6));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      *out += static_cast<char>(0xE0 | (cp >> 12));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      *out += static_cast<char>(0xF0 | (cp >> 18));
      *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  void hex4(uint32_t v, std::string *out) {
    static const char kLo[] = "0123456789abcdef", kUp[] = "0123456789ABCDEF";
    const char *digits = chance(0.5) ? kLo : kUp;
    *out += "\\u";
    for (int s = 12; s >= 0; s -= 4) *out += digits[(v >> s) & 0xF];
  }

  // JSON string contents for the code points, with a random choice of spelling per char.
  std::string encode(const std::vector<uint32_t> &cps, double escape_p = 0.3) {
    std::string s;
    for (uint32_t cp : cps) {
      const bool must = cp == '"' || cp == '\\' || cp < 0x20;
      if (!must && !chance(escape_p)) {
        utf8(cp, &s);
        continue;
      }
      const char *short_esc = nullptr;
      switch (cp) {
        case '"': short_esc = "\\\""; break;
        case '\\': short_esc = "\\\\"; break;
        case '/': short_esc = "\\/"; break;
        case '\b': short_esc = "\\b"; break;
        case '\f': short_esc = "\\f"; break;
        case '\n': short_esc = "\\n"; break;
        case '\r': short_esc = "\\r"; break;
        case '\t': short_esc = "\\t"; break;
        default: break;
      }
      if (short_esc && chance(0.7)) {
        s += short_esc;
      } else if (cp < 0x10000) {
        hex4(cp, &s);
      } else {
        const uint32_t v = cp - 0x10000;
        hex4(0xD800 + (v >> 10), &s);
        hex4(0xDC00 + (v & 0x3FF), &s);
      }
    }
    return s;
  }
  std::string encode_ascii(const std::string &text, double p) {
    std::vector<uint32_t> cps(text.begin(), text.end());
    return encode(cps, p);
  }

  std::string ws() {
    static const char kWs[] = " \t\n\r";
    std::string s;
    if (chance(0.3)) {
      const size_t n = 1 + u(3);
      for (size_t i = 0; i < n; ++i) s += kWs[u(4)];
    }
    return s;
  }

  std::string random_json(int depth) {
    const uint64_t k = u(depth > 0 ? 9 : 7);
    switch (k) {
      case 0: return "null";
      case 1: return chance(0.5) ? "true" : "false";
      case 2: return std::to_string(static_cast<int64_t>(rng_() % 2000000) - 1000000);
      case 3: {
        static const char *kNums[] = {"0", "-0", "1.5", "-2.5e-3", "1E+10", "0.0", "18446744073709551615", "-1e300"};
        return kNums[u(8)];
      }
      case 4:
      case 5:
      case 6: return "\"" + encode(name_cps()) + "\"";
      case 7: {
        std::string s = "[" + ws();
        const size_t n = u(4);
        for (size_t i = 0; i < n; ++i) s += (i ? "," + ws() : "") + random_json(depth - 1) + ws();
        return s + "]";
      }
      default: {
        std::string s = "{" + ws();
        const size_t n = u(4);
        for (size_t i = 0; i < n; ++i)
          s += (i ? "," + ws() : "") + "\"" + encode(name_cps()) + "\"" + ws() + ":" + ws() + random_json(depth - 1) + ws();
        return s + "}";
      }
    }
  }

  // One complete file and the table it holds.
  std::string file(Table *truth) {
    const auto &dts = stb::dtype_table();
    const size_t nt = u(12);
    std::set<std::string> used;
    struct Entry {
      std::string key;  // JSON
      std::string value;
    };
    std::vector<Tensor> tensors;
    std::vector<std::string> raw_names;
    while (tensors.size() < nt) {
      std::vector<uint32_t> cps = name_cps();
      std::string decoded;
      for (uint32_t cp : cps) utf8(cp, &decoded);
      if (decoded == "__metadata__" || used.count(decoded)) continue;
      used.insert(decoded);
      Tensor t;
      t.name = decoded;
      const auto &d = dts[u(dts.size())];
      t.dtype = d.first;
      const uint64_t r = chance(0.03) ? 65 + u(6) : u(5);
      uint64_t el = 1;
      for (uint64_t i = 0; i < r; ++i) {
        uint64_t dim = r > 8 ? (chance(0.9) ? 1 : 2) : u(5);
        t.shape.push_back(dim);
        el *= dim;
      }
      if (chance(0.05)) {  // huge dimensions behind a zero
        t.shape.insert(t.shape.begin(), 0);
        t.shape.push_back(UINT64_MAX);
        el = 0;
      }
      if ((el * d.second) % 8) {
        t.shape.push_back(8);
        el *= 8;
      }
      t.end = el * d.second / 8;  // size for now
      tensors.push_back(t);
      raw_names.push_back(encode(cps));
    }
    // Layout order independent of key order.
    std::vector<size_t> layout(tensors.size());
    for (size_t i = 0; i < layout.size(); ++i) layout[i] = i;
    std::shuffle(layout.begin(), layout.end(), rng_);
    uint64_t at = 0;
    for (size_t i : layout) {
      const uint64_t size = tensors[i].end;
      tensors[i].begin = at;
      at += size;
      tensors[i].end = at;
    }
    std::vector<Entry> members;
    for (size_t i = 0; i < tensors.size(); ++i) {
      const Tensor &t = tensors[i];
      std::vector<std::string> fields;
      auto key = [&](const char *k) { return "\"" + encode_ascii(k, chance(0.1) ? 0.3 : 0.0) + "\""; };
      fields.push_back(key("dtype") + ws() + ":" + ws() + "\"" + encode_ascii(t.dtype, chance(0.1) ? 0.4 : 0.0) + "\"");
      std::string shape = "[" + ws();
      for (size_t k = 0; k < t.shape.size(); ++k) shape += (k ? "," + ws() : "") + std::to_string(t.shape[k]) + ws();
      fields.push_back(key("shape") + ws() + ":" + ws() + shape + "]");
      fields.push_back(key("data_offsets") + ws() + ":" + ws() + "[" + ws() + std::to_string(t.begin) + ws() + "," +
                       ws() + std::to_string(t.end) + ws() + "]");
      if (chance(0.2)) {
        std::string extra;
        do {
          extra = encode(name_cps());
        } while (extra == "dtype" || extra == "shape" || extra == "data_offsets" || extra.find('\\') != std::string::npos);
        fields.push_back("\"" + extra + "\"" + ws() + ":" + ws() + random_json(3));
      }
      std::shuffle(fields.begin(), fields.end(), rng_);
      std::string v = "{" + ws();
      for (size_t k = 0; k < fields.size(); ++k) v += (k ? "," + ws() : "") + fields[k] + ws();
      members.push_back({"\"" + raw_names[i] + "\"", v + "}"});
    }
    truth->tensors = tensors;
    truth->metadata.clear();
    truth->has_metadata = false;
    const uint64_t meta_kind = u(4);  // absent, null, {}, pairs
    if (meta_kind) {
      std::string v;
      if (meta_kind == 1) {
        v = "null";
      } else {
        truth->has_metadata = true;
        std::set<std::string> keys;
        const size_t n = meta_kind == 2 ? 0 : 1 + u(5);
        v = "{" + ws();
        for (size_t k = 0; k < n; ++k) {
          std::vector<uint32_t> kc = name_cps(), vc = name_cps();
          std::string ks, vs;
          for (uint32_t cp : kc) utf8(cp, &ks);
          for (uint32_t cp : vc) utf8(cp, &vs);
          if (keys.count(ks)) continue;
          keys.insert(ks);
          truth->metadata.push_back({ks, vs});
          v += std::string(truth->metadata.size() > 1 ? "," + ws() : "") + "\"" + encode(kc) + "\"" + ws() + ":" + ws() +
               "\"" + encode(vc) + "\"" + ws();
        }
        v += "}";
      }
      const std::string key = "\"" + encode_ascii("__metadata__", chance(0.15) ? 0.3 : 0.0) + "\"";
      members.insert(members.begin() + static_cast<long>(u(members.size() + 1)), {key, v});
    }
    std::string h = (chance(0.15) ? std::string(" \n") : std::string()) + "{" + ws();
    for (size_t k = 0; k < members.size(); ++k)
      h += (k ? "," + ws() : "") + members[k].key + ws() + ":" + ws() + members[k].value + ws();
    h += "}" + ws();
    if (chance(0.5)) h = stb::pad8(h);
    std::string data(static_cast<size_t>(at), '\0');
    for (auto &c : data) c = static_cast<char>(rng_());
    return stb::file(h, data);
  }

  std::mt19937_64 &rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
};

// ------------------------------------------------------------------------------------------
// The scanner's view.
std::string unescape(const char *p, size_t n) {
  size_t need = 0;
  tblob_json_unescape(p, n, nullptr, 0, &need, nullptr);
  std::string out(need, '\0');
  if (tblob_json_unescape(p, n, need ? &out[0] : nullptr, need, &need, nullptr) != TBLOB_OK) return "<unescape failed>";
  return out;
}

std::vector<uint64_t> parse_dims(const char *p, size_t n) {
  std::vector<uint64_t> d;
  size_t i = 0;
  while (i < n) {
    if (p[i] >= '0' && p[i] <= '9') {
      uint64_t v = 0;
      while (i < n && p[i] >= '0' && p[i] <= '9') v = v * 10 + static_cast<uint64_t>(p[i++] - '0');
      d.push_back(v);
    } else {
      ++i;
    }
  }
  return d;
}

int scan_cb(void *user, const tblob_scan_event *e) {
  Table *t = static_cast<Table *>(user);
  if (e->kind == TBLOB_SCAN_TENSOR) {
    Tensor x;
    x.name = unescape(e->name, e->name_len);
    x.dtype = tblob_dtype_name(e->dtype) ? tblob_dtype_name(e->dtype) : "?";
    if (e->shape) {
      x.shape.assign(e->shape, e->shape + e->rank);
    } else {
      x.shape = parse_dims(e->shape_json, e->shape_json_len);
    }
    x.begin = e->data_begin;
    x.end = e->data_end;
    t->tensors.push_back(x);
  } else {
    t->has_metadata = true;
    t->metadata.push_back({unescape(e->name, e->name_len), unescape(e->value, e->value_len)});
  }
  return 0;
}

tblob_status scan_view(const std::string &f, Table *out, tblob_diag *d) {
  tblob_scan_result r = TBLOB_SCAN_RESULT_INIT;
  tblob_st_scan(reinterpret_cast<const uint8_t *>(f.data()), f.size(), nullptr, nullptr, nullptr, nullptr, 0, &r, nullptr);
  std::vector<unsigned char> scratch(tblob_st_scan_scratch_bytes(r.tensor_count, r.metadata_count));
  return tblob_st_scan(reinterpret_cast<const uint8_t *>(f.data()), f.size(), nullptr, scan_cb, out, scratch.data(),
                       scratch.size(), nullptr, d);
}

// ------------------------------------------------------------------------------------------
// simdjson's view of the header bytes.
simdjson::error_code dom_view(simdjson::dom::parser &parser, const std::string &header, Table *out) {
  simdjson::padded_string ps(header);
  simdjson::dom::element doc;
  simdjson::error_code e = parser.parse(ps).get(doc);
  if (e) return e;
  simdjson::dom::object top;
  if ((e = doc.get_object().get(top))) return e;
  for (simdjson::dom::key_value_pair kv : top) {
    const std::string key(kv.key);
    if (key == "__metadata__") {
      if (kv.value.is_null()) continue;
      simdjson::dom::object m;
      if ((e = kv.value.get_object().get(m))) return e;
      out->has_metadata = true;
      for (simdjson::dom::key_value_pair p : m) {
        std::string_view v;
        if ((e = p.value.get_string().get(v))) return e;
        out->metadata.push_back({std::string(p.key), std::string(v)});
      }
      continue;
    }
    simdjson::dom::object o;
    if ((e = kv.value.get_object().get(o))) return e;
    Tensor t;
    t.name = key;
    for (simdjson::dom::key_value_pair f : o) {
      if (f.key == "dtype") {
        std::string_view v;
        if ((e = f.value.get_string().get(v))) return e;
        t.dtype = std::string(v);
      } else if (f.key == "shape" || f.key == "data_offsets") {
        simdjson::dom::array a;
        if ((e = f.value.get_array().get(a))) return e;
        std::vector<uint64_t> vals;
        for (simdjson::dom::element x : a) {
          uint64_t v;
          if ((e = x.get_uint64().get(v))) return e;
          vals.push_back(v);
        }
        if (f.key == "shape") {
          t.shape = vals;
        } else {
          if (vals.size() != 2) return simdjson::INCORRECT_TYPE;
          t.begin = vals[0];
          t.end = vals[1];
        }
      }
    }
    out->tensors.push_back(t);
  }
  return simdjson::SUCCESS;
}

std::string header_of(const std::string &f) {
  uint64_t n = 0;
  std::memcpy(&n, f.data(), 8);
  return f.substr(8, static_cast<size_t>(n));
}

void expect_same(const Table &a, const Table &b, const char *an, const char *bn, const std::string &what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(a.tensors.size(), b.tensors.size()) << an << " vs " << bn;
  for (size_t i = 0; i < a.tensors.size(); ++i) EXPECT_EQ(a.tensors[i], b.tensors[i]) << an << " vs " << bn << " #" << i;
  // The scanner reports entries only: "__metadata__": {} and null/absent look the same.
  if (std::strcmp(an, "scanner") != 0) {
    EXPECT_EQ(a.has_metadata, b.has_metadata) << an << " vs " << bn;
  }
  EXPECT_EQ(a.metadata, b.metadata) << an << " vs " << bn;
}

// The model (decoded names, table by offsets) holds the same tensors.
void expect_model(const std::string &f, const Table &truth, const std::string &what) {
  SCOPED_TRACE(what);
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(tblob_model_open_memory(f.data(), f.size(), nullptr, &m, &d), TBLOB_OK) << d.message;
  ASSERT_EQ(tblob_model_tensor_count(m), truth.tensors.size());
  for (const Tensor &t : truth.tensors) {
    uint64_t idx;
    ASSERT_EQ(tblob_tensor_find(m, t.name.data(), t.name.size(), &idx, nullptr), TBLOB_OK) << t;
    tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
    ASSERT_EQ(tblob_tensor_at(m, idx, &info, nullptr), TBLOB_OK);
    Tensor x;
    x.name.assign(info.name, info.name_len);
    x.dtype = tblob_dtype_name(info.dtype);
    if (info.rank) x.shape.assign(info.shape, info.shape + info.rank);
    x.begin = info.data_offset;
    x.end = info.data_offset + info.data_length;
    EXPECT_EQ(x, t);
  }
  ASSERT_EQ(tblob_metadata_count(m), truth.metadata.size());
  for (size_t i = 0; i < truth.metadata.size(); ++i) {
    const char *k, *v;
    size_t kl, vl;
    ASSERT_EQ(tblob_metadata_at(m, i, &k, &kl, &v, &vl, nullptr), TBLOB_OK);
    EXPECT_EQ(std::string(k, kl), truth.metadata[i].first);
    EXPECT_EQ(std::string(v, vl), truth.metadata[i].second);
  }
  tblob_model_close(m);
}

}  // namespace

TEST(Differential, generated_headers_scanner_equals_simdjson) {
  simdjson::dom::parser parser;
  Gen g(0x7B10B5EEDull);
  size_t tensors = 0, with_meta = 0, escapes = 0;
  for (int i = 0; i < 3000; ++i) {
    Table truth;
    const std::string f = g.file(&truth);
    const std::string what = "case " + std::to_string(i);
    Table scanned, dom;
    tblob_diag d = TBLOB_DIAG_INIT;
    ASSERT_EQ(scan_view(f, &scanned, &d), TBLOB_OK) << what << ": " << d.message << "\n" << header_of(f);
    const simdjson::error_code e = dom_view(parser, header_of(f), &dom);
    ASSERT_EQ(e, simdjson::SUCCESS) << what << ": " << simdjson::error_message(e);
    expect_same(scanned, dom, "scanner", "simdjson", what);
    expect_same(scanned, truth, "scanner", "generator", what);
    expect_model(f, truth, what);
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << what << " header: " << hex_name(header_of(f));
      break;
    }
    tensors += truth.tensors.size();
    with_meta += truth.has_metadata;
    escapes += header_of(f).find("\\u") != std::string::npos;
  }
  EXPECT_GT(tensors, 10000u);
  EXPECT_GT(with_meta, 1000u);
  EXPECT_GT(escapes, 2000u);
}

// Mutated headers: the scanner and simdjson agree on whether the header is valid JSON.
TEST(Differential, mutated_headers_agree_on_validity) {
  simdjson::dom::parser parser;
  Gen g(424242);
  static const char kBytes[] = "{}[],:\" \t\n\\u/bfnrtxe.-+0aZ\x7F\x01";
  static const unsigned char kHigh[] = {0x80, 0xBF, 0xC0, 0xC2, 0xE0, 0xED, 0xF0, 0xF4, 0xF5, 0xFF};
  size_t invalid = 0, valid = 0;
  for (int i = 0; i < 4000; ++i) {
    Table truth;
    std::string f = g.file(&truth);
    uint64_t n = 0;
    std::memcpy(&n, f.data(), 8);
    if (n == 0) continue;
    const int edits = 1 + static_cast<int>(g.u(3));
    for (int k = 0; k < edits; ++k) {
      const size_t at = 8 + static_cast<size_t>(g.u(n));
      if (g.chance(0.15)) {
        f[at] = static_cast<char>(kHigh[g.u(sizeof(kHigh))]);
      } else {
        f[at] = kBytes[g.u(sizeof(kBytes) - 1)];
      }
    }
    const std::string h = header_of(f);
    Table scanned, dom;
    tblob_diag d = TBLOB_DIAG_INIT;
    const tblob_status s = scan_view(f, &scanned, &d);
    const simdjson::error_code e = dom_view(parser, h, &dom);
    // simdjson refuses integers above 2^64-1 and some huge exponents (NUMBER_ERROR)
    // errors) that are still valid JSON; skip those.
    simdjson::dom::element raw;
    const simdjson::error_code pe = parser.parse(simdjson::padded_string(h)).get(raw);
    if (pe == simdjson::NUMBER_ERROR) continue;
    const bool json_ok = pe == simdjson::SUCCESS;
    const bool grammar_error = s == TBLOB_E_JSON || s == TBLOB_E_UTF8 || s == TBLOB_E_LIMIT_JSON_DEPTH;
    SCOPED_TRACE("case " + std::to_string(i) + " " + tblob_status_name(s) + " " + d.message + " simdjson: " +
                 simdjson::error_message(pe) + "\nheader: " + hex_name(h));
    if (grammar_error) {
      EXPECT_FALSE(json_ok) << "scanner says not JSON, simdjson parses it";
      ++invalid;
    } else if (s == TBLOB_E_METADATA) {
      // Reported where found, like serde: the rest of the header may be anything.
    } else if (s == TBLOB_E_SCHEMA && h.find_first_not_of(" \t\r\n") != std::string::npos &&
               h[h.find_first_not_of(" \t\r\n")] != '{') {
      // Top level not an object: reported where found.
    } else {
      EXPECT_TRUE(json_ok) << "scanner accepted the JSON, simdjson does not";
      ++valid;
      if (s == TBLOB_OK && json_ok) {
        EXPECT_EQ(e, simdjson::SUCCESS);
        expect_same(scanned, dom, "scanner", "simdjson", "mutated");
      }
    }
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GT(invalid, 1000u);
  EXPECT_GT(valid, 100u);
}

// Files written by tests/oracles/gen_headers.py (independent generator, Python json).
TEST(Differential, gen_headers_py_files) {
  const char *dir = std::getenv("TBLOB_GEN_DIR");
  if (!dir) GTEST_SKIP() << "TBLOB_GEN_DIR not set (python3 not found at configure time)";
  simdjson::dom::parser mparser;
  simdjson::padded_string manifest;
  ASSERT_EQ(simdjson::padded_string::load(std::string(dir) + "/manifest.json").get(manifest), simdjson::SUCCESS);
  simdjson::dom::element mdoc;
  ASSERT_EQ(mparser.parse(manifest).get(mdoc), simdjson::SUCCESS);
  simdjson::dom::object files;
  ASSERT_EQ(mdoc["files"].get_object().get(files), simdjson::SUCCESS);
  simdjson::dom::parser parser;
  size_t count = 0;
  for (simdjson::dom::key_value_pair kv : files) {
    const std::string name(kv.key);
    std::ifstream in(std::string(dir) + "/" + name, std::ios::binary);
    ASSERT_TRUE(in) << name;
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string f = ss.str();
    // The manifest's view.
    Table truth;
    simdjson::dom::array ts;
    ASSERT_EQ(kv.value["tensors"].get_array().get(ts), simdjson::SUCCESS);
    for (simdjson::dom::element t : ts) {
      Tensor x;
      std::string_view sv;
      ASSERT_EQ(t["name"].get_string().get(sv), simdjson::SUCCESS);
      x.name = std::string(sv);
      ASSERT_EQ(t["dtype"].get_string().get(sv), simdjson::SUCCESS);
      x.dtype = std::string(sv);
      simdjson::dom::array a;
      ASSERT_EQ(t["shape"].get_array().get(a), simdjson::SUCCESS);
      for (simdjson::dom::element v : a) {
        uint64_t u;
        ASSERT_EQ(v.get_uint64().get(u), simdjson::SUCCESS);
        x.shape.push_back(u);
      }
      ASSERT_EQ(t["data_offsets"].get_array().get(a), simdjson::SUCCESS);
      std::vector<uint64_t> off;
      for (simdjson::dom::element v : a) {
        uint64_t u;
        ASSERT_EQ(v.get_uint64().get(u), simdjson::SUCCESS);
        off.push_back(u);
      }
      ASSERT_EQ(off.size(), 2u);
      x.begin = off[0];
      x.end = off[1];
      truth.tensors.push_back(x);
    }
    simdjson::dom::element meta;
    ASSERT_EQ(kv.value["metadata"].get(meta), simdjson::SUCCESS);
    if (!meta.is_null()) {
      truth.has_metadata = true;
      simdjson::dom::object mo;
      ASSERT_EQ(meta.get_object().get(mo), simdjson::SUCCESS);
      for (simdjson::dom::key_value_pair p : mo) {
        std::string_view v;
        ASSERT_EQ(p.value.get_string().get(v), simdjson::SUCCESS);
        truth.metadata.push_back({std::string(p.key), std::string(v)});
      }
    }
    Table scanned, dom;
    tblob_diag d = TBLOB_DIAG_INIT;
    ASSERT_EQ(scan_view(f, &scanned, &d), TBLOB_OK) << name << ": " << d.message;
    ASSERT_EQ(dom_view(parser, header_of(f), &dom), simdjson::SUCCESS) << name;
    // gen_headers.py records "{}" metadata as present and "null"/absent as null.
    expect_same(scanned, dom, "scanner", "simdjson", name);
    expect_same(scanned, truth, "scanner", "manifest", name);
    expect_model(f, truth, name);
    if (::testing::Test::HasFailure()) break;
    ++count;
  }
  EXPECT_GT(count, 0u);
}
