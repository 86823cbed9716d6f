//go:build cgo

package tensorblob

/*
#include <stdlib.h>
#include "tensorblob.h"
*/
import "C"

import (
	"fmt"
	"iter"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"
)

// Model is an open container: its tensor table, metadata and bytes. It is safe for
// concurrent use by several goroutines; Close waits for calls in progress.
type Model struct {
	mu      sync.RWMutex
	c       *C.tblob_model
	buf     unsafe.Pointer // OpenBytes' copy of the caller's bytes, in C memory
	table   []TensorInfo
	format  Format
	cleanup runtime.Cleanup
	src     *sourceState // OpenReaderAt's reader errors; nil for other models
}

type modelHandles struct {
	c   *C.tblob_model
	buf unsafe.Pointer
}

func closeHandles(h modelHandles) {
	C.tblob_model_close(h.c)
	C.free(h.buf)
}

// newError builds the *Error for a failed call from its status and diagnostics (d may be nil).
func newError(st C.tblob_status, d *C.tblob_diag) error {
	if st == 0 {
		return nil
	}
	e := &Error{Status: Status(st), Offset: -1, Tensor: -1}
	if d != nil {
		e.Message = C.GoString(&d.message[0])
		if uint64(d.offset) != ^uint64(0) && uint64(d.offset) <= 1<<63-1 {
			e.Offset = int64(d.offset)
		}
		e.Tensor = int64(d.tensor_index)
	}
	return e
}

// fillOpenOptions turns Options into the C struct (which holds no Go pointers).
func fillOpenOptions(cfg *openConfig, o *C.tblob_open_options) {
	initOpenOptions(o, cfg.compact)
	if cfg.read {
		o.mode = C.TBLOB_OPEN_READ
	}
	l := cfg.limits
	if l.MaxHeaderBytes != 0 {
		o.max_header_bytes = C.uint64_t(l.MaxHeaderBytes)
	}
	if l.MaxTensors != 0 {
		o.max_tensors = C.uint64_t(l.MaxTensors)
	}
	if l.MaxNameBytes != 0 {
		o.max_name_bytes = C.uint64_t(l.MaxNameBytes)
	}
	if l.MaxRank != 0 {
		o.max_rank = C.uint32_t(l.MaxRank)
	}
	if l.MaxJSONDepth != 0 {
		o.max_json_depth = C.uint32_t(l.MaxJSONDepth)
	}
	if l.MaxFiles != 0 {
		o.max_files = C.uint32_t(l.MaxFiles)
	}
	if cfg.slm1NoChecksum {
		o.flags |= C.TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM
	}
	o.allocator = allocator()
}

func configure(opts []Option) *openConfig {
	cfg := &openConfig{}
	for _, o := range opts {
		o(cfg)
	}
	return cfg
}

// cStrings copies names into one C array of pointers plus one of lengths; free releases both
// and the names.
func cStrings(names []string) (ptrs **C.char, lens *C.size_t, free func()) {
	if len(names) == 0 {
		return nil, nil, func() {}
	}
	n := C.size_t(len(names))
	pa := unsafe.Slice((**C.char)(C.calloc(n, C.size_t(unsafe.Sizeof((*C.char)(nil))))), len(names))
	la := unsafe.Slice((*C.size_t)(C.calloc(n, C.size_t(unsafe.Sizeof(C.size_t(0))))), len(names))
	for i, s := range names {
		pa[i] = (*C.char)(C.CBytes([]byte(s + "\x00")))
		la[i] = C.size_t(len(s))
	}
	return &pa[0], &la[0], func() {
		for _, p := range pa {
			C.free(unsafe.Pointer(p))
		}
		C.free(unsafe.Pointer(&pa[0]))
		C.free(unsafe.Pointer(&la[0]))
	}
}

