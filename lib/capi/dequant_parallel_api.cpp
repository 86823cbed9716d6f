// Dequantization on several threads: a batch of row ranges (one large tensor, or many
// tensors) cut into row pieces that worker threads take in order from one atomic counter.
// Each piece is exactly a tblob_tensor_dequantize call on its rows, so the bytes cannot
// depend on the thread count; every argument is checked before a thread starts. Nothing is
// allocated: the piece list is implicit (piece ids are counted through the jobs in order).
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "capi/capi_common.h"
#include "core/parallel.h"
#include "dequant/dispatch.h"
#include "table/tensor_dequant.h"

using tblob::Diag;
using tblob::Status;
using tblob::capi::bad_arg;

namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kMinPiece = kMiB;     // below this a thread costs more than it saves
constexpr uint64_t kMaxPiece = 8 * kMiB; // TBLOB_STORES_AUTO still streams large pieces (>= 4 MiB)

// The first version of each struct: fields up to here are required.
constexpr size_t kJobSize0 = offsetof(tblob_dequant_job, reserved) + sizeof(uint32_t);

// Where a job's rows go: its row range with TBLOB_ALL_ROWS resolved, and bytes per row.
struct Geometry {
  uint64_t rb = 0, re = 0;  // rows [rb, re)
  uint64_t row_bytes = 0;   // 0: nothing to write (no rows, or empty rows)
  uint64_t bytes = 0;
};

tblob_dequant_job *job_at(tblob_dequant_job *jobs, size_t job_size, size_t i) {
  return reinterpret_cast<tblob_dequant_job *>(reinterpret_cast<unsigned char *>(jobs) + i * job_size);
}

// Checks one job as tblob_tensor_dequantize would (same status, same diag) without decoding.
Status check_job(const tblob_model *m, const tblob_dequant_job &j, Geometry *g, const Diag &d) {
  Status s = tblob::tensor_dequant_size(m, j.index, j.out_dtype, j.row_begin, j.row_end, &g->bytes, d);
  if (s != TBLOB_OK) return s;
  if (g->bytes > j.dst_bytes || (g->bytes != 0 && j.dst == nullptr))
    // The single call fails at the same check, before it writes anything: its report is ours.
    return tblob::tensor_dequantize(m, j.index, j.out_dtype, j.row_begin, j.row_end, j.dst,
                                    j.dst_bytes, d);
  g->rb = j.row_begin;
  g->re = j.row_end;
  if (g->re == TBLOB_ALL_ROWS) {
    // Rows of the tensor: bytes of all rows over the bytes of one (0 bytes: nothing to do).
    if (g->bytes == 0) {
      g->re = g->rb;
      return TBLOB_OK;
    }
    uint64_t one = 0;
    if ((s = tblob::tensor_dequant_size(m, j.index, j.out_dtype, g->rb, g->rb + 1, &one, d)) != TBLOB_OK)
      return s;
    g->re = g->rb + g->bytes / one;
  }
  g->row_bytes = g->re > g->rb ? g->bytes / (g->re - g->rb) : 0;
  return TBLOB_OK;
}

struct Shared {
  const tblob_model *model;
  tblob_dequant_job *jobs;
  size_t count, job_size;
  uint64_t piece_bytes;
  tblob::StorePolicy stores;  // every worker's, for the call
  uint64_t pieces;   // total
  uint64_t next;     // atomic: the next piece id to take
  int failed;        // atomic: a piece failed, stop taking more
};

uint64_t piece_rows(const Geometry &g, uint64_t piece_bytes) {
  const uint64_t r = g.row_bytes ? piece_bytes / g.row_bytes : 1;
  return r ? r : 1;
}

uint64_t pieces_of(const Geometry &g, uint64_t piece_bytes) {
  if (g.row_bytes == 0) return 0;
  const uint64_t pr = piece_rows(g, piece_bytes);
  return (g.re - g.rb) / pr + ((g.re - g.rb) % pr != 0);
}

