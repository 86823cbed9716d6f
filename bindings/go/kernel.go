//go:build cgo

package tensorblob

/*
#include <stdlib.h>
#include "tensorblob.h"
*/
import "C"

import "unsafe"

// SetKernel forces the process-wide kernel set ("scalar", "avx2", "avx512", "neon"); "" or
// "auto" returns to the automatic choice. A set that is unknown, compiled out or that this
// host cannot run is ErrKernelUnavailable, never a silent fallback. Every set gives the same
// bits.
func SetKernel(name string) error {
	var cname *C.char
	if name != "" {
		cname = C.CString(name)
		defer C.free(unsafe.Pointer(cname))
	}
	var d C.tblob_diag
	C.tblob_diag_init(&d, C.size_t(unsafe.Sizeof(d)))
	return newError(C.tblob_kernel_set(cname, &d), &d)
}

// ActiveKernel is the name of the kernel set in use ("scalar", "avx2", ...).
func ActiveKernel() string { return C.GoString(C.tblob_kernel_active()) }

// GGMLKernel is the name of the GGML kernels in use ("scalar", "avx2" or "neon").
func GGMLKernel() string { return C.GoString(C.tblob_ggml_kernel_name()) }
