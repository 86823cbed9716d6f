//go:build cgo

package tensorblob

// The library's struct initialisers and the calls that take borrowed strings, in one place.

/*
#define TBLOB_EXPERIMENTAL_API
#include <stdint.h>
#include <stdlib.h>
#include "tensorblob.h"
*/
import "C"

import (
	"strings"
	"unsafe"
)

// The _init functions fill the same defaults as the C _INIT macros and set struct_size; they
// fail only for NULL or a struct_size below 8, which these calls never pass.
func initDiag(d *C.tblob_diag)              { C.tblob_diag_init(d, C.sizeof_tblob_diag) }
func initTensorInfo(i *C.tblob_tensor_info) { C.tblob_tensor_info_init(i, C.sizeof_tblob_tensor_info) }
func initStoreOptions(o *C.tblob_store_options) {
	C.tblob_store_options_init(o, C.sizeof_tblob_store_options)
}
func initStoreOpenOptions(o *C.tblob_store_open_options) {
	C.tblob_store_open_options_init(o, C.sizeof_tblob_store_open_options)
}
func initVerifyOptions(o *C.tblob_verify_options) {
	C.tblob_verify_options_init(o, C.sizeof_tblob_verify_options)
}
func initVerifySummary(o *C.tblob_verify_summary) {
	C.tblob_verify_summary_init(o, C.sizeof_tblob_verify_summary)
}
func initImportOptions(o *C.tblob_import_options) {
	C.tblob_import_options_init(o, C.sizeof_tblob_import_options)
}
func initImportResult(o *C.tblob_import_result) {
	C.tblob_import_result_init(o, C.sizeof_tblob_import_result)
}
func initGCOptions(o *C.tblob_gc_options) { C.tblob_gc_options_init(o, C.sizeof_tblob_gc_options) }
func initGCResult(o *C.tblob_gc_result)   { C.tblob_gc_result_init(o, C.sizeof_tblob_gc_result) }
func initSLM1OpenOptions(o *C.tblob_slm1_open_options) {
	C.tblob_slm1_open_options_init(o, C.sizeof_tblob_slm1_open_options)
}
func initSLM1HeaderInfo(o *C.tblob_slm1_header_info) {
	C.tblob_slm1_header_info_init(o, C.sizeof_tblob_slm1_header_info)
}
func initDequantOptions(o *C.tblob_dequant_options) {
	C.tblob_dequant_options_init(o, C.sizeof_tblob_dequant_options)
}
func initUQFFLayerInfo(o *C.tblob_uqff_layer_info) {
	C.tblob_uqff_layer_info_init(o, C.sizeof_tblob_uqff_layer_info)
}

func initOpenOptions(o *C.tblob_open_options, compact bool) {
	if compact {
		C.tblob_open_options_init_compact(o, C.sizeof_tblob_open_options)
	} else {
		C.tblob_open_options_init(o, C.sizeof_tblob_open_options)
	}
}

// tableChunk bounds the descriptors fetched per call (104 bytes each).
const tableChunk = 4096

// loadTable copies the whole tensor table out of the model, a chunk of rows per call. The
// descriptors go to C memory: a Go array of pointer-holding structs would be scanned by
// the cgo pointer check on every call.
func loadTable(c *C.tblob_model) ([]TensorInfo, error) {
	n := uint64(C.tblob_model_tensor_count(c))
	table := make([]TensorInfo, 0, n)
	if n == 0 {
		return table, nil
	}
	chunk := min(n, tableChunk)
	buf := (*C.tblob_tensor_info)(C.calloc(C.size_t(chunk), C.sizeof_tblob_tensor_info))
	if buf == nil {
		return nil, &Error{Status: ErrOutOfMemory, Message: "tensor table buffer", Offset: -1, Tensor: -1}
	}
	defer C.free(unsafe.Pointer(buf))
	infos := unsafe.Slice(buf, chunk)
	var d C.tblob_diag
	for first := uint64(0); first < n; first += chunk {
		count := min(n-first, chunk)
		initDiag(&d)
		st := C.tblob_tensors_at(c, C.uint64_t(first), C.uint64_t(count), buf,
			C.sizeof_tblob_tensor_info, &d)
		if st != 0 {
			return nil, newError(st, &d)
		}
		table = appendTable(table, infos[:count])
	}
	return table, nil
}

func tensorData(c *C.tblob_model, i uint64) (unsafe.Pointer, uint64, error) {
	var p unsafe.Pointer
	var n C.uint64_t
	var d C.tblob_diag
	initDiag(&d)
	if st := C.tblob_tensor_data(c, C.uint64_t(i), &p, &n, &d); st != 0 {
		return nil, 0, newError(st, &d)
	}
	return p, uint64(n), nil
}

func filePath(c *C.tblob_model, i uint32) (string, error) {
	var p *C.char
	var n C.size_t
	var d C.tblob_diag
	initDiag(&d)
	if st := C.tblob_model_file_path(c, C.uint32_t(i), &p, &n, &d); st != 0 {
		return "", newError(st, &d)
	}
	return goString(p, n), nil
}

func metadataAt(c *C.tblob_model, i uint64) (string, string, error) {
	var k, v *C.char
	var kl, vl C.size_t
	var d C.tblob_diag
	initDiag(&d)
	if st := C.tblob_metadata_at(c, C.uint64_t(i), &k, &kl, &v, &vl, &d); st != 0 {
		return "", "", newError(st, &d)
	}
	return goString(k, kl), goString(v, vl), nil
}

func storeRoot(s *C.tblob_store) string {
	var p *C.char
	var n C.size_t
	if C.tblob_store_root(s, &p, &n, nil) != 0 {
		return ""
	}
	return goString(p, n)
}

// goString copies n bytes at p (borrowed from a handle) into a Go string.
func goString(p *C.char, n C.size_t) string {
	if p == nil || n == 0 {
		return ""
	}
	return strings.Clone(unsafe.String((*byte)(unsafe.Pointer(p)), int(n)))
}
