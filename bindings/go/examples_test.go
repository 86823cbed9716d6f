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

// Typed GGUF metadata: scalars with their type, arrays read by element type.
func ExampleModel_TypedMetadataLookup() {
	m, err := tensorblob.Open("../../tests/data/gguf/arrays.gguf")
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	v, _, err := m.TypedMetadataLookup("s.i16")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(v.Key, v.Type == tensorblob.MetaI16, v.Int)
	a, _, _ := m.TypedMetadataLookup("a.u16")
	u16s := make([]uint16, a.Count)
	if err := tensorblob.MetadataArray(m, a.Index, 0, u16s); err != nil {
		log.Fatal(err)
	}
	fmt.Println(u16s)
	s, _, _ := m.TypedMetadataLookup("a.string")
	strs, err := m.MetadataStrings(s.Index, 3, ^uint64(0))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q\n", strs)
	// Output:
	// s.i16 true -32768
	// [0 65535 258]
	// ["▁hello" "a b"]
}

// The quantizers: ggml blocks and MLX's affine scheme, after forcing the scalar kernels.
func ExampleGGMLQuantize() {
	if err := tensorblob.SetKernel("scalar"); err != nil {
		log.Fatal(err)
	}
	defer tensorblob.SetKernel("auto")
	fmt.Println(tensorblob.ActiveKernel())

	x := make([]float32, 64)
	for i := range x {
		x[i] = float32(i)/8 - 4
	}
	q8, err := tensorblob.GGMLQuantize(tensorblob.GGMLQ8_0, x, 2, 32, nil, nil)
	if err != nil {
		log.Fatal(err)
	}
	rowBytes, _ := tensorblob.GGMLRowSize(tensorblob.GGMLQ8_0, 32)
	fmt.Println(len(q8), rowBytes)

	desc := tensorblob.QuantDesc{Scheme: tensorblob.QuantMLXAffine, Bits: 4, GroupSize: 32,
		ScaleDType: tensorblob.F32, BiasDType: tensorblob.F32, Rows: 2, Cols: 32}
	q, err := tensorblob.QuantQuantize(desc, x, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(q.Data), len(q.Scales), len(q.Biases))
	// Output:
	// scalar
	// 68 34
	// 32 8 8
}
