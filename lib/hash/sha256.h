// SHA-256 through OpenSSL's libcrypto (EVP; SHA-NI / AVX2 when the CPU has them).
// Exception-free: every failure is a false return.
#pragma once
#include <cstddef>
#include <cstdint>

namespace tblob {

constexpr size_t kSha256Bytes = 32;
constexpr size_t kSha256HexChars = 64;

class Sha256 {
 public:
  Sha256() = default;
  Sha256(const Sha256 &) = delete;
  Sha256 &operator=(const Sha256 &) = delete;
  ~Sha256();
  // (Re)starts a digest. False when libcrypto cannot allocate its context.
  bool init();
  bool update(const void *p, size_t n);
  // Writes 32 bytes; the object must be init()ed again before reuse.
  bool final(uint8_t out[kSha256Bytes]);

 private:
  void *ctx_ = nullptr;  // EVP_MD_CTX
};

// One-shot digest of a buffer.
bool sha256(const void *p, size_t n, uint8_t out[kSha256Bytes]);
// 64 lowercase hex characters (no NUL written).
void sha256_hex(const uint8_t digest[kSha256Bytes], char out[kSha256HexChars]);

}  // namespace tblob
