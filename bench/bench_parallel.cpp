// Multi-threaded dequantization against the machine's own limits, through the public API only
// (bench/README-parallel.md). Every measurement is interleaved with its reference in the same
// round and the best of --reps rounds is kept, so a busy shared machine hurts both alike.
//
//   bench_parallel scale [--reps N] [--threads T]
//       One tensor whose f32 output is 1 GiB (16384 x 16384), per scheme: the call on 1 thread
//       and on T threads (default 2), and a streaming-store fill of the same 1 GiB buffer on 1
//       and on T threads. Reports T-thread / 1-thread speedup and the ratio to the T-thread fill.
//   bench_parallel model PATH [--reps N] [--threads T] [--to bf16|f16|f32] [--window MiB]
//                            [--stores stream|auto|cache]   (tblob_dequant_options.stores)
//       A whole model (bench/make_model.py): open, list (tblob_tensors_at + quant info of every
//       tensor) and dequantize everything with tblob_tensors_dequantize, window by window into
//       one pre-faulted arena (default 512 MiB), against a T-thread streaming fill of the same
//       bytes into the same arena, the same fill also reading the model file in step (the bytes
//       any dequantizer moves: the machine's bound), and the same dequantization on 1 thread.
//       The first pass after open (which also faults the mapped file in) is reported on its own.
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "bench_util.h"
#include "tensorblob.h"

namespace {

double now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// CPU seconds of every thread of the process: over a timing, cpu / wall is the number of cores
// the run actually got, which on a shared machine bounds any speedup.
double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Best wall time of a measurement and the CPU time of that run.
struct Best {
  double wall = 1e30, cpu = 0;
  template <typename F>
  void run(F f) {
    const double c = cpu_seconds(), t = now();
    f();
    const double w = now() - t, cc = cpu_seconds() - c;
    if (w < wall) {
      wall = w;
      this->cpu = cc;
    }
  }
};

struct FillPart {
  uint8_t *p;
  size_t n;
  bench::Stream in;  // read alongside (len 0: none)
  uint64_t sum;
};
void *fill_main(void *a) {
  FillPart *f = static_cast<FillPart *>(a);
  if (f->in.len)
    f->sum = bench::stream_fill_reading(f->p, f->n, &f->in, 1);
  else
    bench::stream_fill(f->p, f->n);
  return nullptr;
}

// Fills n bytes at p on `threads` threads (created for the call, like the library's), each
// also reading its share of `in` when in.len > 0.
void fill(uint8_t *p, size_t n, uint32_t threads, bench::Stream in = {nullptr, 0}) {
  std::vector<FillPart> parts(threads);
  std::vector<pthread_t> tids(threads);
  const size_t per = (n / threads) & ~size_t{127};
  for (uint32_t t = 0; t < threads; ++t) {
    const size_t b = per * t, e = t + 1 == threads ? n : per * (t + 1);
    const uint64_t ib = in.len * b / n, ie = in.len * e / n;
    parts[t] = {p + b, e - b, {in.p + ib, ie - ib}, 0};
  }
  for (uint32_t t = 1; t < threads; ++t) pthread_create(&tids[t], nullptr, fill_main, &parts[t]);
  fill_main(&parts[0]);
  for (uint32_t t = 1; t < threads; ++t) pthread_join(tids[t], nullptr);
}

uint8_t *arena(size_t n) {
  void *p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("mmap");
    std::exit(1);
  }
  std::memset(p, 1, n);  // pre-faulted: no page faults inside the timings
  return static_cast<uint8_t *>(p);
}

using bench::xs;

// The file read-only mapped and every page touched once (so no fault lands in a timing).
bench::Stream map_file(const char *path) {
  const int fd = ::open(path, O_RDONLY);
  struct stat st;
  if (fd < 0 || ::fstat(fd, &st) != 0 || st.st_size <= 0) {
    std::perror(path);
    std::exit(1);
  }
  void *p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) {
    std::perror("mmap");
    std::exit(1);
  }
  const uint8_t *b = static_cast<const uint8_t *>(p);
  volatile uint8_t sink = 0;
  for (off_t i = 0; i < st.st_size; i += 4096) sink = static_cast<uint8_t>(sink + b[i]);
  return {b, static_cast<uint64_t>(st.st_size)};
}

