// Numbers in headers and in CLI output, at every length: the scanner reads integers eight
// digits at a time (json/st_scan_loop.h read_uint) and the CLI writes them two at a time
// (tools/tensorblob/json_writer.cpp). Expected values come from the C library (strtoull,
// snprintf) and, for the writer's strings, from simdjson parsing the output back.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cerrno>
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "tensorblob.h"
#include "../../tools/tensorblob/json_bytes.h"
#include "../../tools/tensorblob/json_writer.h"

namespace {

struct Seen {
  uint64_t dim0 = 0, begin = 0, end = 0;
  int tensors = 0;
};

int on_event(void *user, const tblob_scan_event *e) {
  Seen *s = static_cast<Seen *>(user);
  if (e->kind != TBLOB_SCAN_TENSOR) return 0;
  ++s->tensors;
  s->dim0 = e->rank ? e->shape[0] : 0;
  s->begin = e->data_begin;
  s->end = e->data_end;
  return 0;
}

// {"t":{"dtype":"U8","shape":[D],"data_offsets":[B,E]}} + `pad` spaces, with 16 bytes of
// data after the header (the scan without scratch does not check the region's length).
std::vector<uint8_t> header(const std::string &d, const std::string &b, const std::string &e, size_t pad) {
  std::string j = "{\"t\":{\"dtype\":\"U8\",\"shape\":[" + d + "],\"data_offsets\":[" + b + "," + e + "]}}";
  j.append(pad, ' ');
  std::vector<uint8_t> out(8 + j.size() + 16, 0);
  const uint64_t n = j.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(n >> (8 * i));
  std::memcpy(out.data() + 8, j.data(), j.size());
  return out;
}

tblob_status scan(const std::vector<uint8_t> &buf, Seen *seen) {
  tblob_scan_result r = TBLOB_SCAN_RESULT_INIT;
  return tblob_st_scan(buf.data(), buf.size(), nullptr, on_event, seen, nullptr, 0, &r, nullptr);
}

// Every digit count 1..20 (u64 max has 20), near and far from the header's end (the
// 16-byte fast path and the byte loop), including values around each power of ten.
TEST(Numbers, ScannerReadsEveryLength) {
  std::mt19937_64 rng(7);
  int checked = 0;
  for (int digits = 1; digits <= 20; ++digits) {
    for (int trial = 0; trial < 40; ++trial) {
      std::string s;
      if (trial == 0) s = "1" + std::string(digits - 1, '0');
      else if (trial == 1) s = std::string(digits, '9');
      else {
        s.push_back(static_cast<char>('1' + rng() % 9));
        while (static_cast<int>(s.size()) < digits) s.push_back(static_cast<char>('0' + rng() % 10));
      }
      if (digits == 1 && trial == 2) s = "0";
      errno = 0;
      const unsigned long long v = std::strtoull(s.c_str(), nullptr, 10);
      const bool fits = errno == 0;  // 20-digit values above 2^64-1 are skipped here
      for (size_t pad : {0u, 3u, 40u}) {
        // As both offsets [v, v] of a zero-element tensor, and as a dim (the size mismatch
        // that follows is a per-tensor status; the event still reports the values).
        Seen a;
        scan(header("0", s, s, pad), &a);
        if (fits) {
          ASSERT_EQ(a.tensors, 1) << s;
          EXPECT_EQ(a.begin, v) << s << " pad " << pad;
          EXPECT_EQ(a.end, v) << s << " pad " << pad;
          Seen b;
          scan(header(s, "0", "0", pad), &b);
          ASSERT_EQ(b.tensors, 1) << s;
          EXPECT_EQ(b.dim0, v) << s << " pad " << pad;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 2000);
}

// The two data_offsets are converted side by side: every pair of lengths 1..17 (17 digits takes
// the word-by-word path), with the numbers apart, in the single-entry reader (pad 40) and in
// the member loop (pad 300: it needs 256 bytes after a name).
TEST(Numbers, ScannerReadsEveryPairOfOffsetLengths) {
  std::mt19937_64 rng(11);
  const auto number = [&](int digits) {
    std::string s(1, static_cast<char>('1' + rng() % 9));
    while (static_cast<int>(s.size()) < digits) s.push_back(static_cast<char>('0' + rng() % 10));
    return s;
  };
  int checked = 0;
  for (int d1 = 1; d1 <= 17; ++d1) {
    for (int d2 = 1; d2 <= 17; ++d2) {
      for (size_t pad : {40u, 300u}) {
        const std::string b = number(d1), e = number(d2);
        Seen seen;
        scan(header("0", b, e, pad), &seen);
        ASSERT_EQ(seen.tensors, 1) << b << "," << e;
        EXPECT_EQ(seen.begin, std::strtoull(b.c_str(), nullptr, 10)) << b << "," << e << " pad " << pad;
        EXPECT_EQ(seen.end, std::strtoull(e.c_str(), nullptr, 10)) << b << "," << e << " pad " << pad;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 17 * 17 * 2);
}

// Leading zeros are not JSON; a number past u64 is not a valid offset. Both fail to scan,
// at every length and position.
TEST(Numbers, ScannerRejectsLeadingZerosAndOverflow) {
  for (int digits = 2; digits <= 20; ++digits) {
    const std::string z = "0" + std::string(digits - 1, '7');
    for (size_t pad : {0u, 40u}) {
      Seen s;
      EXPECT_NE(scan(header("1", z, "1", pad), &s), TBLOB_OK) << z;
      EXPECT_NE(scan(header(z, "0", "0", pad), &s), TBLOB_OK) << z;
    }
  }
  for (const char *big : {"18446744073709551616", "99999999999999999999", "100000000000000000000"}) {
    Seen s;
    EXPECT_NE(scan(header("1", big, big, 40), &s), TBLOB_OK) << big;
  }
  Seen ok;
  // 2^64-1 itself is a number (the region is too short for it, which is a later error).
  EXPECT_EQ(scan(header("1", "18446744073709551614", "18446744073709551615", 40), &ok), TBLOB_E_TRUNCATED);
  EXPECT_EQ(ok.tensors, 1);
  EXPECT_EQ(ok.end, UINT64_MAX);
}

std::string written(void (*fill)(tbcli::JsonWriter &)) {
  FILE *f = std::tmpfile();
  if (!f) return "";
  {
    tbcli::JsonWriter w(f);
    fill(w);
  }
  std::string out;
  std::rewind(f);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  std::fclose(f);
  return out;
}

std::vector<uint64_t> g_values;

TEST(Numbers, WriterPrintsEveryLength) {
  g_values.clear();
  uint64_t p = 1;
  for (int i = 0; i < 20; ++i) {
    g_values.push_back(p);
    g_values.push_back(p - 1);
    g_values.push_back(p + 1);
    if (i < 19) p *= 10;
  }
  g_values.push_back(UINT64_MAX);
  std::mt19937_64 rng(11);
  for (int i = 0; i < 5000; ++i) g_values.push_back(rng() >> (rng() % 64));
  const std::string out = written([](tbcli::JsonWriter &w) {
    for (uint64_t v : g_values) {
      w.u64(v);
      w.raw(' ');
    }
  });
  std::string expect;
  char tmp[32];
  for (uint64_t v : g_values) {
    std::snprintf(tmp, sizeof(tmp), "%" PRIu64 " ", v);
    expect += tmp;
  }
  EXPECT_EQ(out, expect);
}

// Strings with every byte that needs escaping, long runs that cross the writer's flush
// size, read back with simdjson.
TEST(Numbers, WriterStringsRoundTripThroughSimdjson) {
  static std::vector<std::string> texts;
  texts.clear();
  std::string all;
  for (int c = 1; c < 128; ++c) all.push_back(static_cast<char>(c));
  texts.push_back(all);
  texts.push_back(std::string(700000, 'a') + "\"\\\n" + std::string(300000, 'b'));
  texts.push_back("caf\xc3\xa9 model.layers.0.mlp.gate_proj.weight");
  texts.push_back("");
  const std::string out = written([](tbcli::JsonWriter &w) {
    w.raw('[');
    for (size_t i = 0; i < texts.size(); ++i) {
      if (i) w.raw(',');
      w.str(texts[i].data(), texts[i].size());
    }
    w.raw(']');
  });
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(out).get(doc), simdjson::SUCCESS);
  simdjson::dom::array arr;
  ASSERT_EQ(doc.get_array().get(arr), simdjson::SUCCESS);
  size_t i = 0;
  for (simdjson::dom::element e : arr) {
    std::string_view sv;
    ASSERT_EQ(e.get_string().get(sv), simdjson::SUCCESS);
    ASSERT_LT(i, texts.size());
    EXPECT_EQ(std::string(sv), texts[i]) << i;
    ++i;
  }
  EXPECT_EQ(i, texts.size());
}

// Bytes that are not UTF-8 (every lone byte 80-FF, truncated and overlong sequences,
// surrogates, code points past U+10FFFF) and names holding U+10FF80-U+10FFFF themselves:
// the output is valid UTF-8 JSON (simdjson validates it), and decoding each string by the
// documented rule (U+10FF80-U+10FFFF -> byte 80-FF) gives the original bytes back, which is
// also what the CLI's arg_bytes() gives for the UTF-8 of the decoded string.
TEST(Numbers, WriterEscapesBytesThatAreNotUtf8) {
  static std::vector<std::string> texts;
  texts.clear();
  for (int c = 0x80; c <= 0xFF; ++c) texts.push_back(std::string("a") + static_cast<char>(c) + "b");
  texts.push_back("\xc3");                      // truncated
  texts.push_back("\xe2\x82");                  // truncated
  texts.push_back("\xc0\xaf");                  // overlong '/'
  texts.push_back("\xe0\x80\xaf");              // overlong
  texts.push_back("\xed\xa0\x80");              // a surrogate
  texts.push_back("\xf4\x90\x80\x80");          // past U+10FFFF
  texts.push_back("\xf4\x8f\xbf\xbf");          // U+10FFFF itself: escaped byte by byte
  texts.push_back("\xf4\x8f\xbe\x80x\xf4\x8f\xbd\xbf");  // U+10FF80 escaped; U+10FF7F kept
  texts.push_back("\xff\xfe caf\xc3\xa9 \xf0\x9f\x98\x80 \"\\\n");
  texts.push_back(std::string(300000, 'x') + "\xff" + std::string(300000, '\xc3'));
  const std::string out = written([](tbcli::JsonWriter &w) {
    w.raw('[');
    for (size_t i = 0; i < texts.size(); ++i) {
      if (i) w.raw(',');
      w.str(texts[i].data(), texts[i].size());
    }
    w.raw(']');
  });
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(out).get(doc), simdjson::SUCCESS);
  simdjson::dom::array arr;
  ASSERT_EQ(doc.get_array().get(arr), simdjson::SUCCESS);
  size_t i = 0;
  for (simdjson::dom::element e : arr) {
    std::string_view sv;
    ASSERT_EQ(e.get_string().get(sv), simdjson::SUCCESS);
    ASSERT_LT(i, texts.size());
    // The documented undoing, on the UTF-8 simdjson gives back.
    std::string back;
    for (size_t k = 0; k < sv.size();) {
      const auto *p = reinterpret_cast<const unsigned char *>(sv.data() + k);
      if (sv.size() - k >= 4 && p[0] == 0xF4 && p[1] == 0x8F && p[2] >= 0xBE) {
        const unsigned cp = 0x10F000u + ((p[2] & 0x3Fu) << 6) + (p[3] & 0x3Fu);
        back += static_cast<char>(cp - 0x10FF00u);
        k += 4;
      } else {
        back += sv[k++];
      }
    }
    EXPECT_EQ(back, texts[i]) << i;
    const std::string arg(sv);
    EXPECT_EQ(tbcli::arg_bytes(arg.c_str()), texts[i]) << i;
    ++i;
  }
  EXPECT_EQ(i, texts.size());
  // Valid UTF-8 (other than U+10FF80-U+10FFFF) is written as it is.
  const std::string plain = written([](tbcli::JsonWriter &w) { w.str("caf\xc3\xa9 \xf0\x9f\x98\x80"); });
  EXPECT_EQ(plain, "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"");
  const std::string ff = written([](tbcli::JsonWriter &w) { w.str("\xff"); });
  EXPECT_EQ(ff, "\"\\udbff\\udfff\"");
}

}  // namespace
