// SHA-256 verification: whole store, one model, threads, progress and cancellation, the
// per-blob results, and the incremental verifier's agreement with it.
#include <fcntl.h>

#include "test_util.h"

namespace {

using tw::T;

// on_blob callback: "<digest> <status name>" of every bad blob into a std::vector<std::string>.
int collect_bad(void *user, const tblob_blob_result *r) {
  if (r->status != TBLOB_OK)
    static_cast<std::vector<std::string> *>(user)->emplace_back(std::string(r->digest, r->digest_len) + " " +
                                                                tblob_status_name(r->status));
  return 0;
}

struct Verify : tt::Fixture {
  std::vector<tw::Layer> layers;
  void build(int n, size_t bytes) {
    tw::Store st(root);
    for (int i = 0; i < n; ++i) {
      const std::string name = "t" + std::to_string(i);
      layers.push_back(st.blob(tw::go_blob({T{name, "U8", {bytes}, tw::pattern(bytes, i + 1)}}), name));
    }
    st.manifest("a", layers);
    st.manifest("b", {layers[0]});  // shares a blob
  }
  // Verifies model "a" with these threads and flags; *bad gets the sorted bad blobs.
  static tblob_status verify_a(tblob_store *s, uint32_t threads, uint32_t flags, std::vector<std::string> *bad,
                               tblob_verify_summary *sum) {
    tblob_verify_options o = TBLOB_VERIFY_OPTIONS_INIT;
    o.threads = threads;
    o.flags = flags;
    o.on_blob = collect_bad;
    o.on_blob_user = bad;
    tblob_diag d = TBLOB_DIAG_INIT;
    const tblob_status r = tblob_store_verify(s, "a", 1, &o, sum, &d);
    std::sort(bad->begin(), bad->end());
    return r;
  }
};

TEST_F(Verify, WholeStoreOneAndTwoThreadsAgree) {
  build(24, 100000);
  for (uint32_t threads : {1u, 2u, 0u}) {
    tblob_diag d = TBLOB_DIAG_INIT;
    tblob_verify_summary sum = TBLOB_VERIFY_SUMMARY_INIT;
    ASSERT_EQ(verify(nullptr, &d, &sum, threads), TBLOB_OK) << d.message;
    EXPECT_EQ(sum.manifests, 2u);
    EXPECT_EQ(sum.blobs, 25u);  // 24 layers + the shared config blob, each once
    EXPECT_EQ(sum.blobs_bad, 0u);
    if (threads) {
      EXPECT_EQ(sum.threads_used, threads);
    }
  }
}

TEST_F(Verify, ProgressResultsAndCancel) {
  build(16, 300000);
  // Corrupt two blobs.
  for (int i : {3, 9}) {
    const std::string p = root + "/blobs/sha256-" + layers[i].digest.substr(7);
    std::string b = tw::read_file(p);
    b[100] ^= 0x40;
    tw::write_file(p, b);
  }
  struct Seen {
    int progress_calls = 0;
    uint64_t last_done = 0;
    bool monotonic = true;
    pthread_t caller;
    bool same_thread = true;
    std::vector<std::string> bad;
    int results = 0;
  } seen;
  seen.caller = pthread_self();
  tblob_store *s = open_store();
  tblob_verify_options o = TBLOB_VERIFY_OPTIONS_INIT;
  o.threads = 2;
  o.progress = [](void *u, const tblob_verify_progress *p) {
    Seen *x = static_cast<Seen *>(u);
    ++x->progress_calls;
    x->monotonic = x->monotonic && p->bytes_done >= x->last_done && p->bytes_done <= p->bytes_total;
    x->last_done = p->bytes_done;
    x->same_thread = x->same_thread && pthread_equal(pthread_self(), x->caller);
    return 0;
  };
  o.progress_user = &seen;
  o.on_blob = [](void *u, const tblob_blob_result *r) {
    Seen *x = static_cast<Seen *>(u);
    ++x->results;
    x->same_thread = x->same_thread && pthread_equal(pthread_self(), x->caller);
    if (r->status != TBLOB_OK) x->bad.emplace_back(std::string(r->path, r->path_len) + " " + tblob_status_name(r->status));
    return 0;
  };
  o.on_blob_user = &seen;
  tblob_verify_summary sum = TBLOB_VERIFY_SUMMARY_INIT;
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(tblob_store_verify(s, "a", 1, &o, &sum, &d), TBLOB_E_DIGEST_MISMATCH);
  EXPECT_EQ(sum.blobs_bad, 2u);
  EXPECT_EQ(seen.results, 17);
  ASSERT_EQ(seen.bad.size(), 2u);
  EXPECT_EQ(seen.bad[0], root + "/blobs/sha256-" + layers[3].digest.substr(7) + " TBLOB_E_DIGEST_MISMATCH");
  EXPECT_GT(seen.progress_calls, 0);
  EXPECT_TRUE(seen.monotonic);
  EXPECT_TRUE(seen.same_thread);
  EXPECT_EQ(seen.last_done, sum.bytes_hashed + 2 * layers[3].size);
  // Cancel from the progress callback.
  o.on_blob = nullptr;
  o.progress = [](void *, const tblob_verify_progress *p) { return p->blobs_done >= 2 ? 1 : 0; };
  EXPECT_EQ(tblob_store_verify(s, nullptr, 0, &o, &sum, &d), TBLOB_E_CANCELLED);
  // After a callback asks to stop, no callback is called again.
  int calls = 0;
  o.progress = [](void *u, const tblob_verify_progress *) { return ++*static_cast<int *>(u) >= 1 ? 1 : 0; };
  o.progress_user = &calls;
  EXPECT_EQ(tblob_store_verify(s, nullptr, 0, &o, &sum, &d), TBLOB_E_CANCELLED);
  EXPECT_EQ(calls, 1);
  int results = 0;
  o.progress = nullptr;
  o.on_blob = [](void *u, const tblob_blob_result *) { return ++*static_cast<int *>(u) >= 1 ? 1 : 0; };
  o.on_blob_user = &results;
  EXPECT_EQ(tblob_store_verify(s, nullptr, 0, &o, &sum, &d), TBLOB_E_CANCELLED);
  EXPECT_EQ(results, 1);
  tblob_store_close(s);
}

// TBLOB_VERIFY_MAP hashes through a mapping: same results as read() on good, corrupt and
// wrong-size blobs (sizes are checked before mapping), with 1 and 2 threads, and a blob
// larger than the read chunk. Unknown flag bits are refused.
TEST_F(Verify, MappedHashingAgreesWithRead) {
  build(6, 3 << 20);  // 3 MiB: more than one 1 MiB chunk
  const std::string p3 = root + "/blobs/sha256-" + layers[3].digest.substr(7);
  std::string b = tw::read_file(p3);
  b[(2 << 20) + 5] ^= 0x01;  // in the third chunk
  tw::write_file(p3, b);
  const std::string p4 = root + "/blobs/sha256-" + layers[4].digest.substr(7);
  tw::write_file(p4, tw::read_file(p4) + "x");
  tblob_store *s = open_store();
  uint64_t read_bytes = 0;
  for (uint32_t threads : {1u, 2u}) {
    for (uint32_t flags : {0u, static_cast<uint32_t>(TBLOB_VERIFY_MAP)}) {
      std::vector<std::string> bad;
      tblob_verify_summary sum = TBLOB_VERIFY_SUMMARY_INIT;
      EXPECT_NE(verify_a(s, threads, flags, &bad, &sum), TBLOB_OK);
      EXPECT_EQ(sum.blobs, 7u);
      EXPECT_EQ(sum.blobs_bad, 2u) << "flags " << flags;
      std::vector<std::string> want = {layers[3].digest + " TBLOB_E_DIGEST_MISMATCH",
                                       layers[4].digest + " TBLOB_E_OLLAMA_BLOB_SIZE"};
      std::sort(want.begin(), want.end());
      EXPECT_EQ(bad, want) << "threads " << threads << " flags " << flags;
      if (flags == 0) read_bytes = sum.bytes_hashed;
      EXPECT_EQ(sum.bytes_hashed, read_bytes);
      EXPECT_GE(sum.bytes_hashed, 4u * (3u << 20));  // the four good layer blobs at least
    }
  }
  tblob_verify_options o = TBLOB_VERIFY_OPTIONS_INIT;
  o.flags = 0x2;
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(tblob_store_verify(s, "a", 1, &o, nullptr, &d), TBLOB_E_INVALID_ARGUMENT);
  o.flags = TBLOB_VERIFY_MAP;
  o.reserved = 1;
  EXPECT_EQ(tblob_store_verify(s, "a", 1, &o, nullptr, &d), TBLOB_E_INVALID_ARGUMENT);
  tblob_store_close(s);
}

// Blobs out of the page cache (evicted with POSIX_FADV_DONTNEED after a sync, where the file
// system honours it): the first read finds them uncached, the workers prefetch the next blobs,
// and the results are the same as for a cached store. Also a blob whose first chunk is only
// half cached (the probe returns part of it and the rest is read normally).
void evict(const std::string &path, off_t offset, off_t len) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path;
  ::fdatasync(fd);
  ::posix_fadvise(fd, offset, len, POSIX_FADV_DONTNEED);
  ::close(fd);
}

