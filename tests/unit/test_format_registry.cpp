// The format registry (lib/formats/registry.cpp) against what the rest of the library says:
// each entry's name is the one tblob_format_name gives its number, numbers are distinct,
// detection can open whatever it lets a format claim, and the base container comes last
// with no probe (the fallback). The magic probes are checked on the formats' real magics.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>

#include "formats/registry.h"
#include "tblob_config.h"

namespace {

TEST(FormatRegistry, EntriesAgreeWithThePublicNames) {
  size_t n = 0;
  const tblob::FormatOps *const *reg = tblob::format_registry(&n);
  ASSERT_GE(n, 2u);
  std::set<uint32_t> numbers;
  for (size_t i = 0; i < n; ++i) {
    const tblob::FormatOps &f = *reg[i];
    ASSERT_NE(f.name, nullptr);
    const char *pub = tblob_format_name(f.format);
    ASSERT_NE(pub, nullptr) << f.name;
    EXPECT_STREQ(f.name, pub);
    EXPECT_TRUE(numbers.insert(f.format).second) << f.name << " listed twice";
    EXPECT_NE(f.inputs, 0u) << f.name;
    if (f.probe || f.claims_table) {
      EXPECT_NE(f.open, nullptr) << f.name << " is claimed but cannot open";
    }
    if (f.probe == nullptr) continue;
    // Bytes that are no format's magic and no JSON: nobody claims them.
    EXPECT_EQ(f.probe(reinterpret_cast<const uint8_t *>("\x01\x02\x03\x04\x05\x06\x07\x08xyz"), 11, 11, false),
              tblob::kProbeNo)
        << f.name;
  }
  // The fallback: plain safetensors, last, claims nothing.
  const tblob::FormatOps &last = *reg[n - 1];
  EXPECT_EQ(last.format, static_cast<uint32_t>(TBLOB_FORMAT_SAFETENSORS));
  EXPECT_EQ(last.probe, nullptr);
  EXPECT_EQ(last.claims_path, nullptr);
  EXPECT_EQ(last.claims_table, nullptr);
  EXPECT_EQ(last.inputs, tblob::kInputPath | tblob::kInputMemory | tblob::kInputSource);
}

// A format's probe on its magic, on the magic with one byte changed, and on too few bytes.
[[maybe_unused]] void expect_magic(uint32_t format, const char *magic) {
  size_t n = 0;
  const tblob::FormatOps *const *reg = tblob::format_registry(&n);
  const tblob::FormatOps *f = nullptr;
  for (size_t i = 0; i < n; ++i)
    if (reg[i]->format == format) f = reg[i];
  ASSERT_NE(f, nullptr) << magic;
  ASSERT_NE(f->probe, nullptr) << magic;
  uint8_t head[16] = {0};
  std::memcpy(head, magic, 4);
  EXPECT_EQ(f->probe(head, sizeof head, sizeof head, false), tblob::kProbeYes) << magic;
  head[3] ^= 0x20;
  EXPECT_EQ(f->probe(head, sizeof head, sizeof head, false), tblob::kProbeNo) << magic;
  head[3] ^= 0x20;
  EXPECT_EQ(f->probe(head, 3, 3, false), tblob::kProbeNo) << magic;
}

TEST(FormatRegistry, MagicProbes) {
#if TBLOB_HAVE_GGUF
  expect_magic(TBLOB_FORMAT_GGUF, "GGUF");
#endif
#if TBLOB_HAVE_SLM1
  expect_magic(TBLOB_FORMAT_SLM1, "SLM1");
#endif
}

// The shard index asks a byte source for a ninth byte only when the first ones could open a
// JSON object: eight bytes of a safetensors header length with '{' next are not an index.
TEST(FormatRegistry, ShardIndexProbe) {
  size_t n = 0;
  const tblob::FormatOps *const *reg = tblob::format_registry(&n);
  const tblob::FormatOps *f = nullptr;
  for (size_t i = 0; i < n; ++i)
    if (reg[i]->format == TBLOB_FORMAT_SAFETENSORS_SHARDED) f = reg[i];
  ASSERT_NE(f, nullptr);
  const uint8_t json[] = "  {\"weight_map\": {}}";
  EXPECT_EQ(f->probe(json, 3, TBLOB_SOURCE_SIZE_UNKNOWN, true), tblob::kProbeMore);
  EXPECT_EQ(f->probe(json, sizeof json - 1, sizeof json - 1, false), tblob::kProbeYes);
  const uint8_t bin[] = "GGUF\x03\0\0\0";
  EXPECT_EQ(f->probe(bin, 8, TBLOB_SOURCE_SIZE_UNKNOWN, true), tblob::kProbeNo);
  // A header length of 123 ('{' as its low byte) in a file long enough for it: safetensors.
  uint8_t st[140] = {'{', 0, 0, 0, 0, 0, 0, 0, '{'};
  EXPECT_EQ(f->probe(st, sizeof st, sizeof st, false), tblob::kProbeNo);
}

}  // namespace
