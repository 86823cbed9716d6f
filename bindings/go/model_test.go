//go:build cgo

package tensorblob

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// stFile builds safetensors bytes by hand: header JSON, space padding to 8, data.
func stFile(header string, data []byte) []byte {
	for len(header)%8 != 0 {
		header += " "
	}
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	return append(append(b, header...), data...)
}

// halfToFloat decodes IEEE binary16 (independent of the library's conversion).
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := int(h>>10) & 0x1f
	frac := uint32(h & 0x3ff)
	switch {
	case exp == 0:
		v := float32(frac) / 1024 * float32(math.Pow(2, -14))
		if sign != 0 {
			v = -v
		}
		return v
	case exp == 31:
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	}
	return math.Float32frombits(sign | uint32(exp-15+127)<<23 | frac<<13)
}

func sameFloat(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

// half and bfloat16 NaNs carry any payload; everything else compares bit for bit.
func sameHalf(a, b uint16, bf bool) bool {
	expMask, fracMask := uint16(0x7c00), uint16(0x03ff)
	if bf {
		expMask, fracMask = 0x7f80, 0x007f
	}
	isNaN := func(x uint16) bool { return x&expMask == expMask && x&fracMask != 0 }
	return a == b || (isNaN(a) && isNaN(b))
}

func u16s(b []byte) []uint16 {
	out := make([]uint16, len(b)/2)
	for i := range out {
		out[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return out
}

// Plain F16/BF16/F32 tensors: Dequantize equals a conversion of Bytes done here in Go.
func TestDequantizePlain(t *testing.T) {
	m := mustOpen(t, repoPath("examples", "tiny-llama", "model.safetensors"))
	seen := map[DType]int{}
	for tt := range m.Tensors() {
		b := tt.Bytes()
		n := int(tt.Info().LogicalElements)
		want := make([]float32, n)
		for i := range want {
			switch tt.DType() {
			case F16:
				want[i] = halfToFloat(binary.LittleEndian.Uint16(b[2*i:]))
			case BF16:
				want[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16)
			case F32:
				want[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
			default:
				t.Fatalf("%s: unexpected %v", tt.Name(), tt.DType())
			}
		}
		seen[tt.DType()]++
		got := make([]float32, n+3) // a longer buffer is fine; the tail is untouched
		got[n] = 42
		if err := tt.Dequantize(got); err != nil {
			t.Fatalf("%s: %v", tt.Name(), err)
		}
		if got[n] != 42 {
			t.Errorf("%s: wrote past the tensor", tt.Name())
		}
		for i := range want {
			if !sameFloat(got[i], want[i]) {
				t.Fatalf("%s[%d] = %v, want %v", tt.Name(), i, got[i], want[i])
			}
		}
		h := make([]uint16, n)
		switch tt.DType() {
		case F16:
			if err := tt.DequantizeF16(h); err != nil || !slices.Equal(h, u16s(b)) {
				t.Errorf("%s: F16 to F16 not the identity (%v)", tt.Name(), err)
			}
		case BF16:
			if err := tt.DequantizeBF16(h); err != nil || !slices.Equal(h, u16s(b)) {
				t.Errorf("%s: BF16 to BF16 not the identity (%v)", tt.Name(), err)
			}
		}
		if err := tt.Dequantize(got[:n-1]); !errors.Is(err, ErrBufferTooSmall) {
			t.Errorf("%s: short buffer: %v", tt.Name(), err)
		}
		if err := tt.Dequantize(nil); !errors.Is(err, ErrBufferTooSmall) {
			t.Errorf("%s: nil buffer: %v", tt.Name(), err)
		}
		if err := tt.DequantizeF16(nil); !errors.Is(err, ErrBufferTooSmall) {
			t.Errorf("%s: nil F16 buffer: %v", tt.Name(), err)
		}
	}
	if seen[F16] == 0 || seen[BF16] == 0 || seen[F32] == 0 {
		t.Errorf("dtypes covered: %v", seen)
	}
}

// Quantized checkpoints: every expected tensor the fixture generator wrote with its oracle
// (mx.dequantize, numpy) equals Dequantize / DequantizeF16 / DequantizeBF16.
func TestDequantizeCompanionsOracle(t *testing.T) {
	dir := repoPath("tests", "data", "companions")
	pairs := [][2]string{
		{"mlx_community/model.safetensors", "mlx_community/expected.safetensors"},
		{"mlx_community_mxfp4/model.safetensors", "mlx_community_mxfp4/expected.safetensors"},
		{"hf_fp8/model.safetensors", "hf_fp8/expected.safetensors"},
		{"hf_fp8_block64/model.safetensors", "hf_fp8_block64/expected.safetensors"},
		{"ollama_aliases.safetensors", "expected_ollama_aliases.safetensors"},
		{"ollama_inferred.safetensors", "expected_ollama_inferred.safetensors"},
		{"ollama_per_tensor.safetensors", "expected_ollama_per_tensor.safetensors"},
	}
	for _, p := range pairs {
		t.Run(p[0], func(t *testing.T) {
			m := mustOpen(t, filepath.Join(dir, p[0]))
			want := mustOpen(t, filepath.Join(dir, p[1]))
			checked := 0
			for w := range want.Tensors() {
				name, kind := w.Name(), F32
				if base, ok := strings.CutSuffix(name, ".f16"); ok {
					name, kind = base, F16
				} else if base, ok := strings.CutSuffix(name, ".bf16"); ok {
					name, kind = base, BF16
				}
				tt, ok := m.Lookup(name)
				if !ok {
					t.Errorf("no tensor %q", name)
					continue
				}
				wb := w.Bytes()
				n := int(tt.Info().LogicalElements)
				if !slices.Equal(tt.Info().LogicalShape, w.Shape()) {
					t.Errorf("%s: logical shape %v, expected tensor %v", name, tt.Info().LogicalShape, w.Shape())
				}
				switch kind {
				case F32:
					got := make([]float32, n)
					if err := tt.Dequantize(got); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					// Each row alone equals that row of the whole tensor.
					sh := tt.Info().LogicalShape
					cols := int(sh[len(sh)-1])
					rows := n / cols
					row := make([]float32, cols)
					for _, r := range []int{0, rows / 2, rows - 1} {
						if err := tt.DequantizeRows(row, uint64(r), uint64(r+1)); err != nil {
							t.Fatalf("%s row %d: %v", name, r, err)
						}
						if !slices.EqualFunc(row, got[r*cols:(r+1)*cols], sameFloat) {
							t.Fatalf("%s row %d differs from the whole tensor's", name, r)
						}
					}
					if err := tt.DequantizeRows(row, uint64(rows), uint64(rows+1)); !errors.Is(err, ErrRange) {
						t.Errorf("%s: row past the end: %v", name, err)
					}
					if l, err := tt.DequantizedLen(0, ^uint64(0)); err != nil || l != n {
						t.Errorf("%s: DequantizedLen(all) = %d, %v; want %d", name, l, err, n)
					}
					if l, err := tt.DequantizedLen(1, 3); err != nil || l != 2*cols {
						t.Errorf("%s: DequantizedLen(1, 3) = %d, %v; want %d", name, l, err, 2*cols)
					}
					if _, err := tt.DequantizedLen(uint64(rows), uint64(rows+1)); !errors.Is(err, ErrRange) {
						t.Errorf("%s: DequantizedLen past the end: %v", name, err)
					}
					for i := range got {
						if e := math.Float32frombits(binary.LittleEndian.Uint32(wb[4*i:])); !sameFloat(got[i], e) {
							t.Fatalf("%s[%d] = %v, want %v", name, i, got[i], e)
						}
					}
					// On several threads, in pieces of one row (every row its own piece), and
					// with the library's own choices: the oracle's values again.
					for _, o := range []DequantOptions{{Threads: 3, PieceBytes: uint64(cols) * 4}, {Threads: 0},
						{Threads: 2, Stores: StoresStream}, {Threads: 2, PieceBytes: uint64(cols) * 4, Stores: StoresCache}} {
						par := make([]float32, n)
						if err := tt.DequantizeWith(par, o); err != nil {
							t.Fatalf("%s %+v: %v", name, o, err)
						}
						for i := range par {
							if e := math.Float32frombits(binary.LittleEndian.Uint32(wb[4*i:])); !sameFloat(par[i], e) {
								t.Fatalf("%s %+v [%d] = %v, want %v", name, o, i, par[i], e)
							}
						}
					}
					if err := tt.DequantizeWith(make([]float32, n), DequantOptions{Threads: -1}); !errors.Is(err, ErrInvalidArgument) {
						t.Errorf("%s: Threads -1: %v", name, err)
					}
					if err := tt.DequantizeWith(make([]float32, n), DequantOptions{Stores: 3}); !errors.Is(err, ErrInvalidArgument) {
						t.Errorf("%s: Stores 3: %v", name, err)
					}
				default:
					got := make([]uint16, n)
					var err error
					if kind == F16 {
						err = tt.DequantizeF16(got)
					} else {
						err = tt.DequantizeBF16(got)
					}
					if err != nil {
						t.Fatalf("%s %v: %v", name, kind, err)
					}
					for i, e := range u16s(wb) {
						if !sameHalf(got[i], e, kind == BF16) {
							t.Fatalf("%s %v [%d] = %#04x, want %#04x", name, kind, i, got[i], e)
						}
					}
					par := make([]uint16, n)
					o := DequantOptions{Threads: 2, PieceBytes: 64}
					if kind == F16 {
						err = tt.DequantizeF16With(par, o)
					} else {
						err = tt.DequantizeBF16With(par, o)
					}
					if err != nil {
						t.Fatalf("%s %v on 2 threads: %v", name, kind, err)
					}
					for i, e := range u16s(wb) {
						if !sameHalf(par[i], e, kind == BF16) {
							t.Fatalf("%s %v on 2 threads [%d] = %#04x, want %#04x", name, kind, i, par[i], e)
						}
					}
				}
				checked++
			}
			if checked == 0 {
				t.Error("nothing compared")
			}
		})
	}
}

// UQFF opens like any model; its GGML layers dequantize to what gguf-py computes (FNV-1a of
// the f32 output, tests/data/uqff/real/expected_ggml.txt).
func TestUQFFGGMLOracle(t *testing.T) {
	real := repoPath("tests", "data", "uqff", "real")
	f, err := os.Open(filepath.Join(real, "expected_ggml.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	models := map[string]*Model{}
	checked := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 5 {
			continue
		}
		set, name := fields[0], fields[1]
		typ, _ := strconv.Atoi(fields[2])
		n, _ := strconv.Atoi(fields[3])
		m := models[set]
		if m == nil {
			m = mustOpen(t, filepath.Join(real, set))
			if m.Format() != FormatUQFF {
				t.Fatalf("%s: format %v", set, m.Format())
			}
			models[set] = m
		}
		tt, ok := m.Lookup(name)
		if !ok {
			t.Errorf("%s: no %s", set, name)
			continue
		}
		li, ok := tt.UQFFLayer()
		if !ok || li.Family != 0 || int(li.GGMLType) != typ {
			t.Errorf("%s %s: layer %+v, want GGUF type %d", set, name, li, typ)
		}
		got := make([]float32, n)
		if err := tt.Dequantize(got); err != nil {
			t.Errorf("%s %s: %v", set, name, err)
			continue
		}
		h := fnv.New64a()
		binary.Write(h, binary.LittleEndian, got)
		if s := fmt.Sprintf("%016x", h.Sum64()); s != fields[4] {
			t.Errorf("%s %s: fnv %s, want %s", set, name, s, fields[4])
		}
		checked++
	}
	if checked < 100 {
		t.Errorf("only %d layers checked", checked)
	}
	// A shard opened as an explicit set lists the same table.
	shard := filepath.Join(real, "dense", "q8_0", "q8_0-0.uqff")
	m, err := OpenUQFF([]string{shard})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	byDir := mustOpen(t, filepath.Join(real, "dense", "q8_0"))
	if m.Len() == 0 || m.Len() > byDir.Len() {
		t.Errorf("OpenUQFF: %d tensors, directory %d", m.Len(), byDir.Len())
	}
}

func fnv1a(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// SLM1 opens like any model: header fields and the f32 tensor as gen_golden.py wrote them.
func TestSLM1(t *testing.T) {
	path := repoPath("tests", "data", "slm1", "tiny_btok.slm")
	names := []string{"norm.weight", "attn.q.weight", "ffn.up.weight"}
	anon := mustOpen(t, path)
	if anon.Format() != FormatSLM1 || anon.Len() != 3 {
		t.Fatalf("format %v, %d tensors", anon.Format(), anon.Len())
	}
	for _, n := range names {
		label := fmt.Sprintf("fnv1a:%016x", fnv1a(n))
		found := false
		for tt := range anon.Tensors() {
			found = found || tt.Name() == label
		}
		if !found {
			t.Errorf("no tensor labelled %s for %s", label, n)
		}
	}
	m := mustOpen(t, path, WithSLM1Names(names...))
	h, err := m.SLM1Header()
	if err != nil {
		t.Fatal(err)
	}
	if h.Version != 1 || h.VocabSize != 260 || h.HiddenSize != 4 || h.LayerCount != 1 || h.HeadCount != 2 ||
		h.KVHeadCount != 2 || h.HeadDim != 2 || h.FFNSize != 8 || h.MaxContext != 16 || h.RopeTheta != 10000 ||
		h.RMSNormEpsilon != float32(1e-5) || h.TensorCount != 3 || !h.ChecksumVerified {
		t.Errorf("header %+v", h)
	}
	tt, ok := m.Lookup("norm.weight")
	if !ok {
		t.Fatal("norm.weight not found with the names given")
	}
	got := make([]float32, 4)
	if err := tt.Dequantize(got); err != nil || !slices.Equal(got, []float32{1, 0.5, -2, 0.25}) {
		t.Errorf("norm.weight = %v, %v", got, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fromBytes, err := OpenBytes(data, WithSLM1Names(names...))
	if err != nil {
		t.Fatal(err)
	}
	defer fromBytes.Close()
	if _, ok := fromBytes.Lookup("ffn.up.weight"); !ok {
		t.Error("OpenBytes: ffn.up.weight not found")
	}
	if _, err := m.Metadata(); err != nil {
		t.Error(err)
	}
	if _, err := mustOpen(t, repoPath("examples", "tiny-llama", "model.safetensors")).SLM1Header(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("SLM1Header of safetensors: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	good, err := os.ReadFile(repoPath("examples", "tiny-llama", "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		data []byte
		want Status
	}{
		{"empty", nil, ErrHeaderTooSmall},
		{"7 bytes", []byte{1, 2, 3, 4, 5, 6, 7}, ErrHeaderTooSmall},
		{"header past the end", binary.LittleEndian.AppendUint64(nil, 64), ErrHeaderLength},
		{"trailing byte", append(slices.Clone(good), 0), ErrTrailingBytes},
		{"json", stFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},}`, make([]byte, 4)), ErrJSON},
		{"dtype", stFile(`{"a":{"dtype":"F33","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)), ErrDType},
		{"tensor size", stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`, make([]byte, 4)), ErrTensorSize},
		{"truncated", stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, make([]byte, 4)), ErrTruncated},
	}
	for _, c := range cases {
		m, err := OpenBytes(c.data)
		if m != nil {
			m.Close()
		}
		var e *Error
		if !errors.Is(err, c.want) || !errors.As(err, &e) || e.Status != c.want || e.Message == "" {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want.String()) {
			t.Errorf("%s: %q does not name %s", c.name, err.Error(), c.want)
		}
	}
	// The JSON error points at the stray comma (byte 8 + its index in the header).
	hdr := `{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},}`
	_, err = OpenBytes(stFile(hdr, make([]byte, 4)))
	var e *Error
	if errors.As(err, &e) && e.Offset != int64(8+strings.Index(hdr, ",}")+1) && e.Offset != int64(8+strings.Index(hdr, ",}")) {
		t.Errorf("JSON error at byte %d, the comma is at %d", e.Offset, 8+strings.Index(hdr, ",}"))
	}
	if _, err := Open(filepath.Join(t.TempDir(), "absent.safetensors")); !errors.Is(err, ErrNotFound) {
		t.Errorf("absent file: %v", err)
	}
	// An integer tensor has nothing to dequantize.
	m, err := OpenBytes(stFile(`{"i":{"dtype":"I32","shape":[2],"data_offsets":[0,8]}}`, make([]byte, 8)))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.At(0).Dequantize(make([]float32, 2)); !errors.Is(err, ErrNotDequantizable) {
		t.Errorf("I32 dequantize: %v", err)
	}
}

func TestOptions(t *testing.T) {
	path := repoPath("examples", "tiny-llama", "model.safetensors")
	if _, err := Open(path, WithLimits(Limits{MaxTensors: 20})); !errors.Is(err, ErrLimitTensors) {
		t.Errorf("21 tensors with MaxTensors 20: %v", err)
	}
	if _, err := Open(path, WithCompactLimits(), WithLimits(Limits{MaxNameBytes: 10})); !errors.Is(err, ErrLimitNameBytes) {
		t.Errorf("MaxNameBytes 10: %v", err)
	}
	if _, err := Open(path, WithLimits(Limits{MaxRank: 1})); !errors.Is(err, ErrLimitRank) {
		t.Errorf("MaxRank 1: %v", err)
	}
	mapped := mustOpen(t, path)
	read := mustOpen(t, path, WithReadMode(), WithCompactLimits())
	for i := range mapped.Len() {
		if !slices.Equal(mapped.At(i).Bytes(), read.At(i).Bytes()) || mapped.At(i).Name() != read.At(i).Name() {
			t.Errorf("tensor %d differs between map and read mode", i)
		}
	}
}

func TestModelTableAndClose(t *testing.T) {
	sharded := mustOpen(t, repoPath("examples", "sharded"))
	files, err := sharded.Files()
	slices.Sort(files)
	if err != nil || len(files) != 2 || !strings.HasSuffix(files[0], "model-00001-of-00002.safetensors") ||
		!strings.HasSuffix(files[1], "model-00002-of-00002.safetensors") {
		t.Errorf("files %q, %v", files, err)
	}
	if sharded.Format() != FormatSafetensorsSharded {
		t.Errorf("format %v", sharded.Format())
	}
	// Table order: by file, then by data offset.
	prev := TensorInfo{}
	for i, tt := range slices.Collect(sharded.Tensors()) {
		in := tt.Info()
		if tt.Index() != i || (i > 0 && (in.FileIndex < prev.FileIndex || in.FileIndex == prev.FileIndex && in.DataOffset < prev.DataOffset)) {
			t.Errorf("tensor %d (%s) out of order", i, tt.Name())
		}
		if in.DataLength != uint64(len(tt.Bytes())) {
			t.Errorf("%s: DataLength %d, %d bytes", tt.Name(), in.DataLength, len(tt.Bytes()))
		}
		prev = in
	}
	n := 0
	for range sharded.Tensors() {
		n++
		if n == 3 {
			break
		}
	}
	if n != 3 {
		t.Errorf("iteration did not stop at break")
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("At(Len()) did not panic")
			}
		}()
		sharded.At(sharded.Len())
	}()

	data, err := os.ReadFile(repoPath("examples", "tiny-llama", "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := OpenBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	clear(data) // OpenBytes copied it
	tt, ok := m.Lookup("model.norm.weight")
	if !ok {
		t.Fatal("Lookup failed")
	}
	if f, _ := m.Files(); len(f) != 1 || f[0] != "" {
		t.Errorf("memory model files %q", f)
	}
	got := make([]float32, 8)
	if err := tt.Dequantize(got); err != nil || got[0] != 1 {
		t.Errorf("after clearing the caller's bytes: %v %v", got, err)
	}
	if _, ok := m.Lookup("model.norm"); ok {
		t.Error("Lookup of a prefix succeeded")
	}
	if _, ok := m.Lookup(""); ok {
		t.Error("Lookup of an empty name succeeded")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if tt.Name() != "model.norm.weight" || !slices.Equal(tt.Shape(), []uint64{8}) {
		t.Error("descriptive methods after Close")
	}
	if tt.Bytes() != nil {
		t.Error("Bytes after Close")
	}
	if err := tt.Dequantize(got); err != ErrClosed {
		t.Errorf("Dequantize after Close: %v", err)
	}
	if _, err := m.Metadata(); err != ErrClosed {
		t.Errorf("Metadata after Close: %v", err)
	}
	if _, ok := m.Lookup("model.norm.weight"); ok {
		t.Error("Lookup after Close")
	}
}

// Closing every handle returns every allocation the library made through the hook.
func TestCloseReleasesEverything(t *testing.T) {
	live0, total0 := allocationCounts()
	var closers []interface{ Close() error }
	for _, p := range []string{
		repoPath("examples", "tiny-llama", "model.safetensors"),
		repoPath("examples", "sharded"),
		repoPath("examples", "ollama-store", "store", "tiny-llama"),
		repoPath("tests", "data", "uqff", "real", "dense", "q4k"),
		repoPath("tests", "data", "slm1", "tiny_btok.slm"),
		repoPath("tests", "data", "companions", "mlx_community", "model.safetensors"),
	} {
		m, err := Open(p, WithReadMode())
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		closers = append(closers, m)
	}
	s, err := OpenStore(repoPath("examples", "ollama-store", "store"))
	if err != nil {
		t.Fatal(err)
	}
	sm, err := s.OpenModel("tiny-llama:v1")
	if err != nil {
		t.Fatal(err)
	}
	closers = append(closers, s, sm)
	live1, total1 := allocationCounts()
	if total1 == total0 || live1 <= live0 {
		t.Fatalf("the allocator hook saw nothing (live %d->%d, total %d->%d)", live0, live1, total0, total1)
	}
	for _, c := range closers {
		c.Close()
	}
	if live, _ := allocationCounts(); live != live0 {
		t.Errorf("%d allocations live after closing everything, %d before", live, live0)
	}
}

func TestMetadataMatchesJSON(t *testing.T) {
	// The sharded index's shards each say {"format":"pt"}; a hand-made file with escapes.
	hdr := `{"__metadata__":{"k\u00e9y":"v\"al\n","a":"1"},"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}`
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(hdr), &raw); err != nil {
		t.Fatal(err)
	}
	var want map[string]string
	json.Unmarshal(raw["__metadata__"], &want)
	m, err := OpenBytes(stFile(hdr, []byte{7}))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	got, err := m.Metadata()
	if err != nil || len(got) != 2 || got["kéy"] != want["kéy"] || got["a"] != "1" {
		t.Errorf("metadata %q, want %q (%v)", got, want, err)
	}
}

// A Model dropped without Close is closed by its cleanup (the safety net).
func TestCleanupClosesDroppedModel(t *testing.T) {
	runtime.GC()
	live0, _ := allocationCounts()
	func() {
		m, err := Open(repoPath("examples", "tiny-llama", "model.safetensors"), WithReadMode())
		if err != nil {
			t.Fatal(err)
		}
		if live, _ := allocationCounts(); live == live0 || m.Len() != 21 {
			t.Fatalf("open allocated nothing through the hook (%d)", live)
		}
	}()
	live := int64(-1)
	// Cleanups run on their own goroutine after a collection; retry a bounded number of
	// collections rather than waiting for a time.
	for i := 0; i < 1000 && live != live0; i++ {
		runtime.GC()
		runtime.Gosched()
		live, _ = allocationCounts()
	}
	if live != live0 {
		t.Errorf("%d allocations live after the Model became unreachable, %d before", live, live0)
	}
}

// GGUF (docs/gguf.md): a file the gguf package wrote opens as FormatGGUF, its q4_0 tensor
// dequantizes to gguf.quants.dequantize's values (tests/data/gguf/good_v3.manifest and .f32),
// and a big-endian file is refused with ErrGgufBigEndian.
func TestGGUF(t *testing.T) {
	m := mustOpen(t, repoPath("tests", "data", "gguf", "good_v3.gguf"))
	if m.Format() != FormatGGUF {
		t.Fatalf("format %v", m.Format())
	}
	manifest, err := os.ReadFile(repoPath("tests", "data", "gguf", "good_v3.manifest"))
	if err != nil {
		t.Fatal(err)
	}
	var dims []uint64
	at := -1
	for _, line := range strings.Split(string(manifest), "\n") {
		f := strings.Fields(line)
		if len(f) < 7 || f[0] != "tensor" || f[1] != "q4_0" {
			continue
		}
		rank, _ := strconv.Atoi(f[5])
		for _, d := range f[6 : 6+rank] {
			v, _ := strconv.ParseUint(d, 10, 64)
			dims = append(dims, v)
		}
		at, _ = strconv.Atoi(f[6+rank])
	}
	if at < 0 {
		t.Fatal("no q4_0 line in the manifest")
	}
	tt, ok := m.Lookup("q4_0")
	if !ok || !slices.Equal(tt.Shape(), dims) {
		t.Fatalf("q4_0: found %v, shape %v, want %v", ok, tt.Shape(), dims)
	}
	n := int(dims[0] * dims[1])
	got := make([]float32, n)
	if err := tt.Dequantize(got); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(repoPath("tests", "data", "gguf", "good_v3.f32"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if w := binary.LittleEndian.Uint32(want[(at+i)*4:]); math.Float32bits(got[i]) != w {
			t.Fatalf("value %d: %08x, gguf %08x", i, math.Float32bits(got[i]), w)
		}
	}
	if _, err := Open(repoPath("tests", "data", "gguf", "big_endian.gguf")); !errors.Is(err, ErrGgufBigEndian) {
		t.Fatalf("big-endian file: %v", err)
	}
}
