package tensorblob

import (
	"context"
	"iter"
)

// The exported API with its exact signatures, compiled in both builds (cgo and !cgo), so the
// two cannot drift apart.
var _ = []any{
	Open, OpenBytes, OpenUQFF, OpenStore, Version,
	(func(string, ...Option) (*Model, error))(Open),
	(func([]byte, ...Option) (*Model, error))(OpenBytes),
	(func(*Model) iter.Seq[Tensor])((*Model).Tensors),
	(func(*Model) int)((*Model).Len),
	(func(*Model, int) Tensor)((*Model).At),
	(func(*Model, string) (Tensor, bool))((*Model).Lookup),
	(func(*Model) error)((*Model).Close),
	(func(*Model) Format)((*Model).Format),
	(func(*Model) ([]string, error))((*Model).Files),
	(func(*Model) (map[string]string, error))((*Model).Metadata),
	(func(*Model) (SLM1Header, error))((*Model).SLM1Header),
	(func(Tensor) string)(Tensor.Name),
	(func(Tensor) DType)(Tensor.DType),
	(func(Tensor) []uint64)(Tensor.Shape),
	(func(Tensor) []byte)(Tensor.Bytes),
	(func(Tensor) int)(Tensor.Index),
	(func(Tensor) TensorInfo)(Tensor.Info),
	(func(Tensor, []float32) error)(Tensor.Dequantize),
	(func(Tensor, []uint16) error)(Tensor.DequantizeF16),
	(func(Tensor, []float32, uint64, uint64) error)(Tensor.DequantizeRows),
	(func(Tensor, uint64, uint64) (int, error))(Tensor.DequantizedLen),
	(func(Tensor, []uint16) error)(Tensor.DequantizeBF16),
	(func(Tensor, []float32, DequantOptions) error)(Tensor.DequantizeWith),
	(func(Tensor, []uint16, DequantOptions) error)(Tensor.DequantizeF16With),
	(func(Tensor, []uint16, DequantOptions) error)(Tensor.DequantizeBF16With),
	(func(Tensor) (UQFFLayer, bool))(Tensor.UQFFLayer),
	(func(string, ...StoreOption) (*Store, error))(OpenStore),
	(func(*Store) ([]ModelEntry, error))((*Store).Models),
	(func(*Store, string, ...Option) (*Model, error))((*Store).OpenModel),
	(func(*Store, context.Context, func(Progress), ...VerifyOption) (VerifySummary, error))((*Store).Verify),
	(func(*Store, context.Context, string, string, ...ImportOption) (ImportResult, error))((*Store).Import),
	(func(*Store, ...GCOption) (GCResult, error))((*Store).GC),
	(func(*Store) error)((*Store).Close),
	(func(*Store) string)((*Store).Root),
}
