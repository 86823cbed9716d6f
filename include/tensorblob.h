/*
 * tensorblob: open, validate, look up and dequantize model-weight containers.
 *
 * The whole public API. Plain C99, no varargs, no unions, explicit lengths.
 *
 * Conventions (see docs/api.md):
 *  - Every fallible call returns tblob_status (TBLOB_OK == 0, errors < 0, numbers pinned
 *    forever) and takes an optional tblob_diag* last, which receives the status, the byte
 *    offset, the tensor index and a message naming the tensor and field.
 *  - Structs passed in or out begin with uint32_t struct_size; initialise them with the
 *    matching _INIT macro so that fields can be appended without breaking the ABI.
 *  - Handles are immutable after open; every query is thread-safe on a shared handle.
 *  - Names come back as pointer + length borrowed from the handle, valid until close.
 */
#ifndef TENSORBLOB_H
#define TENSORBLOB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(TBLOB_BUILDING_DLL)
#define TBLOB_API __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#define TBLOB_API __attribute__((visibility("default")))
#else
#define TBLOB_API
#endif

#if defined(__cplusplus)
#define TBLOB_NOEXCEPT noexcept
#else
#define TBLOB_NOEXCEPT
#endif

#define TBLOB_VERSION_MAJOR 0
#define TBLOB_VERSION_MINOR 1
#define TBLOB_VERSION_PATCH 0
#define TBLOB_VERSION_NUMBER \
  (TBLOB_VERSION_MAJOR * 10000 + TBLOB_VERSION_MINOR * 100 + TBLOB_VERSION_PATCH)

/* Returns TBLOB_VERSION_NUMBER of the library actually linked. */
TBLOB_API uint32_t tblob_version(void) TBLOB_NOEXCEPT;
/* "MAJOR.MINOR.PATCH", static storage. */
TBLOB_API const char *tblob_version_string(void) TBLOB_NOEXCEPT;

/* ------------------------------------------------------------------------------------------
 * Status codes. The numbers are pinned: never renumbered, never reused.
 * docs/errors.md explains each one.
 * ---------------------------------------------------------------------------------------- */
typedef int32_t tblob_status;
enum {
  TBLOB_OK = 0,

  /* General (-1 .. -19) */
  TBLOB_E_INVALID_ARGUMENT = -1,  /* NULL where a value is required, bad struct_size, ... */
  TBLOB_E_OUT_OF_MEMORY = -2,     /* the allocator returned NULL */
  TBLOB_E_IO = -3,                /* open/read/mmap/stat failed */
  TBLOB_E_NOT_FOUND = -4,         /* no tensor / key / file of that name */
  TBLOB_E_UNKNOWN_FORMAT = -5,    /* content matches no supported container */
  TBLOB_E_BUFFER_TOO_SMALL = -6,  /* a caller buffer is smaller than the result */
  TBLOB_E_CANCELLED = -7,         /* a callback returned non-zero */
  TBLOB_E_RANGE = -8,             /* index or row range outside the tensor / table */
  TBLOB_E_UNSUPPORTED = -9,       /* valid input that this build cannot handle */
  TBLOB_E_FEATURE_DISABLED = -10, /* the format or part was compiled out */

  /* safetensors container (-20 .. -49), in the reference implementation's check order */
  TBLOB_E_HEADER_TOO_SMALL = -20,   /* fewer than 8 bytes */
  TBLOB_E_HEADER_TOO_LARGE = -21,   /* header length above the format cap (100,000,000) */
  TBLOB_E_HEADER_LENGTH = -22,      /* 8 + header length exceeds the buffer */
  TBLOB_E_UTF8 = -23,               /* header bytes are not valid UTF-8 */
  TBLOB_E_JSON = -24,               /* JSON grammar error */
  TBLOB_E_SCHEMA = -25,             /* valid JSON, wrong structure (missing field, wrong type) */
  TBLOB_E_DTYPE = -26,              /* unknown dtype name */
  TBLOB_E_SHAPE = -27,              /* a shape or offset value is not an integer in [0, 2^64) */
  TBLOB_E_SHAPE_OVERFLOW = -28,     /* element or bit count overflows 64 bits */
  TBLOB_E_MISALIGNED = -29,         /* sub-byte dtype whose bit count is not a multiple of 8 */
  TBLOB_E_TENSOR_SIZE = -30,        /* end - begin differs from the size shape and dtype give */
  TBLOB_E_OFFSETS = -31,            /* data ranges do not tile the data region (hole/overlap) */
  TBLOB_E_TRAILING_BYTES = -32,     /* bytes after the last tensor (polyglot file) */
  TBLOB_E_TRUNCATED = -33,          /* data region shorter than the tensors need */
  TBLOB_E_DUPLICATE_NAME = -34,     /* two tensors with one name (also after unescaping) */
  TBLOB_E_METADATA = -35,           /* __metadata__ not an object of strings, duplicate key */
  TBLOB_E_SHARD_INDEX = -36,        /* model.safetensors.index.json inconsistent */

