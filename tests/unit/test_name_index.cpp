// The name index (lib/table/name_index.h) at its edges: the table keeps a one-byte tag of the
// hash per entry and the slots the name's length and bytes (or address), so equal tags, equal
// lengths, prefixes, the empty name, names at the inline limit and long names must all still
// resolve by the bytes alone, as must runs that cross a 16-tag group or wrap past the table's
// last entry. Hashes are forced through build(hashes), fill()/build_filled() and
// find_hashed(); the expected positions are the positions of the names in the list, which is
// the oracle. The last test opens safetensors headers through the C API (the scan fills the
// slots) with rows in and out of offset order.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/allocator.h"
#include "table/name_index.h"
#include "tensorblob.h"

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
  // The same through the slots filled ahead (as the safetensors scan does), starting from a
  // reservation of `reserve` slots so that fill() also grows them.
  template <class H>
  bool build_filled(H hash_of, size_t reserve) {
    std::vector<uint64_t> h;
    if (!idx.reserve_fill(&alloc, reserve)) return false;
    for (size_t i = 0; i < names.size(); ++i) {
      h.push_back(hash_of(i));
      if (!idx.fill(&alloc, names[i].data(), names[i].size())) return false;
    }
    return idx.filled() == names.size() && idx.build_filled(&alloc, name_at, &names, h.data());
  }
};

// Every name at its own position, and each name with one byte changed (same length, same
// hash) nowhere.
void expect_all_found(const Indexed &t, uint64_t (*hash_of)(size_t)) {
  for (size_t i = 0; i < t.names.size(); ++i) {
    EXPECT_EQ(t.idx.find_hashed(t.names[i].data(), t.names[i].size(), hash_of(i)), i) << i;
    if (t.names[i].empty()) continue;
    std::string other = t.names[i];
    other[other.size() - 1] = '#';
    EXPECT_EQ(t.idx.find_hashed(other.data(), other.size(), hash_of(i)), SIZE_MAX) << i;
  }
}

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
  // Top byte equal (the tag), home slots differ.
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
  ASSERT_TRUE(with_empty.build([&](size_t i) { return with_empty.idx.hash(with_empty.names[i].data(), with_empty.names[i].size()); }));
  ASSERT_TRUE(without.build([&](size_t i) { return without.idx.hash(without.names[i].data(), without.names[i].size()); }));
  EXPECT_EQ(with_empty.idx.find("", 0), 1u);
  EXPECT_EQ(with_empty.idx.find(nullptr, 0), 1u);
  EXPECT_EQ(without.idx.find("", 0), SIZE_MAX);
  EXPECT_EQ(without.idx.find("yy", 2), 1u);
  EXPECT_EQ(without.idx.find("y", 1), SIZE_MAX);
}

TEST(NameIndex, LongNamesCompareTheirLength) {
  // Names far past the inline limit, kept by address: the length and then every byte decide.
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
  ASSERT_TRUE(t.build([&](size_t i) { return t.idx.hash(t.names[i].data(), t.names[i].size()); }));
  for (size_t i = 0; i < t.names.size(); ++i) {
    EXPECT_EQ(t.idx.find(t.names[i].data(), t.names[i].size()), i);
    const std::string miss = t.names[i] + "x";
    EXPECT_EQ(t.idx.find(miss.data(), miss.size()), SIZE_MAX);
  }
}

