/*
 * fnv1a_collide: find two distinct printable names with the same 64-bit
 * FNV-1a hash, by parallel collision search (van Oorschot & Wiener) with
 * distinguished points.
 *
 * This is an offline tool for tensorblob's test data (tests/data/slm1/). It is
 * not part of the library or the build.
 *
 *   cc -O2 -o fnv1a_collide fnv1a_collide.c
 *   ./fnv1a_collide [-s SEED] [-p PREFIX] [-k DPBITS] [-t MAXSECONDS]
 *   ./fnv1a_collide -c NAME...      (print the FNV-1a 64 hash of each NAME)
 *   -m BITS  test mode: collide only the low BITS bits of the hash (BITS >= 16),
 *            to exercise the search quickly; the result is NOT a 64-bit collision.
 *
 * The function iterated is
 *
 *     f(x) = fnv1a64(PREFIX || b32(x XOR salt))
 *
 * where b32(y) writes the 64-bit value y as 13 base32hex digits
 * ("0123456789abcdefghijklmnopqrstuv", most significant first; the first
 * digit carries the top 4 bits only). b32 is injective, so f(a) == f(b) with
 * a != b is a genuine FNV-1a collision between two different names. The salt
 * is derived from SEED, so every seed searches a different random function.
 *
 * Each walk starts at a pseudo-random point (splitmix64 of SEED), iterates f
 * until it reaches a distinguished point (low DPBITS bits zero) and stores
 * (dp -> start, length). When a second walk with a different start reaches
 * the same distinguished point, both walks are replayed from their starts,
 * the longer one first advanced by the length difference, then both in step
 * until their images coincide: the two preimages are the colliding pair.
 * Walks longer than 20 * 2^DPBITS are dropped (cycles without a
 * distinguished point). Expected work: about sqrt(pi/2 * 2^64) ~ 5.4e9
 * evaluations of f plus a small overhead of about 2^DPBITS per walk.
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FNV_BASIS 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL
#define NAME_DIGITS 13
#define MAX_PREFIX 64
#define LANES 8

static const char kAlphabet[33] = "0123456789abcdefghijklmnopqrstuv";

static uint64_t fnv1a64(const unsigned char *p, size_t n, uint64_t h) {
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= FNV_PRIME;
  }
  return h;
}

static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Search parameters shared by the fast path and the replay path. */
static uint64_t g_salt;
static uint64_t g_prefix_state; /* FNV-1a state after the prefix bytes */
static char g_prefix[MAX_PREFIX + 1];
static uint64_t g_outmask = ~0ULL; /* -m BITS: test mode, truncated hash */

/* The 13-digit name of x (not NUL-terminated). */
static void name_digits(uint64_t x, char out[NAME_DIGITS]) {
  uint64_t y = x ^ g_salt;
  out[0] = kAlphabet[(y >> 60) & 15];
  for (int i = 1; i < NAME_DIGITS; i++) out[i] = kAlphabet[(y >> (60 - 5 * i)) & 31];
}

static void full_name(uint64_t x, char *out /* >= MAX_PREFIX + NAME_DIGITS + 1 */) {
  size_t n = strlen(g_prefix);
  memcpy(out, g_prefix, n);
  name_digits(x, out + n);
  out[n + NAME_DIGITS] = '\0';
}

/* Reference f: builds the name, hashes it. Used for replay and checks. */
static uint64_t f_ref(uint64_t x) {
  char d[NAME_DIGITS];
  name_digits(x, d);
  return fnv1a64((const unsigned char *)d, NAME_DIGITS, g_prefix_state) & g_outmask;
}

/* One FNV-1a step over a digit taken from y at the given shift. */
#define STEP(h, y, shift, mask) ((h) = ((h) ^ (uint64_t)(unsigned char)kAlphabet[((y) >> (shift)) & (mask)]) * FNV_PRIME)

/* Fast f over LANES independent values. The 13 steps are written out with
 * constant shifts; the lanes' multiply chains are independent, so the CPU
 * overlaps them (about 2x faster than one value at a time). */
static inline void f_lanes(uint64_t *x) {
  for (int l = 0; l < LANES; l++) {
    const uint64_t y = x[l] ^ g_salt;
    uint64_t h = g_prefix_state;
    STEP(h, y, 60, 15);
    STEP(h, y, 55, 31); STEP(h, y, 50, 31); STEP(h, y, 45, 31); STEP(h, y, 40, 31);
    STEP(h, y, 35, 31); STEP(h, y, 30, 31); STEP(h, y, 25, 31); STEP(h, y, 20, 31);
    STEP(h, y, 15, 31); STEP(h, y, 10, 31); STEP(h, y, 5, 31); STEP(h, y, 0, 31);
    x[l] = h & g_outmask;
  }
}

