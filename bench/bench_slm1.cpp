// SLM1 benchmarks (Google Benchmark), public API only:
//   - lookup latency, ns per tblob_tensor_find, over 100,000 tensors: an SLM1 file with a sorted
//     directory (binary search over the mapped directory), the same entries unsorted (the
//     (hash, index) array built at open), and a 100,000-tensor safetensors model (the
//     name index); names are looked up in a shuffled order so that each probe is a cold-ish
//     access, as a loader resolving a model's tensors does;
//   - open + validate of a 10,000-tensor SLM1 file (header, tokenizer, directory, data
//     region, scales, and the checksum; also without the checksum, and unsorted).
// The files are generated at start-up into $TMPDIR (default /tmp) and removed at exit.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include "bench_util.h"
#include "tensorblob.h"

namespace {

std::string tmp_dir() {
  const char *t = std::getenv("TMPDIR");
  return t && *t ? t : "/tmp";
}


std::string tensor_name(size_t i) {
  // Realistic names: a layer index and a role, 25-40 bytes.
  static const char *const kRoles[] = {"attn_q.weight", "attn_k.weight", "attn_v.weight",
                                       "attn_output.weight", "ffn_gate.weight", "ffn_up.weight",
                                       "ffn_down.weight", "attn_norm.weight", "ffn_norm.weight",
                                       "ffn_gate_exps.weight"};
  return "model.blk." + std::to_string(i / 10) + "." + kRoles[i % 10];
}

// An SLM1 file of n tensors written by tblob_slm1_writer; q8_0 [rows, cols] each when
// rows > 0, else f32 [1].
std::vector<uint8_t> make_slm1(size_t n, uint64_t rows, uint64_t cols) {
  tblob_slm1_writer_options o = TBLOB_SLM1_WRITER_OPTIONS_INIT;
  o.hidden_size = 4096;
  o.layer_count = 32;
  o.head_count = 32;
  o.ffn_size = 11008;
  o.max_context = 4096;
  tblob_slm1_writer *w = nullptr;
  if (tblob_slm1_writer_new(&o, &w, nullptr) != TBLOB_OK) std::abort();
  std::vector<float> values(rows ? rows * cols : 1);
  for (size_t k = 0; k < values.size(); ++k) values[k] = static_cast<float>(k % 17) - 8.0f;
  for (size_t i = 0; i < n; ++i) {
    const std::string name = tensor_name(i);
    const uint64_t shape2[2] = {rows, cols}, shape1[1] = {1};
    tblob_diag d = TBLOB_DIAG_INIT;
    const tblob_status s =
        rows ? tblob_slm1_writer_add_f32(w, name.data(), name.size(), shape2, 2, values.data(), values.size(),
                                         TBLOB_SLM1_Q8_0, 0, &d)
             : tblob_slm1_writer_add_f32(w, name.data(), name.size(), shape1, 1, values.data(), 1,
                                         TBLOB_SLM1_F32, 0, &d);
    if (s != TBLOB_OK) {
      std::fprintf(stderr, "add %s: %s\n", name.c_str(), d.message);
      std::abort();
    }
  }
  const std::string path = tmp_dir() + "/bench_slm1_" + std::to_string(getpid()) + ".slm";
  tblob_diag d = TBLOB_DIAG_INIT;
  if (tblob_slm1_writer_finish(w, path.c_str(), &d) != TBLOB_OK) {
    std::fprintf(stderr, "finish: %s\n", d.message);
    std::abort();
  }
  tblob_slm1_writer_free(w);
  std::vector<uint8_t> bytes = bench::read_file(path.c_str());
  ::unlink(path.c_str());
  return bytes;
}

// The same file with its directory entries in reverse order (regions unchanged; the
// checksum is then stale, so it is opened with TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM).
std::vector<uint8_t> reverse_directory(std::vector<uint8_t> b) {
  uint64_t dir, count32 = 0;
  std::memcpy(&dir, b.data() + 80, 8);
  std::memcpy(&count32, b.data() + 88, 4);
  const uint64_t n = count32 & 0xffffffffu;
  for (uint64_t i = 0; i < n / 2; ++i)
    std::swap_ranges(b.begin() + static_cast<long>(dir + 64 * i), b.begin() + static_cast<long>(dir + 64 * i + 64),
                     b.begin() + static_cast<long>(dir + 64 * (n - 1 - i)));
  return b;
}

// A safetensors buffer of n F32 [1] tensors with the same names.
std::vector<uint8_t> make_safetensors(size_t n) {
  std::string h = "{";
  for (size_t i = 0; i < n; ++i) {
    if (i) h += ',';
    h += "\"" + tensor_name(i) + "\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[" +
         std::to_string(4 * i) + "," + std::to_string(4 * i + 4) + "]}";
  }
  h += "}";
  while ((8 + h.size()) % 8) h += ' ';
  std::vector<uint8_t> b(8 + h.size() + 4 * n, 0);
  const uint64_t len = h.size();
  std::memcpy(b.data(), &len, 8);
  std::memcpy(b.data() + 8, h.data(), h.size());
  return b;
}

struct Fixture {
  std::vector<uint8_t> slm_sorted, slm_unsorted, st;
  tblob_model *m_sorted = nullptr, *m_unsorted = nullptr, *m_st = nullptr;
  std::vector<std::string> names;  // shuffled
  std::vector<uint64_t> hashes;
  std::vector<uint8_t> open10k, open10k_unsorted;

