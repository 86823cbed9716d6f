// Lookup by name among many tensors (bench/README.md, "Lookup"), public API against the
// obvious C++ map, in one process, rounds interleaved:
//   - tblob_tensor_find on a safetensors model opened with tblob_model_open_memory;
//   - std::unordered_map<std::string_view, uint32_t> over the same names;
//   - tblob_tensor_find on an SLM1 model of the same names (sorted directory: FNV-1a of the
//     name, then a binary search of the mapped directory).
// Inputs come from bench/make_names.py (names file in query order + safetensors file), the
// same files bench/lookup_rs reads. Every name is looked up once per round (hits), then every
// name with its last byte replaced by '#' (misses of the same length). A third loop, the
// floor, does for each hit only what no exact lookup can skip: compare the query with the
// name's bytes where the model holds them (their addresses taken beforehand, in query order),
// so what a lookup costs above the floor is its own work; and for SLM1 the FNV-1a 64 of each
// query, which the format's directory is keyed by (one multiply per byte, each waiting for
// the last). Two more floors are memory alone: per query, a chain of dependent reads of one
// cache line each, every line at a random place in an array as large as one of a structure's,
// its index read from the line before, and nothing else (no hash, no compare). Two lines over
// arrays the sizes of tblob's index (its tag and position table, then its name slots: what a hit
// waits for), four over the sizes of the map's (buckets, the node before the chain, the node, the
// name). In the cold state they show what memory alone allows each structure. Times are thread CPU
// time per lookup (the machine is shared); the best round of N and the median are printed as
//   <what> <hit|miss> <best ns> <median ns>
#define TBLOB_EXPERIMENTAL_API 1
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <unistd.h>

#include "bench_util.h"
#include "tensorblob.h"

namespace {


double cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

[[noreturn]] void die(const char *what, const tblob_diag &d) {
  std::fprintf(stderr, "%s: %s\n", what, d.message);
  std::exit(1);
}

// An SLM1 file of the names (F32 [1] each), through the experimental writer.
std::vector<char> make_slm1(const std::vector<std::string_view> &names) {
  tblob_slm1_writer_options o = TBLOB_SLM1_WRITER_OPTIONS_INIT;
  o.hidden_size = 4096;
  o.layer_count = 32;
  o.head_count = 32;
  o.ffn_size = 11008;
  o.max_context = 4096;
  tblob_slm1_writer *w = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  if (tblob_slm1_writer_new(&o, &w, &d) != TBLOB_OK) die("slm1 writer", d);
  const uint64_t shape[1] = {1};
  const float one = 1.0f;
  for (std::string_view n : names)
    if (tblob_slm1_writer_add_f32(w, n.data(), n.size(), shape, 1, &one, 1, TBLOB_SLM1_F32, 0, &d) != TBLOB_OK)
      die("slm1 add", d);
  const char *t = std::getenv("TMPDIR");
  const std::string path = std::string(t && *t ? t : "/tmp") + "/bench_lookup_" + std::to_string(getpid()) + ".slm";
  if (tblob_slm1_writer_finish(w, path.c_str(), &d) != TBLOB_OK) die("slm1 finish", d);
  tblob_slm1_writer_free(w);
  std::vector<char> bytes = bench::read_file<char>(path.c_str());
  ::unlink(path.c_str());
  return bytes;
}

// Every timed run starts from the same state, one of two (bench/README.md, "Lookup by name"):
//   warm: the same loop once, untimed, then 64 MiB written a byte per cache line. The run's own
//         structures are in the last-level cache as far as it holds them, none in L1, L2 or
//         the TLB: a model in use.
//   cold: only the eviction pass, of evict_mib (twice the last-level cache): every structure
//         comes from memory, a model opened long ago.
// Without the warm pass a run found in the last-level cache whatever the runs between two of its
// rounds had left there, which favoured contenders whose miss run touches what their hit run
// reads (the map's chains) over those whose misses stop at a fingerprint.
size_t g_evict_bytes = size_t{64} << 20;
void evict() {
  static std::vector<uint8_t> junk(g_evict_bytes);
  for (size_t i = 0; i < junk.size(); i += 64) junk[i] = static_cast<uint8_t>(junk[i] + 1);
}

// k dependent line reads per query over arrays of the given sizes (the floors above).
class LineChain {
 public:
  LineChain(const std::vector<size_t> &bytes, size_t queries, uint64_t seed) : rng_(seed) {
    for (size_t b : bytes) levels_.emplace_back(std::max<size_t>(b / 64, 1) * 16);
    for (size_t j = 0; j < levels_.size(); ++j) {
      const size_t next = j + 1 < levels_.size() ? levels_[j + 1].size() / 16 : 1;
      for (size_t l = 0; l < levels_[j].size(); l += 16) levels_[j][l] = static_cast<uint32_t>(rng_() % next);
    }
    start_.resize(queries);
    for (uint32_t &q : start_) q = static_cast<uint32_t>(rng_() % (levels_[0].size() / 16));
  }
  size_t walk() const {
    uint64_t sum = 0;
    for (uint32_t x : start_) {
      for (const std::vector<uint32_t> &l : levels_) x = l[size_t{x} * 16];
      sum += x;
    }
    return static_cast<size_t>(sum);
  }

