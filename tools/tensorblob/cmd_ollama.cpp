// Ollama store commands: ls, inspect --store, verify, import, gc (public C API only).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "cli.h"
#include "commands.h"
#include "json_writer.h"
#include "numbers.h"
#include "term.h"
#include "tensorblob.h"

namespace tbcli {

namespace {

tblob_store *open_store(const char *cmd, const char *dir, bool create, bool json, int *rc) {
  tblob_store_options o = TBLOB_STORE_OPTIONS_INIT;
  if (create) o.flags |= TBLOB_STORE_CREATE;
  tblob_store *s = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  const tblob_status st = tblob_store_open(dir, &o, &s, &d);
  if (st != TBLOB_OK) {
    if (json) {
      JsonWriter w;
      w.raw('{');
      w.key("store");
      w.str(dir ? dir : "");
      w.raw(",\"ok\":false,\"error\":{");
      w.key("status");
      w.str(tblob_status_name(st));
      w.field("message", d.message);
      w.raw("}}");
      w.flush_line(stdout);
    } else {
      std::fprintf(stderr, "tensorblob %s: %s: %s\n", cmd, tblob_status_name(st), d.message);
    }
    *rc = kExitInvalid;
  }
  return s;
}

void json_error_obj(JsonWriter &w, tblob_status st, const char *msg) {
  w.raw("\"error\":{");
  w.key("status");
  w.str(tblob_status_name(st));
  w.field("message", msg && msg[0] ? msg : tblob_status_message(st));
  w.raw('}');
}

// ---- ls -----------------------------------------------------------------------------------

struct LsState {
  JsonWriter *w;
  bool json;
  int count = 0;
  int bad = 0;
};

int ls_entry(void *user, const tblob_store_entry *e) {
  LsState *st = static_cast<LsState *>(user);
  if (e->status != TBLOB_OK) ++st->bad;
  if (st->json) {
    JsonWriter &w = *st->w;
    if (st->count) w.raw(',');
    w.raw('{');
    w.key("name");
    w.str(e->name, e->name_len);
    w.field("short_name", e->short_name, e->short_name_len);
    w.raw(",\"ok\":");
    w.raw(e->status == TBLOB_OK ? "true" : "false");
    if (e->status == TBLOB_OK) {
      w.field("id", e->manifest_id, e->manifest_id_len);
      w.field_u64("size", e->total_bytes);
      w.field_u64("layers", e->layer_count);
      w.field_u64("tensor_layers", e->tensor_layer_count);
      w.field_u64("modified", static_cast<uint64_t>(e->modified_unix));
    } else {
      w.raw(',');
      json_error_obj(w, e->status, e->message);
    }
    w.raw('}');
  } else {
    if (st->count == 0) std::printf("%-40s %-12s %-10s %s\n", "NAME", "ID", "SIZE", "MODIFIED");
    if (e->status == TBLOB_OK) {
      char when[32] = "";
      const time_t t = static_cast<time_t>(e->modified_unix);
      struct tm tmv;
      if (localtime_r(&t, &tmv)) std::strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tmv);
      std::printf("%-40.*s %-12.12s %-10s %s\n", static_cast<int>(e->short_name_len), e->short_name, e->manifest_id,
                  human_bytes(e->total_bytes).c_str(), when);
    } else {
      std::printf("%-40.*s %s: %s\n", static_cast<int>(e->short_name_len), e->short_name, tblob_status_name(e->status),
                  e->message);
    }
  }
  ++st->count;
  return 0;
}

// ---- verify ---------------------------------------------------------------------------------

struct VerifyState {
  JsonWriter *w;
  bool json;
  bool colour;
  ProgressBar bar{"verifying", true};
  int bad = 0;
};

int verify_progress(void *user, const tblob_verify_progress *p) {
  static_cast<VerifyState *>(user)->bar.update(p->bytes_done, p->bytes_total, p->blobs_done, p->blobs_total,
                                               "blobs");
  return 0;
}

int verify_blob(void *user, const tblob_blob_result *r) {
  VerifyState *st = static_cast<VerifyState *>(user);
  if (r->status == TBLOB_OK) return 0;
  if (st->json) {
    JsonWriter &w = *st->w;
    if (st->bad) w.raw(',');
    w.raw('{');
    w.key("digest");
    w.str(r->digest, r->digest_len);
    w.field("path", r->path, r->path_len);
    w.field("status", tblob_status_name(r->status));
    w.field("message", r->message);
    w.field_u64("expected_size", r->expected_size);
    if (r->actual_size != UINT64_MAX) {
      w.field_u64("actual_size", r->actual_size);
    }
    if (r->actual_digest_len) {
      w.field("actual_digest", r->actual_digest, r->actual_digest_len);
    }
    w.raw('}');
  } else {
    st->bar.clear();
    std::fflush(stdout);
    const std::string bad = paint(st->colour, Colour::kRed, "BAD");
    if (r->digest_len)
      std::printf("%s %.*s: %s: %s\n", bad.c_str(), static_cast<int>(r->path_len), r->path,
                  tblob_status_name(r->status), r->message);
    else
      std::printf("%s manifest %.*s: %s: %s\n", bad.c_str(), static_cast<int>(r->path_len), r->path,
                  tblob_status_name(r->status), r->message);
    std::fflush(stdout);
  }
  ++st->bad;
  return 0;
}

// ---- gc -------------------------------------------------------------------------------------

struct GcState {
  JsonWriter *w;
  bool json;
  bool remove;
  int count = 0;
};

const char *gc_kind(uint32_t k) {
  return k == TBLOB_GC_UNREFERENCED ? "unreferenced" : k == TBLOB_GC_PARTIAL ? "partial" : "temp";
}

int gc_entry(void *user, const tblob_gc_entry *e) {
  GcState *st = static_cast<GcState *>(user);
  if (st->json) {
    JsonWriter &w = *st->w;
    if (st->count) w.raw(',');
    w.raw('{');
    w.key("file");
    w.str(e->file_name, e->file_name_len);
    w.field("kind", gc_kind(e->kind));
    w.field_u64("size", e->size);
    w.raw(",\"removed\":");
    w.raw(st->remove && e->removed == TBLOB_OK ? "true" : "false");
    w.raw('}');
  } else {
    // Blob-directory entries are bare names; temporary manifests come as "manifests/...".
    const bool in_blobs = std::memchr(e->file_name, '/', e->file_name_len) == nullptr;
    std::printf("%s %s%s (%s, %s)%s\n", st->remove ? (e->removed == TBLOB_OK ? "removed" : "FAILED to remove")
                                                     : "would remove",
                in_blobs ? "blobs/" : "", name_text(e->file_name, e->file_name_len).c_str(), gc_kind(e->kind), human_bytes(e->size).c_str(),
                "");
  }
  ++st->count;
  return 0;
}

}  // namespace