TEST(NameIndex, InlineLimitAndLongNames) {
  // Lengths 0-70 around the 60 bytes a slot holds inline (61 and more are kept by address),
  // every name a prefix of the longer ones, all under one hash: only length and bytes decide.
  for (int filled = 0; filled < 2; ++filled) {
    Indexed t;
    for (size_t k = 0; k <= 70; ++k) t.names.push_back(std::string(k, 'n'));
    auto same = [](size_t) -> uint64_t { return 0x5555'0000'0000'0007ull; };
    ASSERT_TRUE(filled ? t.build_filled(same, 4) : t.build(same));
    EXPECT_FALSE(t.idx.has_duplicate());
    expect_all_found(t, same);
    const std::string longer(71, 'n');
    EXPECT_EQ(t.idx.find_hashed(longer.data(), longer.size(), same(0)), SIZE_MAX);
    for (size_t k : {59u, 60u, 61u, 62u}) {
      std::string first = t.names[k];
      first[0] = 'm';  // the first byte, the 16-byte compare's first load
      EXPECT_EQ(t.idx.find_hashed(first.data(), first.size(), same(0)), SIZE_MAX) << k;
    }
  }
}

TEST(NameIndex, EveryInlineByteIsKept) {
  // Names of every inline length with a different byte at each position, filled and built:
  // each is found, and a copy differing in any one byte is not (a slot that lost or misplaced
  // a byte of the name compares unequal to the name, or equal to the changed copy).
  Indexed t;
  for (size_t k = 0; k <= NameIndex::kInline; ++k) {
    std::string n;
    for (size_t i = 0; i < k; ++i) n.push_back(static_cast<char>('!' + (i * 7 + k) % 90));
    t.names.push_back(n);
  }
  auto same = [](size_t) -> uint64_t { return 0x1234'0000'0000'0009ull; };
  ASSERT_TRUE(t.build_filled(same, 8));
  EXPECT_FALSE(t.idx.has_duplicate());
  for (size_t k = 0; k < t.names.size(); ++k) {
    EXPECT_EQ(t.idx.find_hashed(t.names[k].data(), t.names[k].size(), same(0)), k) << k;
    for (size_t i = 0; i < k; ++i) {
      std::string other = t.names[k];
      other[i] = '~';
      EXPECT_EQ(t.idx.find_hashed(other.data(), other.size(), same(0)), SIZE_MAX) << k << " at " << i;
    }
  }
}

TEST(NameIndex, RunsCrossGroupsAndWrapAround) {
  // 40 names with one hash whose home is the table's last entry: the index has 128 entries
  // (the smallest power of two of at least 2 x 40), so the run starts at entry 127, wraps to
  // entry 0 and fills entries 0-38, crossing two 16-tag groups; a miss under that hash reads
  // the whole run. With the tag byte 0, the tag is 1 (0 marks empty entries).
  for (int filled = 0; filled < 2; ++filled) {
    Indexed t;
    for (size_t i = 0; i < 40; ++i) t.names.push_back("layer." + std::to_string(i) + ".weight");
    auto last = [](size_t) -> uint64_t { return 0x00ff'ffff'ffff'ffffull; };
    ASSERT_TRUE(filled ? t.build_filled(last, 40) : t.build(last));
    EXPECT_FALSE(t.idx.has_duplicate());
    expect_all_found(t, last);
    EXPECT_EQ(t.idx.find_hashed("layer.40.weight", 15, last(0)), SIZE_MAX);
    // Item k sits at entry (127 + k) mod 128, so item 7 at entry 6. Other hashes with tag 1
    // (top byte 1, or 0 mapped to 1) whose home is inside the run: from entry 5 the probe meets
    // entry 6 and the name there; from entry 10 it reads on to the run's end (entry 38), finds
    // entry 39 empty and misses; a tag of 2 matches nothing on the way.
    EXPECT_EQ(t.idx.find_hashed("layer.7.weight", 14, 0x0100'0000'0000'0005ull), 7u);
    EXPECT_EQ(t.idx.find_hashed("layer.7.weight", 14, 0x0000'0000'0000'0005ull), 7u);
    EXPECT_EQ(t.idx.find_hashed("layer.7.weight", 14, 0x0100'0000'0000'000aull), SIZE_MAX);
    EXPECT_EQ(t.idx.find_hashed("layer.7.weight", 14, 0x0200'0000'0000'0005ull), SIZE_MAX);
    EXPECT_EQ(t.idx.find_hashed("layer.38.weight", 15, 0x0100'0000'0000'000aull), 38u);
  }
}

TEST(NameIndex, DuplicateFoundAcrossGroups) {
  // Item 35 repeats item 2 under one hash: 33 entries of the run lie between them, so the
  // insert of 35 compares names in three 16-tag groups before it meets item 2's. Both build
  // paths report the pair as (2, 35) and keep finding item 2 for the name.
  for (int filled = 0; filled < 2; ++filled) {
    Indexed t;
    for (size_t i = 0; i < 40; ++i) t.names.push_back("blk." + std::to_string(i) + ".attn_q.weight");
    t.names[35] = t.names[2];
    auto same = [](size_t) -> uint64_t { return 0x9a00'0000'0000'0030ull; };
    ASSERT_TRUE(filled ? t.build_filled(same, 1) : t.build(same));
    ASSERT_TRUE(t.idx.has_duplicate());
    EXPECT_EQ(t.idx.dup_first(), 2u);
    EXPECT_EQ(t.idx.dup_second(), 35u);
    EXPECT_EQ(t.idx.find_hashed(t.names[2].data(), t.names[2].size(), same(0)), 2u);
    EXPECT_EQ(t.idx.find_hashed(t.names[39].data(), t.names[39].size(), same(0)), 39u);
  }
}

TEST(NameIndex, FilledAndBuiltAgree) {
  // Real hashes, names of 1-90 bytes (inline and by address), slots grown from a reservation
  // of 3 by fill(): every name at its position either way, and a later build() starts over.
  Indexed t;
  for (size_t i = 0; i < 3000; ++i)
    t.names.push_back(std::string(i % 90, static_cast<char>('a' + i % 26)) + std::to_string(i));
  auto real = [&t](size_t i) { return t.idx.hash(t.names[i].data(), t.names[i].size()); };
  ASSERT_TRUE(t.build_filled(real, 3));
  EXPECT_FALSE(t.idx.has_duplicate());
  for (size_t i = 0; i < t.names.size(); ++i) EXPECT_EQ(t.idx.find(t.names[i].data(), t.names[i].size()), i) << i;
  const std::vector<std::string> first_names = t.names;
  t.names.resize(10);
  ASSERT_TRUE(t.build(real));
  for (size_t i = 0; i < 10; ++i) EXPECT_EQ(t.idx.find(t.names[i].data(), t.names[i].size()), i);
  EXPECT_EQ(t.idx.find(first_names[10].data(), first_names[10].size()), SIZE_MAX);
  EXPECT_EQ(t.idx.filled(), 10u);
}

// Names chosen against known keys so that their hashes' low bits fall in [0, 64) of an
// 8,192-entry table (the table of 4,000 names): under those keys they form one probe run of all
// 4,000 (each insert walked the run so far: time in n squared). Under the process's keys the
// same names spread; at a load of 0.49 a run of 200 has a chance below 1e-12.
TEST(NameIndex, NamesChosenAgainstOtherKeysDoNotPileUp) {
  constexpr tblob::NameHashKeys known = {1, 2, 3, 4};
  Indexed chosen;
  for (uint64_t i = 0; chosen.names.size() < 4000; ++i) {
    const std::string nm = "model.layers." + std::to_string(i) + ".mlp.down_proj.weight";
    if ((tblob::name_hash(known, nm.data(), nm.size()) & 8191) < 64) chosen.names.push_back(nm);
  }
  chosen.idx.set_keys(known);
  ASSERT_TRUE(chosen.build([&](size_t i) { return chosen.idx.hash(chosen.names[i].data(), chosen.names[i].size()); }));
  EXPECT_GE(chosen.idx.longest_run(), 4000u);

  Indexed t;
  t.names = chosen.names;
  ASSERT_TRUE(t.build([&](size_t i) { return t.idx.hash(t.names[i].data(), t.names[i].size()); }));
  EXPECT_LT(t.idx.longest_run(), 200u);
  for (size_t i = 0; i < t.names.size(); ++i) EXPECT_EQ(t.idx.find(t.names[i].data(), t.names[i].size()), i) << i;
  // build() without hashes takes them under the index's keys too.
  Indexed plain;
  plain.names = chosen.names;
  ASSERT_TRUE(plain.idx.build(&plain.alloc, plain.names.size(), name_at, &plain.names));
  EXPECT_LT(plain.idx.longest_run(), 200u);
  EXPECT_EQ(plain.idx.find(plain.names[17].data(), plain.names[17].size()), 17u);
}

// A safetensors file of U8 tensors of one byte each, named name(k), the k-th key taking bytes
// [at(k), at(k) + 1).
template <class Name, class At>
std::string st_file(size_t n, Name name, At at) {
  std::string h = "{";
  for (size_t k = 0; k < n; ++k) {
    if (k) h += ",";
    h += "\"" + name(k) + "\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[" + std::to_string(at(k)) + "," +
         std::to_string(at(k) + 1) + "]}";
  }
  h += "}";
  std::string f(8, '\0');
  for (int b = 0; b < 8; ++b) f[static_cast<size_t>(b)] = static_cast<char>((h.size() >> (8 * b)) & 0xff);
  return f + h + std::string(n, 'x');
}

TEST(NameIndex, SafetensorsOpenInAndOutOfOrder) {
  // In offset order the scan's filled slots are indexed; out of order the rows are sorted and
  // the index is built from them again. Either way each name finds the row carrying it, and
  // a name with one byte changed finds nothing. Names of 55-75 bytes straddle the inline limit.
  const size_t n = 500;
  auto name = [](size_t k) { return std::string(55 + k % 21, 'w') + "." + std::to_string(k); };
  for (int shuffled = 0; shuffled < 2; ++shuffled) {
    const std::string f = st_file(n, name, [&](size_t k) { return shuffled ? (k * 7) % n : k; });
    tblob_model *m = nullptr;
    ASSERT_EQ(tblob_model_open_memory(f.data(), f.size(), nullptr, &m, nullptr), TBLOB_OK);
    ASSERT_EQ(tblob_model_tensor_count(m), n);
    for (size_t k = 0; k < n; ++k) {
      const std::string nm = name(k);
      uint64_t idx = UINT64_MAX;
      ASSERT_EQ(tblob_tensor_find(m, nm.data(), nm.size(), &idx, nullptr), TBLOB_OK) << k;
      tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
      ASSERT_EQ(tblob_tensor_at(m, idx, &info, nullptr), TBLOB_OK);
      EXPECT_EQ(std::string(info.name, info.name_len), nm) << k;
      EXPECT_EQ(idx, shuffled ? (k * 7) % n : k) << k;  // rows are in offset order
      std::string other = nm;
      other[0] = 'v';
      EXPECT_EQ(tblob_tensor_find(m, other.data(), other.size(), &idx, nullptr), TBLOB_E_NOT_FOUND) << k;
    }
    tblob_model_close(m);
  }
  // A repeated name, found from the filled slots: refused.
  const std::string dup = st_file(n, [&](size_t k) { return name(k == 400 ? 123 : k); }, [](size_t k) { return k; });
  tblob_model *m = nullptr;
  EXPECT_EQ(tblob_model_open_memory(dup.data(), dup.size(), nullptr, &m, nullptr), TBLOB_E_DUPLICATE_NAME);
  tblob_model_close(m);
}

}  // namespace