  /* Limits (-50 .. -59): each limit in tblob_open_options has its own status */
  TBLOB_E_LIMIT_HEADER_BYTES = -50,
  TBLOB_E_LIMIT_TENSORS = -51,
  TBLOB_E_LIMIT_RANK = -52,
  TBLOB_E_LIMIT_NAME_BYTES = -53,
  TBLOB_E_LIMIT_JSON_DEPTH = -54,
  TBLOB_E_LIMIT_FILES = -55,

  /* Hashing and lookup (-60 .. -69) */
  TBLOB_E_HASH_COLLISION = -60,     /* two names share a 64-bit hash; never guessed */
  TBLOB_E_DIGEST_MISMATCH = -61,    /* content hash differs from its address */

  /* Dequantization (-70 .. -99) */
  /* @@dequant-status */

  /* Ollama stores, manifests, blobs (-100 .. -139) */
  /* @@ollama-status */

  /* UQFF (-140 .. -169) */
  /* @@uqff-status */

  /* SLM1 (-170 .. -199) */
  /* @@slm1-status */

  TBLOB_STATUS_MIN_ = -200
};

/* "TBLOB_E_JSON" etc.; "TBLOB_E_UNKNOWN_STATUS" for numbers not in the enum. Static. */
TBLOB_API const char *tblob_status_name(tblob_status status) TBLOB_NOEXCEPT;
/* A one-line English description of the status. Static. */
TBLOB_API const char *tblob_status_message(tblob_status status) TBLOB_NOEXCEPT;

/* ------------------------------------------------------------------------------------------
 * Diagnostics: caller-owned, filled on error (and reset on success). No allocation.
 * ---------------------------------------------------------------------------------------- */
#define TBLOB_DIAG_MESSAGE_BYTES 256
#define TBLOB_NO_OFFSET UINT64_MAX
typedef struct tblob_diag {
  uint32_t struct_size;
  tblob_status status;
  uint64_t offset;       /* byte offset in the file or buffer, TBLOB_NO_OFFSET if none */
  int64_t tensor_index;  /* index in the model's table (or in the header), -1 if none */
  char message[TBLOB_DIAG_MESSAGE_BYTES]; /* NUL-terminated, names tensor/field/offset */
} tblob_diag;
#define TBLOB_DIAG_INIT {(uint32_t)sizeof(tblob_diag), 0, TBLOB_NO_OFFSET, -1, {0}}

/* ------------------------------------------------------------------------------------------
 * Element types. The 22 safetensors dtypes; values pinned.
 * ---------------------------------------------------------------------------------------- */
typedef enum tblob_dtype {
  TBLOB_DTYPE_INVALID = 0,
  TBLOB_DTYPE_BOOL = 1,
  TBLOB_DTYPE_U8 = 2,
  TBLOB_DTYPE_I8 = 3,
  TBLOB_DTYPE_I16 = 4,
  TBLOB_DTYPE_U16 = 5,
  TBLOB_DTYPE_F16 = 6,
  TBLOB_DTYPE_BF16 = 7,
  TBLOB_DTYPE_I32 = 8,
  TBLOB_DTYPE_U32 = 9,
  TBLOB_DTYPE_F32 = 10,
  TBLOB_DTYPE_F64 = 11,
  TBLOB_DTYPE_I64 = 12,
  TBLOB_DTYPE_U64 = 13,
  TBLOB_DTYPE_C64 = 14,
  TBLOB_DTYPE_F8_E5M2 = 15,
  TBLOB_DTYPE_F8_E4M3 = 16,
  TBLOB_DTYPE_F8_E8M0 = 17,
  TBLOB_DTYPE_F8_E4M3FNUZ = 18,
  TBLOB_DTYPE_F8_E5M2FNUZ = 19,
  TBLOB_DTYPE_F4 = 20,
  TBLOB_DTYPE_F6_E2M3 = 21,
  TBLOB_DTYPE_F6_E3M2 = 22,
  TBLOB_DTYPE_COUNT_ = 23
} tblob_dtype;

