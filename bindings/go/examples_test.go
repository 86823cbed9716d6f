//go:build cgo

package tensorblob_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	tensorblob "github.com/tensorblob/tensorblob/bindings/go"
)

// The README's example.
func Example() {
	m, err := tensorblob.Open("../../examples/tiny-llama/model.safetensors")
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()

	fmt.Println(m.Format(), m.Len(), "tensors")
	for t := range m.Tensors() {
		if t.Index() < 3 {
			fmt.Println(t.Name(), t.DType(), t.Shape(), len(t.Bytes()), "bytes")
		}
	}

	norm, ok := m.Lookup("model.norm.weight")
	if !ok {
		log.Fatal("no model.norm.weight")
	}
	values := make([]float32, norm.Info().LogicalElements)
	if err := norm.Dequantize(values); err != nil {
		log.Fatal(err)
	}
	fmt.Println(values)

	// Errors carry the library's status: errors.Is against the Err* constants, or
	// errors.As for the message and byte offset.
	_, err = tensorblob.OpenBytes([]byte("not a model"))
	var e *tensorblob.Error
	if errors.Is(err, tensorblob.ErrHeaderTooLarge) && errors.As(err, &e) {
		fmt.Println(e.Status.String())
	}
	// Output:
	// safetensors 21 tensors
	// model.layers.0.input_layernorm.weight F32 [8] 32 bytes
	// model.layers.0.post_attention_layernorm.weight F32 [8] 32 bytes
	// model.layers.1.input_layernorm.weight F32 [8] 32 bytes
	// [1 1 1 1 1 1 1 1]
	// TBLOB_E_HEADER_TOO_LARGE
}

// Verifying an Ollama store, with a progress callback and a deadline.
func ExampleStore_Verify() {
	s, err := tensorblob.OpenStore("../../examples/ollama-store/store")
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	models, err := s.Models()
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range models {
		fmt.Println(e.ShortName, e.Layers, "layers")
	}
	var last tensorblob.Progress
	sum, err := s.Verify(context.Background(), func(p tensorblob.Progress) { last = p })
	if errors.Is(err, tensorblob.ErrDigestMismatch) {
		log.Fatal("a blob is corrupt: ", err)
	} else if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sum.Blobs, "blobs,", last.BytesDone, "bytes verified")
	// Output:
	// tiny-llama:latest 21 layers
	// tiny-llama:v1 21 layers
	// 22 blobs, 6074 bytes verified
}
