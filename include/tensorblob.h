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

#if defined(__cplusplus) && __cplusplus >= 201103L
#define TBLOB_NOEXCEPT noexcept
#else
#define TBLOB_NOEXCEPT
#endif

/* TBLOB_VERSION_MAJOR/_MINOR/_PATCH, TBLOB_VERSION_NUMBER, TBLOB_VERSION_STRING and
 * TBLOB_VERSION_ATLEAST(a, b, c), generated from the build's project version. */
#include "tensorblob_version.h"

/* Returns TBLOB_VERSION_NUMBER of the library actually linked. */
TBLOB_API uint32_t tblob_version(void) TBLOB_NOEXCEPT;
/* "MAJOR.MINOR.PATCH", static storage. */
TBLOB_API const char *tblob_version_string(void) TBLOB_NOEXCEPT;

/* ------------------------------------------------------------------------------------------
 * Status codes. The numbers are pinned: never renumbered, never reused.
 * docs/errors.md explains each one.
 * ---------------------------------------------------------------------------------------- */
typedef enum tblob_status {
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
  TBLOB_E_SOURCE_SHORT_READ = -11, /* a read function returned fewer bytes than asked inside the declared size */
  TBLOB_E_SOURCE_OVERREAD = -12,   /* a read function claimed more bytes than asked */
  TBLOB_E_SOURCE_CHANGED = -13,    /* the source's size or content changed while open (a read fn may return it) */
  TBLOB_E_NOT_MAPPED = -14,        /* zero-copy view asked of a model read through a byte source: use tblob_tensor_read */

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

  /* Dequantization (-70 .. -99): a quantization descriptor (tblob_quant_desc, or the one a
   * model resolved from a tensor and its companions) that cannot be decoded */
  TBLOB_E_QUANT_SCHEME = -70,       /* unknown scheme, bit width, special-value or global-scale mode */
  TBLOB_E_QUANT_GROUP_SIZE = -71,   /* group size 0, not dividing the row, or not the scheme's own */
  TBLOB_E_QUANT_PACKING = -72,      /* codes do not fill whole units (MLX row not whole u32 words) */
  TBLOB_E_QUANT_DATA_SIZE = -73,    /* packed data length differs from what rows x cols need */
  TBLOB_E_QUANT_SCALE_DTYPE = -74,  /* scale encoding not allowed for the scheme */
  TBLOB_E_QUANT_SCALE_SIZE = -75,   /* scale length differs from one scale per group / block */
  TBLOB_E_QUANT_BIAS_DTYPE = -76,   /* bias missing (affine), of another dtype, or not allowed */
  TBLOB_E_QUANT_BIAS_SIZE = -77,    /* bias length differs from one bias per group */
  TBLOB_E_QUANT_GLOBAL_SCALE = -78, /* global scale not nvfp4, missing, or not exactly one f32 */
  TBLOB_E_DEQUANT_OUT_DTYPE = -79,  /* output dtype is not F32, F16 or BF16 */
  TBLOB_E_KERNEL_UNAVAILABLE = -80, /* the named kernel set is unknown or this host cannot run it */
  TBLOB_E_NOT_DEQUANTIZABLE = -81,  /* tensor holds integers/bools/F64...: nothing to dequantize */
  TBLOB_E_QUANT_VALUE = -82,        /* quantizing: a group of finite values past the scheme's range */
  TBLOB_E_QUANT_NONFINITE = -87,    /* quantizer input holds NaN or Inf (ggml's output is undefined) */
  TBLOB_E_QUANT_IMPORTANCE = -88,   /* importance weights negative, not finite, or given twice */

  /* Ollama stores, manifests, blobs (-100 .. -139) */
  TBLOB_E_OLLAMA_NAME = -100,                /* model name or tag breaks the name grammar */
  TBLOB_E_OLLAMA_DIGEST = -101,              /* digest is not sha256: / sha256- + 64 lowercase hex */
  TBLOB_E_OLLAMA_PATH = -102,                /* a path would leave the store or cross a symlink */
  TBLOB_E_OLLAMA_NOT_A_FILE = -103,          /* a manifest or blob path is a directory or special */
  TBLOB_E_OLLAMA_NOT_A_STORE = -104,         /* the root has no manifests/ and blobs/ directories */
  TBLOB_E_OLLAMA_MODEL_NOT_FOUND = -105,     /* no manifest for that name */
  TBLOB_E_OLLAMA_MODEL_REQUIRED = -106,      /* the store holds several models: name one */
  TBLOB_E_OLLAMA_MANIFEST_ZERO_LENGTH = -107,/* manifest file of 0 bytes */
  TBLOB_E_OLLAMA_MANIFEST_EMPTY = -108,      /* manifest holds only whitespace or NUL bytes */
  TBLOB_E_OLLAMA_MANIFEST_TRUNCATED = -109,  /* manifest JSON ends before its document does */
  TBLOB_E_OLLAMA_MANIFEST_DOUBLED = -110,    /* a second JSON document or other bytes follow */
  TBLOB_E_OLLAMA_MANIFEST_JSON = -111,       /* manifest is not valid JSON */
  TBLOB_E_OLLAMA_MANIFEST_SCHEMA = -112,     /* valid JSON, wrong structure or field type */
  TBLOB_E_OLLAMA_MANIFEST_VERSION = -113,    /* schemaVersion other than 2, unknown mediaType */
  TBLOB_E_OLLAMA_LIMIT_MANIFEST = -114,      /* manifest larger than max_manifest_bytes */
  TBLOB_E_OLLAMA_LAYER_CONFLICT = -115,      /* one digest listed with different size/mediaType */
  TBLOB_E_OLLAMA_BLOB_MISSING = -116,        /* a layer's blob file does not exist */
  TBLOB_E_OLLAMA_BLOB_PARTIAL = -117,        /* only a partial download of the blob exists */
  TBLOB_E_OLLAMA_BLOB_SIZE = -118,           /* blob length differs from the layer's size */
  TBLOB_E_OLLAMA_BLOB_EMPTY = -119,          /* zero-length blob (hash e3b0c442...) */
  TBLOB_E_OLLAMA_LAYER_MISMATCH = -120,      /* manifest dtype/shape differ from the blob */
  TBLOB_E_OLLAMA_NO_TENSORS = -121,          /* no safetensors tensor layer (a GGUF model?) */
  TBLOB_E_OLLAMA_CONFIG_JSON = -122,         /* a config or JSON layer is not valid JSON */
  TBLOB_E_OLLAMA_LIMIT_CONFIG = -123,        /* a config or JSON layer above max_config_bytes */
  TBLOB_E_OLLAMA_IMPORT_SOURCE = -124,       /* the import source cannot be imported */
  TBLOB_E_OLLAMA_CORRUPT_STORE = -125,       /* gc refused: some manifest cannot be read */
  TBLOB_E_OLLAMA_COMPONENT = -126,           /* no tensor layer of the requested component or part */

  /* UQFF (-140 .. -169) */
  TBLOB_E_UQFF_NO_VERSION = -140,       /* no uqff.version.{major,minor,patch} tensors (pre-1.0?) */
  TBLOB_E_UQFF_PRE_1_0 = -141,          /* the 0.x layout: every tensor named by a number */
  TBLOB_E_UQFF_VERSION_MAJOR = -142,    /* another major version: regenerate */
  TBLOB_E_UQFF_VERSION_NEWER = -143,    /* a newer minor than this reader (1.2): upgrade */
  TBLOB_E_UQFF_VERSION_CONFLICT = -144, /* version tensors differ between shards */
  TBLOB_E_UQFF_SCALAR = -145,           /* a scalar entry that is not 0-d of its dtype */
  TBLOB_E_UQFF_DUPLICATE_KEY = -146,    /* one key in two shards, or in a shard and the residual */
  TBLOB_E_UQFF_FORMAT_TAG = -147,       /* <key>.weight.format outside 0..6 */
  TBLOB_E_UQFF_UNRECOGNIZED = -148,     /* entries that form no layer of any family */
  TBLOB_E_UQFF_AMBIGUOUS = -149,        /* no format tag; the entries fit several families */
  TBLOB_E_UQFF_MISMATCH = -150,         /* the tag declares one family, the entries are another's */
  TBLOB_E_UQFF_ENTRIES = -151,          /* a layer lacks entries of its family or has extra ones */
  TBLOB_E_UQFF_ENTRY_DTYPE = -152,      /* a layer entry has the wrong dtype or rank */
  TBLOB_E_UQFF_GGML_TYPE = -153,        /* unknown ggml type id, or FP8 dtype code not F8E4M3 */
  TBLOB_E_UQFF_PARAM = -154,            /* bits, group size or axis outside the family's values */
  TBLOB_E_UQFF_LAYER_SIZE = -155,       /* stored sizes disagree with the logical shape */
  TBLOB_E_UQFF_STACK = -156,            /* a stacked [E, out, in] layer of a family that cannot be */
  TBLOB_E_UQFF_SHARD_MISSING = -157,    /* a shard of the set does not exist (gap, listed) */
  TBLOB_E_UQFF_SHARD_SET = -158,        /* the paths hold no UQFF shard set */
  TBLOB_E_UQFF_REPORT = -159,           /* uqff_report.json is not valid */
  TBLOB_E_UQFF_INCOMPLETE = -160,       /* report warning: config.json's architecture needs more */
  TBLOB_E_UQFF_PRODUCER = -161,         /* report warning: no uqff.producer in __metadata__ */
  TBLOB_E_UQFF_CONFIG = -162,           /* report warning: config.json cannot be read */

  /* SLM1 (-170 .. -199) */
  TBLOB_E_SLM1_VERSION = -170,   /* version is not 1 (0x01000000: byte-swapped file) */
  TBLOB_E_SLM1_HEADER = -171,    /* header_length, flags or a hyperparameter breaks its rule */
  TBLOB_E_SLM1_TOKENIZER = -172, /* BTOK/BPE1 section malformed or disagreeing with the header */
  TBLOB_E_SLM1_ENTRY = -173,     /* directory entry: rank, dims, reserved, block_size, scale_offset */
  TBLOB_E_SLM1_ALIGNMENT = -174, /* a payload or scale array does not start on a multiple of 64 */
  TBLOB_E_SLM1_PADDING = -175,   /* a padding byte between sections or regions is not zero */
  TBLOB_E_SLM1_SCALE = -176,     /* a quantization scale is not finite and positive */
  TBLOB_E_SLM1_CHECKSUM = -177,  /* stored checksum is 0 or differs from docs/slm1.md section 10 */

  /* GGUF (-200 .. -229) */
  TBLOB_E_GGUF_VERSION = -200,      /* version 0, or newer than 3 */
  TBLOB_E_GGUF_V1 = -201,           /* GGUF v1 (32-bit counts): convert the model again */
  TBLOB_E_GGUF_BIG_ENDIAN = -202,   /* byte-swapped version: a big-endian file */
  TBLOB_E_GGUF_TRUNCATED = -203,    /* the header ends inside a field */
  TBLOB_E_GGUF_COUNT = -204,        /* tensor or key/value count more than the bytes left hold */
  TBLOB_E_GGUF_STRING = -205,       /* string length past the bytes left or above 2^30 */
  TBLOB_E_GGUF_ARRAY = -206,        /* array count past the bytes left, above 2^30, or nested */
  TBLOB_E_GGUF_VALUE_TYPE = -207,   /* unknown metadata value type */
  TBLOB_E_GGUF_KEY = -208,          /* empty or duplicate metadata key */
  TBLOB_E_GGUF_ALIGNMENT = -209,    /* general.alignment not a u32 power of two */
  TBLOB_E_GGUF_NAME = -210,         /* tensor name of 64 bytes or more (ggml's limit) */
  TBLOB_E_GGUF_DIMS = -211,         /* more than 4 dimensions, or a dimension >= 2^63 */
  TBLOB_E_GGUF_TYPE = -212,         /* unknown or removed ggml type */
  TBLOB_E_GGUF_ROW = -213,          /* a row (ne[0]) is not a whole number of blocks */
  TBLOB_E_GGUF_OFFSET_ALIGN = -214, /* tensor offset not a multiple of the alignment */
  TBLOB_E_GGUF_DATA_RANGE = -215,   /* tensor data outside the file's data region */
  TBLOB_E_GGUF_OVERLAP = -216,      /* two tensors' data overlap */
  TBLOB_E_GGUF_LAYOUT = -217,       /* offset not at the previous tensor's padded end (hole, order) */
  TBLOB_E_GGUF_WRITE_ORDER = -218,  /* writer: data not for the next tensor in table order, or a key/value or tensor info after the data began */
  TBLOB_E_GGUF_WRITE_SIZE = -219,   /* writer: a tensor's data bytes differ from its declared size */
  TBLOB_E_GGUF_SPLIT_MISSING = -220, /* a file of a split GGUF set (name-0000k-of-0000n.gguf) is absent */
  TBLOB_E_GGUF_SPLIT = -221,        /* split.* keys inconsistent across a split set (number, count, tensor total) */

  TBLOB_STATUS_MIN_ = -256
} tblob_status;

/* "TBLOB_E_JSON" etc.; "TBLOB_E_UNKNOWN_STATUS" for numbers not in the enum. Static. */
TBLOB_API const char *tblob_status_name(tblob_status status) TBLOB_NOEXCEPT;
/* A one-line English description of the status. Static. */
TBLOB_API const char *tblob_status_message(tblob_status status) TBLOB_NOEXCEPT;

/* The family of a status: what kind of failure it is, for callers (and bindings) that map
 * statuses to their own error classes without hard-coding number ranges. Every status has
 * exactly one family (docs/errors.md gives each status's); the numbers are pinned. */
typedef enum tblob_family {
  TBLOB_FAMILY_UNKNOWN = 0,     /* a number that is not a status of this library */
  TBLOB_FAMILY_OK = 1,          /* TBLOB_OK */
  TBLOB_FAMILY_ARGUMENT = 2,    /* the call was wrong: argument, index or row range, buffer
                                   size, output dtype, kernel set, several models in a store */
  TBLOB_FAMILY_MEMORY = 3,      /* the allocator returned NULL */
  TBLOB_FAMILY_IO = 4,          /* open/read/mmap failed, a byte source misbehaved, a file,
                                   blob, store or shard is missing */
  TBLOB_FAMILY_NOT_FOUND = 5,   /* no tensor, key, model or component of that name */
  TBLOB_FAMILY_FORMAT = 6,      /* the bytes break their container's rules */
  TBLOB_FAMILY_LIMIT = 7,       /* a limit of tblob_open_options / the store options was hit */
  TBLOB_FAMILY_DIGEST = 8,      /* content differs from its hash, size or checksum */
  TBLOB_FAMILY_DEQUANT = 9,     /* a quantization descriptor that cannot be decoded */
  TBLOB_FAMILY_UNSUPPORTED = 10,/* valid input this build cannot handle, or compiled out */
  TBLOB_FAMILY_CANCELLED = 11,  /* a callback asked to stop */
  TBLOB_FAMILY_COUNT_ = 12
} tblob_family;

