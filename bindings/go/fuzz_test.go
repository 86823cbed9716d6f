//go:build cgo

package tensorblob

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// The seeds are the C fuzzer's corpus and regressions for tblob_model_open_memory. Their
// inputs end with a 3-byte parameter trailer (fuzz/README.md), dropped here: the Go target
// takes the file bytes alone.
func fuzzSeeds(f *testing.F) int {
	n := 0
	for _, dir := range []string{
		repoPath("fuzz", "corpora", "fuzz_open_memory"),
		repoPath("fuzz", "regressions", "fuzz_open_memory"),
	} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil || len(b) < 3 {
				continue
			}
			f.Add(b[:len(b)-3])
			n++
		}
	}
	return n
}

func FuzzOpenBytes(f *testing.F) {
	if fuzzSeeds(f) < 100 {
		f.Fatal("fuzz/corpora/fuzz_open_memory not found or nearly empty")
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := OpenBytes(data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Status >= 0 || !errors.Is(err, e.Status) {
				t.Fatalf("error %v is not an *Error with a negative status", err)
			}
			if _, known := statusNames[e.Status]; !known {
				t.Fatalf("unknown status %d", e.Status)
			}
			if m != nil {
				t.Fatal("model and error")
			}
			return
		}
		defer m.Close()
		for tt := range m.Tensors() {
			in := tt.Info()
			if b := tt.Bytes(); uint64(len(b)) != in.DataLength {
				t.Fatalf("%q: %d bytes, DataLength %d", tt.Name(), len(b), in.DataLength)
			}
			if m.Format() == FormatSafetensors || m.Format() == FormatSafetensorsSharded {
				if got, ok := m.Lookup(tt.Name()); !ok || got.Index() != tt.Index() {
					t.Fatalf("Lookup(%q) = %d, %v; want %d", tt.Name(), got.Index(), ok, tt.Index())
				}
			}
			if in.LogicalElements <= 1<<20 {
				dst := make([]float32, in.LogicalElements)
				if err := tt.Dequantize(dst); err != nil {
					var e *Error
					if !errors.As(err, &e) || e.Status >= 0 {
						t.Fatalf("%q: dequantize error %v", tt.Name(), err)
					}
				}
			}
		}
		if _, err := m.Metadata(); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Files(); err != nil {
			t.Fatal(err)
		}
	})
}
