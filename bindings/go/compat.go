//go:build cgo

package tensorblob

// The calls whose C signatures the header's API freeze changes, in one place.

/*
#include <stdint.h>
#include "tensorblob.h"

static void tg_diag_init(tblob_diag *d) {
  tblob_diag x = TBLOB_DIAG_INIT;
  *d = x;
}
static void tg_open_options_init(tblob_open_options *o, int compact) {
  tblob_open_options d = TBLOB_OPEN_OPTIONS_INIT;
  tblob_open_options c = TBLOB_OPEN_OPTIONS_COMPACT_INIT;
  *o = compact ? c : d;
}
static void tg_tensor_info_init(tblob_tensor_info *i) {
  tblob_tensor_info x = TBLOB_TENSOR_INFO_INIT;
  *i = x;
}
static void tg_store_options_init(tblob_store_options *o) {
  tblob_store_options x = TBLOB_STORE_OPTIONS_INIT;
  *o = x;
}
static void tg_store_open_options_init(tblob_store_open_options *o) {
  tblob_store_open_options x = TBLOB_STORE_OPEN_OPTIONS_INIT;
  *o = x;
}
static void tg_verify_options_init(tblob_verify_options *o) {
  tblob_verify_options x = TBLOB_VERIFY_OPTIONS_INIT;
  *o = x;
}
static void tg_verify_summary_init(tblob_verify_summary *o) {
  tblob_verify_summary x = TBLOB_VERIFY_SUMMARY_INIT;
  *o = x;
}
static void tg_import_options_init(tblob_import_options *o) {
  tblob_import_options x = TBLOB_IMPORT_OPTIONS_INIT;
  *o = x;
}
static void tg_import_result_init(tblob_import_result *o) {
  tblob_import_result x = TBLOB_IMPORT_RESULT_INIT;
  *o = x;
}
static void tg_gc_options_init(tblob_gc_options *o) {
  tblob_gc_options x = TBLOB_GC_OPTIONS_INIT;
  *o = x;
}
static void tg_gc_result_init(tblob_gc_result *o) {
  tblob_gc_result x = TBLOB_GC_RESULT_INIT;
  *o = x;
}
static void tg_slm1_open_options_init(tblob_slm1_open_options *o) {
  tblob_slm1_open_options x = TBLOB_SLM1_OPEN_OPTIONS_INIT;
  *o = x;
}
static void tg_slm1_header_info_init(tblob_slm1_header_info *o) {
  tblob_slm1_header_info x = TBLOB_SLM1_HEADER_INFO_INIT;
  *o = x;
}
static void tg_uqff_layer_info_init(tblob_uqff_layer_info *o) {
  tblob_uqff_layer_info x = TBLOB_UQFF_LAYER_INFO_INIT;
  *o = x;
}
static tblob_status tg_tensor_data(const tblob_model *m, uint64_t i, const void **data,
                                   uint64_t *len, tblob_diag *d) {
  size_t n = 0;
  tblob_status st = tblob_tensor_data(m, i, data, &n, d);
  *len = n;
  return st;
}
*/
import "C"

import (
	"strings"
	"unsafe"
)

func initDiag(d *C.tblob_diag)                  { C.tg_diag_init(d) }
func initTensorInfo(i *C.tblob_tensor_info)     { C.tg_tensor_info_init(i) }
func initStoreOptions(o *C.tblob_store_options) { C.tg_store_options_init(o) }
func initStoreOpenOptions(o *C.tblob_store_open_options) {
	C.tg_store_open_options_init(o)
}
func initVerifyOptions(o *C.tblob_verify_options)      { C.tg_verify_options_init(o) }
func initVerifySummary(o *C.tblob_verify_summary)      { C.tg_verify_summary_init(o) }
func initImportOptions(o *C.tblob_import_options)      { C.tg_import_options_init(o) }
func initImportResult(o *C.tblob_import_result)        { C.tg_import_result_init(o) }
func initGCOptions(o *C.tblob_gc_options)              { C.tg_gc_options_init(o) }
func initGCResult(o *C.tblob_gc_result)                { C.tg_gc_result_init(o) }
func initSLM1OpenOptions(o *C.tblob_slm1_open_options) { C.tg_slm1_open_options_init(o) }
func initSLM1HeaderInfo(o *C.tblob_slm1_header_info)   { C.tg_slm1_header_info_init(o) }
func initUQFFLayerInfo(o *C.tblob_uqff_layer_info)     { C.tg_uqff_layer_info_init(o) }

func initOpenOptions(o *C.tblob_open_options, compact bool) {
	c := C.int(0)
	if compact {
		c = 1
	}
	C.tg_open_options_init(o, c)
}

// loadTable copies the whole tensor table out of the model.
func loadTable(c *C.tblob_model) ([]TensorInfo, error) {
	n := uint64(C.tblob_model_tensor_count(c))
	table := make([]TensorInfo, 0, n)
	var info C.tblob_tensor_info
	var d C.tblob_diag
	for i := uint64(0); i < n; i++ {
		initTensorInfo(&info)
		initDiag(&d)
		if st := C.tblob_tensor_at(c, C.uint64_t(i), &info, &d); st != 0 {
			return nil, newError(st, &d)
		}
		table = append(table, tensorInfoFrom(&info))
	}
	return table, nil
}

func tensorData(c *C.tblob_model, i uint64) (unsafe.Pointer, uint64, error) {
	var p unsafe.Pointer
	var n C.uint64_t
	var d C.tblob_diag
	initDiag(&d)
	if st := C.tg_tensor_data(c, C.uint64_t(i), &p, &n, &d); st != 0 {
		return nil, 0, newError(st, &d)
	}
	return p, uint64(n), nil
}

func filePath(c *C.tblob_model, i uint32) (string, error) {
	var p *C.char
	var n C.size_t
	if st := C.tblob_model_file_path(c, C.uint32_t(i), &p, &n); st != 0 {
		return "", newError(st, nil)
	}
	return goString(p, n), nil
}

func metadataAt(c *C.tblob_model, i uint64) (string, string, error) {
	var k, v *C.char
	var kl, vl C.size_t
	if st := C.tblob_metadata_at(c, C.uint64_t(i), &k, &kl, &v, &vl); st != 0 {
		return "", "", newError(st, nil)
	}
	return goString(k, kl), goString(v, vl), nil
}

func storeRoot(s *C.tblob_store) string {
	var p *C.char
	var n C.size_t
	if C.tblob_store_root(s, &p, &n) != 0 {
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