// The store of a store command (--store DIR is required), or nullptr with *rc set.
tblob_store *start_store(const Args &a, bool create, int *rc) {
  const char *dir = a.get("--store");
  if (!dir) {
    *rc = usage_error(*a.cmd, "--store DIR is required");
    return nullptr;
  }
  *rc = kExitOk;
  return open_store(a.cmd->name, dir, create, a.json, rc);
}

int cmd_ls(const Args &a) {
  int rc;
  tblob_store *s = start_store(a, false, &rc);
  if (!s) return rc;
  JsonWriter w;
  LsState st;
  st.w = &w;
  st.json = a.json;
  if (a.json) {
    w.raw('{');
    w.key("store");
    w.str(a.get("--store"));
    w.raw(",\"models\":[");
  }
  tblob_diag d = TBLOB_DIAG_INIT;
  const tblob_status r = tblob_store_list(s, ls_entry, &st, &d);
  if (a.json) {
    w.raw("],\"ok\":");
    w.raw(r == TBLOB_OK && st.bad == 0 ? "true" : "false");
    if (r != TBLOB_OK) {
      w.raw(',');
      json_error_obj(w, r, d.message);
    }
    w.raw('}');
    w.flush_line(stdout);
  } else if (r != TBLOB_OK) {
    std::fprintf(stderr, "tensorblob ls: %s: %s\n", tblob_status_name(r), d.message);
  }
  tblob_store_close(s);
  return r == TBLOB_OK && st.bad == 0 ? kExitOk : kExitInvalid;
}

