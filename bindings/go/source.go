//go:build cgo

package tensorblob

// Models read through an io.ReaderAt (tblob_model_open_source): the library reads the header
// at open and then only the tensor bytes asked for. The C source's user pointer is a
// cgo.Handle to a readerSource, deleted by the library's close call (exactly once).

/*
#include <stdint.h>
#include <stdlib.h>
#include "tensorblob.h"

extern int64_t tgoSourceRead(uintptr_t h, uint64_t offset, void *dst, size_t len);
extern tblob_status tgoSourceSibling(uintptr_t h, char *name, size_t name_len, tblob_byte_source *out);
extern void tgoSourceClose(uintptr_t h);

static int64_t tg_source_read(void *u, uint64_t offset, void *dst, size_t len) {
  return tgoSourceRead((uintptr_t)u, offset, dst, len);
}
static tblob_status tg_source_sibling(void *u, const char *name, size_t name_len, tblob_byte_source *out) {
  return tgoSourceSibling((uintptr_t)u, (char *)name, name_len, out);
}
static void tg_source_close(void *u) { tgoSourceClose((uintptr_t)u); }

// Fills a source whose user pointer is the handle h (a uintptr, never a Go pointer).
static void tg_source_fill(tblob_byte_source *s, uintptr_t h, uint64_t size, int siblings) {
  s->size = size;
  s->read = tg_source_read;
  s->open_sibling = siblings ? tg_source_sibling : NULL;
  s->close = tg_source_close;
  s->user = (void *)h;
}
*/
import "C"

import (
	"errors"
	"io"
	"io/fs"
	"runtime/cgo"
	"sync"
	"unsafe"
)

type readerSource struct {
	r        io.ReaderAt
	siblings SiblingFunc
	state    *sourceState // shared by a reader and its siblings
}

// sourceState keeps the latest error a reader returned, so the *Error of the call that
// needed the bytes can wrap it (the library itself sees only a status).
type sourceState struct {
	mu  sync.Mutex
	err error
}

func (s *sourceState) set(err error) {
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
}

// wrap attaches the reader's latest error to a failed call's *Error.
func (s *sourceState) wrap(err error) error {
	var e *Error
	if s == nil || !errors.As(err, &e) || e.cause != nil {
		return err
	}
	s.mu.Lock()
	e.cause, s.err = s.err, nil
	s.mu.Unlock()
	return err
}

// OpenReaderAt opens a model whose bytes come from r (size bytes; a negative size is unknown):
// a safetensors file, a sharded checkpoint's index (its shards through WithSiblings), GGUF, a
// UQFF shard or SLM1. Only the header is read at open; tensor bytes are read when asked for
// (Tensor.ReadAt, the Dequantize methods), so r may be remote. Tensor.Bytes is nil for such
// a model (nothing is mapped). r must allow concurrent ReadAt calls when the Model is used by
// several goroutines (an *os.File does). An error from r fails the call that needed the
// bytes with ErrIO (or the Status of an *Error r returned), and errors.Is/As also reach r's
// error; a read that ends early inside the size is ErrSourceShortRead.
func OpenReaderAt(r io.ReaderAt, size int64, opts ...Option) (*Model, error) {
	if r == nil {
		return nil, &Error{Status: ErrInvalidArgument, Message: "nil io.ReaderAt", Offset: -1, Tensor: -1}
	}
	cfg := configure(opts)
	var o C.tblob_open_options
	fillOpenOptions(cfg, &o)
	state := &sourceState{}
	var src C.tblob_byte_source
	fillSource(&src, &readerSource{r: r, siblings: cfg.siblings, state: state}, size)
	var out *C.tblob_model
	var d C.tblob_diag
	initDiag(&d)
	if st := C.tblob_model_open_source(&src, &o, &out, &d); st != 0 {
		return nil, state.wrap(newError(st, &d)) // the library has closed the source (deleted the handle)
	}
	m, err := newModel(out, nil)
	if m != nil {
		m.src = state
	}
	return m, err
}

