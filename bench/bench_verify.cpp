// bench_verify: Ollama store verification throughput and model-open time.
//
//   bench_verify DIR [--blobs N] [--bytes TOTAL] [--repeat R] [--cold]
//
// Builds (once) a store in DIR with N tensor blobs of TOTAL bytes in all (default 1,000
// blobs, 2 GB) and one model "bench" whose manifest lists all of them (a 1,000-layer
// model), reads every blob once so the page cache holds them, then measures in one run:
//   - libcrypto SHA-256 on an in-memory buffer, 1 thread and 2 threads (the ceiling);
//   - tblob_store_verify with 1 and 2 threads (files -> read -> SHA-256 -> compare);
//   - the floor any program pays for these files: a bare 2-thread loop (open, read() or
//     mmap(), EVP SHA-256, close; no checks) over the same blobs, so the gap between the
//     in-memory rate and verify splits into the kernel's share and the library's;
//   - sha256sum over the same files, 2 processes (xargs -P2);
//   - with --cold, last (it leaves the page cache refilled by readahead): verify and the bare
//     read loop on blobs evicted from the page cache (fdatasync + POSIX_FADV_DONTNEED per file,
//     no root needed), i.e. read from the disk;
//   - time to a ready table: tblob_store_open_model on the 1,000-layer model.
// Prints one line per measurement (GB = 1e9 bytes).
#include <openssl/evp.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tensorblob.h"

namespace {

using Clock = std::chrono::steady_clock;
double secs(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

std::string hex(const unsigned char *d) {
  static const char k[] = "0123456789abcdef";
  std::string o;
  for (int i = 0; i < 32; ++i) {
    o += k[d[i] >> 4];
    o += k[d[i] & 15];
  }
  return o;
}

std::string sha_hex(const void *p, size_t n) {
  unsigned char d[32];
  unsigned int l = 0;
  EVP_Digest(p, n, d, &l, EVP_sha256(), nullptr);
  return hex(d);
}

void write_file(const std::string &path, const std::string &a, const std::string &b = "") {
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f) {
    std::perror(path.c_str());
    std::exit(2);
  }
  std::fwrite(a.data(), 1, a.size(), f);
  std::fwrite(b.data(), 1, b.size(), f);
  std::fclose(f);
}

// Go-writer single-tensor blob header for a U8 tensor of n bytes.
std::string header(const std::string &name, size_t n) {
  std::string h = "{\"" + name + "\":{\"dtype\":\"U8\",\"shape\":[" + std::to_string(n) + "],\"data_offsets\":[0," +
                  std::to_string(n) + "]}}";
  while (h.size() % 8) h += ' ';
  std::string len(8, '\0');
  for (int i = 0; i < 8; ++i) len[i] = static_cast<char>((h.size() >> (8 * i)) & 0xff);
  return len + h;
}

void build_store(const std::string &root, int blobs, uint64_t total) {
  struct stat st;
  const std::string man_dir = root + "/manifests/registry.ollama.ai/library/bench";
  if (::stat((man_dir + "/latest").c_str(), &st) == 0) return;
  for (const std::string &d : {root, root + "/blobs", root + "/manifests", root + "/manifests/registry.ollama.ai",
                               root + "/manifests/registry.ollama.ai/library", man_dir})
    ::mkdir(d.c_str(), 0755);
  const size_t per = static_cast<size_t>(total / static_cast<uint64_t>(blobs));
  std::string data(per, '\0');
  uint64_t x = 0x9E3779B97F4A7C15ull;
  std::string layers;
  for (int i = 0; i < blobs; ++i) {
    for (size_t k = 0; k + 8 <= per; k += 8) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      std::memcpy(&data[k], &x, 8);
    }
    const std::string name = "model.layers." + std::to_string(i) + ".weight";
    const std::string h = header(name, per);
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    EVP_DigestInit_ex(c, EVP_sha256(), nullptr);
    EVP_DigestUpdate(c, h.data(), h.size());
    EVP_DigestUpdate(c, data.data(), data.size());
    unsigned char d[32];
    unsigned int l = 0;
    EVP_DigestFinal_ex(c, d, &l);
    EVP_MD_CTX_free(c);
    const std::string hx = hex(d);
    write_file(root + "/blobs/sha256-" + hx, h, data);
    layers += std::string(i ? "," : "") + "{\"mediaType\":\"application/vnd.ollama.image.tensor\",\"digest\":\"sha256:" +
              hx + "\",\"size\":" + std::to_string(h.size() + per) + ",\"name\":\"" + name + "\"}";
  }
  const std::string cfg = "{\"model_format\":\"safetensors\"}\n";
  write_file(root + "/blobs/sha256-" + sha_hex(cfg.data(), cfg.size()), cfg);
  write_file(man_dir + "/latest",
             "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\",\"config\":"
             "{\"mediaType\":\"application/vnd.docker.container.image.v1+json\",\"digest\":\"sha256:" +
                 sha_hex(cfg.data(), cfg.size()) + "\",\"size\":" + std::to_string(cfg.size()) + "},\"layers\":[" +
                 layers + "]}\n");
}

