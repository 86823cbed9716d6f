// Builds safetensors files as exact bytes, in the notation of reference/safetensors.md:
// N (8-byte little-endian header length), T(name,dtype,[shape],b,e) members, H{...} compact
// objects, M{k:v} metadata, Z(k) zero bytes, SP(k) spaces.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace stb {

// The 8-byte little-endian prefix.
inline std::string le64(uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return s;
}

// A complete file: N = header.size(), then the header, then the data bytes.
inline std::string file(const std::string &header, const std::string &data = std::string()) {
  return le64(header.size()) + header + data;
}

// A file whose prefix says n, whatever the header's real length.
inline std::string file_n(uint64_t n, const std::string &header, const std::string &data = std::string()) {
  return le64(n) + header + data;
}

inline std::string Z(size_t k) { return std::string(k, '\0'); }
inline std::string SP(size_t k) { return std::string(k, ' '); }

// Shape text from numbers: {2,2} -> "[2,2]".
inline std::string shape_text(std::initializer_list<uint64_t> dims) {
  std::string s = "[";
  bool first = true;
  for (uint64_t d : dims) {
    if (!first) s += ",";
    s += std::to_string(d);
    first = false;
  }
  return s + "]";
}
inline std::string shape_text(const std::vector<uint64_t> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

// T(name,dtype,[shape],b,e) with the shape given as JSON text (so that malformed values
// can be written): "name":{"dtype":"D","shape":S,"data_offsets":[b,e]}.
// name is written verbatim between quotes (pass JSON escapes as they should appear).
inline std::string Traw(const std::string &name, const std::string &dtype, const std::string &shape,
                        const std::string &offsets) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
         ",\"data_offsets\":" + offsets + "}";
}
inline std::string T(const std::string &name, const std::string &dtype,
                     std::initializer_list<uint64_t> shape, uint64_t b, uint64_t e) {
  return Traw(name, dtype, shape_text(shape),
              "[" + std::to_string(b) + "," + std::to_string(e) + "]");
}
inline std::string T(const std::string &name, const std::string &dtype,
                     const std::vector<uint64_t> &shape, uint64_t b, uint64_t e) {
  return Traw(name, dtype, shape_text(shape),
              "[" + std::to_string(b) + "," + std::to_string(e) + "]");
}

// "__metadata__":{"k":"v",...} (keys and values verbatim).
inline std::string M(std::initializer_list<std::pair<std::string, std::string>> kv) {
  std::string s = "\"__metadata__\":{";
  bool first = true;
  for (const auto &p : kv) {
    if (!first) s += ",";
    s += "\"" + p.first + "\":\"" + p.second + "\"";
    first = false;
  }
  return s + "}";
}

// H{member,member,...}: compact top-level object.
inline std::string H(std::initializer_list<std::string> members) {
  std::string s = "{";
  bool first = true;
  for (const auto &m : members) {
    if (!first) s += ",";
    s += m;
    first = false;
  }
  return s + "}";
}
inline std::string H(const std::vector<std::string> &members) {
  std::string s = "{";
  for (size_t i = 0; i < members.size(); ++i) {
    if (i) s += ",";
    s += members[i];
  }
  return s + "}";
}

// Pads a header with spaces to a multiple of 8, as the reference writer does.
inline std::string pad8(std::string h) {
  while (h.size() % 8) h += ' ';
  return h;
}

// Little-endian float bytes.
inline std::string f32le(std::initializer_list<float> vals) {
  std::string s;
  for (float v : vals) {
    uint32_t u;
    std::memcpy(&u, &v, 4);
    for (int i = 0; i < 4; ++i) s += static_cast<char>((u >> (8 * i)) & 0xFF);
  }
  return s;
}

inline std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int v : b) s += static_cast<char>(v);
  return s;
}

// The reference's dtype list in its "alignment order" (reference/safetensors.md 1.4).
inline const std::vector<std::pair<std::string, unsigned>> &dtype_table() {
  static const std::vector<std::pair<std::string, unsigned>> t = {
      {"BOOL", 8},        {"F4", 4},           {"F6_E2M3", 6},     {"F6_E3M2", 6},
      {"U8", 8},          {"I8", 8},           {"F8_E5M2", 8},     {"F8_E4M3", 8},
      {"F8_E8M0", 8},     {"F8_E4M3FNUZ", 8},  {"F8_E5M2FNUZ", 8}, {"I16", 16},
      {"U16", 16},        {"F16", 16},         {"BF16", 16},       {"I32", 32},
      {"U32", 32},        {"F32", 32},         {"C64", 64},        {"F64", 64},
      {"I64", 64},        {"U64", 64}};
  return t;
}
inline size_t dtype_rank(const std::string &d) {
  for (size_t i = 0; i < dtype_table().size(); ++i)
    if (dtype_table()[i].first == d) return i;
  return SIZE_MAX;
}
inline unsigned dtype_bits(const std::string &d) { return dtype_table()[dtype_rank(d)].second; }

struct Spec {
  std::string name;  // written verbatim between quotes
  std::string dtype;
  std::vector<uint64_t> shape;
  std::string data;  // exactly the tensor's bytes
  uint64_t begin = 0, end = 0;  // filled by write_like_reference
};

// Lays tensors out as the reference writer does (prepare()): sorted by dtype alignment
// order, descending, then by name; contiguous data; metadata first; header padded with
// spaces to a multiple of 8. Fills each spec's begin/end.
inline std::string write_like_reference(std::vector<Spec> *specs,
                                        const std::vector<std::pair<std::string, std::string>> &meta = {}) {
  std::vector<size_t> order(specs->size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const size_t ra = dtype_rank((*specs)[a].dtype), rb = dtype_rank((*specs)[b].dtype);
    if (ra != rb) return ra > rb;
    return (*specs)[a].name < (*specs)[b].name;
  });
  std::vector<std::string> members;
  if (!meta.empty()) {
    std::string m = "\"__metadata__\":{";
    for (size_t i = 0; i < meta.size(); ++i)
      m += (i ? "," : "") + std::string("\"") + meta[i].first + "\":\"" + meta[i].second + "\"";
    members.push_back(m + "}");
  }
  std::string data;
  for (size_t i : order) {
    Spec &s = (*specs)[i];
    s.begin = data.size();
    data += s.data;
    s.end = data.size();
    members.push_back(T(s.name, s.dtype, s.shape, s.begin, s.end));
  }
  return file(pad8(H(members)), data);
}

}  // namespace stb
