//go:build cgo

package tensorblob

/*
#define TBLOB_EXPERIMENTAL_API
#include <stdint.h>
#include <stdlib.h>
#include "tensorblob.h"

extern int tgoVerifyProgress(uintptr_t h, tblob_verify_progress *p);
extern int tgoBlobResult(uintptr_t h, tblob_blob_result *r);
extern int tgoStoreEntry(uintptr_t h, tblob_store_entry *e);
extern int tgoImportProgress(uintptr_t h, tblob_import_progress *p);
extern int tgoGCEntry(uintptr_t h, tblob_gc_entry *e);

static int tg_verify_progress(void *u, const tblob_verify_progress *p) {
  return tgoVerifyProgress((uintptr_t)u, (tblob_verify_progress *)p);
}
static int tg_blob_result(void *u, const tblob_blob_result *r) {
  return tgoBlobResult((uintptr_t)u, (tblob_blob_result *)r);
}
static int tg_store_entry(void *u, const tblob_store_entry *e) {
  return tgoStoreEntry((uintptr_t)u, (tblob_store_entry *)e);
}
static int tg_import_progress(void *u, const tblob_import_progress *p) {
  return tgoImportProgress((uintptr_t)u, (tblob_import_progress *)p);
}
static int tg_gc_entry(void *u, const tblob_gc_entry *e) {
  return tgoGCEntry((uintptr_t)u, (tblob_gc_entry *)e);
}

// The handle travels as an integer; only C memory ever holds it as a pointer.
static tblob_status tg_store_list(const tblob_store *s, uintptr_t h, tblob_diag *d) {
  return tblob_store_list(s, tg_store_entry, (void *)h, d);
}
static void tg_verify_callbacks(tblob_verify_options *o, uintptr_t h) {
  o->progress = tg_verify_progress;
  o->progress_user = (void *)h;
  o->on_blob = tg_blob_result;
  o->on_blob_user = (void *)h;
}
static void tg_import_callbacks(tblob_import_options *o, uintptr_t h) {
  o->progress = tg_import_progress;
  o->progress_user = (void *)h;
}
static void tg_gc_callbacks(tblob_gc_options *o, uintptr_t h) {
  o->on_entry = tg_gc_entry;
  o->user = (void *)h;
}
*/
import "C"

import (
	"context"
	"runtime"
	"runtime/cgo"
	"sync"
	"unsafe"
)

// Store is an Ollama model store (the directory of $OLLAMA_MODELS): manifests/ and blobs/.
// It is safe for concurrent use; Close waits for calls in progress.
type Store struct {
	mu      sync.RWMutex
	c       *C.tblob_store
	root    string
	cleanup runtime.Cleanup
}

func closeStore(c *C.tblob_store) { C.tblob_store_close(c) }

// OpenStore opens the store at root; "" means $OLLAMA_MODELS, else ~/.ollama/models.
func OpenStore(root string, opts ...StoreOption) (*Store, error) {
	var cfg storeConfig
	for _, o := range opts {
		o(&cfg)
	}
	var o C.tblob_store_options
	initStoreOptions(&o)
	if cfg.create {
		o.flags |= C.TBLOB_STORE_CREATE
	}
	o.allocator = allocator()
	var croot *C.char
	if root != "" {
		croot = C.CString(root)
		defer C.free(unsafe.Pointer(croot))
	}
	var out *C.tblob_store
	var d C.tblob_diag
	initDiag(&d)
	if st := C.tblob_store_open(croot, &o, &out, &d); st != 0 {
		return nil, withFileCause(newError(st, &d), root)
	}
	s := &Store{c: out, root: storeRoot(out)}
	s.cleanup = runtime.AddCleanup(s, closeStore, out)
	return s, nil
}

func (s *Store) acquire() (*C.tblob_store, error) {
	s.mu.RLock()
	if s.c == nil {
		s.mu.RUnlock()
		return nil, ErrClosed
	}
	return s.c, nil
}

// Close releases the store. Models opened from it stay open. Calling Close again does nothing.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c != nil {
		s.cleanup.Stop()
		closeStore(s.c)
		s.c = nil
	}
	return nil
}

// Root is the store directory as opened.
func (s *Store) Root() string { return s.root }

