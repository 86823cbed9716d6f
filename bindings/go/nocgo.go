//go:build !cgo

package tensorblob

// Without cgo the package still builds, so programs that only sometimes need it compile
// everywhere; every entry point returns ErrNoCgo and opens nothing.

import (
	"context"
	"io"
	"iter"
	"strconv"
)

// Model is an open container (see the cgo build); without cgo none can be opened.
type Model struct{}

// Tensor is one row of a model's table.
type Tensor struct{}

// Store is an Ollama model store.
type Store struct{}

// Open returns ErrNoCgo.
func Open(path string, opts ...Option) (*Model, error) { return nil, ErrNoCgo }

// OpenBytes returns ErrNoCgo.
func OpenBytes(data []byte, opts ...Option) (*Model, error) { return nil, ErrNoCgo }

// OpenUQFF returns ErrNoCgo.
func OpenUQFF(paths []string, opts ...Option) (*Model, error) { return nil, ErrNoCgo }

// OpenReaderAt returns ErrNoCgo.
func OpenReaderAt(r io.ReaderAt, size int64, opts ...Option) (*Model, error) { return nil, ErrNoCgo }

// OpenStore returns ErrNoCgo.
func OpenStore(root string, opts ...StoreOption) (*Store, error) { return nil, ErrNoCgo }

// Version is "" without cgo.
func Version() string { return "" }

func (m *Model) Close() error                         { return nil }
func (m *Model) Format() Format                       { return FormatUnknown }
func (m *Model) Len() int                             { return 0 }
func (m *Model) At(i int) Tensor                      { panic("tensorblob: At on a build without cgo") }
func (m *Model) Tensors() iter.Seq[Tensor]            { return func(func(Tensor) bool) {} }
func (m *Model) Lookup(name string) (Tensor, bool)    { return Tensor{}, false }
func (m *Model) Files() ([]string, error)             { return nil, ErrNoCgo }
func (m *Model) Metadata() (map[string]string, error) { return nil, ErrNoCgo }
func (m *Model) SLM1Header() (SLM1Header, error)      { return SLM1Header{}, ErrNoCgo }

func (t Tensor) Index() int                                                  { return 0 }
func (t Tensor) Name() string                                                { return "" }
func (t Tensor) DType() DType                                                { return DTypeInvalid }
func (t Tensor) Shape() []uint64                                             { return nil }
func (t Tensor) Info() TensorInfo                                            { return TensorInfo{} }
func (t Tensor) Bytes() []byte                                               { return nil }
func (t Tensor) Dequantize(dst []float32) error                              { return ErrNoCgo }
func (t Tensor) DequantizeF16(dst []uint16) error                            { return ErrNoCgo }
func (t Tensor) DequantizedLen(rowBegin, rowEnd uint64) (int, error)         { return 0, ErrNoCgo }
func (t Tensor) DequantizeRows(dst []float32, rowBegin, rowEnd uint64) error { return ErrNoCgo }
func (t Tensor) DequantizeBF16(dst []uint16) error                           { return ErrNoCgo }
func (t Tensor) DequantizeWith(dst []float32, o DequantOptions) error        { return ErrNoCgo }
func (t Tensor) DequantizeF16With(dst []uint16, o DequantOptions) error      { return ErrNoCgo }
func (t Tensor) DequantizeBF16With(dst []uint16, o DequantOptions) error     { return ErrNoCgo }
func (t Tensor) UQFFLayer() (UQFFLayer, bool)                                { return UQFFLayer{}, false }
func (t Tensor) ReadAt(p []byte, off int64) (int, error)                     { return 0, ErrNoCgo }

func (s *Store) Close() error                                          { return nil }
func (s *Store) Root() string                                          { return "" }
func (s *Store) Models() ([]ModelEntry, error)                         { return nil, ErrNoCgo }
func (s *Store) OpenModel(name string, opts ...Option) (*Model, error) { return nil, ErrNoCgo }
func (s *Store) Verify(ctx context.Context, progress func(Progress), opts ...VerifyOption) (VerifySummary, error) {
	return VerifySummary{}, ErrNoCgo
}
func (s *Store) Import(ctx context.Context, name, sourceDir string, opts ...ImportOption) (ImportResult, error) {
	return ImportResult{}, ErrNoCgo
}
func (s *Store) GC(opts ...GCOption) (GCResult, error) { return GCResult{}, ErrNoCgo }

// Family is FamilyUnknown without the library.
func (s Status) Family() Family { return FamilyUnknown }

// String names the family by number (the names come from the library).
func (f Family) String() string { return "Family(" + strconv.FormatUint(uint64(f), 10) + ")" }

// Features is empty without the library.
func Features() []string { return nil }

// TypedMetadata returns ErrNoCgo.
func (m *Model) TypedMetadata() ([]MetaValue, error) { return nil, ErrNoCgo }

// TypedMetadataLookup returns ErrNoCgo.
func (m *Model) TypedMetadataLookup(key string) (MetaValue, bool, error) {
	return MetaValue{}, false, ErrNoCgo
}

// MetadataArray returns ErrNoCgo.
func MetadataArray[T MetaElement](m *Model, index, first uint64, dst []T) error { return ErrNoCgo }

// MetadataStrings returns ErrNoCgo.
func (m *Model) MetadataStrings(index, first, count uint64) ([]string, error) { return nil, ErrNoCgo }

// SetKernel returns ErrNoCgo.
func SetKernel(name string) error { return ErrNoCgo }

// ActiveKernel is "" without cgo.
func ActiveKernel() string { return "" }

// GGMLKernel is "" without cgo.
func GGMLKernel() string { return "" }

// GGMLRowSize returns ErrNoCgo.
func GGMLRowSize(ggmlType uint32, cols uint64) (uint64, error) { return 0, ErrNoCgo }

// GGMLQuantize returns ErrNoCgo.
func GGMLQuantize(ggmlType uint32, src []float32, rows, cols uint64, importance []float32, opts *QuantizeOptions) ([]byte, error) {
	return nil, ErrNoCgo
}

// QuantSize returns ErrNoCgo.
func QuantSize(q QuantDesc) (QuantSizes, error) { return QuantSizes{}, ErrNoCgo }

// QuantQuantize returns ErrNoCgo.
func QuantQuantize(q QuantDesc, src []float32, opts *QuantizeOptions) (Quantized, error) {
	return Quantized{}, ErrNoCgo
}

// GGMLQuantizeBytes returns ErrNoCgo.
func GGMLQuantizeBytes(ggmlType uint32, srcDType DType, src []byte, rows, cols uint64, importance []float32, opts *QuantizeOptions) ([]byte, error) {
	return nil, ErrNoCgo
}

// QuantQuantizeBytes returns ErrNoCgo.
func QuantQuantizeBytes(q QuantDesc, srcDType DType, src []byte, opts *QuantizeOptions) (Quantized, error) {
	return Quantized{}, ErrNoCgo
}
