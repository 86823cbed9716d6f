//go:build !cgo

package tensorblob

import (
	"context"
	"errors"
	"testing"
)

// Without cgo every entry point answers ErrNoCgo instead of failing to build.
func TestNoCgo(t *testing.T) {
	errs := map[string]error{}
	_, errs["Open"] = Open("x")
	_, errs["OpenBytes"] = OpenBytes([]byte("x"))
	_, errs["OpenUQFF"] = OpenUQFF([]string{"x"})
	_, errs["OpenStore"] = OpenStore("x")
	var m *Model
	var s *Store
	_, errs["Metadata"] = m.Metadata()
	_, errs["Files"] = m.Files()
	_, errs["SLM1Header"] = m.SLM1Header()
	errs["Dequantize"] = Tensor{}.Dequantize(nil)
	errs["DequantizeF16"] = Tensor{}.DequantizeF16(nil)
	errs["DequantizeBF16"] = Tensor{}.DequantizeBF16(nil)
	errs["DequantizeRows"] = Tensor{}.DequantizeRows(nil, 0, 1)
	_, errs["DequantizedLen"] = Tensor{}.DequantizedLen(0, 1)
	_, errs["Models"] = s.Models()
	_, errs["OpenModel"] = s.OpenModel("x")
	_, errs["Verify"] = s.Verify(context.Background(), nil)
	_, errs["Import"] = s.Import(context.Background(), "x", "y")
	_, errs["GC"] = s.GC()
	for name, err := range errs {
		if !errors.Is(err, ErrNoCgo) || !errors.Is(err, ErrFeatureDisabled) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if m.Len() != 0 || Version() != "" {
		t.Error("empty model")
	}
}
