// Shard-set discovery (docs/uqff.md): a directory, a shard
// whose siblings are expanded, or an explicit list; uqff_report.json wins when it lists the
// shard; gaps in the -N indices are errors.
#include "formats/uqff/uqff_discover.h"

#include <cstdio>
#include <cstring>

#include "core/checked.h"
#include "json/json_walk.h"
#include "table/name_index.h"
#include "io/source.h"

namespace tblob {
namespace uqff {

namespace {

constexpr char kReportName[] = "uqff_report.json";
constexpr char kResidualName[] = "residual.safetensors";
// Written beside the shards by mistral.rs.
const char *const kAssetNames[] = {"config.json",           "tokenizer.json",
                                   "tokenizer_config.json", "generation_config.json",
                                   "processor_config.json", "preprocessor_config.json",
                                   "chat_template.jinja",   "modules.json",
                                   kReportName};

char *dup(tblob_model *m, const char *p, size_t n) {
  char *s = static_cast<char *>(m->arena.alloc(n + 1));
  if (!s) return nullptr;
  std::memcpy(s, p, n);
  s[n] = '\0';
  return s;
}

// dir "" means "the current directory, paths as given".
char *join(tblob_model *m, const char *dir, const char *name, size_t n) {
  const size_t dl = std::strlen(dir);
  if (dl == 0) return dup(m, name, n);
  const bool slash = dir[dl - 1] == '/';
  char *s = static_cast<char *>(m->arena.alloc(dl + 1 + n + 1));
  if (!s) return nullptr;
  std::memcpy(s, dir, dl);
  size_t k = dl;
  if (!slash) s[k++] = '/';
  std::memcpy(s + k, name, n);
  s[k + n] = '\0';
  return s;
}

void split_path(const char *path, size_t *dir_len, const char **base) {
  const size_t n = std::strlen(path);
  size_t i = n;
  while (i > 0 && path[i - 1] != '/') --i;
  *base = path + i;
  *dir_len = i == 0 ? 0 : (i == 1 ? 1 : i - 1);  // "/x" -> "/"
}

bool plain_file_name(const char *p, size_t n) {
  if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) return false;
  for (size_t i = 0; i < n; ++i)
    if (p[i] == '/' || p[i] == '\\' || p[i] == '\0') return false;
  return true;
}

struct ReportShard {
  const char *name;
  size_t len;
  uint32_t output;
};

void report_name_at(const void *ctx, size_t i, const char **p, size_t *n) {
  const ReportShard &r = (*static_cast<const PodVec<ReportShard> *>(ctx))[i];
  *p = r.name;
  *n = r.len;
}

Status report_error(const Diag &diag, const char *path, const json::Cursor &c, const char *what) {
  const uint64_t off = c.offset(c.err_at ? c.err_at : c.p);
  return diag.fail(TBLOB_E_UQFF_REPORT, off, -1, "%s: %s at byte %llu", path,
                   c.err_what ? c.err_what : what, static_cast<unsigned long long>(off));
}

// outputs[i].shards[j] of uqff_report.json, decoded into the arena.
Status read_report(tblob_model *m, const char *path, const Limits &limits,
                   PodVec<ReportShard> *out, const Diag &diag) {
  Source src;
  Status s = source_open_file(path, TBLOB_OPEN_READ, m->alloc, &src, diag);
  if (s != TBLOB_OK) return s;
  json::Cursor c{src.data, src.data, src.data + src.len};
  const uint32_t maxd = limits.max_json_depth;
  bool saw_outputs = false;
  uint32_t output = 0;
  Status inner = TBLOB_OK;
  bool ok = src.len > 0 && json::walk_object(c, 0, maxd, [&](const json::StringSlice &k, json::Cursor &cc) {
    if (!json::decoded_equals(k, "outputs", 7)) return json::skip_value(cc, 1, maxd);
    saw_outputs = true;
    return json::walk_array(cc, 1, maxd, [&](json::Cursor &ca) {
      const uint32_t this_output = output++;
      return json::walk_object(ca, 2, maxd, [&](const json::StringSlice &k2, json::Cursor &co) {
        if (!json::decoded_equals(k2, "shards", 6)) return json::skip_value(co, 3, maxd);
        return json::walk_array(co, 3, maxd, [&](json::Cursor &cs) {
          json::StringSlice str;
          if (!json::string_value(cs, &str)) return false;
          char *name = static_cast<char *>(m->arena.alloc(str.len + 1));
          if (!name) {
            inner = diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
            return false;
          }
          const size_t n = json::decode_into(str, name, str.len);
          name[n] = '\0';
          if (!plain_file_name(name, n)) {
            inner = diag.fail(TBLOB_E_UQFF_REPORT, cs.offset(str.at), -1,
                              "%s lists shard \"%.*s\" (byte %llu), which is not a file name in its directory",
                              path, static_cast<int>(n < 200 ? n : 200), name,
                              static_cast<unsigned long long>(cs.offset(str.at)));
            return false;
          }
          if (out->size() >= limits.max_files) {
            inner = diag.fail(TBLOB_E_LIMIT_FILES, cs.offset(str.at), -1,
                              "%s lists more than %u shards", path, limits.max_files);
            return false;
          }
          if (!out->push(ReportShard{name, n, this_output})) {
            inner = diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
            return false;
          }
          return true;
        });
      });
    });
  });
  if (ok) ok = json::at_end(c);
  if (!ok) {
    s = inner != TBLOB_OK ? inner : report_error(diag, path, c, src.len ? "invalid JSON" : "empty file");
  } else if (!saw_outputs) {
    s = diag.fail(TBLOB_E_UQFF_REPORT, TBLOB_NO_OFFSET, -1, "%s has no \"outputs\" array", path);
  } else if (out->size() > 1) {
    // Through the name index: a pairwise check was quadratic in what the report lists.
    NameIndex idx;
    if (!idx.build(&m->alloc, out->size(), report_name_at, out))
      s = diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    else if (idx.has_duplicate())
      s = diag.fail(TBLOB_E_UQFF_REPORT, TBLOB_NO_OFFSET, -1, "%s lists shard %s twice", path,
                    (*out)[idx.dup_second()].name);
  }
  source_close(&src, m->alloc);
  return s;
}

Status add_shard(tblob_model *, SetPaths *out, const char *path, const Limits &limits, const Diag &diag) {
  if (out->shards.size() >= limits.max_files)
    return diag.fail(TBLOB_E_LIMIT_FILES, TBLOB_NO_OFFSET, -1, "the UQFF set has more than %u shards",
                     limits.max_files);
  return out->shards.push(path) ? TBLOB_OK : diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
}

Status missing_shard(const Diag &diag, const char *path, const char *why) {
  return diag.fail(TBLOB_E_UQFF_SHARD_MISSING, TBLOB_NO_OFFSET, -1, "shard %s is missing%s", path, why);
}

// Shards listed by the report (all outputs, or only the output that lists `only`).
Status shards_from_report(tblob_model *m, const PodVec<ReportShard> &rs, const char *only,
                          size_t only_len, const Limits &limits, SetPaths *out, const Diag &diag) {
  uint32_t want = UINT32_MAX;
  if (only) {
    for (size_t i = 0; i < rs.size(); ++i)
      if (rs[i].len == only_len && std::memcmp(rs[i].name, only, only_len) == 0) want = rs[i].output;
  }
  for (size_t i = 0; i < rs.size(); ++i) {
    if (only && rs[i].output != want) continue;
    char *p = join(m, out->dir, rs[i].name, rs[i].len);
    if (!p) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    if (!path_is_regular_file(p)) return missing_shard(diag, p, " (uqff_report.json lists it)");
    Status s = add_shard(m, out, p, limits, diag);
    if (s != TBLOB_OK) return s;
  }
  return TBLOB_OK;
}

struct Found {
  const char *name;
  size_t len;
  size_t stem_len;
  uint64_t index;
  bool indexed;
};

// Every *.uqff file of the directory, grouped by stem, each group contiguous from 0.
Status shards_from_listing(tblob_model *m, const Limits &limits, SetPaths *out, const char *list_dir_path,
                           const Diag &diag) {
  PodVec<Found> found(&m->alloc);
  Status inner = TBLOB_OK;
  const bool listed = list_dir(list_dir_path, [&](const char *name, size_t n) {
    if (n < 6 || std::memcmp(name + n - 5, ".uqff", 5) != 0) return true;
    if (found.size() >= limits.max_files) {
      inner = diag.fail(TBLOB_E_LIMIT_FILES, TBLOB_NO_OFFSET, -1, "%s holds more than %u .uqff files",
                        list_dir_path, limits.max_files);
      return false;
    }
    Found f;
    f.name = dup(m, name, n);
    f.len = n;
    f.indexed = parse_shard_name(name, n, &f.stem_len, &f.index);
    if (!f.indexed) f.stem_len = n;
    if (!f.name || !found.push(f)) {
      inner = diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
      return false;
    }
    return true;
  });
  if (inner != TBLOB_OK) return inner;
  if (!listed) return diag.fail(TBLOB_E_IO, TBLOB_NO_OFFSET, -1, "cannot list directory %s", list_dir_path);
  // Order: by stem, then index (insertion sort: the count is small and bounded by max_files).
  for (size_t i = 1; i < found.size(); ++i) {
    Found f = found[i];
    size_t j = i;
    while (j > 0) {
      const Found &g = found[j - 1];
      const size_t k = f.stem_len < g.stem_len ? f.stem_len : g.stem_len;
      int c = std::memcmp(f.name, g.name, k);
      if (c == 0) c = f.stem_len < g.stem_len ? -1 : (f.stem_len > g.stem_len ? 1 : 0);
      if (c == 0) c = f.index < g.index ? -1 : (f.index > g.index ? 1 : 0);
      if (c >= 0) break;
      found[j] = found[j - 1];
      --j;
    }
    found[j] = f;
  }
  size_t i = 0;
  while (i < found.size()) {
    size_t j = i;
    while (j < found.size() && found[j].indexed == found[i].indexed && found[j].stem_len == found[i].stem_len &&
           std::memcmp(found[j].name, found[i].name, found[i].stem_len) == 0 && found[i].indexed)
      ++j;
    if (j == i) j = i + 1;  // a non-indexed file is a set of its own
    for (size_t k = i; k < j; ++k) {
      if (found[k].indexed && found[k].index != k - i) {
        char want[512];
        std::snprintf(want, sizeof(want), "%.*s-%llu.uqff", static_cast<int>(found[i].stem_len < 400 ? found[i].stem_len : 400),
                      found[i].name, static_cast<unsigned long long>(k - i));
        char *p = join(m, out->dir, want, std::strlen(want));
        if (!p) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
        return missing_shard(diag, p, found[k].index > k - i ? " (a later shard of its set exists)" : "");
      }
      char *p = join(m, out->dir, found[k].name, found[k].len);
      if (!p) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
      Status s = add_shard(m, out, p, limits, diag);
      if (s != TBLOB_OK) return s;
    }
    i = j;
  }
  return TBLOB_OK;
}

}  // namespace

bool parse_shard_name(const char *name, size_t len, size_t *stem_len, uint64_t *index) {
  if (len < 5 || std::memcmp(name + len - 5, ".uqff", 5) != 0) return false;
  const size_t stem = len - 5;
  size_t dash = stem;
  while (dash > 0 && name[dash - 1] != '-') --dash;
  if (dash == 0) return false;  // no '-'
  const char *digits = name + dash;
  const size_t nd = stem - dash;
  if (nd == 0 || (nd > 1 && digits[0] == '0')) return false;
  // A number past 19 digits is still a shard index, one beyond any set (UINT64_MAX), so
  // `m-100000000000000000000.uqff` is a missing-shard case like `m-1000000.uqff`, not a
  // lone file.
  uint64_t v = 0;
  for (size_t i = 0; i < nd; ++i) {
    if (digits[i] < '0' || digits[i] > '9') return false;
    const uint64_t d = static_cast<uint64_t>(digits[i] - '0');
    v = v > (UINT64_MAX - d) / 10 ? UINT64_MAX : v * 10 + d;
  }
  *stem_len = dash - 1;
  *index = v;
  return true;
}

Status discover(tblob_model *m, const char *const *paths, size_t path_count, const Limits &limits,
                SetPaths *out, const Diag &diag) {
  if (path_count == 0 || !paths || !paths[0])
    return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1, "no UQFF path given");
  Status s = TBLOB_OK;
  const char *first = paths[0];
  const bool single = path_count == 1;
  if (single && path_is_directory(first)) {
    out->dir = dup(m, first, std::strlen(first));
    if (!out->dir) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    char *report = join(m, out->dir, kReportName, sizeof(kReportName) - 1);
    if (!report) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    if (path_is_regular_file(report)) {
      PodVec<ReportShard> rs(&m->alloc);
      if ((s = read_report(m, report, limits, &rs, diag)) != TBLOB_OK) return s;
      s = shards_from_report(m, rs, nullptr, 0, limits, out, diag);
    } else {
      s = shards_from_listing(m, limits, out, first, diag);
    }
    if (s != TBLOB_OK) return s;
    if (out->shards.size() == 0)
      return diag.fail(TBLOB_E_UQFF_SHARD_SET, TBLOB_NO_OFFSET, -1, "directory %s holds no .uqff shards", first);
  } else if (single) {
    if (!path_is_regular_file(first))
      return diag.fail(path_is_directory(first) ? TBLOB_E_IO : TBLOB_E_NOT_FOUND, TBLOB_NO_OFFSET, -1,
                       "%s is not a regular file", first);
    size_t dl;
    const char *base;
    split_path(first, &dl, &base);
    out->dir = dl ? dup(m, first, dl) : "";
    if (!out->dir) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    const size_t bl = std::strlen(base);
    char *report = join(m, out->dir, kReportName, sizeof(kReportName) - 1);
    if (!report) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    bool done = false;
    if (path_is_regular_file(report)) {
      PodVec<ReportShard> rs(&m->alloc);
      if ((s = read_report(m, report, limits, &rs, diag)) != TBLOB_OK) return s;
      for (size_t i = 0; i < rs.size(); ++i)
        if (rs[i].len == bl && std::memcmp(rs[i].name, base, bl) == 0) done = true;
      if (done && (s = shards_from_report(m, rs, base, bl, limits, out, diag)) != TBLOB_OK) return s;
    }
    size_t stem_len;
    uint64_t index;
    if (!done && parse_shard_name(base, bl, &stem_len, &index)) {
      // {stem}-0.uqff, {stem}-1.uqff, ... up to the first gap; the given file must be in it,
      // and no later index may exist past the gap.
      uint64_t count = 0;
      for (;; ++count) {
        char name[512];
        if (stem_len > 400) break;
        std::snprintf(name, sizeof(name), "%.*s-%llu.uqff", static_cast<int>(stem_len), base,
                      static_cast<unsigned long long>(count));
        char *p = join(m, out->dir, name, std::strlen(name));
        if (!p) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
        if (!path_is_regular_file(p)) {
          if (count <= index) return missing_shard(diag, p, "");
          // Any later index of the same stem means a hole.
          uint64_t later = UINT64_MAX;
          list_dir(dl ? out->dir : ".", [&](const char *n2, size_t l2) {
            size_t sl;
            uint64_t ix;
            if (parse_shard_name(n2, l2, &sl, &ix) && sl == stem_len && std::memcmp(n2, base, sl) == 0 && ix > count)
              later = later < ix ? later : ix;
            return true;
          });
          if (later != UINT64_MAX) return missing_shard(diag, p, " (a later shard of its set exists)");
          break;
        }
        if ((s = add_shard(m, out, p, limits, diag)) != TBLOB_OK) return s;
      }
      done = true;
    }
    if (!done) {
      char *p = dup(m, first, std::strlen(first));
      if (!p) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
      if ((s = add_shard(m, out, p, limits, diag)) != TBLOB_OK) return s;
    }
  } else {
    for (size_t i = 0; i < path_count; ++i) {
      if (!paths[i]) return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1, "shard path %zu is NULL", i);
      if (!path_is_regular_file(paths[i]))
        return diag.fail(TBLOB_E_NOT_FOUND, TBLOB_NO_OFFSET, -1, "shard %s is not a regular file", paths[i]);
      char *p = dup(m, paths[i], std::strlen(paths[i]));
      if (!p) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
      if ((s = add_shard(m, out, p, limits, diag)) != TBLOB_OK) return s;
    }
    size_t dl;
    const char *base;
    split_path(first, &dl, &base);
    out->dir = dl ? dup(m, first, dl) : "";
    if (!out->dir) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  }
  // Siblings: residual.safetensors and the assets.
  char *res = join(m, out->dir, kResidualName, sizeof(kResidualName) - 1);
  if (!res) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  if (path_is_regular_file(res)) {
    bool is_shard = false;  // an explicit list may name it; never read it twice
    for (size_t i = 0; i < out->shards.size(); ++i) is_shard |= std::strcmp(out->shards[i], res) == 0;
    if (!is_shard) out->residual = res;
  }
  for (const char *a : kAssetNames) {
    char *p = join(m, out->dir, a, std::strlen(a));
    if (!p) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    if (!path_is_regular_file(p)) continue;
    if (!out->assets.push(p)) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    if (std::strcmp(a, "config.json") == 0) out->config = p;
    if (std::strcmp(a, kReportName) == 0) out->report = p;
  }
  return TBLOB_OK;
}

}  // namespace uqff
}  // namespace tblob