// An Ollama combined blob with one quantized tensor "w" (rows x cols) in memory.
std::string one_tensor(const char *qt, uint32_t bits, uint32_t group, bool affine, uint64_t rows, uint64_t cols) {
  const uint64_t code_bytes = rows * cols * bits / 8, groups = rows * (cols / group);
  const uint64_t sb = affine ? 2 : 1;
  std::string h = "{\"__metadata__\":{\"w.quant_type\":\"" + std::string(qt) + "\",\"w.group_size\":\"" +
                  std::to_string(group) + "\"},\"w\":{\"dtype\":\"U32\",\"shape\":[" + std::to_string(rows) + "," +
                  std::to_string(cols * bits / 32) + "],\"data_offsets\":[0," + std::to_string(code_bytes) + "]}";
  uint64_t off = code_bytes;
  const char *sdt = affine ? "BF16" : "U8";
  h += ",\"w.scale\":{\"dtype\":\"" + std::string(sdt) + "\",\"shape\":[" + std::to_string(rows) + "," +
       std::to_string(cols / group) + "],\"data_offsets\":[" + std::to_string(off) + "," +
       std::to_string(off + groups * sb) + "]}";
  off += groups * sb;
  if (affine) {
    h += ",\"w.bias\":{\"dtype\":\"BF16\",\"shape\":[" + std::to_string(rows) + "," + std::to_string(cols / group) +
         "],\"data_offsets\":[" + std::to_string(off) + "," + std::to_string(off + groups * 2) + "]}";
    off += groups * 2;
  }
  h += "}";
  while (h.size() % 8) h += ' ';
  std::string out(8 + h.size() + off, '\0');
  const uint64_t hl = h.size();
  std::memcpy(&out[0], &hl, 8);
  std::memcpy(&out[8], h.data(), h.size());
  uint8_t *d = reinterpret_cast<uint8_t *>(&out[8 + h.size()]);
  for (uint64_t i = 0; i + 8 <= code_bytes; i += 8) {
    const uint64_t v = xs();
    std::memcpy(d + i, &v, 8);
  }
  uint8_t *s = d + code_bytes;
  for (uint64_t g = 0; g < groups; ++g) {
    if (affine) {
      const uint16_t sc = static_cast<uint16_t>(0x3B00 + xs() % 64), bi = static_cast<uint16_t>(0xBC00 + xs() % 64);
      std::memcpy(s + 2 * g, &sc, 2);
      std::memcpy(s + 2 * groups + 2 * g, &bi, 2);
    } else {
      s[g] = static_cast<uint8_t>(std::strcmp(qt, "nvfp4") == 0 ? 0x30 + xs() % 32 : 120 + xs() % 10);
    }
  }
  return out;
}

uint32_t arg_u32(int argc, char **argv, const char *name, uint32_t def) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return static_cast<uint32_t>(std::strtoul(argv[i + 1], nullptr, 10));
  return def;
}
const char *arg_str(int argc, char **argv, const char *name, const char *def) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return def;
}

void check(tblob_status s, const tblob_diag &d, const char *what) {
  if (s == TBLOB_OK) return;
  std::fprintf(stderr, "%s: %s: %s\n", what, tblob_status_name(s), d.message);
  std::exit(1);
}

