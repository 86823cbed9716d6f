// Names and one-line messages of every status; docs/errors.md explains each at length.
#include <cstring>

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
    TBLOB_S(TBLOB_E_SOURCE_SHORT_READ, "a byte source returned fewer bytes than asked"),
    TBLOB_S(TBLOB_E_SOURCE_OVERREAD, "a byte source claimed more bytes than asked"),
    TBLOB_S(TBLOB_E_SOURCE_CHANGED, "the byte source's size or content changed while open"),
    TBLOB_S(TBLOB_E_NOT_MAPPED, "no zero-copy view of a model read through a byte source"),
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
    TBLOB_S(TBLOB_E_QUANT_SCHEME, "unknown quantization scheme, bit width or special-value mode"),
    TBLOB_S(TBLOB_E_QUANT_GROUP_SIZE, "group size is zero, does not divide the row, or is not the scheme's"),
    TBLOB_S(TBLOB_E_QUANT_PACKING, "quantized codes do not fill whole packing units"),
    TBLOB_S(TBLOB_E_QUANT_DATA_SIZE, "packed data length differs from what the logical shape needs"),
    TBLOB_S(TBLOB_E_QUANT_SCALE_DTYPE, "scale encoding is not allowed for the quantization scheme"),
    TBLOB_S(TBLOB_E_QUANT_SCALE_SIZE, "scale tensor length differs from one scale per group"),
    TBLOB_S(TBLOB_E_QUANT_BIAS_DTYPE, "bias missing, of a dtype other than the scales', or not allowed"),
    TBLOB_S(TBLOB_E_QUANT_BIAS_SIZE, "bias tensor length differs from one bias per group"),
    TBLOB_S(TBLOB_E_QUANT_GLOBAL_SCALE, "global scale is not one f32 on an nvfp4 tensor"),
    TBLOB_S(TBLOB_E_DEQUANT_OUT_DTYPE, "dequantization output dtype must be F32, F16 or BF16"),
    TBLOB_S(TBLOB_E_KERNEL_UNAVAILABLE, "unknown kernel set, or one this host cannot run"),
    TBLOB_S(TBLOB_E_NOT_DEQUANTIZABLE, "tensor is neither quantized nor floating point"),
    TBLOB_S(TBLOB_E_OLLAMA_NAME, "model name or tag breaks the Ollama name grammar"),
    TBLOB_S(TBLOB_E_OLLAMA_DIGEST, "digest is not sha256: (or sha256- for files) + 64 lowercase hex digits"),
    TBLOB_S(TBLOB_E_OLLAMA_PATH, "path would leave the store or pass through a symlink"),
    TBLOB_S(TBLOB_E_OLLAMA_NOT_A_FILE, "manifest or blob path is not a regular file"),
    TBLOB_S(TBLOB_E_OLLAMA_NOT_A_STORE, "directory has no manifests/ and blobs/: not an Ollama store"),
    TBLOB_S(TBLOB_E_OLLAMA_MODEL_NOT_FOUND, "no manifest for that model in the store"),
    TBLOB_S(TBLOB_E_OLLAMA_MODEL_REQUIRED, "the store holds several models: name one"),
    TBLOB_S(TBLOB_E_OLLAMA_MANIFEST_ZERO_LENGTH, "manifest file is zero bytes long"),
    TBLOB_S(TBLOB_E_OLLAMA_MANIFEST_EMPTY, "manifest holds no JSON document (only whitespace or NUL bytes)"),
    TBLOB_S(TBLOB_E_OLLAMA_MANIFEST_TRUNCATED, "manifest JSON ends early (truncated write)"),
    TBLOB_S(TBLOB_E_OLLAMA_MANIFEST_DOUBLED, "manifest has a second JSON document or other bytes after the first"),
    TBLOB_S(TBLOB_E_OLLAMA_MANIFEST_JSON, "manifest is not valid JSON"),
    TBLOB_S(TBLOB_E_OLLAMA_MANIFEST_SCHEMA, "manifest JSON lacks a field or has one of the wrong type"),
    TBLOB_S(TBLOB_E_OLLAMA_MANIFEST_VERSION, "manifest schemaVersion or mediaType is not supported"),
    TBLOB_S(TBLOB_E_OLLAMA_LIMIT_MANIFEST, "manifest larger than the configured limit"),
    TBLOB_S(TBLOB_E_OLLAMA_LAYER_CONFLICT, "one digest is listed with different sizes or media types"),
    TBLOB_S(TBLOB_E_OLLAMA_BLOB_MISSING, "a layer's blob is missing from the store"),
    TBLOB_S(TBLOB_E_OLLAMA_BLOB_PARTIAL, "a layer's blob exists only as a partial download"),
    TBLOB_S(TBLOB_E_OLLAMA_BLOB_SIZE, "blob length differs from the size in the manifest"),
    TBLOB_S(TBLOB_E_OLLAMA_BLOB_EMPTY, "blob is empty (its hash is e3b0c442..., the hash of no bytes)"),
    TBLOB_S(TBLOB_E_OLLAMA_LAYER_MISMATCH, "manifest dtype or shape differs from the blob header"),
    TBLOB_S(TBLOB_E_OLLAMA_NO_TENSORS, "model has no safetensors tensor layers"),
    TBLOB_S(TBLOB_E_OLLAMA_CONFIG_JSON, "a config or JSON layer is not valid JSON"),
    TBLOB_S(TBLOB_E_OLLAMA_LIMIT_CONFIG, "a config or JSON layer is larger than the configured limit"),
    TBLOB_S(TBLOB_E_OLLAMA_IMPORT_SOURCE, "the import source directory cannot be imported"),
    TBLOB_S(TBLOB_E_OLLAMA_CORRUPT_STORE, "a manifest cannot be read, so unreferenced blobs are unknown"),
    TBLOB_S(TBLOB_E_OLLAMA_COMPONENT, "no layer belongs to the requested component or part"),
    TBLOB_S(TBLOB_E_UQFF_NO_VERSION, "UQFF set without version tensors (pre-1.0?)"),
    TBLOB_S(TBLOB_E_UQFF_PRE_1_0, "pre-1.0 UQFF layout (tensors named by number): regenerate"),
    TBLOB_S(TBLOB_E_UQFF_VERSION_MAJOR, "UQFF major version this library does not read: regenerate"),
    TBLOB_S(TBLOB_E_UQFF_VERSION_NEWER, "UQFF written by a newer mistral.rs: upgrade"),
    TBLOB_S(TBLOB_E_UQFF_VERSION_CONFLICT, "UQFF version tensors differ between shards"),
    TBLOB_S(TBLOB_E_UQFF_SCALAR, "UQFF scalar entry is not a 0-d tensor of its dtype"),
    TBLOB_S(TBLOB_E_UQFF_DUPLICATE_KEY, "UQFF tensor key in two shards (or a shard and the residual)"),
    TBLOB_S(TBLOB_E_UQFF_FORMAT_TAG, "UQFF format tag outside 0..6"),
    TBLOB_S(TBLOB_E_UQFF_UNRECOGNIZED, "UQFF entries that form no layer of any family"),
    TBLOB_S(TBLOB_E_UQFF_AMBIGUOUS, "UQFF layer without a format tag whose entries fit several families"),
    TBLOB_S(TBLOB_E_UQFF_MISMATCH, "UQFF layer declares one family but has another's entries"),
    TBLOB_S(TBLOB_E_UQFF_ENTRIES, "UQFF layer lacks entries of its family or has extra ones"),
    TBLOB_S(TBLOB_E_UQFF_ENTRY_DTYPE, "UQFF layer entry has the wrong dtype or rank"),
    TBLOB_S(TBLOB_E_UQFF_GGML_TYPE, "unknown ggml type id or FP8 dtype code in a UQFF layer"),
    TBLOB_S(TBLOB_E_UQFF_PARAM, "UQFF bits, group size or axis outside the family's values"),
    TBLOB_S(TBLOB_E_UQFF_LAYER_SIZE, "UQFF stored sizes disagree with the logical shape"),
    TBLOB_S(TBLOB_E_UQFF_STACK, "UQFF stacked expert layer of a family that cannot be stacked"),
    TBLOB_S(TBLOB_E_UQFF_SHARD_MISSING, "a shard of the UQFF set is missing"),
    TBLOB_S(TBLOB_E_UQFF_SHARD_SET, "no UQFF shard set at the given paths"),
    TBLOB_S(TBLOB_E_UQFF_REPORT, "uqff_report.json is not valid"),
    TBLOB_S(TBLOB_E_UQFF_INCOMPLETE, "a tensor the architecture in config.json needs is missing"),
    TBLOB_S(TBLOB_E_UQFF_PRODUCER, "no uqff.producer in a shard's __metadata__"),
    TBLOB_S(TBLOB_E_UQFF_CONFIG, "config.json beside the UQFF set cannot be read"),
    TBLOB_S(TBLOB_E_SLM1_VERSION, "SLM1 version is not 1"),
    TBLOB_S(TBLOB_E_SLM1_HEADER, "SLM1 header field breaks its rule"),
    TBLOB_S(TBLOB_E_SLM1_TOKENIZER, "SLM1 tokenizer section is malformed or disagrees with the header"),
    TBLOB_S(TBLOB_E_SLM1_ENTRY, "SLM1 directory entry has a bad rank, dim, reserved, block size or scale offset"),
    TBLOB_S(TBLOB_E_SLM1_ALIGNMENT, "SLM1 payload or scale array is not 64-byte aligned"),
    TBLOB_S(TBLOB_E_SLM1_PADDING, "SLM1 padding byte is not zero"),
    TBLOB_S(TBLOB_E_SLM1_SCALE, "SLM1 quantization scale is not finite and positive"),
    TBLOB_S(TBLOB_E_SLM1_CHECKSUM, "SLM1 checksum is zero or does not match"),
    // @@gguf-status
    TBLOB_S(TBLOB_E_GGUF_VERSION, "GGUF version is 0 or newer than 3"),
    TBLOB_S(TBLOB_E_GGUF_V1, "GGUF version 1 is not supported"),
    TBLOB_S(TBLOB_E_GGUF_BIG_ENDIAN, "big-endian GGUF file"),
    TBLOB_S(TBLOB_E_GGUF_TRUNCATED, "GGUF header ends inside a field"),
    TBLOB_S(TBLOB_E_GGUF_COUNT, "GGUF tensor or key/value count exceeds what the file can hold"),
    TBLOB_S(TBLOB_E_GGUF_STRING, "GGUF string length exceeds the bytes left or 2^30"),
    TBLOB_S(TBLOB_E_GGUF_ARRAY, "GGUF array count exceeds the bytes left or 2^30, or the array is nested"),
    TBLOB_S(TBLOB_E_GGUF_VALUE_TYPE, "unknown GGUF metadata value type"),
    TBLOB_S(TBLOB_E_GGUF_KEY, "empty or duplicate GGUF metadata key"),
    TBLOB_S(TBLOB_E_GGUF_ALIGNMENT, "general.alignment is not a u32 power of two"),
    TBLOB_S(TBLOB_E_GGUF_NAME, "GGUF tensor name of 64 bytes or more"),
    TBLOB_S(TBLOB_E_GGUF_DIMS, "GGUF tensor has more than 4 dimensions or a negative dimension"),
    TBLOB_S(TBLOB_E_GGUF_TYPE, "unknown or removed ggml tensor type"),
    TBLOB_S(TBLOB_E_GGUF_ROW, "GGUF tensor row is not a whole number of blocks"),
    TBLOB_S(TBLOB_E_GGUF_OFFSET_ALIGN, "GGUF tensor offset is not a multiple of the alignment"),
    TBLOB_S(TBLOB_E_GGUF_DATA_RANGE, "GGUF tensor data lies outside the data region"),
    TBLOB_S(TBLOB_E_GGUF_OVERLAP, "two GGUF tensors' data overlap"),
    TBLOB_S(TBLOB_E_GGUF_LAYOUT, "GGUF tensor is not where the previous tensor's padded end puts it"),
    TBLOB_S(TBLOB_E_GGUF_WRITE_ORDER, "GGUF writer: tensor data out of table order, or header after data"),
    TBLOB_S(TBLOB_E_GGUF_WRITE_SIZE, "GGUF writer: tensor data bytes differ from the declared size"),
    TBLOB_S(TBLOB_E_GGUF_SPLIT_MISSING, "a file of the split GGUF set is missing"),
    TBLOB_S(TBLOB_E_GGUF_SPLIT, "split GGUF set is inconsistent"),
};
#undef TBLOB_S

// A C caller may pass any int as a tblob_status. In C++ a value outside the enumerators' range
// is undefined behaviour to load as the enum, so the argument is read as the int it is.
const StatusText *find(const tblob_status &arg) {
  static_assert(sizeof(tblob_status) == sizeof(int), "tblob_status is int-sized");
  int s;
  std::memcpy(&s, &arg, sizeof(s));
  for (const StatusText &t : kStatusText)
    if (static_cast<int>(t.status) == s) return &t;
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