// finish turns the result of a call with callbacks into an error: a panic in a callback is
// raised again, a cancelled context becomes an *Error that also matches ctx.Err().
func finish(state *callState, st C.tblob_status, d *C.tblob_diag) error {
	if state.didPanic {
		panic(state.panicked)
	}
	err := newError(st, d)
	if e, ok := err.(*Error); ok && e.Status == ErrCancelled && state.ctx != nil && state.ctx.Err() != nil {
		e.cause = state.ctx.Err()
	}
	return err
}

// Models lists the manifests of the store in name order. A manifest that cannot be read is
// listed with its Err set.
func (s *Store) Models() ([]ModelEntry, error) {
	c, err := s.acquire()
	if err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	state := &callState{}
	h := cgo.NewHandle(state)
	defer h.Delete()
	var d C.tblob_diag
	initDiag(&d)
	st := C.tg_store_list(c, C.uintptr_t(h), &d)
	if err := finish(state, st, &d); err != nil {
		return nil, err
	}
	return state.entries, nil
}

// OpenModel opens model name ("model", "model:tag", "host/namespace/model:tag") as one table
// of every tensor of its tensor blobs. The Model stays usable after the Store is closed.
func (s *Store) OpenModel(name string, opts ...Option) (*Model, error) {
	c, err := s.acquire()
	if err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	cfg := configure(opts)
	// Nested option structs point at each other, so they live in C memory.
	so := (*C.tblob_store_open_options)(C.calloc(1, C.sizeof_tblob_store_open_options))
	defer C.free(unsafe.Pointer(so))
	oo := (*C.tblob_open_options)(C.calloc(1, C.sizeof_tblob_open_options))
	defer C.free(unsafe.Pointer(oo))
	initStoreOpenOptions(so)
	fillOpenOptions(cfg, oo)
	so.open = oo
	if cfg.component != "" {
		comp := C.CString(cfg.component)
		defer C.free(unsafe.Pointer(comp))
		so.component = comp
		so.component_len = C.size_t(len(cfg.component))
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var out *C.tblob_model
	var d C.tblob_diag
	initDiag(&d)
	if st := C.tblob_store_open_model(c, cname, C.size_t(len(name)), so, &out, &d); st != 0 {
		return nil, newError(st, &d)
	}
	return newModel(out, nil)
}

// Verify hashes every blob (config and layers) of every model, or of one (VerifyModel),
// and checks it against its digest and size. progress (may be nil) is called on the calling
// goroutine as the verify goes. Cancelling ctx cancels the C call at its next report (after
// each blob, and every 32 MiB hashed): the error then matches both ErrCancelled and
// ctx.Err(). A bad blob makes the error the status of the first bad
// blob in name order (ErrDigestMismatch, ErrOllamaBlobSize, ErrOllamaBlobMissing, ...)
// after all were checked; VerifyOnBlob reports each one.
func (s *Store) Verify(ctx context.Context, progress func(Progress), opts ...VerifyOption) (VerifySummary, error) {
	var cfg verifyConfig
	for _, o := range opts {
		o(&cfg)
	}
	if err := ctx.Err(); err != nil {
		return VerifySummary{}, &Error{Status: ErrCancelled, Message: "context done before the verify", Offset: -1, Tensor: -1, cause: err}
	}
	c, err := s.acquire()
	if err != nil {
		return VerifySummary{}, err
	}
	defer s.mu.RUnlock()
	state := &callState{ctx: ctx, progress: progress, onBlob: cfg.onBlob}
	h := cgo.NewHandle(state)
	defer h.Delete()
	o := (*C.tblob_verify_options)(C.calloc(1, C.sizeof_tblob_verify_options))
	defer C.free(unsafe.Pointer(o))
	initVerifyOptions(o)
	o.threads = C.uint32_t(cfg.threads)
	if cfg.mapped {
		o.flags |= C.TBLOB_VERIFY_MAP
	}
	C.tg_verify_callbacks(o, C.uintptr_t(h))
	var cname *C.char
	if cfg.model != "" {
		cname = C.CString(cfg.model)
		defer C.free(unsafe.Pointer(cname))
	}
	var sum C.tblob_verify_summary
	initVerifySummary(&sum)
	var d C.tblob_diag
	initDiag(&d)
	st := C.tblob_store_verify(c, cname, C.size_t(len(cfg.model)), o, &sum, &d)
	out := VerifySummary{
		Threads: int(sum.threads_used), Manifests: uint64(sum.manifests),
		ManifestsBad: uint64(sum.manifests_bad), Blobs: uint64(sum.blobs),
		BlobsBad: uint64(sum.blobs_bad), BytesHashed: uint64(sum.bytes_hashed),
	}
	return out, finish(state, st, &d)
}

// Import imports sourceDir (config.json, *.safetensors or a sharded checkpoint, other
// *.json, component subdirectories) as model name, the way `ollama create` does: one blob
// per tensor, de-duplicated by content, the manifest written last. Cancelling ctx cancels
// it before the manifest is written.
func (s *Store) Import(ctx context.Context, name, sourceDir string, opts ...ImportOption) (ImportResult, error) {
	var cfg importConfig
	for _, o := range opts {
		o(&cfg)
	}
	if err := ctx.Err(); err != nil {
		return ImportResult{}, &Error{Status: ErrCancelled, Message: "context done before the import", Offset: -1, Tensor: -1, cause: err}
	}
	c, err := s.acquire()
	if err != nil {
		return ImportResult{}, err
	}
	defer s.mu.RUnlock()
	state := &callState{ctx: ctx, progress: cfg.progress}
	h := cgo.NewHandle(state)
	defer h.Delete()
	o := (*C.tblob_import_options)(C.calloc(1, C.sizeof_tblob_import_options))
	defer C.free(unsafe.Pointer(o))
	oo := (*C.tblob_open_options)(C.calloc(1, C.sizeof_tblob_open_options))
	defer C.free(unsafe.Pointer(oo))
	initImportOptions(o)
	fillOpenOptions(configure(cfg.open), oo)
	o.open = oo
	if cfg.trustExisting {
		o.flags |= C.TBLOB_IMPORT_TRUST_EXISTING
	}
	C.tg_import_callbacks(o, C.uintptr_t(h))
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	cdir := C.CString(sourceDir)
	defer C.free(unsafe.Pointer(cdir))
	var r C.tblob_import_result
	initImportResult(&r)
	var d C.tblob_diag
	initDiag(&d)
	st := C.tblob_store_import(c, cname, C.size_t(len(name)), cdir, o, &r, &d)
	out := ImportResult{
		ManifestWritten: r.manifest_written != 0, Layers: uint64(r.layers),
		Tensors: uint64(r.tensors), BlobsWritten: uint64(r.blobs_written),
		BlobsReused: uint64(r.blobs_reused), BytesWritten: uint64(r.bytes_written),
	}
	return out, withFileCause(finish(state, st, &d), sourceDir)
}

// GC lists the files of blobs/ that no manifest references, partial downloads and
// temporary files (older than GCMinAge), and with GCRemove deletes them. It refuses with
// ErrOllamaCorruptStore when some manifest cannot be read.
func (s *Store) GC(opts ...GCOption) (GCResult, error) {
	var cfg gcConfig
	for _, o := range opts {
		o(&cfg)
	}
	c, err := s.acquire()
	if err != nil {
		return GCResult{}, err
	}
	defer s.mu.RUnlock()
	state := &callState{}
	h := cgo.NewHandle(state)
	defer h.Delete()
	o := (*C.tblob_gc_options)(C.calloc(1, C.sizeof_tblob_gc_options))
	defer C.free(unsafe.Pointer(o))
	initGCOptions(o)
	if cfg.remove {
		o.flags |= C.TBLOB_GC_REMOVE
	}
	if cfg.setAge {
		o.min_age_seconds = C.int64_t(cfg.minAge.Seconds())
	}
	C.tg_gc_callbacks(o, C.uintptr_t(h))
	var r C.tblob_gc_result
	initGCResult(&r)
	var d C.tblob_diag
	initDiag(&d)
	st := C.tblob_store_gc(c, o, &r, &d)
	out := GCResult{
		Entries: state.gc, Manifests: uint64(r.manifests),
		ReferencedBlobs: uint64(r.referenced_blobs), ListedFiles: uint64(r.listed_files),
		ListedBytes: uint64(r.listed_bytes), RemovedFiles: uint64(r.removed_files),
		RemovedBytes: uint64(r.removed_bytes),
	}
	if !cfg.remove {
		for i := range out.Entries {
			out.Entries[i].Removed, out.Entries[i].Err = false, nil
		}
	}
	return out, finish(state, st, &d)
}
