// Kernel-set detection and selection (see dispatch.h). Baseline code only: the ISA-specific
// translation units are entered only after the checks here say the CPU can run them.
#include "dequant/dispatch.h"

#include <atomic>
#include <sched.h>
#include <cstdlib>
#include <cstring>

#include "core/cpu.h"
#include "dequant/ggml/ggml.h"
#include "dequant/scalar/scalar.h"

#if defined(TBLOB_DEQUANT_AVX2) || defined(TBLOB_DEQUANT_AVX512)
#include <xmmintrin.h>

#include "dequant/x86/x86_kernels.h"
#define TBLOB_DEQUANT_X86 1
#endif
#if defined(TBLOB_DEQUANT_NEON)
#include "dequant/arm/neon_kernels.h"
#endif

// Every SIMD set below is paired with a GGML set of lib/dequant/ggml (meson builds them together).
#if (defined(TBLOB_DEQUANT_AVX2) && !defined(TBLOB_GGML_AVX2)) || (defined(TBLOB_DEQUANT_NEON) && !defined(TBLOB_GGML_NEON))
#error "a dequant SIMD set is built without its GGML set"
#endif

namespace tblob {
namespace {

bool runs_always() { return true; }
#if defined(TBLOB_DEQUANT_AVX2)
bool runs_avx2() { return (cpu_features() & kCpuAvx2) != 0; }
#endif
#if defined(TBLOB_DEQUANT_AVX512)
bool runs_avx512() { return (cpu_features() & kCpuAvx512) != 0; }
#endif

// A SIMD table is the scalar table with the ISA's entries written over it (built once, on
// first use, only for sets the host runs), so a scheme without a SIMD kernel keeps its
// scalar one.
//
// Built once by hand rather than as function-local statics: their thread-safe guards call
// __cxa_guard_acquire/release from the C++ runtime, which a C program linking the static core
// must not need. The first caller builds (state 0 -> 1 -> 2); a racing caller waits the few
// microseconds that takes.
template <typename T>
struct Once {
  std::atomic<int> state{0};  // 0 unbuilt, 1 building, 2 ready
  T value{};
  template <typename Build>
  const T &get(Build build) {
    if (state.load(std::memory_order_acquire) == 2) return value;
    int expected = 0;
    if (state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
      build(&value);
      state.store(2, std::memory_order_release);
    } else {
      while (state.load(std::memory_order_acquire) != 2) sched_yield();
    }
    return value;
  }
};

[[maybe_unused]] void make_table(KernelTable *t, const char *name, void (*fill)(KernelTable *)) {
  *t = scalar_kernel_table();
  t->name = name;
  fill(t);
}
#if defined(TBLOB_DEQUANT_AVX2)
Once<KernelTable> g_avx2_table;
const KernelTable &avx2_table() {
  return g_avx2_table.get([](KernelTable *t) { make_table(t, "avx2", &avx2_fill_kernels); });
}
#endif
#if defined(TBLOB_DEQUANT_AVX512)
Once<KernelTable> g_avx512_table;
Once<KernelTable> g_avx512_base_table;
// With AVX512_BF16 + VBMI, their entries replace some of the plain ones (same set name).
void avx512_fill(KernelTable *t) {
  avx512_fill_kernels(t);
#if defined(TBLOB_DEQUANT_AVX512EXT)
  if ((cpu_features() & kCpuAvx512Ext) != 0) avx512ext_fill_kernels(t);
#endif
}
const KernelTable &avx512_table() {
  return g_avx512_table.get([](KernelTable *t) { make_table(t, "avx512", &avx512_fill); });
}
const KernelTable &avx512_base_table() {
  return g_avx512_base_table.get([](KernelTable *t) { make_table(t, "avx512", &avx512_fill_kernels); });
}
#endif
#if defined(TBLOB_DEQUANT_NEON)
Once<KernelTable> g_neon_table;
const KernelTable &neon_table() {
  return g_neon_table.get([](KernelTable *t) { make_table(t, "neon", &neon_fill_kernels); });
}
#endif

const ggml::Kernels *ggml_scalar() { return &ggml::scalar_kernels(); }

struct KernelSet {
  const char *name;
  const KernelTable &(*table)();
  bool (*runnable)();
  StreamCopyFn stream;
  const ggml::Kernels *(*ggml)();  // the GGML block set that runs with this one
};

// lib/dequant/ggml builds its AVX2 / NEON sets exactly when these are built (meson), so the
// GGML entries below are never nullptr.
constexpr KernelSet kSets[] = {
#if defined(TBLOB_DEQUANT_AVX512)
    {"avx512", &avx512_table, &runs_avx512, &avx512_stream_copy, &ggml::avx2_kernels},
#endif
#if defined(TBLOB_DEQUANT_AVX2)
    {"avx2", &avx2_table, &runs_avx2, &avx2_stream_copy, &ggml::avx2_kernels},
#endif
#if defined(TBLOB_DEQUANT_NEON)
    {"neon", &neon_table, &runs_always, &neon_stream_copy, &ggml::neon_kernels},
#endif
    {"scalar", &scalar_kernel_table, &runs_always, nullptr, &ggml_scalar},
};
constexpr uint32_t kSetCount = sizeof(kSets) / sizeof(kSets[0]);

// The "unavailable" state: TBLOB_KERNEL asked for a set this host cannot run.
constexpr KernelSet kUnavailable = {"unavailable", nullptr, nullptr, nullptr, nullptr};

std::atomic<const KernelSet *> g_active{nullptr};
std::atomic<uint64_t> g_stream_threshold{kDefaultStreamThreshold};

const KernelSet *find_set(const char *name) {
  for (const KernelSet &s : kSets) {
    if (std::strcmp(s.name, name) == 0) return &s;
  }
  return nullptr;
}

const KernelSet *best_set() {
  for (const KernelSet &s : kSets) {
    if (s.runnable()) return &s;
  }
  return &kSets[kSetCount - 1];
}

bool is_auto(const char *name) { return name[0] == '\0' || std::strcmp(name, "auto") == 0; }

const KernelSet *initial_choice() {
  const char *env = std::getenv("TBLOB_KERNEL");
  if (env == nullptr || is_auto(env)) return best_set();
  const KernelSet *s = find_set(env);
  if (s == nullptr || !s->runnable()) return &kUnavailable;
  return s;
}

const KernelSet *active_set() {
  const KernelSet *s = g_active.load(std::memory_order_acquire);
  if (s != nullptr) return s;
  const KernelSet *choice = initial_choice();
  const KernelSet *expected = nullptr;
  if (g_active.compare_exchange_strong(expected, choice, std::memory_order_acq_rel)) return choice;
  return expected;  // another thread (or set_kernel) got there first
}

struct Supported {
  const char *names[kSetCount];
  uint32_t count;
};

Once<Supported> g_supported;
const Supported &supported() {
  return g_supported.get([](Supported *r) {
    for (const KernelSet &k : kSets) {
      if (k.runnable()) r->names[r->count++] = k.name;
    }
  });
}

}  // namespace

uint32_t compiled_kernel_count() { return kSetCount; }

const char *compiled_kernel_name(uint32_t i) { return i < kSetCount ? kSets[i].name : nullptr; }

const char *const *supported_kernels(uint32_t *count) {
  const Supported &s = supported();
  if (count != nullptr) *count = s.count;
  return s.names;
}

bool kernel_supported(const char *name) {
  if (name == nullptr) return false;
  const KernelSet *s = find_set(name);
  return s != nullptr && s->runnable();
}

Status set_kernel(const char *name) {
  if (name == nullptr) return TBLOB_E_INVALID_ARGUMENT;
  const KernelSet *s = is_auto(name) ? best_set() : find_set(name);
  if (s == nullptr || !s->runnable()) return kStatusKernelUnavailable;
  g_active.store(s, std::memory_order_release);
  return TBLOB_OK;
}

const char *active_kernel_name() { return active_set()->name; }

const KernelTable *active_kernel_table() {
  const KernelSet *s = active_set();
  return s->table != nullptr ? &s->table() : nullptr;
}

const KernelTable *kernel_table_by_name(const char *name) {
  if (!kernel_supported(name)) return nullptr;
  return &find_set(name)->table();
}

const KernelTable *avx512_plain_kernel_table() {
#if defined(TBLOB_DEQUANT_AVX512)
  if (runs_avx512()) return &avx512_base_table();
#endif
  return nullptr;
}

bool avx512_ext_entries() {
#if defined(TBLOB_DEQUANT_AVX512EXT)
  return (cpu_features() & kCpuAvx512Ext) != 0;
#else
  return false;
#endif
}

const ggml::Kernels *active_ggml_kernels() {
  const KernelSet *s = active_set();
  return s->ggml != nullptr ? s->ggml() : nullptr;
}

const ggml::Kernels *ggml_kernels_by_name(const char *name) {
  if (!kernel_supported(name)) return nullptr;
  return find_set(name)->ggml();
}

StreamCopyFn stream_copy_for(const KernelTable &kernels) {
  for (const KernelSet &s : kSets) {
    if (s.stream != nullptr && s.runnable() && &s.table() == &kernels) return s.stream;
  }
  return nullptr;
}

void stream_fence() {
#if defined(TBLOB_DEQUANT_X86)
  _mm_sfence();
#elif defined(__aarch64__)
  __asm__ volatile("dmb ishst" : : : "memory");
#endif
}

uint64_t stream_threshold() { return g_stream_threshold.load(std::memory_order_relaxed); }

namespace {
thread_local StorePolicy t_store_policy = StorePolicy::kAuto;
}  // namespace

StorePolicyScope::StorePolicyScope(StorePolicy p) : saved_(t_store_policy) { t_store_policy = p; }
StorePolicyScope::~StorePolicyScope() { t_store_policy = saved_; }

bool stream_output(uint64_t bytes) {
  switch (t_store_policy) {
    case StorePolicy::kStream: return bytes >= kStreamAlways;
    case StorePolicy::kCache: return false;
    case StorePolicy::kAuto: break;
  }
  return bytes >= stream_threshold();
}

uint64_t set_stream_threshold(uint64_t bytes) {
  return g_stream_threshold.exchange(bytes, std::memory_order_relaxed);
}

void reset_kernel_selection() { g_active.store(nullptr, std::memory_order_release); }

}  // namespace tblob
