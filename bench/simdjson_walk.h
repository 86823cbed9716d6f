// The simdjson on-demand baseline shared by bench_scan and simdjson_walk: iterate the same
// fields tblob_st_scan reports, the way a robust reader does (fields in any order).
#pragma once
#include <simdjson.h>

#include <cstdint>
#include <string_view>

namespace bench {

// For each entry: the key (unescaped: simdjson 3.0 has no raw key with a length; for these
// escape-free names it is a copy), then either the metadata strings, or dtype (string),
// every shape dim (u64) and both data_offsets (u64). Errors throw (simdjson_error).
inline uint64_t simdjson_walk(simdjson::ondemand::parser &parser, const simdjson::padded_string &json) {
  using namespace simdjson;
  uint64_t sum = 0;
  ondemand::document doc = parser.iterate(json);
  ondemand::object top = doc.get_object();
  for (auto field : top) {
    std::string_view key = field.unescaped_key();
    sum += key.size() + static_cast<unsigned char>(key.empty() ? 0 : key[0]);
    ondemand::object entry = field.value().get_object();
    if (key == "__metadata__") {
      for (auto m : entry) {
        std::string_view k = m.unescaped_key();
        std::string_view v = m.value().get_string();
        sum += k.size() + v.size();
      }
      continue;
    }
    for (auto f : entry) {
      std::string_view fk = f.unescaped_key();
      if (fk == "dtype") {
        std::string_view dt = f.value().get_string();
        sum += dt.size() + static_cast<unsigned char>(dt[0]);
      } else if (fk == "shape") {
        for (uint64_t dim : f.value().get_array()) sum += dim;
      } else if (fk == "data_offsets") {
        uint64_t o[2] = {0, 0};
        int i = 0;
        for (uint64_t x : f.value().get_array()) {
          if (i < 2) o[i] = x;
          ++i;
        }
        sum += o[0] ^ o[1];
      }
    }
  }
  return sum;
}

}  // namespace bench