// Per worker: the first failure it met (the lowest job index, since its pieces come in order).
struct WorkerState {
  Shared *sh;
  size_t failed_job;
  Status status;
  tblob_diag diag;
};

void worker(void *ctx, uint32_t w) {
  WorkerState &ws = static_cast<WorkerState *>(ctx)[w];
  Shared &sh = *ws.sh;
  const tblob::StorePolicyScope stores(sh.stores);
  // Piece ids grow for every worker, so the walk through the jobs only moves forward.
  size_t j = 0;
  uint64_t base = 0;  // id of job j's first piece
  Geometry g;
  uint64_t np = 0, pr = 1;
  bool have = false;
  for (;;) {
    if (__atomic_load_n(&sh.failed, __ATOMIC_RELAXED)) return;
    const uint64_t id = __atomic_fetch_add(&sh.next, 1, __ATOMIC_RELAXED);
    if (id >= sh.pieces) return;
    while (!have || id >= base + np) {
      if (have) {
        base += np;
        ++j;
      }
      const tblob_dequant_job &job = *job_at(sh.jobs, sh.job_size, j);
      tblob_diag quiet = TBLOB_DIAG_INIT;
      Diag d;
      d.out = &quiet;
      g = Geometry();
      check_job(sh.model, job, &g, d);  // passed once already: same answer
      np = pieces_of(g, sh.piece_bytes);
      pr = piece_rows(g, sh.piece_bytes);
      have = true;
    }
    const tblob_dequant_job &job = *job_at(sh.jobs, sh.job_size, j);
    const uint64_t k = id - base;
    const uint64_t r0 = g.rb + k * pr;
    const uint64_t r1 = g.re - r0 < pr ? g.re : r0 + pr;
    Diag d;
    d.out = &ws.diag;
    const Status s = tblob::tensor_dequantize(sh.model, job.index, job.out_dtype, r0, r1,
                                              static_cast<unsigned char *>(job.dst) + (r0 - g.rb) * g.row_bytes,
                                              static_cast<size_t>((r1 - r0) * g.row_bytes), d);
    if (s != TBLOB_OK) {
      if (ws.status == TBLOB_OK) {
        ws.status = s;
        ws.failed_job = j;
      }
      __atomic_store_n(&sh.failed, 1, __ATOMIC_RELAXED);
      return;
    }
  }
}

