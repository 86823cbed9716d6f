//go:build cgo

package tensorblob

import (
	"crypto/sha256"
	"errors"
	"math"
	"slices"
	"sync"
	"testing"
)

// One Model shared by goroutines that list, look up, read and dequantize at once; run with
// -race. Every goroutine must see what a single goroutine saw first.
func TestConcurrentModel(t *testing.T) {
	paths := []string{
		repoPath("examples", "tiny-llama", "model.safetensors"),
		repoPath("tests", "data", "companions", "mlx_community", "model.safetensors"),
		repoPath("tests", "data", "uqff", "real", "dense", "q4k"),
	}
	for _, p := range paths {
		m := mustOpen(t, p)
		type want struct {
			name  string
			sum   [32]byte
			f32   []float32
			f16   []uint16
			deqOK bool
		}
		var wants []want
		for tt := range m.Tensors() {
			w := want{name: tt.Name(), sum: sha256.Sum256(tt.Bytes())}
			n := tt.Info().LogicalElements
			w.f32 = make([]float32, n)
			w.f16 = make([]uint16, n)
			w.deqOK = tt.Dequantize(w.f32) == nil && tt.DequantizeF16(w.f16) == nil
			wants = append(wants, w)
		}
		const workers = 8
		var wg sync.WaitGroup
		errs := make(chan string, workers)
		for g := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for round := range 3 {
					for k := range wants {
						i := (k + g*7 + round) % len(wants)
						w := wants[i]
						tt, ok := m.Lookup(w.name)
						if !ok || tt.Index() != i || tt.Name() != w.name {
							errs <- "lookup " + w.name
							return
						}
						if sha256.Sum256(tt.Bytes()) != w.sum {
							errs <- "bytes " + w.name
							return
						}
						if !w.deqOK {
							continue
						}
						f := make([]float32, len(w.f32))
						h := make([]uint16, len(w.f16))
						if tt.Dequantize(f) != nil || tt.DequantizeF16(h) != nil || !slices.Equal(h, w.f16) ||
							!slices.EqualFunc(f, w.f32, func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) {
							errs <- "dequantize " + w.name
							return
						}
					}
					if _, err := m.Metadata(); err != nil {
						errs <- err.Error()
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Errorf("%s: %s", p, e)
		}
	}
}

// Close while other goroutines read: each call either works or reports ErrClosed.
func TestConcurrentClose(t *testing.T) {
	m, err := Open(repoPath("examples", "tiny-llama", "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			buf := make([]float32, 256)
			for i := 0; i < 200; i++ {
				tt := m.At(i % m.Len())
				if err := tt.Dequantize(buf); err != nil && !errors.Is(err, ErrClosed) {
					t.Errorf("%s: %v", tt.Name(), err)
					return
				}
			}
		}()
	}
	close(start)
	m.Close()
	wg.Wait()
	m.Close()
}
