// A value built once, on first use, by whichever thread gets there first (the kernel sets, a
// model's metadata table).
//
// Built by hand rather than as a function-local static: its thread-safe guard calls
// __cxa_guard_acquire/release from the C++ runtime, which a C program linking the static core
// must not need. The first caller builds (state 0 -> 1 -> 2); a racing caller waits the few
// microseconds that takes.
#pragma once
#include <atomic>
#include <sched.h>

namespace tblob {

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

}  // namespace tblob
