package tensorblob

import (
	"io"
	"strconv"
	"time"
)

// DType is an element type as the safetensors header names it (the C tblob_dtype).
type DType uint32

// The 22 safetensors dtypes; the numbers are the library's.
const (
	DTypeInvalid     DType = 0
	Bool             DType = 1
	U8               DType = 2
	I8               DType = 3
	I16              DType = 4
	U16              DType = 5
	F16              DType = 6
	BF16             DType = 7
	I32              DType = 8
	U32              DType = 9
	F32              DType = 10
	F64              DType = 11
	I64              DType = 12
	U64              DType = 13
	C64              DType = 14
	F8E5M2           DType = 15
	F8E4M3           DType = 16
	F8E8M0           DType = 17
	F8E4M3FNUZ       DType = 18
	F8E5M2FNUZ       DType = 19
	F4               DType = 20
	F6E2M3           DType = 21
	F6E3M2           DType = 22
	dtypeCount       DType = 23
	dtypeNameUnknown       = "INVALID"
)

var dtypeNames = [dtypeCount]string{
	"INVALID", "BOOL", "U8", "I8", "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "F64",
	"I64", "U64", "C64", "F8_E5M2", "F8_E4M3", "F8_E8M0", "F8_E4M3FNUZ", "F8_E5M2FNUZ", "F4",
	"F6_E2M3", "F6_E3M2",
}

// String returns the header spelling: "F32", "BF16", "F8_E4M3", ...
func (d DType) String() string {
	if d < dtypeCount {
		return dtypeNames[d]
	}
	return "DType(" + strconv.FormatUint(uint64(d), 10) + ")"
}

// Format is the kind of container a Model was opened from.
type Format uint32

// Container formats.
const (
	FormatUnknown            Format = 0
	FormatSafetensors        Format = 1
	FormatSafetensorsSharded Format = 2
	FormatOllama             Format = 3
	FormatUQFF               Format = 4
	FormatSLM1               Format = 5
	FormatGGUF               Format = 6
)

var formatNames = []string{"unknown", "safetensors", "safetensors-sharded", "ollama", "uqff", "slm1", "gguf"}

func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return "Format(" + strconv.FormatUint(uint64(f), 10) + ")"
}

// TensorInfo is a row of a model's tensor table, copied out of the library at open.
type TensorInfo struct {
	Name            string
	DType           DType    // of the stored bytes
	Shape           []uint64 // stored shape, outermost first
	FileIndex       uint32   // which file of the model holds the bytes
	DataOffset      uint64   // relative to that file's data region
	DataLength      uint64   // bytes
	FileOffset      uint64   // absolute byte offset in that file
	Elements        uint64   // elements of the stored shape
	LogicalShape    []uint64 // dequantized shape (== Shape unless quantized)
	LogicalElements uint64
	QuantScheme     uint32 // tblob_quant_scheme, 0 unless dequantizable with companions
	Quantized       bool   // a packed weight resolved with its scale/bias companions
	Companion       bool   // a scale/bias of a quantized tensor
}

// Limits bound what an open accepts; a zero field keeps the default (which accepts
// everything the safetensors reference accepts).
type Limits struct {
	MaxHeaderBytes uint64
	MaxTensors     uint64
	MaxNameBytes   uint64
	MaxRank        uint32
	MaxJSONDepth   uint32
	MaxFiles       uint32
}

type openConfig struct {
	read           bool
	compact        bool
	limits         Limits
	slm1Names      []string
	slm1NoChecksum bool
	component      string
	siblings       SiblingFunc // OpenReaderAt: the files beside the reader
}

// Option configures Open, OpenBytes and Store.OpenModel.
type Option func(*openConfig)

// SiblingFunc opens a file beside a reader's (a shard named by a sharded checkpoint's index):
// its reader and size (negative: unknown), or an error wrapping ErrNotFound or
// fs.ErrNotExist when there is none.
type SiblingFunc func(name string) (r io.ReaderAt, size int64, err error)

// WithSiblings gives OpenReaderAt the files beside its reader, for a sharded checkpoint's
// index (each shard is opened by name when the index names it).
func WithSiblings(open SiblingFunc) Option { return func(c *openConfig) { c.siblings = open } }