bool parse_layer_spec(const char *spec, tblob_store_open_options *o) {
  tblob_store_open_options_init(o, sizeof(*o));
  // "N": digits only, a manifest layer index (the store checks it against the manifest).
  auto number = [](const char *p, uint64_t *v) { return parse_number(p, UINT64_MAX, v); };
  if (std::strcmp(spec, "model") == 0) return true;
  if (number(spec, &o->part_index)) {
    o->part = TBLOB_STORE_PART_LAYER;
    return true;
  }
  static const struct {
    const char *word;
    uint32_t part;
  } kParts[] = {{"projector", TBLOB_STORE_PART_PROJECTOR}, {"adapter", TBLOB_STORE_PART_ADAPTER}};
  for (const auto &k : kParts) {
    const size_t n = std::strlen(k.word);
    if (std::strncmp(spec, k.word, n) != 0) continue;
    o->part = k.part;
    if (spec[n] == '\0') return true;
    return spec[n] == ':' && number(spec + n + 1, &o->part_index);
  }
  return false;
}

// ---- inspect --store ---------------------------------------------------------------------------

int cmd_store_inspect(const Args &a) {
  tblob_store_open_options opts;
  tblob_store_open_options_init(&opts, sizeof(opts));
  if (const char *spec = a.get("--layer"))
    if (!parse_layer_spec(spec, &opts))
      return usage_error(*a.cmd, "--layer wants model, projector[:N], adapter[:N] or a layer index, not '%s'", spec);
  int rc;
  tblob_store *s = start_store(a, false, &rc);
  if (!s) return rc;
  JsonWriter w;
  for (const char *name : a.positional) {
    std::string path = std::string(a.get("--store")) + "/" + name;
    tblob_diag d = TBLOB_DIAG_INIT;
    tblob_model *m = nullptr;
    const tblob_status st = tblob_store_open_model(s, name, std::strlen(name), &opts, &m, &d);
    if (st != TBLOB_OK) {
      rc = kExitInvalid;
      if (a.json) {
        json_error(w, path.c_str(), d);
        w.flush_line(stdout);
      } else {
        std::fprintf(stderr, "%s: %s: %s\n", path.c_str(), tblob_status_name(st), d.message);
      }
      continue;
    }
    if (a.json) {
      json_model(w, path.c_str(), m, true);
      w.flush_line(stdout);
    } else {
      const uint64_t n = tblob_model_tensor_count(m);
      std::printf("%s: %s, %llu tensors, %u blobs\n", path.c_str(), tblob_format_name(tblob_model_format(m)),
                  static_cast<unsigned long long>(n), tblob_model_file_count(m));
      for (uint64_t i = 0; i < n; ++i) {
        tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
        if (tblob_tensor_at(m, i, &t, nullptr) != TBLOB_OK) continue;
        std::string shape = "[";
        for (uint32_t k = 0; k < t.rank; ++k) shape += (k ? ", " : "") + std::to_string(t.shape[k]);
        shape += "]";
        const char *fp = "";
        size_t fl = 0, bl = 0;
        tblob_model_file_path(m, t.file_index, &fp, &fl, nullptr);
        const char *b = base_name(fp, fl, &bl);
        std::printf("  %-48s %-6s %-16s %.*s\n", name_text(t.name, t.name_len).c_str(), tblob_dtype_name(t.dtype),
                    shape.c_str(), static_cast<int>(bl > 19 ? 19 : bl), b);
      }
    }
    tblob_model_close(m);
  }
  tblob_store_close(s);
  return rc;
}

