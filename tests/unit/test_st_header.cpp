// tblob_st_header_write (experimental): the exact bytes for a small hand-written case, and
// the argument checks.
#define TBLOB_EXPERIMENTAL_API
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "tensorblob.h"

namespace {

std::string header(const tblob_st_tensor_spec *t, size_t n, const char *const *k, const char *const *v, size_t m,
                   tblob_status *st) {
  size_t len = 0;
  *st = tblob_st_header_write(t, n, k, v, m, nullptr, 0, &len, nullptr);
  if (*st != TBLOB_E_BUFFER_TOO_SMALL && *st != TBLOB_OK) return {};
  std::string out(len, '\0');
  *st = tblob_st_header_write(t, n, k, v, m, &out[0], len, &len, nullptr);
  out.resize(len);
  return out;
}

TEST(StHeader, ExactBytesSortedKeysMetadataFirstSpacePadding) {
  const uint64_t sb[] = {2}, sa[] = {3};
  // Data in list order: b at [0, 8), then a at [8, 11); keys sorted in the JSON.
  const tblob_st_tensor_spec t[] = {{"b", 1, TBLOB_DTYPE_F32, 1, sb, 8}, {"a<", 2, TBLOB_DTYPE_U8, 1, sa, 3}};
  const char *k[] = {"format"}, *v[] = {"pt"};
  tblob_status st;
  const std::string h = header(t, 2, k, v, 1, &st);
  ASSERT_EQ(st, TBLOB_OK);
  const std::string json =
      "{\"__metadata__\":{\"format\":\"pt\"},\"a\\u003c\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[8,11]},"
      "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
  const size_t padded = (json.size() + 7) / 8 * 8;
  ASSERT_EQ(h.size(), 8 + padded);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | static_cast<unsigned char>(h[static_cast<size_t>(i)]);
  EXPECT_EQ(n, padded);
  EXPECT_EQ(h.substr(8, json.size()), json);
  EXPECT_EQ(h.substr(8 + json.size()), std::string(padded - json.size(), ' '));
}

TEST(StHeader, NoMetadataScalarAndEmpty) {
  const tblob_st_tensor_spec t[] = {{"s", 1, TBLOB_DTYPE_BF16, 0, nullptr, 2}};
  tblob_status st;
  const std::string h = header(t, 1, nullptr, nullptr, 0, &st);
  ASSERT_EQ(st, TBLOB_OK);
  EXPECT_EQ(h.substr(8), "{\"s\":{\"dtype\":\"BF16\",\"shape\":[],\"data_offsets\":[0,2]}}  ");
  EXPECT_EQ(header(nullptr, 0, nullptr, nullptr, 0, &st).substr(8), "{}      ");
  EXPECT_EQ(st, TBLOB_OK);
}

TEST(StHeader, ArgumentChecks) {
  const uint64_t s1[] = {1};
  tblob_st_tensor_spec t[] = {{"x", 1, TBLOB_DTYPE_F32, 1, s1, 4}};
  size_t len = 123;
  char small[8];
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(tblob_st_header_write(t, 1, nullptr, nullptr, 0, small, sizeof small, &len, &d), TBLOB_E_BUFFER_TOO_SMALL);
  EXPECT_EQ(len, 64u);  // 8 + 54 bytes of JSON padded to 56
  EXPECT_EQ(tblob_st_header_write(t, 1, nullptr, nullptr, 0, nullptr, 0, nullptr, &d), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_st_header_write(nullptr, 1, nullptr, nullptr, 0, nullptr, 0, &len, &d), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_st_header_write(t, 1, nullptr, nullptr, 1, nullptr, 0, &len, &d), TBLOB_E_INVALID_ARGUMENT);
  t[0].dtype = 9999;
  EXPECT_EQ(tblob_st_header_write(t, 1, nullptr, nullptr, 0, nullptr, 0, &len, &d), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(d.message, "dtype"), nullptr);
  t[0].dtype = TBLOB_DTYPE_F32;
  t[0].data_bytes = ~uint64_t{0};
  const tblob_st_tensor_spec two[] = {t[0], t[0]};
  EXPECT_EQ(tblob_st_header_write(two, 2, nullptr, nullptr, 0, nullptr, 0, &len, &d), TBLOB_E_INVALID_ARGUMENT);
}

}  // namespace
