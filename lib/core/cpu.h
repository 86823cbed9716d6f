// What this CPU and OS can run, asked once per process: the one place that asks the CPU. The
// dequantization kernel sets (dequant/dispatch.h) and the header scanner's wide loop
// (json/st_scan_loop.h) both choose from these bits.
#pragma once
#include <cstdint>

namespace tblob {

constexpr uint32_t kCpuAvx2 = 1u << 0;       // AVX2 + FMA + F16C, YMM state saved by the OS
constexpr uint32_t kCpuAvx512 = 1u << 1;     // + AVX-512 F+BW+VL, ZMM and opmask state saved
constexpr uint32_t kCpuAvx512Ext = 1u << 2;  // + AVX512_BF16 + AVX512_VBMI
constexpr uint32_t kCpuBmi2 = 1u << 3;       // BMI1 + BMI2 + LZCNT + POPCNT

// The bits above for this host; 0 off x86. Detected on the first call (racing first calls
// detect the same bits), then one relaxed load.
uint32_t cpu_features();

}  // namespace tblob
