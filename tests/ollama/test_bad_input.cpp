// reliability.md section 6 (items 20-29, and 1-11 where they apply) for Ollama stores:
// every bad input gets a clear status, and nothing outside the store is touched.
#include <fcntl.h>

#include "test_util.h"

namespace {

using tw::T;

struct BadInput : tt::Fixture {
  std::string before;
  void SetUp() override {
    tt::Fixture::SetUp();
    before = outside_snapshot();
  }
  void TearDown() override {
    EXPECT_EQ(outside_snapshot(), before) << "something outside the store changed";
    tt::Fixture::TearDown();
  }
  tblob_status parse(const std::string &bytes, tblob_diag *d) {
    tblob_manifest *m = nullptr;
    tblob_status s = tblob_manifest_parse(bytes.data(), bytes.size(), nullptr, &m, d);
    tblob_manifest_close(m);
    return s;
  }
  std::string good_manifest(const std::string &digest_field) {
    return "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\","
           "\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\",\"digest\":\"sha256:" +
           std::string(64, 'c') + "\",\"size\":2},\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.tensor\","
           "\"digest\":" + digest_field + ",\"size\":16,\"name\":\"w\"}]}\n";
  }
};

TEST_F(BadInput, DigestGrammarAtParseTime) {
  const std::string hex(64, 'a');
  const char *bad[] = {
      "\"\"",                                                       // empty
      "\"sha256:\"",                                                // no hex
      "\"sha256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"",  // uppercase
      "\"sha256-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"",  // file form in JSON
      "\"sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"",   // 63
      "\"sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"", // 65
      "\"sha256:../../../../../../../../../../../../../../../../../outside/se\"",  // traversal, length 71
      "\"../../outside/secret\"",
      "\"sha256:/etc/passwd\"",
      "\"sha256:%2e%2e%2faaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"",   // percent-encoding
      "\"sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\\u0000\"",  // NUL
      "\"sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa \"",  // whitespace
      "\"sha256:\xef\xbc\x90" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"",  // fullwidth 0
      "\"sha512:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"",
      "\"SHA256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"",
      "42",
  };
  for (const char *b : bad) {
    tblob_diag d = TBLOB_DIAG_INIT;
    const tblob_status s = parse(good_manifest(b), &d);
    if (std::string(b) == "42")
      EXPECT_EQ(s, TBLOB_E_OLLAMA_MANIFEST_SCHEMA) << b;
    else
      EXPECT_EQ(s, TBLOB_E_OLLAMA_DIGEST) << b << " -> " << d.message;
  }
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(parse(good_manifest("\"sha256:" + hex + "\""), &d), TBLOB_OK) << d.message;
  // The one function, through the API.
  EXPECT_EQ(tblob_ollama_digest_check(("sha256:" + hex).data(), 71, 0, nullptr), TBLOB_OK);
  EXPECT_EQ(tblob_ollama_digest_check(("sha256-" + hex).data(), 71, 1, nullptr), TBLOB_OK);
  EXPECT_EQ(tblob_ollama_digest_check(("sha256-" + hex).data(), 71, 0, nullptr), TBLOB_E_OLLAMA_DIGEST);
  EXPECT_EQ(tblob_ollama_digest_check("", 0, 0, nullptr), TBLOB_E_OLLAMA_DIGEST);
}

TEST_F(BadInput, TraversalDigestInAStoreTouchesNothingOutside) {
  tw::Store st(root);
  // A manifest whose layer digest tries to reach ../outside/blobs/sha256-aaaa...
  st.manifest_raw("evil", good_manifest("\"sha256:../../outside/blobs/sha256-" + std::string(29, 'a') + "\""));
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(open_model("evil", &m, &d), TBLOB_E_OLLAMA_DIGEST) << d.message;
  EXPECT_EQ(verify("evil", &d), TBLOB_E_OLLAMA_DIGEST);
  tblob_store *s = open_store();
  tblob_gc_options o = TBLOB_GC_OPTIONS_INIT;
  o.flags = TBLOB_GC_REMOVE;
  EXPECT_EQ(tblob_store_gc(s, &o, nullptr, &d), TBLOB_E_OLLAMA_CORRUPT_STORE);
  tblob_store_close(s);
}

TEST_F(BadInput, ManifestFramingStatuses) {
  const std::string good = good_manifest("\"sha256:" + std::string(64, 'a') + "\"");
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(parse("", &d), TBLOB_E_OLLAMA_MANIFEST_ZERO_LENGTH);
  EXPECT_EQ(parse("   \n\t ", &d), TBLOB_E_OLLAMA_MANIFEST_EMPTY);
  EXPECT_EQ(parse(std::string(512, '\0'), &d), TBLOB_E_OLLAMA_MANIFEST_EMPTY);
  EXPECT_EQ(parse(good.substr(0, good.size() / 2), &d), TBLOB_E_OLLAMA_MANIFEST_TRUNCATED);  // #2763
  EXPECT_EQ(parse(good.substr(0, 1), &d), TBLOB_E_OLLAMA_MANIFEST_TRUNCATED);
  EXPECT_EQ(parse(good.substr(0, good.size() / 2) + std::string(100, '\0'), &d), TBLOB_E_OLLAMA_MANIFEST_TRUNCATED);
  // Every cut of the document is "truncated", whatever token the cut lands in.
  for (size_t k = 1; k + 1 < good.size(); ++k)
    ASSERT_EQ(parse(good.substr(0, k), &d), TBLOB_E_OLLAMA_MANIFEST_TRUNCATED) << k << ": " << good.substr(0, k);
  EXPECT_EQ(parse(good + good, &d), TBLOB_E_OLLAMA_MANIFEST_DOUBLED);  // #170
  EXPECT_NE(std::string(d.message).find("second JSON document"), std::string::npos) << d.message;
  EXPECT_EQ(parse(good + "x", &d), TBLOB_E_OLLAMA_MANIFEST_DOUBLED);
  EXPECT_EQ(parse("{\"schemaVersion\":2,}", &d), TBLOB_E_OLLAMA_MANIFEST_JSON);
  EXPECT_EQ(parse("{\"schemaVersion\":2.}", &d), TBLOB_E_OLLAMA_MANIFEST_JSON);  // malformed, not out of range
  EXPECT_EQ(parse("[1,2]", &d), TBLOB_E_OLLAMA_MANIFEST_SCHEMA);
  EXPECT_EQ(parse("{}", &d), TBLOB_E_OLLAMA_MANIFEST_SCHEMA);
  std::string v1 = good;
  v1.replace(v1.find("\"schemaVersion\":2"), 17, "\"schemaVersion\":1");
  EXPECT_EQ(parse(v1, &d), TBLOB_E_OLLAMA_MANIFEST_VERSION);
  std::string mt = good;
  mt.replace(mt.find("distribution.manifest.v2+json"), 29, "distribution.manifest.list+j");
  EXPECT_EQ(parse(mt, &d), TBLOB_E_OLLAMA_MANIFEST_VERSION);
  std::string neg = good;
  neg.replace(neg.find("\"size\":16"), 9, "\"size\":-16");
  EXPECT_EQ(parse(neg, &d), TBLOB_E_OLLAMA_MANIFEST_SCHEMA);
  std::string flt = good;
  flt.replace(flt.find("\"size\":16"), 9, "\"size\":1e1");
  EXPECT_EQ(parse(flt, &d), TBLOB_E_OLLAMA_MANIFEST_SCHEMA);
  std::string huge = good;
  huge.replace(huge.find("\"size\":16"), 9, "\"size\":18446744073709551616");  // 2^64
  EXPECT_EQ(parse(huge, &d), TBLOB_E_OLLAMA_MANIFEST_SCHEMA) << d.message;
  EXPECT_EQ(parse(good + std::string(7, '\0'), &d), TBLOB_E_OLLAMA_MANIFEST_DOUBLED);
  EXPECT_NE(std::string(d.message).find("7 NUL bytes"), std::string::npos) << d.message;
  std::string dupkey = good;
  dupkey.replace(dupkey.find("\"name\":\"w\""), 10, "\"name\":\"w\",\"name\":\"v\"");
  EXPECT_EQ(parse(dupkey, &d), TBLOB_E_OLLAMA_MANIFEST_SCHEMA);
  // Above the cap.
  tblob_store_options o = TBLOB_STORE_OPTIONS_INIT;
  o.max_manifest_bytes = 64;
  tblob_manifest *m = nullptr;
  EXPECT_EQ(tblob_manifest_parse(good.data(), good.size(), &o, &m, &d), TBLOB_E_OLLAMA_LIMIT_MANIFEST);
}

TEST_F(BadInput, ManifestFilesInTheStore) {
  tw::Store st(root);
  st.manifest_raw("zero", "");
  st.manifest_raw("trunc", "{\"schemaVersion\":2,\"layers\":[");
  tw::mkdirs(root + "/manifests/registry.ollama.ai/library/dir/latest");  // a directory, not a file
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(open_model("zero", &m, &d), TBLOB_E_OLLAMA_MANIFEST_ZERO_LENGTH);
  EXPECT_NE(std::string(d.message).find("registry.ollama.ai/library/zero:latest"), std::string::npos) << d.message;
  EXPECT_EQ(open_model("trunc", &m, &d), TBLOB_E_OLLAMA_MANIFEST_TRUNCATED);
  EXPECT_EQ(open_model("dir", &m, &d), TBLOB_E_OLLAMA_NOT_A_FILE);
  EXPECT_EQ(open_model("absent", &m, &d), TBLOB_E_OLLAMA_MODEL_NOT_FOUND);
  // Listing reports each bad manifest with its status instead of failing.
  tblob_store *s = open_store();
  std::vector<std::pair<std::string, tblob_status>> seen;
  ASSERT_EQ(tblob_store_list(s,
                             [](void *u, const tblob_store_entry *e) {
                               static_cast<std::vector<std::pair<std::string, tblob_status>> *>(u)->emplace_back(
                                   std::string(e->short_name, e->short_name_len), e->status);
                               return 0;
                             },
                             &seen, &d),
            TBLOB_OK);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0], std::make_pair(std::string("dir:latest"), (tblob_status)TBLOB_E_OLLAMA_NOT_A_FILE));
  EXPECT_EQ(seen[1], std::make_pair(std::string("trunc:latest"), (tblob_status)TBLOB_E_OLLAMA_MANIFEST_TRUNCATED));
  EXPECT_EQ(seen[2], std::make_pair(std::string("zero:latest"), (tblob_status)TBLOB_E_OLLAMA_MANIFEST_ZERO_LENGTH));
  tblob_store_close(s);
}

