// name_hash (lib/table/name_hash.h) against its own definition taken another way: NameHasher
// folds the same bytes in pieces of every size, so every length (the short-name forms, the
// block boundaries at 16 and 32, long names) must give the value of the one-shot call; and
// the properties the index relies on: the length is part of the value (names of zero bytes
// of every length differ), and flipping any one bit of a name changes the value. The keys are
// fixed here (the process's are random); the last tests check those: one set per process,
// whichever thread draws first, and every key changes the values.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "table/name_hash.h"

namespace {

constexpr tblob::NameHashKeys kKeys = {0x243F6A8885A308D3ull, 0x13198A2E03707345ull, 0xA4093822299F31D1ull,
                                       0x082EFA98EC4E6C89ull};

uint64_t hash(const std::string &s) { return tblob::name_hash(kKeys, s.data(), s.size()); }

bool same_keys(const tblob::NameHashKeys &a, const tblob::NameHashKeys &b) {
  return a.seed == b.seed && a.k1 == b.k1 && a.k2 == b.k2 && a.k3 == b.k3;
}

// First in the file, so that the threads race for the process's first draw.
TEST(NameHash, OneSetOfKeysPerProcessWhicheverThreadDrawsFirst) {
  std::vector<tblob::NameHashKeys> got(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i) threads.emplace_back([&got, i] { got[i] = tblob::name_hash_keys(); });
  for (std::thread &t : threads) t.join();
  for (const tblob::NameHashKeys &k : got) EXPECT_TRUE(same_keys(k, got[0]));
  EXPECT_TRUE(same_keys(tblob::name_hash_keys(), got[0]));
  // Four distinct words, none of them the fixed set's.
  const uint64_t w[4] = {got[0].seed, got[0].k1, got[0].k2, got[0].k3};
  const uint64_t f[4] = {kKeys.seed, kKeys.k1, kKeys.k2, kKeys.k3};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      if (i < j) {
        EXPECT_NE(w[i], w[j]);
      }
      EXPECT_NE(w[i], f[j]);
    }
}

std::string random_bytes(std::mt19937_64 &rng, size_t n) {
  std::string s(n, '\0');
  for (char &c : s) c = static_cast<char>(rng());
  return s;
}

uint64_t in_pieces(const std::string &s, size_t piece) {
  tblob::NameHasher h(kKeys);
  const uint8_t *p = reinterpret_cast<const uint8_t *>(s.data());
  for (size_t at = 0; at < s.size(); at += piece) h.update(p + at, piece < s.size() - at ? piece : s.size() - at);
  return h.digest();
}

TEST(NameHash, PiecesGiveTheOneShotValueAtEveryLength) {
  std::mt19937_64 rng(7);
  for (size_t n = 0; n <= 300; ++n) {
    const std::string s = random_bytes(rng, n);
    const uint64_t want = hash(s);
    for (size_t piece : {1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 64, 300})
      ASSERT_EQ(in_pieces(s, piece), want) << "length " << n << ", pieces of " << piece;
    if (n == 0) {
      tblob::NameHasher none(kKeys);  // no update at all is the empty name
      EXPECT_EQ(none.digest(), want);
    }
  }
}

TEST(NameHash, UnevenPiecesGiveTheOneShotValue) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 2000; ++round) {
    const std::string s = random_bytes(rng, rng() % 200);
    tblob::NameHasher h(kKeys);
    for (size_t at = 0; at < s.size();) {
      const size_t k = std::min<size_t>(rng() % 40, s.size() - at);
      h.update(reinterpret_cast<const uint8_t *>(s.data()) + at, k);
      at += k;
    }
    ASSERT_EQ(h.digest(), hash(s)) << "length " << s.size();
  }
}

TEST(NameHash, TheLengthIsPartOfTheValue) {
  std::set<uint64_t> seen;
  const std::string zeros(300, '\0');
  for (size_t n = 0; n <= 300; ++n) seen.insert(tblob::name_hash(kKeys, zeros.data(), n));
  EXPECT_EQ(seen.size(), 301u);
}

TEST(NameHash, EveryBitOfTheNameCounts) {
  std::mt19937_64 rng(3);
  for (size_t n : {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 47, 48, 49, 64, 100, 257}) {
    std::string s = random_bytes(rng, n);
    const uint64_t base = hash(s);
    std::set<uint64_t> seen{base};
    for (size_t i = 0; i < n; ++i)
      for (int b = 0; b < 8; ++b) {
        s[i] = static_cast<char>(s[i] ^ (1 << b));
        seen.insert(hash(s));
        s[i] = static_cast<char>(s[i] ^ (1 << b));
      }
    EXPECT_EQ(seen.size(), 1 + 8 * n) << "length " << n;
  }
}

// The index files names by the value's low bits and fingerprints them by its top 7: model-like
// names (one pattern, counters inside) must spread over both.
TEST(NameHash, ModelNamesSpreadOverSlotsAndFingerprints) {
  std::vector<int> top(128), low(1024);
  int count = 0;
  for (int layer = 0; layer < 80; ++layer)
    for (const char *part : {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
                             "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj", "input_layernorm"})
      for (const char *kind : {"weight", "scales", "biases"}) {
        const std::string name = "model.layers." + std::to_string(layer) + "." + part + "." + kind;
        const uint64_t h = hash(name);
        ++top[h >> 57];
        ++low[h & 1023];
        ++count;
      }
  // 1,920 names: 15 per fingerprint and ~1.9 per slot on average; a hash that ignored part of
  // the name would pile them up.
  for (int c : top) EXPECT_LT(c, 45);
  for (int c : low) EXPECT_LT(c, 14);
  EXPECT_EQ(count, 1920);
}

// Each key moves the values of the names it reaches: the seed and k2, k3 every name, k1 names
// of more than 16 bytes (their leading blocks). A key that did not would leave the names' low
// bits predictable from outside.
TEST(NameHash, EveryKeyChangesTheValues) {
  std::mt19937_64 rng(5);
  for (int which = 0; which < 4; ++which) {
    tblob::NameHashKeys other = kKeys;
    uint64_t *w[4] = {&other.seed, &other.k1, &other.k2, &other.k3};
    *w[which] ^= uint64_t{1} << (rng() % 64);
    for (size_t n : {0, 1, 5, 8, 16, 17, 33, 60, 200}) {
      if (which == 1 && n <= 16) continue;
      const std::string s = random_bytes(rng, n);
      EXPECT_NE(tblob::name_hash(other, s.data(), n), hash(s)) << "key " << which << ", length " << n;
      tblob::NameHasher pieces(other);
      pieces.update(reinterpret_cast<const uint8_t *>(s.data()), n);
      EXPECT_EQ(pieces.digest(), tblob::name_hash(other, s.data(), n));
    }
  }
}

}  // namespace
