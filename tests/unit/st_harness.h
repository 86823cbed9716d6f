// Runs one safetensors byte string through every entry point and checks that they agree:
//  - tblob_model_open_memory,
//  - tblob_model_open on a temp file, in TBLOB_OPEN_MAP and TBLOB_OPEN_READ mode,
//  - tblob_st_scan with scratch (whole-table checks) and without (per-entry checks only),
// each with a callback collecting the events. For valid input it compares the tensors
// (names decoded, dtypes, shapes, offsets, bytes) and metadata with the expectation.
#pragma once
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../common/temp_tree.h"
#include "st_builder.h"
#include "tensorblob.h"

namespace sth {

// ------------------------------------------------------------------------------------------
// Temporary directory, removed recursively at exit.
class TempDir {
 public:
  TempDir() : path_(tt::make_temp_dir("tblob_test_")) {
    if (path_.empty()) {
      std::perror("mkdtemp");
      std::abort();
    }
  }
  ~TempDir() { tt::rm_rf(path_); }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::string &path() const { return path_; }
  std::string sub(const std::string &name) const { return path_ + "/" + name; }

  // Writes bytes to <dir>/<name> and returns the path.
  std::string write(const std::string &name, const std::string &bytes) const {
    const std::string p = sub(name);
    FILE *f = std::fopen(p.c_str(), "wb");
    if (!f) {
      std::perror(p.c_str());
      std::abort();
    }
    if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) std::abort();
    std::fclose(f);
    return p;
  }
  std::string mkdir(const std::string &name) const {
    const std::string p = sub(name);
    ::mkdir(p.c_str(), 0700);
    return p;
  }

 private:
  std::string path_;
};

inline TempDir &tmp() {
  static TempDir d;
  return d;
}

inline std::string unique_file(const std::string &bytes) {
  static int counter = 0;
  return tmp().write("case_" + std::to_string(counter++) + ".safetensors", bytes);
}

// ------------------------------------------------------------------------------------------
// Views.
struct Tensor {
  std::string name;  // decoded
  uint32_t dtype = 0;
  std::vector<uint64_t> shape;
  uint64_t begin = 0, end = 0;
  bool operator==(const Tensor &o) const {
    return name == o.name && dtype == o.dtype && shape == o.shape && begin == o.begin && end == o.end;
  }
};
struct Meta {
  std::string key, value;  // decoded
  bool operator==(const Meta &o) const { return key == o.key && value == o.value; }
};
inline std::ostream &operator<<(std::ostream &os, const Tensor &t) {
  os << "{name=\"" << t.name << "\" dtype=" << (tblob_dtype_name(t.dtype) ? tblob_dtype_name(t.dtype) : "?")
     << " shape=[";
  for (size_t i = 0; i < t.shape.size(); ++i) os << (i ? "," : "") << t.shape[i];
  return os << "] offsets=[" << t.begin << "," << t.end << "]}";
}
inline std::ostream &operator<<(std::ostream &os, const Meta &m) {
  return os << "{\"" << m.key << "\": \"" << m.value << "\"}";
}
struct View {
  std::vector<Tensor> tensors;
  std::vector<Meta> metadata;
};

inline std::string unescape(const char *p, size_t n) {
  size_t need = 0;
  tblob_status s = tblob_json_unescape(p, n, nullptr, 0, &need, nullptr);
  EXPECT_TRUE(s == TBLOB_OK || s == TBLOB_E_BUFFER_TOO_SMALL) << tblob_status_name(s);
  std::string out(need, '\0');
  s = tblob_json_unescape(p, n, need ? &out[0] : nullptr, need, &need, nullptr);
  EXPECT_EQ(s, TBLOB_OK) << tblob_status_name(s);
  out.resize(need);
  return out;
}