// Open opens the container at path, detected by content: a safetensors file, a sharded
// checkpoint (its directory or index), an Ollama store model (a manifest, or "<root>/<name>"),
// a UQFF directory or shard, an SLM1 file.
func Open(path string, opts ...Option) (*Model, error) {
	cfg := configure(opts)
	var o C.tblob_open_options
	fillOpenOptions(cfg, &o)
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var out *C.tblob_model
	var d C.tblob_diag
	initDiag(&d)
	var st C.tblob_status
	if len(cfg.slm1Names) > 0 {
		so, free := slm1Options(cfg)
		defer free()
		st = C.tblob_slm1_open_path(cpath, &o, so, &out, &d)
	} else {
		st = C.tblob_model_open(cpath, &o, &out, &d)
	}
	if st != 0 {
		return nil, withFileCause(newError(st, &d), path)
	}
	return newModel(out, nil)
}

// OpenBytes opens a container held in memory. The bytes are copied into memory the Model
// owns, so data may be reused once OpenBytes returns.
func OpenBytes(data []byte, opts ...Option) (*Model, error) {
	cfg := configure(opts)
	var o C.tblob_open_options
	fillOpenOptions(cfg, &o)
	var buf unsafe.Pointer
	if len(data) > 0 {
		buf = C.CBytes(data)
	} else {
		buf = C.malloc(1) // a valid pointer for an empty buffer
	}
	var out *C.tblob_model
	var d C.tblob_diag
	initDiag(&d)
	var st C.tblob_status
	if len(cfg.slm1Names) > 0 {
		so, free := slm1Options(cfg)
		defer free()
		st = C.tblob_slm1_open_memory(buf, C.size_t(len(data)), &o, so, &out, &d)
	} else {
		st = C.tblob_model_open_memory(buf, C.size_t(len(data)), &o, &out, &d)
	}
	if st != 0 {
		C.free(buf)
		return nil, newError(st, &d)
	}
	return newModel(out, buf)
}

// OpenUQFF opens the UQFF shard files given, in this order, as one set.
func OpenUQFF(paths []string, opts ...Option) (*Model, error) {
	cfg := configure(opts)
	o := (*C.tblob_open_options)(C.calloc(1, C.sizeof_tblob_open_options))
	defer C.free(unsafe.Pointer(o))
	fillOpenOptions(cfg, o)
	ptrs, _, free := cStrings(paths)
	defer free()
	var out *C.tblob_model
	var d C.tblob_diag
	initDiag(&d)
	if st := C.tblob_uqff_open(ptrs, C.size_t(len(paths)), o, &out, &d); st != 0 {
		return nil, withFileCause(newError(st, &d), paths...)
	}
	return newModel(out, nil)
}

func slm1Options(cfg *openConfig) (*C.tblob_slm1_open_options, func()) {
	so := (*C.tblob_slm1_open_options)(C.calloc(1, C.sizeof_tblob_slm1_open_options))
	initSLM1OpenOptions(so)
	ptrs, lens, free := cStrings(cfg.slm1Names)
	so.required_names = ptrs
	so.required_name_lens = lens
	so.required_name_count = C.size_t(len(cfg.slm1Names))
	return so, func() {
		free()
		C.free(unsafe.Pointer(so))
	}
}

func newModel(c *C.tblob_model, buf unsafe.Pointer) (*Model, error) {
	table, err := loadTable(c)
	if err != nil {
		closeHandles(modelHandles{c, buf})
		return nil, err
	}
	m := &Model{c: c, buf: buf, table: table, format: Format(C.tblob_model_format(c))}
	m.cleanup = runtime.AddCleanup(m, closeHandles, modelHandles{c, buf})
	return m, nil
}