/* tblob_family of the status; TBLOB_FAMILY_UNKNOWN for a number not in the enum. */
TBLOB_API uint32_t tblob_status_family(tblob_status status) TBLOB_NOEXCEPT;
/* "unknown", "ok", "argument", "memory", "io", "not-found", "format", "limit", "digest",
 * "dequant", "unsupported", "cancelled"; NULL for a value outside the enum. Static. */
TBLOB_API const char *tblob_family_name(uint32_t family) TBLOB_NOEXCEPT;

/* What this build contains: a static, NULL-terminated array of static strings, one per
 * feature, "format:NAME" for each container format compiled in (NAME as tblob_format_name
 * spells it, in enum order) then "kernel:NAME" for each dequantization kernel set compiled
 * in, best first (whether this host can run it: tblob_kernel_set). *count (if count is not
 * NULL) receives the number of entries. The same for the whole life of the process; new
 * kinds of entry ("kind:name") may be appended by later versions. */
TBLOB_API const char *const *tblob_features(size_t *count) TBLOB_NOEXCEPT;

/* ------------------------------------------------------------------------------------------
 * Diagnostics: caller-owned, filled on error (and reset on success). No allocation.
 * ---------------------------------------------------------------------------------------- */
#define TBLOB_DIAG_MESSAGE_BYTES 256
#define TBLOB_NO_OFFSET (~(uint64_t)0)
typedef struct tblob_diag {
  uint32_t struct_size;
  tblob_status status;
  uint64_t offset;       /* byte offset in the file or buffer, TBLOB_NO_OFFSET if none */
  int64_t tensor_index;  /* index in the model's table (or in the header), -1 if none */
  char message[TBLOB_DIAG_MESSAGE_BYTES]; /* NUL-terminated, names tensor/field/offset */
} tblob_diag;
#define TBLOB_DIAG_INIT {(uint32_t)sizeof(tblob_diag), TBLOB_OK, TBLOB_NO_OFFSET, -1, {0}}

/* Every struct that begins with struct_size has an init function, for callers that cannot
 * use the _INIT macros (bindings): it zeroes struct_size bytes of *s, fills the same
 * defaults as the macro and sets s->struct_size = struct_size. TBLOB_E_INVALID_ARGUMENT for
 * NULL or a struct_size below 8. A struct zeroed by hand has limits of 0, not the defaults. */
TBLOB_API tblob_status tblob_diag_init(tblob_diag *diag, size_t struct_size) TBLOB_NOEXCEPT;

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
TBLOB_API tblob_status tblob_dtype_from_name(const char *name, size_t name_len, uint32_t *out,
                                             tblob_diag *diag) TBLOB_NOEXCEPT;

/* ------------------------------------------------------------------------------------------
 * Allocation hook. The handle copies this struct; alloc/free and opaque must stay valid
 * until the handle is closed. alloc returns memory aligned to at least 16 bytes or NULL.
 * ---------------------------------------------------------------------------------------- */
typedef struct tblob_allocator {
  uint32_t struct_size;
  uint32_t reserved; /* 0 */
  void *(*alloc)(void *opaque, size_t size);
  void (*free)(void *opaque, void *ptr, size_t size);
  void *opaque;
} tblob_allocator;
#define TBLOB_ALLOCATOR_INIT {(uint32_t)sizeof(tblob_allocator), 0u, NULL, NULL, NULL}
TBLOB_API tblob_status tblob_allocator_init(tblob_allocator *allocator,
                                            size_t struct_size) TBLOB_NOEXCEPT;

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
TBLOB_API tblob_status tblob_open_options_init(tblob_open_options *options,
                                               size_t struct_size) TBLOB_NOEXCEPT;
/* The mobile preset of TBLOB_OPEN_OPTIONS_COMPACT_INIT. */
TBLOB_API tblob_status tblob_open_options_init_compact(tblob_open_options *options,
                                                       size_t struct_size) TBLOB_NOEXCEPT;

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
TBLOB_API tblob_status tblob_scan_result_init(tblob_scan_result *result,
                                              size_t struct_size) TBLOB_NOEXCEPT;

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
 * (TBLOB_E_BUFFER_TOO_SMALL). Validates escapes and surrogate pairs (TBLOB_E_JSON) and
 * that unescaped bytes are UTF-8 (TBLOB_E_UTF8). */
TBLOB_API tblob_status tblob_json_unescape(const char *src, size_t src_len, char *dst,
                                           size_t dst_capacity, size_t *out_len,
                                           tblob_diag *diag) TBLOB_NOEXCEPT;

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
  TBLOB_FORMAT_SLM1 = 5,
  TBLOB_FORMAT_GGUF = 6                 /* a GGUF v2/v3 file or buffer */
} tblob_format;

/* "safetensors", "safetensors-sharded", ...; NULL for an unknown value. */
TBLOB_API const char *tblob_format_name(uint32_t format) TBLOB_NOEXCEPT;

/* Opens whatever container is at path, detected by content (never by extension):
 * a safetensors file, a directory holding model.safetensors.index.json, or that index.
 * options may be NULL. On error *out is NULL. */
TBLOB_API tblob_status tblob_model_open(const char *path, const tblob_open_options *options,
                                       tblob_model **out, tblob_diag *diag) TBLOB_NOEXCEPT;

/* Opens a container held in a caller buffer, which must outlive the model (mode is
 * ignored: the buffer is borrowed, never copied). */
TBLOB_API tblob_status tblob_model_open_memory(const void *buf, size_t len,
                                         const tblob_open_options *options,
                                         tblob_model **out, tblob_diag *diag) TBLOB_NOEXCEPT;

/* ------------------------------------------------------------------------------------------
 * Byte sources: a model whose bytes come from a caller's read function (a remote file read
 * with range requests, an archive member, a binding's reader). docs/api.md "Byte sources".
 * ---------------------------------------------------------------------------------------- */
#define TBLOB_SOURCE_SIZE_UNKNOWN (~(uint64_t)0)

/* pread-like: copy up to len bytes at offset into dst. Returns the count placed in dst
 * (len, or less only at the end of the source), or a negative tblob_status (TBLOB_E_IO,
 * TBLOB_E_SOURCE_CHANGED, ...; any other negative value is read as TBLOB_E_IO).
 * Called from whichever thread calls the library; must be safe to call concurrently
 * when the model is shared between threads. */
typedef int64_t (*tblob_read_fn)(void *user, uint64_t offset, void *dst, size_t len);

typedef struct tblob_byte_source tblob_byte_source;
/* Opens a sibling of this source by relative name (a shard named by a sharded index,
 * "config.json" beside a file): fills *out (already initialised by the library). Return
 * TBLOB_E_NOT_FOUND when there is no such sibling. */
typedef tblob_status (*tblob_open_sibling_fn)(void *user, const char *name, size_t name_len,
                                              tblob_byte_source *out);

struct tblob_byte_source {
  uint32_t struct_size;
  uint32_t flags;                     /* 0 */
  uint64_t size;                      /* total bytes, or TBLOB_SOURCE_SIZE_UNKNOWN */
  tblob_read_fn read;                 /* required */
  tblob_open_sibling_fn open_sibling; /* may be NULL: no siblings */
  void (*close)(void *user);          /* may be NULL; called exactly once (see below) */
  void *user;
  const char *name;                   /* for messages and tblob_model_file_path; may be NULL; copied */
};
#define TBLOB_BYTE_SOURCE_INIT \
  {(uint32_t)sizeof(tblob_byte_source), 0u, TBLOB_SOURCE_SIZE_UNKNOWN, NULL, NULL, NULL, NULL, NULL}
TBLOB_API tblob_status tblob_byte_source_init(tblob_byte_source *source,
                                              size_t struct_size) TBLOB_NOEXCEPT;

/* Opens a model whose bytes come from `source`: any single-file format (safetensors file or
 * blob, a sharded checkpoint's index.json with its shards through open_sibling, GGUF, a UQFF
 * shard, SLM1). Only the header is read at open; tensor bytes are read when asked
 * (tblob_tensor_read, tblob_tensor_dequantize). The library takes ownership of the source
 * (and of every sibling it opens): `close` is called exactly once, when the model is closed
 * or at once if the open fails. A model opened this way has no zero-copy views:
 * tblob_tensor_data returns TBLOB_E_NOT_MAPPED. */
TBLOB_API tblob_status tblob_model_open_source(const tblob_byte_source *source,
                                               const tblob_open_options *options,
                                               tblob_model **out, tblob_diag *diag) TBLOB_NOEXCEPT;

/* NULL is a no-op. */
TBLOB_API void tblob_model_close(tblob_model *model) TBLOB_NOEXCEPT;

TBLOB_API uint32_t tblob_model_format(const tblob_model *model) TBLOB_NOEXCEPT;
TBLOB_API uint64_t tblob_model_tensor_count(const tblob_model *model) TBLOB_NOEXCEPT;

/* Source files behind the model (1 for a single file or buffer). */
TBLOB_API uint32_t tblob_model_file_count(const tblob_model *model) TBLOB_NOEXCEPT;
/* The path of file i as opened (borrowed until close, NUL-terminated, path_len excludes the
 * NUL; path_len may be NULL); "" for a memory buffer. */
TBLOB_API tblob_status tblob_model_file_path(const tblob_model *model, uint32_t index,
                                             const char **path, size_t *path_len,
                                             tblob_diag *diag) TBLOB_NOEXCEPT;

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
  /* Appended for dequantization; filled when struct_size covers them. A quantized logical
   * tensor (a packed weight whose companions were resolved at open, see tblob_tensor_quant_info)
   * keeps its stored dtype/shape/bytes above and reports its logical shape here. */
  const uint64_t *logical_shape; /* dequantized shape, borrowed; == shape when not quantized */
  uint64_t logical_elements;
  uint32_t logical_rank;
  uint32_t quant_scheme;         /* tblob_quant_scheme; TBLOB_QUANT_NONE unless quantized */
  uint32_t quant_flags;          /* TBLOB_TENSOR_QUANTIZED, TBLOB_TENSOR_COMPANION */
  uint32_t reserved;             /* 0; keeps the size a multiple of 8 without a hidden hole */
} tblob_tensor_info;
#define TBLOB_TENSOR_INFO_INIT \
  {(uint32_t)sizeof(tblob_tensor_info), 0, NULL, 0, NULL, 0, 0, 0, 0, 0, 0, NULL, 0, 0, 0, 0, 0}
TBLOB_API tblob_status tblob_tensor_info_init(tblob_tensor_info *info,
                                              size_t struct_size) TBLOB_NOEXCEPT;
/* tblob_tensor_info.quant_flags / tblob_quant_info.flags */
#define TBLOB_TENSOR_QUANTIZED 1u /* a packed weight resolved with its companions */
#define TBLOB_TENSOR_COMPANION 2u /* a scale / bias / global scale of a quantized tensor */

/* Fills *info (whose struct_size the caller sets) for tensor `index` (0-based, in the
 * order of the header's data offsets, file by file). */
TBLOB_API tblob_status tblob_tensor_at(const tblob_model *model, uint64_t index,
                                       tblob_tensor_info *info, tblob_diag *diag) TBLOB_NOEXCEPT;

/* The same for tensors [first, first + count) in one call: infos is an array of count
 * elements of info_size bytes each (normally sizeof(tblob_tensor_info)); the library sets
 * each element's struct_size to info_size. TBLOB_E_RANGE when first + count passes the
 * tensor count (nothing is written then). */
TBLOB_API tblob_status tblob_tensors_at(const tblob_model *model, uint64_t first,
                                        uint64_t count, tblob_tensor_info *infos,
                                        size_t info_size, tblob_diag *diag) TBLOB_NOEXCEPT;

/* Finds a tensor by exact (decoded) name. TBLOB_E_NOT_FOUND if absent. */
TBLOB_API tblob_status tblob_tensor_find(const tblob_model *model, const char *name,
                                  size_t name_len, uint64_t *index, tblob_diag *diag) TBLOB_NOEXCEPT;

/* Zero-copy view of a tensor's stored bytes, valid until close. TBLOB_E_NOT_MAPPED for a
 * model opened through a byte source (use tblob_tensor_read). */
TBLOB_API tblob_status tblob_tensor_data(const tblob_model *model, uint64_t index,
                                         const void **data, uint64_t *length,
                                         tblob_diag *diag) TBLOB_NOEXCEPT;

/* Copies bytes [offset, offset + len) of tensor `index`'s stored bytes into dst, for a model
 * opened any way (mapped, read or byte source). TBLOB_E_RANGE when the range passes the
 * tensor's data_length (nothing copied). Thread-safe on a shared model. */
TBLOB_API tblob_status tblob_tensor_read(const tblob_model *model, uint64_t index, uint64_t offset,
                                         void *dst, size_t len, tblob_diag *diag) TBLOB_NOEXCEPT;

/* Metadata: the string pairs of __metadata__ (of every shard, first occurrence wins for
 * a sharded model), decoded, in header order. */
TBLOB_API uint64_t tblob_metadata_count(const tblob_model *model) TBLOB_NOEXCEPT;
TBLOB_API tblob_status tblob_metadata_at(const tblob_model *model, uint64_t index,
                                         const char **key, size_t *key_len,
                                         const char **value, size_t *value_len,
                                         tblob_diag *diag) TBLOB_NOEXCEPT;
TBLOB_API tblob_status tblob_metadata_find(const tblob_model *model, const char *key,
                                           size_t key_len, const char **value,
                                           size_t *value_len, tblob_diag *diag) TBLOB_NOEXCEPT;

/* ------------------------------------------------------------------------------------------
 * Typed metadata (GGUF key/values of every type; arrays iterated, never copied)
 * ---------------------------------------------------------------------------------------- */
/* The typed table holds every key/value of a model with its type. For a GGUF file, buffer or
 * Ollama GGUF model: every key/value in file order, arrays included (after a store model's
 * "ollama.*" keys, which are strings). For every other model: the pairs of tblob_metadata_at,
 * in the same order, as TBLOB_META_STRING. Nothing is copied and nothing is allocated:
 * strings and array bytes point into the file (valid until close), and an array of 150,000
 * token strings is walked where it lies. The types are GGUF's own numbers. */
typedef enum tblob_meta_type {
  TBLOB_META_U8 = 0,
  TBLOB_META_I8 = 1,
  TBLOB_META_U16 = 2,
  TBLOB_META_I16 = 3,
  TBLOB_META_U32 = 4,
  TBLOB_META_I32 = 5,
  TBLOB_META_F32 = 6,
  TBLOB_META_BOOL = 7,
  TBLOB_META_STRING = 8,
  TBLOB_META_ARRAY = 9,
  TBLOB_META_U64 = 10,
  TBLOB_META_I64 = 11,
  TBLOB_META_F64 = 12
} tblob_meta_type;

