// Little-endian loads and stores at any alignment: every on-disk integer and float field
// in the library is read and written through these. memcpy compiles to one load on
// little-endian hosts; big-endian hosts swap.
#pragma once
#include <cstdint>
#include <cstring>

namespace tblob {

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define TBLOB_HOST_BIG_ENDIAN 1
#else
#define TBLOB_HOST_BIG_ENDIAN 0
#endif

inline uint16_t load_le16(const void *p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
#if TBLOB_HOST_BIG_ENDIAN
  v = __builtin_bswap16(v);
#endif
  return v;
}
inline uint32_t load_le32(const void *p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
#if TBLOB_HOST_BIG_ENDIAN
  v = __builtin_bswap32(v);
#endif
  return v;
}
inline uint64_t load_le64(const void *p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
#if TBLOB_HOST_BIG_ENDIAN
  v = __builtin_bswap64(v);
#endif
  return v;
}
inline void store_le32(void *p, uint32_t v) {
#if TBLOB_HOST_BIG_ENDIAN
  v = __builtin_bswap32(v);
#endif
  std::memcpy(p, &v, 4);
}
inline void store_le64(void *p, uint64_t v) {
#if TBLOB_HOST_BIG_ENDIAN
  v = __builtin_bswap64(v);
#endif
  std::memcpy(p, &v, 8);
}

// f32 fields, by their bits.
inline float load_le_f32(const void *p) {
  const uint32_t u = load_le32(p);
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline void store_le_f32(void *p, float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  store_le32(p, u);
}

}  // namespace tblob