// appendTable converts a chunk of C descriptors, with one allocation for all their names and
// one for all their shapes (a table can hold hundreds of thousands of rows).
func appendTable(table []TensorInfo, infos []C.tblob_tensor_info) []TensorInfo {
	nameBytes, dimCount := 0, 0
	for i := range infos {
		nameBytes += int(infos[i].name_len)
		dimCount += int(infos[i].rank)
		if !sameDims(&infos[i]) {
			dimCount += int(infos[i].logical_rank)
		}
	}
	var names strings.Builder
	names.Grow(nameBytes)
	for i := range infos {
		if infos[i].name_len > 0 {
			names.Write(unsafe.Slice((*byte)(unsafe.Pointer(infos[i].name)), int(infos[i].name_len)))
		}
	}
	all := names.String()
	shapes := make([]uint64, 0, dimCount)
	take := func(p *C.uint64_t, rank C.uint32_t) []uint64 {
		start := len(shapes)
		if rank > 0 && p != nil {
			shapes = append(shapes, unsafe.Slice((*uint64)(unsafe.Pointer(p)), int(rank))...)
		}
		return shapes[start:len(shapes):len(shapes)]
	}
	off := 0
	for i := range infos {
		info := &infos[i]
		n := int(info.name_len)
		t := TensorInfo{
			Name:            all[off : off+n],
			DType:           DType(info.dtype),
			Shape:           take(info.shape, info.rank),
			FileIndex:       uint32(info.file_index),
			DataOffset:      uint64(info.data_offset),
			DataLength:      uint64(info.data_length),
			FileOffset:      uint64(info.file_offset),
			Elements:        uint64(info.element_count),
			LogicalElements: uint64(info.logical_elements),
			QuantScheme:     uint32(info.quant_scheme),
			Quantized:       info.quant_flags&C.TBLOB_TENSOR_QUANTIZED != 0,
			Companion:       info.quant_flags&C.TBLOB_TENSOR_COMPANION != 0,
		}
		off += n
		if sameDims(info) {
			t.LogicalShape = t.Shape
		} else {
			t.LogicalShape = take(info.logical_shape, info.logical_rank)
		}
		table = append(table, t)
	}
	return table
}

func sameDims(info *C.tblob_tensor_info) bool {
	return info.logical_shape == info.shape && info.logical_rank == info.rank
}

// acquire returns the handle with the read lock held; release with m.mu.RUnlock.
func (m *Model) acquire() (*C.tblob_model, error) {
	m.mu.RLock()
	if m.c == nil {
		m.mu.RUnlock()
		return nil, ErrClosed
	}
	return m.c, nil
}

// Close releases the model. Byte slices from Tensor.Bytes are invalid afterwards. Calling
// Close again does nothing.
func (m *Model) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.c == nil {
		return nil
	}
	m.cleanup.Stop()
	closeHandles(modelHandles{m.c, m.buf})
	m.c, m.buf = nil, nil
	return nil
}

// Format is the container the model was opened from.
func (m *Model) Format() Format { return m.format }

// Len is the number of tensors.
func (m *Model) Len() int { return len(m.table) }

// At returns tensor i (0 <= i < Len(), in the order of the files' data offsets); it panics
// when i is out of range, like a slice index.
func (m *Model) At(i int) Tensor {
	_ = m.table[i]
	return Tensor{m: m, i: i}
}

// Tensors iterates over the tensors in table order.
func (m *Model) Tensors() iter.Seq[Tensor] {
	return func(yield func(Tensor) bool) {
		for i := range m.table {
			if !yield(Tensor{m: m, i: i}) {
				return
			}
		}
	}
}

// Lookup finds a tensor by its exact (decoded) name.
func (m *Model) Lookup(name string) (Tensor, bool) {
	c, err := m.acquire()
	if err != nil {
		return Tensor{}, false
	}
	defer m.mu.RUnlock()
	var idx C.uint64_t
	var st C.tblob_status
	if len(name) == 0 {
		st = C.tblob_tensor_find(c, nil, 0, &idx, nil)
	} else {
		st = C.tblob_tensor_find(c, (*C.char)(unsafe.Pointer(unsafe.StringData(name))), C.size_t(len(name)), &idx, nil)
	}
	if st != 0 || uint64(idx) >= uint64(len(m.table)) {
		return Tensor{}, false
	}
	return Tensor{m: m, i: int(idx)}, true
}

