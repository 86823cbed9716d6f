// name_hash (lib/table/name_hash.h) against its own definition taken another way: NameHasher
// folds the same bytes in pieces of every size, so every length (the short-name forms, the
// block boundaries at 16 and 32, long names) must give the value of the one-shot call; and
// the properties the index relies on: the length is part of the value (names of zero bytes
// of every length differ), and flipping any one bit of a name changes the value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "table/name_hash.h"

namespace {

std::string random_bytes(std::mt19937_64 &rng, size_t n) {
  std::string s(n, '\0');
  for (char &c : s) c = static_cast<char>(rng());
  return s;
}

uint64_t in_pieces(const std::string &s, size_t piece) {
  tblob::NameHasher h;
  const uint8_t *p = reinterpret_cast<const uint8_t *>(s.data());
  for (size_t at = 0; at < s.size(); at += piece) h.update(p + at, piece < s.size() - at ? piece : s.size() - at);
  return h.digest();
}

TEST(NameHash, PiecesGiveTheOneShotValueAtEveryLength) {
  std::mt19937_64 rng(7);
  for (size_t n = 0; n <= 300; ++n) {
    const std::string s = random_bytes(rng, n);
    const uint64_t want = tblob::name_hash(s.data(), s.size());
    for (size_t piece : {1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 64, 300})
      ASSERT_EQ(in_pieces(s, piece), want) << "length " << n << ", pieces of " << piece;
    if (n == 0) {
      tblob::NameHasher none;  // no update at all is the empty name
      EXPECT_EQ(none.digest(), want);
    }
  }
}

TEST(NameHash, UnevenPiecesGiveTheOneShotValue) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 2000; ++round) {
    const std::string s = random_bytes(rng, rng() % 200);
    tblob::NameHasher h;
    for (size_t at = 0; at < s.size();) {
      const size_t k = std::min<size_t>(rng() % 40, s.size() - at);
      h.update(reinterpret_cast<const uint8_t *>(s.data()) + at, k);
      at += k;
    }
    ASSERT_EQ(h.digest(), tblob::name_hash(s.data(), s.size())) << "length " << s.size();
  }
}

TEST(NameHash, TheLengthIsPartOfTheValue) {
  std::set<uint64_t> seen;
  const std::string zeros(300, '\0');
  for (size_t n = 0; n <= 300; ++n) seen.insert(tblob::name_hash(zeros.data(), n));
  EXPECT_EQ(seen.size(), 301u);
}

TEST(NameHash, EveryBitOfTheNameCounts) {
  std::mt19937_64 rng(3);
  for (size_t n : {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 47, 48, 49, 64, 100, 257}) {
    std::string s = random_bytes(rng, n);
    const uint64_t base = tblob::name_hash(s.data(), n);
    std::set<uint64_t> seen{base};
    for (size_t i = 0; i < n; ++i)
      for (int b = 0; b < 8; ++b) {
        s[i] = static_cast<char>(s[i] ^ (1 << b));
        seen.insert(tblob::name_hash(s.data(), n));
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
        const uint64_t h = tblob::name_hash(name.data(), name.size());
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

}  // namespace
