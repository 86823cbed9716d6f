// tblob_features: what this build contains, from the format list (core/format_list.def)
// and the kernel sets dispatch compiled in.
#include <atomic>
#include <cstring>

#include "capi/capi_common.h"
#include "dequant/dispatch.h"
#include "tblob_config.h"

namespace {

constexpr const char *kFormats[] = {
#define TBLOB_FORMAT(id, number, name, built) (built) ? "format:" name : nullptr,
#include "core/format_list.def"
#undef TBLOB_FORMAT
};
constexpr size_t kFormatCount = sizeof(kFormats) / sizeof(kFormats[0]);
constexpr size_t kMaxKernels = 8;
constexpr size_t kMaxEntries = kFormatCount + kMaxKernels;

struct Features {
  const char *entries[kMaxEntries + 1];  // NULL-terminated
  size_t count;
  char text[kMaxKernels][32];  // "kernel:<name>"
};
Features g_features;
// 0 not built, 1 being built, 2 ready. Built once on first use without the C++ runtime's
// guarded statics (the library needs no libstdc++); a caller that finds it being built waits
// for the microseconds that takes.
std::atomic<int> g_state{0};

void build(Features *f) {
  for (const char *name : kFormats)
    if (name) f->entries[f->count++] = name;
  const uint32_t n = tblob::compiled_kernel_count();
  for (uint32_t i = 0; i < n && i < kMaxKernels; ++i) {
    const char *k = tblob::compiled_kernel_name(i);
    const size_t len = std::strlen(k);
    if (len + sizeof("kernel:") > sizeof(f->text[i])) continue;
    std::memcpy(f->text[i], "kernel:", 7);
    std::memcpy(f->text[i] + 7, k, len + 1);
    f->entries[f->count++] = f->text[i];
  }
  f->entries[f->count] = nullptr;
}

}  // namespace

extern "C" TBLOB_API const char *const *tblob_features(size_t *count) noexcept {
  int state = g_state.load(std::memory_order_acquire);
  if (state != 2) {
    int expected = 0;
    if (g_state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
      build(&g_features);
      g_state.store(2, std::memory_order_release);
    } else {
      while (g_state.load(std::memory_order_acquire) != 2) {
      }
    }
  }
  if (count) *count = g_features.count;
  return g_features.entries;
}
