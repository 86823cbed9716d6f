// tensorblob diff [--json] [--dequant] A B: tensor-level comparison of two models of any
// formats. Exit status as diff(1): 0 equal, 1 different, 2 trouble (a model that cannot be
// opened, a tensor whose bytes cannot be read).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli.h"
#include "commands.h"
#include "http_source.h"
#include "json_writer.h"
#include "term.h"
#include "tensorblob.h"

namespace tbcli {

namespace {

struct Side {
  uint32_t dtype = 0;
  std::vector<uint64_t> shape;
};

struct Entry {
  enum Kind { kRemoved, kAdded, kChanged, kError } kind;
  std::string name;
  Side a, b;
  bool dtype_changed = false, shape_changed = false, bytes_differ = false;
  bool compared_values = false;
  double max_abs = 0, max_rel = 0;
  uint64_t nan_mismatches = 0;
  const char *dequant_status = nullptr;  // why values were not compared (with --dequant)
  std::string error;                     // kError: status and message
};

Side side_of(const tblob_tensor_info &t) {
  Side s;
  s.dtype = t.dtype;
  s.shape.assign(t.shape, t.shape + t.rank);
  return s;
}

std::string shape_text(const std::vector<uint64_t> &s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

const char *dtype_text(uint32_t d) {
  const char *n = tblob_dtype_name(d);
  return n ? n : "?";
}

// Folds one chunk of values into the running maxima.
struct ValueStats {
  double max_abs = 0, max_a = 0;
  uint64_t nan_mismatches = 0;
  void add(const float *va, const float *vb, size_t n) {
    for (size_t k = 0; k < n; ++k) {
      const double x = va[k], y = vb[k];
      if (std::isnan(x) || std::isnan(y)) {
        if (!(std::isnan(x) && std::isnan(y))) ++nan_mismatches;
        continue;
      }
      if (std::isfinite(x) && std::fabs(x) > max_a) max_a = std::fabs(x);
      if (x == y) continue;  // also equal infinities
      const double d = std::fabs(x - y);
      if (d > max_abs) max_abs = d;
    }
  }
};

// Compares the f32 values of tensor ia of A and ib of B, in row chunks (bounded memory) when
// both describe their rows (tblob_tensor_quant_info), else whole (UQFF layers decode through
// their own hooks). Returns nullptr when compared, else why not.
const char *compare_values(const tblob_model *A, uint64_t ia, const tblob_model *B, uint64_t ib, Entry *e) {
  ValueStats st;
  tblob_quant_info qa = TBLOB_QUANT_INFO_INIT, qb = TBLOB_QUANT_INFO_INIT;
  const bool rows_known = tblob_tensor_quant_info(A, ia, &qa, nullptr) == TBLOB_OK &&
                          tblob_tensor_quant_info(B, ib, &qb, nullptr) == TBLOB_OK && qa.status == TBLOB_OK &&
                          qb.status == TBLOB_OK;
  if (rows_known) {
    if (qa.rows != qb.rows || qa.cols != qb.cols) return "logical shapes differ";
    const uint64_t cols = qa.cols, rows = qa.rows;
    uint64_t chunk = cols ? (uint64_t{1} << 20) / cols : rows;  // about 4 MB of f32 per side
    if (chunk == 0) chunk = 1;
    if (chunk > rows) chunk = rows;
    std::vector<float> va(static_cast<size_t>(chunk * cols)), vb(va.size());
    for (uint64_t r = 0; r < rows && cols; r += chunk) {
      const uint64_t end = rows - r < chunk ? rows : r + chunk;
      tblob_status s = tblob_tensor_dequantize(A, ia, TBLOB_DTYPE_F32, r, end, va.data(), va.size() * 4, nullptr);
      if (s != TBLOB_OK) return tblob_status_name(s);
      s = tblob_tensor_dequantize(B, ib, TBLOB_DTYPE_F32, r, end, vb.data(), vb.size() * 4, nullptr);
      if (s != TBLOB_OK) return tblob_status_name(s);
      st.add(va.data(), vb.data(), static_cast<size_t>((end - r) * cols));
    }
  } else {
    uint64_t ba = 0, bb = 0;
    tblob_status s = tblob_tensor_dequant_size(A, ia, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, &ba, nullptr);
    if (s != TBLOB_OK) return tblob_status_name(s);
    s = tblob_tensor_dequant_size(B, ib, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, &bb, nullptr);
    if (s != TBLOB_OK) return tblob_status_name(s);
    if (ba != bb) return "element counts differ";
    if (ba / 4 > SIZE_MAX / 8) return "too large for memory";
    std::vector<float> va(static_cast<size_t>(ba / 4)), vb(va.size());
    s = tblob_tensor_dequantize(A, ia, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, va.data(), ba, nullptr);
    if (s != TBLOB_OK) return tblob_status_name(s);
    s = tblob_tensor_dequantize(B, ib, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, vb.data(), bb, nullptr);
    if (s != TBLOB_OK) return tblob_status_name(s);
    st.add(va.data(), vb.data(), va.size());
  }
  e->compared_values = true;
  e->max_abs = st.max_abs;
  e->max_rel = st.max_a > 0 ? st.max_abs / st.max_a : (st.max_abs > 0 ? HUGE_VAL : 0.0);
  e->nan_mismatches = st.nan_mismatches;
  return nullptr;
}

// Whether the stored bytes of tensor ia of A and ib of B differ: compared in place when both
// are mapped, else read in chunks (a model opened from a URL has no mapping; its bytes are
// fetched as they are compared).
tblob_status bytes_differ(const tblob_model *A, uint64_t ia, const tblob_model *B, uint64_t ib, bool *differ,
                          tblob_diag *d) {
  const void *da = nullptr, *db = nullptr;
  uint64_t la = 0, lb = 0;
  tblob_status s = tblob_tensor_data(A, ia, &da, &la, d);
  if (s == TBLOB_OK) s = tblob_tensor_data(B, ib, &db, &lb, d);
  if (s == TBLOB_OK) {
    *differ = la != lb || (la && std::memcmp(da, db, static_cast<size_t>(la)) != 0);
    return TBLOB_OK;
  }
  if (s != TBLOB_E_NOT_MAPPED) return s;
  *d = TBLOB_DIAG_INIT;
  tblob_tensor_info ta = TBLOB_TENSOR_INFO_INIT, tb = TBLOB_TENSOR_INFO_INIT;
  if ((s = tblob_tensor_at(A, ia, &ta, d)) != TBLOB_OK || (s = tblob_tensor_at(B, ib, &tb, d)) != TBLOB_OK) return s;
  if (ta.data_length != tb.data_length) {
    *differ = true;
    return TBLOB_OK;
  }
  constexpr size_t kChunk = size_t{4} << 20;
  std::vector<unsigned char> ba(ta.data_length < kChunk ? static_cast<size_t>(ta.data_length) : kChunk), bb(ba.size());
  *differ = false;
  for (uint64_t off = 0; off < ta.data_length; off += ba.size()) {
    const size_t n = ta.data_length - off < ba.size() ? static_cast<size_t>(ta.data_length - off) : ba.size();
    if ((s = tblob_tensor_read(A, ia, off, ba.data(), n, d)) != TBLOB_OK) return s;
    if ((s = tblob_tensor_read(B, ib, off, bb.data(), n, d)) != TBLOB_OK) return s;
    if (std::memcmp(ba.data(), bb.data(), n) != 0) {
      *differ = true;
      break;
    }
  }
  return TBLOB_OK;
}

void json_num(JsonWriter &w, double v) {
  if (!std::isfinite(v)) {
    w.lit("null");
    return;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  w.raw(buf);
}

void json_side(JsonWriter &w, const char *dkey, const char *skey, const Side &s) {
  w.field(dkey, dtype_text(s.dtype));
  w.raw(',');
  w.key(skey);
  w.raw('[');
  for (size_t i = 0; i < s.shape.size(); ++i) {
    if (i) w.raw(',');
    w.u64(s.shape[i]);
  }
  w.raw(']');
}

int open_failed(const Args &a, const char *path, tblob_status s, const tblob_diag &d) {
  const char *msg = d.message[0] ? d.message : tblob_status_message(s);
  const std::string detail = is_url(path) ? http_last_error() : std::string();
  std::fprintf(stderr, "tensorblob diff: %s: %s: %s%s%s\n", path, tblob_status_name(s), msg,
               detail.empty() ? "" : "; ", detail.c_str());
  if (a.json) {
    JsonWriter w;
    w.lit("{\"a\":");
    w.str(a.positional[0]);
    w.field("b", a.positional[1]);
    w.lit(",\"ok\":false,\"error\":{\"path\":");
    w.str(path);
    w.field("status", tblob_status_name(s));
    w.field("message", msg);
    if (!detail.empty()) w.field("detail", detail.c_str());
    w.lit("}}");
    w.flush_line(stdout);
  }
  return kExitUsage;
}

}  // namespace

int cmd_diff(const Args &a) {
  const char *pa = a.positional[0], *pb = a.positional[1];
  const bool dequant = a.has("--dequant");
  tblob_model *A = nullptr, *B = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  const HttpStats before = http_stats();
  tblob_status s = open_model_any(pa, nullptr, &A, &d);
  if (s != TBLOB_OK) return open_failed(a, pa, s, d);
  s = open_model_any(pb, nullptr, &B, &d);
  if (s != TBLOB_OK) {
    tblob_model_close(A);
    return open_failed(a, pb, s, d);
  }
  const uint64_t na = tblob_model_tensor_count(A), nb = tblob_model_tensor_count(B);
  uint64_t total = 0, done = 0, identical = 0;
  for (uint64_t i = 0; i < na; ++i) {
    tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
    if (tblob_tensor_at(A, i, &t, nullptr) == TBLOB_OK) total += t.data_length;
  }
  // Large models only: a bar that flashes by is noise.
  ProgressBar bar("comparing", total > (uint64_t{16} << 20));
  std::vector<Entry> entries;
  // B's tensors matched by A's names: SLM1 keeps only name hashes, so its own names are
  // synthetic and a lookup by A's name is what pairs them.
  std::vector<bool> matched(static_cast<size_t>(nb), false);
  bool trouble = false;
  for (uint64_t i = 0; i < na; ++i) {
    bar.update(done, total, i, na, "tensors");
    tblob_tensor_info ta = TBLOB_TENSOR_INFO_INIT, tb = TBLOB_TENSOR_INFO_INIT;
    if (tblob_tensor_at(A, i, &ta, nullptr) != TBLOB_OK) continue;
    done += ta.data_length;
    Entry e;
    e.name.assign(ta.name, ta.name_len);
    e.a = side_of(ta);
    uint64_t j = 0;
    if (tblob_tensor_find(B, ta.name, ta.name_len, &j, nullptr) != TBLOB_OK ||
        tblob_tensor_at(B, j, &tb, nullptr) != TBLOB_OK) {
      e.kind = Entry::kRemoved;
      entries.push_back(e);
      continue;
    }
    if (j < nb) matched[static_cast<size_t>(j)] = true;
    e.kind = Entry::kChanged;
    e.b = side_of(tb);
    e.dtype_changed = e.a.dtype != e.b.dtype;
    e.shape_changed = e.a.shape != e.b.shape;
    if (!e.dtype_changed && !e.shape_changed) {
      tblob_diag dd = TBLOB_DIAG_INIT;
      const tblob_status ds = bytes_differ(A, i, B, j, &e.bytes_differ, &dd);
      if (ds != TBLOB_OK) {
        e.kind = Entry::kError;
        e.error = std::string(tblob_status_name(ds)) + ": " + (dd.message[0] ? dd.message : tblob_status_message(ds));
        const std::string detail = http_last_error();
        if ((is_url(pa) || is_url(pb)) && !detail.empty()) e.error += "; " + detail;
        trouble = true;
        entries.push_back(e);
        continue;
      }
      if (!e.bytes_differ) {
        ++identical;
        continue;
      }
    }
    if (dequant) e.dequant_status = compare_values(A, i, B, j, &e);
    entries.push_back(e);
  }
  for (uint64_t j = 0; j < nb; ++j) {
    tblob_tensor_info tb = TBLOB_TENSOR_INFO_INIT;
    uint64_t i = 0;
    if (matched[static_cast<size_t>(j)] || tblob_tensor_at(B, j, &tb, nullptr) != TBLOB_OK) continue;
    if (tblob_tensor_find(A, tb.name, tb.name_len, &i, nullptr) == TBLOB_OK) continue;
    Entry e;
    e.kind = Entry::kAdded;
    e.name.assign(tb.name, tb.name_len);
    e.b = side_of(tb);
    entries.push_back(e);
  }
  bar.update(total, total, na, na, "tensors");
  bar.finish(true);

  uint64_t count[4] = {0, 0, 0, 0};
  for (const Entry &e : entries) ++count[e.kind];
  const bool equal = entries.empty();
  if (a.json) {
    JsonWriter w;
    w.lit("{\"a\":");
    w.str(pa);
    w.field("b", pb);
    w.lit(",\"ok\":");
    w.raw(trouble ? "false" : "true");
    w.lit(",\"equal\":");
    w.raw(equal ? "true" : "false");
    w.field("format_a", tblob_format_name(tblob_model_format(A)));
    w.field("format_b", tblob_format_name(tblob_model_format(B)));
    w.field_u64("tensors_a", na);
    w.field_u64("tensors_b", nb);
    w.field_u64("identical", identical);
    static const char *const kLists[4] = {"removed", "added", "changed", "errors"};
    for (int k = 0; k < 4; ++k) {
      w.lit(",\"");
      w.raw(kLists[k]);
      w.lit("\":[");
      bool first = true;
      for (const Entry &e : entries) {
        if (e.kind != k) continue;
        if (!first) w.raw(',');
        first = false;
        w.lit("{\"name\":");
        w.str(e.name.data(), e.name.size());
        if (k == Entry::kRemoved) {
          json_side(w, "dtype", "shape", e.a);
        } else if (k == Entry::kAdded) {
          json_side(w, "dtype", "shape", e.b);
        } else if (k == Entry::kError) {
          w.field("error", e.error.c_str());
        } else {
          json_side(w, "dtype_a", "shape_a", e.a);
          json_side(w, "dtype_b", "shape_b", e.b);
          w.lit(",\"dtype_changed\":");
          w.raw(e.dtype_changed ? "true" : "false");
          w.lit(",\"shape_changed\":");
          w.raw(e.shape_changed ? "true" : "false");
          w.lit(",\"bytes_differ\":");
          w.raw(e.bytes_differ || e.dtype_changed || e.shape_changed ? "true" : "false");
          if (e.compared_values) {
            w.lit(",\"max_abs\":");
            json_num(w, e.max_abs);
            w.lit(",\"max_rel\":");
            json_num(w, e.max_rel);
            w.field_u64("nan_mismatches", e.nan_mismatches);
          } else if (e.dequant_status) {
            w.field("dequant_error", e.dequant_status);
          }
        }
        w.raw('}');
        w.maybe_flush();
      }
      w.raw(']');
    }
    if (is_url(pa) || is_url(pb)) json_fetched(w, before);
    w.raw('}');
    w.flush_line(stdout);
  } else {
    const bool col = colour_enabled(stdout);
    for (const Entry &e : entries) {
      if (e.kind == Entry::kRemoved) {
        std::printf("%s %-40s %s %s\n", paint(col, Colour::kRed, "-").c_str(), name_text(e.name).c_str(), dtype_text(e.a.dtype),
                    shape_text(e.a.shape).c_str());
      } else if (e.kind == Entry::kAdded) {
        std::printf("%s %-40s %s %s\n", paint(col, Colour::kGreen, "+").c_str(), name_text(e.name).c_str(),
                    dtype_text(e.b.dtype), shape_text(e.b.shape).c_str());
      } else if (e.kind == Entry::kError) {
        std::printf("%s %-40s %s\n", paint(col, Colour::kRed, "!").c_str(), name_text(e.name).c_str(), e.error.c_str());
      } else {
        std::string what;
        if (e.dtype_changed || e.shape_changed)
          what = std::string(dtype_text(e.a.dtype)) + " " + shape_text(e.a.shape) + " -> " + dtype_text(e.b.dtype) +
                 " " + shape_text(e.b.shape);
        else
          what = "bytes differ";
        if (e.compared_values) {
          char buf[96];
          std::snprintf(buf, sizeof(buf), "; max abs %.6g, max rel %.6g", e.max_abs, e.max_rel);
          what += buf;
          if (e.nan_mismatches) what += "; " + std::to_string(e.nan_mismatches) + " NaN mismatches";
        } else if (e.dequant_status) {
          what += std::string("; values not compared: ") + e.dequant_status;
        }
        std::printf("%s %-40s %s\n", paint(col, Colour::kYellow, "~").c_str(), name_text(e.name).c_str(), what.c_str());
      }
    }
    std::printf("%s (%s, %llu tensors) vs %s (%s, %llu tensors): %llu identical, %llu changed, %llu added, "
                "%llu removed%s\n",
                pa, tblob_format_name(tblob_model_format(A)), static_cast<unsigned long long>(na), pb,
                tblob_format_name(tblob_model_format(B)), static_cast<unsigned long long>(nb),
                static_cast<unsigned long long>(identical), static_cast<unsigned long long>(count[Entry::kChanged]),
                static_cast<unsigned long long>(count[Entry::kAdded]),
                static_cast<unsigned long long>(count[Entry::kRemoved]),
                count[Entry::kError] ? ", some tensors unreadable" : "");
  }
  tblob_model_close(A);
  tblob_model_close(B);
  if (trouble) return kExitUsage;
  return equal ? kExitOk : kExitInvalid;
}

}  // namespace tbcli
