// MLX/Ollama schemes against the machine's write ceiling, through the public API as users call
// it: tblob_quant_dequantize of a whole 8192 x 8192 tensor into a pre-faulted 256 MiB f32
// buffer, per kernel set (tblob_kernel_set), alternated in one loop with
//   fill     an AVX2 non-temporal store loop writing the same 256 MiB (non-zero bytes);
//   ceiling  the same store loop that also reads the case's input bytes (codes, scales,
//            biases) front to back as it goes: the bytes the kernel must move, at the
//            machine's read + write rate (what a kernel of zero compute would take);
//   kernel   tblob_quant_dequantize.
// Best of -r repetitions of each (thread CPU time, or wall time with -w; the three alternate
// so they see the same load).
// Prints one line per (set, case): output GB/s of kernel, fill and ceiling, kernel/fill,
// ceiling/fill and kernel/ceiling, and the cache-resident rate of the same call on the first 8
// rows (64 Ki elements, 256 KiB of f32: below the streaming threshold, input and output in L2),
// in Gelem/s, best of 200. -o f16 / bf16: the same with 16-bit outputs (128 MiB; the fill and
// ceiling write the same 128 MiB).
//   bench_fill_ratio [-r 5] [-w] [-s avx2,avx512] [-c case,...] [-o f32|f16|bf16]
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "bench_util.h"
#include "tensorblob.h"

