// SHA-256 verification of store blobs against their digests and sizes: sizes first (the
// OCI advice), then a streaming hash; distinct blobs are shared out among threads (both
// cores), and the calling thread alone reports progress and results, so callbacks never
// run on another thread. Also the incremental verifier for a downloader.
#include <algorithm>
#include <cstddef>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "core/checked.h"
#include "formats/ollama/ollama.h"
#include "io/file.h"
#include "hash/sha256.h"

struct tblob_verifier {
  tblob::Sha256 hash;
  char expected[tblob::ollama::kDigestBuf];
  uint64_t expected_size = UINT64_MAX;
  uint64_t got = 0;
  tblob::Status failed = TBLOB_OK;
};

namespace tblob {
namespace ollama {

namespace {

constexpr char kEmptyHex[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr size_t kChunk = size_t{1} << 20;

struct Job {
  char digest[kDigestBuf];
  uint64_t expected;
  uint64_t origin;        // order of first reference (manifest order)
  uint32_t model;         // index into the model names
  uint32_t layer;         // UINT32_MAX: config
  // Filled by the worker.
  Status status;
  uint64_t actual_size;
  char actual[kDigestBuf];
  char message[200];
  uint8_t done;           // atomic flag
  uint8_t is_manifest;    // a manifest that could not be read (no blob)
};

struct Shared {
  const tblob_store *s;
  Job *jobs;
  size_t n;
  uint64_t next = 0;        // atomic
  uint64_t bytes_done = 0;  // atomic
  uint64_t finished = 0;    // atomic
  int cancel = 0;           // atomic
  int active = 0;           // atomic: worker threads still running
  bool mapped = false;      // TBLOB_VERIFY_MAP
  int cold = 0;             // atomic: a blob's first bytes were not in the page cache
  uint64_t prefetch_next = 0;  // atomic: the next job whose file may be prefetched
};

// Cold stores (nothing in the page cache): each thread would wait for its blob's reads, hash,
// then wait again, so the disk idles while both cores hash. Once a first read finds a blob
// uncached, the workers ask the kernel to read the next blobs in the background
// (POSIX_FADV_WILLNEED), up to kPrefetchJobs jobs and kPrefetchBytes ahead of the newest job
// taken. A cached store never turns this on, so it costs those stores nothing.
constexpr uint64_t kPrefetchJobs = 16;
constexpr uint64_t kPrefetchBytes = uint64_t{64} << 20;

void prefetch_file(const Shared &sh, const Job &job) {
  if (job.is_manifest || job.expected == 0) return;
  char file[kDigestBuf];
  if (blob_file_name(job.digest, kDigestChars, file, Diag()) != TBLOB_OK) return;
  // The same flags as open_blob: never follows a symlink, never blocks on a FIFO. Only a hint:
  // the blob is opened and checked again when it is verified.
  const int fd = open_nofollow(sh.s->blobs_fd, file);
  if (fd < 0) return;
#ifdef POSIX_FADV_WILLNEED
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED);
#endif
  ::close(fd);
}

void prefetch_after(Shared &sh, uint64_t taken) {
  if (!__atomic_load_n(&sh.cold, __ATOMIC_RELAXED)) return;
  const uint64_t end = sh.n - taken - 1 < kPrefetchJobs ? sh.n : taken + 1 + kPrefetchJobs;
  uint64_t ahead = 0;  // bytes between the job taken and the one to prefetch
  for (uint64_t k = taken + 1; k < end; ++k) {
    if (!checked_add(ahead, sh.jobs[k].expected, &ahead)) ahead = UINT64_MAX;  // sizes from the manifest
    if (ahead > kPrefetchBytes && k > taken + 1) return;
    uint64_t next = __atomic_load_n(&sh.prefetch_next, __ATOMIC_RELAXED);
    if (next > k) continue;  // already asked for
    // Claim job k (another worker may claim it first; then move on).
    if (__atomic_compare_exchange_n(&sh.prefetch_next, &next, k + 1, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
      prefetch_file(sh, sh.jobs[k]);
  }
}

// The first read of a blob (size bytes long) doubles as the cache probe: RWF_NOWAIT returns
// only what the page cache holds. Returns bytes read, or -1 with errno.
ssize_t first_read(Shared &sh, int fd, uint8_t *buf, size_t len, uint64_t size) {
#if defined(__GLIBC__) && defined(RWF_NOWAIT)
  if (!__atomic_load_n(&sh.cold, __ATOMIC_RELAXED)) {
    struct iovec v = {buf, len};
    const ssize_t r = ::preadv2(fd, &v, 1, 0, RWF_NOWAIT);
    if (r >= 0 && (static_cast<size_t>(r) == len || static_cast<uint64_t>(r) == size)) return r;
    if (r > 0 || (r < 0 && errno == EAGAIN)) __atomic_store_n(&sh.cold, 1, __ATOMIC_RELAXED);
    if (r > 0) return r;  // the rest follows with ordinary reads
    // EAGAIN, or no RWF_NOWAIT here (EOPNOTSUPP): read normally.
  }
#else
  (void)sh;
  (void)size;
#endif
  return ::pread(fd, buf, len, 0);
}

struct Pump;
void process(Shared &sh, Job &job, uint8_t *buf, Pump *pump);

struct Pump {
  Shared *sh;
  const tblob_verify_options *opt;
  const PodVec<ModelName> *models;
  uint64_t bytes_total;
  uint64_t blobs_total;
  size_t delivered = 0;
  uint64_t last_bytes = 0;
  uint64_t last_finished = UINT64_MAX;
  bool any_callback;

  void report(bool force) {
    // Once a callback has asked to stop, none is called again.
    if (!any_callback || __atomic_load_n(&sh->cancel, __ATOMIC_ACQUIRE)) return;
    if (opt->on_blob) {
      while (delivered < sh->n && __atomic_load_n(&sh->jobs[delivered].done, __ATOMIC_ACQUIRE)) {
        const Job &j = sh->jobs[delivered++];
        tblob_blob_result r;
        std::memset(&r, 0, sizeof(r));
        r.struct_size = sizeof(r);
        r.status = j.status;
        r.digest = j.is_manifest ? "" : j.digest;
        r.digest_len = j.is_manifest ? 0 : kDigestChars;
        r.actual_digest = j.actual;
        r.actual_digest_len = std::strlen(j.actual);
        r.expected_size = j.expected;
        r.actual_size = j.actual_size;
        char path[4096 + 128];
        size_t plen = 0;
        if (j.is_manifest) {
          const ModelName &mn = (*models)[j.model];
          const int k = std::snprintf(path, sizeof(path), "%s/manifests/%s/%s/%s/%s", sh->s->root, mn.host, mn.ns,
                                      mn.model, mn.tag);
          plen = k > 0 ? std::min(static_cast<size_t>(k), sizeof(path) - 1) : 0;
          if (mn.host_len == 0) {  // a listing entry whose name is not valid: message has it
            plen = 0;
            path[0] = '\0';
          }
        } else {
          plen = blob_path(*sh->s, j.digest, path, sizeof(path));
        }
        r.path = path;
        r.path_len = plen;
        r.message = j.message;
        if (opt->on_blob(opt->on_blob_user, &r) != 0) {
          __atomic_store_n(&sh->cancel, 1, __ATOMIC_RELEASE);
          return;
        }
      }
    }
    if (opt->progress) {
      const uint64_t b = __atomic_load_n(&sh->bytes_done, __ATOMIC_RELAXED);
      const uint64_t f = __atomic_load_n(&sh->finished, __ATOMIC_ACQUIRE);
      if (force || f != last_finished || b - last_bytes >= (uint64_t{32} << 20)) {
        last_bytes = b;
        last_finished = f;
        const tblob_verify_progress p = {sizeof(p), 0, blobs_total, f, bytes_total, b};
        if (opt->progress(opt->progress_user, &p) != 0) __atomic_store_n(&sh->cancel, 1, __ATOMIC_RELEASE);
      }
    }
  }
};

void set_msg(Job &j, Status s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void set_msg(Job &j, Status s, const char *fmt, ...) {
  j.status = s;
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(j.message, sizeof(j.message), fmt, ap);
  va_end(ap);
}

void process(Shared &sh, Job &job, uint8_t *buf, Pump *pump) {
  job.actual[0] = '\0';
  job.actual_size = UINT64_MAX;
  if (job.is_manifest) return;
  tblob_diag inner = TBLOB_DIAG_INIT;
  Diag d;
  d.out = &inner;
  int fd;
  struct stat st;
  Status s = open_blob(*sh.s, job.digest, kDigestChars, &fd, &st, d);
  if (s != TBLOB_OK) {
    set_msg(job, s, "%.190s", inner.message);
    return;
  }
  job.actual_size = static_cast<uint64_t>(st.st_size);
  const char *file = job.digest + 7;
  if (job.actual_size == 0) {
    std::memcpy(job.actual, "sha256:", 7);
    std::memcpy(job.actual + 7, kEmptyHex, 64);
    job.actual[kDigestChars] = '\0';
    ::close(fd);
    set_msg(job, TBLOB_E_OLLAMA_BLOB_EMPTY,
            "blob sha256-%.12s... is empty: its hash is sha256:e3b0c442..., the hash of no bytes "
            "(expected %llu bytes)", file, static_cast<unsigned long long>(job.expected));
    return;
  }
  if (job.actual_size != job.expected) {
    ::close(fd);
    set_msg(job, TBLOB_E_OLLAMA_BLOB_SIZE, "blob sha256-%.12s... is %llu bytes; the manifest says %llu", file,
            static_cast<unsigned long long>(job.actual_size), static_cast<unsigned long long>(job.expected));
    return;
  }
  Sha256 h;
  if (!h.init()) {
    ::close(fd);
    set_msg(job, TBLOB_E_OUT_OF_MEMORY, "cannot start SHA-256");
    return;
  }
  uint64_t total = 0;
  if (sh.mapped) {
    // TBLOB_VERIFY_MAP: hash the page cache in place, without read()'s copy. The caller
    // has promised that nothing truncates blobs meanwhile (that would be SIGBUS).
    size_t len;
    void *map = to_size(job.expected, &len) ? ::mmap(nullptr, len, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    if (map == MAP_FAILED) {
      const int e = errno;
      ::close(fd);
      set_msg(job, TBLOB_E_IO, "cannot map blob sha256-%.12s...: %s", file, std::strerror(e));
      return;
    }
#ifdef MADV_SEQUENTIAL
    ::madvise(map, len, MADV_SEQUENTIAL);
#endif
    (void)first_read(sh, fd, buf, len < 4096 ? len : 4096, job.expected);  // the cache probe only
    const uint8_t *p = static_cast<const uint8_t *>(map);
    while (total < job.expected) {
      if (__atomic_load_n(&sh.cancel, __ATOMIC_ACQUIRE)) break;
      const size_t n = job.expected - total < kChunk ? static_cast<size_t>(job.expected - total) : kChunk;
      h.update(p + total, n);
      total += n;
      __atomic_fetch_add(&sh.bytes_done, static_cast<uint64_t>(n), __ATOMIC_RELAXED);
      if (pump) pump->report(false);
    }
    ::munmap(map, len);
    if (total < job.expected) {
      ::close(fd);
      set_msg(job, TBLOB_E_CANCELLED, "cancelled");
      return;
    }
  } else {
    // read(), by default: a blob truncated by another process while it is hashed gives a
    // size error, not SIGBUS.
#ifdef POSIX_FADV_SEQUENTIAL
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    for (;;) {
      if (__atomic_load_n(&sh.cancel, __ATOMIC_ACQUIRE)) {
        ::close(fd);
        set_msg(job, TBLOB_E_CANCELLED, "cancelled");
        return;
      }
      const ssize_t r = total == 0 ? first_read(sh, fd, buf, kChunk, job.expected)
                                   : ::pread(fd, buf, kChunk, static_cast<off_t>(total));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        const int e = errno;
        ::close(fd);
        set_msg(job, TBLOB_E_IO, "cannot read blob sha256-%.12s...: %s", file, std::strerror(e));
        return;
      }
      if (r == 0) break;
      h.update(buf, static_cast<size_t>(r));
      total += static_cast<uint64_t>(r);
      __atomic_fetch_add(&sh.bytes_done, static_cast<uint64_t>(r), __ATOMIC_RELAXED);
      if (pump) pump->report(false);
    }
  }
  ::close(fd);
  if (total != job.expected) {
    job.actual_size = total;
    set_msg(job, TBLOB_E_OLLAMA_BLOB_SIZE, "blob sha256-%.12s... changed size while read: %llu bytes, manifest says %llu",
            file, static_cast<unsigned long long>(total), static_cast<unsigned long long>(job.expected));
    return;
  }
  uint8_t dg[kSha256Bytes];
  if (!h.final(dg)) {
    set_msg(job, TBLOB_E_OUT_OF_MEMORY, "SHA-256 failed");
    return;
  }
  std::memcpy(job.actual, "sha256:", 7);
  sha256_hex(dg, job.actual + 7);
  job.actual[kDigestChars] = '\0';
  if (std::memcmp(job.actual, job.digest, kDigestChars) != 0) {
    set_msg(job, TBLOB_E_DIGEST_MISMATCH, "blob sha256-%.12s... has content hash sha256:%.12s...: corrupt", file,
            job.actual + 7);
    return;
  }
  job.status = TBLOB_OK;
  job.message[0] = '\0';
}

struct Worker {
  Shared *sh;
  uint8_t *mem;  // the allocation: kChunk + kAlign bytes
  uint8_t *buf;  // inside it, page aligned: the kernel copies into aligned memory faster
  Pump *pump;    // only for the calling thread
};
constexpr size_t kAlign = 4096;

void run_worker(Worker &w) {
  for (;;) {
    if (__atomic_load_n(&w.sh->cancel, __ATOMIC_ACQUIRE)) break;
    const uint64_t i = __atomic_fetch_add(&w.sh->next, 1, __ATOMIC_RELAXED);
    if (i >= w.sh->n) break;
    prefetch_after(*w.sh, i);
    Job &j = w.sh->jobs[i];
    process(*w.sh, j, w.buf, w.pump);
    __atomic_store_n(&j.done, 1, __ATOMIC_RELEASE);
    __atomic_fetch_add(&w.sh->finished, 1, __ATOMIC_RELEASE);
    if (w.pump) w.pump->report(false);
  }
}

void *thread_main(void *arg) {
  Worker *w = static_cast<Worker *>(arg);
  run_worker(*w);
  __atomic_fetch_sub(&w->sh->active, 1, __ATOMIC_RELEASE);
  return nullptr;
}

Status add_manifest_jobs(const tblob_manifest &man, uint32_t model, uint64_t *origin, PodVec<Job> *jobs,
                         const Diag &diag) {
  for (size_t i = 0; i <= man.layers.size(); ++i) {
    const LayerRec &l = i == 0 ? man.config : man.layers[i - 1];
    if (i == 0 && !man.has_config) continue;
    Job j;
    std::memset(&j, 0, sizeof(j));
    std::memcpy(j.digest, l.digest, kDigestBuf);
    j.expected = l.size;
    j.origin = (*origin)++;
    j.model = model;
    j.layer = i == 0 ? UINT32_MAX : static_cast<uint32_t>(i - 1);
    if (!jobs->push(j)) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  }
  return TBLOB_OK;
}

}  // namespace

Status verify_store(const tblob_store &s, const char *name, size_t name_len,
                    const tblob_verify_options *opt, tblob_verify_summary *sum, const Diag &diag) {
  PodVec<Job> jobs(&s.alloc);
  PodVec<ModelName> models(&s.alloc);
  uint64_t origin = 0, manifests = 0, manifests_bad = 0;
  Status first_manifest_error = TBLOB_OK;
  if (name) {
    ModelName mn;
    Status st = parse_name(name, name_len, &mn, diag);
    if (st != TBLOB_OK) return st;
    tblob_manifest *man = nullptr;
    if ((st = load_manifest(s, mn, &man, nullptr, diag)) != TBLOB_OK) return st;
    manifests = 1;
    if (!models.push(mn)) st = diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    if (st == TBLOB_OK) st = add_manifest_jobs(*man, 0, &origin, &jobs, diag);
    manifest_free(man);
    if (st != TBLOB_OK) return st;
  } else {
    PodVec<ListedName> names(&s.alloc);
    Status st = list_manifest_names(s, &names, diag);
    if (st != TBLOB_OK) return st;
    for (size_t i = 0; i < names.size(); ++i) {
      ++manifests;
      tblob_diag inner = TBLOB_DIAG_INIT;
      Diag d;
      d.out = &inner;
      tblob_manifest *man = nullptr;
      Status ms = names[i].status;
      if (ms == TBLOB_OK) {
        ms = load_manifest(s, names[i].name, &man, nullptr, d);
      } else {
        d.fail(ms, TBLOB_NO_OFFSET, -1, "manifest entry %s: %s", names[i].raw,
               ms == TBLOB_E_OLLAMA_PATH ? "is a symlink" : ms == TBLOB_E_OLLAMA_NOT_A_FILE ? "is not a file"
                                                                                          : "is not a valid model name");
      }
      ModelName mn = names[i].name;
      if (!models.push(mn)) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
      const uint32_t mi = static_cast<uint32_t>(models.size() - 1);
      if (ms != TBLOB_OK) {
        ++manifests_bad;
        if (first_manifest_error == TBLOB_OK) {
          first_manifest_error = ms;
          diag.fail(ms, inner.offset, -1, "%s", inner.message);
        }
        Job j;
        std::memset(&j, 0, sizeof(j));
        j.is_manifest = 1;
        j.origin = origin++;
        j.model = mi;
        j.status = ms;
        j.actual_size = UINT64_MAX;
        std::snprintf(j.message, sizeof(j.message), "%.190s", inner.message);
        if (!jobs.push(j)) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
        continue;
      }
      st = add_manifest_jobs(*man, mi, &origin, &jobs, diag);
      manifest_free(man);
      if (st != TBLOB_OK) return st;
    }
  }
  // One job per distinct (digest, size), in order of first reference.
  std::sort(jobs.data(), jobs.data() + jobs.size(), [](const Job &a, const Job &b) {
    if (a.is_manifest != b.is_manifest) return a.is_manifest < b.is_manifest;
    const int d = std::memcmp(a.digest, b.digest, kDigestChars);
    if (d != 0) return d < 0;
    if (a.expected != b.expected) return a.expected < b.expected;
    return a.origin < b.origin;
  });
  size_t kept = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (kept && !jobs[i].is_manifest && !jobs[kept - 1].is_manifest &&
        std::memcmp(jobs[i].digest, jobs[kept - 1].digest, kDigestChars) == 0 &&
        jobs[i].expected == jobs[kept - 1].expected)
      continue;
    jobs[kept++] = jobs[i];
  }
  while (jobs.size() > kept) jobs.pop();
  std::sort(jobs.data(), jobs.data() + jobs.size(), [](const Job &a, const Job &b) { return a.origin < b.origin; });

  Shared sh;
  sh.s = &s;
  sh.jobs = jobs.data();
  sh.mapped = opt && opt->struct_size >= offsetof(tblob_verify_options, flags) + sizeof(opt->flags) &&
              (opt->flags & TBLOB_VERIFY_MAP) != 0;
  sh.n = jobs.size();
  uint64_t bytes_total = 0, blobs_total = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (jobs[i].is_manifest) {
      jobs[i].done = 1;
      ++sh.finished;
      continue;
    }
    ++blobs_total;
    if (!checked_add(bytes_total, jobs[i].expected, &bytes_total)) bytes_total = UINT64_MAX;
  }
  uint32_t threads = opt ? opt->threads : 0;
  if (threads == 0) {
    const long c = ::sysconf(_SC_NPROCESSORS_ONLN);
    threads = c > 0 ? static_cast<uint32_t>(c) : 1;
  }
  if (threads > 64) threads = 64;
  if (threads > blobs_total) threads = blobs_total ? static_cast<uint32_t>(blobs_total) : 1;
  tblob_verify_options none = TBLOB_VERIFY_OPTIONS_INIT;
  Pump pump;
  pump.sh = &sh;
  pump.opt = opt ? opt : &none;
  pump.models = &models;
  pump.bytes_total = bytes_total;
  pump.blobs_total = blobs_total;
  pump.any_callback = pump.opt->progress || pump.opt->on_blob;

  Worker workers[64];
  pthread_t tids[64];
  uint32_t started = 0;
  for (uint32_t t = 0; t < threads; ++t) {
    workers[t].sh = &sh;
    workers[t].pump = t == 0 ? &pump : nullptr;
    workers[t].mem = static_cast<uint8_t *>(s.alloc.alloc(kChunk + kAlign));
    if (!workers[t].mem) break;
    const uintptr_t at = reinterpret_cast<uintptr_t>(workers[t].mem);
    workers[t].buf = workers[t].mem + ((kAlign - (at & (kAlign - 1))) & (kAlign - 1));
    ++started;
  }
  if (started == 0) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  uint32_t running = 1;  // worker 0 is this thread
  for (uint32_t t = 1; t < started; ++t) {
    __atomic_fetch_add(&sh.active, 1, __ATOMIC_RELEASE);
    if (::pthread_create(&tids[t], nullptr, thread_main, &workers[t]) != 0) {
      __atomic_fetch_sub(&sh.active, 1, __ATOMIC_RELEASE);
      break;  // fewer threads; the work is shared out dynamically
    }
    ++running;
  }
  pump.report(true);
  run_worker(workers[0]);
  // Without callbacks there is nothing to pump: join at once rather than in 2 ms steps.
  while (pump.any_callback && __atomic_load_n(&sh.active, __ATOMIC_ACQUIRE) > 0) {
    pump.report(false);
    struct timespec ts = {0, 2000000};
    ::nanosleep(&ts, nullptr);
  }
  for (uint32_t t = 1; t < running; ++t) ::pthread_join(tids[t], nullptr);
  pump.report(true);
  for (uint32_t t = 0; t < started; ++t) s.alloc.free(workers[t].mem, kChunk + kAlign);

  uint64_t bad = 0, hashed = 0;
  Status first = TBLOB_OK;
  size_t first_i = 0;
  bool cancelled = __atomic_load_n(&sh.cancel, __ATOMIC_ACQUIRE) != 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const Job &j = jobs[i];
    if (j.is_manifest) continue;
    if (!j.done) continue;
    if (j.status == TBLOB_OK) {
      hashed += j.expected;
      continue;
    }
    if (j.status == TBLOB_E_CANCELLED) continue;
    ++bad;
    if (first == TBLOB_OK) {
      first = j.status;
      first_i = i;
    }
  }
  if (sum && sum->struct_size >= sizeof(tblob_verify_summary)) {
    sum->threads_used = running;
    sum->manifests = manifests;
    sum->manifests_bad = manifests_bad;
    sum->blobs = blobs_total;
    sum->blobs_bad = bad;
    sum->bytes_hashed = hashed;
  }
  if (cancelled) return diag.fail(TBLOB_E_CANCELLED, TBLOB_NO_OFFSET, -1, "verification cancelled by a callback");
  if (first_manifest_error != TBLOB_OK) return first_manifest_error;  // diag already set
  if (first != TBLOB_OK) {
    const Job &j = jobs[first_i];
    const ModelName &mn = models[j.model];
    char full[kFullNameBuf];
    format_full_name(mn, full);
    return diag.fail(first, TBLOB_NO_OFFSET, -1, "%s (%s of %s)%s", j.message,
                     j.layer == UINT32_MAX ? "config" : "a layer", full,
                     bad > 1 ? "; more blobs are bad" : "");
  }
  return TBLOB_OK;
}

// ---- incremental -----------------------------------------------------------------------

Status verifier_open(const char *digest, size_t n, uint64_t expected_size, tblob_verifier **out,
                     const Diag &diag) {
  *out = nullptr;
  Status s = check_digest(digest, n, DigestForm::kManifest, "digest", diag);
  if (s != TBLOB_OK) return s;
  tblob_verifier *v = new (std::nothrow) tblob_verifier;
  if (!v || !v->hash.init()) {
    delete v;
    return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  }
  std::memcpy(v->expected, digest, kDigestChars);
  v->expected[kDigestChars] = '\0';
  v->expected_size = expected_size;
  *out = v;
  return TBLOB_OK;
}

Status verifier_update(tblob_verifier *v, const void *p, size_t n, const Diag &diag) {
  if (v->failed != TBLOB_OK)
    return diag.fail(v->failed, v->got, -1, "the verifier already failed (%s)", ::tblob::status_name(v->failed));
  uint64_t got;
  if (!checked_add(v->got, n, &got) || (v->expected_size != UINT64_MAX && got > v->expected_size)) {
    v->failed = TBLOB_E_OLLAMA_BLOB_SIZE;
    return diag.fail(TBLOB_E_OLLAMA_BLOB_SIZE, v->got, -1,
                     "blob %.19s... receives more than the %llu bytes its layer states", v->expected,
                     static_cast<unsigned long long>(v->expected_size));
  }
  if (!v->hash.update(p, n)) {
    v->failed = TBLOB_E_OUT_OF_MEMORY;
    return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  }
  v->got = got;
  return TBLOB_OK;
}

Status verifier_final(tblob_verifier *v, char *actual, size_t cap, const Diag &diag) {
  if (v->failed != TBLOB_OK)
    return diag.fail(v->failed, v->got, -1, "the verifier already failed (%s)", ::tblob::status_name(v->failed));
  uint8_t dg[kSha256Bytes];
  char hex[kDigestBuf];
  if (!v->hash.final(dg)) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  v->failed = TBLOB_E_INVALID_ARGUMENT;  // final is once
  std::memcpy(hex, "sha256:", 7);
  sha256_hex(dg, hex + 7);
  hex[kDigestChars] = '\0';
  if (actual && cap >= kDigestBuf) std::memcpy(actual, hex, kDigestBuf);
  if (v->got == 0)
    return diag.fail(TBLOB_E_OLLAMA_BLOB_EMPTY, 0, -1,
                     "blob %.19s... received no bytes: sha256:e3b0c442... is the hash of empty content", v->expected);
  if (v->expected_size != UINT64_MAX && v->got != v->expected_size)
    return diag.fail(TBLOB_E_OLLAMA_BLOB_SIZE, v->got, -1, "blob %.19s... received %llu bytes; its layer states %llu",
                     v->expected, static_cast<unsigned long long>(v->got),
                     static_cast<unsigned long long>(v->expected_size));
  if (std::memcmp(hex, v->expected, kDigestChars) != 0)
    return diag.fail(TBLOB_E_DIGEST_MISMATCH, TBLOB_NO_OFFSET, -1, "content hash %.19s... differs from digest %.19s...",
                     hex, v->expected);
  return TBLOB_OK;
}

void verifier_close(tblob_verifier *v) { delete v; }

}  // namespace ollama
}  // namespace tblob
