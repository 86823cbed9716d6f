// The SLM1 fixed header (docs/slm1.md section 3): parsing and the field rules, shared by the
// reader (which reports byte offsets) and the writer (which must never write a file the
// reader rejects).
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/limits.h"
#include "core/status.h"

namespace tblob {
namespace slm1 {

struct Header {
  uint32_t version = 0;
  uint32_t header_length = 0;
  uint32_t model_type = 0;
  uint32_t flags = 0;
  uint32_t vocab_size = 0;
  uint32_t special_token_count = 0;
  uint32_t hidden_size = 0;
  uint32_t layer_count = 0;
  uint32_t head_count = 0;
  uint32_t kv_head_count = 0;
  uint32_t head_dim = 0;
  uint32_t ffn_size = 0;
  uint32_t max_context = 0;
  float rope_theta = 0.0f;
  float rms_norm_epsilon = 0.0f;
  uint64_t tokenizer_offset = 0;
  uint64_t tokenizer_length = 0;
  uint64_t directory_offset = 0;
  uint32_t tensor_count = 0;
  uint64_t data_offset = 0;
  uint64_t checksum = 0;
};

// The first broken rule among flags and the hyperparameters, in offset order (section 3).
struct HeaderProblem {
  uint64_t offset = 0;        // byte offset of the field in the header
  const char *field = "";     // its name in docs/slm1.md
  char why[112] = {0};        // "is 0; it must be non-zero"
};
bool header_fields_ok(const Header &h, HeaderProblem *p);

// Steps 1-3 of section 11: length, magic, version, header fields, section offsets, the
// tensor_count bound (before anything is allocated). Reads only [file, file + file_len).
Status read_header(const uint8_t *file, uint64_t file_len, const Limits &limits, Header *out,
                   const Diag &diag);

// Writes the 108 header bytes (checksum as stored in h).
void encode_header(const Header &h, uint8_t out[108]);

}  // namespace slm1
}  // namespace tblob