// Files returns the paths of the files behind the model ("" for a memory buffer).
func (m *Model) Files() ([]string, error) {
	c, err := m.acquire()
	if err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	n := uint32(C.tblob_model_file_count(c))
	out := make([]string, 0, n)
	for i := uint32(0); i < n; i++ {
		p, err := filePath(c, i)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// Metadata returns the string pairs of the __metadata__ tables (for a key present in
// several shards or blobs, the first occurrence).
func (m *Model) Metadata() (map[string]string, error) {
	c, err := m.acquire()
	if err != nil {
		return nil, err
	}
	defer m.mu.RUnlock()
	n := uint64(C.tblob_metadata_count(c))
	out := make(map[string]string, n)
	for i := uint64(0); i < n; i++ {
		k, v, err := metadataAt(c, i)
		if err != nil {
			return nil, err
		}
		if _, seen := out[k]; !seen {
			out[k] = v
		}
	}
	return out, nil
}

// SLM1Header returns the hyperparameters of an SLM1 model (ErrInvalidArgument otherwise).
func (m *Model) SLM1Header() (SLM1Header, error) {
	c, err := m.acquire()
	if err != nil {
		return SLM1Header{}, err
	}
	defer m.mu.RUnlock()
	var h C.tblob_slm1_header_info
	initSLM1HeaderInfo(&h)
	var d C.tblob_diag
	initDiag(&d)
	if st := C.tblob_slm1_header(c, &h, &d); st != 0 {
		return SLM1Header{}, newError(st, &d)
	}
	return SLM1Header{
		Version: uint32(h.version), ModelType: uint32(h.model_type), Flags: uint32(h.flags),
		VocabSize: uint32(h.vocab_size), HiddenSize: uint32(h.hidden_size),
		LayerCount: uint32(h.layer_count), HeadCount: uint32(h.head_count),
		KVHeadCount: uint32(h.kv_head_count), HeadDim: uint32(h.head_dim),
		FFNSize: uint32(h.ffn_size), MaxContext: uint32(h.max_context),
		RopeTheta: float32(h.rope_theta), RMSNormEpsilon: float32(h.rms_norm_epsilon),
		TensorCount: uint32(h.tensor_count), Checksum: uint64(h.checksum),
		ChecksumVerified: h.checksum_verified != 0,
	}, nil
}

// Tensor is one row of a model's table. Its descriptive methods read a copy made at open and
// keep working after Close; Bytes and the Dequantize methods need the model open. The zero
// Tensor (what a failed Lookup returns) must not be used.
type Tensor struct {
	m *Model
	i int
}

func (t Tensor) info() *TensorInfo { return &t.m.table[t.i] }

// Index is the tensor's position in the model's table.
func (t Tensor) Index() int { return t.i }

// Name is the decoded UTF-8 name.
func (t Tensor) Name() string { return t.info().Name }

// DType is the element type of the stored bytes.
func (t Tensor) DType() DType { return t.info().DType }

// Shape is the stored shape, outermost first (a fresh slice).
func (t Tensor) Shape() []uint64 { return slices.Clone(t.info().Shape) }

// Info returns all the table fields (slices are fresh copies).
func (t Tensor) Info() TensorInfo {
	i := *t.info()
	i.Shape = slices.Clone(i.Shape)
	i.LogicalShape = slices.Clone(i.LogicalShape)
	return i
}

// Bytes returns the stored bytes without copying: the slice aliases the model's mapping (or
// the memory it owns), must not be written, and is valid only until the Model is closed;
// after Close it returns nil, and for a model opened with OpenReaderAt (nothing is mapped:
// use ReadAt) always nil. The slice does not keep the Model alive: a Model that becomes
// unreachable is closed by its cleanup, so code that uses the bytes after its last use of
// the Model should Close it afterwards (defer m.Close()) or call runtime.KeepAlive(m).
func (t Tensor) Bytes() []byte {
	c, err := t.m.acquire()
	if err != nil {
		return nil
	}
	defer t.m.mu.RUnlock()
	p, n, err := tensorData(c, uint64(t.i))
	if err != nil || p == nil {
		return nil
	}
	return unsafe.Slice((*byte)(p), int(n))
}

// Dequantize decodes the whole tensor (its logical shape, LogicalElements values) into dst
// as float32. A quantized weight decodes with its companions; plain F8, F4, F16, BF16 and F32
// tensors convert. dst shorter than the tensor is ErrBufferTooSmall (nothing written).
func (t Tensor) Dequantize(dst []float32) error {
	var p unsafe.Pointer
	if len(dst) > 0 {
		p = unsafe.Pointer(&dst[0])
	}
	return t.dequantize(F32, p, uintptr(len(dst))*4, 0, allRows)
}

// DequantizeRows decodes rows [rowBegin, rowEnd) of the logical tensor, every axis but the
// last folded into rows (an embedding row, a slice of a weight): (rowEnd-rowBegin) times the
// last dimension float32 values. Rows outside the tensor are ErrRange.
func (t Tensor) DequantizeRows(dst []float32, rowBegin, rowEnd uint64) error {
	var p unsafe.Pointer
	if len(dst) > 0 {
		p = unsafe.Pointer(&dst[0])
	}
	return t.dequantize(F32, p, uintptr(len(dst))*4, rowBegin, rowEnd)
}

// DequantizedLen is the number of values DequantizeRows writes for rows [rowBegin, rowEnd)
// (rowEnd ^uint64(0): through the last row), checked as DequantizeRows checks them, so a
// caller can allocate exactly.
func (t Tensor) DequantizedLen(rowBegin, rowEnd uint64) (int, error) {
	c, err := t.m.acquire()
	if err != nil {
		return 0, err
	}
	defer t.m.mu.RUnlock()
	var n C.uint64_t
	var d C.tblob_diag
	initDiag(&d)
	st := C.tblob_tensor_dequant_size(c, C.uint64_t(t.i), C.uint32_t(F32), C.uint64_t(rowBegin),
		C.uint64_t(rowEnd), &n, &d)
	if st != 0 {
		return 0, newError(st, &d)
	}
	return int(n / 4), nil
}

// DequantizeF16 is Dequantize to IEEE half precision bits (round to nearest even).
func (t Tensor) DequantizeF16(dst []uint16) error {
	var p unsafe.Pointer
	if len(dst) > 0 {
		p = unsafe.Pointer(&dst[0])
	}
	return t.dequantize(F16, p, uintptr(len(dst))*2, 0, allRows)
}

// DequantizeBF16 is Dequantize to bfloat16 bits (round to nearest even).
func (t Tensor) DequantizeBF16(dst []uint16) error {
	var p unsafe.Pointer
	if len(dst) > 0 {
		p = unsafe.Pointer(&dst[0])
	}
	return t.dequantize(BF16, p, uintptr(len(dst))*2, 0, allRows)
}

// allRows is TBLOB_ALL_ROWS: through the last row.
const allRows = ^uint64(0)

func (t Tensor) dequantize(out DType, dst unsafe.Pointer, n uintptr, rowBegin, rowEnd uint64) error {
	return t.dequantizeWith(out, dst, n, rowBegin, rowEnd, DequantOptions{Threads: 1})
}

// DequantizeWith is Dequantize on several threads (o.Threads; 0: one per core). The values
// are those of Dequantize whatever the thread count.
func (t Tensor) DequantizeWith(dst []float32, o DequantOptions) error {
	var p unsafe.Pointer
	if len(dst) > 0 {
		p = unsafe.Pointer(&dst[0])
	}
	return t.dequantizeWith(F32, p, uintptr(len(dst))*4, 0, allRows, o)
}

// DequantizeF16With is DequantizeF16 on several threads, as DequantizeWith.
func (t Tensor) DequantizeF16With(dst []uint16, o DequantOptions) error {
	var p unsafe.Pointer
	if len(dst) > 0 {
		p = unsafe.Pointer(&dst[0])
	}
	return t.dequantizeWith(F16, p, uintptr(len(dst))*2, 0, allRows, o)
}

// DequantizeBF16With is DequantizeBF16 on several threads, as DequantizeWith.
func (t Tensor) DequantizeBF16With(dst []uint16, o DequantOptions) error {
	var p unsafe.Pointer
	if len(dst) > 0 {
		p = unsafe.Pointer(&dst[0])
	}
	return t.dequantizeWith(BF16, p, uintptr(len(dst))*2, 0, allRows, o)
}

func (t Tensor) dequantizeWith(out DType, dst unsafe.Pointer, n uintptr, rowBegin, rowEnd uint64, o DequantOptions) error {
	if o.Threads < 0 || uint64(o.Threads) > math.MaxUint32 {
		return &Error{Status: ErrInvalidArgument, Message: fmt.Sprintf("DequantOptions.Threads %d out of range", o.Threads),
			Offset: -1, Tensor: int64(t.i)}
	}
	c, err := t.m.acquire()
	if err != nil {
		return err
	}
	defer t.m.mu.RUnlock()
	var opts C.tblob_dequant_options
	initDequantOptions(&opts)
	opts.threads = C.uint32_t(o.Threads)
	opts.piece_bytes = C.uint64_t(o.PieceBytes)
	opts.stores = C.uint32_t(o.Stores)
	var d C.tblob_diag
	initDiag(&d)
	st := C.tblob_tensor_dequantize_opts(c, C.uint64_t(t.i), C.uint32_t(out), C.uint64_t(rowBegin), C.uint64_t(rowEnd), dst,
		C.size_t(n), &opts, &d)
	return t.m.src.wrap(newError(st, &d))
}

// UQFFLayer describes the row of a UQFF model; false for other models.
func (t Tensor) UQFFLayer() (UQFFLayer, bool) {
	if t.m.format != FormatUQFF {
		return UQFFLayer{}, false
	}
	c, err := t.m.acquire()
	if err != nil {
		return UQFFLayer{}, false
	}
	defer t.m.mu.RUnlock()
	var li C.tblob_uqff_layer_info
	initUQFFLayerInfo(&li)
	if C.tblob_uqff_layer_info_at(c, C.uint64_t(t.i), &li, nil) != 0 {
		return UQFFLayer{}, false
	}
	return UQFFLayer{
		Family: uint32(li.family), Label: C.GoString(li.label), GGMLType: uint32(li.ggml_type),
		Bits: uint32(li.bits), GroupSize: uint32(li.group_size),
		WeightDType: DType(li.weight_dtype), ScaleDType: DType(li.scale_dtype),
		Shard: uint32(li.shard), Experts: uint64(li.experts), Rows: uint64(li.rows),
		Cols: uint64(li.cols), StoredBytes: uint64(li.stored_bytes),
	}, true
}

// Version returns the version string of the linked C library.
func Version() string { return C.GoString(C.tblob_version_string()) }

// Family asks the library which family the status belongs to; FamilyUnknown for a number it
// does not define.
func (s Status) Family() Family { return Family(C.tblob_status_family(C.tblob_status(s))) }

// String is the library's name of the family: "io", "format", "limit", ...
func (f Family) String() string {
	if n := C.tblob_family_name(C.uint32_t(f)); n != nil {
		return C.GoString(n)
	}
	return "Family(" + strconv.FormatUint(uint64(f), 10) + ")"
}

// Features lists what the linked library was built with: "format:safetensors", "format:gguf",
// ..., "kernel:avx2", "kernel:scalar" (tblob_features).
func Features() []string {
	var n C.size_t
	list := unsafe.Slice(C.tblob_features(&n), int(n))
	out := make([]string, len(list))
	for i, p := range list {
		out[i] = C.GoString(p)
	}
	return out
}
