// The extern "C" UQFF API (include/tensorblob.h, "UQFF"): argument checks and conversion
// between the public structs and formats/uqff, nothing else.
#include <cstddef>
#include <cstring>

#include "capi/capi_common.h"
#include "core/limits.h"
#include "table/model.h"
#include "dequant/ggml/ggml.h"
#include "formats/uqff/uqff.h"
#include "io/source.h"

using tblob::Diag;
using tblob::Status;
using tblob::capi::bad_arg;
using tblob::capi::begin;

namespace {


struct Adapter {
  tblob_uqff_report_fn fn;
  void *user;
  const tblob::Allocator *alloc;
};

int adapt(void *u, const tblob::uqff::ReportEntry &e) {
  const Adapter *a = static_cast<const Adapter *>(u);
  if (!a->fn) return 0;
  tblob_uqff_report_entry r;
  std::memset(&r, 0, sizeof(r));
  r.struct_size = sizeof(r);
  r.kind = static_cast<uint32_t>(e.kind);
  r.name = e.name;
  r.name_len = e.name_len;
  r.family = static_cast<uint32_t>(e.family);
  r.label = e.label ? e.label : "";
  r.ggml_type = e.ggml_type;
  r.bits = e.bits;
  r.group_size = e.group_size;
  r.shard = e.shard;
  r.shard_span = e.shard_span;
  r.dtype = e.dtype;
  r.shape = e.shape;
  r.rank = e.rank;
  r.has_bias = e.has_bias;
  r.experts = e.experts;
  r.stored_bytes = e.stored_bytes;
  r.version_major = e.version_major;
  r.version_minor = e.version_minor;
  r.version_patch = e.version_patch;
  // Problems: on the stack for the usual few, through the allocator for a long set list.
  tblob_uqff_problem local[tblob::uqff::kMaxProblems];
  tblob_uqff_problem *p = local;
  const size_t n = e.problem_count;
  if (n > tblob::uqff::kMaxProblems) {
    p = static_cast<tblob_uqff_problem *>(a->alloc->alloc(n * sizeof(tblob_uqff_problem)));
    if (!p) return -1;
  }
  for (size_t i = 0; i < n; ++i) {
    p[i].struct_size = sizeof(tblob_uqff_problem);
    p[i].severity = static_cast<uint32_t>(e.problems[i].severity);
    p[i].status = e.problems[i].status;
    p[i].message = e.problems[i].message;
    p[i].message_len = std::strlen(e.problems[i].message);
  }
  r.problem_count = static_cast<uint32_t>(n);
  r.problems = n ? p : nullptr;
  const int rc = a->fn(a->user, &r);
  if (p != local) a->alloc->free(p, n * sizeof(tblob_uqff_problem));
  return rc;
}

// The two verify entry points after their own argument checks: result size, limits, a
// scratch model, the report adapter, the summary copied out. verify(m, limits, report,
// report_user, summary) runs the set.
template <class Verify>
Status run_verify(const tblob_open_options *options, tblob_uqff_report_fn fn, void *user,
                  tblob_uqff_verify_result *result, const Diag &d, Verify &&verify) {
  if (result && !TBLOB_COVERS(result, warnings))
    return bad_arg(d, "result->struct_size too small (use TBLOB_UQFF_VERIFY_RESULT_INIT)");
  tblob::Limits limits;
  if (!tblob::resolve_limits(options, &limits)) return bad_arg(d, "options: struct_size or mode");
  tblob_model *m = tblob::model_new(limits.allocator);
  if (!m) return d.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  Adapter a{fn, user, &m->alloc};
  tblob::uqff::VerifySummary sum;
  const Status s = verify(m, limits, adapt, &a, &sum);
  tblob::model_free(m);
  if (result) {
    result->version_major = sum.version_major;
    result->version_minor = sum.version_minor;
    result->version_patch = sum.version_patch;
    result->shards = sum.shards;
    result->layers = sum.layers;
    result->tensors = sum.tensors;
    result->errors = sum.errors;
    result->warnings = sum.warnings;
  }
  return s;
}

}  // namespace