typedef struct tblob_metadata_value {
  uint32_t struct_size;
  uint32_t value_type;     /* tblob_meta_type */
  uint64_t index;          /* position in the typed table */
  const char *key;         /* borrowed, not NUL-terminated */
  size_t key_len;
  /* Scalars: the value in the field of its kind, the other two 0. */
  uint64_t uint_value;     /* U8, U16, U32, U64; BOOL as 0 or 1 (any non-zero byte is true) */
  int64_t int_value;       /* I8, I16, I32, I64 */
  double float_value;      /* F32 (widened exactly), F64 */
  /* STRING: its bytes (not NUL-terminated, not checked as UTF-8). Other scalars: the text
   * tblob_metadata_find gives for the key. Arrays: NULL, 0. */
  const char *string;
  size_t string_len;
  uint32_t element_type;   /* ARRAY: the elements' tblob_meta_type (never ARRAY) */
  uint32_t reserved;       /* 0 */
  uint64_t count;          /* ARRAY: elements; otherwise 1 */
  /* ARRAY: the elements as stored: little-endian, unaligned; a string element is a u64
   * length and its bytes. Scalars and strings: their bytes as stored. */
  const void *data;
  uint64_t data_bytes;
} tblob_metadata_value;
#define TBLOB_METADATA_VALUE_INIT \
  {(uint32_t)sizeof(tblob_metadata_value), 0u, 0u, NULL, 0, 0u, 0, 0.0, NULL, 0, 0u, 0u, 0u, NULL, 0u}
TBLOB_API tblob_status tblob_metadata_value_init(tblob_metadata_value *value,
                                                 size_t struct_size) TBLOB_NOEXCEPT;

TBLOB_API uint64_t tblob_metadata_typed_count(const tblob_model *model) TBLOB_NOEXCEPT;
/* TBLOB_E_RANGE when index >= tblob_metadata_typed_count. */
TBLOB_API tblob_status tblob_metadata_typed_at(const tblob_model *model, uint64_t index,
                                               tblob_metadata_value *value,
                                               tblob_diag *diag) TBLOB_NOEXCEPT;
/* The first key/value named key, arrays included. TBLOB_E_NOT_FOUND if absent. */
TBLOB_API tblob_status tblob_metadata_typed_find(const tblob_model *model, const char *key,
                                                 size_t key_len, tblob_metadata_value *value,
                                                 tblob_diag *diag) TBLOB_NOEXCEPT;

/* Elements [first, first + count) of the numeric or bool array at typed index `index`, into
 * buf in host byte order, each the size of its type (bool: one byte, 0 or 1). count
 * UINT64_MAX: through the last. TBLOB_E_RANGE past the end, TBLOB_E_BUFFER_TOO_SMALL when buf
 * holds fewer bytes, TBLOB_E_INVALID_ARGUMENT for a string array or a non-array. O(count). */
TBLOB_API tblob_status tblob_metadata_array_get(const tblob_model *model, uint64_t index,
                                                uint64_t first, uint64_t count, void *buf,
                                                size_t buf_capacity,
                                                tblob_diag *diag) TBLOB_NOEXCEPT;

/* Where the last walk of a string array stopped, so that the next call continues from there
 * instead of from element 0: reading a string array in order (one element per call, or in
 * chunks) costs O(1) per element. The fields are the library's; a cursor from another array or
 * model, or altered, is ignored (the walk starts at element 0), never read outside the array. */
typedef struct tblob_metadata_cursor {
  uint32_t struct_size;
  uint32_t reserved;       /* 0 */
  uint64_t array;          /* typed index of the array it is on (UINT64_MAX: none) */
  uint64_t element;        /* the element it points at */
  uint64_t position;       /* byte offset of that element in the array's data */
  uint64_t check;          /* ties the fields above to the model */
} tblob_metadata_cursor;
#define TBLOB_METADATA_CURSOR_INIT \
  {(uint32_t)sizeof(tblob_metadata_cursor), 0u, ~(uint64_t)0, 0u, 0u, 0u}
TBLOB_API tblob_status tblob_metadata_cursor_init(tblob_metadata_cursor *cursor,
                                                  size_t struct_size) TBLOB_NOEXCEPT;

/* Called once per string element, in order, on the calling thread, during the call; s (not
 * NUL-terminated) points into the file. Return non-zero to stop (TBLOB_E_CANCELLED). */
typedef int (*tblob_metadata_string_fn)(void *user, uint64_t element, const char *s, size_t len);
/* Walks elements [first, first + count) of the string array at typed index `index` (count
 * UINT64_MAX: through the last). cursor (may be NULL) is where to start from when it lies on
 * this array at or before `first`, and is left after the last element walked. TBLOB_E_RANGE
 * past the end, TBLOB_E_INVALID_ARGUMENT for a numeric array or a non-array. */
TBLOB_API tblob_status tblob_metadata_array_strings(const tblob_model *model, uint64_t index,
                                                    uint64_t first, uint64_t count,
                                                    tblob_metadata_cursor *cursor,
                                                    tblob_metadata_string_fn fn, void *user,
                                                    tblob_diag *diag) TBLOB_NOEXCEPT;
/* One element of a string array (borrowed, not NUL-terminated): the walk above for one
 * element, so with a cursor, element i + 1 after element i is O(1). */
TBLOB_API tblob_status tblob_metadata_array_string(const tblob_model *model, uint64_t index,
                                                   uint64_t element,
                                                   tblob_metadata_cursor *cursor, const char **s,
                                                   size_t *len, tblob_diag *diag) TBLOB_NOEXCEPT;

/* ------------------------------------------------------------------------------------------
 * Dequantization
 * ---------------------------------------------------------------------------------------- */
/* Quantized weights decode to f32, f16 or bf16 (round to nearest even), for a whole tensor
 * or a row range, into a caller buffer whose size is checked; nothing is allocated. Rows are
 * the logical shape with every axis but the last folded in: rows = prod(shape[0..rank-2]),
 * cols = shape[rank-1] (a scalar is 1 x 1). Output is row-major, host byte order. The exact
 * arithmetic of every scheme is pinned in docs/dequant.md.
 *
 * When a safetensors file, buffer or sharded checkpoint is opened, quantized companions are
 * resolved into one logical tensor named like the packed weight (docs/dequant.md):
 *   Ollama blobs   `N` (U32) + `N.scale` [+ `N.bias`] [+ `N.global_scale`], or the loader
 *                  aliases `N_scale` / `N_qbias`; quant_type/group_size from __metadata__
 *                  (per tensor `N.quant_type` first), else inferred from shapes as Ollama does
 *   mlx-community  `X.weight` (U32) + `X.scales` [+ `X.biases`], parameters from the
 *                  `quantization` block of the config.json beside the file
 *   HF block FP8   `X.weight` (F8_E4M3) + `X.weight_scale_inv` (one scale per 128x128 block,
 *                  or config.json's quantization_config.weight_block_size)
 * The companions stay listed and findable under their own names. Unquantized F8_*, F4, F16,
 * BF16 and F32 tensors dequantize too (plain conversion). */

typedef enum tblob_quant_scheme {
  TBLOB_QUANT_NONE = 0,          /* not quantized, nothing to dequantize */
  TBLOB_QUANT_MLX_AFFINE = 1,    /* w = scale * q + bias; bits 1-6, 8; scales F32/F16/BF16 */
  TBLOB_QUANT_MXFP4 = 2,         /* E2M1 codes, one E8M0 scale per 32 */
  TBLOB_QUANT_MXFP8 = 3,         /* E4M3 codes, one E8M0 scale per 32 */
  TBLOB_QUANT_NVFP4 = 4,         /* E2M1 codes, one E4M3 scale per 16, optional global scale */
  TBLOB_QUANT_F8_E4M3 = 5,       /* plain element types (no scales) */
  TBLOB_QUANT_F8_E5M2 = 6,
  TBLOB_QUANT_F8_E8M0 = 7,
  TBLOB_QUANT_F8_E4M3FNUZ = 8,
  TBLOB_QUANT_F8_E5M2FNUZ = 9,
  TBLOB_QUANT_F4 = 10,           /* two E2M1 codes per byte, low nibble first */
  TBLOB_QUANT_F16 = 11,
  TBLOB_QUANT_BF16 = 12,
  TBLOB_QUANT_F32 = 13,
  TBLOB_QUANT_BLOCK_FP8 = 14,    /* E4M3 codes, one F32/BF16/F16 scale per group_size^2 block */
  TBLOB_QUANT_SLM1_Q8_0 = 15,    /* SLM1: int8 codes, one F32 scale per row */
  TBLOB_QUANT_SLM1_Q4_0 = 16     /* SLM1: signed 4-bit codes, low nibble first, one F32 scale per block */
} tblob_quant_scheme;

/* "mlx-affine", "mxfp4", "mxfp8", "nvfp4", "F8_E4M3", ..., "block-fp8", "slm1-q8_0",
 * "slm1-q4_0"; "none" for 0 and
 * NULL for values outside the enum. Static. */
TBLOB_API const char *tblob_quant_scheme_name(uint32_t scheme) TBLOB_NOEXCEPT;

/* Special values (tblob_quant_desc.special): how E4M3 0x7F/0xFF and E8M0 0x00/0xFF decode.
 * 0 is OCP / ml_dtypes (E4M3 0x7F NaN, E8M0 0xFF NaN, E8M0 0x00 = 2^-127). */
#define TBLOB_SPECIAL_E4M3_MAX_FINITE 1u   /* E4M3 0x7F/0xFF = +-480 (MLX CPU/Metal, Ollama) */
#define TBLOB_SPECIAL_E8M0_MAX_INF 2u      /* E8M0 0xFF = +inf (MLX) */
#define TBLOB_SPECIAL_E8M0_ZERO_IS_ZERO 4u /* E8M0 0x00 = 0.0 (mistral.rs MXFP4) */
#define TBLOB_SPECIAL_OCP 0u
#define TBLOB_SPECIAL_MLX 3u               /* what MLX/Ollama blobs are decoded with */
#define TBLOB_SPECIAL_MISTRALRS 6u

/* nvfp4 global scale (tblob_quant_desc.global_scale_mode) */
typedef enum tblob_global_scale_mode {
  TBLOB_GLOBAL_SCALE_NONE = 0,
  TBLOB_GLOBAL_SCALE_MULTIPLIER = 1, /* Ollama `N.global_scale`: w = FP4 * E4M3 * g */
  TBLOB_GLOBAL_SCALE_MLX_AMAX = 2    /* MLX's argument (tensor amax): w = FP4 * E4M3 * g/2688 */
} tblob_global_scale_mode;

/* Where a logical tensor's companions came from (tblob_quant_info.source). */
typedef enum tblob_quant_source {
  TBLOB_QUANT_SOURCE_PLAIN = 0,        /* no companions (plain float/F8/F4, or not dequantizable) */
  TBLOB_QUANT_SOURCE_OLLAMA = 1,       /* combined blob: .scale / .bias / .global_scale */
  TBLOB_QUANT_SOURCE_MLX_COMMUNITY = 2,/* .scales / .biases + config.json quantization */
  TBLOB_QUANT_SOURCE_HF_BLOCK_FP8 = 3, /* F8_E4M3 + weight_scale_inv */
  TBLOB_QUANT_SOURCE_SLM1 = 4          /* SLM1 q8_0 / q4_0 row: codes and scale array in the row */
} tblob_quant_source;

/* A quantized tensor as bytes plus numbers, for tblob_quant_dequantize (no model needed). All
 * inputs are little-endian and may be unaligned; every length must be exact. */
typedef struct tblob_quant_desc {
  uint32_t struct_size;
  uint32_t scheme;             /* tblob_quant_scheme */
  uint32_t bits;               /* affine: 1-6 or 8; others: 0 (the scheme's own) or that value */
  uint32_t group_size;         /* affine: divides cols; mx*: 32; nvfp4: 16; block FP8: block
                                  edge (128); plain types: 0 */
  uint32_t scale_dtype;        /* tblob_dtype: affine F32/F16/BF16; mx* F8_E8M0; nvfp4
                                  F8_E4M3 (MLX stores both as U8: say the encoding); block FP8
                                  F32/BF16/F16; plain types 0 */
  uint32_t bias_dtype;         /* affine: == scale_dtype; others 0 */
  uint32_t special;            /* TBLOB_SPECIAL_* bits */
  uint32_t global_scale_mode;  /* tblob_global_scale_mode (nvfp4 only) */
  uint64_t rows;
  uint64_t cols;
  const void *data;            /* packed codes: each row whole u32 words for MLX schemes */
  uint64_t data_bytes;
  const void *scales;          /* rows * (cols / group_size) scales; block FP8:
                                  ceil(rows/G) * ceil(cols/G), row-major */
  uint64_t scales_bytes;
  const void *biases;          /* affine: one per scale */
  uint64_t biases_bytes;
  const void *global_scale;    /* one f32 */
  uint64_t global_scale_bytes;
} tblob_quant_desc;
#define TBLOB_QUANT_DESC_INIT \
  {(uint32_t)sizeof(tblob_quant_desc), 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, 0, NULL, 0}
TBLOB_API tblob_status tblob_quant_desc_init(tblob_quant_desc *desc,
                                             size_t struct_size) TBLOB_NOEXCEPT;

/* Pass as row_end to mean "to the last row". */
#define TBLOB_ALL_ROWS (~(uint64_t)0)

/* Decodes rows [row_begin, row_end) of desc into dst as out_dtype (TBLOB_DTYPE_F32, _F16,
 * _BF16): (row_end - row_begin) * cols values. dst_bytes may be larger (the rest is left
 * untouched). Statuses: TBLOB_E_QUANT_* / TBLOB_E_SHAPE_OVERFLOW for a bad descriptor (the
 * message names the field and the expected length), TBLOB_E_DEQUANT_OUT_DTYPE,
 * TBLOB_E_RANGE (row_begin > row_end or past rows), TBLOB_E_BUFFER_TOO_SMALL,
 * TBLOB_E_INVALID_ARGUMENT (NULL desc, short struct_size, NULL pointer with a length). */
TBLOB_API tblob_status tblob_quant_dequantize(const tblob_quant_desc *desc, uint32_t out_dtype,
                                         uint64_t row_begin, uint64_t row_end, void *dst,
                                         size_t dst_bytes, tblob_diag *diag) TBLOB_NOEXCEPT;

/* ---- Quantizing ----
 * Options of the quantizers (tblob_quant_quantize for the MLX/FP8 schemes, tblob_ggml_quantize
 * for GGML blocks). The bytes written never depend on `threads`. */
typedef struct tblob_quantize_options {
  uint32_t struct_size;
  uint32_t threads;          /* as tblob_dequant_options.threads: 0 one per online core, 1 the
                                calling thread only */
  const float *importance;   /* NULL, or importance_count (= cols) non-negative per-column
                                weights for the schemes that take them (docs/quantize.md) */
  uint64_t importance_count;
  uint32_t reserved[2];      /* 0 */
} tblob_quantize_options;
#define TBLOB_QUANTIZE_OPTIONS_INIT {(uint32_t)sizeof(tblob_quantize_options), 0u, NULL, 0u, {0u, 0u}}
TBLOB_API tblob_status tblob_quantize_options_init(tblob_quantize_options *s,
                                                   size_t struct_size) TBLOB_NOEXCEPT;

