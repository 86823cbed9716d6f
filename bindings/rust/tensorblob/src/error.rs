//! Errors: the library's status as an enum, its message and the byte offset it names.
use std::ffi::CStr;
use std::fmt;

use tensorblob_sys as sys;

macro_rules! statuses {
    ($($variant:ident = $code:ident,)*) => {
        /// Why a call failed: one variant per `TBLOB_E_*` status of `include/tensorblob.h`
        /// (docs/errors.md explains each). New statuses are appended by the library, so match
        /// with a wildcard arm; a number this crate does not know yet is [`Status::Other`].
        #[non_exhaustive]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Status {
            $(
                #[allow(missing_docs)]
                $variant,
            )*
            /// A status number newer than this crate.
            Other(i32),
        }

        impl Status {
            /// The pinned status number (negative).
            pub fn code(self) -> i32 {
                match self {
                    $(Status::$variant => sys::$code as i32,)*
                    Status::Other(c) => c,
                }
            }

            /// The status for a number, `None` for `TBLOB_OK` (0).
            pub fn from_code(code: i32) -> Option<Status> {
                if code == 0 {
                    return None;
                }
                Some(match code {
                    $(c if c == sys::$code as i32 => Status::$variant,)*
                    c => Status::Other(c),
                })
            }
        }
    };
}