TEST_F(Verify, EvictedBlobsVerifyTheSame) {
  build(12, (3 << 20) / 2);  // 1.5 MiB: the first 1 MiB read and a second one
  const std::string p5 = root + "/blobs/sha256-" + layers[5].digest.substr(7);
  std::string b = tw::read_file(p5);
  b[b.size() - 3] ^= 0x10;  // in the last chunk
  tw::write_file(p5, b);
  std::vector<std::string> files;
  for (const tw::Layer &l : layers) files.push_back(root + "/blobs/sha256-" + l.digest.substr(7));
  tblob_store *s = open_store();
  tblob_verify_summary cached = TBLOB_VERIFY_SUMMARY_INIT;  // the figures of the cached store
  ASSERT_EQ(tblob_store_verify(s, "a", 1, nullptr, &cached, nullptr), TBLOB_E_DIGEST_MISMATCH);
  ASSERT_GT(cached.bytes_hashed, 11u * (3u << 20) / 2);  // the 11 good layer blobs at least
  for (uint32_t threads : {1u, 2u}) {
    for (uint32_t flags : {0u, static_cast<uint32_t>(TBLOB_VERIFY_MAP)}) {
      for (int partial = 0; partial < 2; ++partial) {
        for (const std::string &f : files) {
          if (partial)
            evict(f, 512 << 10, 256 << 10);  // a hole inside the first 1 MiB
          else
            evict(f, 0, 0);
        }
        std::vector<std::string> bad;
        tblob_verify_summary sum = TBLOB_VERIFY_SUMMARY_INIT;
        EXPECT_EQ(verify_a(s, threads, flags, &bad, &sum), TBLOB_E_DIGEST_MISMATCH);
        const std::string where = "threads " + std::to_string(threads) + " flags " + std::to_string(flags) +
                                  " partial " + std::to_string(partial);
        EXPECT_EQ(sum.blobs, 13u) << where;
        EXPECT_EQ(sum.blobs_bad, 1u) << where;
        EXPECT_EQ(bad, std::vector<std::string>{layers[5].digest + " TBLOB_E_DIGEST_MISMATCH"}) << where;
        EXPECT_EQ(sum.bytes_hashed, cached.bytes_hashed) << where;
      }
    }
  }
  tblob_store_close(s);
}