// A manifest past 4 GiB with the manifest limit lifted: a 32-bit build refuses it by size
// (its length does not fit size_t) instead of reading the low 32 bits' worth; a 64-bit build
// asks the allocator for the whole length plus the terminating byte. The file is sparse.
TEST_F(BadInput, ManifestBeyond4GiBWithTheLimitLifted) {
  tw::Store st(root);
  st.manifest_raw("huge", "{");
  const uint64_t size = (uint64_t{1} << 32) + 2;
  const std::string path = root + "/manifests/registry.ollama.ai/library/huge/latest";
  {
    const int fd = ::open(path.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(size)), 0);
    ::close(fd);
  }
  struct Counting {
    uint64_t largest = 0;
    static void *alloc(void *o, size_t n) {
      auto *self = static_cast<Counting *>(o);
      if (n > self->largest) self->largest = n;
      return n > (size_t{1} << 20) ? nullptr : std::malloc(n);  // nothing file-sized is granted
    }
    static void free_(void *, void *p, size_t) { std::free(p); }
  } counter;
  tblob_allocator al = TBLOB_ALLOCATOR_INIT;
  al.alloc = &Counting::alloc;
  al.free = &Counting::free_;
  al.opaque = &counter;
  tblob_store_options so = TBLOB_STORE_OPTIONS_INIT;
  so.max_manifest_bytes = UINT64_MAX;
  so.allocator = &al;
  tblob_store *s = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(tblob_store_open(root.c_str(), &so, &s, &d), TBLOB_OK) << d.message;
  tblob_store_open_options o = TBLOB_STORE_OPEN_OPTIONS_INIT;
  tblob_model *m = nullptr;
  const tblob_status r = tblob_store_open_model(s, "huge", 4, &o, &m, &d);
  tblob_store_close(s);
  EXPECT_EQ(m, nullptr);
  if (sizeof(size_t) < 8) {
    EXPECT_EQ(r, TBLOB_E_UNSUPPORTED) << d.message;
    EXPECT_NE(std::strstr(d.message, std::to_string(size).c_str()), nullptr) << d.message;
    EXPECT_LT(counter.largest, uint64_t{1} << 20);
  } else {
    EXPECT_EQ(r, TBLOB_E_OUT_OF_MEMORY) << d.message;
    EXPECT_EQ(counter.largest, size + 1);
  }
  tblob_model_close(m);
  ASSERT_EQ(::unlink(path.c_str()), 0);
}