Status run_jobs(const tblob_model *model, tblob_dequant_job *jobs, size_t count, size_t job_size,
                const tblob_dequant_options *options, const Diag &d) {
  if (!model) return bad_arg(d, "model is required");
  if (count && !jobs) return bad_arg(d, "jobs is NULL with a non-zero count");
  if (count && job_size < kJobSize0)
    return bad_arg(d, "job_size is smaller than the first tblob_dequant_job (use sizeof(tblob_dequant_job))");
  if (options && !TBLOB_COVERS(options, threads))
    return bad_arg(d, "options->struct_size too small (use TBLOB_DEQUANT_OPTIONS_INIT)");
  const uint32_t want = options ? options->threads : 0;
  const uint64_t piece_opt = options && TBLOB_COVERS(options, piece_bytes) ? options->piece_bytes : 0;
  const uint32_t stores = options && TBLOB_COVERS(options, stores) ? options->stores : TBLOB_STORES_AUTO;
  if (stores > TBLOB_STORES_CACHE)
    return bad_arg(d, "options->stores is not one of TBLOB_STORES_AUTO, _STREAM, _CACHE");
  if (options && TBLOB_COVERS(options, reserved) && options->reserved != 0)
    return bad_arg(d, "options->reserved must be 0");

  // Every job checked on this thread first; the first failure is the one reported.
  uint64_t total = 0;
  Status first = TBLOB_OK;
  for (size_t i = 0; i < count; ++i) {
    tblob_dequant_job &j = *job_at(jobs, job_size, i);
    Geometry g;
    tblob_diag quiet = TBLOB_DIAG_INIT;
    Diag qd;
    qd.out = &quiet;
    j.status = check_job(model, j, &g, first == TBLOB_OK ? d : qd);
    if (j.status != TBLOB_OK) {
      if (first == TBLOB_OK) first = j.status;
      continue;
    }
    total = total + g.bytes < total ? UINT64_MAX : total + g.bytes;
  }
  if (first != TBLOB_OK || total == 0) return first;

  uint32_t threads = want ? want : tblob::online_cores();
  uint64_t piece = piece_opt;
  if (piece == 0) {
    piece = total / (static_cast<uint64_t>(threads) * 4);
    piece = piece < kMinPiece ? kMinPiece : piece > kMaxPiece ? kMaxPiece : piece;
  }
  const tblob::StorePolicy policy = stores == TBLOB_STORES_STREAM  ? tblob::StorePolicy::kStream
                                    : stores == TBLOB_STORES_CACHE ? tblob::StorePolicy::kCache
                                                                   : tblob::StorePolicy::kAuto;
  Shared sh{model, jobs, count, job_size, piece, policy, 0, 0, 0};
  for (size_t i = 0; i < count; ++i) {
    Geometry g;
    tblob_diag quiet = TBLOB_DIAG_INIT;
    Diag qd;
    qd.out = &quiet;
    check_job(model, *job_at(jobs, job_size, i), &g, qd);
    sh.pieces += pieces_of(g, piece);
  }
  if (static_cast<uint64_t>(threads) > sh.pieces) threads = static_cast<uint32_t>(sh.pieces);
  if (threads > 256) threads = 256;
  WorkerState states[256];
  for (uint32_t w = 0; w < threads; ++w) {
    states[w].sh = &sh;
    states[w].failed_job = 0;
    states[w].status = TBLOB_OK;
    states[w].diag = TBLOB_DIAG_INIT;
  }
  if (threads > 1) {
    // The kernel choice and tables are made on first use: make them here, before any worker
    // starts, so their one-time setup happens on one thread (pthread_create orders it before
    // every worker; sanitizers cannot see the guard of a statically linked C++ runtime).
    tblob::active_kernel_table();
    tblob::active_ggml_kernels();
  }
  tblob::run_workers(threads, worker, states);

  // A failure while decoding (the checks passed: e.g. no runnable kernel set) is reported
  // for the lowest job that met one.
  const WorkerState *bad = nullptr;
  for (uint32_t w = 0; w < threads; ++w)
    if (states[w].status != TBLOB_OK && (!bad || states[w].failed_job < bad->failed_job)) bad = &states[w];
  if (!bad) return TBLOB_OK;
  job_at(jobs, job_size, bad->failed_job)->status = bad->status;
  return d.fail(bad->status, bad->diag.offset, bad->diag.tensor_index, "%s", bad->diag.message);
}

}  // namespace

extern "C" {

TBLOB_API tblob_status tblob_tensors_dequantize(const tblob_model *model, tblob_dequant_job *jobs,
                                                size_t count, size_t job_size,
                                                const tblob_dequant_options *options,
                                                tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  return run_jobs(model, jobs, count, job_size, options, d);
}

TBLOB_API tblob_status tblob_tensor_dequantize_opts(const tblob_model *model, uint64_t index,
                                                    uint32_t out_dtype, uint64_t row_begin,
                                                    uint64_t row_end, void *dst, size_t dst_bytes,
                                                    const tblob_dequant_options *options,
                                                    tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  tblob_dequant_job j = TBLOB_DEQUANT_JOB_INIT;
  j.out_dtype = out_dtype;
  j.index = index;
  j.row_begin = row_begin;
  j.row_end = row_end;
  j.dst = dst;
  j.dst_bytes = dst_bytes;
  return run_jobs(model, &j, 1, sizeof(j), options, d);
}

}  // extern "C"
