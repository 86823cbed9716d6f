//go:build cgo

package tensorblob

import (
	"fmt"
	"strings"
	"testing"
)

// bigTable is a safetensors buffer of n one-byte U8 tensors.
func bigTable(n int) []byte {
	var h strings.Builder
	h.WriteString("{")
	for i := range n {
		if i > 0 {
			h.WriteString(",")
		}
		fmt.Fprintf(&h, `"model.layers.%d.weight":{"dtype":"U8","shape":[1],"data_offsets":[%d,%d]}`, i, i, i+1)
	}
	h.WriteString("}")
	return stFile(h.String(), make([]byte, n))
}

// Open plus copying the table into Go: the cost of the per-row cgo calls shows here.
func BenchmarkOpenBytes50k(b *testing.B) {
	data := bigTable(50000)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		m, err := OpenBytes(data)
		if err != nil {
			b.Fatal(err)
		}
		m.Close()
	}
}

func BenchmarkLookup(b *testing.B) {
	m, err := OpenBytes(bigTable(50000))
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	for b.Loop() {
		if _, ok := m.Lookup("model.layers.31337.weight"); !ok {
			b.Fatal("not found")
		}
	}
}

func BenchmarkDequantizeBF16Row(b *testing.B) {
	m, err := Open(repoPath("examples", "tiny-llama", "model.safetensors"))
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	t, _ := m.Lookup("lm_head.weight")
	row := make([]float32, 8)
	for b.Loop() {
		if err := t.DequantizeRows(row, 3, 4); err != nil {
			b.Fatal(err)
		}
	}
}

// Copying the table alone (the part tblob_tensors_at batches).
func BenchmarkLoadTable50k(b *testing.B) {
	m, err := OpenBytes(bigTable(50000))
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	for b.Loop() {
		if _, err := loadTable(m.c); err != nil {
			b.Fatal(err)
		}
	}
}
