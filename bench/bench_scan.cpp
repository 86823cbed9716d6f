// In-process header benchmarks on one checkpoint (bench/README.md):
//   tblob_st_scan without scratch, tblob_st_scan with scratch (whole-table checks),
//   tblob_model_open_memory + tblob_model_close, and simdjson on-demand iterating the same fields.
//
//   bench_scan [FILE] [google-benchmark flags]
//
// FILE defaults to the 20,000-tensor checkpoint generated into the build dir by
// bench/make_header.py (BENCH_DEFAULT_FILE). It is mapped read-only; only the header is
// read (the data region is a hole). Counters:
//   bytes_per_second  header bytes (the 8-byte length + N) per second
//   ns_per_tensor     CPU time per tensor entry
//   x_simdjson        simdjson on-demand time / this benchmark's time (>1: faster than
//                     simdjson), both means measured back to back in this run: right after each
//                     benchmark's loop simdjson walks the header as many times (at most 2000).
//                     BM_simdjson_ondemand's own x_simdjson (about 1) shows the noise.
// All times are the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), as Google Benchmark's CPU
// column and bytes_per_second are: on a shared machine wall time measures the neighbours.
#include <benchmark/benchmark.h>
#include <simdjson.h>

#include <algorithm>
#include <ctime>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "simdjson_walk.h"
#include "tensorblob.h"

#ifndef BENCH_DEFAULT_FILE
#define BENCH_DEFAULT_FILE "st_20k.safetensors"
#endif

namespace {

struct Input {
  const uint8_t *data = nullptr;
  size_t len = 0;
  uint64_t header_bytes = 0;  // N
  uint64_t tensors = 0;
  simdjson::padded_string header;  // N bytes for simdjson, with its padding
};

Input g_in;

[[noreturn]] void die(const char *what, const char *path) {
  std::fprintf(stderr, "bench_scan: %s: %s\n", what, path);
  std::exit(1);
}

void load(const char *path) {
  const int fd = ::open(path, O_RDONLY);
  if (fd < 0) die("cannot open", path);
  struct stat st;
  if (::fstat(fd, &st) != 0) die("cannot stat", path);
  g_in.len = static_cast<size_t>(st.st_size);
  void *p = ::mmap(nullptr, g_in.len, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) die("cannot map", path);
  g_in.data = static_cast<const uint8_t *>(p);
  if (g_in.len < 8) die("too short", path);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | g_in.data[i];
  if (n > g_in.len - 8) die("bad header length", path);
  g_in.header_bytes = n;
  g_in.header = simdjson::padded_string(reinterpret_cast<const char *>(g_in.data + 8), n);
  tblob_scan_result r = TBLOB_SCAN_RESULT_INIT;
  tblob_diag d = TBLOB_DIAG_INIT;
  if (tblob_st_scan(g_in.data, g_in.len, nullptr, nullptr, nullptr, nullptr, 0, &r, &d) != TBLOB_OK) {
    std::fprintf(stderr, "bench_scan: %s: %s\n", path, d.message);
    std::exit(1);
  }
  g_in.tensors = r.tensor_count;
}

// ---- the work per tensor: the same fields on both sides --------------------------------

struct Sum {
  uint64_t v = 0;
};

int scan_cb(void *user, const tblob_scan_event *e) {
  Sum &s = *static_cast<Sum *>(user);
  // Name (raw slice), dtype, dims, offsets; metadata key and value.
  s.v += e->name_len + static_cast<unsigned char>(e->name_len ? e->name[0] : 0);
  if (e->kind == TBLOB_SCAN_TENSOR) {
    s.v += e->dtype;
    for (uint32_t i = 0; i < e->rank; ++i) s.v += e->shape[i];
    s.v += e->data_begin ^ e->data_end;
  } else {
    s.v += e->value_len;
  }
  return 0;
}

// ---- timing helpers ---------------------------------------------------------------------

// This thread's CPU time: on a shared machine wall time mostly measures the neighbours.
struct Clock {
  static double now_ns() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
  }
};

double g_simdjson_ns = 0;  // ns per walk of the header at startup (context only)

// Mean CPU ns per call of f over `calls` calls.
template <class F>
double mean_ns(F &&f, uint64_t calls) {
  const double t0 = Clock::now_ns();
  for (uint64_t i = 0; i < calls; ++i) f();
  return (Clock::now_ns() - t0) / static_cast<double>(calls ? calls : 1);
}

void walk_once(simdjson::ondemand::parser &parser) {
  benchmark::DoNotOptimize(bench::simdjson_walk(parser, g_in.header));
}

void set_counters(benchmark::State &state, double ns_per_iter, double simdjson_ns) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(8 + g_in.header_bytes));
  state.counters["ns_per_tensor"] = ns_per_iter / static_cast<double>(g_in.tensors);
  state.counters["tensors"] = static_cast<double>(g_in.tensors);
  if (simdjson_ns > 0 && ns_per_iter > 0) state.counters["x_simdjson"] = simdjson_ns / ns_per_iter;
}

