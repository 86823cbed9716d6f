//go:build cgo

package tensorblob

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// countingReader is an io.ReaderAt over a byte slice that records every read and can be
// told to lie (return half of what was asked, with io.EOF) or to fail.
type countingReader struct {
	data []byte
	mu   sync.Mutex
	read int64 // bytes handed out
	reqs [][2]int64
	lie  bool
	fail error
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reqs = append(c.reqs, [2]int64{off, int64(len(p))})
	if c.fail != nil {
		return 0, c.fail
	}
	if off >= int64(len(c.data)) {
		return 0, io.EOF
	}
	n := copy(p, c.data[off:])
	if c.lie && n > 1 {
		n /= 2
		c.read += int64(n)
		return n, io.EOF
	}
	c.read += int64(n)
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (c *countingReader) bytesRead() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.read
}

func (c *countingReader) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.read, c.reqs = 0, nil
}

func readFile(t *testing.T, parts ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(repoPath(parts...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The header's extent, from the file's own first 8 bytes (the safetensors definition).
func headerEnd(b []byte) int64 { return 8 + int64(binary.LittleEndian.Uint64(b[:8])) }

func openCounting(t *testing.T, data []byte, opts ...Option) (*Model, *countingReader) {
	t.Helper()
	r := &countingReader{data: data}
	m, err := OpenReaderAt(r, int64(len(data)), opts...)
	if err != nil {
		t.Fatalf("OpenReaderAt: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	return m, r
}

func TestOpenReaderAtReadsOnlyTheHeader(t *testing.T) {
	data := readFile(t, "examples", "tiny-llama", "model.safetensors")
	m, r := openCounting(t, data)
	end := headerEnd(data)
	for _, q := range r.reqs {
		if q[0]+q[1] > end {
			t.Errorf("open read bytes [%d, %d), past the header's end %d", q[0], q[0]+q[1], end)
		}
	}
	if got := r.bytesRead(); got != end {
		t.Errorf("open read %d bytes, the header is %d", got, end)
	}
	ref := mustOpen(t, repoPath("examples", "tiny-llama", "model.safetensors"))
	if m.Len() != ref.Len() || m.Format() != ref.Format() {
		t.Fatalf("reader model: %d tensors %v; path model: %d %v", m.Len(), m.Format(), ref.Len(), ref.Format())
	}
	for i := 0; i < m.Len(); i++ {
		a, b := m.At(i).Info(), ref.At(i).Info()
		if a.Name != b.Name || a.DType != b.DType || !slices.Equal(a.Shape, b.Shape) || a.DataLength != b.DataLength {
			t.Errorf("tensor %d: %+v vs %+v", i, a, b)
		}
	}
}

func TestOpenReaderAtTensorReadAddsItsBytes(t *testing.T) {
	data := readFile(t, "examples", "tiny-llama", "model.safetensors")
	m, r := openCounting(t, data)
	ref := mustOpen(t, repoPath("examples", "tiny-llama", "model.safetensors"))
	for _, name := range []string{"lm_head.weight", "model.norm.weight"} {
		tr, ok := m.Lookup(name)
		if !ok {
			t.Fatalf("%s missing", name)
		}
		tp, _ := ref.Lookup(name)
		r.reset()
		buf := make([]byte, tr.Info().DataLength)
		n, err := tr.ReadAt(buf, 0)
		if err != nil || n != len(buf) {
			t.Fatalf("%s ReadAt: %d, %v", name, n, err)
		}
		if got := r.bytesRead(); got != int64(len(buf)) {
			t.Errorf("%s: reading %d bytes read %d from the reader", name, len(buf), got)
		}
		if !bytes.Equal(buf, tp.Bytes()) {
			t.Errorf("%s: bytes differ from the path-opened model's", name)
		}
		if tr.Bytes() != nil {
			t.Errorf("%s: Bytes of a reader model is not nil", name)
		}
		// Values: dequantized through the reader equal the mapped model's.
		want := make([]float32, tp.Info().LogicalElements)
		got := make([]float32, len(want))
		if err := tp.Dequantize(want); err != nil {
			t.Fatal(err)
		}
		if err := tr.Dequantize(got); err != nil {
			t.Fatalf("%s Dequantize through the reader: %v", name, err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: dequantized values differ", name)
		}
	}
}

func TestTensorReadAt(t *testing.T) {
	ref := mustOpen(t, repoPath("examples", "tiny-llama", "model.safetensors"))
	tn, _ := ref.Lookup("lm_head.weight")
	all := tn.Bytes()
	n := int64(len(all))
	buf := make([]byte, 10)
	if k, err := tn.ReadAt(buf, 6); err != nil || k != 10 || !bytes.Equal(buf, all[6:16]) {
		t.Errorf("ReadAt(10 at 6) = %d, %v", k, err)
	}
	// Across the end: the part that exists, with io.EOF (io.ReaderAt's rule).
	if k, err := tn.ReadAt(buf, n-4); k != 4 || !errors.Is(err, io.EOF) || !bytes.Equal(buf[:4], all[n-4:]) {
		t.Errorf("ReadAt across the end = %d, %v", k, err)
	}
	if k, err := tn.ReadAt(buf, n); k != 0 || !errors.Is(err, io.EOF) {
		t.Errorf("ReadAt at the end = %d, %v", k, err)
	}
	if k, err := tn.ReadAt(nil, 3); k != 0 || err != nil {
		t.Errorf("ReadAt(nil, 3) = %d, %v", k, err)
	}
	if _, err := tn.ReadAt(buf, -1); !errors.Is(err, ErrRange) {
		t.Errorf("ReadAt(-1) = %v", err)
	}
	// io.SectionReader over a tensor: the whole tensor through the io interfaces.
	got, err := io.ReadAll(io.NewSectionReader(tn, 0, n))
	if err != nil || !bytes.Equal(got, all) {
		t.Errorf("ReadAll(SectionReader(tensor)) = %d bytes, %v", len(got), err)
	}
}

func TestOpenReaderAtLyingReader(t *testing.T) {
	data := readFile(t, "examples", "tiny-llama", "model.safetensors")
	// Short at open: the header read ends early inside the declared size.
	if _, err := OpenReaderAt(&countingReader{data: data, lie: true}, int64(len(data))); !errors.Is(err, ErrSourceShortRead) {
		t.Errorf("open through a short reader: %v, want ErrSourceShortRead", err)
	}
	// Short after open: the tensor read reports it.
	m, r := openCounting(t, data)
	r.lie = true
	tn, _ := m.Lookup("lm_head.weight")
	buf := make([]byte, tn.Info().DataLength)
	if _, err := tn.ReadAt(buf, 0); !errors.Is(err, ErrSourceShortRead) {
		t.Errorf("ReadAt through a short reader: %v, want ErrSourceShortRead", err)
	}
	vals := make([]float32, tn.Info().LogicalElements)
	if err := tn.Dequantize(vals); !errors.Is(err, ErrSourceShortRead) {
		t.Errorf("Dequantize through a short reader: %v, want ErrSourceShortRead", err)
	}
	// A failing reader: ErrIO, and the reader's own error is reachable.
	boom := errors.New("disk on fire")
	r.lie, r.fail = false, boom
	_, err := tn.ReadAt(buf, 0)
	if !errors.Is(err, ErrIO) || !errors.Is(err, boom) {
		t.Errorf("ReadAt through a failing reader: %v, want ErrIO wrapping the reader's error", err)
	}
	if _, err := OpenReaderAt(&countingReader{data: data, fail: boom}, int64(len(data))); !errors.Is(err, ErrIO) ||
		!errors.Is(err, boom) {
		t.Errorf("open through a failing reader: %v", err)
	}
	// A size larger than the data: the reader ends early inside it.
	if _, err := OpenReaderAt(&countingReader{data: data[:100]}, int64(len(data))); err == nil {
		t.Error("a reader shorter than its declared size opened")
	}
}

func TestOpenReaderAtShardedWithSiblings(t *testing.T) {
	dir := repoPath("examples", "sharded")
	index := readFile(t, "examples", "sharded", "model.safetensors.index.json")
	var mu sync.Mutex
	opened := map[string]int64{}
	siblings := func(name string) (io.ReaderAt, int64, error) {
		f, err := os.Open(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return nil, 0, err
		}
		t.Cleanup(func() { f.Close() })
		st, err := f.Stat()
		if err != nil {
			return nil, 0, err
		}
		mu.Lock()
		opened[name] = st.Size()
		mu.Unlock()
		return f, st.Size(), nil
	}
	m, _ := openCounting(t, index, WithSiblings(siblings))
	ref := mustOpen(t, dir)
	if m.Len() != ref.Len() {
		t.Fatalf("%d tensors through the reader, %d from the directory", m.Len(), ref.Len())
	}
	if len(opened) != 2 {
		t.Errorf("siblings opened: %v, want the two shards", opened)
	}
	for tr := range m.Tensors() {
		tp, ok := ref.Lookup(tr.Name())
		if !ok {
			t.Errorf("%s only through the reader", tr.Name())
			continue
		}
		buf := make([]byte, tr.Info().DataLength)
		if _, err := tr.ReadAt(buf, 0); err != nil || !bytes.Equal(buf, tp.Bytes()) {
			t.Errorf("%s: %v or bytes differ", tr.Name(), err)
		}
	}
	// Without siblings the index cannot reach its shards.
	if _, err := OpenReaderAt(bytes.NewReader(index), int64(len(index))); err == nil {
		t.Error("a sharded index opened without WithSiblings")
	}
	// A sibling that does not exist: ErrNotFound.
	missing := func(string) (io.ReaderAt, int64, error) { return nil, 0, os.ErrNotExist }
	if _, err := OpenReaderAt(bytes.NewReader(index), int64(len(index)), WithSiblings(missing)); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing shards: %v, want ErrNotFound", err)
	}
}
