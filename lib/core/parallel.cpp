#include "core/parallel.h"

#if !defined(_WIN32) && !defined(TBLOB_NO_THREADS)
#define TBLOB_PTHREADS 1
#include <pthread.h>
#include <unistd.h>
#endif

namespace tblob {

namespace {
constexpr uint32_t kMaxThreads = 256;

struct Start {
  void (*fn)(void *, uint32_t);
  void *ctx;
  uint32_t worker;
};

#if TBLOB_PTHREADS
void *thread_main(void *arg) {
  const Start *s = static_cast<const Start *>(arg);
  s->fn(s->ctx, s->worker);
  return nullptr;
}
#endif
}  // namespace

uint32_t online_cores() {
#if TBLOB_PTHREADS
  const long c = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (c > 0) return c > static_cast<long>(kMaxThreads) ? kMaxThreads : static_cast<uint32_t>(c);
#endif
  return 1;
}

uint32_t run_workers(uint32_t threads, void (*fn)(void *ctx, uint32_t worker), void *ctx) {
  if (threads > kMaxThreads) threads = kMaxThreads;
  if (threads < 1) threads = 1;
#if TBLOB_PTHREADS
  Start starts[kMaxThreads];
  pthread_t tids[kMaxThreads];
  uint32_t running = 1;
  for (uint32_t t = 1; t < threads; ++t) {
    starts[running] = Start{fn, ctx, running};
    if (::pthread_create(&tids[running], nullptr, thread_main, &starts[running]) != 0) break;
    ++running;
  }
  fn(ctx, 0);
  for (uint32_t t = 1; t < running; ++t) ::pthread_join(tids[t], nullptr);
  return running;
#else
  fn(ctx, 0);
  return 1;
#endif
}

}  // namespace tblob