// The loop is timed twice: by Google Benchmark (the table) and by us (the counters). Right
// after it, untimed by Google Benchmark, simdjson walks the header as many times (at most
// 2000), so that x_simdjson compares two means measured back to back: on a shared machine
// a baseline measured once at startup drifts by several percent.
template <class F>
void run(benchmark::State &state, F &&body) {
  const double t0 = Clock::now_ns();
  for (auto _ : state) body();
  const double ns = Clock::now_ns() - t0;
  const uint64_t iters = static_cast<uint64_t>(state.iterations());
  simdjson::ondemand::parser parser;
  walk_once(parser);  // warm the parser's buffers
  const double base = mean_ns([&] { walk_once(parser); }, iters < 2000 ? iters : 2000);
  set_counters(state, iters ? ns / static_cast<double>(iters) : 0, base);
}

// ---- benchmarks -------------------------------------------------------------------------

void BM_simdjson_ondemand(benchmark::State &state) {
  simdjson::ondemand::parser parser;
  run(state, [&] { walk_once(parser); });
}

void BM_st_scan(benchmark::State &state) {
  run(state, [&] {
    Sum s;
    tblob_scan_result r = TBLOB_SCAN_RESULT_INIT;
    const tblob_status st =
        tblob_st_scan(g_in.data, g_in.len, nullptr, scan_cb, &s, nullptr, 0, &r, nullptr);
    if (st != TBLOB_OK) state.SkipWithError("scan failed");
    benchmark::DoNotOptimize(s.v);
  });
}

void BM_st_scan_scratch(benchmark::State &state) {
  const size_t need = tblob_st_scan_scratch_bytes(g_in.tensors, 2);
  std::vector<uint64_t> scratch((need + 7) / 8);
  run(state, [&] {
    Sum s;
    tblob_scan_result r = TBLOB_SCAN_RESULT_INIT;
    const tblob_status st = tblob_st_scan(g_in.data, g_in.len, nullptr, scan_cb, &s,
                                          scratch.data(), scratch.size() * 8, &r, nullptr);
    if (st != TBLOB_OK || !r.whole_table_checked) state.SkipWithError("scan with scratch failed");
    benchmark::DoNotOptimize(s.v);
  });
}

void BM_st_scan_nocallback(benchmark::State &state) {
  run(state, [&] {
    tblob_scan_result r = TBLOB_SCAN_RESULT_INIT;
    const tblob_status st =
        tblob_st_scan(g_in.data, g_in.len, nullptr, nullptr, nullptr, nullptr, 0, &r, nullptr);
    if (st != TBLOB_OK) state.SkipWithError("scan failed");
    benchmark::DoNotOptimize(r.tensor_count);
  });
}

void BM_open_memory(benchmark::State &state) {
  run(state, [&] {
    tblob_model *m = nullptr;
    const tblob_status st = tblob_model_open_memory(g_in.data, g_in.len, nullptr, &m, nullptr);
    if (st != TBLOB_OK) state.SkipWithError("open failed");
    benchmark::DoNotOptimize(tblob_model_tensor_count(m));
    tblob_model_close(m);
  });
}

}  // namespace

int main(int argc, char **argv) {
  const char *file = BENCH_DEFAULT_FILE;
  // A first argument that is not a flag is the checkpoint.
  if (argc > 1 && argv[1][0] != '-') {
    file = argv[1];
    for (int i = 1; i + 1 < argc; ++i) argv[i] = argv[i + 1];
    --argc;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  load(file);
  {
    simdjson::ondemand::parser parser;
    walk_once(parser);
    g_simdjson_ns = mean_ns([&] { walk_once(parser); }, 200);
  }
  benchmark::AddCustomContext("file", file);
  benchmark::AddCustomContext("tensors", std::to_string(g_in.tensors));
  benchmark::AddCustomContext("header_bytes", std::to_string(8 + g_in.header_bytes));
  benchmark::AddCustomContext("simdjson_implementation",
                              std::string(simdjson::get_active_implementation()->name()));
  benchmark::AddCustomContext("simdjson_baseline_ns", std::to_string(g_simdjson_ns));
  benchmark::RegisterBenchmark("BM_simdjson_ondemand", BM_simdjson_ondemand);
  benchmark::RegisterBenchmark("BM_st_scan", BM_st_scan);
  benchmark::RegisterBenchmark("BM_st_scan_scratch", BM_st_scan_scratch);
  benchmark::RegisterBenchmark("BM_st_scan_nocallback", BM_st_scan_nocallback);
  benchmark::RegisterBenchmark("BM_open_memory", BM_open_memory);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