/* "F32", "BF16", ... as the safetensors header spells them; NULL for an invalid value. */
TBLOB_API const char *tblob_dtype_name(uint32_t dtype) TBLOB_NOEXCEPT;
/* Bits per element (4 for F4, 6 for F6_*); 0 for an invalid value. */
TBLOB_API uint32_t tblob_dtype_bits(uint32_t dtype) TBLOB_NOEXCEPT;
/* Parses an exact (case-sensitive) dtype name. TBLOB_E_DTYPE if unknown. */
TBLOB_API tblob_status tblob_dtype_from_name(const char *name, size_t name_len, uint32_t *out) TBLOB_NOEXCEPT;

/* ------------------------------------------------------------------------------------------
 * Allocation hook. The handle copies this struct; alloc/free and opaque must stay valid
 * until the handle is closed. alloc returns memory aligned to at least 16 bytes or NULL.
 * ---------------------------------------------------------------------------------------- */
typedef struct tblob_allocator {
  uint32_t struct_size;
  void *(*alloc)(void *opaque, size_t size);
  void (*free)(void *opaque, void *ptr, size_t size);
  void *opaque;
} tblob_allocator;
#define TBLOB_ALLOCATOR_INIT {(uint32_t)sizeof(tblob_allocator), NULL, NULL, NULL}

/* ------------------------------------------------------------------------------------------
 * Open options and limits.
 * Defaults accept everything the safetensors reference implementation accepts.
 * TBLOB_OPEN_OPTIONS_COMPACT_INIT is the documented preset for mobile (docs/limits.md).
 * ---------------------------------------------------------------------------------------- */
typedef enum tblob_open_mode {
  TBLOB_OPEN_MAP = 0,  /* mmap the file; zero copy. A file truncated while open can fault. */
  TBLOB_OPEN_READ = 1  /* read the bytes into memory owned by the handle; immune to that. */
} tblob_open_mode;

#define TBLOB_SAFETENSORS_MAX_HEADER 100000000u
#define TBLOB_DEFAULT_JSON_DEPTH 128u

typedef struct tblob_open_options {
  uint32_t struct_size;
  uint32_t mode;             /* tblob_open_mode */
  uint64_t max_header_bytes; /* JSON header bytes; capped by the format (100,000,000) */
  uint64_t max_tensors;      /* tensors per model */
  uint64_t max_name_bytes;   /* bytes of one tensor name or metadata key */
  uint32_t max_rank;         /* dimensions per tensor */
  uint32_t max_json_depth;   /* nesting depth, counted as serde_json counts it */
  uint32_t max_files;        /* shards per model */
  uint32_t flags;            /* TBLOB_OPEN_FLAG_* */
  const tblob_allocator *allocator; /* NULL: libc malloc/free */
} tblob_open_options;

#define TBLOB_OPEN_OPTIONS_INIT                                                    \
  {(uint32_t)sizeof(tblob_open_options), TBLOB_OPEN_MAP, TBLOB_SAFETENSORS_MAX_HEADER, \
   UINT64_MAX, UINT64_MAX, UINT32_MAX, TBLOB_DEFAULT_JSON_DEPTH, 4096u, 0u, NULL}
/* Mobile preset: 16 MiB header, 65,536 tensors, 1 KiB names, rank 8, depth 32, 256 files. */
#define TBLOB_OPEN_OPTIONS_COMPACT_INIT                                          \
  {(uint32_t)sizeof(tblob_open_options), TBLOB_OPEN_MAP, 16777216u, 65536u, 1024u, 8u, \
   32u, 256u, 0u, NULL}

/* ------------------------------------------------------------------------------------------
 * Zero-allocation safetensors header scanner.
 *
 * tblob_st_scan validates a whole safetensors buffer (8-byte length, header, data region
 * size) and reports each tensor and metadata entry to a callback as it is parsed. It never
 * allocates and never reads outside [buf, buf + len). Events may arrive before an error
 * later in the header is found: the returned status is what counts.
 *
 * The whole-table checks (duplicate names after unescaping, duplicate metadata keys,
 * offsets tiling the data region) need memory proportional to the tensor count; they run
 * only when the caller lends scratch of at least tblob_st_scan_scratch_bytes(count) bytes
 * (count from a first scan without scratch, or any upper bound).
 * ---------------------------------------------------------------------------------------- */