/* Sets desc->data_bytes, scales_bytes, biases_bytes and global_scale_bytes to what a descriptor
 * with desc's scheme, bits, group_size, scale_dtype, bias_dtype, global_scale_mode, rows and
 * cols needs (the lengths tblob_quant_dequantize checks); nothing else is read or written.
 * Statuses as tblob_quant_dequantize gives for those fields (TBLOB_E_QUANT_*,
 * TBLOB_E_SHAPE_OVERFLOW), TBLOB_E_INVALID_ARGUMENT for a NULL desc or short struct_size. */
TBLOB_API tblob_status tblob_quant_size(tblob_quant_desc *desc, tblob_diag *diag) TBLOB_NOEXCEPT;

/* Quantizes desc->rows x desc->cols values (row-major, src_dtype TBLOB_DTYPE_F32, _F16 or _BF16,
 * little-endian, any alignment; src_bytes at least rows * cols * the element size) into desc,
 * the inverse of tblob_quant_dequantize (rules and oracles: docs/quantize.md). Schemes:
 *   TBLOB_QUANT_MLX_AFFINE  bits 2, 3, 4, 5, 6, 8; group_size 32, 64, 128; scale_dtype ==
 *                           bias_dtype, F32/F16/BF16             = mx.quantize (mlx 0.32.4, CPU)
 *   TBLOB_QUANT_MXFP4/MXFP8 group_size 32, scale_dtype F8_E8M0   = mx.quantize mode mxfp4/mxfp8
 *   TBLOB_QUANT_NVFP4       group_size 16, scale_dtype F8_E4M3, global_scale_mode NONE or
 *                           MLX_AMAX (then desc->global_scale holds MLX's f32 argument, read)
 *   TBLOB_QUANT_BLOCK_FP8   scale_dtype F32/BF16/F16: scale = amax / 448 per G x G block
 *   TBLOB_QUANT_SLM1_Q8_0/_Q4_0  the SLM1 writer's quantizers (docs/slm1.md section 8)
 * The descriptor is the one tblob_quant_dequantize reads, used the other way: the library WRITES
 * the codes, scales and biases through desc->data, desc->scales and desc->biases (declared
 * const for the decoder; they must name writable, non-overlapping buffers of exactly the
 * lengths tblob_quant_size reports) and reads desc->global_scale. `special` is not used (the
 * encoders never emit the codes it reinterprets). Nothing is allocated. Statuses:
 * TBLOB_E_QUANT_* for a descriptor tblob_quant_dequantize would refuse or a parameter the
 * scheme's reference does not quantize to; TBLOB_E_QUANT_NONFINITE for a NaN or infinite
 * input value, TBLOB_E_QUANT_VALUE for a group of finite values the reference cannot
 * represent (message: row, column, why; nothing useful is left in the outputs); TBLOB_E_DTYPE for another src_dtype; TBLOB_E_BUFFER_TOO_SMALL
 * for short src; TBLOB_E_UNSUPPORTED for a plain scheme, importance weights (no scheme here
 * takes them) or the nvfp4 multiplier convention; TBLOB_E_INVALID_ARGUMENT. Options NULL: the
 * defaults; the bytes written never depend on options->threads. */
TBLOB_API tblob_status tblob_quant_quantize(const tblob_quant_desc *desc, uint32_t src_dtype,
                                           const void *src, size_t src_bytes,
                                           const tblob_quantize_options *options,
                                           tblob_diag *diag) TBLOB_NOEXCEPT;

/* The same for tensor `index` of a model: a resolved quantized tensor (give the packed
 * weight's index) or a plain F8_*, F4, F16, BF16, F32 tensor; a U8 E8M0/E4M3 scale
 * companion decodes as that encoding. Also TBLOB_E_NOT_DEQUANTIZABLE (integer, bool, F64,
 * C64 tensors), TBLOB_E_UNSUPPORTED (F6: packing not pinned) and the resolution status of a
 * tensor whose companions are inconsistent (diag names the tensor, the companion and the
 * byte offset). Thread-safe on a shared model. */
TBLOB_API tblob_status tblob_tensor_dequantize(const tblob_model *model, uint64_t index,
                                        uint32_t out_dtype, uint64_t row_begin,
                                        uint64_t row_end, void *dst, size_t dst_bytes,
                                        tblob_diag *diag) TBLOB_NOEXCEPT;

/* Bytes tblob_tensor_dequantize writes for these arguments, after the same checks (so a
 * tensor that cannot be dequantized gives the same status here). */
TBLOB_API tblob_status tblob_tensor_dequant_size(const tblob_model *model, uint64_t index,
                                                 uint32_t out_dtype, uint64_t row_begin,
                                                 uint64_t row_end, uint64_t *bytes,
                                                 tblob_diag *diag) TBLOB_NOEXCEPT;

/* ---- Dequantizing on several threads ----
 * One large tensor by rows, or many tensors at once, shared out on `threads` threads. The
 * threads are created by the call and joined before it returns (the calling thread is one of
 * them): nothing keeps running, and nothing is kept alive, between calls. The work is cut
 * into row pieces of about piece_bytes of output each, handed out in order to whichever thread
 * is free; every piece is decoded exactly as tblob_tensor_dequantize decodes those rows, so the
 * output is bit-identical to the single-thread call whatever the thread count. Builds without
 * POSIX threads (or with TBLOB_NO_THREADS defined) run everything on the calling thread. */
typedef struct tblob_dequant_options {
  uint32_t struct_size;
  uint32_t threads;     /* 0: one per online core; 1: the calling thread only; capped at 256
                           and at the number of pieces */
  uint64_t piece_bytes; /* output bytes per piece; 0: the library's choice (1-8 MiB, at least
                           four pieces per thread when the work allows) */
  uint32_t stores;      /* TBLOB_STORES_*: how the pieces' output is written */
  uint32_t reserved;    /* 0 */
} tblob_dequant_options;
#define TBLOB_DEQUANT_OPTIONS_INIT {(uint32_t)sizeof(tblob_dequant_options), 0u, 0u, 0u, 0u}
/* tblob_dequant_options.stores. The bytes written are the same under every choice. */
#define TBLOB_STORES_AUTO 0u   /* as tblob_tensor_dequantize: non-temporal stores for a piece of
                                  4 MiB or more, normal stores below */
#define TBLOB_STORES_STREAM 1u /* non-temporal stores for every piece of 64 KiB or more: output
                                  that is not read back soon (a whole model into memory) */
#define TBLOB_STORES_CACHE 2u  /* normal stores for every piece: output read right away */
TBLOB_API tblob_status tblob_dequant_options_init(tblob_dequant_options *s,
                                                  size_t struct_size) TBLOB_NOEXCEPT;

/* tblob_tensor_dequantize on options->threads threads (options NULL: the defaults). Same
 * arguments, checks and statuses; every check is made before any thread starts. */
TBLOB_API tblob_status tblob_tensor_dequantize_opts(const tblob_model *model, uint64_t index,
                                                    uint32_t out_dtype, uint64_t row_begin,
                                                    uint64_t row_end, void *dst, size_t dst_bytes,
                                                    const tblob_dequant_options *options,
                                                    tblob_diag *diag) TBLOB_NOEXCEPT;

/* One tensor (or row range) of a batch: the arguments of one tblob_tensor_dequantize call. */
typedef struct tblob_dequant_job {
  uint32_t struct_size;
  uint32_t out_dtype;    /* TBLOB_DTYPE_F32, _F16 or _BF16 */
  uint64_t index;        /* tensor index in the model */
  uint64_t row_begin;
  uint64_t row_end;      /* TBLOB_ALL_ROWS: to the last row */
  void *dst;
  size_t dst_bytes;
  tblob_status status;   /* out: what tblob_tensor_dequantize returns for this job */
  uint32_t reserved;     /* 0 */
} tblob_dequant_job;
#define TBLOB_DEQUANT_JOB_INIT \
  {(uint32_t)sizeof(tblob_dequant_job), 0u, 0u, 0u, TBLOB_ALL_ROWS, NULL, 0, TBLOB_OK, 0u}
TBLOB_API tblob_status tblob_dequant_job_init(tblob_dequant_job *s, size_t struct_size) TBLOB_NOEXCEPT;

/* Runs `count` jobs (an array of job_size-byte elements, normally sizeof(tblob_dequant_job);
 * each element's struct_size is ignored) on options->threads threads. Every job is checked
 * first, on the calling thread; when one fails its check (bad index, dtype, range, buffer,
 * a tensor that cannot be dequantized) nothing is decoded, each job's status says which, and
 * the first failing job's status is returned with its diag. Otherwise every job is decoded
 * and gets TBLOB_OK. Destinations must not overlap one another. */
TBLOB_API tblob_status tblob_tensors_dequantize(const tblob_model *model, tblob_dequant_job *jobs,
                                                size_t count, size_t job_size,
                                                const tblob_dequant_options *options,
                                                tblob_diag *diag) TBLOB_NOEXCEPT;

typedef struct tblob_quant_info {
  uint32_t struct_size;
  uint32_t scheme;             /* tblob_quant_scheme; TBLOB_QUANT_NONE: not dequantizable */
  uint32_t flags;              /* TBLOB_TENSOR_QUANTIZED, TBLOB_TENSOR_COMPANION */
  uint32_t source;             /* tblob_quant_source */
  uint32_t bits;               /* element bits (4 for nvfp4, 16 for BF16, ...) */
  uint32_t group_size;         /* as in tblob_quant_desc */
  uint32_t scale_dtype;        /* the scale encoding (F8_E8M0 for mxfp4 even if stored U8) */
  uint32_t bias_dtype;
  uint32_t special;            /* TBLOB_SPECIAL_* in effect */
  uint32_t global_scale_mode;
  const uint64_t *shape;       /* logical shape, borrowed from the model */
  uint32_t rank;
  tblob_status status;         /* TBLOB_OK, or what tblob_tensor_dequantize returns for it */
  uint64_t rows;               /* logical rows (leading axes folded) */
  uint64_t cols;               /* logical row length */
  int64_t weight_index;        /* the quantized tensor (for a companion: its owner) or -1 */
  int64_t scale_index;         /* the owner's companions, -1 when absent */
  int64_t bias_index;
  int64_t global_scale_index;
} tblob_quant_info;
#define TBLOB_QUANT_INFO_INIT \
  {(uint32_t)sizeof(tblob_quant_info), 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, TBLOB_OK, 0, 0, -1, -1, -1, -1}
TBLOB_API tblob_status tblob_quant_info_init(tblob_quant_info *info,
                                             size_t struct_size) TBLOB_NOEXCEPT;

/* How tensor `index` dequantizes: scheme, bits, group size, logical shape, companions.
 * A companion reports its own (plain) decoding, TBLOB_TENSOR_COMPANION and its owner's
 * indexes. TBLOB_OK for every valid index (info->status says whether dequantizing works). */
TBLOB_API tblob_status tblob_tensor_quant_info(const tblob_model *model, uint64_t index,
                                          tblob_quant_info *info, tblob_diag *diag) TBLOB_NOEXCEPT;

/* The descriptor tblob_tensor_dequantize uses for tensor `index` (pointers into the model, valid
 * until close), e.g. to change `special` and call tblob_quant_dequantize. Returns the status
 * tblob_tensor_dequantize would give before decoding; *desc is filled even then (unless the
 * arguments are invalid), so a caller can inspect or repair it. */
TBLOB_API tblob_status tblob_tensor_quant_desc(const tblob_model *model, uint64_t index,
                                               tblob_quant_desc *desc, tblob_diag *diag) TBLOB_NOEXCEPT;

/* Kernel sets: "scalar" (the reference, always present), "avx2", "avx512" (x86-64, chosen at
 * first use by cpuid + xgetbv), "neon" (arm64). The choice is process-wide and made once,
 * atomically, from TBLOB_KERNEL or the best the host runs. tblob_kernel_set forces one
 * (NULL or "auto": back to the automatic choice); a set that is unknown, compiled out or
 * that this host cannot run is TBLOB_E_KERNEL_UNAVAILABLE, never a silent fallback.
 * Every set gives the same bits, so it may be called while other threads dequantize (work
 * already running uses the old or the new set). */
TBLOB_API tblob_status tblob_kernel_set(const char *name, tblob_diag *diag) TBLOB_NOEXCEPT;
/* Name of the kernel set in use ("scalar", "avx2", ...). Static. */
TBLOB_API const char *tblob_kernel_active(void) TBLOB_NOEXCEPT;

/* ------------------------------------------------------------------------------------------
 * Ollama stores
 * ---------------------------------------------------------------------------------------- */
/* A store is the directory Ollama keeps models in (its OLLAMA_MODELS):
 *   <root>/manifests/<host>/<namespace>/<model>/<tag>   one JSON manifest per model
 *   <root>/blobs/sha256-<64 lowercase hex>               content-addressed layers
 * Model names are "[host/][namespace/]model[:tag]" with Ollama's defaults
 * registry.ollama.ai, library and latest, checked by one grammar (docs/ollama.md).
 * Nothing outside the root is ever opened: every component below it is opened with
 * O_NOFOLLOW (a symlink inside the store is TBLOB_E_OLLAMA_PATH), and every digest is
 * checked by one function when the manifest is parsed and again where a path is built.
 *
 * tblob_model_open also opens store models: a store manifest file
 * (<root>/manifests/h/n/m/t), the path "<root>/<name>" when that path does not exist but
 * <root> is a store (for example "~/.ollama/models/llama3:8b"), and a store root that
 * holds exactly one model (TBLOB_E_OLLAMA_MODEL_REQUIRED when it holds several). */
typedef struct tblob_store tblob_store;
typedef struct tblob_manifest tblob_manifest;

#define TBLOB_OLLAMA_MAX_MANIFEST 16777216u /* default cap on a manifest file (16 MiB) */
#define TBLOB_OLLAMA_MAX_CONFIG 67108864u   /* default cap on a config/JSON layer read (64 MiB) */

/* tblob_store_options.flags */
#define TBLOB_STORE_CREATE 1u /* create root, manifests/ and blobs/ when missing (import) */

typedef struct tblob_store_options {
  uint32_t struct_size;
  uint32_t flags;                   /* TBLOB_STORE_* */
  uint64_t max_manifest_bytes;      /* larger manifests: TBLOB_E_OLLAMA_LIMIT_MANIFEST */
  uint64_t max_config_bytes;        /* larger config layers: TBLOB_E_OLLAMA_LIMIT_CONFIG */
  const tblob_allocator *allocator; /* NULL: libc */
} tblob_store_options;
#define TBLOB_STORE_OPTIONS_INIT \
  {(uint32_t)sizeof(tblob_store_options), 0u, TBLOB_OLLAMA_MAX_MANIFEST, TBLOB_OLLAMA_MAX_CONFIG, NULL}
