#include "table/name_hash.h"

#include <ctime>
#if !defined(_WIN32)
#include <unistd.h>
#endif
#if (defined(__GLIBC__) || defined(__APPLE__)) && defined(__has_include)
#if __has_include(<sys/random.h>)
#include <sys/random.h>
#define TBLOB_HAVE_GETENTROPY 1
#endif
#endif

namespace tblob {

namespace {

// 0 until the first call; then the process's seed, which never changes again.
uint64_t g_seed = 0;

// splitmix64's step: spreads one seed over as many keys as asked for.
uint64_t next_key(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The kernel's randomness where it is offered; the clock and this process's addresses are
// mixed in whatever happens, so a refused or missing getentropy still gives a seed that
// differs from run to run.
uint64_t fresh_seed() {
  uint64_t r = 0;
#if defined(TBLOB_HAVE_GETENTROPY)
  uint64_t buf = 0;
  if (getentropy(&buf, sizeof buf) == 0) r = buf;
#endif
  int on_stack = 0;
  uint64_t x = r;
  x ^= next_key(&x) ^ reinterpret_cast<uintptr_t>(&on_stack);
  x ^= next_key(&x) ^ reinterpret_cast<uintptr_t>(&g_seed);
#if !defined(_WIN32)
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  x ^= next_key(&x) ^ (static_cast<uint64_t>(ts.tv_sec) << 30 ^ static_cast<uint64_t>(ts.tv_nsec));
  x ^= next_key(&x) ^ static_cast<uint64_t>(getpid());
#else
  x ^= next_key(&x) ^ static_cast<uint64_t>(time(nullptr));
#endif
  x = next_key(&x);
  return x | 1;  // never 0, the "not drawn yet" value
}

}  // namespace

NameHashKeys name_hash_keys() {
  uint64_t seed = __atomic_load_n(&g_seed, __ATOMIC_ACQUIRE);
  if (seed == 0) {
    // Two first calls at once each draw a seed; the first stored is the one every caller uses.
    uint64_t mine = fresh_seed(), expected = 0;
    seed = __atomic_compare_exchange_n(&g_seed, &expected, mine, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)
               ? mine
               : expected;
  }
  NameHashKeys k;
  k.seed = next_key(&seed);
  k.k1 = next_key(&seed);
  k.k2 = next_key(&seed);
  k.k3 = next_key(&seed);
  return k;
}

}  // namespace tblob