typedef enum tblob_scan_event_kind {
  TBLOB_SCAN_TENSOR = 1,
  TBLOB_SCAN_METADATA = 2
} tblob_scan_event_kind;

#define TBLOB_SCAN_INLINE_RANK 64

typedef struct tblob_scan_event {
  uint32_t struct_size;
  uint32_t kind;            /* tblob_scan_event_kind */
  uint64_t index;           /* 0-based, per kind, in header order */
  /* Tensor name or metadata key: the raw JSON string contents (escapes not decoded). */
  const char *name;
  size_t name_len;
  uint32_t name_has_escapes; /* 1 when tblob_json_unescape is needed to get the text */
  uint32_t dtype;           /* tensors: tblob_dtype */
  /* Metadata value, raw JSON string contents; NULL for tensors. */
  const char *value;
  size_t value_len;
  uint32_t value_has_escapes;
  uint32_t rank;            /* tensors: number of dimensions */
  /* Tensors: the dimensions, outermost first. NULL when rank > TBLOB_SCAN_INLINE_RANK;
   * shape_json then still holds the JSON array text. */
  const uint64_t *shape;
  const char *shape_json;
  size_t shape_json_len;
  uint64_t data_begin;      /* data_offsets, relative to the data region */
  uint64_t data_end;
  uint64_t header_offset;   /* byte offset of the entry's key in the buffer */
} tblob_scan_event;

/* Return non-zero to stop the scan with TBLOB_E_CANCELLED. */
typedef int (*tblob_scan_fn)(void *user, const tblob_scan_event *event);

typedef struct tblob_scan_result {
  uint32_t struct_size;
  uint32_t whole_table_checked; /* 1 if scratch was lent and the whole-table checks ran */
  uint64_t header_bytes;        /* N */
  uint64_t data_offset;         /* 8 + N: where the data region starts */
  uint64_t data_bytes;          /* bytes the tensors cover (the last end offset) */
  uint64_t tensor_count;
  uint64_t metadata_count;
} tblob_scan_result;
#define TBLOB_SCAN_RESULT_INIT {(uint32_t)sizeof(tblob_scan_result), 0, 0, 0, 0, 0, 0}

/* Scratch bytes the whole-table checks need for tensor_count tensors (saturates). */
TBLOB_API size_t tblob_st_scan_scratch_bytes(uint64_t tensor_count, uint64_t metadata_count) TBLOB_NOEXCEPT;

/* options may be NULL (defaults); only the limit fields are used. callback may be NULL.
 * scratch may be NULL (whole-table checks skipped). result may be NULL. */
TBLOB_API tblob_status tblob_st_scan(const uint8_t *buf, size_t len,
                                     const tblob_open_options *options,
                                     tblob_scan_fn callback, void *user,
                                     void *scratch, size_t scratch_bytes,
                                     tblob_scan_result *result, tblob_diag *diag) TBLOB_NOEXCEPT;

/* Decodes the contents of a JSON string (as reported by the scanner) into dst.
 * *out_len receives the decoded length even when dst is too small
 * (TBLOB_E_BUFFER_TOO_SMALL). Validates escapes and surrogate pairs (TBLOB_E_JSON). */
TBLOB_API tblob_status tblob_json_unescape(const char *src, size_t src_len, char *dst,
                                           size_t dst_capacity, size_t *out_len) TBLOB_NOEXCEPT;

/* ------------------------------------------------------------------------------------------
 * Models: any container, resolved to one table of tensor descriptors.
 * ---------------------------------------------------------------------------------------- */
typedef struct tblob_model tblob_model;

typedef enum tblob_format {
  TBLOB_FORMAT_UNKNOWN = 0,
  TBLOB_FORMAT_SAFETENSORS = 1,         /* one safetensors file or buffer */
  TBLOB_FORMAT_SAFETENSORS_SHARDED = 2, /* model.safetensors.index.json + shards */
  TBLOB_FORMAT_OLLAMA = 3,
  TBLOB_FORMAT_UQFF = 4,
  TBLOB_FORMAT_SLM1 = 5
} tblob_format;

/* "safetensors", "safetensors-sharded", ...; NULL for an unknown value. */
TBLOB_API const char *tblob_format_name(uint32_t format) TBLOB_NOEXCEPT;

/* Opens whatever container is at path, detected by content (never by extension):
 * a safetensors file, a directory holding model.safetensors.index.json, or that index.
 * options may be NULL. On error *out is NULL. */