TBLOB_API tblob_status tblob_store_options_init(tblob_store_options *s, size_t struct_size) TBLOB_NOEXCEPT;

/* root NULL: $OLLAMA_MODELS, else $HOME/.ollama/models (Ollama's own default).
 * The root itself may be a symlink; nothing below it may. options may be NULL. */
TBLOB_API tblob_status tblob_store_open(const char *root, const tblob_store_options *options,
                                        tblob_store **out, tblob_diag *diag) TBLOB_NOEXCEPT;
/* NULL is a no-op. */
TBLOB_API void tblob_store_close(tblob_store *store) TBLOB_NOEXCEPT;
/* The root as opened (borrowed, NUL-terminated). */
TBLOB_API tblob_status tblob_store_root(const tblob_store *store, const char **path,
                                        size_t *path_len, tblob_diag *diag) TBLOB_NOEXCEPT;

/* Writes the full form "host/namespace/model:tag" of a name into buf (NUL-terminated when
 * it fits; *out_len excludes the NUL and is set even on TBLOB_E_BUFFER_TOO_SMALL).
 * TBLOB_E_OLLAMA_NAME when the name breaks the grammar. */
TBLOB_API tblob_status tblob_ollama_name_canonical(const char *name, size_t name_len, char *buf,
                                                   size_t buf_capacity, size_t *out_len,
                                                   tblob_diag *diag) TBLOB_NOEXCEPT;

/* Checks a digest: form 0 "sha256:<64 lowercase hex>" (manifests), form 1
 * "sha256-<64 lowercase hex>" (blob file names). TBLOB_E_OLLAMA_DIGEST otherwise. */
TBLOB_API tblob_status tblob_ollama_digest_check(const char *digest, size_t digest_len,
                                                 uint32_t form, tblob_diag *diag) TBLOB_NOEXCEPT;

/* ---- Listing ---- */
typedef struct tblob_store_entry {
  uint32_t struct_size;
  tblob_status status;         /* TBLOB_OK, or why this manifest cannot be read */
  const char *name;            /* "host/namespace/model:tag" */
  size_t name_len;
  const char *short_name;      /* as `ollama list` shows it ("model:tag" for the defaults) */
  size_t short_name_len;
  const char *manifest_id;     /* SHA-256 hex of the manifest bytes (64 chars; "" on error) */
  size_t manifest_id_len;
  uint64_t manifest_bytes;
  uint64_t total_bytes;        /* config + layer sizes as the manifest states them */
  uint64_t layer_count;
  uint64_t tensor_layer_count;
  int64_t modified_unix;       /* manifest mtime, seconds since the epoch */
  const char *message;         /* NUL-terminated explanation when status != TBLOB_OK */
} tblob_store_entry;
/* Called once per manifest, in name order, on the calling thread; the strings live only
 * during the call. Return non-zero to stop (TBLOB_E_CANCELLED). */
typedef int (*tblob_store_entry_fn)(void *user, const tblob_store_entry *entry);
/* Lists manifests/<host>/<namespace>/<model>/<tag> (exactly four levels, as Ollama does).
 * Unreadable manifests are reported with their status, not skipped. */
TBLOB_API tblob_status tblob_store_list(const tblob_store *store, tblob_store_entry_fn fn,
                                        void *user, tblob_diag *diag) TBLOB_NOEXCEPT;

/* ---- Manifests ---- */
typedef enum tblob_layer_kind {
  TBLOB_LAYER_TENSOR = 1, /* application/vnd.ollama.image.tensor: a safetensors blob */
  TBLOB_LAYER_JSON = 2,   /* ...image.json / ...image.config / ...image.params: JSON bytes */
  TBLOB_LAYER_CONFIG = 3, /* the manifest's own "config" entry */
  TBLOB_LAYER_OTHER = 4   /* template, system, license, GGUF model, ... */
} tblob_layer_kind;

#define TBLOB_LAYER_CONFIG_INDEX (~(uint64_t)0) /* index of the manifest's config entry */

typedef struct tblob_layer_info {
  uint32_t struct_size;
  uint32_t kind;               /* tblob_layer_kind */
  const char *media_type;
  size_t media_type_len;
  const char *digest;          /* "sha256:<64 hex>", validated */
  size_t digest_len;
  uint64_t size;
  const char *name;            /* the layer's "name"; length 0 when absent */
  size_t name_len;
  const char *from;            /* "from"; length 0 when absent */
  size_t from_len;
  uint32_t dtype;              /* manifest "dtype" (image-generation), TBLOB_DTYPE_INVALID if none */
  uint32_t has_shape;          /* 1 when the layer carries "shape" */
  const uint64_t *shape;
  uint32_t rank;
  uint32_t reserved;           /* 0 */
} tblob_layer_info;
#define TBLOB_LAYER_INFO_INIT \
  {(uint32_t)sizeof(tblob_layer_info), 0, NULL, 0, NULL, 0, 0, NULL, 0, NULL, 0, 0, 0, NULL, 0, 0}
TBLOB_API tblob_status tblob_layer_info_init(tblob_layer_info *info,
                                             size_t struct_size) TBLOB_NOEXCEPT;

/* Reads and parses the manifest of a model in the store. */
TBLOB_API tblob_status tblob_store_manifest_open(const tblob_store *store, const char *name,
                                                 size_t name_len, tblob_manifest **out,
                                                 tblob_diag *diag) TBLOB_NOEXCEPT;
/* Parses manifest bytes held by the caller (copied). options may be NULL. */
TBLOB_API tblob_status tblob_manifest_parse(const void *buf, size_t len,
                                            const tblob_store_options *options,
                                            tblob_manifest **out, tblob_diag *diag) TBLOB_NOEXCEPT;
TBLOB_API void tblob_manifest_close(tblob_manifest *manifest) TBLOB_NOEXCEPT;
/* Layers in manifest order (the config entry is not counted). */
TBLOB_API uint64_t tblob_manifest_layer_count(const tblob_manifest *manifest) TBLOB_NOEXCEPT;
/* index < layer_count, or TBLOB_LAYER_CONFIG_INDEX (TBLOB_E_NOT_FOUND when absent). */
TBLOB_API tblob_status tblob_manifest_layer_at(const tblob_manifest *manifest, uint64_t index,
                                               tblob_layer_info *info, tblob_diag *diag) TBLOB_NOEXCEPT;
/* Copies the bytes of a layer's blob into buf after checking its length against the layer
 * size; JSON and config layers are also checked to be one valid JSON document.
 * *out_len receives the blob length even on TBLOB_E_BUFFER_TOO_SMALL (pass buf NULL and
 * capacity 0 to ask). Tensor layers are not JSON-checked. */
TBLOB_API tblob_status tblob_store_read_layer(const tblob_store *store,
                                              const tblob_manifest *manifest, uint64_t index,
                                              void *buf, size_t buf_capacity, size_t *out_len,
                                              tblob_diag *diag) TBLOB_NOEXCEPT;

/* ---- Models ---- */
/* tblob_store_open_options.part: which layers of a model open as the table. */
typedef enum tblob_store_part {
  TBLOB_STORE_PART_MODEL = 0,     /* the tensor layers, else the GGUF ...image.model layer */
  TBLOB_STORE_PART_PROJECTOR = 1, /* a ...image.projector layer (GGUF or safetensors blob) */
  TBLOB_STORE_PART_ADAPTER = 2,   /* a ...image.adapter layer (GGUF or safetensors blob) */
  TBLOB_STORE_PART_LAYER = 3      /* the layer at manifest index part_index, whatever its type */
} tblob_store_part;

typedef struct tblob_store_open_options {
  uint32_t struct_size;
  uint32_t flags;                   /* none yet: 0 */
  const tblob_open_options *open;   /* mode, limits, allocator; NULL: defaults */
  const char *component;            /* "text_encoder", "transformer", "vae"...; NULL: all */
  size_t component_len;
  /* Appended in 0.2 (read when struct_size covers them). */
  uint32_t part;                    /* tblob_store_part */
  uint32_t reserved;                /* 0 */
  uint64_t part_index;              /* PROJECTOR/ADAPTER: the n-th such layer in manifest order
                                       (0: the first); LAYER: the manifest layer index */
} tblob_store_open_options;
#define TBLOB_STORE_OPEN_OPTIONS_INIT \
  {(uint32_t)sizeof(tblob_store_open_options), 0u, NULL, NULL, 0, 0u, 0u, 0u}
TBLOB_API tblob_status tblob_store_open_options_init(tblob_store_open_options *s, size_t struct_size) TBLOB_NOEXCEPT;

/* Opens a model of the store as one table (format TBLOB_FORMAT_OLLAMA) holding every
 * tensor of every tensor blob, each blob one file (tblob_model_file_path gives its path).
 * Names come from the blob headers, except that a blob whose single tensor is keyed
 * "data" (early 2026) takes its layer's name, and path-style layers
 * ("component/tensor") prefix the component to bare keys. The metadata table holds
 * "ollama.name" and "ollama.manifest_id", then each blob's __metadata__ in blob order
 * (a key such as quant_type may repeat across blobs; tblob_metadata_find returns the
 * first). A component filter keeps only layers named "<component>/...".
 * A part other than TBLOB_STORE_PART_MODEL opens that one layer's blob alone, read by its
 * content as GGUF or safetensors, with the metadata "ollama.name", "ollama.manifest_id",
 * "ollama.layer" (its manifest index) and "ollama.media_type" first; there is no component
 * filter then (TBLOB_E_INVALID_ARGUMENT). A model without such a layer, or a layer index past
 * the manifest's, is TBLOB_E_OLLAMA_COMPONENT. */
TBLOB_API tblob_status tblob_store_open_model(const tblob_store *store, const char *name,
                                              size_t name_len,
                                              const tblob_store_open_options *options,
                                              tblob_model **out, tblob_diag *diag) TBLOB_NOEXCEPT;

/* ---- Verification (SHA-256 of each blob against its digest and size) ---- */
typedef struct tblob_verify_progress {
  uint32_t struct_size;
  uint32_t reserved;
  uint64_t blobs_total;
  uint64_t blobs_done;
  uint64_t bytes_total;
  uint64_t bytes_done;
} tblob_verify_progress;
/* Called on the calling thread only, during the call. Return non-zero to cancel
 * (TBLOB_E_CANCELLED). */
typedef int (*tblob_verify_progress_fn)(void *user, const tblob_verify_progress *progress);

typedef struct tblob_blob_result {
  uint32_t struct_size;
  tblob_status status;         /* TBLOB_OK or why the blob is bad */
  const char *digest;          /* expected "sha256:<hex>" */
  size_t digest_len;
  const char *actual_digest;   /* computed "sha256:<hex>"; length 0 when not hashed */
  size_t actual_digest_len;
  uint64_t expected_size;
  uint64_t actual_size;        /* UINT64_MAX when the file could not be examined */
  const char *path;            /* the blob file path */
  size_t path_len;
  const char *message;         /* NUL-terminated explanation */
} tblob_blob_result;
/* Called once per distinct blob after it is checked, on the calling thread only; the
 * strings live only during the call. Return non-zero to cancel. */
typedef int (*tblob_blob_result_fn)(void *user, const tblob_blob_result *result);

typedef struct tblob_verify_options {
  uint32_t struct_size;
  uint32_t threads;                  /* 0: one per online CPU */
  tblob_verify_progress_fn progress; /* may be NULL */
  void *progress_user;
  tblob_blob_result_fn on_blob;      /* may be NULL */
  void *on_blob_user;
  uint32_t flags;                    /* TBLOB_VERIFY_* (appended in 0.1: read when covered) */
  uint32_t reserved;                 /* 0 */
} tblob_verify_options;
#define TBLOB_VERIFY_OPTIONS_INIT \
  {(uint32_t)sizeof(tblob_verify_options), 0u, NULL, NULL, NULL, NULL, 0u, 0u}
TBLOB_API tblob_status tblob_verify_options_init(tblob_verify_options *s, size_t struct_size) TBLOB_NOEXCEPT;

/* Hash blobs through a read-only mapping of the page cache instead of read() into a buffer:
 * no copy, about a tenth faster on cached stores. Only for stores that no other process
 * modifies while they are verified: a blob truncated during hashing then raises SIGBUS in
 * the calling process (the default read() path reports TBLOB_E_OLLAMA_BLOB_SIZE instead). */
#define TBLOB_VERIFY_MAP 0x1u

typedef struct tblob_verify_summary {
  uint32_t struct_size;
  uint32_t threads_used;
  uint64_t manifests;          /* manifests read */
  uint64_t manifests_bad;      /* manifests that could not be read */
  uint64_t blobs;              /* distinct blobs checked */
  uint64_t blobs_bad;
  uint64_t bytes_hashed;
} tblob_verify_summary;
#define TBLOB_VERIFY_SUMMARY_INIT {(uint32_t)sizeof(tblob_verify_summary), 0, 0, 0, 0, 0, 0}
TBLOB_API tblob_status tblob_verify_summary_init(tblob_verify_summary *s, size_t struct_size) TBLOB_NOEXCEPT;

/* Verifies every blob (config and layers) of one model, or of every model when name is
 * NULL. Sizes are checked before hashing; each distinct digest is hashed once, whatever
 * shares it. Returns TBLOB_OK when everything matches, otherwise the status of the first
 * bad blob or manifest in name/manifest order (diag names it) after checking all of
 * them: TBLOB_E_DIGEST_MISMATCH, TBLOB_E_OLLAMA_BLOB_SIZE, _BLOB_EMPTY, _BLOB_MISSING, ...
 * summary may be NULL. */
TBLOB_API tblob_status tblob_store_verify(const tblob_store *store, const char *name,
                                          size_t name_len, const tblob_verify_options *options,
                                          tblob_verify_summary *summary,
                                          tblob_diag *diag) TBLOB_NOEXCEPT;

/* Incremental verification of one blob whose bytes arrive in chunks (a downloader).
 * expected_size UINT64_MAX: unknown. update fails with TBLOB_E_OLLAMA_BLOB_SIZE as soon as
 * more bytes than expected arrive; final returns TBLOB_OK, TBLOB_E_OLLAMA_BLOB_EMPTY,
 * TBLOB_E_OLLAMA_BLOB_SIZE or TBLOB_E_DIGEST_MISMATCH, the statuses tblob_store_verify
 * reports for the same bytes. A verifier is used by one thread at a time. */
typedef struct tblob_verifier tblob_verifier;
TBLOB_API tblob_status tblob_verifier_open(const char *digest, size_t digest_len,
                                           uint64_t expected_size, tblob_verifier **out,
                                           tblob_diag *diag) TBLOB_NOEXCEPT;
TBLOB_API tblob_status tblob_verifier_update(tblob_verifier *verifier, const void *data,
                                             size_t len, tblob_diag *diag) TBLOB_NOEXCEPT;