int cmd_verify(const Args &a) {
  int rc;
  tblob_store *s = start_store(a, false, &rc);
  if (!s) return rc;
  JsonWriter w;
  VerifyState st;
  st.w = &w;
  st.json = a.json;
  st.colour = !a.json && colour_enabled(stdout);
  tblob_verify_options o = TBLOB_VERIFY_OPTIONS_INIT;
  if (const char *t = a.get("--threads")) {
    if (!parse_threads(t, &o.threads)) {
      tblob_store_close(s);
      return usage_error(*a.cmd, "--threads wants a number from 0 to 4096, not '%s'", t);
    }
  }
  if (a.has("--map")) o.flags |= TBLOB_VERIFY_MAP;
  o.progress = verify_progress;
  o.progress_user = &st;
  o.on_blob = verify_blob;
  o.on_blob_user = &st;
  tblob_verify_summary sum = TBLOB_VERIFY_SUMMARY_INIT;
  tblob_diag d = TBLOB_DIAG_INIT;
  const char *model = a.positional.empty() ? nullptr : a.positional[0];
  if (a.json) {
    w.raw('{');
    w.key("store");
    w.str(a.get("--store"));
    if (model) {
      w.field("model", model);
    }
    w.raw(",\"bad\":[");
  }
  const auto t0 = std::chrono::steady_clock::now();
  const tblob_status r = tblob_store_verify(s, model, model ? std::strlen(model) : 0, &o, &sum, &d);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const bool ok = r == TBLOB_OK;
  st.bar.finish(ok || st.bad > 0);  // bad blobs are findings: every blob was still hashed
  if (a.json) {
    w.raw("],\"ok\":");
    w.raw(ok ? "true" : "false");
    w.field_u64("blobs", sum.blobs);
    w.field_u64("blobs_bad", sum.blobs_bad);
    w.field_u64("manifests", sum.manifests);
    w.field_u64("manifests_bad", sum.manifests_bad);
    w.field_u64("bytes", sum.bytes_hashed);
    w.field_u64("threads", sum.threads_used);
    char secs_buf[32];
    std::snprintf(secs_buf, sizeof(secs_buf), ",\"seconds\":%.3f", secs);
    w.raw(secs_buf);
    if (!ok) {
      w.raw(',');
      json_error_obj(w, r, d.message);
    }
    w.raw('}');
    w.flush_line(stdout);
  } else if (ok) {
    std::printf("verified %llu blobs of %llu manifest%s (%s) in %.2f s, %u thread%s: all match\n",
                static_cast<unsigned long long>(sum.blobs), static_cast<unsigned long long>(sum.manifests),
                sum.manifests == 1 ? "" : "s", human_bytes(sum.bytes_hashed).c_str(), secs, sum.threads_used,
                sum.threads_used == 1 ? "" : "s");
  } else {
    if (st.bad == 0) std::printf("BAD: %s: %s\n", tblob_status_name(r), d.message);
    std::printf("%llu of %llu blobs bad, %llu manifest%s unreadable\n", static_cast<unsigned long long>(sum.blobs_bad),
                static_cast<unsigned long long>(sum.blobs), static_cast<unsigned long long>(sum.manifests_bad),
                sum.manifests_bad == 1 ? "" : "s");
  }
  tblob_store_close(s);
  return ok ? kExitOk : kExitInvalid;
}

