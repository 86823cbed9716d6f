// Kernel-set detection and selection (see dispatch.h). Baseline code only: the ISA-specific
// translation units are entered only after the checks here say the CPU can run them.
#include "dequant/dispatch.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "dequant/kernel_set.h"
#include "core/once.h"

#if defined(TBLOB_DEQUANT_AVX2) || defined(TBLOB_DEQUANT_AVX512)
#include <xmmintrin.h>
#define TBLOB_DEQUANT_X86 1
#endif

namespace tblob {
namespace {

// The set objects compiled in, best first (each defined beside its kernels; meson builds an
// ISA's dequant and GGML kernels together).
const KernelSet *const kSets[] = {
#if defined(TBLOB_DEQUANT_AVX512)
    &kAvx512Set,
#endif
#if defined(TBLOB_DEQUANT_AVX2)
    &kAvx2Set,
#endif
#if defined(TBLOB_DEQUANT_NEON)
    &kNeonSet,
#endif
    &kScalarSet,
};
constexpr uint32_t kSetCount = sizeof(kSets) / sizeof(kSets[0]);

// The "unavailable" state: TBLOB_KERNEL asked for a set this host cannot run.
constexpr KernelSet kUnavailable = {"unavailable", nullptr, nullptr, nullptr, nullptr, nullptr};

std::atomic<const KernelSet *> g_active{nullptr};
std::atomic<uint64_t> g_stream_threshold{kDefaultStreamThreshold};

const KernelSet *find_set(const char *name) {
  for (const KernelSet *s : kSets) {
    if (std::strcmp(s->name, name) == 0) return s;
  }
  return nullptr;
}

const KernelSet *best_set() {
  for (const KernelSet *s : kSets) {
    if (s->runnable()) return s;
  }
  return kSets[kSetCount - 1];
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
    for (const KernelSet *k : kSets) {
      if (k->runnable()) r->names[r->count++] = k->name;
    }
  });
}

}  // namespace

uint32_t compiled_kernel_count() { return kSetCount; }

const char *compiled_kernel_name(uint32_t i) { return i < kSetCount ? kSets[i]->name : nullptr; }

bool kernel_set_known(const char *name) {
  if (name == nullptr) return false;
  for (const char *n : kKernelSetNames)
    if (std::strcmp(n, name) == 0) return true;
  return false;
}

const KernelSet *active_kernel_set() {
  const KernelSet *s = active_set();
  return s->dequant != nullptr ? s : nullptr;
}

const KernelSet *kernel_set_by_name(const char *name) { return kernel_supported(name) ? find_set(name) : nullptr; }

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
  return s->dequant != nullptr ? &s->dequant() : nullptr;
}

const KernelTable *kernel_table_by_name(const char *name) {
  if (!kernel_supported(name)) return nullptr;
  return &find_set(name)->dequant();
}

#if !defined(TBLOB_DEQUANT_AVX512)
// Without the x86 sets (x86/x86_sets.cpp defines these where they are built).
const KernelTable *avx512_plain_kernel_table() { return nullptr; }
bool avx512_ext_entries() { return false; }
#endif

const ggml::Kernels *active_ggml_kernels() {
  const KernelSet *s = active_set();
  return s->ggml != nullptr ? s->ggml() : nullptr;
}

const ggml::Kernels *ggml_kernels_by_name(const char *name) {
  if (!kernel_supported(name)) return nullptr;
  return find_set(name)->ggml();
}

StreamCopyFn stream_copy_for(const KernelTable &kernels) {
  for (const KernelSet *s : kSets) {
    if (s->stream != nullptr && s->runnable() && &s->dequant() == &kernels) return s->stream;
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
