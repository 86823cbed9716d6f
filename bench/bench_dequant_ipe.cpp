// Instructions per element of the public dequantize call, for callgrind (robust to machine
// load, unlike timings): three tblob_quant_dequantize calls of a 64 x 8192 tensor -> f32 into a
// cached buffer (below the streaming threshold), with the kernel set forced. Usage:
//   valgrind --tool=callgrind --callgrind-out-file=cg.out build/bench/bench_dequant_ipe CASE [SET]
//   callgrind_annotate --inclusive=yes cg.out | grep -m1 tblob_quant_dequantize
// and divide the Ir by 3 * 64 * 8192 (bench/README-dequant.md, bench/dequant_ipe.sh).
// CASE: affine4-g32-f16, affine4-g64-bf16, affine8-g64-bf16, nvfp4, mxfp4, mxfp8. SET: avx2
// (default), scalar; valgrind does not run AVX-512.
#include <tensorblob.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {
uint64_t g_state = 88172645463325252ull;
uint64_t xs() {
  g_state ^= g_state << 13;
  g_state ^= g_state >> 7;
  g_state ^= g_state << 17;
  return g_state;
}
}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_dequant_ipe CASE [SET]\n");
    return 2;
  }
  const std::string c = argv[1];
  const uint64_t rows = 64, cols = 8192;
  uint32_t scheme = TBLOB_QUANT_MLX_AFFINE, bits = 4, group = 32, sdt = TBLOB_DTYPE_F16;
  if (c == "affine4-g64-bf16") {
    group = 64;
    sdt = TBLOB_DTYPE_BF16;
  } else if (c == "affine8-g64-bf16") {
    bits = 8;
    group = 64;
    sdt = TBLOB_DTYPE_BF16;
  } else if (c == "nvfp4") {
    scheme = TBLOB_QUANT_NVFP4;
    bits = 0;
    group = 16;
    sdt = TBLOB_DTYPE_F8_E4M3;
  } else if (c == "mxfp4" || c == "mxfp8") {
    scheme = c == "mxfp4" ? TBLOB_QUANT_MXFP4 : TBLOB_QUANT_MXFP8;
    bits = 0;
    group = 32;
    sdt = TBLOB_DTYPE_F8_E8M0;
  } else if (c != "affine4-g32-f16") {
    std::fprintf(stderr, "unknown case %s\n", c.c_str());
    return 2;
  }
  const uint32_t code_bits = bits != 0 ? bits : scheme == TBLOB_QUANT_MXFP8 ? 8 : 4;
  const uint32_t ss = (sdt == TBLOB_DTYPE_F16 || sdt == TBLOB_DTYPE_BF16) ? 2 : 1;
  const uint64_t code_bytes = rows * cols * code_bits / 8, groups = rows * cols / group;
  std::vector<uint8_t> codes(code_bytes), sc(groups * ss), bi(groups * ss);
  for (uint8_t &x : codes) x = static_cast<uint8_t>(xs());
  for (uint64_t g = 0; g < groups; ++g) {  // finite, model-like scales (bench_fill_ratio's ranges)
    if (ss == 2) {
      const bool f16 = sdt == TBLOB_DTYPE_F16;
      const uint16_t s = static_cast<uint16_t>(f16 ? 0x1419 + xs() % 512 : 0x3A83 + xs() % 64);
      const uint16_t b = f16 ? 0xA51F : 0xBCA4;
      std::memcpy(&sc[2 * g], &s, 2);
      std::memcpy(&bi[2 * g], &b, 2);
    } else {
      sc[g] = static_cast<uint8_t>(sdt == TBLOB_DTYPE_F8_E8M0 ? 118 + xs() % 8 : 0x20 + xs() % 0x50);
    }
  }
  tblob_quant_desc d = TBLOB_QUANT_DESC_INIT;
  d.scheme = scheme;
  d.bits = bits;
  d.group_size = group;
  d.scale_dtype = sdt;
  d.special = TBLOB_SPECIAL_MLX;
  d.rows = rows;
  d.cols = cols;
  d.data = codes.data();
  d.data_bytes = code_bytes;
  d.scales = sc.data();
  d.scales_bytes = groups * ss;
  if (scheme == TBLOB_QUANT_MLX_AFFINE) {
    d.bias_dtype = sdt;
    d.biases = bi.data();
    d.biases_bytes = groups * ss;
  }
  std::vector<uint8_t> out(rows * cols * 4);
  tblob_diag diag = TBLOB_DIAG_INIT;
  const char *set = argc > 2 ? argv[2] : "avx2";
  if (tblob_kernel_set(set, &diag) != TBLOB_OK) {
    std::fprintf(stderr, "kernel set %s unavailable\n", set);
    return 2;
  }
  for (int i = 0; i < 3; ++i) {
    if (tblob_quant_dequantize(&d, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, out.data(), out.size(), nullptr) != TBLOB_OK) {
      std::fprintf(stderr, "dequantize failed\n");
      return 1;
    }
  }
  uint64_t h = 0;
  for (size_t i = 0; i < out.size(); i += 64) h = h * 31 + out[i];
  std::printf("%s %s %016llx\n", c.c_str(), set, static_cast<unsigned long long>(h));
  return 0;
}