statuses! {
    InvalidArgument = TBLOB_E_INVALID_ARGUMENT,
    OutOfMemory = TBLOB_E_OUT_OF_MEMORY,
    Io = TBLOB_E_IO,
    NotFound = TBLOB_E_NOT_FOUND,
    UnknownFormat = TBLOB_E_UNKNOWN_FORMAT,
    BufferTooSmall = TBLOB_E_BUFFER_TOO_SMALL,
    Cancelled = TBLOB_E_CANCELLED,
    Range = TBLOB_E_RANGE,
    Unsupported = TBLOB_E_UNSUPPORTED,
    FeatureDisabled = TBLOB_E_FEATURE_DISABLED,
    SourceShortRead = TBLOB_E_SOURCE_SHORT_READ,
    SourceOverread = TBLOB_E_SOURCE_OVERREAD,
    SourceChanged = TBLOB_E_SOURCE_CHANGED,
    NotMapped = TBLOB_E_NOT_MAPPED,
    HeaderTooSmall = TBLOB_E_HEADER_TOO_SMALL,
    HeaderTooLarge = TBLOB_E_HEADER_TOO_LARGE,
    HeaderLength = TBLOB_E_HEADER_LENGTH,
    Utf8 = TBLOB_E_UTF8,
    Json = TBLOB_E_JSON,
    Schema = TBLOB_E_SCHEMA,
    Dtype = TBLOB_E_DTYPE,
    Shape = TBLOB_E_SHAPE,
    ShapeOverflow = TBLOB_E_SHAPE_OVERFLOW,
    Misaligned = TBLOB_E_MISALIGNED,
    TensorSize = TBLOB_E_TENSOR_SIZE,
    Offsets = TBLOB_E_OFFSETS,
    TrailingBytes = TBLOB_E_TRAILING_BYTES,
    Truncated = TBLOB_E_TRUNCATED,
    DuplicateName = TBLOB_E_DUPLICATE_NAME,
    Metadata = TBLOB_E_METADATA,
    ShardIndex = TBLOB_E_SHARD_INDEX,
    LimitHeaderBytes = TBLOB_E_LIMIT_HEADER_BYTES,
    LimitTensors = TBLOB_E_LIMIT_TENSORS,
    LimitRank = TBLOB_E_LIMIT_RANK,
    LimitNameBytes = TBLOB_E_LIMIT_NAME_BYTES,
    LimitJsonDepth = TBLOB_E_LIMIT_JSON_DEPTH,
    LimitFiles = TBLOB_E_LIMIT_FILES,
    HashCollision = TBLOB_E_HASH_COLLISION,
    DigestMismatch = TBLOB_E_DIGEST_MISMATCH,
    QuantScheme = TBLOB_E_QUANT_SCHEME,
    QuantGroupSize = TBLOB_E_QUANT_GROUP_SIZE,
    QuantPacking = TBLOB_E_QUANT_PACKING,
    QuantDataSize = TBLOB_E_QUANT_DATA_SIZE,
    QuantScaleDtype = TBLOB_E_QUANT_SCALE_DTYPE,
    QuantScaleSize = TBLOB_E_QUANT_SCALE_SIZE,
    QuantBiasDtype = TBLOB_E_QUANT_BIAS_DTYPE,
    QuantBiasSize = TBLOB_E_QUANT_BIAS_SIZE,
    QuantGlobalScale = TBLOB_E_QUANT_GLOBAL_SCALE,
    DequantOutDtype = TBLOB_E_DEQUANT_OUT_DTYPE,
    KernelUnavailable = TBLOB_E_KERNEL_UNAVAILABLE,
    NotDequantizable = TBLOB_E_NOT_DEQUANTIZABLE,
    OllamaName = TBLOB_E_OLLAMA_NAME,
    OllamaDigest = TBLOB_E_OLLAMA_DIGEST,
    OllamaPath = TBLOB_E_OLLAMA_PATH,
    OllamaNotAFile = TBLOB_E_OLLAMA_NOT_A_FILE,
    OllamaNotAStore = TBLOB_E_OLLAMA_NOT_A_STORE,
    OllamaModelNotFound = TBLOB_E_OLLAMA_MODEL_NOT_FOUND,
    OllamaModelRequired = TBLOB_E_OLLAMA_MODEL_REQUIRED,
    OllamaManifestZeroLength = TBLOB_E_OLLAMA_MANIFEST_ZERO_LENGTH,
    OllamaManifestEmpty = TBLOB_E_OLLAMA_MANIFEST_EMPTY,
    OllamaManifestTruncated = TBLOB_E_OLLAMA_MANIFEST_TRUNCATED,
    OllamaManifestDoubled = TBLOB_E_OLLAMA_MANIFEST_DOUBLED,
    OllamaManifestJson = TBLOB_E_OLLAMA_MANIFEST_JSON,
    OllamaManifestSchema = TBLOB_E_OLLAMA_MANIFEST_SCHEMA,
    OllamaManifestVersion = TBLOB_E_OLLAMA_MANIFEST_VERSION,
    OllamaLimitManifest = TBLOB_E_OLLAMA_LIMIT_MANIFEST,
    OllamaLayerConflict = TBLOB_E_OLLAMA_LAYER_CONFLICT,
    OllamaBlobMissing = TBLOB_E_OLLAMA_BLOB_MISSING,
    OllamaBlobPartial = TBLOB_E_OLLAMA_BLOB_PARTIAL,
    OllamaBlobSize = TBLOB_E_OLLAMA_BLOB_SIZE,
    OllamaBlobEmpty = TBLOB_E_OLLAMA_BLOB_EMPTY,
    OllamaLayerMismatch = TBLOB_E_OLLAMA_LAYER_MISMATCH,
    OllamaNoTensors = TBLOB_E_OLLAMA_NO_TENSORS,
    OllamaConfigJson = TBLOB_E_OLLAMA_CONFIG_JSON,
    OllamaLimitConfig = TBLOB_E_OLLAMA_LIMIT_CONFIG,
    OllamaImportSource = TBLOB_E_OLLAMA_IMPORT_SOURCE,
    OllamaCorruptStore = TBLOB_E_OLLAMA_CORRUPT_STORE,
    OllamaComponent = TBLOB_E_OLLAMA_COMPONENT,
    UqffNoVersion = TBLOB_E_UQFF_NO_VERSION,
    UqffPre10 = TBLOB_E_UQFF_PRE_1_0,
    UqffVersionMajor = TBLOB_E_UQFF_VERSION_MAJOR,
    UqffVersionNewer = TBLOB_E_UQFF_VERSION_NEWER,
    UqffVersionConflict = TBLOB_E_UQFF_VERSION_CONFLICT,
    UqffScalar = TBLOB_E_UQFF_SCALAR,
    UqffDuplicateKey = TBLOB_E_UQFF_DUPLICATE_KEY,
    UqffFormatTag = TBLOB_E_UQFF_FORMAT_TAG,
    UqffUnrecognized = TBLOB_E_UQFF_UNRECOGNIZED,
    UqffAmbiguous = TBLOB_E_UQFF_AMBIGUOUS,
    UqffMismatch = TBLOB_E_UQFF_MISMATCH,
    UqffEntries = TBLOB_E_UQFF_ENTRIES,
    UqffEntryDtype = TBLOB_E_UQFF_ENTRY_DTYPE,
    UqffGgmlType = TBLOB_E_UQFF_GGML_TYPE,
    UqffParam = TBLOB_E_UQFF_PARAM,
    UqffLayerSize = TBLOB_E_UQFF_LAYER_SIZE,
    UqffStack = TBLOB_E_UQFF_STACK,
    UqffShardMissing = TBLOB_E_UQFF_SHARD_MISSING,
    UqffShardSet = TBLOB_E_UQFF_SHARD_SET,
    UqffReport = TBLOB_E_UQFF_REPORT,
    UqffIncomplete = TBLOB_E_UQFF_INCOMPLETE,
    UqffProducer = TBLOB_E_UQFF_PRODUCER,
    UqffConfig = TBLOB_E_UQFF_CONFIG,
    Slm1Version = TBLOB_E_SLM1_VERSION,
    Slm1Header = TBLOB_E_SLM1_HEADER,
    Slm1Tokenizer = TBLOB_E_SLM1_TOKENIZER,
    Slm1Entry = TBLOB_E_SLM1_ENTRY,
    Slm1Alignment = TBLOB_E_SLM1_ALIGNMENT,
    Slm1Padding = TBLOB_E_SLM1_PADDING,
    Slm1Scale = TBLOB_E_SLM1_SCALE,
    Slm1Checksum = TBLOB_E_SLM1_CHECKSUM,
    GgufVersion = TBLOB_E_GGUF_VERSION,
    GgufV1 = TBLOB_E_GGUF_V1,
    GgufBigEndian = TBLOB_E_GGUF_BIG_ENDIAN,
    GgufTruncated = TBLOB_E_GGUF_TRUNCATED,
    GgufCount = TBLOB_E_GGUF_COUNT,
    GgufString = TBLOB_E_GGUF_STRING,
    GgufArray = TBLOB_E_GGUF_ARRAY,
    GgufValueType = TBLOB_E_GGUF_VALUE_TYPE,
    GgufKey = TBLOB_E_GGUF_KEY,
    GgufAlignment = TBLOB_E_GGUF_ALIGNMENT,
    GgufName = TBLOB_E_GGUF_NAME,
    GgufDims = TBLOB_E_GGUF_DIMS,
    GgufType = TBLOB_E_GGUF_TYPE,
    GgufRow = TBLOB_E_GGUF_ROW,
    GgufOffsetAlign = TBLOB_E_GGUF_OFFSET_ALIGN,
    GgufDataRange = TBLOB_E_GGUF_DATA_RANGE,
    GgufOverlap = TBLOB_E_GGUF_OVERLAP,
    GgufLayout = TBLOB_E_GGUF_LAYOUT,
    GgufWriteOrder = TBLOB_E_GGUF_WRITE_ORDER,
    GgufWriteSize = TBLOB_E_GGUF_WRITE_SIZE,
    GgufSplitMissing = TBLOB_E_GGUF_SPLIT_MISSING,
    GgufSplit = TBLOB_E_GGUF_SPLIT,
}

