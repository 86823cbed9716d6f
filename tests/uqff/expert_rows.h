// Stacked UQFF layers ([E, out, in]) dequantize through tblob_tensor_dequantize as E * out
// rows: expert e is rows [e * out, (e + 1) * out). These helpers turn "expert e, its rows
// [rb, re)" into that range (expert UINT64_MAX: the whole folded view, rows as given).
#pragma once
#include <cstdint>
#include <string>

#include "tensorblob.h"

inline void to_rows(const tblob_model *m, uint64_t index, uint64_t expert, uint64_t *rb, uint64_t *re) {
  if (expert == UINT64_MAX) return;
  tblob_uqff_layer_info li = TBLOB_UQFF_LAYER_INFO_INIT;
  if (tblob_uqff_layer_info_at(m, index, &li, nullptr) != TBLOB_OK) return;
  const uint64_t base = expert * li.rows;
  *re = *re == UINT64_MAX ? base + li.rows : base + *re;
  *rb = base + *rb;
}

inline int detect(const std::string &path) {
  int is_uqff = -1;
  if (tblob_uqff_detect(path.c_str(), &is_uqff, nullptr) != TBLOB_OK) return -1;
  return is_uqff;
}