/* actual_digest (may be NULL) receives "sha256:<hex>" and a NUL: at least 72 bytes. */
TBLOB_API tblob_status tblob_verifier_final(tblob_verifier *verifier, char *actual_digest,
                                            size_t actual_digest_capacity,
                                            tblob_diag *diag) TBLOB_NOEXCEPT;
TBLOB_API void tblob_verifier_close(tblob_verifier *verifier) TBLOB_NOEXCEPT;

#ifdef TBLOB_EXPERIMENTAL_API
/* Experimental until 1.0 (docs/api.md, "Stability"): declared only when
 * TBLOB_EXPERIMENTAL_API is defined before this header is included. */
/* ---- Import (the `ollama create` flow for a safetensors directory) ---- */
/* tblob_import_options.flags */
#define TBLOB_IMPORT_TRUST_EXISTING 1u /* reuse a blob already present by size, unhashed */

typedef struct tblob_import_progress {
  uint32_t struct_size;
  uint32_t reserved;
  uint64_t tensors_total;  /* source tensors to import */
  uint64_t tensors_done;   /* in blobs written or found in the store */
  uint64_t bytes_total;    /* their data bytes */
  uint64_t bytes_done;
} tblob_import_progress;
/* Called on the calling thread only, during the call: once before the first blob and after
 * every tensor blob. Return non-zero to cancel (TBLOB_E_CANCELLED): the manifest is not
 * written; blobs already written are complete, are reused by the next import and are what
 * tblob_store_gc lists until a manifest references them. */
typedef int (*tblob_import_progress_fn)(void *user, const tblob_import_progress *progress);

typedef struct tblob_import_options {
  uint32_t struct_size;
  uint32_t flags;                    /* TBLOB_IMPORT_* */
  const tblob_open_options *open;    /* limits for reading the source; NULL: defaults */
  tblob_import_progress_fn progress; /* may be NULL (appended in 0.1: read when covered) */
  void *progress_user;
} tblob_import_options;
#define TBLOB_IMPORT_OPTIONS_INIT {(uint32_t)sizeof(tblob_import_options), 0u, NULL, NULL, NULL}
TBLOB_API tblob_status tblob_import_options_init(tblob_import_options *s, size_t struct_size) TBLOB_NOEXCEPT;

typedef struct tblob_import_result {
  uint32_t struct_size;
  uint32_t manifest_written;   /* 0 when the manifest already had these exact bytes */
  uint64_t layers;             /* layers in the manifest */
  uint64_t tensors;
  uint64_t blobs_written;
  uint64_t blobs_reused;       /* already in the store (de-duplicated) */
  uint64_t bytes_written;
} tblob_import_result;
#define TBLOB_IMPORT_RESULT_INIT {(uint32_t)sizeof(tblob_import_result), 0, 0, 0, 0, 0, 0}
TBLOB_API tblob_status tblob_import_result_init(tblob_import_result *s, size_t struct_size) TBLOB_NOEXCEPT;

/* Imports source_dir (config.json, *.safetensors or a sharded checkpoint, other *.json,
 * and component subdirectories such as text_encoder/ transformer/ vae/) as model `name`:
 * one minimal blob per tensor (Go writer header: sorted keys, space padding to 8 bytes),
 * expert tensors grouped per layer (model.layers.N.mlp.experts / .shared_experts ...)
 * into packed blobs, JSON files as ...image.json layers, a ConfigV2 config blob, each
 * blob written atomically (temp file, fsync, rename) and de-duplicated by content,
 * and the manifest written atomically last, once every blob it names is checked to be still
 * there (TBLOB_E_OLLAMA_BLOB_MISSING, no manifest, when one was removed meanwhile, e.g. by a
 * concurrent tblob_store_gc). Running it again changes nothing. */
TBLOB_API tblob_status tblob_store_import(const tblob_store *store, const char *name,
                                          size_t name_len, const char *source_dir,
                                          const tblob_import_options *options,
                                          tblob_import_result *result,
                                          tblob_diag *diag) TBLOB_NOEXCEPT;

/* ---- Garbage collection ---- */
/* tblob_gc_options.flags */
#define TBLOB_GC_REMOVE 1u /* delete what is listed (default: dry run) */

typedef enum tblob_gc_kind {
  TBLOB_GC_UNREFERENCED = 1, /* sha256-<hex> that no manifest references */
  TBLOB_GC_PARTIAL = 2,      /* a partial download (sha256-<hex>-partial...) */
  TBLOB_GC_TEMP = 3          /* a temporary file left by an interrupted write */
} tblob_gc_kind;

typedef struct tblob_gc_entry {
  uint32_t struct_size;
  uint32_t kind;               /* tblob_gc_kind */
  const char *file_name;       /* inside blobs/, or manifests/<h>/<n>/<m>/.tblob-tmp-... (TBLOB_GC_TEMP) */
  size_t file_name_len;
  uint64_t size;
  tblob_status removed;        /* with TBLOB_GC_REMOVE: TBLOB_OK or why unlink failed */
  uint32_t reserved;           /* 0 */
} tblob_gc_entry;
typedef int (*tblob_gc_fn)(void *user, const tblob_gc_entry *entry);

typedef struct tblob_gc_options {
  uint32_t struct_size;
  uint32_t flags;              /* TBLOB_GC_* */
  tblob_gc_fn on_entry;        /* may be NULL; called on the calling thread, during the call */
  void *user;
  int64_t min_age_seconds;     /* partial and temp files younger than this are left alone */
} tblob_gc_options;
#define TBLOB_GC_OPTIONS_INIT {(uint32_t)sizeof(tblob_gc_options), 0u, NULL, NULL, 3600}
TBLOB_API tblob_status tblob_gc_options_init(tblob_gc_options *s, size_t struct_size) TBLOB_NOEXCEPT;

typedef struct tblob_gc_result {
  uint32_t struct_size;
  uint32_t reserved;
  uint64_t manifests;
  uint64_t referenced_blobs;
  uint64_t listed_files;
  uint64_t listed_bytes;
  uint64_t removed_files;
  uint64_t removed_bytes;
} tblob_gc_result;
#define TBLOB_GC_RESULT_INIT {(uint32_t)sizeof(tblob_gc_result), 0, 0, 0, 0, 0, 0, 0}
TBLOB_API tblob_status tblob_gc_result_init(tblob_gc_result *s, size_t struct_size) TBLOB_NOEXCEPT;

/* Lists (and with TBLOB_GC_REMOVE deletes) the files in blobs/ that no manifest
 * references. Refuses with TBLOB_E_OLLAMA_CORRUPT_STORE when any manifest cannot be read,
 * since its blobs would look unreferenced. Files not named like blobs are never touched. */
TBLOB_API tblob_status tblob_store_gc(const tblob_store *store, const tblob_gc_options *options,
                                      tblob_gc_result *result, tblob_diag *diag) TBLOB_NOEXCEPT;

/* ---- Writing safetensors headers (used by `tensorblob export`) ---- */
typedef struct tblob_st_tensor_spec {
  const char *name;            /* UTF-8, not NUL-terminated */
  size_t name_len;
  uint32_t dtype;              /* tblob_dtype */
  uint32_t rank;
  const uint64_t *shape;       /* rank dims; may be NULL when rank is 0 */
  uint64_t data_bytes;         /* the tensor's byte length */
} tblob_st_tensor_spec;

/* The start of a safetensors file: the 8-byte little-endian header length and the JSON
 * header, padded with spaces to a multiple of 8, for tensors whose data follow the header
 * in list order (keys sorted by name; "__metadata__" first with meta_count string pairs of
 * NUL-terminated keys and values when meta_count > 0). Writes into buf when it fits;
 * *out_len is set even on TBLOB_E_BUFFER_TOO_SMALL (buf NULL, capacity 0 to ask).
 * TBLOB_E_INVALID_ARGUMENT for an unknown dtype, NULL pointers with lengths or offsets past
 * 2^64. */
TBLOB_API tblob_status tblob_st_header_write(const tblob_st_tensor_spec *tensors, size_t count,
                                             const char *const *meta_keys,
                                             const char *const *meta_values, size_t meta_count,
                                             void *buf, size_t buf_capacity, size_t *out_len,
                                             tblob_diag *diag) TBLOB_NOEXCEPT;

/* ---- Converting to an MLX model directory (used by `tensorblob convert --to mlx`) ----
 * What `mlx_lm.convert -q` writes, without MLX and in bounded memory (docs/quantize.md,
 * "Converting to MLX"): every F32/F16/BF16 rank-2 `*.weight` whose last dimension the group
 * divides becomes `X.weight` (U32 codes), `X.scales` and, for affine, `X.biases` (as
 * tblob_quant_quantize writes them from the tensor cast to `dtype`); other F32/F16/BF16 tensors
 * are cast to `dtype`, the rest copied. config.json gains "quantization" and
 * "quantization_config"; the source directory's other files (tokenizer, generation config)
 * are copied. One model.safetensors, metadata {"format": "mlx"}. out_dir must not exist; it
 * is written as out_dir.tmp-<pid> and renamed when complete. */
typedef struct tblob_mlx_convert_options {
  uint32_t struct_size;
  uint32_t q_scheme;     /* TBLOB_QUANT_MLX_AFFINE, _MXFP4, _MXFP8 or _NVFP4 */
  uint32_t q_bits;       /* 0: the mode's default (affine 4, mxfp8 8, mxfp4 and nvfp4 4) */
  uint32_t q_group_size; /* 0: the mode's default (affine 64, mxfp4 and mxfp8 32, nvfp4 16) */
  uint32_t dtype;        /* 0: config.json's "torch_dtype" (float32/float16/bfloat16), else
                            each tensor's own; or TBLOB_DTYPE_F32, _F16, _BF16 */
  uint32_t threads;      /* as tblob_quantize_options.threads */
} tblob_mlx_convert_options;
#define TBLOB_MLX_CONVERT_OPTIONS_INIT \
  {(uint32_t)sizeof(tblob_mlx_convert_options), TBLOB_QUANT_MLX_AFFINE, 0u, 0u, 0u, 0u}
TBLOB_API tblob_status tblob_mlx_convert_options_init(tblob_mlx_convert_options *s,
                                                      size_t struct_size) TBLOB_NOEXCEPT;
/* src: a safetensors file or a directory (single file or sharded), config.json beside it.
 * Statuses: those of tblob_model_open and tblob_quant_quantize (TBLOB_E_QUANT_NONFINITE and
 * TBLOB_E_QUANT_VALUE name the tensor), TBLOB_E_IO (out_dir exists, a write failed), TBLOB_E_NOT_FOUND (no config.json),
 * TBLOB_E_UNSUPPORTED (an already quantized source, a config that has "quantization"),
 * TBLOB_E_INVALID_ARGUMENT. */
TBLOB_API tblob_status tblob_mlx_convert(const char *src, const char *out_dir,
                                         const tblob_mlx_convert_options *options,
                                         tblob_diag *diag) TBLOB_NOEXCEPT;

/* ---- Writing GGUF (streaming) ---- */
/* A GGUF v3 (or v2) file written as it goes: key/values and tensor infos are collected (the
 * header is held in memory), then each tensor's data is passed in table order, in one or
 * more pieces, and written through; memory use never depends on the tensor data. The file
 * is laid out as ggml and gguf-py lay it out: header, zero padding to the alignment, each
 * tensor's bytes followed by zero padding to the alignment. The alignment is 32, or the
 * value of a "general.alignment" key (u32, a power of two, else TBLOB_E_GGUF_ALIGNMENT).
 * Everything the writer accepts, the reader accepts (docs/gguf.md, the rules it checks). */
typedef struct tblob_gguf_writer tblob_gguf_writer;

/* A metadata value (value_type a tblob_meta_type, as in tblob_metadata_value).
 *  - scalars: data points to one value in host representation (uint8_t for BOOL; any
 *    non-zero byte is written as 1); length unused.
 *  - STRING: data points to length bytes (not NUL-terminated, not checked as UTF-8).
 *  - ARRAY of a scalar element_type: data points to length host values.
 *  - ARRAY of STRING or ARRAY: data points to length tblob_gguf_value entries, each of value_type
 *    element_type (nested arrays need TBLOB_GGUF_WRITE_NESTED_ARRAYS). */
typedef struct tblob_gguf_value {
  uint32_t value_type;     /* tblob_meta_type */
  uint32_t element_type;   /* ARRAY: the elements' type */
  const void *data;
  uint64_t length;         /* STRING: bytes; ARRAY: elements */
} tblob_gguf_value;

/* tblob_gguf_writer_options.flags */
/* Accept arrays of arrays. gguf-py writes and reads them; ggml and this library's reader
 * refuse them (TBLOB_E_GGUF_ARRAY), so a file holding one opens only in gguf-py. */
#define TBLOB_GGUF_WRITE_NESTED_ARRAYS 1u

/* Called with the file's bytes in order; return 0 to go on, non-zero to stop the writer
 * (TBLOB_E_CANCELLED). */
typedef int (*tblob_gguf_write_fn)(void *user, const void *data, size_t length);

typedef struct tblob_gguf_writer_options {
  uint32_t struct_size;
  uint32_t version;         /* 0: 3; 2 or 3 (the layouts are the same) */
  uint32_t flags;           /* TBLOB_GGUF_WRITE_* */
  uint32_t file_mode;       /* path writers: the file's permission bits; 0: 0644 */
  const tblob_allocator *allocator; /* NULL: libc */
} tblob_gguf_writer_options;
#define TBLOB_GGUF_WRITER_OPTIONS_INIT {(uint32_t)sizeof(tblob_gguf_writer_options), 0u, 0u, 0u, NULL}
TBLOB_API tblob_status tblob_gguf_writer_options_init(tblob_gguf_writer_options *s,
                                                      size_t struct_size) TBLOB_NOEXCEPT;

/* A writer to path: the bytes go to a temporary file in path's directory (created now),
 * which finish fsyncs and renames over path. Until then path is untouched; a writer closed
 * (or a process killed) before finish leaves nothing under path. TBLOB_E_IO when the
 * temporary file cannot be created. */
TBLOB_API tblob_status tblob_gguf_writer_open(const char *path,
                                              const tblob_gguf_writer_options *options,
                                              tblob_gguf_writer **out,
                                              tblob_diag *diag) TBLOB_NOEXCEPT;
/* A writer to a callback (called on the calling thread, during writer calls). */
TBLOB_API tblob_status tblob_gguf_writer_open_callback(tblob_gguf_write_fn fn, void *user,
                                                       const tblob_gguf_writer_options *options,
                                                       tblob_gguf_writer **out,
                                                       tblob_diag *diag) TBLOB_NOEXCEPT;

/* Adds a key/value (file order is call order). key: key_len bytes, not empty. An empty,
 * duplicate key: TBLOB_E_GGUF_KEY; a string or array past 2^30: TBLOB_E_GGUF_STRING /
 * TBLOB_E_GGUF_ARRAY; an unknown type: TBLOB_E_GGUF_VALUE_TYPE; after the first tensor data
 * (or finish): TBLOB_E_GGUF_WRITE_ORDER. A refused call changes nothing. */
