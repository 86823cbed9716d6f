#include "core/cpu.h"

#include <atomic>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <cpuid.h>
#define TBLOB_CPU_X86 1
#endif

namespace tblob {
namespace {

constexpr uint32_t kDetected = 1u << 31;  // the cache's "filled" sentinel
std::atomic<uint32_t> g_features{0};

uint32_t detect() {
  uint32_t f = 0;
#if defined(TBLOB_CPU_X86)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(1, &a, &b, &c, &d)) {
    // FMA: the GGML AVX2 kernels (paired with the avx2 dequant set) are compiled with -mfma.
    const bool osxsave = (c >> 27) & 1u, avx = (c >> 28) & 1u, f16c = (c >> 29) & 1u, fma = (c >> 12) & 1u;
    const bool popcnt = (c >> 23) & 1u;
    unsigned ax = 0, bx = 0, cx = 0, dx = 0;
    const bool lzcnt = __get_cpuid(0x80000001u, &ax, &bx, &cx, &dx) && ((cx >> 5) & 1u);
    if (osxsave && avx) {
      uint32_t lo, hi;
      __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
      const uint64_t xcr0 = (static_cast<uint64_t>(hi) << 32) | lo;
      const bool ymm_state = (xcr0 & 0x6u) == 0x6u;    // SSE + AVX
      const bool zmm_state = (xcr0 & 0xE6u) == 0xE6u;  // + opmask, ZMM_Hi256, Hi16_ZMM
      unsigned a7 = 0, b7 = 0, c7 = 0, d7 = 0;
      if (ymm_state && __get_cpuid_count(7, 0, &a7, &b7, &c7, &d7)) {
        const bool avx2 = (b7 >> 5) & 1u, bmi1 = (b7 >> 3) & 1u, bmi2 = (b7 >> 8) & 1u;
        const bool avx512f = (b7 >> 16) & 1u, avx512bw = (b7 >> 30) & 1u, avx512vl = (b7 >> 31) & 1u;
        if (avx2 && f16c && fma) f |= kCpuAvx2;
        if (bmi1 && bmi2 && lzcnt && popcnt) f |= kCpuBmi2;
        if ((f & kCpuAvx2) && zmm_state && avx512f && avx512bw && avx512vl) f |= kCpuAvx512;
        unsigned a71 = 0, b71 = 0, c71 = 0, d71 = 0;
        const bool vbmi = (c7 >> 1) & 1u;
        const bool bf16 = a7 >= 1 && __get_cpuid_count(7, 1, &a71, &b71, &c71, &d71) && ((a71 >> 5) & 1u);
        if ((f & kCpuAvx512) && vbmi && bf16) f |= kCpuAvx512Ext;
      }
    }
  }
#endif
  return f | kDetected;
}

}  // namespace

uint32_t cpu_features() {
  uint32_t f = g_features.load(std::memory_order_relaxed);
  if ((f & kDetected) == 0) {
    f = detect();
    g_features.store(f, std::memory_order_relaxed);
  }
  return f & ~kDetected;
}

}  // namespace tblob