struct HashJob {
  const std::string *buf;
  int reps;
};

void *hash_thread(void *arg) {
  HashJob *j = static_cast<HashJob *>(arg);
  unsigned char d[32];
  unsigned int l;
  for (int r = 0; r < j->reps; ++r) EVP_Digest(j->buf->data(), j->buf->size(), d, &l, EVP_sha256(), nullptr);
  return nullptr;
}

// libcrypto rate with t threads on 64 MiB buffers (cache-cold per pass, like files).
double libcrypto_rate(int threads, uint64_t bytes_per_thread) {
  std::vector<std::string> bufs(threads, std::string(64u << 20, '\x5a'));
  const int reps = static_cast<int>(bytes_per_thread / bufs[0].size());
  std::vector<HashJob> jobs(threads);
  std::vector<pthread_t> tids(threads);
  const auto t0 = Clock::now();
  for (int i = 0; i < threads; ++i) {
    jobs[i] = {&bufs[i], reps};
    pthread_create(&tids[i], nullptr, hash_thread, &jobs[i]);
  }
  for (int i = 0; i < threads; ++i) pthread_join(tids[i], nullptr);
  const double s = secs(t0, Clock::now());
  return static_cast<double>(bufs[0].size()) * reps * threads / s / 1e9;
}

// The bare loop: what hashing these files costs with nothing of the library in the way.
struct BareLoop {
  const std::vector<std::string> *files;
  std::atomic<size_t> next{0};
  bool mapped;
};

void *bare_thread(void *arg) {
  BareLoop *b = static_cast<BareLoop *>(arg);
  std::vector<unsigned char> buf(1u << 20);
  EVP_MD_CTX *c = EVP_MD_CTX_new();
  unsigned char d[32];
  unsigned int l;
  for (size_t i; (i = b->next.fetch_add(1)) < b->files->size();) {
    const int fd = open((*b->files)[i].c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) std::exit(2);
    EVP_DigestInit_ex(c, EVP_sha256(), nullptr);
    if (b->mapped) {
      void *m = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (m == MAP_FAILED) std::exit(2);
      EVP_DigestUpdate(c, m, static_cast<size_t>(st.st_size));
      munmap(m, static_cast<size_t>(st.st_size));
    } else {
      for (ssize_t r; (r = read(fd, buf.data(), buf.size())) > 0;) EVP_DigestUpdate(c, buf.data(), static_cast<size_t>(r));
    }
    EVP_DigestFinal_ex(c, d, &l);
    close(fd);
  }
  EVP_MD_CTX_free(c);
  return nullptr;
}

double bare_rate(const std::vector<std::string> &files, uint64_t bytes, bool mapped) {
  BareLoop b;
  b.files = &files;
  b.mapped = mapped;
  pthread_t t[2];
  const auto t0 = Clock::now();
  for (pthread_t &x : t) pthread_create(&x, nullptr, bare_thread, &b);
  for (pthread_t &x : t) pthread_join(x, nullptr);
  return static_cast<double>(bytes) / secs(t0, Clock::now()) / 1e9;
}