impl Status {
    /// The C name, `"TBLOB_E_JSON"` etc. (`"TBLOB_E_UNKNOWN_STATUS"` for unknown numbers).
    pub fn name(self) -> &'static str {
        // SAFETY: tblob_status_name returns a pointer to a static NUL-terminated string for
        // every input (never NULL per the header); static strings live forever.
        unsafe { static_str(sys::tblob_status_name(self.code() as _)) }
    }

    /// The library's one-line English description.
    pub fn description(self) -> &'static str {
        // SAFETY: as for tblob_status_name: a static NUL-terminated string.
        unsafe { static_str(sys::tblob_status_message(self.code() as _)) }
    }
}

/// # Safety
/// `p` is NULL or points to a NUL-terminated string with static storage.
pub(crate) unsafe fn static_str(p: *const std::ffi::c_char) -> &'static str {
    if p.is_null() {
        return "";
    }
    // SAFETY: the caller guarantees a static NUL-terminated string.
    unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("")
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A failed call: the status, the library's message (naming the tensor, the field and the
/// offset), the byte offset in the file or buffer and the tensor index, when they apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    status: Status,
    message: String,
    offset: Option<u64>,
    tensor_index: Option<u64>,
}

impl Error {
    pub(crate) fn new(status: Status, message: impl Into<String>) -> Error {
        Error { status, message: message.into(), offset: None, tensor_index: None }
    }

    /// Builds the error for a non-zero status from the diagnostics the call filled.
    pub(crate) fn from_diag(code: i32, diag: &sys::tblob_diag) -> Error {
        let status = Status::from_code(code).unwrap_or(Status::Other(0));
        let bytes: Vec<u8> = diag
            .message
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        let mut message = String::from_utf8_lossy(&bytes).into_owned();
        if message.is_empty() {
            message = status.description().to_string();
        }
        Error {
            status,
            message,
            offset: (diag.offset != sys::TBLOB_NO_OFFSET).then_some(diag.offset),
            tensor_index: u64::try_from(diag.tensor_index).ok(),
        }
    }

    /// What went wrong.
    pub fn status(&self) -> Status {
        self.status
    }

    /// The library's message; names tensor, field and byte offset where they apply.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Byte offset in the file or buffer the error is about, when one applies.
    pub fn offset(&self) -> Option<u64> {
        self.offset
    }

    /// Index of the tensor (in the model's table or the header) the error is about.
    pub fn tensor_index(&self) -> Option<u64> {
        self.tensor_index
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.status.name())
    }
}

impl std::error::Error for Error {}

/// Result of this crate's calls.
pub type Result<T> = std::result::Result<T, Error>;

/// A struct filled by its `tblob_<struct>_init` function (defaults and struct_size).
pub(crate) fn init<T: Default>(f: unsafe extern "C" fn(*mut T, usize) -> sys::tblob_status) -> T {
    let mut v = T::default();
    // SAFETY: v is a writable T of exactly size_of::<T>() bytes, the size passed; the init
    // functions write only within it.
    let code = unsafe { f(&mut v, std::mem::size_of::<T>()) };
    // Fails only for NULL or a size below 8, neither possible here.
    debug_assert_eq!(code, 0);
    v
}

/// Diagnostics record for one call.
pub(crate) fn diag() -> sys::tblob_diag {
    init(sys::tblob_diag_init)
}

/// Runs one C call with a fresh diag and turns its status into a Result.
pub(crate) fn check(f: impl FnOnce(*mut sys::tblob_diag) -> sys::tblob_status) -> Result<()> {
    let mut d = diag();
    let code = f(&mut d);
    if code == 0 {
        Ok(())
    } else {
        Err(Error::from_diag(code as i32, &d))
    }
}
