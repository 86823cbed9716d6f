//go:build cgo

package tensorblob

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// oracleScalar formats a value the way tests/gguf/gen_typed_metadata.py writes gguf-py's:
// integers decimal, bool 0/1, floats as hex bit patterns, strings as hex ("-" if empty).
func oracleScalar(ty MetaType, u uint64, i int64, f float64, s string) string {
	switch ty {
	case MetaU8, MetaU16, MetaU32, MetaU64, MetaBool:
		return strconv.FormatUint(u, 10)
	case MetaI8, MetaI16, MetaI32, MetaI64:
		return strconv.FormatInt(i, 10)
	case MetaF32:
		return fmt.Sprintf("%08x", math.Float32bits(float32(f)))
	case MetaF64:
		return fmt.Sprintf("%016x", math.Float64bits(f))
	case MetaString:
		if s == "" {
			return "-"
		}
		return hex.EncodeToString([]byte(s))
	}
	return "?"
}

// elements reads every element of array v as the oracle spells them.
func elements(t *testing.T, m *Model, v MetaValue) []string {
	t.Helper()
	n := v.Count
	out := make([]string, n)
	fill := func(k int, u uint64, i int64, f float64) { out[k] = oracleScalar(v.ElemType, u, i, f, "") }
	switch v.ElemType {
	case MetaU8, MetaBool:
		b := make([]uint8, n)
		must(t, MetadataArray(m, v.Index, 0, b))
		for k, x := range b {
			fill(k, uint64(x), 0, 0)
		}
	case MetaI8:
		b := make([]int8, n)
		must(t, MetadataArray(m, v.Index, 0, b))
		for k, x := range b {
			fill(k, 0, int64(x), 0)
		}
	case MetaU16:
		b := make([]uint16, n)
		must(t, MetadataArray(m, v.Index, 0, b))
		for k, x := range b {
			fill(k, uint64(x), 0, 0)
		}
	case MetaI16:
		b := make([]int16, n)
		must(t, MetadataArray(m, v.Index, 0, b))
		for k, x := range b {
			fill(k, 0, int64(x), 0)
		}
	case MetaU32:
		b := make([]uint32, n)
		must(t, MetadataArray(m, v.Index, 0, b))
		for k, x := range b {
			fill(k, uint64(x), 0, 0)
		}
	case MetaI32:
		b := make([]int32, n)
		must(t, MetadataArray(m, v.Index, 0, b))
		for k, x := range b {
			fill(k, 0, int64(x), 0)
		}
	case MetaU64:
		b := make([]uint64, n)
		must(t, MetadataArray(m, v.Index, 0, b))
		for k, x := range b {
			fill(k, x, 0, 0)
		}
	case MetaI64:
		b := make([]int64, n)
		must(t, MetadataArray(m, v.Index, 0, b))
		for k, x := range b {
			fill(k, 0, x, 0)
		}
	case MetaF32:
		b := make([]float32, n)
		must(t, MetadataArray(m, v.Index, 0, b))
		for k, x := range b {
			fill(k, 0, 0, float64(x))
		}
	case MetaF64:
		b := make([]float64, n)
		must(t, MetadataArray(m, v.Index, 0, b))
		for k, x := range b {
			fill(k, 0, 0, x)
		}
	case MetaString:
		s, err := m.MetadataStrings(v.Index, 0, ^uint64(0))
		must(t, err)
		for k, x := range s {
			out[k] = oracleScalar(MetaString, 0, 0, 0, x)
		}
	default:
		t.Fatalf("%s: element type %d", v.Key, v.ElemType)
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestTypedMetadataMatchesGGUFPy reads every key, scalar and array element of
// tests/data/gguf/arrays.gguf and compares them with what gguf-py's GGUFReader read
// (arrays.typed, written by tests/gguf/gen_typed_metadata.py).
func TestTypedMetadataMatchesGGUFPy(t *testing.T) {
	m := mustOpen(t, repoPath("tests", "data", "gguf", "arrays.gguf"))
	f, err := os.Open(repoPath("tests", "data", "gguf", "arrays.typed"))
	must(t, err)
	defer f.Close()
	all, err := m.TypedMetadata()
	must(t, err)
	var want []string // "kv KEY TYPE VALUE" / "arr KEY ELEMTYPE COUNT" / "el I VALUE", as the file
	var kvs int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 || fs[0] == "#" {
			continue
		}
		if fs[0] == "file" {
			kvs, _ = strconv.Atoi(fs[3])
			continue
		}
		want = append(want, strings.Join(fs, " "))
	}
	if kvs == 0 || len(all) != kvs {
		t.Fatalf("typed count %d, gguf-py %d", len(all), kvs)
	}
	var got []string
	for i, v := range all {
		if v.Index != uint64(i) {
			t.Errorf("%s: index %d at %d", v.Key, v.Index, i)
		}
		if v.Type != MetaArray {
			got = append(got, fmt.Sprintf("kv %s %d %s", v.Key, v.Type, oracleScalar(v.Type, v.Uint, v.Int, v.Float, v.Text)))
			continue
		}
		got = append(got, fmt.Sprintf("arr %s %d %d", v.Key, v.ElemType, v.Count))
		for k, e := range elements(t, m, v) {
			got = append(got, fmt.Sprintf("el %d %s", k, e))
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		for i := range max(len(got), len(want)) {
			var g, w string
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if g != w {
				t.Fatalf("line %d: got %q, gguf-py %q", i, g, w)
			}
		}
	}

	v, ok, err := m.TypedMetadataLookup("a.string")
	if err != nil || !ok || v.Type != MetaArray || v.ElemType != MetaString || v.Count != 5 {
		t.Fatalf("lookup a.string: %+v %v %v", v, ok, err)
	}
	tail, err := m.MetadataStrings(v.Index, 3, 2)
	if err != nil || len(tail) != 2 || tail[1] != "a b" {
		t.Fatalf("strings 3..5: %q %v", tail, err)
	}
	if _, err := m.MetadataStrings(v.Index, 4, 2); !errors.Is(err, ErrRange) {
		t.Fatalf("strings past the end: %v, want ErrRange", err)
	}
	if _, ok, err := m.TypedMetadataLookup("no.such.key"); ok || err != nil {
		t.Fatalf("absent key: %v %v", ok, err)
	}
	u16, _, _ := m.TypedMetadataLookup("a.u16")
	if err := MetadataArray(m, u16.Index, 0, make([]uint32, 1)); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("4-byte dst for a 2-byte array: %v, want ErrInvalidArgument", err)
	}
	if err := MetadataArray(m, u16.Index, 2, make([]uint16, 2)); !errors.Is(err, ErrRange) {
		t.Fatalf("past the end: %v, want ErrRange", err)
	}
	s, _, _ := m.TypedMetadataLookup("s.u8")
	if err := MetadataArray(m, s.Index, 0, make([]uint8, 1)); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("array read of a scalar: %v, want ErrInvalidArgument", err)
	}
}