int cmd_import(const Args &a) {
  int rc;
  tblob_store *s = start_store(a, true, &rc);
  if (!s) return rc;
  tblob_import_result res = TBLOB_IMPORT_RESULT_INIT;
  tblob_diag d = TBLOB_DIAG_INIT;
  const char *name = a.get("--name");
  if (!name) {
    tblob_store_close(s);
    return usage_error(*a.cmd, "--name MODEL[:TAG] is required");
  }
  ProgressBar bar("importing", true);
  tblob_import_options o = TBLOB_IMPORT_OPTIONS_INIT;
  o.progress = [](void *user, const tblob_import_progress *p) {
    static_cast<ProgressBar *>(user)->update(p->bytes_done, p->bytes_total, p->tensors_done, p->tensors_total,
                                             "tensors");
    return 0;
  };
  o.progress_user = &bar;
  const auto t0 = std::chrono::steady_clock::now();
  const tblob_status r = tblob_store_import(s, name, std::strlen(name), a.positional[0], &o, &res, &d);
  bar.finish(r == TBLOB_OK);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  char canon[1024];
  size_t cl = 0;
  if (tblob_ollama_name_canonical(name, std::strlen(name), canon, sizeof(canon), &cl, nullptr) != TBLOB_OK)
    std::snprintf(canon, sizeof(canon), "%s", name);
  if (a.json) {
    JsonWriter w;
    w.raw('{');
    w.key("store");
    w.str(a.get("--store"));
    w.field("name", canon);
    w.raw(",\"ok\":");
    w.raw(r == TBLOB_OK ? "true" : "false");
    w.field_u64("layers", res.layers);
    w.field_u64("tensors", res.tensors);
    w.field_u64("blobs_written", res.blobs_written);
    w.field_u64("blobs_reused", res.blobs_reused);
    w.field_u64("bytes_written", res.bytes_written);
    w.raw(",\"manifest_written\":");
    w.raw(res.manifest_written ? "true" : "false");
    char secs_buf[32];
    std::snprintf(secs_buf, sizeof(secs_buf), ",\"seconds\":%.3f", secs);
    w.raw(secs_buf);
    if (r != TBLOB_OK) {
      w.raw(',');
      json_error_obj(w, r, d.message);
    }
    w.raw('}');
    w.flush_line(stdout);
  } else if (r == TBLOB_OK) {
    std::printf("imported %s: %llu layers, %llu tensors; %llu blobs written (%s), %llu reused; manifest %s (%.2f s)\n",
                canon, static_cast<unsigned long long>(res.layers), static_cast<unsigned long long>(res.tensors),
                static_cast<unsigned long long>(res.blobs_written), human_bytes(res.bytes_written).c_str(),
                static_cast<unsigned long long>(res.blobs_reused), res.manifest_written ? "written" : "unchanged", secs);
  } else {
    std::fprintf(stderr, "tensorblob import: %s: %s\n", tblob_status_name(r), d.message);
  }
  tblob_store_close(s);
  return r == TBLOB_OK ? kExitOk : kExitInvalid;
}

int cmd_gc(const Args &a) {
  int rc;
  tblob_store *s = start_store(a, false, &rc);
  if (!s) return rc;
  JsonWriter w;
  GcState st;
  st.w = &w;
  st.json = a.json;
  st.remove = a.has("--remove");
  tblob_gc_options o = TBLOB_GC_OPTIONS_INIT;
  if (a.has("--remove")) o.flags |= TBLOB_GC_REMOVE;
  o.on_entry = gc_entry;
  o.user = &st;
  tblob_gc_result res = TBLOB_GC_RESULT_INIT;
  tblob_diag d = TBLOB_DIAG_INIT;
  if (a.json) {
    w.raw('{');
    w.key("store");
    w.str(a.get("--store"));
    w.raw(",\"dry_run\":");
    w.raw(a.has("--remove") ? "false" : "true");
    w.raw(",\"entries\":[");
  }
  const tblob_status r = tblob_store_gc(s, &o, &res, &d);
  if (a.json) {
    w.raw("],\"ok\":");
    w.raw(r == TBLOB_OK ? "true" : "false");
    w.field_u64("manifests", res.manifests);
    w.field_u64("referenced_blobs", res.referenced_blobs);
    w.field_u64("listed_bytes", res.listed_bytes);
    w.field_u64("removed_files", res.removed_files);
    w.field_u64("removed_bytes", res.removed_bytes);
    if (r != TBLOB_OK) {
      w.raw(',');
      json_error_obj(w, r, d.message);
    }
    w.raw('}');
    w.flush_line(stdout);
  } else if (r == TBLOB_OK) {
    std::printf("%llu file%s (%s) %s; %llu blobs referenced by %llu manifests%s\n",
                static_cast<unsigned long long>(res.listed_files), res.listed_files == 1 ? "" : "s",
                human_bytes(res.listed_bytes).c_str(), a.has("--remove") ? "removed" : "unreferenced",
                static_cast<unsigned long long>(res.referenced_blobs), static_cast<unsigned long long>(res.manifests),
                a.has("--remove") || res.listed_files == 0 ? "" : " (dry run: add --remove to delete)");
  } else {
    std::fprintf(stderr, "tensorblob gc: %s: %s\n", tblob_status_name(r), d.message);
  }
  tblob_store_close(s);
  return r == TBLOB_OK ? kExitOk : kExitInvalid;
}

}  // namespace tbcli