TBLOB_API tblob_status tblob_open_path(const char *path, const tblob_open_options *options,
                                       tblob_model **out, tblob_diag *diag) TBLOB_NOEXCEPT;

/* Opens a container held in a caller buffer, which must outlive the model (mode is
 * ignored: the buffer is borrowed, never copied). */
TBLOB_API tblob_status tblob_open_memory(const void *buf, size_t len,
                                         const tblob_open_options *options,
                                         tblob_model **out, tblob_diag *diag) TBLOB_NOEXCEPT;

/* NULL is a no-op. */
TBLOB_API void tblob_close(tblob_model *model) TBLOB_NOEXCEPT;

TBLOB_API uint32_t tblob_model_format(const tblob_model *model) TBLOB_NOEXCEPT;
TBLOB_API uint64_t tblob_tensor_count(const tblob_model *model) TBLOB_NOEXCEPT;

/* Source files behind the model (1 for a single file or buffer). */
TBLOB_API uint32_t tblob_file_count(const tblob_model *model) TBLOB_NOEXCEPT;
/* The path of file i as opened (borrowed); "" for a memory buffer. */
TBLOB_API tblob_status tblob_file_path(const tblob_model *model, uint32_t index,
                                       const char **path, size_t *path_len) TBLOB_NOEXCEPT;

typedef struct tblob_tensor_info {
  uint32_t struct_size;
  uint32_t dtype;           /* tblob_dtype of the stored bytes */
  const char *name;         /* decoded UTF-8, borrowed, not NUL-terminated */
  size_t name_len;
  const uint64_t *shape;    /* rank dims, outermost first; borrowed */
  uint32_t rank;
  uint32_t file_index;      /* which file holds the bytes */
  uint64_t data_offset;     /* relative to that file's data region */
  uint64_t data_length;
  uint64_t file_offset;     /* absolute byte offset in that file */
  uint64_t element_count;
} tblob_tensor_info;
#define TBLOB_TENSOR_INFO_INIT \
  {(uint32_t)sizeof(tblob_tensor_info), 0, NULL, 0, NULL, 0, 0, 0, 0, 0, 0}

/* Fills *info (whose struct_size the caller sets) for tensor `index` (0-based, in the
 * order of the header's data offsets, file by file). */
TBLOB_API tblob_status tblob_tensor_at(const tblob_model *model, uint64_t index,
                                       tblob_tensor_info *info, tblob_diag *diag) TBLOB_NOEXCEPT;

/* Finds a tensor by exact (decoded) name. TBLOB_E_NOT_FOUND if absent. */
TBLOB_API tblob_status tblob_find(const tblob_model *model, const char *name,
                                  size_t name_len, uint64_t *index, tblob_diag *diag) TBLOB_NOEXCEPT;

/* Zero-copy view of a tensor's stored bytes, valid until close. */
TBLOB_API tblob_status tblob_tensor_data(const tblob_model *model, uint64_t index,
                                         const void **data, size_t *length,
                                         tblob_diag *diag) TBLOB_NOEXCEPT;

/* Metadata: the string pairs of __metadata__ (of every shard, first occurrence wins for
 * a sharded model), decoded, in header order. */
TBLOB_API uint64_t tblob_metadata_count(const tblob_model *model) TBLOB_NOEXCEPT;
TBLOB_API tblob_status tblob_metadata_at(const tblob_model *model, uint64_t index,
                                         const char **key, size_t *key_len,
                                         const char **value, size_t *value_len) TBLOB_NOEXCEPT;
TBLOB_API tblob_status tblob_metadata_find(const tblob_model *model, const char *key,
                                           size_t key_len, const char **value,
                                           size_t *value_len) TBLOB_NOEXCEPT;

/* ------------------------------------------------------------------------------------------
 * Dequantization
 * ---------------------------------------------------------------------------------------- */
/* @@dequant-api */

/* ------------------------------------------------------------------------------------------
 * Ollama stores
 * ---------------------------------------------------------------------------------------- */
/* @@ollama-api */

/* ------------------------------------------------------------------------------------------
 * UQFF (mistral.rs)
 * ---------------------------------------------------------------------------------------- */
/* @@uqff-api */

/* ------------------------------------------------------------------------------------------
 * SLM1
 * ---------------------------------------------------------------------------------------- */
/* @@slm1-api */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TENSORBLOB_H */