// Dims from a JSON array of unsigned integers (the scanner validated it).
inline std::vector<uint64_t> parse_dims(const char *p, size_t n) {
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

// Scan callback collecting a View (decoded); checks event invariants as it goes.
struct ScanCollector {
  View view;
  uint64_t next_tensor = 0, next_meta = 0;
  int stop_after = -1;  // cancel after this many events
  int events = 0;
};

inline int collect_event(void *user, const tblob_scan_event *e) {
  ScanCollector *c = static_cast<ScanCollector *>(user);
  EXPECT_GE(e->struct_size, sizeof(tblob_scan_event));
  std::string raw(e->name, e->name_len);
  std::string name = unescape(e->name, e->name_len);
  if (!e->name_has_escapes) {
    EXPECT_EQ(name, raw);
    EXPECT_EQ(raw.find('\\'), std::string::npos);
  }
  if (e->kind == TBLOB_SCAN_TENSOR) {
    EXPECT_EQ(e->index, c->next_tensor++);
    Tensor t;
    t.name = name;
    t.dtype = e->dtype;
    EXPECT_NE(e->shape_json, nullptr);
    std::vector<uint64_t> from_text = parse_dims(e->shape_json, e->shape_json_len);
    EXPECT_EQ(from_text.size(), e->rank);
    if (e->rank <= TBLOB_SCAN_INLINE_RANK) {
      EXPECT_TRUE(e->rank == 0 || e->shape != nullptr);
      if (e->shape) t.shape.assign(e->shape, e->shape + e->rank);
      EXPECT_EQ(t.shape, from_text);
    } else {
      EXPECT_EQ(e->shape, nullptr);
      t.shape = from_text;
    }
    t.begin = e->data_begin;
    t.end = e->data_end;
    EXPECT_EQ(e->value, nullptr);
    c->view.tensors.push_back(t);
  } else {
    EXPECT_EQ(e->kind, static_cast<uint32_t>(TBLOB_SCAN_METADATA));
    EXPECT_EQ(e->index, c->next_meta++);
    Meta m;
    m.key = name;
    EXPECT_NE(e->value, nullptr);
    m.value = unescape(e->value, e->value_len);
    if (!e->value_has_escapes) {
      EXPECT_EQ(m.value, std::string(e->value, e->value_len));
    }
    c->view.metadata.push_back(m);
  }
  ++c->events;
  return (c->stop_after >= 0 && c->events >= c->stop_after) ? 1 : 0;
}

struct Outcome {
  tblob_status status = TBLOB_OK;
  tblob_diag diag = TBLOB_DIAG_INIT;
  View view;                 // scan: events; open: the model (table order)
  tblob_scan_result result = TBLOB_SCAN_RESULT_INIT;
  std::string where;         // which entry point
};

inline Outcome scan(const std::string &bytes, const tblob_open_options *opts, bool with_scratch,
                    bool generous = false) {
  Outcome o;
  o.where = with_scratch ? (generous ? "st_scan(scratch+)" : "st_scan(scratch)") : "st_scan(no scratch)";
  const uint8_t *buf = reinterpret_cast<const uint8_t *>(bytes.data());
  std::vector<unsigned char> scratch;
  if (with_scratch) {
    // Counts from a first scan without scratch (or an upper bound).
    tblob_scan_result r0 = TBLOB_SCAN_RESULT_INIT;
    tblob_st_scan(buf, bytes.size(), opts, nullptr, nullptr, nullptr, 0, &r0, nullptr);
    uint64_t nt = r0.tensor_count, nm = r0.metadata_count;
    if (generous) {
      nt += 7;
      nm += 3;
    }
    const size_t need = tblob_st_scan_scratch_bytes(nt, nm);
    EXPECT_NE(need, SIZE_MAX);
    scratch.resize(need);
  }
  ScanCollector col;
  o.status = tblob_st_scan(buf, bytes.size(), opts, collect_event, &col,
                           with_scratch ? scratch.data() : nullptr, scratch.size(), &o.result, &o.diag);
  o.view = col.view;
  if (o.status == TBLOB_OK) {
    EXPECT_EQ(o.result.whole_table_checked, with_scratch ? 1u : 0u) << o.where;
    EXPECT_EQ(o.result.tensor_count, o.view.tensors.size()) << o.where;
    EXPECT_EQ(o.result.metadata_count, o.view.metadata.size()) << o.where;
    EXPECT_EQ(o.result.data_offset, 8 + o.result.header_bytes) << o.where;
  }
  return o;
}

// The model as seen through the API, with invariants checked. base: the file bytes.
inline View model_view(const tblob_model *m, const std::string &bytes, const std::string &where) {
  View v;
  EXPECT_EQ(tblob_model_format(m), static_cast<uint32_t>(TBLOB_FORMAT_SAFETENSORS)) << where;
  EXPECT_EQ(tblob_model_file_count(m), 1u) << where;
  uint64_t n = 0;
  if (bytes.size() >= 8) std::memcpy(&n, bytes.data(), 8);  // little-endian host
  const uint64_t count = tblob_model_tensor_count(m);
  uint64_t prev_b = 0, prev_e = 0;
  for (uint64_t i = 0; i < count; ++i) {
    tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
    tblob_diag d = TBLOB_DIAG_INIT;
    EXPECT_EQ(tblob_tensor_at(m, i, &info, &d), TBLOB_OK) << where;
    Tensor t;
    t.name.assign(info.name, info.name_len);
    t.dtype = info.dtype;
    if (info.rank) t.shape.assign(info.shape, info.shape + info.rank);
    t.begin = info.data_offset;
    t.end = info.data_offset + info.data_length;
    EXPECT_EQ(info.file_index, 0u) << where;
    EXPECT_EQ(info.file_offset, 8 + n + info.data_offset) << where;
    uint64_t el = 1;
    for (uint64_t dim : t.shape) el *= dim;
    EXPECT_EQ(info.element_count, el) << where << " " << t;
    const uint64_t bits = el * tblob_dtype_bits(info.dtype);
    EXPECT_EQ(info.data_length, bits / 8) << where << " " << t;
    // Table order: by (begin, end).
    if (i) {
      EXPECT_TRUE(prev_b < t.begin || (prev_b == t.begin && prev_e <= t.end)) << where;
    }
    prev_b = t.begin;
    prev_e = t.end;
    // Find by the decoded name gives this row.
    uint64_t idx = UINT64_MAX;
    EXPECT_EQ(tblob_tensor_find(m, t.name.data(), t.name.size(), &idx, nullptr), TBLOB_OK) << where << " " << t;
    EXPECT_EQ(idx, i) << where << " " << t;
    // Data: zero-copy view of exactly those bytes.
    const void *data = nullptr;
    uint64_t len = 0;
    EXPECT_EQ(tblob_tensor_data(m, i, &data, &len, nullptr), TBLOB_OK) << where;
    EXPECT_EQ(len, info.data_length) << where;
    if (len && info.file_offset + len <= bytes.size()) {
      EXPECT_EQ(std::memcmp(data, bytes.data() + info.file_offset, len), 0) << where << " " << t;
    }
    v.tensors.push_back(t);
  }
  const uint64_t nm = tblob_metadata_count(m);
  for (uint64_t i = 0; i < nm; ++i) {
    const char *k, *val;
    size_t kl, vl;
    EXPECT_EQ(tblob_metadata_at(m, i, &k, &kl, &val, &vl, nullptr), TBLOB_OK);
    Meta mm{std::string(k, kl), std::string(val, vl)};
    const char *fv;
    size_t fl;
    EXPECT_EQ(tblob_metadata_find(m, k, kl, &fv, &fl, nullptr), TBLOB_OK) << where;
    EXPECT_EQ(std::string(fv, fl), mm.value) << where;
    v.metadata.push_back(mm);
  }
  return v;
}

inline Outcome open_memory(const std::string &bytes, const tblob_open_options *opts) {
  Outcome o;
  o.where = "open_memory";
  tblob_model *m = reinterpret_cast<tblob_model *>(&o);  // must be reset to NULL on error
  o.status = tblob_model_open_memory(bytes.data(), bytes.size(), opts, &m, &o.diag);
  if (o.status == TBLOB_OK) {
    EXPECT_NE(m, nullptr);
    if (m) {
      o.view = model_view(m, bytes, o.where);
      // Zero copy: the data pointers point into the caller's buffer.
      if (tblob_model_tensor_count(m)) {
        const void *d;
        uint64_t l;
        tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
        tblob_tensor_at(m, 0, &info, nullptr);
        tblob_tensor_data(m, 0, &d, &l, nullptr);
        EXPECT_EQ(static_cast<const char *>(d), bytes.data() + info.file_offset);
      }
    }
    tblob_model_close(m);
  } else {
    EXPECT_EQ(m, nullptr) << "out must be NULL on error";
  }
  return o;
}

inline Outcome open_file(const std::string &path, const std::string &bytes, uint32_t mode,
                         const tblob_open_options *base) {
  Outcome o;
  o.where = mode == TBLOB_OPEN_MAP ? "open_path(map)" : "open_path(read)";
  tblob_open_options opts = TBLOB_OPEN_OPTIONS_INIT;
  if (base) opts = *base;
  opts.mode = mode;
  tblob_model *m = nullptr;
  o.status = tblob_model_open(path.c_str(), &opts, &m, &o.diag);
  if (o.status == TBLOB_OK) {
    EXPECT_NE(m, nullptr);
    if (m) {
      o.view = model_view(m, bytes, o.where);
      const char *p;
      size_t pl;
      EXPECT_EQ(tblob_model_file_path(m, 0, &p, &pl, nullptr), TBLOB_OK);
      EXPECT_EQ(std::string(p, pl), path);
    }
  } else {
    EXPECT_EQ(m, nullptr);
  }
  tblob_model_close(m);
  return o;
}

// ------------------------------------------------------------------------------------------
// Expectations.
constexpr tblob_status kSame = static_cast<tblob_status>(1);  // "same as status"
constexpr tblob_status kAnyError = static_cast<tblob_status>(2);  // no-scratch scan: any error (tiling-dependent)
constexpr tblob_status kOkOrSame = static_cast<tblob_status>(3);  // no-scratch scan: OK or the same error
constexpr tblob_status kAnyStatus = static_cast<tblob_status>(4); // no-scratch scan: not checked (depends on the layout)

struct Expect {
  tblob_status status = TBLOB_OK;
  tblob_status noscratch = kSame;   // tblob_st_scan without scratch
  std::vector<std::string> names;   // the message names one of these tensors/keys
  std::vector<std::string> ns_names; // for the no-scratch scan, when it names another
  bool check_view = false;          // compare tensors/metadata below
  std::vector<Tensor> tensors;      // header order
  std::vector<Meta> metadata;       // header order
  bool files = true;                // also through temp files
};

inline Expect ok() { return Expect{}; }
inline Expect err(tblob_status s, std::vector<std::string> names = {}) {
  Expect e;
  e.status = s;
  e.names = std::move(names);
  return e;
}

inline std::string diag_str(const Outcome &o) {
  return o.where + ": " + std::string(tblob_status_name(o.status)) + " offset=" +
         (o.diag.offset == TBLOB_NO_OFFSET ? std::string("none") : std::to_string(o.diag.offset)) +
         " tensor=" + std::to_string(o.diag.tensor_index) + " message=\"" + o.diag.message + "\"";
}

inline bool is_tensor_error(tblob_status s) {
  return s == TBLOB_E_OFFSETS || s == TBLOB_E_SHAPE_OVERFLOW || s == TBLOB_E_MISALIGNED ||
         s == TBLOB_E_TENSOR_SIZE || s == TBLOB_E_DUPLICATE_NAME;
}

// Checks the diag of a failed call: status copied, a message, a plausible offset.
inline void check_diag(const Outcome &o, const std::string &bytes, const Expect &e) {
  SCOPED_TRACE(diag_str(o));
  EXPECT_EQ(o.diag.status, o.status);
  if (o.status == TBLOB_OK) return;
  EXPECT_GT(std::strlen(o.diag.message), 0u);
  EXPECT_LT(std::strlen(o.diag.message), sizeof(o.diag.message));
  uint64_t n = 0;
  if (bytes.size() >= 8) std::memcpy(&n, bytes.data(), 8);
  const uint64_t len = bytes.size();
  const uint64_t off = o.diag.offset;
  const uint64_t hdr_end = 8 + n;
  switch (o.status) {
    case TBLOB_E_HEADER_TOO_SMALL:
    case TBLOB_E_HEADER_TOO_LARGE:
    case TBLOB_E_HEADER_LENGTH:
    case TBLOB_E_LIMIT_HEADER_BYTES:
      EXPECT_TRUE(off == TBLOB_NO_OFFSET || off <= 8);
      break;
    case TBLOB_E_UTF8:
    case TBLOB_E_JSON:
    case TBLOB_E_LIMIT_JSON_DEPTH:
      EXPECT_NE(off, TBLOB_NO_OFFSET);
      EXPECT_GE(off, 8u);
      EXPECT_LE(off, hdr_end);
      break;
    case TBLOB_E_SCHEMA:
    case TBLOB_E_DTYPE:
    case TBLOB_E_SHAPE:
    case TBLOB_E_OFFSETS:
    case TBLOB_E_SHAPE_OVERFLOW:
    case TBLOB_E_MISALIGNED:
    case TBLOB_E_TENSOR_SIZE:
    case TBLOB_E_DUPLICATE_NAME:
    case TBLOB_E_LIMIT_TENSORS:
    case TBLOB_E_LIMIT_RANK:
    case TBLOB_E_LIMIT_NAME_BYTES:
      EXPECT_NE(off, TBLOB_NO_OFFSET);
      EXPECT_GE(off, 8u);
      EXPECT_LT(off, hdr_end);
      break;
    case TBLOB_E_METADATA:
      EXPECT_TRUE(off == TBLOB_NO_OFFSET || (off >= 8 && off < hdr_end));
      break;
    case TBLOB_E_TRAILING_BYTES:
    case TBLOB_E_TRUNCATED:
      EXPECT_NE(off, TBLOB_NO_OFFSET);
      EXPECT_GE(off, hdr_end);
      EXPECT_LE(off, len > hdr_end ? len : hdr_end);
      break;
    default:
      EXPECT_TRUE(off == TBLOB_NO_OFFSET || off <= len);
  }
  if (is_tensor_error(o.status) || o.status == TBLOB_E_DTYPE || o.status == TBLOB_E_SHAPE) {
    EXPECT_GE(o.diag.tensor_index, 0);
  }
  if (!e.names.empty()) {
    bool found = false;
    for (const std::string &nm : e.names)
      if (std::strstr(o.diag.message, ("\"" + nm + "\"").c_str())) found = true;
    EXPECT_TRUE(found) << "message does not name " << e.names[0];
  }
}

// Runs every entry point; returns the memory-opened view (for extra checks).
inline View check(const std::string &bytes, const Expect &e, const tblob_open_options *opts = nullptr) {
  std::vector<Outcome> outs;
  outs.push_back(open_memory(bytes, opts));
  if (e.files) {
    const std::string path = unique_file(bytes);
    outs.push_back(open_file(path, bytes, TBLOB_OPEN_MAP, opts));
    outs.push_back(open_file(path, bytes, TBLOB_OPEN_READ, opts));
  }
  outs.push_back(scan(bytes, opts, true));
  outs.push_back(scan(bytes, opts, true, true));
  for (const Outcome &o : outs) {
    EXPECT_EQ(o.status, e.status) << "expected " << tblob_status_name(e.status) << "; " << diag_str(o);
    check_diag(o, bytes, e);
  }
  // The open paths agree on the diagnostic itself.
  for (size_t i = 1; i < outs.size() && outs[i].where.rfind("open", 0) == 0; ++i) {
    EXPECT_EQ(outs[i].diag.offset, outs[0].diag.offset) << diag_str(outs[i]) << " vs " << diag_str(outs[0]);
    EXPECT_STREQ(outs[i].diag.message, outs[0].diag.message);
    EXPECT_EQ(outs[i].diag.tensor_index, outs[0].diag.tensor_index);
  }
  // Without scratch only the per-entry checks run.
  Outcome ns = scan(bytes, opts, false);
  if (e.noscratch == kSame) {
    EXPECT_EQ(ns.status, e.status) << "expected " << tblob_status_name(e.status) << "; " << diag_str(ns);
  } else if (e.noscratch == kAnyError) {
    EXPECT_NE(ns.status, TBLOB_OK) << diag_str(ns);
  } else if (e.noscratch == kOkOrSame) {
    EXPECT_TRUE(ns.status == TBLOB_OK || ns.status == e.status) << diag_str(ns);
  } else if (e.noscratch == kAnyStatus) {
    EXPECT_NE(ns.status, TBLOB_E_OUT_OF_MEMORY) << diag_str(ns);
  } else {
    EXPECT_EQ(ns.status, e.noscratch) << "expected " << tblob_status_name(e.noscratch) << "; " << diag_str(ns);
  }
  Expect ens = e;
  if (!e.ns_names.empty()) ens.names = e.ns_names;
  if (ns.status != e.status && e.ns_names.empty()) ens.names.clear();
  check_diag(ns, bytes, ens);

  if (e.status == TBLOB_OK) {
    // Scan views (header order) agree with each other; model views agree with each other.
    const View *scanned = nullptr;
    const View *opened = &outs[0].view;
    for (const Outcome &o : outs) {
      if (o.where.rfind("st_scan", 0) == 0) {
        if (!scanned) scanned = &o.view;
        EXPECT_EQ(o.view.tensors, scanned->tensors) << o.where;
        EXPECT_EQ(o.view.metadata, scanned->metadata) << o.where;
      } else {
        EXPECT_EQ(o.view.tensors, opened->tensors) << o.where;
        EXPECT_EQ(o.view.metadata, opened->metadata) << o.where;
      }
    }
    if (scanned && ns.status == TBLOB_OK) {
      EXPECT_EQ(ns.view.tensors, scanned->tensors);
      EXPECT_EQ(ns.view.metadata, scanned->metadata);
    }
    // The model holds what the scanner saw (in offset order rather than header order).
    if (scanned) {
      EXPECT_EQ(opened->tensors.size(), scanned->tensors.size());
      auto by_name = [](const Tensor &x, const Tensor &y) { return x.name < y.name; };
      std::vector<Tensor> a = scanned->tensors, b = opened->tensors;
      std::sort(a.begin(), a.end(), by_name);
      std::sort(b.begin(), b.end(), by_name);
      for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
        EXPECT_EQ(a[i], b[i]) << "scanned " << a[i] << " model " << b[i];
        if (!(a[i] == b[i])) break;
      }
      EXPECT_EQ(opened->metadata, scanned->metadata);
      if (e.check_view) {
        EXPECT_EQ(scanned->tensors, e.tensors);
        EXPECT_EQ(scanned->metadata, e.metadata);
      }
    }
    return outs[0].view;
  }
  return View{};
}

// Shorthand for a tensor expectation.
inline Tensor TT(const std::string &name, uint32_t dtype, std::vector<uint64_t> shape, uint64_t b, uint64_t e) {
  Tensor t;
  t.name = name;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.begin = b;
  t.end = e;
  return t;
}

inline Expect ok_view(std::vector<Tensor> tensors, std::vector<Meta> metadata = {}) {
  Expect e;
  e.check_view = true;
  e.tensors = std::move(tensors);
  e.metadata = std::move(metadata);
  return e;
}

}  // namespace sth

// check() with the caller's file and line in failure messages.
#define CHECK_ST(...) ([&]() { SCOPED_TRACE("case"); return ::sth::check(__VA_ARGS__); }())