extern "C" {

TBLOB_API tblob_status tblob_uqff_open(const char *const *paths, size_t path_count,
                                       const tblob_open_options *options, tblob_model **out,
                                       tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (out) *out = nullptr;
  if (!out || !paths || path_count == 0) return bad_arg(d, "paths (path_count > 0) and out are required");
  tblob::Limits limits;
  if (!tblob::resolve_limits(options, &limits)) return bad_arg(d, "options: struct_size or mode");
  return tblob::model_build(limits.allocator, out, d, [&](tblob_model *m) {
    return tblob::uqff::open_set(m, paths, path_count, limits, d);
  });
}

TBLOB_API tblob_status tblob_uqff_layer_info_at(const tblob_model *model, uint64_t index,
                                                tblob_uqff_layer_info *info, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!model || !info) return bad_arg(d, "model and info are required");
  if (!TBLOB_COVERS(info, stored_bytes))
    return bad_arg(d, "info->struct_size too small (use TBLOB_UQFF_LAYER_INFO_INIT)");
  tblob::uqff::LayerView v;
  const Status s = tblob::uqff::layer_view(model, index, &v, d);
  if (s != TBLOB_OK) return s;
  info->family = v.is_layer ? static_cast<uint32_t>(v.family) : static_cast<uint32_t>(TBLOB_UQFF_PLAIN);
  info->label = v.label;
  info->ggml_type = v.ggml_type;
  info->bits = v.bits;
  info->group_size = v.group_size;
  info->weight_dtype = v.weight_dtype;
  info->scale_dtype = v.scale_dtype;
  info->shard = v.shard;
  info->shard_span = v.shard_span;
  info->has_bias = v.has_bias;
  info->experts = v.experts;
  info->rows = v.rows;
  info->cols = v.cols;
  info->stored_bytes = v.stored_bytes;
  return TBLOB_OK;
}

TBLOB_API tblob_status tblob_uqff_verify(const char *const *paths, size_t path_count,
                                         const tblob_open_options *options, tblob_uqff_report_fn fn,
                                         void *user, tblob_uqff_verify_result *result,
                                         tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!paths || path_count == 0) return bad_arg(d, "paths (path_count > 0) are required");
  return run_verify(options, fn, user, result, d, [&](tblob_model *m, const tblob::Limits &limits, auto report,
                                                       void *report_user, tblob::uqff::VerifySummary *sum) {
    return tblob::uqff::verify_set(m, paths, path_count, limits, report, report_user, sum, d);
  });
}

TBLOB_API tblob_status tblob_uqff_open_memory(const void *const *bufs, const size_t *lens, size_t count,
                                              const tblob_open_options *options, tblob_model **out,
                                              tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (out) *out = nullptr;
  if (!out || !bufs || !lens || count == 0) return bad_arg(d, "bufs, lens (count > 0) and out are required");
  for (size_t i = 0; i < count; ++i)
    if (!bufs[i] && lens[i]) return bad_arg(d, "a buffer is NULL with a non-zero length");
  tblob::Limits limits;
  if (!tblob::resolve_limits(options, &limits)) return bad_arg(d, "options: struct_size or mode");
  return tblob::model_build(limits.allocator, out, d, [&](tblob_model *m) {
    return tblob::uqff::open_buffers(m, reinterpret_cast<const uint8_t *const *>(bufs), lens, count, limits,
                                     nullptr, nullptr, nullptr, d);
  });
}

TBLOB_API tblob_status tblob_uqff_verify_memory(const void *const *bufs, const size_t *lens, size_t count,
                                                const tblob_open_options *options, tblob_uqff_report_fn fn,
                                                void *user, tblob_uqff_verify_result *result,
                                                tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!bufs || !lens || count == 0) return bad_arg(d, "bufs and lens (count > 0) are required");
  for (size_t i = 0; i < count; ++i)
    if (!bufs[i] && lens[i]) return bad_arg(d, "a buffer is NULL with a non-zero length");
  return run_verify(options, fn, user, result, d, [&](tblob_model *m, const tblob::Limits &limits, auto report,
                                                       void *report_user, tblob::uqff::VerifySummary *sum) {
    return tblob::uqff::open_buffers(m, reinterpret_cast<const uint8_t *const *>(bufs), lens, count, limits, report,
                                     report_user, sum, d);
  });
}

TBLOB_API tblob_status tblob_uqff_detect(const char *path, int *is_uqff, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!path || !is_uqff) return bad_arg(d, "path and is_uqff are required");
  *is_uqff = 0;
  if (tblob::path_is_directory(path)) {
    *is_uqff = tblob::uqff::looks_like_dir(path) ? 1 : 0;
    return TBLOB_OK;
  }
  uint8_t head[64];
  const long long got = tblob::read_file_prefix(path, head, sizeof(head));
  if (got >= 0) *is_uqff = tblob::uqff::looks_like_shard(path, head, static_cast<size_t>(got)) ? 1 : 0;
  return TBLOB_OK;
}

}  // extern "C"