// Drops the files' pages from the page cache (clean pages only, hence the sync first).
void evict(const std::vector<std::string> &files) {
  for (const std::string &f : files) {
    const int fd = open(f.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
  }
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_verify DIR [--blobs N] [--bytes TOTAL] [--repeat R] [--cold]\n");
    return 2;
  }
  const std::string root = argv[1];
  int blobs = 1000, repeat = 3;
  uint64_t total = 2000000000ull;
  bool cold = false;
  for (int i = 2; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--cold")) {
      cold = true;
      continue;
    }
    if (i + 1 >= argc) break;
    if (!std::strcmp(argv[i], "--blobs")) blobs = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--bytes")) total = std::strtoull(argv[i + 1], nullptr, 10);
    if (!std::strcmp(argv[i], "--repeat")) repeat = std::atoi(argv[i + 1]);
    ++i;
  }
  auto t0 = Clock::now();
  build_store(root, blobs, total);
  std::printf("store: %s, %d blobs, %.2f GB (ready in %.1f s)\n", root.c_str(), blobs, total / 1e9, secs(t0, Clock::now()));
  // Warm the page cache.
  std::string cmd = "cat '" + root + "'/blobs/* > /dev/null";
  if (std::system(cmd.c_str()) != 0) return 1;

  tblob_store *s = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  if (tblob_store_open(root.c_str(), nullptr, &s, &d) != TBLOB_OK) {
    std::fprintf(stderr, "%s\n", d.message);
    return 1;
  }
  // The model's blobs (the config blob is tiny and left out: it changes nothing).
  std::vector<std::string> files;
  uint64_t file_bytes = 0;
  if (DIR *dir = opendir((root + "/blobs").c_str())) {
    while (const dirent *e = readdir(dir)) {
      struct stat st;
      const std::string path = root + "/blobs/" + e->d_name;
      if (e->d_name[0] == '.' || stat(path.c_str(), &st) != 0 || st.st_size < 4096) continue;
      files.push_back(path);
      file_bytes += static_cast<uint64_t>(st.st_size);
    }
    closedir(dir);
  }
  double best_c1 = 0, best_c2 = 0, best_v1 = 0, best_v2 = 0, best_m1 = 0, best_m2 = 0, best_sum = 0;
  double best_bare_read = 0, best_bare_map = 0;
  uint64_t bytes = 0;
  for (int r = 0; r < repeat; ++r) {
    best_c1 = std::max(best_c1, libcrypto_rate(1, 1u << 30));
    best_c2 = std::max(best_c2, libcrypto_rate(2, 1u << 30));
    best_bare_read = std::max(best_bare_read, bare_rate(files, file_bytes, false));
    best_bare_map = std::max(best_bare_map, bare_rate(files, file_bytes, true));
    for (uint32_t run = 0; run < 4; ++run) {
      const uint32_t threads = 1 + (run & 1u);
      const bool mapped = run >= 2;
      tblob_verify_options o = TBLOB_VERIFY_OPTIONS_INIT;
      o.threads = threads;
      if (mapped) o.flags = TBLOB_VERIFY_MAP;
      tblob_verify_summary sum = TBLOB_VERIFY_SUMMARY_INIT;
      t0 = Clock::now();
      const tblob_status st = tblob_store_verify(s, "bench", 5, &o, &sum, &d);
      const double sec = secs(t0, Clock::now());
      if (st != TBLOB_OK) {
        std::fprintf(stderr, "verify: %s\n", d.message);
        return 1;
      }
      bytes = sum.bytes_hashed;
      double &best = mapped ? (threads == 1 ? best_m1 : best_m2) : (threads == 1 ? best_v1 : best_v2);
      best = std::max(best, bytes / sec / 1e9);
    }
    cmd = "cd '" + root + "/blobs' && ls | xargs -P2 -n " + std::to_string(blobs / 2 + 1) + " sha256sum > /dev/null";
    t0 = Clock::now();
    if (std::system(cmd.c_str()) != 0) return 1;
    best_sum = std::max(best_sum, bytes / secs(t0, Clock::now()) / 1e9);
  }
  std::printf("libcrypto SHA-256 in memory, 1 thread : %6.2f GB/s\n", best_c1);
  std::printf("libcrypto SHA-256 in memory, 2 threads: %6.2f GB/s\n", best_c2);
  std::printf("bare read()+SHA-256 loop, 2 threads   : %6.2f GB/s  (%.0f%% of 2-thread libcrypto)\n", best_bare_read,
              100.0 * best_bare_read / best_c2);
  std::printf("bare mmap()+SHA-256 loop, 2 threads   : %6.2f GB/s  (%.0f%% of 2-thread libcrypto)\n", best_bare_map,
              100.0 * best_bare_map / best_c2);
  std::printf("tblob_store_verify, 1 thread          : %6.2f GB/s\n", best_v1);
  std::printf("tblob_store_verify, 2 threads         : %6.2f GB/s  (%.0f%% of 2-thread libcrypto, %.0f%% of the bare read loop)\n",
              best_v2, 100.0 * best_v2 / best_c2, 100.0 * best_v2 / best_bare_read);
  std::printf("tblob_store_verify MAP, 1 thread      : %6.2f GB/s\n", best_m1);
  std::printf("tblob_store_verify MAP, 2 threads     : %6.2f GB/s  (%.0f%% of 2-thread libcrypto, %.0f%% of the bare mmap loop)\n",
              best_m2, 100.0 * best_m2 / best_c2, 100.0 * best_m2 / best_bare_map);
  std::printf("sha256sum, 2 processes (xargs -P2)    : %6.2f GB/s\n", best_sum);
  if (cold) {
    double best_cv = 0, best_cb = 0;
    for (int r = 0; r < repeat; ++r) {
      evict(files);
      tblob_verify_options o = TBLOB_VERIFY_OPTIONS_INIT;
      o.threads = 2;
      tblob_verify_summary sum = TBLOB_VERIFY_SUMMARY_INIT;
      t0 = Clock::now();
      if (tblob_store_verify(s, "bench", 5, &o, &sum, &d) != TBLOB_OK) {
        std::fprintf(stderr, "verify: %s\n", d.message);
        return 1;
      }
      best_cv = std::max(best_cv, sum.bytes_hashed / secs(t0, Clock::now()) / 1e9);
      evict(files);
      best_cb = std::max(best_cb, bare_rate(files, file_bytes, false));
    }
    std::printf("cold: bare read()+SHA-256 loop, 2 thr : %6.2f GB/s\n", best_cb);
    std::printf("cold: tblob_store_verify, 2 threads   : %6.2f GB/s  (%.2fx the bare loop)\n", best_cv,
                best_cv / best_cb);
  }
  // Time to a ready table for the 1,000-layer model.
  std::vector<double> opens;
  for (int r = 0; r < 9; ++r) {
    tblob_model *m = nullptr;
    t0 = Clock::now();
    if (tblob_store_open_model(s, "bench", 5, nullptr, &m, &d) != TBLOB_OK) {
      std::fprintf(stderr, "open: %s\n", d.message);
      return 1;
    }
    opens.push_back(secs(t0, Clock::now()) * 1e3);
    if (r == 0) std::printf("model: %llu tensors in %u blobs\n", (unsigned long long)tblob_model_tensor_count(m), tblob_model_file_count(m));
    tblob_model_close(m);
  }
  std::sort(opens.begin(), opens.end());
  std::printf("open %d-layer model (manifest + every blob header, ready table): median %.2f ms, min %.2f ms\n", blobs,
              opens[opens.size() / 2], opens[0]);
  tblob_store_close(s);
  return 0;
}