// WithReadMode reads files into memory the Model owns instead of mapping them, so a file
// truncated by another process while open cannot fault the program.
func WithReadMode() Option { return func(c *openConfig) { c.read = true } }

// WithCompactLimits starts from the library's mobile preset (16 MiB header, 65,536 tensors,
// 1 KiB names, rank 8, JSON depth 32, 256 files) for files this program did not produce.
func WithCompactLimits() Option { return func(c *openConfig) { c.compact = true } }

// WithLimits overrides individual limits (zero fields keep the default or preset value).
func WithLimits(l Limits) Option { return func(c *openConfig) { c.limits = l } }

// WithSLM1Names gives the tensor names an SLM1 file is expected to hold: SLM1 stores only
// name hashes, so listed names replace the synthetic "fnv1a:<hex>" labels, and two listed
// names with one hash fail the open with ErrHashCollision.
func WithSLM1Names(names ...string) Option {
	return func(c *openConfig) { c.slm1Names = append([]string(nil), names...) }
}

// WithSLM1SkipChecksum opens an SLM1 file without checking its checksum.
func WithSLM1SkipChecksum() Option { return func(c *openConfig) { c.slm1NoChecksum = true } }

// WithComponent keeps only the layers of one component ("text_encoder", "vae", ...) of an
// image-generation model in Store.OpenModel.
func WithComponent(name string) Option { return func(c *openConfig) { c.component = name } }

// ModelEntry is a manifest of a store, as Store.Models lists it.
type ModelEntry struct {
	Name          string // "host/namespace/model:tag"
	ShortName     string // as `ollama list` shows it
	ManifestID    string // SHA-256 hex of the manifest bytes
	ManifestBytes uint64
	TotalBytes    uint64 // config + layers, as the manifest states them
	Layers        uint64
	TensorLayers  uint64
	Modified      time.Time
	Err           error // nil, or why this manifest cannot be read
}

// Progress reports a verification or an import in flight.
type Progress struct {
	Total      uint64 // blobs to verify, or tensors to import
	Done       uint64
	BytesTotal uint64
	BytesDone  uint64
}

// BlobResult is the outcome of verifying one blob.
type BlobResult struct {
	Digest       string // expected, "sha256:<hex>"
	ActualDigest string // computed; "" when the blob was not hashed
	ExpectedSize uint64
	ActualSize   uint64 // math.MaxUint64 when the file could not be examined
	Path         string
	Err          error // nil, or why the blob is bad
}

// VerifySummary counts what Store.Verify checked.
type VerifySummary struct {
	Threads      int
	Manifests    uint64
	ManifestsBad uint64
	Blobs        uint64
	BlobsBad     uint64
	BytesHashed  uint64
}

type verifyConfig struct {
	model   string
	threads int
	mapped  bool
	onBlob  func(BlobResult)
}

// VerifyOption configures Store.Verify.
type VerifyOption func(*verifyConfig)

// VerifyModel verifies one model ("name:tag") instead of every model of the store.
func VerifyModel(name string) VerifyOption { return func(c *verifyConfig) { c.model = name } }

// VerifyThreads sets the number of hashing threads (0: one per CPU).
func VerifyThreads(n int) VerifyOption { return func(c *verifyConfig) { c.threads = n } }

// VerifyMapped hashes through a read-only mapping: faster, but a blob truncated by another
// process during the verify raises SIGBUS. Only for stores nothing else modifies.
func VerifyMapped() VerifyOption { return func(c *verifyConfig) { c.mapped = true } }

// VerifyOnBlob receives each distinct blob's result, on the calling goroutine.
func VerifyOnBlob(fn func(BlobResult)) VerifyOption { return func(c *verifyConfig) { c.onBlob = fn } }

// ImportResult counts what Store.Import wrote.
type ImportResult struct {
	ManifestWritten bool // false when the manifest already had these bytes
	Layers          uint64
	Tensors         uint64
	BlobsWritten    uint64
	BlobsReused     uint64
	BytesWritten    uint64
}

type importConfig struct {
	trustExisting bool
	progress      func(Progress)
	open          []Option
}

// ImportOption configures Store.Import.
type ImportOption func(*importConfig)

// ImportTrustExisting reuses a blob already in the store by its size, without hashing it.
func ImportTrustExisting() ImportOption { return func(c *importConfig) { c.trustExisting = true } }

