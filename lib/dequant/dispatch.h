// Kernel-set selection: which set object (kernel_set.h: its dequantization table, its GGML
// block kernels, its streaming copy) the process uses, from what core/cpu.h says the host runs.
//
// Sets, best first: "avx512" (x86-64: AVX-512 F+BW+VL, with AVX2/FMA/F16C; a few entries use
// AVX512_BF16 + VBMI when cpuid reports them too; GGML blocks run the AVX2 GGML kernels),
// "avx2" (x86-64: AVX2 + FMA + F16C; AVX2 GGML kernels), "neon" (arm64 baseline; NEON GGML
// kernels), "scalar" (the reference, always there). A set is compiled in unless its meson
// option (simd_x86 / simd_neon) is disabled; an x86 set is runnable when cpuid reports the
// instructions AND xgetbv reports that the OS saves the register state.
//
// Selection happens once, lazily and atomically, on the first use: the environment variable
// TBLOB_KERNEL=scalar|avx2|avx512|neon (or "auto" / empty: the best runnable set) is read at
// that moment and never again. set_kernel() overrides it at any time. Naming a set that is not
// compiled in, that the CPU cannot run, or that does not exist is an error and never a silent
// fallback: set_kernel() returns kStatusKernelUnavailable and keeps the current set, and an
// unusable TBLOB_KERNEL leaves the process in the "unavailable" state, where dequantize_rows()
// returns kStatusKernelUnavailable until set_kernel() succeeds.
//
// Large outputs (at least stream_threshold() bytes in one call) are written with non-temporal
// stores: by the set's own streaming kernel (KernelTable::nt) when the destination is aligned
// to kNtAlign and the shape has one, else through a small cache-resident staging buffer that
// the set's streaming copy moves to the destination. Calls below the threshold (small row
// ranges) store normally.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/status.h"
#include "dequant/kernel_set.h"
#include "dequant/kernel_table.h"

namespace tblob {

// The named kernel set is unknown, compiled out (-Dsimd_x86/-Dsimd_neon=disabled), or needs
// instructions this CPU/OS does not provide. (Dequantization range -70..-99; pinned in
// tensorblob.h by the C API.)
constexpr tblob_status kStatusKernelUnavailable = TBLOB_E_KERNEL_UNAVAILABLE;

// The avx512 set without the entries that need AVX512_BF16 + VBMI (what a CPU without them
// runs), nullptr when this host cannot run avx512 or it is compiled out: for tests, so that
// both variants are compared with scalar on a host that has the extensions.
const KernelTable *avx512_plain_kernel_table();
// Whether the avx512 set on this host uses those entries (compiled in and cpuid reports both).
bool avx512_ext_entries();

// Kernel sets compiled into this build, best first; the last is "scalar".
uint32_t compiled_kernel_count();
const char *compiled_kernel_name(uint32_t i);  // nullptr when i >= compiled_kernel_count()

// Kernel sets this host can run, best first; the last is always "scalar". The array is static
// and lives for the whole process.
const char *const *supported_kernels(uint32_t *count);
bool kernel_supported(const char *name);

// Forces the kernel set `name` ("auto" = the best one the host runs) for every later
// dequantize_rows() call in the process. TBLOB_OK; TBLOB_E_INVALID_ARGUMENT for NULL;
// kStatusKernelUnavailable when the set cannot be used here (the active set is unchanged).
Status set_kernel(const char *name);

// Name of the active set, or "unavailable" when TBLOB_KERNEL named a set this host cannot run
// (and set_kernel() has not been called successfully since). Static string.
const char *active_kernel_name();

// The active set object; nullptr in the "unavailable" state.
const KernelSet *active_kernel_set();
// The set object called `name` when compiled in and runnable here, else nullptr.
const KernelSet *kernel_set_by_name(const char *name);

// The active table; nullptr in the "unavailable" state.
const KernelTable *active_kernel_table();

// The table of a set the host can run, else nullptr (tests and the fuzzer loop over these).
const KernelTable *kernel_table_by_name(const char *name);

// The GGML block kernels of a set (KernelSet::ggml): avx512 and avx2 -> the AVX2 GGML kernels
// (there is no AVX-512 GGML set), neon -> NEON, scalar -> scalar. active_ggml_kernels() is
// nullptr in the "unavailable" state; ggml_kernels_by_name() is nullptr for a set the host
// cannot run.
const ggml::Kernels *active_ggml_kernels();
const ggml::Kernels *ggml_kernels_by_name(const char *name);

// Non-temporal copy belonging to a runnable table (nullptr: the set has none, e.g. scalar),
// and the fence that orders those stores before the call returns.
StreamCopyFn stream_copy_for(const KernelTable &kernels);
void stream_fence();

// Outputs of at least this many bytes per call use non-temporal stores.
constexpr uint64_t kDefaultStreamThreshold = uint64_t{4} << 20;
uint64_t stream_threshold();

// How the calling thread's dequantization calls store their output (tblob_dequant_options
// .stores): kAuto by the threshold, kStream from kStreamAlways bytes up, kCache never streamed.
// A multi-threaded batch sets it on each worker for the batch's length (StorePolicyScope), so
// every call of the batch decides the same way without a parameter through every decoder.
enum class StorePolicy : uint8_t { kAuto, kStream, kCache };
constexpr uint64_t kStreamAlways = uint64_t{64} << 10;
class StorePolicyScope {
 public:
  explicit StorePolicyScope(StorePolicy p);
  ~StorePolicyScope();
  StorePolicyScope(const StorePolicyScope &) = delete;
  StorePolicyScope &operator=(const StorePolicyScope &) = delete;

 private:
  StorePolicy saved_;
};
// Whether one call writing `bytes` of output uses non-temporal stores on this thread.
bool stream_output(uint64_t bytes);
// Sets the threshold (UINT64_MAX: never stream; 0: always when possible); returns the old one.
// For tests and benchmarks.
uint64_t set_stream_threshold(uint64_t bytes);

// Tests only: forget the selection, so the next use reads TBLOB_KERNEL again.
void reset_kernel_selection();

}  // namespace tblob
