//go:build cgo

package tensorblob

/*
#include "tensorblob.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

func metaValue(v *C.tblob_metadata_value) MetaValue {
	return MetaValue{
		Index:    uint64(v.index),
		Key:      C.GoStringN(v.key, C.int(v.key_len)),
		Type:     MetaType(v.value_type),
		Uint:     uint64(v.uint_value),
		Int:      int64(v.int_value),
		Float:    float64(v.float_value),
		Text:     C.GoStringN(v.string, C.int(v.string_len)),
		ElemType: MetaType(v.element_type),
		Count:    uint64(v.count),
	}
}

// TypedMetadata returns every typed key/value in file order (GGUF's key/values; for other
// formats the __metadata__ strings as MetaString), duplicates included.
func (m *Model) TypedMetadata() ([]MetaValue, error) {
	c, err := m.acquire()
	if err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	n := uint64(C.tblob_metadata_typed_count(c))
	out := make([]MetaValue, 0, n)
	for i := uint64(0); i < n; i++ {
		v := C.tblob_metadata_value{struct_size: C.uint32_t(unsafe.Sizeof(C.tblob_metadata_value{}))}
		var d C.tblob_diag
		C.tblob_diag_init(&d, C.size_t(unsafe.Sizeof(d)))
		if st := C.tblob_metadata_typed_at(c, C.uint64_t(i), &v, &d); st != 0 {
			return nil, newError(st, &d)
		}
		out = append(out, metaValue(&v))
	}
	return out, nil
}

// TypedMetadataLookup returns the first value named key; ok is false when there is none.
func (m *Model) TypedMetadataLookup(key string) (v MetaValue, ok bool, err error) {
	c, err := m.acquire()
	if err != nil {
		return MetaValue{}, false, err
	}
	defer m.mu.RUnlock()
	cv := C.tblob_metadata_value{struct_size: C.uint32_t(unsafe.Sizeof(C.tblob_metadata_value{}))}
	var d C.tblob_diag
	C.tblob_diag_init(&d, C.size_t(unsafe.Sizeof(d)))
	kp := unsafe.StringData(key)
	st := C.tblob_metadata_typed_find(c, (*C.char)(unsafe.Pointer(kp)), C.size_t(len(key)), &cv, &d)
	if Status(st) == ErrNotFound {
		return MetaValue{}, false, nil
	}
	if st != 0 {
		return MetaValue{}, false, newError(st, &d)
	}
	return metaValue(&cv), true, nil
}

var metaSizes = map[MetaType]uintptr{MetaU8: 1, MetaI8: 1, MetaBool: 1, MetaU16: 2, MetaI16: 2,
	MetaU32: 4, MetaI32: 4, MetaF32: 4, MetaU64: 8, MetaI64: 8, MetaF64: 8}

// MetadataArray reads len(dst) elements of the numeric or bool array at typed index index,
// starting at element first, in host byte order. T must have the element's size (the library
// checks the byte count, so a mismatch would reinterpret bytes: it is refused here).
func MetadataArray[T MetaElement](m *Model, index, first uint64, dst []T) error {
	c, err := m.acquire()
	if err != nil {
		return err
	}
	defer m.mu.RUnlock()
	v := C.tblob_metadata_value{struct_size: C.uint32_t(unsafe.Sizeof(C.tblob_metadata_value{}))}
	var d C.tblob_diag
	C.tblob_diag_init(&d, C.size_t(unsafe.Sizeof(d)))
	if st := C.tblob_metadata_typed_at(c, C.uint64_t(index), &v, &d); st != 0 {
		return newError(st, &d)
	}
	var zero T
	if size, numeric := metaSizes[MetaType(v.element_type)]; MetaType(v.value_type) == MetaArray && numeric &&
		size != unsafe.Sizeof(zero) {
		return &Error{Status: ErrInvalidArgument, Offset: -1, Tensor: -1,
			Message: fmt.Sprintf("array %d has %d-byte elements, dst has %d-byte elements", index, size, unsafe.Sizeof(zero))}
	}
	var p unsafe.Pointer
	if len(dst) > 0 {
		p = unsafe.Pointer(&dst[0])
	}
	st := C.tblob_metadata_array_get(c, C.uint64_t(index), C.uint64_t(first), C.uint64_t(len(dst)), p,
		C.size_t(uintptr(len(dst))*unsafe.Sizeof(zero)), &d)
	return newError(st, &d)
}

// MetadataStrings returns count elements (from element first) of the string array at typed
// index index; count ^uint64(0) reads through the last. Each element after the first costs
// O(1) (the library's cursor).
func (m *Model) MetadataStrings(index, first, count uint64) ([]string, error) {
	c, err := m.acquire()
	if err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	var d C.tblob_diag
	C.tblob_diag_init(&d, C.size_t(unsafe.Sizeof(d)))
	v := C.tblob_metadata_value{struct_size: C.uint32_t(unsafe.Sizeof(C.tblob_metadata_value{}))}
	if st := C.tblob_metadata_typed_at(c, C.uint64_t(index), &v, &d); st != 0 {
		return nil, newError(st, &d)
	}
	total := uint64(v.count)
	if count == ^uint64(0) {
		count = 1 // past the end: the library reports the range
		if first <= total {
			count = total - first
		}
	}
	var cur C.tblob_metadata_cursor
	C.tblob_metadata_cursor_init(&cur, C.size_t(unsafe.Sizeof(cur)))
	out := make([]string, 0, min(count, total))
	for k := uint64(0); k < count; k++ {
		var s *C.char
		var n C.size_t
		st := C.tblob_metadata_array_string(c, C.uint64_t(index), C.uint64_t(first+k), &cur, &s, &n, &d)
		if st != 0 {
			return nil, newError(st, &d)
		}
		out = append(out, C.GoStringN(s, C.int(n)))
	}
	return out, nil
}
