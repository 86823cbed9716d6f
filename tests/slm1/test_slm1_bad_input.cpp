// reliability.md section 6 (6.1 cross-cutting, 6.5 the GGUF-like format, 6.6 dequant entry
// points) applied to SLM1: every bad input returns its one status (docs/slm1.md section 11)
// with a message naming the tensor hash / field / offset, never crashes, and never allocates
// more than the bytes present justify.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "formats/slm1/tokenizer.h"
#include "slm1_test_util.h"

using namespace slm1test;

namespace {

// Layout of three_tensor_file() (= tiny_btok.slm): directory at 0xc0 (entries 0xc0 q8_0 [2,4],
// 0x100 q4_0 [2,8] block 4, 0x140 f32 [4]); data 0x180: q8 payload 0x180, scales 0x1c0;
// q4 payload 0x200, scales 0x240; f32 payload 0x280; end 0x290.
constexpr uint64_t kE0 = 0xc0, kE1 = 0x100, kE2 = 0x140, kEnd = 0x290;
const char *const kH0 = "5f9d2aa84fd82093";
const char *const kH1 = "d0f255c0760da0a2";
const char *const kH2 = "e45e883176c5ce0f";

struct Expect {
  tblob_status status;
  uint64_t offset;                      // TBLOB_NO_OFFSET: not checked
  std::vector<std::string> mentions;    // substrings of the message
};

void check(const Bytes &b, const Expect &e, uint32_t flags = 0, tblob_open_options *base = nullptr,
           const std::vector<std::string> *names = nullptr) {
  Opened o;
  open_bytes(b, &o, flags, names, base);
  EXPECT_EQ(o.status, e.status) << tblob_status_name(o.status) << ": " << o.message();
  EXPECT_EQ(o.diag.status, e.status);
  if (e.status != TBLOB_OK) {
    EXPECT_EQ(o.m, nullptr);
    EXPECT_NE(o.message(), "");
  }
  if (e.offset != TBLOB_NO_OFFSET) {
    EXPECT_EQ(o.diag.offset, e.offset) << o.message();
  }
  for (const std::string &s : e.mentions) EXPECT_NE(o.message().find(s), std::string::npos) << "\"" << s << "\" not in: " << o.message();
}

// Mutates a copy of the valid file, restores a correct checksum, checks the result.
template <class F>
void mutate(F f, const Expect &e, uint32_t flags = 0, tblob_open_options *base = nullptr) {
  Bytes b = three_tensor_file();
  f(b);
  refresh_checksum(b);
  check(b, e, flags, base);
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%llu", static_cast<unsigned long long>(v));
  return buf;
}

TEST(Slm1Bad, BaselineIsValid) {
  const Bytes b = three_tensor_file();
  ASSERT_EQ(b, read_file(data_path("tiny_btok.slm")));
  check(b, {TBLOB_OK, TBLOB_NO_OFFSET, {}});
}

// ---- 6.1 item 1, 6.5 item 38: short input, magic, version ------------------------------------

TEST(Slm1Bad, ShorterThanTheHeader) {
  const Bytes full = three_tensor_file();
  for (size_t n : {0u, 1u, 3u, 4u, 50u, 107u}) {
    const Bytes b(full.begin(), full.begin() + n);
    check(b, {TBLOB_E_TRUNCATED, n, {"108"}});
  }
}

TEST(Slm1Bad, MagicAndVersion) {
  mutate([](Bytes &b) { b[3] = '2'; }, {TBLOB_E_UNKNOWN_FORMAT, 0, {"SLM1"}});
  for (uint32_t v : {0u, 2u, 0xffffffffu})
    mutate([v](Bytes &b) { put_u32(b, 4, v); }, {TBLOB_E_SLM1_VERSION, 4, {"version", "byte 4"}});
  mutate([](Bytes &b) { put_u32(b, 4, 0x01000000u); }, {TBLOB_E_SLM1_VERSION, 4, {"byte-swapped"}});
}

// ---- 6.5 items 40-42 analogues: the fixed header's fields ------------------------------------

TEST(Slm1Bad, HeaderLength) {
  mutate([](Bytes &b) { put_u32(b, 8, 107); }, {TBLOB_E_SLM1_HEADER, 8, {"header_length", "byte 8"}});
  mutate([](Bytes &b) { put_u32(b, 8, 0); }, {TBLOB_E_SLM1_HEADER, 8, {"header_length"}});
  mutate([](Bytes &b) { put_u32(b, 8, 0xffffffffu); }, {TBLOB_E_TRUNCATED, 8, {"header_length"}});
}

TEST(Slm1Bad, HeaderExtensionIsAllowed) {
  // header_length 112: 4 extra bytes, any content, covered by the checksum.
  Bytes b = three_tensor_file();
  b.insert(b.begin() + 108, {'E', 'X', 'T', '!'});
  b.erase(b.begin() + 0xc0, b.begin() + 0xc4);  // take 4 bytes of the zero padding back
  put_u32(b, 8, 112);
  put_u64(b, 64, 112);
  refresh_checksum(b);
  check(b, {TBLOB_OK, TBLOB_NO_OFFSET, {}});
  // The extension is not padding, but a changed byte there breaks the checksum.
  Bytes c = b;
  c[109] ^= 1;
  check(c, {TBLOB_E_SLM1_CHECKSUM, 100, {"checksum"}});
}

TEST(Slm1Bad, FlagsAndHyperparameters) {
  mutate([](Bytes &b) { put_u32(b, 16, 2); }, {TBLOB_E_SLM1_HEADER, 16, {"flags", "byte 16"}});
  mutate([](Bytes &b) { put_u32(b, 16, 0x80000001u); }, {TBLOB_E_SLM1_HEADER, 16, {"flags"}});
  mutate([](Bytes &b) { put_u32(b, 16, 1); }, {TBLOB_OK, TBLOB_NO_OFFSET, {}});  // tied output
  mutate([](Bytes &b) { put_u32(b, 12, 99); }, {TBLOB_OK, TBLOB_NO_OFFSET, {}});  // model_type: stored only
  struct F {
    uint64_t off;
    uint32_t value;
    const char *field;
  };
  const F fields[] = {
      {20, 259, "vocab_size"},         {20, 0, "vocab_size"},
      {24, 3, "special_token_count"},  {24, 261, "special_token_count"},
      {28, 0, "hidden_size"},          {28, 5, "head_dim"},  // 2 x 2 != 5
      {32, 0, "layer_count"},          {36, 0, "head_count"},
      {40, 0, "kv_head_count"},        {40, 3, "kv_head_count"},
      {44, 0, "head_dim"},             {44, 3, "head_dim"},
      {48, 0, "ffn_size"},             {52, 0, "max_context"},
  };
  for (const F &f : fields) {
    const uint64_t at = std::strcmp(f.field, "head_dim") == 0 ? 44 : f.off;
    mutate([&f](Bytes &b) { put_u32(b, f.off, f.value); },
           {TBLOB_E_SLM1_HEADER, at, {f.field, "byte " + hex(at)}});
  }
  // kv_head_count that does not divide head_count (heads 4, head_dim 1, hidden 4, kv 3).
  mutate([](Bytes &b) {
    put_u32(b, 36, 4);
    put_u32(b, 44, 1);
    put_u32(b, 40, 3);
  }, {TBLOB_E_SLM1_HEADER, 40, {"kv_head_count"}});
  for (float bad : {0.0f, -1.0f, NAN, INFINITY, -INFINITY}) {
    mutate([bad](Bytes &b) { put_f32(b, 56, bad); }, {TBLOB_E_SLM1_HEADER, 56, {"rope_theta"}});
    mutate([bad](Bytes &b) { put_f32(b, 60, bad); }, {TBLOB_E_SLM1_HEADER, 60, {"rms_norm_epsilon"}});
  }
}

TEST(Slm1Bad, SectionOffsets) {
  mutate([](Bytes &b) { put_u64(b, 64, 112); }, {TBLOB_E_OFFSETS, 64, {"tokenizer_offset"}});
  mutate([](Bytes &b) { put_u64(b, 72, kEnd); }, {TBLOB_E_TRUNCATED, 72, {"tokenizer"}});
  mutate([](Bytes &b) { put_u64(b, 72, ~0ull); }, {TBLOB_E_TRUNCATED, 72, {"tokenizer"}});  // end overflows
  mutate([](Bytes &b) { put_u64(b, 80, 0xc8); }, {TBLOB_E_OFFSETS, 80, {"tensor_directory_offset", "192"}});
  mutate([](Bytes &b) { put_u64(b, 80, 0x80); }, {TBLOB_E_OFFSETS, 80, {"tensor_directory_offset"}});
  mutate([](Bytes &b) { put_u64(b, 92, 0x1c0); }, {TBLOB_E_OFFSETS, 92, {"tensor_data_offset", "384"}});
  mutate([](Bytes &b) { put_u64(b, 92, 0x184); }, {TBLOB_E_OFFSETS, 92, {"tensor_data_offset"}});
}

// ---- 6.1 items 2, 4 and 6.5 item 39: counts bounded by the bytes present ---------------------

TEST(Slm1Bad, TensorCountBoundedByBytes) {
  // (656 - 192) / 64 = 7 entries fit: 8 do not.
  mutate([](Bytes &b) { put_u32(b, 88, 8); }, {TBLOB_E_TRUNCATED, 88, {"tensor_count", "byte 88"}});
  mutate([](Bytes &b) { put_u32(b, 88, 0xffffffffu); }, {TBLOB_E_TRUNCATED, 88, {"tensor_count"}});
  // 4 fits the bound, so the data offset rule is what breaks.
  mutate([](Bytes &b) { put_u32(b, 88, 4); }, {TBLOB_E_OFFSETS, 92, {"tensor_data_offset"}});
  tblob_open_options o = TBLOB_OPEN_OPTIONS_INIT;
  o.max_tensors = 2;
  mutate([](Bytes &) {}, {TBLOB_E_LIMIT_TENSORS, 88, {"limit"}}, 0, &o);
  o.max_tensors = 3;
  mutate([](Bytes &) {}, {TBLOB_OK, TBLOB_NO_OFFSET, {}}, 0, &o);
}

struct Stats {
  size_t largest = 0, live = 0, peak = 0;
  long blocks = 0;
  long fail_at = 0, calls = 0;
};

tblob_allocator counting(Stats *s) {
  tblob_allocator a = TBLOB_ALLOCATOR_INIT;
  a.opaque = s;
  a.alloc = [](void *o, size_t n) -> void * {
    Stats *k = static_cast<Stats *>(o);
    if (k->fail_at && ++k->calls == k->fail_at) return nullptr;
    if (n > k->largest) k->largest = n;
    k->live += n;
    ++k->blocks;
    if (k->live > k->peak) k->peak = k->live;
    return std::malloc(n);
  };
  a.free = [](void *o, void *p, size_t n) {
    Stats *k = static_cast<Stats *>(o);
    k->live -= n;
    --k->blocks;
    std::free(p);
  };
  return a;
}

TEST(Slm1Bad, AllocationBoundedByInput) {
  // A huge count and a huge BPE1 vocabulary are refused before anything is sized from them.
  Bytes b = three_tensor_file();
  put_u32(b, 88, 0xffffffffu);
  refresh_checksum(b);
  Stats s;
  tblob_allocator a = counting(&s);
  tblob_open_options o = TBLOB_OPEN_OPTIONS_INIT;
  o.allocator = &a;
  check(b, {TBLOB_E_TRUNCATED, 88, {}}, 0, &o);
  EXPECT_LE(s.largest, 64 * 1024u + 64) << "the model arena chunk at most";
  EXPECT_EQ(s.blocks, 0);

  // A valid file with many tensors: peak memory is a small multiple of the file.
  Writer w;
  std::vector<float> v = {1, 2, 3, 4};
  for (int i = 0; i < 2000; ++i) ASSERT_EQ(w.add("t" + std::to_string(i), {4}, v, TBLOB_SLM1_F32), TBLOB_OK);
  const Bytes big = w.emit();
  Stats s2;
  tblob_allocator a2 = counting(&s2);
  o.allocator = &a2;
  {
    Opened m;
    open_bytes(big, &m, 0, nullptr, &o);
    ASSERT_EQ(m.status, TBLOB_OK) << m.message();
  }
  EXPECT_LE(s2.peak, 8 * big.size() + (1u << 20)) << "peak " << s2.peak << " for " << big.size() << " bytes";
  EXPECT_EQ(s2.blocks, 0);
  EXPECT_EQ(s2.live, 0u);
}

TEST(Slm1Bad, EveryAllocationFailureIsReported) {
  const Bytes b = read_file(data_path("tiny_bpe1.slm"));
  const Bytes c = three_tensor_file();
  for (const Bytes *file : {&b, &c}) {
    const std::vector<std::string> names = {"norm.weight", "attn.q.weight"};
    bool opened = false;
    for (long n = 1; n < 200 && !opened; ++n) {
      Stats s;
      s.fail_at = n;
      tblob_allocator a = counting(&s);
      tblob_open_options o = TBLOB_OPEN_OPTIONS_INIT;
      o.allocator = &a;
      {
        Opened m;
        open_bytes(*file, &m, 0, &names, &o);
        if (m.status == TBLOB_OK) {
          opened = true;
        } else {
          EXPECT_EQ(m.status, TBLOB_E_OUT_OF_MEMORY) << "allocation " << n << ": " << m.message();
        }
      }
      EXPECT_EQ(s.blocks, 0) << "leak after failing allocation " << n;
    }
    EXPECT_TRUE(opened);
  }
}

// ---- tokenizer sections ----------------------------------------------------------------------

TEST(Slm1Bad, BtokSection) {
  mutate([](Bytes &b) { b[0x6c] = 'X'; }, {TBLOB_E_SLM1_TOKENIZER, 0x6c, {"neither BTOK nor BPE1"}});
  mutate([](Bytes &b) { put_u32(b, 0x70, 2); }, {TBLOB_E_SLM1_TOKENIZER, 0x70, {"version"}});
  mutate([](Bytes &b) { put_u32(b, 0x74, 261); }, {TBLOB_E_SLM1_TOKENIZER, 0x74, {"vocab_size"}});
  mutate([](Bytes &b) { put_u32(b, 0x78, 300); }, {TBLOB_E_SLM1_TOKENIZER, 0x78, {"bos_id"}});
  mutate([](Bytes &b) { put_u32(b, 0x84, 258); }, {TBLOB_E_SLM1_TOKENIZER, 0x84, {"unk_id"}});
  // Header vocab_size 261 (valid on its own) disagrees with BTOK's 260.
  mutate([](Bytes &b) { put_u32(b, 20, 261); }, {TBLOB_E_SLM1_TOKENIZER, 0x74, {"disagrees"}});
  // Length not exactly 28 (the directory offset stays right: align64 gives 0xc0 either way).
  mutate([](Bytes &b) { put_u64(b, 72, 27); }, {TBLOB_E_SLM1_TOKENIZER, 0x6c, {"exactly 28"}});
  mutate([](Bytes &b) { put_u64(b, 72, 29); }, {TBLOB_E_SLM1_TOKENIZER, 0x6c, {"exactly 28"}});
  // Shorter still moves the aligned directory offset: that is the first rule broken.
  mutate([](Bytes &b) { put_u64(b, 72, 3); }, {TBLOB_E_OFFSETS, 80, {"tensor_directory_offset"}});
  // The section check itself, on a 3-byte section.
  tblob::Diag d;
  tblob_diag out = TBLOB_DIAG_INIT;
  d.out = &out;
  tblob::slm1::TokenizerInfo info;
  const uint8_t three[3] = {'B', 'T', 'O'};
  EXPECT_EQ(tblob::slm1::check_tokenizer(three, 3, 108, 260, tblob::Allocator(), &info, d), TBLOB_E_SLM1_TOKENIZER);
  EXPECT_NE(std::string(out.message).find("too short"), std::string::npos) << out.message;
}

// A BPE1 section: tokens (id, bytes), merges (left, right, output, rank).
Bytes bpe1(uint32_t vocab, const std::vector<std::pair<uint32_t, std::string>> &tokens,
           const std::vector<std::vector<uint32_t>> &merges, const uint32_t special[4] = nullptr) {
  static const uint32_t kDefault[4] = {256, 257, 258, 259};
  if (!special) special = kDefault;
  Bytes s = {'B', 'P', 'E', '1'};
  auto u32 = [&s](uint32_t v) {
    for (int i = 0; i < 4; ++i) s.push_back(static_cast<uint8_t>(v >> (8 * i)));
  };
  u32(1);
  u32(vocab);
  for (int i = 0; i < 4; ++i) u32(special[i]);
  u32(static_cast<uint32_t>(tokens.size()));
  u32(static_cast<uint32_t>(merges.size()));
  for (const auto &t : tokens) {
    u32(t.first);
    u32(static_cast<uint32_t>(t.second.size()));
    s.insert(s.end(), t.second.begin(), t.second.end());
  }
  for (const auto &m : merges)
    for (uint32_t x : m) u32(x);
  return s;
}

// A file with this tokenizer section, written by the writer when valid, else by patching a
// valid file whose section has the same length.
Bytes with_tokenizer(const Bytes &section, uint32_t vocab) {
  tblob_slm1_writer_options o = golden_options();
  o.tokenizer = section.data();
  o.tokenizer_length = section.size();
  Writer w(o);
  if (w.status == TBLOB_OK) {
    w.add("norm.weight", {4}, {1, 2, 3, 4}, TBLOB_SLM1_F32);
    return w.emit();
  }
  // Same length, valid: a byte-token record padded with one more record... build a file with
  // the right layout from a placeholder of equal length, then overwrite the section.
  ADD_FAILURE() << "section not writable: " << w.diag.message;
  (void)vocab;
  return Bytes();
}

Bytes patched_tokenizer(const Bytes &valid_section, uint32_t vocab, void (*patch)(Bytes &)) {
  Bytes f = with_tokenizer(valid_section, vocab);
  Bytes sec(f.begin() + 108, f.begin() + 108 + valid_section.size());
  patch(sec);
  std::copy(sec.begin(), sec.end(), f.begin() + 108);
  if (get_u32(sec, 8) >= 260) put_u32(f, 20, get_u32(sec, 8));  // keep the header's vocab equal
  refresh_checksum(f);
  return f;
}

TEST(Slm1Bad, Bpe1Section) {
  // th = t + h (rank 0), tt = t + t (rank 1); vocab 262.
  const Bytes ok = bpe1(262, {{260, "th"}, {261, "tt"}}, {{'t', 'h', 260, 0}, {'t', 't', 261, 1}});
  check(with_tokenizer(ok, 262), {TBLOB_OK, TBLOB_NO_OFFSET, {}});
  // Explicit byte tokens are accepted only as themselves.
  check(with_tokenizer(bpe1(262, {{'t', "t"}, {260, "th"}, {261, "tt"}}, {{'t', 'h', 260, 0}}), 262),
        {TBLOB_OK, TBLOB_NO_OFFSET, {}});
  struct Case {
    void (*patch)(Bytes &);
    const char *mention;
  };
  // Offsets in the section: header 36; record 260 at 36 (id, len, "th"), record 261 at 46;
  // merges at 56 and 72.
  const Case cases[] = {
      {[](Bytes &s) { put_u32(s, 4, 0); }, "version"},
      {[](Bytes &s) { put_u32(s, 8, 259); }, "at least 260"},
      {[](Bytes &s) { put_u32(s, 12, 100); }, "special id"},       // a byte id
      {[](Bytes &s) { put_u32(s, 16, 256); }, "appears twice"},    // two specials equal
      {[](Bytes &s) { put_u32(s, 24, 262); }, "special id"},       // not below vocab
      {[](Bytes &s) { put_u32(s, 28, 0xffffffffu); }, "token_count"},
      {[](Bytes &s) { put_u32(s, 28, 1); }, "cannot cover"},
      {[](Bytes &s) { put_u32(s, 32, 0xffffffffu); }, "merge_count"},
      {[](Bytes &s) { put_u32(s, 32, 1); }, "merge_count"},        // 16 trailing bytes
      {[](Bytes &s) { put_u32(s, 40, 0); }, "no bytes"},
      {[](Bytes &s) { put_u32(s, 40, 1000); }, "claims"},
      {[](Bytes &s) { put_u32(s, 36, 262); }, "not below vocab_size"},
      {[](Bytes &s) { put_u32(s, 36, 257); }, "special id"},
      {[](Bytes &s) { put_u32(s, 46, 260); }, "appears twice"},    // duplicate id
      {[](Bytes &s) { put_u32(s, 36, 'x'); }, "byte token"},       // 'x' as "th"
      {[](Bytes &s) { put_u32(s, 8, 263); }, "cannot cover"},      // id 262 has no record
      {[](Bytes &s) { put_u32(s, 56, 300); }, "input"},            // merge left >= vocab
      {[](Bytes &s) { put_u32(s, 60, 258); }, "input"},            // merge right special
      {[](Bytes &s) { put_u32(s, 64, 'q'); }, "has no token record"},
      {[](Bytes &s) { put_u32(s, 64, 261); }, "are not those of"}, // tt != t + h
      {[](Bytes &s) { put_u32(s, 84, 0); }, "rank 0 is used twice"},
      {[](Bytes &s) {  // merge 1 becomes the same pair as merge 0
         put_u32(s, 72, 't');
         put_u32(s, 76, 'h');
         put_u32(s, 80, 260);
       }, "appears twice"},
  };
  for (const Case &c : cases) {
    const Bytes f = patched_tokenizer(ok, 262, c.patch);
    SCOPED_TRACE(c.mention);
    Opened o;
    open_bytes(f, &o);
    EXPECT_EQ(o.status, TBLOB_E_SLM1_TOKENIZER) << o.message();
    EXPECT_NE(o.message().find(c.mention), std::string::npos) << o.message();
    EXPECT_GE(o.diag.offset, 108u);
    EXPECT_LT(o.diag.offset, 108u + ok.size());
  }
  // Section length one byte longer than its contents (trailing byte), directory still aligned.
  Bytes f = with_tokenizer(ok, 262);
  put_u64(f, 72, get_u64(f, 72) + 1);
  refresh_checksum(f);
  check(f, {TBLOB_E_SLM1_TOKENIZER, TBLOB_NO_OFFSET, {"merge_count"}});
}

TEST(Slm1Bad, PaddingAfterTokenizer) {
  mutate([](Bytes &b) { b[0x90] = 7; }, {TBLOB_E_SLM1_PADDING, 0x90, {"padding byte 144", "tokenizer"}});
}

// ---- 6.5 items 44, 47, 48: directory entries -------------------------------------------------

TEST(Slm1Bad, EntryDtype) {
  for (uint32_t d : {0u, 4u, 0xffffffffu})
    mutate([d](Bytes &b) { put_u32(b, kE1 + 8, d); }, {TBLOB_E_DTYPE, kE1 + 8, {"tensor 1", kH1, "dtype"}});
}

TEST(Slm1Bad, EntryRankDimsReserved) {
  mutate([](Bytes &b) { put_u32(b, kE2 + 12, 0); }, {TBLOB_E_SLM1_ENTRY, kE2 + 12, {"tensor 2", kH2, "rank 0"}});
  mutate([](Bytes &b) { put_u32(b, kE2 + 12, 5); }, {TBLOB_E_SLM1_ENTRY, kE2 + 12, {"rank 5"}});
  mutate([](Bytes &b) { put_u32(b, kE0 + 16, 0); }, {TBLOB_E_SLM1_ENTRY, kE0 + 16, {kH0, "dims[0] is 0"}});
  mutate([](Bytes &b) { put_u32(b, kE0 + 20, 0); }, {TBLOB_E_SLM1_ENTRY, kE0 + 20, {"dims[1] is 0"}});
  mutate([](Bytes &b) { put_u32(b, kE0 + 24, 1); }, {TBLOB_E_SLM1_ENTRY, kE0 + 24, {"dims[2]", "beyond rank"}});
  mutate([](Bytes &b) { put_u32(b, kE2 + 28, 9); }, {TBLOB_E_SLM1_ENTRY, kE2 + 28, {"dims[3]"}});
  mutate([](Bytes &b) { put_u32(b, kE1 + 60, 1); }, {TBLOB_E_SLM1_ENTRY, kE1 + 60, {kH1, "reserved"}});
  tblob_open_options o = TBLOB_OPEN_OPTIONS_INIT;
  o.max_rank = 1;
  mutate([](Bytes &) {}, {TBLOB_E_LIMIT_RANK, kE0 + 12, {"tensor 0", "limit"}}, 0, &o);
}

TEST(Slm1Bad, EntryBlockSizeAndScaleOffset) {
  mutate([](Bytes &b) { put_u32(b, kE2 + 56, 4); }, {TBLOB_E_SLM1_ENTRY, kE2 + 56, {"f32 block_size"}});
  mutate([](Bytes &b) { put_u64(b, kE2 + 48, 0x1c0); }, {TBLOB_E_SLM1_ENTRY, kE2 + 48, {"f32 scale_offset"}});
  mutate([](Bytes &b) { put_u32(b, kE0 + 56, 2); }, {TBLOB_E_SLM1_ENTRY, kE0 + 56, {"q8_0 block_size", "cols 4"}});
  for (uint32_t bs : {0u, 1u, 3u, 16u, 6u})
    mutate([bs](Bytes &b) { put_u32(b, kE1 + 56, bs); }, {TBLOB_E_SLM1_ENTRY, kE1 + 56, {"q4_0 block_size"}});
}

TEST(Slm1Bad, EntrySizeOverflow) {
  // f32 rank 4 with every dim 2^32-1: the element count overflows 64 bits.
  mutate([](Bytes &b) {
    put_u32(b, kE2 + 12, 4);
    for (int k = 0; k < 4; ++k) put_u32(b, kE2 + 16 + 4 * k, 0xffffffffu);
  }, {TBLOB_E_SHAPE_OVERFLOW, TBLOB_NO_OFFSET, {kH2, "overflows"}});
  // 2^62 elements: the count fits, x4 bytes does not.
  mutate([](Bytes &b) {
    put_u32(b, kE2 + 12, 3);
    put_u32(b, kE2 + 16, 1u << 30);
    put_u32(b, kE2 + 20, 1u << 30);
    put_u32(b, kE2 + 24, 4);
  }, {TBLOB_E_SHAPE_OVERFLOW, TBLOB_NO_OFFSET, {"f32 byte count"}});
  // q8_0 rows overflow (block_size must equal cols to get there).
  mutate([](Bytes &b) {
    put_u32(b, kE0 + 12, 4);
    for (int k = 0; k < 4; ++k) put_u32(b, kE0 + 16 + 4 * k, 0xffffffffu);
    put_u32(b, kE0 + 56, 0xffffffffu);
  }, {TBLOB_E_SHAPE_OVERFLOW, TBLOB_NO_OFFSET, {kH0}});
}

TEST(Slm1Bad, EntryByteLength) {
  for (uint64_t len : {7ull, 9ull, 0ull, 16ull, ~0ull})
    mutate([len](Bytes &b) { put_u64(b, kE0 + 40, len); },
           {TBLOB_E_TENSOR_SIZE, kE0 + 40, {"tensor 0", kH0, "byte_length", "needs exactly 8"}});
  mutate([](Bytes &b) { put_u64(b, kE2 + 40, 12); }, {TBLOB_E_TENSOR_SIZE, kE2 + 40, {"needs exactly 16"}});
  mutate([](Bytes &b) { put_u64(b, kE1 + 40, 16); }, {TBLOB_E_TENSOR_SIZE, kE1 + 40, {"q4_0", "needs exactly 8"}});
}

// ---- 6.1 item 11, 6.5 item 50: duplicate hashes ------------------------------------------------

TEST(Slm1Bad, DuplicateHashes) {
  // Adjacent (the directory still looks sorted up to there).
  mutate([](Bytes &b) { put_u64(b, kE1, get_u64(b, kE0)); },
         {TBLOB_E_HASH_COLLISION, kE1, {"tensors 0 and 1", kH0}});
  // Not adjacent, in an unsorted directory.
  mutate([](Bytes &b) { put_u64(b, kE2, get_u64(b, kE0)); },
         {TBLOB_E_HASH_COLLISION, kE2, {"tensors 0 and 2", kH0}});
}

// ---- 6.5 items 43, 45, 46, 49: the data region ---------------------------------------------------

TEST(Slm1Bad, RegionsPastTheEnd) {
  mutate([](Bytes &b) { put_u64(b, kE2 + 32, 0x2c0); },
         {TBLOB_E_TRUNCATED, kE2 + 32, {"tensor 2", kH2, "payload", "past the end"}});
  mutate([](Bytes &b) { put_u64(b, kE2 + 32, 0xffffffffffffffc0ull); },  // offset + length overflows
         {TBLOB_E_TRUNCATED, kE2 + 32, {"payload"}});
  mutate([](Bytes &b) { put_u64(b, kE1 + 48, 0x2c0); },
         {TBLOB_E_TRUNCATED, kE1 + 48, {"tensor 1", kH1, "scale array"}});
  mutate([](Bytes &b) { put_u64(b, kE1 + 48, 0xfffffffffffffff0ull); },
         {TBLOB_E_TRUNCATED, kE1 + 48, {"scale array"}});
  // The file cut short at every point of the data region.
  const Bytes full = three_tensor_file();
  for (size_t cut = 0x181; cut < kEnd; cut += 7) {
    Bytes b(full.begin(), full.begin() + cut);
    check(b, {TBLOB_E_TRUNCATED, TBLOB_NO_OFFSET, {"past the end"}});
  }
  // Inside the directory: the count no longer fits.
  Bytes d(full.begin(), full.begin() + 0x150);
  check(d, {TBLOB_E_TRUNCATED, 88, {"tensor_count"}});
  // Inside the tokenizer section.
  Bytes t(full.begin(), full.begin() + 0x70);
  check(t, {TBLOB_E_TRUNCATED, 72, {"tokenizer"}});
}

TEST(Slm1Bad, ShortScaleArray) {
  // One q8_0 tensor: its scale array is the last region; cut it short.
  Writer w;
  w.add("w", {4, 8}, std::vector<float>(32, 1.5f), TBLOB_SLM1_Q8_0);
  const Bytes full = w.emit();
  ASSERT_FALSE(full.empty());
  Bytes b(full.begin(), full.end() - 2);
  check(b, {TBLOB_E_TRUNCATED, dir_offset(full) + 48, {"scale array", "[", "+16)"}});
  check(full, {TBLOB_OK, TBLOB_NO_OFFSET, {}});
}

TEST(Slm1Bad, Misaligned) {
  mutate([](Bytes &b) { put_u64(b, kE2 + 32, 0x270); },
         {TBLOB_E_SLM1_ALIGNMENT, kE2 + 32, {kH2, "payload", "multiple of 64"}});
  mutate([](Bytes &b) { put_u64(b, kE1 + 48, 0x244); },
         {TBLOB_E_SLM1_ALIGNMENT, kE1 + 48, {kH1, "scale array"}});
  mutate([](Bytes &b) { put_u64(b, kE0 + 32, 0x181); }, {TBLOB_E_SLM1_ALIGNMENT, kE0 + 32, {"payload"}});
}

TEST(Slm1Bad, OverlapsAndHoles) {
  // Payload over the previous tensor's scales.
  mutate([](Bytes &b) { put_u64(b, kE2 + 32, 0x240); }, {TBLOB_E_OFFSETS, TBLOB_NO_OFFSET, {"overlaps"}});
  // Two payloads at one offset.
  mutate([](Bytes &b) { put_u64(b, kE1 + 32, 0x180); }, {TBLOB_E_OFFSETS, TBLOB_NO_OFFSET, {"overlaps"}});
  // Scale array on its own payload.
  mutate([](Bytes &b) { put_u64(b, kE0 + 48, 0x180); }, {TBLOB_E_OFFSETS, TBLOB_NO_OFFSET, {"overlaps"}});
  // Payloads over the directory and the header.
  mutate([](Bytes &b) { put_u64(b, kE0 + 32, 0x140); },
         {TBLOB_E_OFFSETS, kE0 + 32, {"tensor 0", "before tensor_data_offset"}});
  mutate([](Bytes &b) { put_u64(b, kE2 + 32, 0); }, {TBLOB_E_OFFSETS, kE2 + 32, {"before tensor_data_offset"}});
  // A hole: the last payload moved one boundary later (the file grows to hold it).
  Bytes b = three_tensor_file();
  std::vector<uint8_t> last(b.end() - 16, b.end());
  b.resize(0x2c0, 0);
  b.insert(b.end(), last.begin(), last.end());
  put_u64(b, kE2 + 32, 0x280 + 0x40);
  refresh_checksum(b);
  check(b, {TBLOB_E_OFFSETS, TBLOB_NO_OFFSET, {"hole", "must start at 640"}});
}

TEST(Slm1Bad, TrailingBytes) {
  for (size_t extra : {1u, 63u, 64u, 1000u}) {
    Bytes b = three_tensor_file();
    b.resize(b.size() + extra, 0);
    refresh_checksum(b);
    check(b, {TBLOB_E_TRAILING_BYTES, kEnd, {hex(extra) + " bytes follow"}});
  }
  // No tensors: the file ends at tensor_data_offset.
  Writer w;
  Bytes e = w.emit();
  e.push_back(0);
  refresh_checksum(e);
  check(e, {TBLOB_E_TRAILING_BYTES, TBLOB_NO_OFFSET, {"1 bytes follow"}});
}

TEST(Slm1Bad, NonZeroPaddingBetweenRegions) {
  mutate([](Bytes &b) { b[0x190] = 1; }, {TBLOB_E_SLM1_PADDING, 0x190, {"tensor 0", "payload", kH0}});
  mutate([](Bytes &b) { b[0x27f] = 0x80; }, {TBLOB_E_SLM1_PADDING, 0x27f, {"tensor 1", "scale array"}});
}

// ---- scales (6.6 item 56, strict by default) ----------------------------------------------------

TEST(Slm1Bad, ScaleValues) {
  for (float bad : {0.0f, -0.0f, -1.0f, NAN, INFINITY, -INFINITY}) {
    mutate([bad](Bytes &b) { put_f32(b, 0x248, bad); },
           {TBLOB_E_SLM1_SCALE, 0x248, {"tensor 1", kH1, "scale 2", "byte 584"}});
    mutate([bad](Bytes &b) { put_f32(b, 0x248, bad); }, {TBLOB_OK, TBLOB_NO_OFFSET, {}},
           TBLOB_OPEN_FLAG_SLM1_NO_SCALE_CHECK);
  }
  mutate([](Bytes &b) { put_f32(b, 0x1c4, 1e-40f); }, {TBLOB_OK, TBLOB_NO_OFFSET, {}});  // subnormal
}

// ---- the checksum and --no-checksum --------------------------------------------------------------

TEST(Slm1Bad, Checksum) {
  Bytes b = three_tensor_file();
  b[0x280] ^= 1;  // a value byte: structurally fine
  check(b, {TBLOB_E_SLM1_CHECKSUM, 100, {"checksum", "differs", "--no-checksum"}});
  // Skipping only the checksum.
  {
    Opened o;
    open_bytes(b, &o, TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM);
    ASSERT_EQ(o.status, TBLOB_OK) << o.message();
    tblob_slm1_header_info h = TBLOB_SLM1_HEADER_INFO_INIT;
    ASSERT_EQ(tblob_slm1_header(o.m, &h, nullptr), TBLOB_OK);
    EXPECT_EQ(h.checksum_verified, 0u);
    const char *v;
    size_t vl;
    ASSERT_EQ(tblob_metadata_find(o.m, "checksum_verified", 17, &v, &vl, nullptr), TBLOB_OK);
    EXPECT_EQ(std::string(v, vl), "false");
  }
  // A stored zero is never valid, and skippable like any mismatch.
  Bytes z = three_tensor_file();
  put_u64(z, 100, 0);
  check(z, {TBLOB_E_SLM1_CHECKSUM, 100, {"is 0"}});
  check(z, {TBLOB_OK, TBLOB_NO_OFFSET, {}}, TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM);
  // The flag skips nothing else: structure errors keep their status (and win over the checksum).
  Bytes r = three_tensor_file();
  put_u32(r, kE1 + 60, 1);  // reserved, checksum not refreshed
  check(r, {TBLOB_E_SLM1_ENTRY, kE1 + 60, {"reserved"}});
  check(r, {TBLOB_E_SLM1_ENTRY, kE1 + 60, {"reserved"}}, TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM);
  Bytes s = three_tensor_file();
  put_f32(s, 0x1c0, -1.0f);
  check(s, {TBLOB_E_SLM1_SCALE, 0x1c0, {}}, TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM);
}

TEST(Slm1Bad, OpenPathFlagsAndShortFiles) {
  char dir[] = "/tmp/slm1-bad-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/f.slm";
  auto write = [&path](const Bytes &b) {
    FILE *f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    if (!b.empty()) {
      ASSERT_EQ(std::fwrite(b.data(), 1, b.size(), f), b.size());
    }
    std::fclose(f);
  };
  Bytes b = three_tensor_file();
  b[0x280] ^= 1;
  write(b);
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(tblob_model_open(path.c_str(), nullptr, &m, &d), TBLOB_E_SLM1_CHECKSUM);
  tblob_open_options o = TBLOB_OPEN_OPTIONS_INIT;
  o.flags = TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM;
  ASSERT_EQ(tblob_model_open(path.c_str(), &o, &m, &d), TBLOB_OK) << d.message;
  tblob_model_close(m);
  // Magic then too few bytes: detected as SLM1 and truncated.
  write(Bytes(b.begin(), b.begin() + 50));
  EXPECT_EQ(tblob_model_open(path.c_str(), nullptr, &m, &d), TBLOB_E_TRUNCATED);
  EXPECT_NE(std::string(d.message).find("108"), std::string::npos);
  unlink(path.c_str());
  rmdir(dir);
}

}  // namespace
