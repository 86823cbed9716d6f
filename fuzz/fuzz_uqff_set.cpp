// fuzz_uqff_set: a UQFF shard set (up to 4 shards) through tblob_uqff_open_memory /
// tblob_uqff_verify_memory, exercising the cross-shard rules: one index over every shard,
// layers straddling shards, version copies, duplicate keys. Input: shards joined by the
// line "\n--UQFF-SHARD--\n", then the 3-byte trailer of fuzz_common.h. Each shard is copied
// into its own exact-size heap block so ASan sees reads past any of them.
#include <vector>

#define FUZZ_UQFF_NO_ENTRY
#include "fuzz_uqff_shard.cpp"  // the shared checks

namespace {
const char kSep[] = "\n--UQFF-SHARD--\n";
constexpr size_t kSepLen = sizeof(kSep) - 1;
constexpr size_t kMaxShards = 4;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const fuzz::Params p = fuzz::split_input(data, size);
  std::vector<std::pair<size_t, size_t>> parts;
  size_t start = 0;
  for (size_t i = 0; i + kSepLen <= p.file_len && parts.size() + 1 < kMaxShards;) {
    if (std::memcmp(p.file + i, kSep, kSepLen) == 0) {
      parts.push_back({start, i - start});
      i += kSepLen;
      start = i;
    } else {
      ++i;
    }
  }
  parts.push_back({start, p.file_len - start});
  std::vector<fuzz::ExactCopy *> copies;
  std::vector<const void *> bufs;
  std::vector<size_t> lens;
  for (const auto &pr : parts) {
    copies.push_back(new fuzz::ExactCopy(p.file + pr.first, pr.second));
    bufs.push_back(copies.back()->ptr);
    lens.push_back(pr.second);
  }
  fuzz::uqff_run(bufs.data(), lens.data(), bufs.size(), p, p.file_len);
  for (fuzz::ExactCopy *c : copies) delete c;
  return 0;
}
