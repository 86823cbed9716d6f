//go:build cgo

package tensorblob

/*
#include "tensorblob.h"
*/
import "C"

import (
	"math/bits"
	"runtime"
	"unsafe"
)

func newDiag() C.tblob_diag {
	var d C.tblob_diag
	C.tblob_diag_init(&d, C.size_t(unsafe.Sizeof(d)))
	return d
}

func quantizeOptions(o *QuantizeOptions) (C.tblob_quantize_options, *C.tblob_quantize_options) {
	var co C.tblob_quantize_options
	C.tblob_quantize_options_init(&co, C.size_t(unsafe.Sizeof(co)))
	if o == nil {
		return co, nil
	}
	co.threads = C.uint32_t(o.Threads)
	return co, &co
}

func f32Ptr(s []float32) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

func bytePtr(s []byte) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

// GGMLRowSize is the byte length of one row of cols values of ggml type ggmlType (what
// ggml_row_size gives); cols must be a multiple of the type's block.
func GGMLRowSize(ggmlType uint32, cols uint64) (uint64, error) {
	var n C.uint64_t
	d := newDiag()
	if st := C.tblob_ggml_row_size(C.uint32_t(ggmlType), C.uint64_t(cols), &n, &d); st != 0 {
		return 0, newError(st, &d)
	}
	return uint64(n), nil
}

// GGMLQuantize quantizes rows x cols float32 values (row-major, len(src) == rows*cols) into
// ggml blocks of type ggmlType, bit-exact with ggml's ggml_quantize_chunk, and returns them
// (rows * GGMLRowSize(cols) bytes). importance is nil or cols per-column weights for the
// types that take them. opts may be nil.
func GGMLQuantize(ggmlType uint32, src []float32, rows, cols uint64, importance []float32, opts *QuantizeOptions) ([]byte, error) {
	return ggmlQuantize(ggmlType, F32, f32Ptr(src), uintptr(len(src))*4, rows, cols, importance, opts)
}

// GGMLQuantizeBytes is GGMLQuantize for little-endian F32, F16 or BF16 input (srcDType).
func GGMLQuantizeBytes(ggmlType uint32, srcDType DType, src []byte, rows, cols uint64, importance []float32, opts *QuantizeOptions) ([]byte, error) {
	return ggmlQuantize(ggmlType, srcDType, bytePtr(src), uintptr(len(src)), rows, cols, importance, opts)
}

func ggmlQuantize(ggmlType uint32, srcDType DType, src unsafe.Pointer, srcBytes uintptr, rows, cols uint64, importance []float32, opts *QuantizeOptions) ([]byte, error) {
	rowBytes, err := GGMLRowSize(ggmlType, cols)
	if err != nil {
		return nil, err
	}
	hi, total := bits.Mul64(rowBytes, rows)
	if hi != 0 || total > uint64(^uint(0)>>1) {
		return nil, &Error{Status: ErrShapeOverflow, Offset: -1, Tensor: -1, Message: "rows * row size overflows"}
	}
	dst := make([]byte, total)
	co, cop := quantizeOptions(opts)
	d := newDiag()
	st := C.tblob_ggml_quantize(C.uint32_t(ggmlType), C.uint32_t(srcDType), src, C.size_t(srcBytes),
		C.uint64_t(rows), C.uint64_t(cols), (*C.float)(f32Ptr(importance)), bytePtr(dst), C.size_t(len(dst)), cop, &d)
	runtime.KeepAlive(&co)
	if st != 0 {
		return nil, newError(st, &d)
	}
	return dst, nil
}

func quantDesc(q QuantDesc) C.tblob_quant_desc {
	var cd C.tblob_quant_desc
	C.tblob_quant_desc_init(&cd, C.size_t(unsafe.Sizeof(cd)))
	cd.scheme = C.uint32_t(q.Scheme)
	cd.bits = C.uint32_t(q.Bits)
	cd.group_size = C.uint32_t(q.GroupSize)
	cd.scale_dtype = C.uint32_t(q.ScaleDType)
	cd.bias_dtype = C.uint32_t(q.BiasDType)
	cd.global_scale_mode = C.uint32_t(q.GlobalScaleMode)
	cd.rows = C.uint64_t(q.Rows)
	cd.cols = C.uint64_t(q.Cols)
	return cd
}

// QuantSize is the byte lengths of the parts of a matrix described by q (tblob_quant_size).
func QuantSize(q QuantDesc) (QuantSizes, error) {
	cd := quantDesc(q)
	d := newDiag()
	if st := C.tblob_quant_size(&cd, &d); st != 0 {
		return QuantSizes{}, newError(st, &d)
	}
	return QuantSizes{uint64(cd.data_bytes), uint64(cd.scales_bytes), uint64(cd.biases_bytes),
		uint64(cd.global_scale_bytes)}, nil
}

// QuantQuantize quantizes q.Rows x q.Cols float32 values (row-major) with q's scheme (MLX
// affine, mxfp4, mxfp8, nvfp4, block FP8, SLM1; the inverse of the library's dequantizer,
// bit-exact with mx.quantize on the CPU for the MLX schemes: docs/quantize.md). opts may be nil.
func QuantQuantize(q QuantDesc, src []float32, opts *QuantizeOptions) (Quantized, error) {
	return quantQuantize(q, F32, f32Ptr(src), uintptr(len(src))*4, opts)
}

// QuantQuantizeBytes is QuantQuantize for little-endian F32, F16 or BF16 input (srcDType).
func QuantQuantizeBytes(q QuantDesc, srcDType DType, src []byte, opts *QuantizeOptions) (Quantized, error) {
	return quantQuantize(q, srcDType, bytePtr(src), uintptr(len(src)), opts)
}

func quantQuantize(q QuantDesc, srcDType DType, src unsafe.Pointer, srcBytes uintptr, opts *QuantizeOptions) (Quantized, error) {
	sizes, err := QuantSize(q)
	if err != nil {
		return Quantized{}, err
	}
	const maxInt = uint64(^uint(0) >> 1)
	if sizes.Data > maxInt || sizes.Scales > maxInt || sizes.Biases > maxInt {
		return Quantized{}, &Error{Status: ErrShapeOverflow, Offset: -1, Tensor: -1, Message: "quantized size overflows int"}
	}
	out := Quantized{make([]byte, sizes.Data), make([]byte, sizes.Scales), make([]byte, sizes.Biases)}
	cd := quantDesc(q)
	gs := q.GlobalScale
	// The descriptor (Go memory) holds Go pointers: pinning them is what lets C receive it.
	var pin runtime.Pinner
	defer pin.Unpin()
	for _, b := range [][]byte{out.Data, out.Scales, out.Biases} {
		if len(b) > 0 {
			pin.Pin(&b[0])
		}
	}
	pin.Pin(&gs)
	cd.data, cd.data_bytes = bytePtr(out.Data), C.uint64_t(sizes.Data)
	cd.scales, cd.scales_bytes = bytePtr(out.Scales), C.uint64_t(sizes.Scales)
	cd.biases, cd.biases_bytes = bytePtr(out.Biases), C.uint64_t(sizes.Biases)
	if q.GlobalScaleMode != GlobalScaleNone {
		cd.global_scale, cd.global_scale_bytes = unsafe.Pointer(&gs), 4
	}
	co, cop := quantizeOptions(opts)
	d := newDiag()
	st := C.tblob_quant_quantize(&cd, C.uint32_t(srcDType), src, C.size_t(srcBytes), cop, &d)
	runtime.KeepAlive(&co)
	if st != 0 {
		return Quantized{}, newError(st, &d)
	}
	return out, nil
}