TEST_F(Verify, IncrementalVerifierMatchesStoreVerify) {
  const std::string bytes = tw::pattern(1 << 20, 7);
  const std::string digest = "sha256:" + tw::sha256_hex(bytes);
  tblob_verifier *v = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(tblob_verifier_open(digest.data(), digest.size(), bytes.size(), &v, &d), TBLOB_OK);
  for (size_t at = 0; at < bytes.size(); at += 65537)
    ASSERT_EQ(tblob_verifier_update(v, bytes.data() + at, std::min<size_t>(65537, bytes.size() - at), &d), TBLOB_OK);
  char actual[72];
  EXPECT_EQ(tblob_verifier_final(v, actual, sizeof(actual), &d), TBLOB_OK) << d.message;
  EXPECT_EQ(std::string(actual), digest);
  tblob_verifier_close(v);
  // Too many bytes: fails as soon as they arrive.
  ASSERT_EQ(tblob_verifier_open(digest.data(), digest.size(), 10, &v, &d), TBLOB_OK);
  EXPECT_EQ(tblob_verifier_update(v, bytes.data(), 8, &d), TBLOB_OK);
  EXPECT_EQ(tblob_verifier_update(v, bytes.data(), 8, &d), TBLOB_E_OLLAMA_BLOB_SIZE);
  EXPECT_EQ(tblob_verifier_final(v, nullptr, 0, &d), TBLOB_E_OLLAMA_BLOB_SIZE);
  tblob_verifier_close(v);
  // Too few bytes, no bytes, wrong bytes, unknown size.
  ASSERT_EQ(tblob_verifier_open(digest.data(), digest.size(), bytes.size(), &v, &d), TBLOB_OK);
  EXPECT_EQ(tblob_verifier_update(v, bytes.data(), 100, &d), TBLOB_OK);
  EXPECT_EQ(tblob_verifier_final(v, nullptr, 0, &d), TBLOB_E_OLLAMA_BLOB_SIZE);
  tblob_verifier_close(v);
  ASSERT_EQ(tblob_verifier_open(digest.data(), digest.size(), bytes.size(), &v, &d), TBLOB_OK);
  EXPECT_EQ(tblob_verifier_final(v, actual, sizeof(actual), &d), TBLOB_E_OLLAMA_BLOB_EMPTY);
  EXPECT_EQ(std::string(actual), "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  tblob_verifier_close(v);
  ASSERT_EQ(tblob_verifier_open(digest.data(), digest.size(), UINT64_MAX, &v, &d), TBLOB_OK);
  EXPECT_EQ(tblob_verifier_update(v, "x", 1, &d), TBLOB_OK);
  EXPECT_EQ(tblob_verifier_final(v, nullptr, 0, &d), TBLOB_E_DIGEST_MISMATCH);
  tblob_verifier_close(v);
  EXPECT_EQ(tblob_verifier_open("sha256:AB", 9, 1, &v, &d), TBLOB_E_OLLAMA_DIGEST);
  EXPECT_EQ(v, nullptr);
  tblob_verifier_close(nullptr);
}

}  // namespace
