// Runs one function on several threads for the length of a call: the threads are created,
// the calling thread works as worker 0, and every thread is joined before run_workers returns.
// No pool outlives the call. POSIX threads; builds without them (Windows, or TBLOB_NO_THREADS)
// run worker 0 only.
#pragma once
#include <cstdint>

namespace tblob {

// The number of online cores (at least 1).
uint32_t online_cores();

// Calls fn(ctx, w) for w in [0, threads) on `threads` threads (worker 0 on the caller) and
// waits for all. A thread that cannot be created is skipped: the caller's work must be
// shared out dynamically (workers take pieces until none are left), so fewer workers only
// means less parallelism. Returns the number of workers that ran (at least 1).
uint32_t run_workers(uint32_t threads, void (*fn)(void *ctx, uint32_t worker), void *ctx);

}  // namespace tblob
