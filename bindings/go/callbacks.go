//go:build cgo

package tensorblob

// Go functions the C library calls back, through the trampolines in store.go. The user
// pointer C sees is a cgo.Handle to a callState, never a Go pointer. A panic in a user
// callback is caught here (it must not unwind through C frames), cancels the C call and is
// raised again once the call has returned.

/*
#define TBLOB_EXPERIMENTAL_API
#include <stdint.h>
#include "tensorblob.h"
*/
import "C"

import (
	"context"
	"runtime/cgo"
	"time"
)

type callState struct {
	ctx      context.Context
	progress func(Progress)
	onBlob   func(BlobResult)
	entries  []ModelEntry
	gc       []GCEntry
	panicked any
	didPanic bool
}

func (s *callState) run(fn func()) (stop C.int) {
	defer func() {
		if r := recover(); r != nil {
			s.panicked, s.didPanic = r, true
			stop = 1
		}
	}()
	if s.ctx != nil && s.ctx.Err() != nil {
		return 1
	}
	fn()
	if s.ctx != nil && s.ctx.Err() != nil {
		return 1
	}
	return 0
}

func stateOf(h C.uintptr_t) *callState { return cgo.Handle(h).Value().(*callState) }

func statusErr(st C.tblob_status, msg *C.char) error {
	if st == 0 {
		return nil
	}
	e := &Error{Status: Status(st), Offset: -1, Tensor: -1}
	if msg != nil {
		e.Message = C.GoString(msg)
	}
	return e
}

//export tgoVerifyProgress
func tgoVerifyProgress(h C.uintptr_t, p *C.tblob_verify_progress) C.int {
	s := stateOf(h)
	pr := Progress{Total: uint64(p.blobs_total), Done: uint64(p.blobs_done),
		BytesTotal: uint64(p.bytes_total), BytesDone: uint64(p.bytes_done)}
	return s.run(func() {
		if s.progress != nil {
			s.progress(pr)
		}
	})
}

//export tgoBlobResult
func tgoBlobResult(h C.uintptr_t, r *C.tblob_blob_result) C.int {
	s := stateOf(h)
	br := BlobResult{
		Digest:       goString(r.digest, r.digest_len),
		ActualDigest: goString(r.actual_digest, r.actual_digest_len),
		ExpectedSize: uint64(r.expected_size),
		ActualSize:   uint64(r.actual_size),
		Path:         goString(r.path, r.path_len),
		Err:          statusErr(r.status, r.message),
	}
	return s.run(func() {
		if s.onBlob != nil {
			s.onBlob(br)
		}
	})
}

//export tgoStoreEntry
func tgoStoreEntry(h C.uintptr_t, e *C.tblob_store_entry) C.int {
	s := stateOf(h)
	s.entries = append(s.entries, ModelEntry{
		Name:          goString(e.name, e.name_len),
		ShortName:     goString(e.short_name, e.short_name_len),
		ManifestID:    goString(e.manifest_id, e.manifest_id_len),
		ManifestBytes: uint64(e.manifest_bytes),
		TotalBytes:    uint64(e.total_bytes),
		Layers:        uint64(e.layer_count),
		TensorLayers:  uint64(e.tensor_layer_count),
		Modified:      time.Unix(int64(e.modified_unix), 0),
		Err:           statusErr(e.status, e.message),
	})
	return s.run(func() {})
}

//export tgoImportProgress
func tgoImportProgress(h C.uintptr_t, p *C.tblob_import_progress) C.int {
	s := stateOf(h)
	pr := Progress{Total: uint64(p.tensors_total), Done: uint64(p.tensors_done),
		BytesTotal: uint64(p.bytes_total), BytesDone: uint64(p.bytes_done)}
	return s.run(func() {
		if s.progress != nil {
			s.progress(pr)
		}
	})
}

//export tgoGCEntry
func tgoGCEntry(h C.uintptr_t, e *C.tblob_gc_entry) C.int {
	s := stateOf(h)
	s.gc = append(s.gc, GCEntry{
		Kind:     GCKind(e.kind),
		FileName: goString(e.file_name, e.file_name_len),
		Size:     uint64(e.size),
		Removed:  e.removed == 0,
		Err:      statusErr(e.removed, nil),
	})
	return s.run(func() {})
}
