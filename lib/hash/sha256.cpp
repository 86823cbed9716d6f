#include "hash/sha256.h"

#include <openssl/evp.h>

namespace tblob {

Sha256::~Sha256() {
  if (ctx_) EVP_MD_CTX_free(static_cast<EVP_MD_CTX *>(ctx_));
}

bool Sha256::init() {
  if (!ctx_) ctx_ = EVP_MD_CTX_new();
  if (!ctx_) return false;
  return EVP_DigestInit_ex(static_cast<EVP_MD_CTX *>(ctx_), EVP_sha256(), nullptr) == 1;
}

bool Sha256::update(const void *p, size_t n) {
  if (!ctx_) return false;
  return n == 0 || EVP_DigestUpdate(static_cast<EVP_MD_CTX *>(ctx_), p, n) == 1;
}

bool Sha256::final(uint8_t out[kSha256Bytes]) {
  if (!ctx_) return false;
  unsigned int len = 0;
  return EVP_DigestFinal_ex(static_cast<EVP_MD_CTX *>(ctx_), out, &len) == 1 && len == kSha256Bytes;
}

bool sha256(const void *p, size_t n, uint8_t out[kSha256Bytes]) {
  unsigned int len = 0;
  return EVP_Digest(p, n, out, &len, EVP_sha256(), nullptr) == 1 && len == kSha256Bytes;
}

void sha256_hex(const uint8_t digest[kSha256Bytes], char out[kSha256HexChars]) {
  static const char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < kSha256Bytes; ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 15];
  }
}

}  // namespace tblob
