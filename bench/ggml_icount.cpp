// One or more calls of one GGML kernel on the same random blocks, for bench/ggml_icount.sh
// (instruction counting under qemu-user; not part of the build).
//   ggml_icount TYPE SET NBLOCKS CALLS     e.g. ggml_icount iq2_xs neon 8 2
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "dequant/ggml/ggml.h"

namespace g = tblob::ggml;

int main(int argc, char **argv) {
  if (argc != 5) return 2;
  const g::TypeInfo *t = nullptr;
  for (uint32_t s = 0; s < g::kSlotCount; ++s)
    if (std::strcmp(g::type_info_by_slot(s)->name, argv[1]) == 0) t = g::type_info_by_slot(s);
  const g::Kernels *k = nullptr;
  if (!t || g::kernels_by_name(argv[2], &k) != TBLOB_OK) return 2;
  const size_t n = std::strtoul(argv[3], nullptr, 10);
  const int calls = std::atoi(argv[4]);
  std::vector<uint8_t> src(n * t->block_bytes);
  std::mt19937 rng(1);
  for (uint8_t &c : src) c = static_cast<uint8_t>(rng());
  // Finite scales (the SIMD fast path): clear the top exponent bit of every f16 scale field.
  static const size_t kScaleHi[] = {1, 3, 53, 65, 81, 83, 109, 209};
  for (size_t b = 0; b < n; ++b) {
    uint8_t *p = &src[b * t->block_bytes];
    if (t->slot == g::kSlotQ8_K) { p[3] &= 0x3F; continue; }
    if (t->slot == g::kSlotIQ1_M) { p[53] &= 0x3F; p[55] &= 0x3F; continue; }
    for (size_t off : kScaleHi)
      if (off < t->block_bytes) p[off] &= 0xBF;
  }
  std::vector<float> dst(n * t->block_elems);
  for (int c = 0; c < calls; ++c) k->to_f32[t->slot](src.data(), n, dst.data(), 0);
  std::printf("%s %s %zu %d\n", t->name, k->name, n, calls);
  return 0;
}