// ImportProgress is called before the first blob and after each tensor blob.
func ImportProgress(fn func(Progress)) ImportOption { return func(c *importConfig) { c.progress = fn } }

// ImportOpenOptions sets the limits used to read the source.
func ImportOpenOptions(opts ...Option) ImportOption {
	return func(c *importConfig) { c.open = append(c.open, opts...) }
}

// GCKind says why a file of blobs/ is listed by Store.GC.
type GCKind uint32

// GC kinds.
const (
	GCUnreferenced GCKind = 1 // sha256-<hex> that no manifest references
	GCPartial      GCKind = 2 // a partial download
	GCTemp         GCKind = 3 // a temporary file left by an interrupted write
)

// GCEntry is a file Store.GC listed (and removed, with GCRemove).
type GCEntry struct {
	Kind     GCKind
	FileName string // inside blobs/
	Size     uint64
	Removed  bool
	Err      error // with GCRemove: why the file could not be removed
}

// GCResult is what Store.GC found.
type GCResult struct {
	Entries         []GCEntry
	Manifests       uint64
	ReferencedBlobs uint64
	ListedFiles     uint64
	ListedBytes     uint64
	RemovedFiles    uint64
	RemovedBytes    uint64
}

type gcConfig struct {
	remove bool
	minAge time.Duration
	setAge bool
}

// GCOption configures Store.GC.
type GCOption func(*gcConfig)

// GCRemove deletes what is listed (the default is a dry run).
func GCRemove() GCOption { return func(c *gcConfig) { c.remove = true } }

// GCMinAge leaves partial and temporary files younger than d alone (default one hour).
func GCMinAge(d time.Duration) GCOption { return func(c *gcConfig) { c.minAge, c.setAge = d, true } }

type storeConfig struct {
	create bool
}

// StoreOption configures OpenStore.
type StoreOption func(*storeConfig)

// StoreCreate creates the root, manifests/ and blobs/ when missing (for Import).
func StoreCreate() StoreOption { return func(c *storeConfig) { c.create = true } }

// DequantOptions are the options of the multi-threaded Dequantize*With calls.
type DequantOptions struct {
	// Threads: 0 one per online core, 1 the calling thread only, n at most n. The call starts
	// and joins its threads (none outlives it); the values never depend on the count.
	Threads int
	// PieceBytes is how many output bytes a thread takes at a time; 0 the library's choice
	// (1 to 8 MiB, at least four pieces per thread when the tensor allows).
	PieceBytes uint64
	// Stores is how the output is written (the values are the same under each choice).
	Stores Stores
}

// Stores is tblob_dequant_options.stores: where dequantized output ends up in the cache.
type Stores uint32

const (
	// StoresAuto uses non-temporal stores for pieces of 4 MiB or more, normal stores below.
	StoresAuto Stores = 0
	// StoresStream uses non-temporal stores for every piece of 64 KiB or more: output that is
	// not read back soon (a whole model decoded into memory).
	StoresStream Stores = 1
	// StoresCache uses normal stores: output read right away.
	StoresCache Stores = 2
)

// UQFFLayer describes a row of a UQFF model.
type UQFFLayer struct {
	Family      uint32 // tblob_uqff_family: 0 GGUF, 1 unquant, 2 HQQ, 3 FP8, 4 AFQ, 5 F8Q8, 6 MXFP4, 255 plain
	Label       string // "q4k", "afq4", ..., "bias", "residual"
	GGMLType    uint32 // GGUF only, else math.MaxUint32
	Bits        uint32
	GroupSize   uint32
	WeightDType DType
	ScaleDType  DType
	Shard       uint32
	Experts     uint64
	Rows        uint64
	Cols        uint64
	StoredBytes uint64
}

// SLM1Header holds the hyperparameters of an SLM1 file.
type SLM1Header struct {
	Version          uint32
	ModelType        uint32
	Flags            uint32
	VocabSize        uint32
	HiddenSize       uint32
	LayerCount       uint32
	HeadCount        uint32
	KVHeadCount      uint32
	HeadDim          uint32
	FFNSize          uint32
	MaxContext       uint32
	RopeTheta        float32
	RMSNormEpsilon   float32
	TensorCount      uint32
	Checksum         uint64
	ChecksumVerified bool
}