TBLOB_API tblob_status tblob_gguf_writer_add_value(tblob_gguf_writer *writer, const char *key,
                                                   size_t key_len, const tblob_gguf_value *value,
                                                   tblob_diag *diag) TBLOB_NOEXCEPT;

/* Adds a tensor info (table order is call order): shape outermost first, as the table lists
 * it (written reversed, as GGUF's ne), rank 0..4; ggml_type a ggml type id. *data_bytes (may
 * be NULL) receives the byte count its data must have. Statuses as the reader's: name of 64
 * bytes or more TBLOB_E_GGUF_NAME, TBLOB_E_GGUF_DIMS, TBLOB_E_GGUF_TYPE, TBLOB_E_GGUF_ROW,
 * TBLOB_E_SHAPE_OVERFLOW, a name already added TBLOB_E_DUPLICATE_NAME; after the data
 * began TBLOB_E_GGUF_WRITE_ORDER. */
TBLOB_API tblob_status tblob_gguf_writer_add_tensor(tblob_gguf_writer *writer, const char *name,
                                                    size_t name_len, const uint64_t *shape,
                                                    uint32_t rank, uint32_t ggml_type,
                                                    uint64_t *data_bytes,
                                                    tblob_diag *diag) TBLOB_NOEXCEPT;

/* Writes length bytes of tensor `tensor` (its index in add order). The first call writes
 * the header. Each tensor's bytes come in one or more calls, tensors in table order (a
 * tensor of 0 bytes needs no call). More bytes than the tensor holds:
 * TBLOB_E_GGUF_WRITE_SIZE; a tensor other than the next one (an earlier one, or a later one
 * while this one's bytes are incomplete): TBLOB_E_GGUF_WRITE_ORDER; either refused call
 * writes nothing. A failed write (TBLOB_E_IO, TBLOB_E_CANCELLED) ends the writer: every
 * later call returns that status and nothing is left under the final name. */
TBLOB_API tblob_status tblob_gguf_writer_write(tblob_gguf_writer *writer, uint64_t tensor,
                                               const void *data, size_t length,
                                               tblob_diag *diag) TBLOB_NOEXCEPT;

/* Completes the file: writes the header if no data was written, checks every tensor's bytes
 * came (TBLOB_E_GGUF_WRITE_SIZE naming the first short one; the writer stays usable), then a
 * path writer fsyncs, renames the temporary file over path and syncs the directory.
 * *bytes_written (may be NULL) receives the file's length. */
TBLOB_API tblob_status tblob_gguf_writer_finish(tblob_gguf_writer *writer, uint64_t *bytes_written,
                                                tblob_diag *diag) TBLOB_NOEXCEPT;
/* Frees the writer; before finish, removes its temporary file. NULL is a no-op. */
TBLOB_API void tblob_gguf_writer_close(tblob_gguf_writer *writer) TBLOB_NOEXCEPT;
#endif /* TBLOB_EXPERIMENTAL_API */

/* ------------------------------------------------------------------------------------------
 * UQFF (mistral.rs)
 * ---------------------------------------------------------------------------------------- */
/* A UQFF export (mistral.rs) is a directory of `<stem>-N.uqff` shards (safetensors files),
 * residual.safetensors and JSON assets (docs/uqff.md). tblob_model_open opens a UQFF
 * directory or any shard of a set (its siblings are found). The model's table holds:
 *  - one row per quantized layer, named "<key>.weight". dtype, data_offset, data_length and
 *    tblob_tensor_data describe the stored `<key>.weight` entry (raw ggml blocks as U8, AFQ's
 *    U32 words, F8_E4M3, ...); shape and element_count are the LOGICAL shape ([out, in], or
 *    [E, out, in] for stacked experts). tblob_uqff_layer_info tells family and parameters;
 *  - one row per `<key>.bias` and per residual.safetensors tensor, as stored.
 * The files are the shards (in set order), then residual.safetensors, then the assets. */
#define TBLOB_UQFF_READER_MAJOR 1 /* the UQFF version this library reads: 1.x up to 1.2 */
#define TBLOB_UQFF_READER_MINOR 2

typedef enum tblob_uqff_family {
  TBLOB_UQFF_GGUF = 0,    /* ggml blocks (Q4_0 ... Q8_K) and F32/F16/BF16 fallbacks */
  TBLOB_UQFF_UNQUANT = 1, /* a dense tensor */
  TBLOB_UQFF_HQQ = 2,     /* HQQ 4/8 bit */
  TBLOB_UQFF_FP8 = 3,     /* per-tensor F8_E4M3 with one scale */
  TBLOB_UQFF_AFQ = 4,     /* MLX-style affine, 2/3/4/6/8 bit */
  TBLOB_UQFF_F8Q8 = 5,    /* 33-byte blocks: E4M3 scale + 32 int8 */
  TBLOB_UQFF_MXFP4 = 6,   /* E2M1 pairs + separate E8M0 scales (UQFF nibble order) */
  TBLOB_UQFF_PLAIN = 255  /* not a layer: a bias or residual tensor */
} tblob_uqff_family;

/* Opens a shard set: paths is one directory, one shard (its `<stem>-N.uqff` siblings, or the
 * shards uqff_report.json lists with it), or path_count shard files used as given. Every
 * shard is validated as safetensors and indexed before layers are resolved (a layer's
 * entries may straddle shards). Version rules (mistral.rs UqffReader::open): version tensors
 * anywhere in the set (mistral.rs writes them to shard 0 only), equal where repeated, U32
 * 0-d; major 1; minor <= 2; a `uqff.version` metadata string does not replace them. Every
 * layer must pass the structural and size checks of tblob_uqff_verify (the first problem is
 * the error). options may be NULL. */
TBLOB_API tblob_status tblob_uqff_open(const char *const *paths, size_t path_count,
                                       const tblob_open_options *options, tblob_model **out,
                                       tblob_diag *diag) TBLOB_NOEXCEPT;

/* The same for shards held in caller buffers, which must outlive the model (borrowed, never
 * copied; no residual or assets; file paths read "(memory shard N)"). */
TBLOB_API tblob_status tblob_uqff_open_memory(const void *const *bufs, const size_t *lens,
                                              size_t count, const tblob_open_options *options,
                                              tblob_model **out, tblob_diag *diag) TBLOB_NOEXCEPT;