/* Distinguished-point table: open addressing keyed by the dp value. */
typedef struct {
  uint64_t dp;
  uint64_t start;
  uint64_t len; /* 0 = empty slot */
} dp_entry;

static dp_entry *g_tab;
static size_t g_cap, g_count;
static unsigned g_dpbits;

static size_t slot_of(uint64_t dp, size_t cap) {
  uint64_t k = dp >> g_dpbits; /* low bits are all zero */
  k *= 0x9e3779b97f4a7c15ULL;
  return (size_t)(k >> 20) & (cap - 1);
}

static int tab_init(size_t cap) {
  g_tab = calloc(cap, sizeof *g_tab);
  g_cap = cap;
  g_count = 0;
  return g_tab != NULL;
}

static int tab_grow(void) {
  size_t ncap = g_cap * 2;
  dp_entry *n = calloc(ncap, sizeof *n);
  if (!n) return 0;
  for (size_t i = 0; i < g_cap; i++) {
    if (!g_tab[i].len) continue;
    size_t s = slot_of(g_tab[i].dp, ncap);
    while (n[s].len) s = (s + 1) & (ncap - 1);
    n[s] = g_tab[i];
  }
  free(g_tab);
  g_tab = n;
  g_cap = ncap;
  return 1;
}

/* Returns the existing entry for dp, or inserts (dp, start, len) and returns NULL. */
static dp_entry *tab_find_or_insert(uint64_t dp, uint64_t start, uint64_t len, int *oom) {
  *oom = 0;
  if ((g_count + 1) * 2 > g_cap && !tab_grow()) {
    *oom = 1;
    return NULL;
  }
  size_t s = slot_of(dp, g_cap);
  while (g_tab[s].len) {
    if (g_tab[s].dp == dp) return &g_tab[s];
    s = (s + 1) & (g_cap - 1);
  }
  g_tab[s].dp = dp;
  g_tab[s].start = start;
  g_tab[s].len = len;
  g_count++;
  return NULL;
}

/* Replays two walks that end at the same distinguished point. On success
 * stores the two colliding preimages and returns 1; returns 0 when one start
 * lies on the other walk (no collision in that pair of walks). */
static int resolve(uint64_t s1, uint64_t l1, uint64_t s2, uint64_t l2, uint64_t *a, uint64_t *b,
                   uint64_t *evals) {
  uint64_t x1 = s1, x2 = s2;
  while (l1 > l2) { x1 = f_ref(x1); l1--; (*evals)++; }
  while (l2 > l1) { x2 = f_ref(x2); l2--; (*evals)++; }
  if (x1 == x2) return 0; /* "Robin Hood": one start is on the other walk */
  for (uint64_t i = 0; i < l1; i++) {
    uint64_t y1 = f_ref(x1), y2 = f_ref(x2);
    *evals += 2;
    if (y1 == y2) {
      *a = x1;
      *b = x2;
      return 1;
    }
    x1 = y1;
    x2 = y2;
  }
  return 0; /* unreachable when both walks end at the same point */
}

static double now_sec(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void self_test(void) {
  static const struct { const char *s; uint64_t h; } v[] = {
      {"", 0xcbf29ce484222325ULL},
      {"a", 0xaf63dc4c8601ec8cULL},
      {"foobar", 0x85944171f73967e8ULL},
  };
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    uint64_t h = fnv1a64((const unsigned char *)v[i].s, strlen(v[i].s), FNV_BASIS);
    if (h != v[i].h) {
      fprintf(stderr, "self-test failed for \"%s\": %016" PRIx64 "\n", v[i].s, h);
      exit(2);
    }
  }
  /* The fast path must agree with the reference path. */
  uint64_t st = 12345, x[LANES], r[LANES];
  for (int round = 0; round < 1000; round++) {
    for (int l = 0; l < LANES; l++) { x[l] = splitmix64(&st); r[l] = f_ref(x[l]); }
    f_lanes(x);
    for (int l = 0; l < LANES; l++)
      if (x[l] != r[l]) { fprintf(stderr, "self-test failed: fast f != reference f\n"); exit(2); }
  }
}

static void usage(void) {
  fprintf(stderr,
          "usage: fnv1a_collide [-s SEED] [-p PREFIX] [-k DPBITS] [-t MAXSECONDS] [-m BITS]\n"
          "       fnv1a_collide -c NAME...\n");
  exit(2);
}