 private:
  struct SplitMix {
    uint64_t s;
    explicit SplitMix(uint64_t v) : s(v) {}
    uint64_t operator()() {
      uint64_t z = (s += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      return z ^ (z >> 31);
    }
  } rng_;
  std::vector<std::vector<uint32_t>> levels_;
  std::vector<uint32_t> start_;
};

struct Timer {
  std::vector<double> rounds;
  void report(const char *what, const char *kind) {
    std::sort(rounds.begin(), rounds.end());
    std::printf("%s %s %.1f %.1f\n", what, kind, rounds.front(), rounds[rounds.size() / 2]);
  }
};

}  // namespace

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: bench_lookup NAMES FILE.safetensors [ROUNDS] [warm | cold EVICT_MIB]\n");
    return 2;
  }
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 7;
  const bool warm = argc <= 4 || std::strcmp(argv[4], "cold") != 0;
  if (!warm) g_evict_bytes = static_cast<size_t>(argc > 5 ? std::atoll(argv[5]) : 512) << 20;
  std::vector<char> text = bench::read_file<char>(argv[1]);
  std::vector<char> st = bench::read_file<char>(argv[2]);
  if (text.empty() || st.empty()) {
    std::fprintf(stderr, "cannot read the inputs\n");
    return 1;
  }
  std::vector<std::string_view> hits;
  for (size_t i = 0, start = 0; i < text.size(); ++i)
    if (text[i] == '\n') {
      if (i > start) hits.emplace_back(text.data() + start, i - start);
      start = i + 1;
    }
  std::vector<char> miss_text(text);  // the same names, last byte '#'
  std::vector<std::string_view> misses;
  for (std::string_view n : hits) {
    char *p = miss_text.data() + (n.data() - text.data());
    p[n.size() - 1] = '#';
    misses.emplace_back(p, n.size());
  }
  const size_t n = hits.size();

  tblob_diag d = TBLOB_DIAG_INIT;
  tblob_model *m_st = nullptr, *m_slm = nullptr;
  if (tblob_model_open_memory(st.data(), st.size(), nullptr, &m_st, &d) != TBLOB_OK) die("open", d);
  std::vector<char> slm = make_slm1(hits);
  if (tblob_slm1_open_memory(slm.data(), slm.size(), nullptr, nullptr, &m_slm, &d) != TBLOB_OK) die("slm1 open", d);
  if (tblob_model_tensor_count(m_st) != n || tblob_model_tensor_count(m_slm) != n) {
    std::fprintf(stderr, "tensor counts differ from the names file\n");
    return 1;
  }
  // The map holds the model's own positions, in the file's order (as a loader would build it).
  std::unordered_map<std::string_view, uint32_t> map;
  map.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
    if (tblob_tensor_at(m_st, i, &info, &d) != TBLOB_OK) die("tensor_at", d);
    map.emplace(std::string_view(info.name, info.name_len), static_cast<uint32_t>(i));
  }

  // The floor's addresses: each query's name inside the model, in query order.
  std::vector<const char *> own(n);
  for (size_t i = 0; i < n; ++i) {
    uint64_t idx = 0;
    tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
    if (tblob_tensor_find(m_st, hits[i].data(), hits[i].size(), &idx, &d) != TBLOB_OK ||
        tblob_tensor_at(m_st, idx, &info, &d) != TBLOB_OK)
      die("floor setup", d);
    own[i] = info.name;
  }
  // The memory floors' arrays: tblob's table (a tag byte and a 4-byte position per entry, at
  // least 2n entries, a power of two) and its 64-byte slots; the map's buckets, its nodes (a
  // next pointer, the key's view, the value and the cached hash: 40 bytes, 48 from malloc) and
  // the names, which it reads where the model holds them (the safetensors header).
  size_t cap = 1;
  while (cap < 2 * n) cap *= 2;
  const LineChain two_lines({cap * 5, n * 64}, n, 1);
  const size_t node_bytes = n * 48;
  const LineChain four_lines({map.bucket_count() * sizeof(void *), node_bytes, node_bytes, st.size()}, n, 2);
  Timer tb_hit, tb_miss, um_hit, um_miss, slm_hit, slm_miss, floor_hit, fnv_hit, two_hit, four_hit;
  uint64_t check = 0;
  // One timed run of body() (which returns how many names it found): the state's preparation,
  // then the loop, timed; a wrong count stops the program.
  auto timed = [&](Timer &t, size_t expect, const char *what, auto body) {
    if (warm) (void)body();
    evict();
    const double t0 = cpu_ns();
    const size_t found = body();
    t.rounds.push_back((cpu_ns() - t0) / static_cast<double>(n));
    if (found != expect) {
      std::fprintf(stderr, "wrong %s results\n", what);
      std::exit(1);
    }
  };
  auto run_tblob = [&](tblob_model *m, const std::vector<std::string_view> &q, Timer &t, bool expect) {
    timed(t, expect ? n : 0, "lookup", [&] {
      uint64_t sum = 0, found = 0;
      for (std::string_view s : q) {
        uint64_t idx = 0;
        found += tblob_tensor_find(m, s.data(), s.size(), &idx, nullptr) == TBLOB_OK;
        sum += idx;
      }
      check += sum;
      return found;
    });
  };
  auto run_map = [&](const std::vector<std::string_view> &q, Timer &t, bool expect) {
    timed(t, expect ? n : 0, "map", [&] {
      uint64_t sum = 0, found = 0;
      for (std::string_view s : q) {
        auto it = map.find(s);
        if (it != map.end()) {
          ++found;
          sum += it->second;
        }
      }
      check += sum;
      return found;
    });
  };
  auto run_floor = [&](Timer &t) {
    timed(t, n, "floor", [&] {
      size_t found = 0;
      for (size_t i = 0; i < n; ++i) found += std::memcmp(hits[i].data(), own[i], hits[i].size()) == 0;
      return found;
    });
  };
  auto run_fnv = [&](Timer &t) {
    timed(t, n, "fnv", [&] {
      uint64_t sum = 0;
      for (std::string_view q : hits) {
        uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64: offset basis, then xor and multiply per byte
        for (unsigned char c : q) h = (h ^ c) * 0x100000001b3ull;
        sum += h;
      }
      check += sum;
      return n;
    });
  };
  auto run_chain = [&](const LineChain &c, Timer &t) {
    timed(t, n, "lines", [&] {
      check += c.walk();
      return n;
    });
  };
  for (int r = 0; r < rounds; ++r) {
    run_tblob(m_st, hits, tb_hit, true);
    run_chain(two_lines, two_hit);
    run_chain(four_lines, four_hit);
    run_fnv(fnv_hit);
    run_floor(floor_hit);
    run_map(hits, um_hit, true);
    run_tblob(m_slm, hits, slm_hit, true);
    run_tblob(m_st, misses, tb_miss, false);
    run_map(misses, um_miss, false);
    run_tblob(m_slm, misses, slm_miss, false);
  }
  tb_hit.report("tblob-safetensors", "hit");
  tb_miss.report("tblob-safetensors", "miss");
  um_hit.report("std-unordered_map", "hit");
  um_miss.report("std-unordered_map", "miss");
  slm_hit.report("tblob-slm1-sorted", "hit");
  slm_miss.report("tblob-slm1-sorted", "miss");
  floor_hit.report("floor-name-compare", "hit");
  fnv_hit.report("floor-fnv1a", "hit");
  two_hit.report("floor-2-lines", "hit");
  four_hit.report("floor-4-lines", "hit");
  std::fprintf(stderr, "%zu names, checksum %llu\n", n, static_cast<unsigned long long>(check));
  tblob_model_close(m_st);
  tblob_model_close(m_slm);
  return 0;
}