namespace {

constexpr uint64_t kRows = 8192, kCols = 8192;
// Output dtype (-o f32|f16|bf16) and the bytes written: 256 MiB of f32, 128 MiB of f16/bf16.
uint32_t g_out = TBLOB_DTYPE_F32;
size_t kOutBytes = kRows * kCols * 4;


using bench::Big;
using bench::xs;

struct Case {
  const char *name;
  uint32_t scheme, bits, group, sdt;
};
const Case kCases[] = {
    {"affine4-g32-f16", TBLOB_QUANT_MLX_AFFINE, 4, 32, TBLOB_DTYPE_F16},
    {"affine4-g64-bf16", TBLOB_QUANT_MLX_AFFINE, 4, 64, TBLOB_DTYPE_BF16},
    {"affine8-g64-bf16", TBLOB_QUANT_MLX_AFFINE, 8, 64, TBLOB_DTYPE_BF16},
    {"nvfp4", TBLOB_QUANT_NVFP4, 0, 16, TBLOB_DTYPE_F8_E4M3},
    {"mxfp4", TBLOB_QUANT_MXFP4, 0, 32, TBLOB_DTYPE_F8_E8M0},
    {"mxfp8", TBLOB_QUANT_MXFP8, 0, 32, TBLOB_DTYPE_F8_E8M0},
};

uint32_t sbytes(uint32_t dt) {
  return dt == TBLOB_DTYPE_F32 ? 4 : (dt == TBLOB_DTYPE_F16 || dt == TBLOB_DTYPE_BF16) ? 2 : 1;
}

// Model-like values: random codes; scales of magnitude ~1e-3, biases ~-0.02 (finite).
void fill_scale(uint32_t dt, uint8_t *p, bool bias) {
  const float mag = bias ? -0.02f : 0.001f + static_cast<float>(xs() % 1000) * 1e-5f;
  uint32_t f;
  std::memcpy(&f, &mag, 4);
  if (dt == TBLOB_DTYPE_BF16) {
    const uint16_t h = static_cast<uint16_t>(f >> 16);
    std::memcpy(p, &h, 2);
  } else if (dt == TBLOB_DTYPE_F16) {
    const uint16_t h = static_cast<uint16_t>(bias ? 0xA51F : 0x1419 + xs() % 512);
    std::memcpy(p, &h, 2);
  } else if (dt == TBLOB_DTYPE_F8_E8M0) {
    *p = static_cast<uint8_t>(118 + xs() % 8);
  } else {
    *p = static_cast<uint8_t>(0x20 + xs() % 0x50);
  }
}

struct Input {
  Big codes, scales, biases;
  tblob_quant_desc d = TBLOB_QUANT_DESC_INIT;
  Input(const Case &c, uint64_t code_bytes, uint64_t groups)
      : codes(code_bytes), scales(groups * sbytes(c.sdt)),
        biases(c.scheme == TBLOB_QUANT_MLX_AFFINE ? groups * sbytes(c.sdt) : 0) {}
  uint64_t bytes() const { return d.data_bytes + d.scales_bytes + d.biases_bytes; }
};

Input *make(const Case &c) {
  const uint32_t bits = c.scheme == TBLOB_QUANT_MLX_AFFINE ? c.bits : c.scheme == TBLOB_QUANT_MXFP8 ? 8 : 4;
  const uint64_t code_bytes = kRows * kCols * bits / 8, groups = kRows * (kCols / c.group);
  Input *in = new Input(c, code_bytes, groups);
  for (uint64_t i = 0; i + 8 <= code_bytes; i += 8) {
    const uint64_t v = xs();
    std::memcpy(in->codes.p + i, &v, 8);
  }
  const uint32_t ss = sbytes(c.sdt);
  for (uint64_t g = 0; g < groups; ++g) fill_scale(c.sdt, in->scales.p + g * ss, false);
  tblob_quant_desc &d = in->d;
  d.scheme = c.scheme;
  d.bits = c.bits;
  d.group_size = c.group;
  d.scale_dtype = c.sdt;
  d.special = TBLOB_SPECIAL_MLX;
  d.rows = kRows;
  d.cols = kCols;
  d.data = in->codes.p;
  d.data_bytes = code_bytes;
  d.scales = in->scales.p;
  d.scales_bytes = groups * ss;
  if (c.scheme == TBLOB_QUANT_MLX_AFFINE) {
    d.bias_dtype = c.sdt;
    for (uint64_t g = 0; g < groups; ++g) fill_scale(c.sdt, in->biases.p + g * ss, true);
    d.biases = in->biases.p;
    d.biases_bytes = groups * ss;
  }
  return in;
}

// The ceiling: the fill reading the case's three input arrays alongside (bench_util.h).
uint64_t stream_fill_reading(uint8_t *dst, size_t n, const Input &in) {
  const bench::Stream src[3] = {{in.codes.p, in.d.data_bytes}, {in.scales.p, in.d.scales_bytes}, {in.biases.p, in.d.biases_bytes}};
  return bench::stream_fill_reading(dst, n, src, 3);
}

// Thread CPU time (wall time with -w): on a shared machine wall time mostly measures the
// neighbours; a run that was descheduled costs CPU time only for the cache it lost.
bool g_wall = false;
double now() {
  if (g_wall) return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
template <class F>
double seconds(F &&f) {
  const double t0 = now();
  f();
  return now() - t0;
}

std::vector<std::string> split(const char *s) {
  std::vector<std::string> out;
  std::string cur;
  for (; *s; ++s) {
    if (*s == ',') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += *s;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

}  // namespace

int main(int argc, char **argv) {
  int reps = 5;
  std::vector<std::string> sets = {"avx2", "avx512"}, only;
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "-w")) g_wall = true;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "-w")) --i;
    else if (!std::strcmp(argv[i], "-r")) reps = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "-s")) sets = split(argv[i + 1]);
    else if (!std::strcmp(argv[i], "-c")) only = split(argv[i + 1]);
    else if (!std::strcmp(argv[i], "-o")) {
      g_out = !std::strcmp(argv[i + 1], "bf16") ? TBLOB_DTYPE_BF16 : !std::strcmp(argv[i + 1], "f16") ? TBLOB_DTYPE_F16 : TBLOB_DTYPE_F32;
      kOutBytes = kRows * kCols * sbytes(g_out);
    }
  }
  Big out(kOutBytes);
  volatile uint64_t sink = 0;
  std::vector<uint8_t> small(8 * kCols * sbytes(g_out));
  std::printf("%-7s %-17s %9s %9s %9s %8s %8s %8s %12s %9s\n", "set", "case", "kernel", "fill", "ceiling",
              "k/fill", "c/fill", "k/ceil", "MiB in+out", "cache");
  for (const Case &c : kCases) {
    if (!only.empty() && std::find(only.begin(), only.end(), c.name) == only.end()) continue;
    Input *in = make(c);
    for (const std::string &set : sets) {
      tblob_diag diag = TBLOB_DIAG_INIT;
      if (tblob_kernel_set(set.c_str(), &diag) != TBLOB_OK) {
        std::printf("%-7s %-17s unavailable here\n", set.c_str(), c.name);
        continue;
      }
      double bk = 1e30, bf = 1e30, bc = 1e30;
      for (int r = 0; r < reps; ++r) {
        bf = std::min(bf, seconds([&] { bench::stream_fill(out.p, kOutBytes); }));
        bk = std::min(bk, seconds([&] {
                        if (tblob_quant_dequantize(&in->d, g_out, 0, TBLOB_ALL_ROWS, out.p, kOutBytes,
                                                   &diag) != TBLOB_OK) {
                          std::fprintf(stderr, "%s: %s\n", c.name, diag.message);
                          std::exit(1);
                        }
                      }));
        bc = std::min(bc, seconds([&] { sink = sink + stream_fill_reading(out.p, kOutBytes, *in); }));
      }
      tblob_quant_desc sd = in->d;  // the first 8 rows
      sd.rows = 8;
      sd.data_bytes = in->d.data_bytes / (kRows / 8);
      sd.scales_bytes = in->d.scales_bytes / (kRows / 8);
      sd.biases_bytes = in->d.biases_bytes / (kRows / 8);
      double bs = 1e30;
      for (int r = 0; r < 200; ++r)
        bs = std::min(bs, seconds([&] {
                        tblob_quant_dequantize(&sd, g_out, 0, TBLOB_ALL_ROWS, small.data(), small.size(), nullptr);
                      }));
      const double gb = static_cast<double>(kOutBytes) / 1e9;
      std::printf("%-7s %-17s %9.2f %9.2f %9.2f %8.3f %8.3f %8.3f %12.0f %9.2f\n", set.c_str(), c.name, gb / bk, gb / bf,
                  gb / bc, bf / bk, bf / bc, bc / bk,
                  static_cast<double>(in->bytes() + kOutBytes) / (1 << 20), 8.0 * kCols / bs / 1e9);
      std::fflush(stdout);
    }
    delete in;
  }
  tblob_kernel_set("auto", nullptr);
  std::printf("auto kernel set: %s\n", tblob_kernel_active());
  return static_cast<int>(sink & 0);
}