int main(int argc, char **argv) {
  uint64_t seed = 1;
  unsigned dpbits = 16;
  double max_seconds = 0; /* 0 = no limit */
  g_prefix[0] = '\0';

  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-c")) {
      for (int j = i + 1; j < argc; j++)
        printf("%016" PRIx64 "  %s\n",
               fnv1a64((const unsigned char *)argv[j], strlen(argv[j]), FNV_BASIS), argv[j]);
      return 0;
    } else if (!strcmp(argv[i], "-s") && i + 1 < argc) {
      seed = strtoull(argv[++i], NULL, 0);
    } else if (!strcmp(argv[i], "-k") && i + 1 < argc) {
      dpbits = (unsigned)strtoul(argv[++i], NULL, 0);
      if (dpbits < 4 || dpbits > 28) usage();
    } else if (!strcmp(argv[i], "-t") && i + 1 < argc) {
      max_seconds = strtod(argv[++i], NULL);
    } else if (!strcmp(argv[i], "-m") && i + 1 < argc) {
      unsigned bits = (unsigned)strtoul(argv[++i], NULL, 0);
      if (bits < 16 || bits > 64) usage();
      g_outmask = bits == 64 ? ~0ULL : (1ULL << bits) - 1;
    } else if (!strcmp(argv[i], "-p") && i + 1 < argc) {
      const char *p = argv[++i];
      if (strlen(p) > MAX_PREFIX) usage();
      strcpy(g_prefix, p);
    } else {
      usage();
    }
  }

  g_dpbits = dpbits;
  uint64_t rng = seed;
  g_salt = splitmix64(&rng);
  g_prefix_state = fnv1a64((const unsigned char *)g_prefix, strlen(g_prefix), FNV_BASIS);
  self_test();

  const uint64_t dpmask = (1ULL << dpbits) - 1;
  const uint64_t maxlen = 20ULL << dpbits;
  if (!tab_init(1u << 16)) { fprintf(stderr, "out of memory\n"); return 1; }

  fprintf(stderr, "fnv1a_collide: seed=%" PRIu64 " salt=%016" PRIx64 " prefix=\"%s\" dpbits=%u\n",
          seed, g_salt, g_prefix, dpbits);

  uint64_t start[LANES], cur[LANES], len[LANES];
  for (int l = 0; l < LANES; l++) { start[l] = cur[l] = splitmix64(&rng); len[l] = 0; }

  uint64_t evals = 0, walks = 0, dropped = 0, robin = 0;
  double t0 = now_sec(), next_report = t0 + 10;

  for (;;) {
    f_lanes(cur);
    evals += LANES;
    for (int l = 0; l < LANES; l++) {
      len[l]++;
      if ((cur[l] & dpmask) == 0) {
        walks++;
        int oom;
        dp_entry *e = tab_find_or_insert(cur[l], start[l], len[l], &oom);
        if (oom) { fprintf(stderr, "out of memory\n"); return 1; }
        if (e && e->start != start[l]) {
          uint64_t a, b;
          if (resolve(e->start, e->len, start[l], len[l], &a, &b, &evals)) {
            double dt = now_sec() - t0;
            char na[MAX_PREFIX + NAME_DIGITS + 1], nb[MAX_PREFIX + NAME_DIGITS + 1];
            full_name(a, na);
            full_name(b, nb);
            uint64_t ha = fnv1a64((const unsigned char *)na, strlen(na), FNV_BASIS);
            uint64_t hb = fnv1a64((const unsigned char *)nb, strlen(nb), FNV_BASIS);
            if (((ha ^ hb) & g_outmask) != 0 || !strcmp(na, nb)) {
              fprintf(stderr, "internal error: bad pair %s %s\n", na, nb);
              return 1;
            }
            printf("%s\n%s\n", na, nb);
            if (g_outmask != ~0ULL) printf("# TEST MODE: only the low bits (mask %016" PRIx64 ") collide\n", g_outmask);
            printf("# fnv1a64 = 0x%016" PRIx64 "; seed=%" PRIu64 " prefix=\"%s\" dpbits=%u; "
                   "%.3g evaluations, %" PRIu64 " walks, %.1f s\n",
                   ha, seed, g_prefix, dpbits, (double)evals, walks, dt);
            fprintf(stderr, "found after %.1f s, %.3g evaluations (%.1f M/s)\n", dt,
                    (double)evals, (double)evals / dt * 1e-6);
            return 0;
          }
          robin++;
        }
        start[l] = cur[l] = splitmix64(&rng);
        len[l] = 0;
      } else if (len[l] > maxlen) {
        dropped++;
        start[l] = cur[l] = splitmix64(&rng);
        len[l] = 0;
      }
    }
    if ((evals & ((1ULL << 24) - 1)) < LANES) {
      double t = now_sec();
      if (t >= next_report) {
        fprintf(stderr, "  %.1f s: %.3g evaluations (%.1f M/s), %zu points, %" PRIu64
                        " dropped, %" PRIu64 " robin hood\n",
                t - t0, (double)evals, (double)evals / (t - t0) * 1e-6, g_count, dropped, robin);
        next_report = t + 10;
      }
      if (max_seconds > 0 && t - t0 > max_seconds) {
        fprintf(stderr, "gave up after %.1f s\n", t - t0);
        return 1;
      }
    }
  }
}
