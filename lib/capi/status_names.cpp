// Names and one-line messages of every status; docs/errors.md explains each at length.
#include "tensorblob.h"

namespace {
struct StatusText {
  tblob_status status;
  const char *name;
  const char *message;
};
#define TBLOB_S(name, msg) {name, #name, msg}
const StatusText kStatusText[] = {
    TBLOB_S(TBLOB_OK, "success"),
    TBLOB_S(TBLOB_E_INVALID_ARGUMENT, "invalid argument"),
    TBLOB_S(TBLOB_E_OUT_OF_MEMORY, "out of memory"),
    TBLOB_S(TBLOB_E_IO, "input/output error"),
    TBLOB_S(TBLOB_E_NOT_FOUND, "not found"),
    TBLOB_S(TBLOB_E_UNKNOWN_FORMAT, "content matches no supported container format"),
    TBLOB_S(TBLOB_E_BUFFER_TOO_SMALL, "buffer too small for the result"),
    TBLOB_S(TBLOB_E_CANCELLED, "cancelled by a callback"),
    TBLOB_S(TBLOB_E_RANGE, "index or range out of bounds"),
    TBLOB_S(TBLOB_E_UNSUPPORTED, "valid input this build cannot handle"),
    TBLOB_S(TBLOB_E_FEATURE_DISABLED, "the feature was disabled at build time"),
    TBLOB_S(TBLOB_E_HEADER_TOO_SMALL, "file shorter than the 8-byte header length"),
    TBLOB_S(TBLOB_E_HEADER_TOO_LARGE, "header length above the format limit of 100,000,000 bytes"),
    TBLOB_S(TBLOB_E_HEADER_LENGTH, "header length points past the end of the file"),
    TBLOB_S(TBLOB_E_UTF8, "header is not valid UTF-8"),
    TBLOB_S(TBLOB_E_JSON, "header is not valid JSON"),
    TBLOB_S(TBLOB_E_SCHEMA, "header JSON does not have the safetensors structure"),
    TBLOB_S(TBLOB_E_DTYPE, "unknown dtype"),
    TBLOB_S(TBLOB_E_SHAPE, "shape or offset value is not an integer in [0, 2^64)"),
    TBLOB_S(TBLOB_E_SHAPE_OVERFLOW, "element or bit count overflows 64 bits"),
    TBLOB_S(TBLOB_E_MISALIGNED, "sub-byte tensor does not fill whole bytes"),
    TBLOB_S(TBLOB_E_TENSOR_SIZE, "data_offsets length differs from the size of dtype and shape"),
    TBLOB_S(TBLOB_E_OFFSETS, "tensor data ranges leave a hole or overlap"),
    TBLOB_S(TBLOB_E_TRAILING_BYTES, "bytes after the last tensor"),
    TBLOB_S(TBLOB_E_TRUNCATED, "file ends before the last tensor"),
    TBLOB_S(TBLOB_E_DUPLICATE_NAME, "two tensors share a name"),
    TBLOB_S(TBLOB_E_METADATA, "__metadata__ is not an object of unique string keys and string values"),
    TBLOB_S(TBLOB_E_SHARD_INDEX, "shard index is inconsistent with the shards"),
    TBLOB_S(TBLOB_E_LIMIT_HEADER_BYTES, "header larger than the configured limit"),
    TBLOB_S(TBLOB_E_LIMIT_TENSORS, "more tensors than the configured limit"),
    TBLOB_S(TBLOB_E_LIMIT_RANK, "more dimensions than the configured limit"),
    TBLOB_S(TBLOB_E_LIMIT_NAME_BYTES, "name longer than the configured limit"),
    TBLOB_S(TBLOB_E_LIMIT_JSON_DEPTH, "JSON nested deeper than the configured limit"),
    TBLOB_S(TBLOB_E_LIMIT_FILES, "more files than the configured limit"),
    TBLOB_S(TBLOB_E_HASH_COLLISION, "two names share a 64-bit hash"),
    TBLOB_S(TBLOB_E_DIGEST_MISMATCH, "content hash differs from its address"),
    // @@dequant-status
    // @@ollama-status
    // @@uqff-status
    // @@slm1-status
};
#undef TBLOB_S

const StatusText *find(tblob_status s) {
  for (const StatusText &t : kStatusText)
    if (t.status == s) return &t;
  return nullptr;
}
}  // namespace

extern "C" {

TBLOB_API const char *tblob_status_name(tblob_status status) noexcept {
  const StatusText *t = find(status);
  return t ? t->name : "TBLOB_E_UNKNOWN_STATUS";
}

TBLOB_API const char *tblob_status_message(tblob_status status) noexcept {
  const StatusText *t = find(status);
  return t ? t->message : "unknown status";
}

}  // extern "C"