typedef struct tblob_uqff_layer_info {
  uint32_t struct_size;
  uint32_t family;        /* tblob_uqff_family */
  const char *label;      /* static, as mistral.rs labels stored types: "q4k", "q8_0", "f16",
                             "afq4", "hqq8", "fp8", "f8q8", "mxfp4", "unquant"; "bias",
                             "residual" for plain rows */
  uint32_t ggml_type;     /* GGUF: ggml_type id (2 Q4_0 ... 15 Q8_K, 0/1/30 floats), else UINT32_MAX */
  uint32_t bits;          /* bits per stored element (GGUF: nominal, Q4_K = 4) */
  uint32_t group_size;    /* AFQ/HQQ group; GGUF block (32, 256; 1 for floats); F8Q8/MXFP4 32 */
  uint32_t weight_dtype;  /* tblob_dtype of the stored <key>.weight (plain rows: the tensor) */
  uint32_t scale_dtype;   /* AFQ/HQQ scales; F32 for FP8; F8_E8M0 for MXFP4; 0 when none */
  uint32_t shard;         /* file index of <key>.weight */
  uint32_t shard_span;    /* shards holding the layer's entries (2 or more: it straddles) */
  uint32_t has_bias;      /* a "<key>.bias" row exists */
  uint64_t experts;       /* E of a stacked [E, out, in] layer, 0 otherwise */
  uint64_t rows;          /* rows per expert; product of the leading dims otherwise */
  uint64_t cols;          /* the last logical dim (1 for a 0-d tensor) */
  uint64_t stored_bytes;  /* bytes of all the layer's entries */
} tblob_uqff_layer_info;
#define TBLOB_UQFF_LAYER_INFO_INIT \
  {(uint32_t)sizeof(tblob_uqff_layer_info), 0, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
TBLOB_API tblob_status tblob_uqff_layer_info_init(tblob_uqff_layer_info *s, size_t struct_size) TBLOB_NOEXCEPT;

/* The quant scheme of row `index` of a UQFF model (TBLOB_E_INVALID_ARGUMENT otherwise). */
TBLOB_API tblob_status tblob_uqff_layer_info_at(const tblob_model *model, uint64_t index,
                                                tblob_uqff_layer_info *info,
                                                tblob_diag *diag) TBLOB_NOEXCEPT;

/* ---- Verify: every problem of a shard set, as `mistralrs uqff verify` reports them ---- */
typedef enum tblob_uqff_entry_kind {
  TBLOB_UQFF_ENTRY_SET = 0,   /* last entry: the set, its version and set-level problems */
  TBLOB_UQFF_ENTRY_SHARD = 1, /* one per shard / residual file, as it is scanned */
  TBLOB_UQFF_ENTRY_LAYER = 2  /* one per layer key (and per stray entry) */
} tblob_uqff_entry_kind;

typedef enum tblob_uqff_severity { TBLOB_UQFF_ERROR = 0, TBLOB_UQFF_WARNING = 1 } tblob_uqff_severity;

typedef struct tblob_uqff_problem {
  uint32_t struct_size;
  uint32_t severity;   /* tblob_uqff_severity */
  tblob_status status; /* TBLOB_E_UQFF_* (warnings too carry one) */
  uint32_t reserved;   /* 0 */
  const char *message; /* NUL-terminated, names the layer / tensor / file */
  size_t message_len;
} tblob_uqff_problem;

typedef struct tblob_uqff_report_entry {
  uint32_t struct_size;
  uint32_t kind;           /* tblob_uqff_entry_kind */
  const char *name;        /* set: the first path; shard: its path; layer: "<key>.weight" */
  size_t name_len;
  uint32_t family;         /* layers: tblob_uqff_family (TBLOB_UQFF_PLAIN when unresolved) */
  uint32_t reserved;       /* 0 */
  const char *label;       /* as tblob_uqff_layer_info.label; "" when unresolved */
  uint32_t ggml_type;      /* UINT32_MAX unless GGUF */
  uint32_t bits;
  uint32_t group_size;
  uint32_t shard;          /* layer: file index of <key>.weight; shard: its index; set: shard count */
  uint32_t shard_span;
  uint32_t dtype;          /* stored dtype of <key>.weight */
  const uint64_t *shape;   /* logical shape, NULL when the layer did not resolve */
  uint32_t rank;
  uint32_t has_bias;
  uint64_t experts;
  uint64_t stored_bytes;
  uint32_t version_major;  /* set entry: the version found (0 when absent) */
  uint32_t version_minor;
  uint32_t version_patch;
  uint32_t problem_count;
  const tblob_uqff_problem *problems;
} tblob_uqff_report_entry;

/* Called on the calling thread; everything is borrowed for the call. Non-zero stops the
 * verify (TBLOB_E_CANCELLED). */
typedef int (*tblob_uqff_report_fn)(void *user, const tblob_uqff_report_entry *entry);

typedef struct tblob_uqff_verify_result {
  uint32_t struct_size;
  uint32_t version_major, version_minor, version_patch;
  uint32_t shards;
  uint32_t reserved; /* 0 */
  uint64_t layers;
  uint64_t tensors;  /* bias and residual tensors */
  uint64_t errors;
  uint64_t warnings; /* missing producer metadata, tensors config.json needs, ... */
} tblob_uqff_verify_result;
#define TBLOB_UQFF_VERIFY_RESULT_INIT \
  {(uint32_t)sizeof(tblob_uqff_verify_result), 0, 0, 0, 0, 0, 0, 0, 0, 0}
TBLOB_API tblob_status tblob_uqff_verify_result_init(tblob_uqff_verify_result *s, size_t struct_size) TBLOB_NOEXCEPT;

/* Checks a shard set as tblob_uqff_open does but goes on after problems, reporting each
 * shard, each layer (family, bits, shard, problems) and finally the set. Returns TBLOB_OK
 * when no error was found (warnings allowed), else the first error (in diag). A container
 * error in a shard (not safetensors) ends the verify after reporting it. fn may be NULL. */
TBLOB_API tblob_status tblob_uqff_verify(const char *const *paths, size_t path_count,
                                         const tblob_open_options *options,
                                         tblob_uqff_report_fn fn, void *user,
                                         tblob_uqff_verify_result *result,
                                         tblob_diag *diag) TBLOB_NOEXCEPT;

/* tblob_uqff_verify over shards held in caller buffers (as tblob_uqff_open_memory). */
TBLOB_API tblob_status tblob_uqff_verify_memory(const void *const *bufs, const size_t *lens,
                                                size_t count, const tblob_open_options *options,
                                                tblob_uqff_report_fn fn, void *user,
                                                tblob_uqff_verify_result *result,
                                                tblob_diag *diag) TBLOB_NOEXCEPT;

/* Raw ggml blocks (no model): `elements` values (a multiple of the type's block size) of
 * ggml type `ggml_type` (ggml's numbering: F32 0, F16 1, Q4_0 2 ... Q8_K 15, IQ2_XXS 16 ...
 * IQ4_XS 23, IQ1_M 29, BF16 30, TQ1_0 34, TQ2_0 35, MXFP4 39, NVFP4 40, Q1_0 41; docs/gguf.md
 * lists what decodes) from exactly the bytes they take, to out_dtype F32/F16/BF16.
 * TBLOB_E_UNSUPPORTED for a type with no decoder (integers, F64, ggml's Q2_0 42, unknown ids). */
TBLOB_API tblob_status tblob_ggml_dequantize(uint32_t ggml_type, const void *src, size_t src_bytes,
                                             uint64_t elements, uint32_t out_dtype, void *dst,
                                             size_t dst_bytes, tblob_diag *diag) TBLOB_NOEXCEPT;
/* Bytes of one row of `cols` values of ggml type `ggml_type` (what ggml_row_size gives): cols
 * must be a multiple of the type's block size (TBLOB_E_QUANT_GROUP_SIZE otherwise).
 * TBLOB_E_UNSUPPORTED for an unknown type id, TBLOB_E_SHAPE_OVERFLOW when the count overflows. */
TBLOB_API tblob_status tblob_ggml_row_size(uint32_t ggml_type, uint64_t cols, uint64_t *bytes,
                                           tblob_diag *diag) TBLOB_NOEXCEPT;
/* Quantizes rows x cols values (row-major) of src_dtype (TBLOB_DTYPE_F32, _F16 or _BF16; src
 * exactly rows * cols * element bytes) into rows * tblob_ggml_row_size(cols) bytes of ggml
 * blocks at dst (dst_bytes may be larger: the rest is left untouched), bit-exact with ggml's
 * ggml_quantize_chunk (docs/quantize.md "GGML blocks" lists the types, the reference build and
 * the edge cases). importance: NULL, or `cols` per-column weights (finite, >= 0) for the types
 * that take them (ignored, but still checked, by the others); options->importance must then
 * be NULL (give the weights in one place). options NULL: the defaults; rows are shared out on
 * options->threads threads and the bytes never depend on the count. Memory: at most one row
 * of f32 scratch per thread (F16/BF16 input, or F32 input not 4-byte aligned).
 * Statuses: TBLOB_E_UNSUPPORTED (a type with no quantizer), TBLOB_E_QUANT_GROUP_SIZE (cols not
 * a multiple of the block), TBLOB_E_DTYPE (src_dtype), TBLOB_E_QUANT_DATA_SIZE (src_bytes
 * differs from what rows x cols need), TBLOB_E_BUFFER_TOO_SMALL, TBLOB_E_SHAPE_OVERFLOW,
 * TBLOB_E_QUANT_NONFINITE (a NaN or Inf input value: ggml's output for it is undefined; diag's
 * message names the row and column; dst is then unspecified), TBLOB_E_QUANT_IMPORTANCE
 * (a weight negative or not finite), TBLOB_E_OUT_OF_MEMORY, TBLOB_E_INVALID_ARGUMENT. */
TBLOB_API tblob_status tblob_ggml_quantize(uint32_t ggml_type, uint32_t src_dtype, const void *src,
                                           size_t src_bytes, uint64_t rows, uint64_t cols,
                                           const float *importance, void *dst, size_t dst_bytes,
                                           const tblob_quantize_options *options,
                                           tblob_diag *diag) TBLOB_NOEXCEPT;
/* The GGML kernels in use: "scalar", "avx2" or "neon"; they follow tblob_kernel_set /
 * TBLOB_KERNEL ("avx512" runs the AVX2 GGML kernels, "neon" the NEON ones). */
TBLOB_API const char *tblob_ggml_kernel_name(void) TBLOB_NOEXCEPT;
/* *is_uqff = 1 when path is a directory holding `*.uqff` shards or uqff_report.json, or a
 * file whose safetensors header names UQFF entries (what tblob_model_open opens as UQFF);
 * else 0 (TBLOB_OK either way). TBLOB_E_INVALID_ARGUMENT for NULL arguments. */
TBLOB_API tblob_status tblob_uqff_detect(const char *path, int *is_uqff,
                                         tblob_diag *diag) TBLOB_NOEXCEPT;

/* ------------------------------------------------------------------------------------------
 * SLM1
 * ---------------------------------------------------------------------------------------- */
/* SLM1 (.slm, TinyRustLM's container) as pinned by docs/slm1.md. tblob_model_open detects it
 * by its magic; the calls below add what only SLM1 has. In the generic table an SLM1 tensor:
 *  - has index = its directory index (not sorted by offset);
 *  - is named by the caller's list (tblob_slm1_open_options) when a listed name hashes to its
 *    entry, else by the synthetic "fnv1a:<16 lowercase hex>" (files store only hashes; that
 *    text is a label: tblob_tensor_find hashes it like any name, use tblob_slm1_find_hash instead);
 *  - describes its stored payload bytes: dtype F32 (f32), I8 (q8_0 codes, shape as stored) or
 *    U8 (q4_0, two codes per byte: shape as stored with the last dimension halved). The SLM1
 *    dtype, logical shape, block size and scales come from tblob_slm1_tensor_at.
 * tblob_tensor_find on an SLM1 model hashes the name with FNV-1a 64 and looks the hash up; a name
 * whose hash belongs to a different name of the caller's list is TBLOB_E_HASH_COLLISION.
 * The header fields also appear as metadata ("hidden_size" -> "4", ..., "checksum"). */

/* tblob_open_options.flags bits for SLM1 (0 = the strict default). */
#define TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM (1u << 16)    /* skip only the checksum (section 10) */
#define TBLOB_OPEN_FLAG_SLM1_NO_SCALE_CHECK (1u << 17) /* skip finite/positive scale checks */

typedef enum tblob_slm1_dtype {
  TBLOB_SLM1_F32 = 1,
  TBLOB_SLM1_Q8_0 = 2, /* i8 codes, one f32 scale per row (block_size == cols) */
  TBLOB_SLM1_Q4_0 = 3  /* signed nibbles, low first; one f32 scale per block_size values */
} tblob_slm1_dtype;

typedef enum tblob_slm1_tokenizer_kind {
  TBLOB_SLM1_TOKENIZER_BTOK = 1, /* byte tokenizer, vocabulary 260 */
  TBLOB_SLM1_TOKENIZER_BPE1 = 2
} tblob_slm1_tokenizer_kind;

/* FNV-1a 64 (basis 0xcbf29ce484222325, prime 0x100000001b3) of exactly these bytes. */
TBLOB_API uint64_t tblob_fnv1a64(const void *data, size_t len) TBLOB_NOEXCEPT;

/* The names a runtime will look up. Checked at open: two different names with one hash are
 * TBLOB_E_HASH_COLLISION (the same name twice counts once); afterwards a name that is not
 * listed but hashes like a listed one is refused by tblob_tensor_find. Listed names are copied. */
typedef struct tblob_slm1_open_options {
  uint32_t struct_size;
  uint32_t reserved;                 /* 0 */
  const char *const *required_names; /* UTF-8 bytes, not NUL-terminated */
  const size_t *required_name_lens;
  size_t required_name_count;
} tblob_slm1_open_options;
#define TBLOB_SLM1_OPEN_OPTIONS_INIT \
  {(uint32_t)sizeof(tblob_slm1_open_options), 0u, NULL, NULL, 0}
TBLOB_API tblob_status tblob_slm1_open_options_init(tblob_slm1_open_options *s, size_t struct_size) TBLOB_NOEXCEPT;

/* Open an SLM1 file or buffer (anything else: TBLOB_E_UNKNOWN_FORMAT). options and
 * slm1_options may be NULL. The buffer of _memory must outlive the model. */
TBLOB_API tblob_status tblob_slm1_open_path(const char *path, const tblob_open_options *options,
                                            const tblob_slm1_open_options *slm1_options,
                                            tblob_model **out, tblob_diag *diag) TBLOB_NOEXCEPT;
TBLOB_API tblob_status tblob_slm1_open_memory(const void *buf, size_t len,
                                              const tblob_open_options *options,
                                              const tblob_slm1_open_options *slm1_options,
                                              tblob_model **out, tblob_diag *diag) TBLOB_NOEXCEPT;

typedef struct tblob_slm1_header_info {
  uint32_t struct_size;
  uint32_t version;
  uint32_t header_length;
  uint32_t model_type;
  uint32_t flags;               /* bit 0: tied output projection */
  uint32_t vocab_size;
  uint32_t special_token_count;
  uint32_t hidden_size;
  uint32_t layer_count;
  uint32_t head_count;
  uint32_t kv_head_count;
  uint32_t head_dim;
  uint32_t ffn_size;
  uint32_t max_context;
  float rope_theta;
  float rms_norm_epsilon;
  uint32_t tokenizer_kind;      /* tblob_slm1_tokenizer_kind */
  uint32_t tensor_count;
  uint64_t tokenizer_offset;
  uint64_t tokenizer_length;
  uint64_t tensor_directory_offset;
  uint64_t tensor_data_offset;
  uint64_t checksum;            /* as stored */
  uint32_t checksum_verified;   /* 0 when TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM skipped it */
  uint32_t directory_sorted;    /* 1: hashes strictly increasing (binary search) */
  const uint8_t *tokenizer;     /* the section's bytes, borrowed */
} tblob_slm1_header_info;
#define TBLOB_SLM1_HEADER_INFO_INIT                                                            \
  {(uint32_t)sizeof(tblob_slm1_header_info), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.0f, 0.0f, \
   0, 0, 0, 0, 0, 0, 0, 0, 0, NULL}
TBLOB_API tblob_status tblob_slm1_header_info_init(tblob_slm1_header_info *s, size_t struct_size) TBLOB_NOEXCEPT;

/* TBLOB_E_INVALID_ARGUMENT when the model is not SLM1. */
TBLOB_API tblob_status tblob_slm1_header(const tblob_model *model, tblob_slm1_header_info *info,
                                         tblob_diag *diag) TBLOB_NOEXCEPT;

typedef struct tblob_slm1_tensor_info {
  uint32_t struct_size;
  uint32_t dtype;            /* tblob_slm1_dtype */
  uint64_t name_hash;
  uint32_t rank;             /* 1..4 */
  uint32_t block_size;       /* 0 for f32; cols for q8_0 */
  uint64_t dims[4];          /* logical shape, outermost first, 0 beyond rank */
  uint64_t rows;             /* product of all dims but the last */
  uint64_t cols;             /* the last dim */
  uint64_t byte_offset;      /* payload, absolute; multiple of 64 */
  uint64_t byte_length;
  uint64_t scale_offset;     /* absolute; 0 for f32 */
  uint64_t scale_length;     /* bytes of f32 scales; 0 for f32 */
  const void *payload;       /* zero-copy views, valid until close */
  const void *scales;        /* NULL for f32 */
  uint64_t entry_offset;     /* byte offset of the 64-byte directory entry */
  uint32_t name_listed;      /* 1: the name came from the caller's list */
  uint32_t reserved;
} tblob_slm1_tensor_info;
#define TBLOB_SLM1_TENSOR_INFO_INIT                                                       \
  {(uint32_t)sizeof(tblob_slm1_tensor_info), 0, 0, 0, 0, {0, 0, 0, 0}, 0, 0, 0, 0, 0, 0, \
   NULL, NULL, 0, 0, 0}
TBLOB_API tblob_status tblob_slm1_tensor_info_init(tblob_slm1_tensor_info *s, size_t struct_size) TBLOB_NOEXCEPT;

TBLOB_API tblob_status tblob_slm1_tensor_at(const tblob_model *model, uint64_t index,
                                            tblob_slm1_tensor_info *info,
                                            tblob_diag *diag) TBLOB_NOEXCEPT;
/* Finds the entry whose stored name_hash is exactly this value (no name check). */
TBLOB_API tblob_status tblob_slm1_find_hash(const tblob_model *model, uint64_t name_hash,
                                            uint64_t *index, tblob_diag *diag) TBLOB_NOEXCEPT;

#ifdef TBLOB_EXPERIMENTAL_API
/* Experimental until 1.0 (docs/api.md, "Stability"): declared only when
 * TBLOB_EXPERIMENTAL_API is defined before this header is included. */
/* Writer: collects tensors, then writes one canonical file (entries sorted by hash, every
 * payload and scale array 64-byte aligned, checksum set). Tensors are encoded when added and
 * kept in memory until finish. Names must be non-empty UTF-8 without NUL; the same name twice
 * is TBLOB_E_DUPLICATE_NAME and two names with one hash TBLOB_E_HASH_COLLISION (at finish). */
typedef struct tblob_slm1_writer tblob_slm1_writer;

typedef struct tblob_slm1_writer_options {
  uint32_t struct_size;
  uint32_t model_type;          /* default 1 */
  uint32_t flags;               /* header flags; bit 0: tied output projection */
  uint32_t hidden_size;         /* required */
  uint32_t layer_count;         /* required */
  uint32_t head_count;          /* required */
  uint32_t kv_head_count;       /* 0: head_count */
  uint32_t head_dim;            /* 0: hidden_size / head_count */
  uint32_t ffn_size;            /* required */
  uint32_t max_context;         /* required */
  float rope_theta;             /* default 10000 */
  float rms_norm_epsilon;       /* default 1e-5 */
  uint32_t special_token_count; /* 0: 4 */
  uint32_t reserved;            /* 0 */
  const void *tokenizer;        /* a whole BTOK or BPE1 section; NULL: BTOK (vocabulary 260) */
  size_t tokenizer_length;
  const tblob_allocator *allocator; /* NULL: libc */
} tblob_slm1_writer_options;
#define TBLOB_SLM1_WRITER_OPTIONS_INIT                                                  \
  {(uint32_t)sizeof(tblob_slm1_writer_options), 1u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, \
   10000.0f, 1e-5f, 0u, 0u, NULL, 0, NULL}
TBLOB_API tblob_status tblob_slm1_writer_options_init(tblob_slm1_writer_options *s, size_t struct_size) TBLOB_NOEXCEPT;

/* Sets the fields a Hugging Face config.json gives (hidden_size, num_hidden_layers,
 * num_attention_heads, num_key_value_heads, head_dim, intermediate_size,
 * max_position_embeddings, rope_theta, rms_norm_eps, tie_word_embeddings); leaves the others.
 * TBLOB_E_JSON for bad JSON, TBLOB_E_SCHEMA for a known key of the wrong type or range. */
TBLOB_API tblob_status tblob_slm1_writer_options_from_config(tblob_slm1_writer_options *options,
                                                             const char *json, size_t json_len,
                                                             tblob_diag *diag) TBLOB_NOEXCEPT;

TBLOB_API tblob_status tblob_slm1_writer_new(const tblob_slm1_writer_options *options,
                                                tblob_slm1_writer **out,
                                                tblob_diag *diag) TBLOB_NOEXCEPT;
/* NULL is a no-op. */
TBLOB_API void tblob_slm1_writer_free(tblob_slm1_writer *writer) TBLOB_NOEXCEPT;

/* Adds f32 values (row-major, value_count = product of shape), stored as dtype: f32 as is,
 * q8_0 with one scale per row, q4_0 with one scale per block_size values (0: 32; it must be
 * even and divide the last dim). Every value must be finite. shape: rank 1..4 dims, each
 * 1..2^32-1. */
TBLOB_API tblob_status tblob_slm1_writer_add_f32(tblob_slm1_writer *writer, const char *name,
                                                 size_t name_len, const uint64_t *shape,
                                                 uint32_t rank, const float *values,
                                                 uint64_t value_count, uint32_t dtype,
                                                 uint32_t block_size,
                                                 tblob_diag *diag) TBLOB_NOEXCEPT;
/* Adds an already-encoded tensor: payload and scales exactly as stored (lengths and scale
 * values checked as the reader checks them; scales NULL/0 for f32). */
TBLOB_API tblob_status tblob_slm1_writer_add_encoded(
    tblob_slm1_writer *writer, const char *name, size_t name_len, const uint64_t *shape,
    uint32_t rank, uint32_t dtype, uint32_t block_size, const void *payload,
    size_t payload_length, const void *scales, size_t scale_length,
    tblob_diag *diag) TBLOB_NOEXCEPT;

/* Writes the file: to a temporary file beside path, flushed, then renamed over path, so
 * path holds either its old content or the whole new file. The writer accepts no more tensors
 * afterwards. */
TBLOB_API tblob_status tblob_slm1_writer_finish(tblob_slm1_writer *writer, const char *path,
                                                tblob_diag *diag) TBLOB_NOEXCEPT;
#endif /* TBLOB_EXPERIMENTAL_API */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TENSORBLOB_H */