int cmd_scale(int argc, char **argv) {
  const uint32_t reps = arg_u32(argc, argv, "--reps", 5), threads = arg_u32(argc, argv, "--threads", 2);
  const uint64_t rows = 16384, cols = 16384, out_bytes = rows * cols * 4;  // 1 GiB of f32
  uint8_t *out = arena(out_bytes);
  struct Case {
    const char *name, *qt;
    uint32_t bits, group;
    bool affine;
  } cases[] = {{"int4 g64 bf16", "int4", 4, 64, true},
               {"int8 g64 bf16", "int8", 8, 64, true},
               {"mxfp4", "mxfp4", 4, 32, false},
               {"nvfp4", "nvfp4", 4, 16, false},
               {"mxfp8", "mxfp8", 8, 32, false}};
  std::printf("kernel set %s; 1 GiB f32 output (16384 x 16384); T = %u threads; best of %u interleaved rounds\n"
              "fill-x: the T-thread fill's speedup over 1 thread (what the machine gives); cores: CPU / wall time of\n"
              "the best call; cpu 1/T: CPU time of the 1-thread call over the T-thread call's (1.00: no\n"
              "work added by splitting)\n",
              tblob_kernel_active(), threads, reps);
  std::printf("%-14s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n", "scheme", "1t GB/s", "Tt GB/s", "speedup", "fill1",
              "fillT", "fill-x", "of fillT", "cores 1t", "cores Tt", "cpu 1/T");
  for (const Case &c : cases) {
    const std::string blob = one_tensor(c.qt, c.bits, c.group, c.affine, rows, cols);
    tblob_model *m = nullptr;
    tblob_diag d = TBLOB_DIAG_INIT;
    check(tblob_model_open_memory(blob.data(), blob.size(), nullptr, &m, &d), d, "open");
    uint64_t idx = 0;
    check(tblob_tensor_find(m, "w", 1, &idx, &d), d, "find");
    Best b1, bt, f1, ft;
    tblob_dequant_options o1 = TBLOB_DEQUANT_OPTIONS_INIT, ot = TBLOB_DEQUANT_OPTIONS_INIT;
    o1.threads = 1;
    ot.threads = threads;
    for (uint32_t r = 0; r < reps; ++r) {
      f1.run([&] { fill(out, out_bytes, 1); });
      b1.run([&] {
        check(tblob_tensor_dequantize_opts(m, idx, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, out, out_bytes, &o1, &d), d,
              "1t");
      });
      ft.run([&] { fill(out, out_bytes, threads); });
      bt.run([&] {
        check(tblob_tensor_dequantize_opts(m, idx, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, out, out_bytes, &ot, &d), d,
              "nt");
      });
    }
    const double g = static_cast<double>(out_bytes) / 1e9;
    std::printf("%-14s %8.2f %8.2f %7.2fx %8.2f %8.2f %7.2fx %8.2f %8.2f %8.2f %8.2f\n", c.name, g / b1.wall,
                g / bt.wall, b1.wall / bt.wall, g / f1.wall, g / ft.wall, f1.wall / ft.wall, ft.wall / bt.wall,
                b1.cpu / b1.wall, bt.cpu / bt.wall, b1.cpu / bt.cpu);
    std::fflush(stdout);
    tblob_model_close(m);
  }
  return 0;
}

