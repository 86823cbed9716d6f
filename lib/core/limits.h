// Effective limits for one open or scan call, resolved from tblob_open_options.
#pragma once
#include <cstdint>

#include "tensorblob.h"

namespace tblob {

// Deepest JSON nesting any parser here follows (json_lex.cpp's fixed container stack).
constexpr uint32_t kMaxJsonDepth = 1024;

// The largest config.json (or similar side file) any part reads.
constexpr uint64_t kMaxConfigJsonBytes = 64ull << 20;

struct Limits {
  uint64_t max_header_bytes = TBLOB_SAFETENSORS_MAX_HEADER;
  uint64_t max_tensors = UINT64_MAX;
  uint64_t max_name_bytes = UINT64_MAX;
  uint32_t max_rank = UINT32_MAX;
  uint32_t max_json_depth = TBLOB_DEFAULT_JSON_DEPTH;
  uint32_t max_files = 4096;
  uint32_t mode = TBLOB_OPEN_MAP;
  uint32_t flags = 0;
  const tblob_allocator *allocator = nullptr;
};

// Reads the fields present in options (older, shorter structs keep the defaults of the
// fields they lack). False when options->struct_size is too small to be an options struct,
// the mode is unknown, or the allocator hook is incomplete.
bool resolve_limits(const tblob_open_options *options, Limits *out);

}  // namespace tblob