// TestKernelSet forces the scalar set (always present), checks it is reported and that an
// unknown name is refused without changing the choice, then returns to auto.
func TestKernelSet(t *testing.T) {
	defer func() { must(t, SetKernel("")) }()
	must(t, SetKernel("scalar"))
	if ActiveKernel() != "scalar" || GGMLKernel() != "scalar" {
		t.Fatalf("after SetKernel(scalar): %q, ggml %q", ActiveKernel(), GGMLKernel())
	}
	if err := SetKernel("no-such-set"); !errors.Is(err, ErrKernelUnavailable) {
		t.Fatalf("unknown set: %v, want ErrKernelUnavailable", err)
	}
	if ActiveKernel() != "scalar" {
		t.Fatalf("a refused set changed the choice to %q", ActiveKernel())
	}
	must(t, SetKernel("auto"))
	if ActiveKernel() == "" {
		t.Fatal("no active kernel after auto")
	}
}

type rd struct {
	b   []byte
	err error
}

func (r *rd) u32() uint32 { v := binary.LittleEndian.Uint32(r.take(4)); return v }
func (r *rd) u64() uint64 { return binary.LittleEndian.Uint64(r.take(8)) }
func (r *rd) take(n uint64) []byte {
	if uint64(len(r.b)) < n {
		r.err = errors.New("truncated fixture")
		return make([]byte, n)
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func f32s(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// TestGGMLQuantizeMatchesGgml quantizes the inputs of tests/data/ggml_quant and compares
// every byte with ggml's own (llama-cpp-python 0.3.36's ggml-quants.c, the fixtures).
func TestGGMLQuantizeMatchesGgml(t *testing.T) {
	dir := repoPath("tests", "data", "ggml_quant")
	in, err := os.ReadFile(dir + "/inputs.bin")
	must(t, err)
	r := &rd{b: in}
	if string(r.take(4)) != "TBQI" || r.u32() != 1 {
		t.Fatal("inputs.bin: bad header")
	}
	type cse struct {
		rows, cols uint64
		x          []float32
	}
	nc, nw := r.u32(), r.u32()
	cases := make([]cse, nc)
	for i := range cases {
		r.take(uint64(r.u32()))
		c := cse{rows: r.u64(), cols: r.u64()}
		c.x = f32s(r.take(c.rows * c.cols * 4))
		cases[i] = c
	}
	weights := make([][]float32, nw)
	for i := range weights {
		r.take(uint64(r.u32()))
		weights[i] = f32s(r.take(r.u64() * 4))
	}
	must(t, r.err)
	files, err := os.ReadDir(dir)
	must(t, err)
	checked := 0
	for _, fe := range files {
		if fe.Name() == "inputs.bin" {
			continue
		}
		b, err := os.ReadFile(dir + "/" + fe.Name())
		must(t, err)
		r := &rd{b: b}
		if string(r.take(4)) != "TBQE" || r.u32() != 1 {
			t.Fatalf("%s: bad header", fe.Name())
		}
		ty, n := r.u32(), r.u32()
		for k := uint32(0); k < n; k++ {
			ci, wi := r.u32(), int32(r.u32())
			want := r.take(r.u64())
			must(t, r.err)
			c := cases[ci]
			var imp []float32
			if wi >= 0 {
				imp = weights[wi]
			}
			rs, err := GGMLRowSize(ty, c.cols)
			if err != nil || rs*c.rows != uint64(len(want)) {
				t.Fatalf("%s case %d: row size %d (%v), ggml wrote %d bytes for %d rows", fe.Name(), ci, rs, err, len(want), c.rows)
			}
			got, err := GGMLQuantize(ty, c.x, c.rows, c.cols, imp, &QuantizeOptions{Threads: 1})
			if err != nil {
				t.Fatalf("%s case %d weights %d: %v", fe.Name(), ci, wi, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s case %d weights %d: bytes differ from ggml's", fe.Name(), ci, wi)
			}
			checked++
		}
	}
	if checked < 16 {
		t.Fatalf("only %d fixture records checked", checked)
	}
	if _, err := GGMLRowSize(GGMLQ4_0, 33); !errors.Is(err, ErrQuantGroupSize) {
		t.Fatalf("33 columns of Q4_0: %v, want ErrQuantGroupSize", err)
	}
	nan := make([]float32, 32)
	nan[5] = float32(math.NaN())
	if _, err := GGMLQuantize(GGMLQ8_0, nan, 1, 32, nil, nil); !errors.Is(err, ErrQuantNonfinite) {
		t.Fatalf("NaN input: %v, want ErrQuantNonfinite", err)
	}
}

// TestQuantQuantizeMatchesMLX quantizes the sources in tests/data/quant/cases.bin and compares
// codes, scales and biases with what mx.quantize (mlx 0.32.4, CPU) wrote there.
func TestQuantQuantizeMatchesMLX(t *testing.T) {
	manifest, err := os.ReadFile(repoPath("tests", "data", "quant", "manifest.txt"))
	must(t, err)
	blob, err := os.ReadFile(repoPath("tests", "data", "quant", "cases.bin"))
	must(t, err)
	r := &rd{b: blob}
	elem := map[DType]uint64{F32: 4, F16: 2, BF16: 2}
	checked := 0
	for _, line := range strings.Split(string(manifest), "\n") {
		f := strings.Fields(line)
		if len(f) != 10 || f[0] == "#" {
			continue
		}
		n := make([]uint64, 10)
		for i := 1; i < 10; i++ {
			if i == 7 {
				continue
			}
			n[i], _ = strconv.ParseUint(f[i], 10, 64)
		}
		gb, err := hex.DecodeString(f[7]) // the f32's little-endian bytes
		if err != nil || len(gb) != 4 {
			t.Fatalf("%s: global scale %q", f[0], f[7])
		}
		q := QuantDesc{Scheme: QuantScheme(n[1]), Bits: uint32(n[2]), GroupSize: uint32(n[3]),
			ScaleDType: DType(n[5]), GlobalScaleMode: GlobalScaleMode(n[6]), Rows: n[8], Cols: n[9],
			GlobalScale: math.Float32frombits(binary.LittleEndian.Uint32(gb))}
		if q.Scheme == QuantMLXAffine {
			q.BiasDType = q.ScaleDType
		}
		srcDType := DType(n[4])
		sizes, err := QuantSize(q)
		if err != nil {
			t.Fatalf("%s: QuantSize: %v", f[0], err)
		}
		src := r.take(q.Rows * q.Cols * elem[srcDType])
		want := Quantized{r.take(sizes.Data), r.take(sizes.Scales), r.take(sizes.Biases)}
		must(t, r.err)
		var got Quantized
		if srcDType == F32 {
			got, err = QuantQuantize(q, f32s(src), nil)
		} else {
			got, err = QuantQuantizeBytes(q, srcDType, src, nil)
		}
		if err != nil {
			t.Fatalf("%s: %v", f[0], err)
		}
		if !bytes.Equal(got.Data, want.Data) || !bytes.Equal(got.Scales, want.Scales) || !bytes.Equal(got.Biases, want.Biases) {
			t.Fatalf("%s: differs from mx.quantize", f[0])
		}
		checked++
	}
	if len(r.b) != 0 || checked < 170 {
		t.Fatalf("checked %d cases, %d bytes of cases.bin left", checked, len(r.b))
	}
	if _, err := QuantSize(QuantDesc{Scheme: QuantMLXAffine, Bits: 4, GroupSize: 64, ScaleDType: F32, BiasDType: F32, Rows: 1, Cols: 96}); err == nil {
		t.Fatal("group size 64 accepted for 96 columns")
	}
}