int cmd_model(int argc, char **argv) {
  if (argc < 3) return 2;
  const char *path = argv[2];
  const uint32_t reps = arg_u32(argc, argv, "--reps", 3), threads = arg_u32(argc, argv, "--threads", 2);
  const uint64_t window = uint64_t{arg_u32(argc, argv, "--window", 512)} << 20;
  const char *to = arg_str(argc, argv, "--to", "bf16");
  const char *stores = arg_str(argc, argv, "--stores", "stream");
  const uint32_t st = std::strcmp(stores, "auto") == 0    ? TBLOB_STORES_AUTO
                      : std::strcmp(stores, "cache") == 0 ? TBLOB_STORES_CACHE
                                                          : TBLOB_STORES_STREAM;
  const uint32_t dt = std::strcmp(to, "f32") == 0   ? TBLOB_DTYPE_F32
                      : std::strcmp(to, "f16") == 0 ? TBLOB_DTYPE_F16
                                                    : TBLOB_DTYPE_BF16;
  uint8_t *out = arena(window);
  const bench::Stream file = map_file(path);
  double best_open = 1e30, best_list = 1e30;
  Best bt, b1, bf, bfr, first;
  uint64_t total = 0, n = 0, quantized = 0, written = 0;
  for (uint32_t r = 0; r < reps; ++r) {
    tblob_diag d = TBLOB_DIAG_INIT;
    tblob_model *m = nullptr;
    double t = now();
    check(tblob_model_open(path, nullptr, &m, &d), d, "open");
    const double t_open = now() - t;
    // List: every descriptor and how it dequantizes, as a loader would before allocating.
    t = now();
    n = tblob_model_tensor_count(m);
    std::vector<tblob_tensor_info> infos(n);
    check(tblob_tensors_at(m, 0, n, infos.data(), sizeof(tblob_tensor_info), &d), d, "list");
    std::vector<tblob_dequant_job> jobs;
    quantized = 0;
    for (uint64_t i = 0; i < n; ++i) {
      if (infos[i].quant_flags & TBLOB_TENSOR_COMPANION) continue;
      tblob_quant_info qi = TBLOB_QUANT_INFO_INIT;
      check(tblob_tensor_quant_info(m, i, &qi, &d), d, "quant info");
      if (qi.status != TBLOB_OK) continue;
      uint64_t bytes = 0;
      check(tblob_tensor_dequant_size(m, i, dt, 0, TBLOB_ALL_ROWS, &bytes, &d), d, "size");
      tblob_dequant_job j = TBLOB_DEQUANT_JOB_INIT;
      j.index = i;
      j.out_dtype = dt;
      j.dst_bytes = static_cast<size_t>(bytes);
      jobs.push_back(j);
      quantized += (infos[i].quant_flags & TBLOB_TENSOR_QUANTIZED) != 0;
    }
    const double t_list = now() - t;
    written = jobs.size();
    // Windows: consecutive tensors packed into the arena (a tensor larger than the arena alone).
    auto run = [&](uint32_t nthreads) {
      tblob_dequant_options o = TBLOB_DEQUANT_OPTIONS_INIT;
      o.threads = nthreads;
      o.stores = st;
      total = 0;
      for (size_t k = 0; k < jobs.size();) {
        size_t e = k;
        uint64_t used = 0;
        while (e < jobs.size() && (e == k || used + jobs[e].dst_bytes <= window)) {
          jobs[e].dst = out + used;
          used += jobs[e].dst_bytes;
          ++e;
        }
        if (used > window) {  // one tensor over the arena: by rows, window by window
          std::fprintf(stderr, "tensor %llu needs %llu bytes: raise --window\n",
                       static_cast<unsigned long long>(jobs[k].index), static_cast<unsigned long long>(used));
          std::exit(1);
        }
        check(tblob_tensors_dequantize(m, &jobs[k], e - k, sizeof(tblob_dequant_job), &o, &d), d, "dequantize");
        total += used;
        k = e;
      }
    };
    // The first pass also maps the model's pages in (minor faults on a page-cached file): what
    // a loader pays once. The comparisons below run on a mapped model.
    first.run([&] { run(threads); });
    bt.run([&] { run(threads); });
    // The fill ceiling: the same bytes into the same arena, window by window, same threads.
    bf.run([&] {
      for (uint64_t done = 0; done < total; done += window) fill(out, std::min(window, total - done), threads);
    });
    // The same fill also reading the model file (mapped here, page-cached) in step: the bytes
    // a dequantizer must move. The windows read the file in proportion to their output.
    bfr.run([&] {
      for (uint64_t done = 0; done < total; done += window) {
        const uint64_t w = std::min(window, total - done), ib = file.len * done / total,
                       ie = file.len * (done + w) / total;
        fill(out, w, threads, {file.p + ib, ie - ib});
      }
    });
    b1.run([&] { run(1); });
    tblob_model_close(m);
    best_open = std::min(best_open, t_open);
    best_list = std::min(best_list, t_list);
  }
  const double g = static_cast<double>(total) / 1e9;
  std::printf("%s: %llu tensors (%llu quantized, %llu written), %.2f GB of %s out; kernel set %s; stores %s; "
              "best of %u\n",
              path, static_cast<unsigned long long>(n), static_cast<unsigned long long>(quantized),
              static_cast<unsigned long long>(written), g, to, tblob_kernel_active(), stores, reps);
  std::printf("open %.2f ms, list %.2f ms\n", best_open * 1e3, best_list * 1e3);
  std::printf("dequantize %u threads %.3f s (%.2f GB/s, %.2f cores), 1 thread %.3f s (%.2f GB/s, %.2f cores), "
              "speedup %.2fx, CPU time 1 thread / %u threads %.2f\n",
              threads, bt.wall, g / bt.wall, bt.cpu / bt.wall, b1.wall, g / b1.wall, b1.cpu / b1.wall,
              b1.wall / bt.wall, threads, b1.cpu / bt.cpu);
  std::printf("fill %u threads %.3f s (%.2f GB/s, %.2f cores): dequantize at %.2f of the fill\n", threads, bf.wall,
              g / bf.wall, bf.cpu / bf.wall, bf.wall / bt.wall);
  std::printf("fill reading the model %u threads %.3f s (%.2f GB/s written, %.2f cores): %.2f of the fill; "
              "dequantize at %.2f of it\n",
              threads, bfr.wall, g / bfr.wall, bfr.cpu / bfr.wall, bf.wall / bfr.wall, bfr.wall / bt.wall);
  std::printf("first pass (page faults of the mapping included) %u threads %.3f s (%.2f cores)\n", threads, first.wall,
              first.cpu / first.wall);
  std::printf("total (open + list + first pass, %u threads) %.3f s\n", threads, best_open + best_list + first.wall);
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc >= 2 && std::strcmp(argv[1], "scale") == 0) return cmd_scale(argc, argv);
  if (argc >= 3 && std::strcmp(argv[1], "model") == 0) return cmd_model(argc, argv);
  std::fprintf(stderr, "usage: bench_parallel scale [--reps N] [--threads T]\n"
                       "       bench_parallel model PATH [--reps N] [--threads T] [--to bf16|f16|f32] [--window MiB]\n"
                       "                            [--stores stream|auto|cache]\n");
  return 2;
}
