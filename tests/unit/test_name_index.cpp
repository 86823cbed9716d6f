// The name index (lib/table/name_index.h) at its edges: slots keep a 16-bit fingerprint and
// the name's length, so equal fingerprints, equal lengths, prefixes, the empty name and names
// too long for the slot's length field must all still resolve by the bytes alone. Hashes are
// forced equal through build(hashes) and find_hashed(); the expected positions are the
// positions of the names in the list, which is the oracle.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/allocator.h"
#include "table/name_index.h"

namespace {

using tblob::NameIndex;

void name_at(const void *ctx, size_t i, const char **p, size_t *n) {
  const std::string &s = (*static_cast<const std::vector<std::string> *>(ctx))[i];
  *p = s.data();
  *n = s.size();
}

struct Indexed {
  std::vector<std::string> names;
  tblob::Allocator alloc;
  NameIndex idx;
  // hash_of(i) for every item: a constant forces every fingerprint and home slot to collide.
  template <class H>
  bool build(H hash_of) {
    std::vector<uint64_t> h;
    for (size_t i = 0; i < names.size(); ++i) h.push_back(hash_of(i));
    return idx.build(&alloc, names.size(), name_at, &names, h.data());
  }
};

TEST(NameIndex, EqualFingerprintsResolveByBytes) {
  Indexed t;
  // Same length (3), a prefix pair, the empty name, one byte: all with the same hash.
  t.names = {"abc", "abd", "ab", "", "a", "abcd", "xbc"};
  ASSERT_TRUE(t.build([](size_t) { return 0x1234'5678'9abc'def0ull; }));
  EXPECT_FALSE(t.idx.has_duplicate());
  for (size_t i = 0; i < t.names.size(); ++i)
    EXPECT_EQ(t.idx.find_hashed(t.names[i].data(), t.names[i].size(), 0x1234'5678'9abc'def0ull), i) << i;
  // Misses that share the fingerprint and the length of a present name.
  EXPECT_EQ(t.idx.find_hashed("abe", 3, 0x1234'5678'9abc'def0ull), SIZE_MAX);
  EXPECT_EQ(t.idx.find_hashed("b", 1, 0x1234'5678'9abc'def0ull), SIZE_MAX);
  EXPECT_EQ(t.idx.find_hashed("abcde", 5, 0x1234'5678'9abc'def0ull), SIZE_MAX);
  // The same names under a different hash land elsewhere: not found, never guessed.
  EXPECT_EQ(t.idx.find_hashed("abc", 3, 0x0ull), SIZE_MAX);
}

TEST(NameIndex, FingerprintEqualHomeSlotsDiffer) {
  Indexed t;
  // High 16 bits equal (the fingerprint), home slots differ.
  t.names = {"model.layers.0.mlp.up_proj.weight", "model.layers.0.mlp.up_proj.weigh_", "q"};
  ASSERT_TRUE(t.build([](size_t i) { return 0xbeef'0000'0000'0000ull | i; }));
  EXPECT_EQ(t.idx.find_hashed(t.names[0].data(), t.names[0].size(), 0xbeef'0000'0000'0000ull), 0u);
  EXPECT_EQ(t.idx.find_hashed(t.names[1].data(), t.names[1].size(), 0xbeef'0000'0000'0001ull), 1u);
  // Right fingerprint, right home slot, wrong bytes in the last 8-byte word and in the first.
  EXPECT_EQ(t.idx.find_hashed("model.layers.0.mlp.up_proj.weigh!", 33, 0xbeef'0000'0000'0000ull), SIZE_MAX);
  EXPECT_EQ(t.idx.find_hashed("Model.layers.0.mlp.up_proj.weight", 33, 0xbeef'0000'0000'0000ull), SIZE_MAX);
}

TEST(NameIndex, EmptyNameHitAndMiss) {
  Indexed with_empty, without;
  with_empty.names = {"x", "", "yy"};
  without.names = {"x", "yy"};
  ASSERT_TRUE(with_empty.build([&](size_t i) { return tblob::name_hash(with_empty.names[i].data(), with_empty.names[i].size()); }));
  ASSERT_TRUE(without.build([&](size_t i) { return tblob::name_hash(without.names[i].data(), without.names[i].size()); }));
  EXPECT_EQ(with_empty.idx.find("", 0), 1u);
  EXPECT_EQ(with_empty.idx.find(nullptr, 0), 1u);
  EXPECT_EQ(without.idx.find("", 0), SIZE_MAX);
  EXPECT_EQ(without.idx.find("yy", 2), 1u);
  EXPECT_EQ(without.idx.find("y", 1), SIZE_MAX);
}

TEST(NameIndex, LongNamesCompareTheirLength) {
  // 65,535 bytes and more do not fit the slot's length field: the row's length decides.
  Indexed t;
  const std::string base(70000, 'n');
  t.names = {base, base.substr(0, 65535), base.substr(0, 65536), base + "!"};
  t.names[3][100] = 'm';
  ASSERT_TRUE(t.build([](size_t) { return 42ull; }));
  EXPECT_FALSE(t.idx.has_duplicate());
  for (size_t i = 0; i < t.names.size(); ++i)
    EXPECT_EQ(t.idx.find_hashed(t.names[i].data(), t.names[i].size(), 42), i) << i;
  const std::string other(65537, 'n');
  EXPECT_EQ(t.idx.find_hashed(other.data(), other.size(), 42), SIZE_MAX);
  std::string flipped = base;
  flipped[69999] = 'o';
  EXPECT_EQ(t.idx.find_hashed(flipped.data(), flipped.size(), 42), SIZE_MAX);
}

TEST(NameIndex, DuplicatesUnderEqualFingerprints) {
  Indexed t;
  t.names = {"a.weight", "b.weight", "a.weight", "a.weigh"};
  ASSERT_TRUE(t.build([](size_t) { return 7ull << 48; }));
  ASSERT_TRUE(t.idx.has_duplicate());
  EXPECT_EQ(t.idx.dup_first(), 0u);
  EXPECT_EQ(t.idx.dup_second(), 2u);
  EXPECT_EQ(t.idx.find_hashed("a.weigh", 7, 7ull << 48), 3u);
}

TEST(NameIndex, ManyRealHashes) {
  Indexed t;
  for (size_t i = 0; i < 5000; ++i) t.names.push_back("model.layers." + std::to_string(i / 7) + ".w" + std::to_string(i % 7));
  ASSERT_TRUE(t.build([&](size_t i) { return tblob::name_hash(t.names[i].data(), t.names[i].size()); }));
  for (size_t i = 0; i < t.names.size(); ++i) {
    EXPECT_EQ(t.idx.find(t.names[i].data(), t.names[i].size()), i);
    const std::string miss = t.names[i] + "x";
    EXPECT_EQ(t.idx.find(miss.data(), miss.size()), SIZE_MAX);
  }
}

}  // namespace
