// FNV-1a 64 collisions with the real pair in tests/data/slm1/fnv1a_collision.txt: the writer
// refuses them, a directory holding two equal hashes never opens, a caller list holding both
// names never opens, and a name whose hash belongs to another listed name is refused.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "slm1_test_util.h"

using namespace slm1test;

namespace {

constexpr uint64_t kPairHash = 0xd380701f9852eb18ull;

struct Pair {
  std::string a, b;
};

Pair load_pair() {
  std::ifstream f(data_path("fnv1a_collision.txt"));
  Pair p;
  std::getline(f, p.a);
  std::getline(f, p.b);
  return p;
}

// A file with tensors `names` (f32 [2] each), sorted by hash.
Bytes file_with(const std::vector<std::string> &names) {
  Writer w;
  for (const std::string &n : names) EXPECT_EQ(w.add(n, {2}, {1, 2}, TBLOB_SLM1_F32), TBLOB_OK) << n;
  return w.emit();
}

TEST(Slm1Collision, ThePairCollides) {
  const Pair p = load_pair();
  ASSERT_EQ(p.a, "evoeblcqtitri");
  ASSERT_EQ(p.b, "fukm7eicq6d9h");
  EXPECT_EQ(tblob_fnv1a64(p.a.data(), p.a.size()), kPairHash);
  EXPECT_EQ(tblob_fnv1a64(p.b.data(), p.b.size()), kPairHash);
  EXPECT_EQ(ref_fnv1a64(p.a), kPairHash);
  EXPECT_EQ(ref_fnv1a64(p.b), kPairHash);
}

TEST(Slm1Collision, WriterRefusesBothNames) {
  const Pair p = load_pair();
  Writer w;
  ASSERT_EQ(w.add(p.a, {2}, {1, 2}, TBLOB_SLM1_F32), TBLOB_OK);
  ASSERT_EQ(w.add("other", {2}, {1, 2}, TBLOB_SLM1_F32), TBLOB_OK);
  ASSERT_EQ(w.add(p.b, {2}, {3, 4}, TBLOB_SLM1_F32), TBLOB_OK);
  tblob_status s;
  EXPECT_TRUE(w.emit(&s).empty());
  EXPECT_EQ(s, TBLOB_E_HASH_COLLISION);
  const std::string m = w.diag.message;
  EXPECT_NE(m.find(p.a), std::string::npos) << m;
  EXPECT_NE(m.find(p.b), std::string::npos) << m;
  EXPECT_NE(m.find("d380701f9852eb18"), std::string::npos) << m;
}

TEST(Slm1Collision, DuplicateHashDirectoryNeverOpens) {
  const Pair p = load_pair();
  Bytes f = file_with({p.a, "zzz.other"});
  ASSERT_FALSE(f.empty());
  // Give the other entry the hash of p.b, which equals p.a's: a directory with a real collision.
  for (uint32_t i = 0; i < 2; ++i)
    if (get_u64(f, entry_at(f, i)) != kPairHash) put_u64(f, entry_at(f, i), ref_fnv1a64(p.b));
  refresh_checksum(f);
  for (uint32_t flags : {0u, static_cast<uint32_t>(TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM)}) {
    Opened o;
    open_bytes(f, &o, flags);
    EXPECT_EQ(o.status, TBLOB_E_HASH_COLLISION) << o.message();
    EXPECT_NE(o.message().find("d380701f9852eb18"), std::string::npos) << o.message();
    EXPECT_NE(o.message().find("tensors 0 and 1"), std::string::npos) << o.message();
  }
}

TEST(Slm1Collision, CallerListWithBothNamesNeverOpens) {
  const Pair p = load_pair();
  const std::vector<std::string> names = {"norm.weight", p.a, "x", p.b};
  for (const Bytes &f : {file_with({p.a}), file_with({"unrelated"})}) {
    Opened o;
    open_bytes(f, &o, 0, &names);
    EXPECT_EQ(o.status, TBLOB_E_HASH_COLLISION) << o.message();
    EXPECT_NE(o.message().find(p.a), std::string::npos) << o.message();
    EXPECT_NE(o.message().find(p.b), std::string::npos) << o.message();
  }
  // The same name twice is one name.
  const std::vector<std::string> twice = {p.a, p.a};
  Opened o;
  open_bytes(file_with({p.a}), &o, 0, &twice);
  EXPECT_EQ(o.status, TBLOB_OK) << o.message();
}

TEST(Slm1Collision, LookupOfTheOtherNameIsRefused) {
  const Pair p = load_pair();
  const Bytes f = file_with({p.a, "norm.weight"});
  const std::vector<std::string> list = {p.a, "norm.weight"};
  Opened o;
  open_bytes(f, &o, 0, &list);
  ASSERT_EQ(o.status, TBLOB_OK) << o.message();
  uint64_t idx = 99;
  ASSERT_EQ(tblob_tensor_find(o.m, p.a.data(), p.a.size(), &idx, nullptr), TBLOB_OK);
  tblob_diag d = TBLOB_DIAG_INIT;
  uint64_t other = 77;
  EXPECT_EQ(tblob_tensor_find(o.m, p.b.data(), p.b.size(), &other, &d), TBLOB_E_HASH_COLLISION);
  EXPECT_EQ(other, 77u) << "no index is handed out";
  const std::string m = d.message;
  EXPECT_NE(m.find(p.a), std::string::npos) << m;
  EXPECT_NE(m.find(p.b), std::string::npos) << m;
  EXPECT_NE(m.find("never taken as a guess"), std::string::npos) << m;
  // The entry is still reachable by its hash, explicitly.
  uint64_t by_hash = 0;
  ASSERT_EQ(tblob_slm1_find_hash(o.m, kPairHash, &by_hash, nullptr), TBLOB_OK);
  EXPECT_EQ(by_hash, idx);
  tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
  ASSERT_EQ(tblob_tensor_at(o.m, idx, &t, nullptr), TBLOB_OK);
  EXPECT_EQ(std::string(t.name, t.name_len), p.a);
}

TEST(Slm1Collision, ListedNameWithoutEntryStillOwnsItsHash) {
  const Pair p = load_pair();
  const Bytes f = file_with({"norm.weight"});
  const std::vector<std::string> list = {p.b};
  Opened o;
  open_bytes(f, &o, 0, &list);
  ASSERT_EQ(o.status, TBLOB_OK);
  uint64_t idx;
  EXPECT_EQ(tblob_tensor_find(o.m, p.b.data(), p.b.size(), &idx, nullptr), TBLOB_E_NOT_FOUND);
  EXPECT_EQ(tblob_tensor_find(o.m, p.a.data(), p.a.size(), &idx, nullptr), TBLOB_E_HASH_COLLISION);
}

TEST(Slm1Collision, TheListDecidesWhoseEntryItIs) {
  // The file was written with p.a; the caller says it needs p.b. The file holds only the hash,
  // so the entry is p.b's for this handle, and p.a is the name refused.
  const Pair p = load_pair();
  const Bytes f = file_with({p.a});
  const std::vector<std::string> list = {p.b};
  Opened o;
  open_bytes(f, &o, 0, &list);
  ASSERT_EQ(o.status, TBLOB_OK);
  uint64_t idx;
  EXPECT_EQ(tblob_tensor_find(o.m, p.b.data(), p.b.size(), &idx, nullptr), TBLOB_OK);
  EXPECT_EQ(tblob_tensor_find(o.m, p.a.data(), p.a.size(), &idx, nullptr), TBLOB_E_HASH_COLLISION);
  // Without a list the hash is all there is: either name finds the entry (docs/slm1.md 9).
  Opened n;
  open_bytes(f, &n);
  ASSERT_EQ(n.status, TBLOB_OK);
  EXPECT_EQ(tblob_tensor_find(n.m, p.a.data(), p.a.size(), &idx, nullptr), TBLOB_OK);
  EXPECT_EQ(tblob_tensor_find(n.m, p.b.data(), p.b.size(), &idx, nullptr), TBLOB_OK);
}

TEST(Slm1Collision, LookupsAreThreadSafe) {
  std::vector<std::string> names;
  Writer w;
  for (int i = 0; i < 500; ++i) {
    names.push_back("blk." + std::to_string(i) + ".w");
    ASSERT_EQ(w.add(names.back(), {2}, {1, static_cast<float>(i)}, TBLOB_SLM1_F32), TBLOB_OK);
  }
  const Bytes f = w.emit();
  Opened o;
  open_bytes(f, &o, 0, &names);
  ASSERT_EQ(o.status, TBLOB_OK);
  std::vector<std::thread> threads;
  std::vector<int> bad(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 20; ++rep) {
        for (size_t i = 0; i < names.size(); ++i) {
          uint64_t idx;
          tblob_tensor_info ti = TBLOB_TENSOR_INFO_INIT;
          if (tblob_tensor_find(o.m, names[i].data(), names[i].size(), &idx, nullptr) != TBLOB_OK ||
              tblob_tensor_at(o.m, idx, &ti, nullptr) != TBLOB_OK ||
              std::string(ti.name, ti.name_len) != names[i])
            ++bad[t];
        }
      }
    });
  }
  for (auto &th : threads) th.join();
  for (int b : bad) EXPECT_EQ(b, 0);
}

}  // namespace
