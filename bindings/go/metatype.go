package tensorblob

// MetaType is the type of a typed metadata value (tblob_meta_type; GGUF's numbering).
type MetaType uint32

// The metadata value types; the numbers are the library's (and GGUF's).
const (
	MetaU8     MetaType = 0
	MetaI8     MetaType = 1
	MetaU16    MetaType = 2
	MetaI16    MetaType = 3
	MetaU32    MetaType = 4
	MetaI32    MetaType = 5
	MetaF32    MetaType = 6
	MetaBool   MetaType = 7
	MetaString MetaType = 8
	MetaArray  MetaType = 9
	MetaU64    MetaType = 10
	MetaI64    MetaType = 11
	MetaF64    MetaType = 12
)

// MetaValue is one typed key/value (tblob_metadata_value). Scalars carry their value in the
// field of their kind (Uint for unsigned and bool, Int for signed, Float for F32/F64); Text
// is a string's bytes, or for other scalars the text Metadata gives. Arrays have ElemType and
// Count; read their elements with MetadataArray or Model.MetadataStrings.
type MetaValue struct {
	Index    uint64 // position in the typed table
	Key      string
	Type     MetaType
	Uint     uint64
	Int      int64
	Float    float64
	Text     string
	ElemType MetaType // arrays only
	Count    uint64   // arrays: elements; otherwise 1
}

// MetaElement is the Go types MetadataArray reads numeric and bool array elements into; the
// size of T must equal the element size (bool elements are read as uint8, 0 or 1).
type MetaElement interface {
	~uint8 | ~int8 | ~uint16 | ~int16 | ~uint32 | ~int32 | ~uint64 | ~int64 | ~float32 | ~float64
}

// QuantScheme is a quantization scheme (tblob_quant_scheme).
type QuantScheme uint32

// The schemes QuantQuantize writes (the numbers are the library's).
const (
	QuantMLXAffine QuantScheme = 1
	QuantMXFP4     QuantScheme = 2
	QuantMXFP8     QuantScheme = 3
	QuantNVFP4     QuantScheme = 4
	QuantBlockFP8  QuantScheme = 14
	QuantSLM1Q8_0  QuantScheme = 15
	QuantSLM1Q4_0  QuantScheme = 16
)

// GlobalScaleMode says how an NVFP4 global scale is read (tblob_global_scale_mode).
type GlobalScaleMode uint32

const (
	GlobalScaleNone       GlobalScaleMode = 0
	GlobalScaleMultiplier GlobalScaleMode = 1
	GlobalScaleMLXAmax    GlobalScaleMode = 2
)

// QuantDesc describes a quantized matrix (the parameters of tblob_quant_desc; the buffers
// are separate). GlobalScale is read when GlobalScaleMode is not GlobalScaleNone.
type QuantDesc struct {
	Scheme          QuantScheme
	Bits            uint32
	GroupSize       uint32
	ScaleDType      DType
	BiasDType       DType
	GlobalScaleMode GlobalScaleMode
	Rows, Cols      uint64
	GlobalScale     float32
}

// QuantSizes are the byte lengths of a quantized matrix's parts (what tblob_quant_size gives).
type QuantSizes struct {
	Data, Scales, Biases, GlobalScale uint64
}

// Quantized is what QuantQuantize writes: codes, scales and (affine) biases.
type Quantized struct {
	Data, Scales, Biases []byte
}

// QuantizeOptions are the quantizers' options (tblob_quantize_options). Threads 0 uses one
// per online core; the bytes written never depend on it.
type QuantizeOptions struct {
	Threads uint32
}

// GGML type ids the quantizer writes (ggml's numbering; docs/quantize.md lists them all).
const (
	GGMLQ4_0   uint32 = 2
	GGMLQ4_1   uint32 = 3
	GGMLQ5_0   uint32 = 6
	GGMLQ5_1   uint32 = 7
	GGMLQ8_0   uint32 = 8
	GGMLQ2_K   uint32 = 10
	GGMLQ3_K   uint32 = 11
	GGMLQ4_K   uint32 = 12
	GGMLQ5_K   uint32 = 13
	GGMLQ6_K   uint32 = 14
	GGMLQ8_K   uint32 = 15
	GGMLIQ4_NL uint32 = 20
	GGMLIQ4_XS uint32 = 23
	GGMLTQ1_0  uint32 = 34
	GGMLTQ2_0  uint32 = 35
	GGMLMXFP4  uint32 = 39
)
