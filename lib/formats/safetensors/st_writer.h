// Writing safetensors headers byte for byte as Go's writer does.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/allocator.h"

namespace tblob {

// A JSON string as Go's encoding/json writes it (escapes <, >, &, U+2028/9).
bool go_json_string(ByteBuf *b, const char *p, size_t n);

// The Go writer's blob header for a tensor list (sorted keys; per tensor dtype, shape,
// data_offsets; data in list order; spaces to a multiple of 8). Appends the 8-byte length
// and the padded header to out.
struct HeaderTensor {
  const char *name;
  size_t name_len;
  uint32_t dtype;
  const uint64_t *shape;
  uint32_t rank;
  uint64_t bytes;
};
// meta_n > 0: a "__metadata__" object of string pairs first (in the given order), as the
// export writes {"format":"pt"}; the Ollama import passes none.
bool go_writer_header(const HeaderTensor *ts, size_t n, ByteBuf *out, const char *const *meta_keys = nullptr,
                      const char *const *meta_values = nullptr, size_t meta_n = 0);

}  // namespace tblob
