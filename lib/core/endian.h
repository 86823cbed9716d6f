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

// One body for every width: memcpy, then a swap on big-endian hosts.
template <class T>
inline T byte_swap_if_big(T v) {
#if TBLOB_HOST_BIG_ENDIAN
  if (sizeof(T) == 2) return static_cast<T>(__builtin_bswap16(static_cast<uint16_t>(v)));
  if (sizeof(T) == 4) return static_cast<T>(__builtin_bswap32(static_cast<uint32_t>(v)));
  return static_cast<T>(__builtin_bswap64(static_cast<uint64_t>(v)));
#else
  return v;
#endif
}
template <class T>
inline T load_le(const void *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return byte_swap_if_big(v);
}
template <class T>
inline void store_le(void *p, T v) {
  v = byte_swap_if_big(v);
  std::memcpy(p, &v, sizeof(T));
}

inline uint16_t load_le16(const void *p) { return load_le<uint16_t>(p); }
inline uint32_t load_le32(const void *p) { return load_le<uint32_t>(p); }
inline uint64_t load_le64(const void *p) { return load_le<uint64_t>(p); }
inline void store_le32(void *p, uint32_t v) { store_le(p, v); }
inline void store_le64(void *p, uint64_t v) { store_le(p, v); }

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