  Fixture() {
    const size_t n = 100000;
    slm_sorted = make_slm1(n, 0, 0);
    slm_unsorted = reverse_directory(slm_sorted);
    st = make_safetensors(n);
    tblob_open_options nock = TBLOB_OPEN_OPTIONS_INIT;
    nock.flags = TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM;
    tblob_diag d = TBLOB_DIAG_INIT;
    if (tblob_slm1_open_memory(slm_sorted.data(), slm_sorted.size(), nullptr, nullptr, &m_sorted, &d) != TBLOB_OK ||
        tblob_slm1_open_memory(slm_unsorted.data(), slm_unsorted.size(), &nock, nullptr, &m_unsorted, &d) != TBLOB_OK ||
        tblob_model_open_memory(st.data(), st.size(), nullptr, &m_st, &d) != TBLOB_OK) {
      std::fprintf(stderr, "fixture: %s\n", d.message);
      std::abort();
    }
    for (size_t i = 0; i < n; ++i) names.push_back(tensor_name(i));
    uint64_t x = 88172645463325252ull;
    for (size_t i = n - 1; i > 0; --i) {  // Fisher-Yates with xorshift64
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      std::swap(names[i], names[x % (i + 1)]);
    }
    for (const std::string &s : names) hashes.push_back(tblob_fnv1a64(s.data(), s.size()));
    open10k = make_slm1(10000, 4, 32);
    open10k_unsorted = reverse_directory(open10k);
  }
};

Fixture &fx() {
  static Fixture f;
  return f;
}

void lookup(benchmark::State &state, tblob_model *m) {
  const Fixture &f = fx();
  size_t i = 0;
  uint64_t sum = 0;
  for (auto _ : state) {
    const std::string &n = f.names[i];
    uint64_t idx = 0;
    if (tblob_tensor_find(m, n.data(), n.size(), &idx, nullptr) != TBLOB_OK) state.SkipWithError("not found");
    sum += idx;
    if (++i == f.names.size()) i = 0;
  }
  benchmark::DoNotOptimize(sum);
  state.counters["tensors"] = static_cast<double>(tblob_model_tensor_count(m));
}

void BM_Slm1FindSorted(benchmark::State &state) { lookup(state, fx().m_sorted); }
void BM_Slm1FindUnsorted(benchmark::State &state) { lookup(state, fx().m_unsorted); }
void BM_SafetensorsFind(benchmark::State &state) { lookup(state, fx().m_st); }

// Hash lookups alone (no FNV-1a of the name): the search itself.
void hash_lookup(benchmark::State &state, tblob_model *m) {
  const Fixture &f = fx();
  size_t i = 0;
  uint64_t sum = 0;
  for (auto _ : state) {
    uint64_t idx = 0;
    tblob_slm1_find_hash(m, f.hashes[i], &idx, nullptr);
    sum += idx;
    if (++i == f.hashes.size()) i = 0;
  }
  benchmark::DoNotOptimize(sum);
}
void BM_Slm1FindHashSorted(benchmark::State &state) { hash_lookup(state, fx().m_sorted); }
void BM_Slm1FindHashUnsorted(benchmark::State &state) { hash_lookup(state, fx().m_unsorted); }

void open_bench(benchmark::State &state, const std::vector<uint8_t> &b, uint32_t flags) {
  tblob_open_options o = TBLOB_OPEN_OPTIONS_INIT;
  o.flags = flags;
  for (auto _ : state) {
    tblob_model *m = nullptr;
    if (tblob_slm1_open_memory(b.data(), b.size(), &o, nullptr, &m, nullptr) != TBLOB_OK) state.SkipWithError("open");
    benchmark::DoNotOptimize(m);
    tblob_model_close(m);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(b.size()));
  state.counters["file_MB"] = static_cast<double>(b.size()) / 1e6;
}
void BM_Slm1Open10k(benchmark::State &state) { open_bench(state, fx().open10k, 0); }
void BM_Slm1Open10kNoChecksum(benchmark::State &state) {
  open_bench(state, fx().open10k, TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM);
}
void BM_Slm1Open10kUnsortedNoChecksum(benchmark::State &state) {
  open_bench(state, fx().open10k_unsorted, TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM);
}

}  // namespace

BENCHMARK(BM_Slm1FindSorted);
BENCHMARK(BM_Slm1FindUnsorted);
BENCHMARK(BM_SafetensorsFind);
BENCHMARK(BM_Slm1FindHashSorted);
BENCHMARK(BM_Slm1FindHashUnsorted);
BENCHMARK(BM_Slm1Open10k)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Slm1Open10kNoChecksum)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Slm1Open10kUnsortedNoChecksum)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