func fillSource(src *C.tblob_byte_source, s *readerSource, size int64) {
	C.tblob_byte_source_init(src, C.sizeof_tblob_byte_source)
	csize := C.uint64_t(C.TBLOB_SOURCE_SIZE_UNKNOWN)
	if size >= 0 {
		csize = C.uint64_t(size)
	}
	siblings := C.int(0)
	if s.siblings != nil {
		siblings = 1
	}
	C.tg_source_fill(src, C.uintptr_t(cgo.NewHandle(s)), csize, siblings)
}

// readStatus is the status a read error becomes: the library's own when the reader returned
// an *Error, else TBLOB_E_IO.
func readStatus(err error) C.int64_t {
	var e *Error
	if errors.As(err, &e) && e.Status < 0 {
		return C.int64_t(e.Status)
	}
	return C.int64_t(ErrIO)
}

//export tgoSourceRead
func tgoSourceRead(h C.uintptr_t, offset C.uint64_t, dst unsafe.Pointer, n C.size_t) (ret C.int64_t) {
	defer func() {
		if recover() != nil { // a panicking reader must not unwind through C
			ret = C.int64_t(ErrIO)
		}
	}()
	s := cgo.Handle(h).Value().(*readerSource)
	if n == 0 {
		return 0
	}
	if uint64(offset) > 1<<63-1 {
		return C.int64_t(ErrRange)
	}
	buf := unsafe.Slice((*byte)(dst), int(n))
	got, err := s.r.ReadAt(buf, int64(offset))
	if got < 0 || got > len(buf) {
		return C.int64_t(ErrSourceOverread)
	}
	if err != nil && !(errors.Is(err, io.EOF) && got < len(buf)) {
		s.state.set(err)
		return readStatus(err)
	}
	return C.int64_t(got)
}

//export tgoSourceSibling
func tgoSourceSibling(h C.uintptr_t, name *C.char, n C.size_t, out *C.tblob_byte_source) (ret C.tblob_status) {
	defer func() {
		if recover() != nil {
			ret = C.tblob_status(ErrIO)
		}
	}()
	s := cgo.Handle(h).Value().(*readerSource)
	r, size, err := s.siblings(C.GoStringN(name, C.int(n)))
	if err != nil {
		s.state.set(err)
		if errors.Is(err, ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			return C.tblob_status(ErrNotFound)
		}
		return C.tblob_status(readStatus(err))
	}
	if r == nil {
		return C.tblob_status(ErrNotFound)
	}
	csize := C.uint64_t(C.TBLOB_SOURCE_SIZE_UNKNOWN)
	if size >= 0 {
		csize = C.uint64_t(size)
	}
	C.tg_source_fill(out, C.uintptr_t(cgo.NewHandle(&readerSource{r: r, siblings: s.siblings, state: s.state})), csize, 1)
	return 0
}

//export tgoSourceClose
func tgoSourceClose(h C.uintptr_t) { cgo.Handle(h).Delete() }

// ReadAt copies the tensor's stored bytes from offset off into p, as io.ReaderAt: fewer than
// len(p) bytes only at the end of the tensor's data, with io.EOF. It works for every model
// (mapped, read mode, OpenReaderAt); for a reader-opened model it reads through the reader.
func (t Tensor) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, &Error{Status: ErrRange, Message: "negative offset", Offset: -1, Tensor: int64(t.i)}
	}
	length := t.info().DataLength
	if uint64(off) >= length {
		if len(p) == 0 && uint64(off) == length {
			return 0, nil
		}
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	n := len(p)
	if uint64(n) > length-uint64(off) {
		n = int(length - uint64(off))
	}
	c, err := t.m.acquire()
	if err != nil {
		return 0, err
	}
	defer t.m.mu.RUnlock()
	var d C.tblob_diag
	initDiag(&d)
	if st := C.tblob_tensor_read(c, C.uint64_t(t.i), C.uint64_t(off), unsafe.Pointer(&p[0]), C.size_t(n), &d); st != 0 {
		return 0, t.m.src.wrap(newError(st, &d))
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