TEST_F(BadInput, BlobSizeMissingPartialDirectoryEmpty) {
  tw::Store st(root);
  const std::string blob = tw::go_blob({T{"w", "F32", {4}, tw::pattern(16, 1)}});
  tw::Layer l = st.blob(blob, "w");
  tw::Layer wrong = l;
  wrong.size = l.size + 1;
  st.manifest("size", {wrong});
  tw::Layer missing = l;
  missing.digest = "sha256:" + std::string(64, 'b');
  st.manifest("missing", {missing});
  tw::Layer partial = l;
  partial.digest = "sha256:" + std::string(64, 'd');
  tw::write_file(root + "/blobs/sha256-" + std::string(64, 'd') + "-partial", blob.substr(0, 10));
  st.manifest("partial", {partial});
  tw::Layer dir = l;
  dir.digest = "sha256:" + std::string(64, 'e');
  tw::mkdirs(root + "/blobs/sha256-" + std::string(64, 'e'));
  st.manifest("dirblob", {dir});
  tw::Layer empty = l;
  empty.digest = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
  tw::write_file(root + "/blobs/sha256-e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "");
  st.manifest("empty", {empty});
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(open_model("size", &m, &d), TBLOB_E_OLLAMA_BLOB_SIZE);
  EXPECT_EQ(verify("size", &d), TBLOB_E_OLLAMA_BLOB_SIZE);
  EXPECT_EQ(open_model("missing", &m, &d), TBLOB_E_OLLAMA_BLOB_MISSING);
  EXPECT_NE(std::string(d.message).find("sha256-bbbb"), std::string::npos) << d.message;
  EXPECT_EQ(verify("missing", &d), TBLOB_E_OLLAMA_BLOB_MISSING);
  EXPECT_EQ(open_model("partial", &m, &d), TBLOB_E_OLLAMA_BLOB_PARTIAL);
  EXPECT_EQ(verify("partial", &d), TBLOB_E_OLLAMA_BLOB_PARTIAL);
  EXPECT_EQ(open_model("dirblob", &m, &d), TBLOB_E_OLLAMA_NOT_A_FILE);
  EXPECT_EQ(verify("dirblob", &d), TBLOB_E_OLLAMA_NOT_A_FILE);
  EXPECT_EQ(open_model("empty", &m, &d), TBLOB_E_OLLAMA_BLOB_EMPTY);
  EXPECT_EQ(verify("empty", &d), TBLOB_E_OLLAMA_BLOB_EMPTY);
  EXPECT_NE(std::string(d.message).find("e3b0c442"), std::string::npos) << d.message;
}

TEST_F(BadInput, ConflictingSizesOrMediaTypesForOneDigest) {
  tw::Store st(root);
  tw::Layer a = st.blob(tw::go_blob({T{"w", "F32", {1}, tw::pattern(4, 1)}}), "w");
  tw::Layer b = a;
  b.size += 8;
  st.manifest("conflict", {a, b});
  tw::Layer c = a;
  c.media_type = "application/vnd.ollama.image.json";
  st.manifest("conflict2", {a, c});
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(open_model("conflict", &m, &d), TBLOB_E_OLLAMA_LAYER_CONFLICT);
  EXPECT_EQ(open_model("conflict2", &m, &d), TBLOB_E_OLLAMA_LAYER_CONFLICT);
}

TEST_F(BadInput, ContentHashMismatch) {
  tw::Store st(root);
  const std::string blob = tw::go_blob({T{"w", "F32", {4}, tw::pattern(16, 1)}});
  tw::Layer l = st.blob(blob, "w");
  std::string corrupt = blob;
  corrupt[corrupt.size() - 1] ^= 1;
  tw::write_file(root + "/blobs/sha256-" + l.digest.substr(7), corrupt);
  st.manifest("bad", {l});
  tblob_diag d = TBLOB_DIAG_INIT;
  tblob_verify_summary sum = TBLOB_VERIFY_SUMMARY_INIT;
  EXPECT_EQ(verify("bad", &d, &sum), TBLOB_E_DIGEST_MISMATCH);
  EXPECT_EQ(sum.blobs, 2u);  // config + layer
  EXPECT_EQ(sum.blobs_bad, 1u);
  EXPECT_NE(std::string(d.message).find(l.digest.substr(7, 12)), std::string::npos) << d.message;
}

TEST_F(BadInput, SymlinksInsideTheStoreAreRefused) {
  tw::Store st(root);
  const std::string blob = tw::go_blob({T{"w", "F32", {4}, tw::pattern(16, 1)}});
  tw::Layer l = st.blob(blob, "w");
  // A blob that is a symlink to a file outside.
  tw::write_file(outside + "/blob", blob);
  const std::string hex = tw::sha256_hex(blob + "x");
  tw::Layer ln = l;
  ln.digest = "sha256:" + hex;
  ASSERT_EQ(::symlink((outside + "/blob").c_str(), (root + "/blobs/sha256-" + hex).c_str()), 0);
  st.manifest("linkblob", {ln});
  // A manifest namespace directory that is a symlink to outside.
  tw::mkdirs(outside + "/ns/m");
  tw::write_file(outside + "/ns/m/latest", tw::Store::manifest_json(st.config(), {l}));
  tw::mkdirs(root + "/manifests/registry.ollama.ai");
  ASSERT_EQ(::symlink((outside + "/ns").c_str(), (root + "/manifests/registry.ollama.ai/linked").c_str()), 0);
  before = outside_snapshot();
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(open_model("linkblob", &m, &d), TBLOB_E_OLLAMA_PATH) << d.message;
  EXPECT_EQ(verify("linkblob", &d), TBLOB_E_OLLAMA_PATH);
  EXPECT_EQ(open_model("linked/m", &m, &d), TBLOB_E_OLLAMA_PATH) << d.message;
  // gc never follows or removes a symlink.
  tblob_store *s = open_store();
  tblob_gc_options o = TBLOB_GC_OPTIONS_INIT;
  o.flags = TBLOB_GC_REMOVE;
  EXPECT_EQ(tblob_store_gc(s, &o, nullptr, &d), TBLOB_E_OLLAMA_CORRUPT_STORE);  // linked manifest dir
  tblob_store_close(s);
  struct stat sb;
  EXPECT_EQ(::lstat((root + "/blobs/sha256-" + hex).c_str(), &sb), 0);
  // A store whose blobs/ is a symlink is refused at open.
  const std::string root2 = dir + "/store2";
  tw::mkdirs(root2 + "/manifests");
  ASSERT_EQ(::symlink((outside + "/blobs").c_str(), (root2 + "/blobs").c_str()), 0);
  tblob_store *s2 = nullptr;
  EXPECT_EQ(tblob_store_open(root2.c_str(), nullptr, &s2, &d), TBLOB_E_OLLAMA_PATH);
  EXPECT_EQ(s2, nullptr);
}

TEST_F(BadInput, ModelNameGrammar) {
  tw::Store st(root);
  const char *bad[] = {"", "..", "../x", "a/../b", "/abs", "a\\b", "a/b/c/d", ".hidden", "-x", "m:", ":t",
                       "m:../../x", "ns.dot/m", "a b", "m:t:u/x", "m\n", "h/n/m:t@sha256:aa"};
  for (const char *n : bad) {
    char buf[600];
    size_t len;
    tblob_diag d = TBLOB_DIAG_INIT;
    EXPECT_EQ(tblob_ollama_name_canonical(n, std::strlen(n), buf, sizeof(buf), &len, &d), TBLOB_E_OLLAMA_NAME) << n;
    tblob_model *m = nullptr;
    EXPECT_EQ(open_model(n, &m, &d), TBLOB_E_OLLAMA_NAME) << n;
  }
  const std::string long_model(81, 'a'), long_host(351, 'h');
  char buf[1024];
  size_t len;
  EXPECT_EQ(tblob_ollama_name_canonical(long_model.data(), long_model.size(), buf, sizeof(buf), &len, nullptr),
            TBLOB_E_OLLAMA_NAME);
  const std::string ok80(80, 'a');
  EXPECT_EQ(tblob_ollama_name_canonical(ok80.data(), ok80.size(), buf, sizeof(buf), &len, nullptr), TBLOB_OK);
  const std::string h = long_host + "/n/m";
  EXPECT_EQ(tblob_ollama_name_canonical(h.data(), h.size(), buf, sizeof(buf), &len, nullptr), TBLOB_E_OLLAMA_NAME);
  struct {
    const char *in, *out;
  } good[] = {{"llama3", "registry.ollama.ai/library/llama3:latest"},
              {"llama3:8b", "registry.ollama.ai/library/llama3:8b"},
              {"me/tiny:v1.0", "registry.ollama.ai/me/tiny:v1.0"},
              {"localhost:5000/me/tiny", "localhost:5000/me/tiny:latest"},
              {"hf.co/org_x/model-a.b:Q4_K", "hf.co/org_x/model-a.b:Q4_K"}};
  for (const auto &g : good) {
    ASSERT_EQ(tblob_ollama_name_canonical(g.in, std::strlen(g.in), buf, sizeof(buf), &len, nullptr), TBLOB_OK) << g.in;
    EXPECT_EQ(std::string(buf, len), g.out);
  }
  EXPECT_EQ(tblob_ollama_name_canonical("llama3", 6, buf, 10, &len, nullptr), TBLOB_E_BUFFER_TOO_SMALL);
  EXPECT_EQ(len, 40u);
}

TEST_F(BadInput, ConfigLayerThatIsNotJson) {
  tw::Store st(root);
  std::vector<tw::Layer> ls = {st.blob(tw::go_blob({T{"w", "F32", {1}, tw::pattern(4, 1)}}), "w"),
                               st.blob("{\"a\":", "config.json", "application/vnd.ollama.image.json")};
  st.manifest("cfg", ls);
  tblob_store *s = open_store();
  tblob_manifest *man = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(tblob_store_manifest_open(s, "cfg", 3, &man, &d), TBLOB_OK);
  char buf[64];
  size_t len;
  EXPECT_EQ(tblob_store_read_layer(s, man, 1, buf, sizeof(buf), &len, &d), TBLOB_E_OLLAMA_CONFIG_JSON);
  tblob_manifest_close(man);
  tblob_store_close(s);
  tblob_store_options o = TBLOB_STORE_OPTIONS_INIT;
  o.max_config_bytes = 3;
  ASSERT_EQ(tblob_store_open(root.c_str(), &o, &s, &d), TBLOB_OK);
  ASSERT_EQ(tblob_store_manifest_open(s, "cfg", 3, &man, &d), TBLOB_OK);
  EXPECT_EQ(tblob_store_read_layer(s, man, 1, buf, sizeof(buf), &len, &d), TBLOB_E_OLLAMA_LIMIT_CONFIG);
  tblob_manifest_close(man);
  tblob_store_close(s);
}

TEST_F(BadInput, NotAStore) {
  tblob_store *s = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(tblob_store_open(outside.c_str(), nullptr, &s, &d), TBLOB_E_OLLAMA_NOT_A_STORE);
  EXPECT_EQ(tblob_store_open((dir + "/nope").c_str(), nullptr, &s, &d), TBLOB_E_NOT_FOUND);
  EXPECT_EQ(tblob_store_open((outside + "/secret").c_str(), nullptr, &s, &d), TBLOB_E_OLLAMA_NOT_A_STORE);
}

}  // namespace
