//! Models: any container the library opens, as one table of tensors.
use std::ffi::{c_void, CString};
use std::marker::PhantomData;
use std::ops::Range;
use std::path::Path;
use std::ptr::{self, NonNull};

use tensorblob_sys as sys;

use crate::dtype::{DType, Element};
use crate::error::{check, init, Error, Result, Status};
use crate::source::{with_reader_error, ReaderError};

/// Converts a path to the NUL-terminated bytes the C API takes.
pub(crate) fn c_path(path: &Path) -> Result<CString> {
    #[cfg(unix)]
    let bytes = {
        use std::os::unix::ffi::OsStrExt;
        path.as_os_str().as_bytes().to_vec()
    };
    #[cfg(not(unix))]
    let bytes = path
        .to_str()
        .ok_or_else(|| Error::new(Status::InvalidArgument, "path is not valid Unicode"))?
        .as_bytes()
        .to_vec();
    CString::new(bytes).map_err(|_| Error::new(Status::InvalidArgument, "path contains a NUL byte"))
}

/// How a file is brought into memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OpenMode {
    /// Map the file: tensor data is zero-copy, but a file truncated by another process while
    /// open can fault on access.
    #[default]
    Map,
    /// Read the file into memory the model owns; immune to that.
    Read,
}

/// Open options and limits (`tblob_open_options`). The defaults accept everything the
/// safetensors reference implementation accepts; [`OpenOptions::compact`] is the preset for
/// apps that open files they did not produce.
#[derive(Debug, Clone, Copy)]
pub struct OpenOptions {
    raw: sys::tblob_open_options,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions::new()
    }
}

impl OpenOptions {
    /// The defaults (`tblob_open_options_init`).
    pub fn new() -> OpenOptions {
        OpenOptions { raw: init(sys::tblob_open_options_init) }
    }

    /// The mobile preset (`tblob_open_options_init_compact`): 16 MiB header, 65,536 tensors,
    /// 1 KiB names, rank 8, JSON depth 32, 256 files.
    pub fn compact() -> OpenOptions {
        OpenOptions { raw: init(sys::tblob_open_options_init_compact) }
    }

    /// Map (default) or read the file.
    pub fn mode(mut self, mode: OpenMode) -> Self {
        self.raw.mode = match mode {
            OpenMode::Map => sys::TBLOB_OPEN_MAP,
            OpenMode::Read => sys::TBLOB_OPEN_READ,
        } as u32;
        self
    }
    /// Most JSON header bytes (`TBLOB_E_LIMIT_HEADER_BYTES` above).
    pub fn max_header_bytes(mut self, n: u64) -> Self {
        self.raw.max_header_bytes = n;
        self
    }
    /// Most tensors per model (`TBLOB_E_LIMIT_TENSORS`).
    pub fn max_tensors(mut self, n: u64) -> Self {
        self.raw.max_tensors = n;
        self
    }
    /// Most bytes of one name or metadata key (`TBLOB_E_LIMIT_NAME_BYTES`).
    pub fn max_name_bytes(mut self, n: u64) -> Self {
        self.raw.max_name_bytes = n;
        self
    }
    /// Most dimensions per tensor (`TBLOB_E_LIMIT_RANK`).
    pub fn max_rank(mut self, n: u32) -> Self {
        self.raw.max_rank = n;
        self
    }
    /// Deepest JSON nesting, counted as serde_json counts it (`TBLOB_E_LIMIT_JSON_DEPTH`).
    pub fn max_json_depth(mut self, n: u32) -> Self {
        self.raw.max_json_depth = n;
        self
    }
    /// Most shards per model (`TBLOB_E_LIMIT_FILES`).
    pub fn max_files(mut self, n: u32) -> Self {
        self.raw.max_files = n;
        self
    }
    /// `TBLOB_OPEN_FLAG_*` bits (for example the SLM1 checksum switch).
    pub fn flags(mut self, flags: u32) -> Self {
        self.raw.flags = flags;
        self
    }

    pub(crate) fn as_raw(&self) -> &sys::tblob_open_options {
        &self.raw
    }
}

/// The container a model was opened from.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// One safetensors file or buffer.
    Safetensors,
    /// `model.safetensors.index.json` and its shards.
    SafetensorsSharded,
    /// A model of an Ollama store.
    Ollama,
    /// A mistral.rs UQFF shard set.
    Uqff,
    /// An SLM1 (`.slm`) container.
    Slm1,
    /// A GGUF v2/v3 file or buffer.
    Gguf,
    /// A format number newer than this crate.
    Other(u32),
}

impl Format {
    fn from_raw(v: u32) -> Format {
        match v {
            x if x == sys::TBLOB_FORMAT_SAFETENSORS as u32 => Format::Safetensors,
            x if x == sys::TBLOB_FORMAT_SAFETENSORS_SHARDED as u32 => Format::SafetensorsSharded,
            x if x == sys::TBLOB_FORMAT_OLLAMA as u32 => Format::Ollama,
            x if x == sys::TBLOB_FORMAT_UQFF as u32 => Format::Uqff,
            x if x == sys::TBLOB_FORMAT_SLM1 as u32 => Format::Slm1,
            x if x == sys::TBLOB_FORMAT_GGUF as u32 => Format::Gguf,
            x => Format::Other(x),
        }
    }
}

/// An open model: a table of tensors with their names, types, shapes and bytes, and the
/// metadata string pairs.
///
/// `'a` is the lifetime of a borrowed buffer ([`Model::from_bytes`]) or store
/// ([`crate::Store::open_model`]); models opened from a path are `Model<'static>`. Tensor
/// bytes borrow the model, so the borrow checker keeps every view inside the mapping's
/// lifetime. A model is immutable: it can be shared by threads (`Sync`) and moved (`Send`).
pub struct Model<'a> {
    raw: NonNull<sys::tblob_model>,
    infos: Vec<sys::tblob_tensor_info>,
    data: Vec<(*const u8, usize)>,
    metadata: Vec<(*const u8, usize, *const u8, usize)>,
    reader_error: Option<ReaderError>, // Model::open_reader's: the reader's latest error
    _borrow: PhantomData<&'a [u8]>,
}

// SAFETY: the C API documents a model handle as immutable after open, with every query
// thread-safe on a shared handle (include/tensorblob.h, docs/api.md). The cached pointers
// point into memory the handle owns (or the borrowed buffer), which nothing mutates.
unsafe impl Send for Model<'_> {}
// SAFETY: as above; all methods take &self and only read.
unsafe impl Sync for Model<'_> {}

impl Drop for Model<'_> {
    fn drop(&mut self) {
        // SAFETY: raw came from a successful open and is closed exactly once, here; no
        // borrow of the model (and so no view into it) outlives this.
        unsafe { sys::tblob_model_close(self.raw.as_ptr()) }
    }
}

impl std::fmt::Debug for Model<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("format", &self.format())
            .field("tensors", &self.len())
            .finish()
    }
}

/// `len` bytes at `p` as a slice; empty for a null pointer.
///
/// # Safety
/// When non-null, `p` must point to `len` readable bytes that stay valid and unmodified for
/// `'x`.
unsafe fn bytes<'x>(p: *const u8, len: usize) -> &'x [u8] {
    if p.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: guaranteed by the caller.
        unsafe { std::slice::from_raw_parts(p, len) }
    }
}

fn not_utf8(what: &str) -> Error {
    Error::new(Status::Utf8, format!("{what} is not valid UTF-8"))
}

impl<'a> Model<'a> {
    /// Takes ownership of an opened handle and caches its table.
    pub(crate) fn from_raw(raw: *mut sys::tblob_model) -> Result<Model<'a>> {
        let raw = NonNull::new(raw)
            .ok_or_else(|| Error::new(Status::InvalidArgument, "open returned no model"))?;
        let mut m = Model {
            raw,
            infos: Vec::new(),
            data: Vec::new(),
            metadata: Vec::new(),
            reader_error: None,
            _borrow: PhantomData,
        };
        // SAFETY: raw is a live model handle (closed by Drop on every early return below).
        let count = unsafe { sys::tblob_model_tensor_count(m.raw()) };
        let count = usize::try_from(count)
            .map_err(|_| Error::new(Status::OutOfMemory, "tensor table larger than memory"))?;
        // The whole table in one foreign call; the library sets each struct_size.
        m.infos = vec![sys::tblob_tensor_info::default(); count];
        let size = std::mem::size_of::<sys::tblob_tensor_info>();
        // SAFETY: infos holds count writable elements of `size` bytes each.
        check(|d| unsafe { sys::tblob_tensors_at(raw.as_ptr(), 0, count as u64, m.infos.as_mut_ptr(), size, d) })?;
        m.data.reserve(count);
        for i in 0..count {
            let mut p: *const c_void = ptr::null();
            let mut len: u64 = 0;
            // SAFETY: i < tensor count; p and len are writable out-parameters.
            match check(|d| unsafe { sys::tblob_tensor_data(raw.as_ptr(), i as u64, &mut p, &mut len, d) }) {
                Ok(()) => {}
                // A model read through a byte source maps nothing: no views, read_into reads.
                Err(e) if e.status() == Status::NotMapped => (p, len) = (ptr::null(), 0),
                Err(e) => return Err(e),
            }
            // A view the process could not map could not have been handed out.
            let len = usize::try_from(len)
                .map_err(|_| Error::new(Status::OutOfMemory, "tensor larger than the address space"))?;
            m.data.push((p.cast(), len));
        }
        for info in &m.infos {
            // SAFETY: name/name_len are borrowed from the handle, valid until close.
            let name = unsafe { bytes(info.name.cast(), info.name_len) };
            std::str::from_utf8(name).map_err(|_| not_utf8("a tensor name"))?;
        }
        // SAFETY: live handle.
        let mcount = unsafe { sys::tblob_metadata_count(m.raw()) };
        for i in 0..mcount {
            let (mut k, mut kl, mut v, mut vl) = (ptr::null(), 0usize, ptr::null(), 0usize);
            // SAFETY: i < metadata count; all four are writable out-parameters.
            check(|d| unsafe { sys::tblob_metadata_at(m.raw(), i, &mut k, &mut kl, &mut v, &mut vl, d) })?;
            // SAFETY: key and value are borrowed from the handle, valid until close.
            let (kb, vb) = unsafe { (bytes(k.cast(), kl), bytes(v.cast(), vl)) };
            if std::str::from_utf8(kb).is_err() || std::str::from_utf8(vb).is_err() {
                return Err(not_utf8("a metadata entry"));
            }
            m.metadata.push((k.cast(), kl, v.cast(), vl));
        }
        Ok(m)
    }

    pub(crate) fn raw(&self) -> *const sys::tblob_model {
        self.raw.as_ptr()
    }

    pub(crate) fn set_reader_error(&mut self, e: ReaderError) {
        self.reader_error = Some(e);
    }

    /// A failed call's error, naming the reader's error for a model read through one.
    fn wrap(&self, err: Error) -> Error {
        match &self.reader_error {
            Some(e) => with_reader_error(err, e),
            None => err,
        }
    }

    /// Opens a safetensors buffer (or any container the library detects) that the model
    /// borrows: nothing is copied, and the model cannot outlive `bytes`.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Model<'a>> {
        Model::from_bytes_with(bytes, &OpenOptions::new())
    }

    /// [`Model::from_bytes`] with limits.
    pub fn from_bytes_with(bytes: &'a [u8], options: &OpenOptions) -> Result<Model<'a>> {
        let mut out = ptr::null_mut();
        // SAFETY: bytes is valid for its length and outlives the model ('a); options is a
        // fully initialised struct; out is a writable out-parameter.
        check(|d| unsafe {
            sys::tblob_model_open_memory(bytes.as_ptr().cast(), bytes.len(), options.as_raw(), &mut out, d)
        })?;
        Model::from_raw(out)
    }
}

impl Model<'static> {
    /// Opens whatever container is at `path`, detected by content: a safetensors file, a
    /// sharded checkpoint (its directory or index), an Ollama store model, a UQFF shard set
    /// or an SLM1 file.
    pub fn open(path: impl AsRef<Path>) -> Result<Model<'static>> {
        Model::open_with(path, &OpenOptions::new())
    }

    /// [`Model::open`] with a mode and limits.
    pub fn open_with(path: impl AsRef<Path>, options: &OpenOptions) -> Result<Model<'static>> {
        let p = c_path(path.as_ref())?;
        let mut out = ptr::null_mut();
        // SAFETY: p is NUL-terminated; options fully initialised; out writable.
        check(|d| unsafe { sys::tblob_model_open(p.as_ptr(), options.as_raw(), &mut out, d) })?;
        Model::from_raw(out)
    }

    /// Opens a UQFF shard set from one directory, one shard (its siblings are found) or the
    /// shard files given.
    pub fn open_uqff<P: AsRef<Path>>(paths: &[P], options: &OpenOptions) -> Result<Model<'static>> {
        let owned = paths.iter().map(|p| c_path(p.as_ref())).collect::<Result<Vec<_>>>()?;
        let ptrs: Vec<*const std::ffi::c_char> = owned.iter().map(|c| c.as_ptr()).collect();
        let mut out = ptr::null_mut();
        // SAFETY: ptrs holds ptrs.len() NUL-terminated strings alive for the call.
        check(|d| unsafe {
            sys::tblob_uqff_open(ptrs.as_ptr(), ptrs.len(), options.as_raw(), &mut out, d)
        })?;
        Model::from_raw(out)
    }

    /// Opens an SLM1 file, naming tensors by the names a runtime will look up (files store
    /// only their hashes; unlisted tensors are named `fnv1a:<hex>`).
    pub fn open_slm1(path: impl AsRef<Path>, names: &[&str], options: &OpenOptions) -> Result<Model<'static>> {
        let p = c_path(path.as_ref())?;
        let ptrs: Vec<*const std::ffi::c_char> = names.iter().map(|n| n.as_ptr().cast()).collect();
        let lens: Vec<usize> = names.iter().map(|n| n.len()).collect();
        let mut slm1: sys::tblob_slm1_open_options = init(sys::tblob_slm1_open_options_init);
        slm1.required_names = ptrs.as_ptr();
        slm1.required_name_lens = lens.as_ptr();
        slm1.required_name_count = names.len();
        let mut out = ptr::null_mut();
        // SAFETY: the name arrays hold names.len() (pointer, length) pairs alive for the call
        // (the library copies them); p is NUL-terminated.
        check(|d| unsafe { sys::tblob_slm1_open_path(p.as_ptr(), options.as_raw(), &slm1, &mut out, d) })?;
        Model::from_raw(out)
    }
}

impl<'a> Model<'a> {
    /// The container this model came from.
    pub fn format(&self) -> Format {
        // SAFETY: live handle.
        Format::from_raw(unsafe { sys::tblob_model_format(self.raw()) })
    }

    /// Number of tensors in the table.
    pub fn len(&self) -> usize {
        self.infos.len()
    }

    /// True when the model holds no tensor.
    pub fn is_empty(&self) -> bool {
        self.infos.is_empty()
    }

    /// The tensors in table order (data offsets, file by file).
    pub fn tensors(&self) -> Tensors<'_> {
        Tensors { model: self.shorten(), range: 0..self.infos.len() }
    }

    /// The tensor of that exact name, or `None`. See [`Model::find`] for why a lookup failed.
    pub fn get(&self, name: &str) -> Option<Tensor<'_>> {
        self.find(name).ok()
    }

    /// The tensor of that exact name; `Err` with [`Status::NotFound`] when absent, or
    /// [`Status::HashCollision`] for an SLM1 name that hashes like a different listed one.
    pub fn find(&self, name: &str) -> Result<Tensor<'_>> {
        let mut index = 0u64;
        // SAFETY: name is valid for name.len() bytes; index writable.
        check(|d| unsafe {
            sys::tblob_tensor_find(self.raw(), name.as_ptr().cast(), name.len(), &mut index, d)
        })?;
        self.tensor(index as usize)
            .ok_or_else(|| Error::new(Status::Range, "lookup returned an index outside the table"))
    }

    /// The tensor at `index` of the table.
    pub fn tensor(&self, index: usize) -> Option<Tensor<'_>> {
        (index < self.infos.len()).then(|| Tensor { model: self.shorten(), index })
    }

    /// The `__metadata__` string pairs (of every shard or blob), in header order.
    pub fn metadata(&self) -> Metadata<'_> {
        Metadata { model: self.shorten(), range: 0..self.metadata.len() }
    }

    /// The first metadata value stored under `key`.
    pub fn metadata_get(&self, key: &str) -> Option<&str> {
        self.metadata().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// Number of source files behind the model (1 for one file or buffer).
    pub fn file_count(&self) -> u32 {
        // SAFETY: live handle.
        unsafe { sys::tblob_model_file_count(self.raw()) }
    }

    /// The path of source file `index` as opened; `None` past the end. Empty for a buffer.
    pub fn file_path(&self, index: u32) -> Option<&Path> {
        let (mut p, mut len) = (ptr::null(), 0usize);
        // SAFETY: p and len are writable; the string is borrowed from the handle.
        let code = unsafe { sys::tblob_model_file_path(self.raw(), index, &mut p, &mut len, ptr::null_mut()) };
        if code != 0 {
            return None;
        }
        // SAFETY: borrowed from the handle, valid until close, which &self outlives.
        let b = unsafe { bytes(p.cast(), len) };
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            Some(Path::new(std::ffi::OsStr::from_bytes(b)))
        }
        #[cfg(not(unix))]
        {
            std::str::from_utf8(b).ok().map(Path::new)
        }
    }

    /// The same model seen through a shorter borrow (Model is covariant in 'a).
    fn shorten(&self) -> &Model<'_> {
        self
    }
}

/// Iterator over a model's tensors, see [`Model::tensors`].
#[derive(Clone)]
pub struct Tensors<'m> {
    model: &'m Model<'m>,
    range: Range<usize>,
}

impl<'m> Iterator for Tensors<'m> {
    type Item = TensorInfo<'m>;
    fn next(&mut self) -> Option<TensorInfo<'m>> {
        self.range.next().map(|index| TensorInfo { model: self.model, index })
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.range.size_hint()
    }
}
impl ExactSizeIterator for Tensors<'_> {}
impl DoubleEndedIterator for Tensors<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.range.next_back().map(|index| TensorInfo { model: self.model, index })
    }
}

/// Iterator over `(key, value)` metadata pairs, see [`Model::metadata`].
#[derive(Clone)]
pub struct Metadata<'m> {
    model: &'m Model<'m>,
    range: Range<usize>,
}

impl<'m> Iterator for Metadata<'m> {
    type Item = (&'m str, &'m str);
    fn next(&mut self) -> Option<Self::Item> {
        let i = self.range.next()?;
        let (k, kl, v, vl) = self.model.metadata[i];
        // SAFETY: borrowed from the handle (valid while 'm borrows the model) and checked to
        // be UTF-8 when the model was opened.
        unsafe {
            Some((
                std::str::from_utf8_unchecked(bytes(k, kl)),
                std::str::from_utf8_unchecked(bytes(v, vl)),
            ))
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.range.size_hint()
    }
}
impl ExactSizeIterator for Metadata<'_> {}

/// One row of a model's table: name, element type, shape and where the bytes are.
#[derive(Clone, Copy)]
pub struct TensorInfo<'m> {
    model: &'m Model<'m>,
    index: usize,
}

impl std::fmt::Debug for TensorInfo<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TensorInfo")
            .field("name", &self.name())
            .field("dtype", &self.dtype())
            .field("shape", &self.shape())
            .finish()
    }
}

impl<'m> TensorInfo<'m> {
    fn raw(&self) -> &'m sys::tblob_tensor_info {
        &self.model.infos[self.index]
    }

    /// Position in the model's table.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The decoded name.
    pub fn name(&self) -> &'m str {
        let r = self.raw();
        // SAFETY: the name is borrowed from the handle (valid while 'm borrows the model)
        // and was checked to be UTF-8 at open.
        unsafe { std::str::from_utf8_unchecked(bytes(r.name.cast(), r.name_len)) }
    }

    /// The element type of the stored bytes.
    pub fn dtype(&self) -> DType {
        DType::from_raw(self.raw().dtype)
    }

    /// The stored shape, outermost dimension first (UQFF layers: the logical shape).
    pub fn shape(&self) -> &'m [u64] {
        let r = self.raw();
        // SAFETY: rank u64s borrowed from the handle, valid while 'm borrows the model.
        unsafe { u64s(r.shape, r.rank as usize) }
    }

    /// The shape after dequantization; equals [`TensorInfo::shape`] unless quantized.
    pub fn logical_shape(&self) -> &'m [u64] {
        let r = self.raw();
        if r.logical_shape.is_null() {
            return self.shape();
        }
        // SAFETY: logical_rank u64s borrowed from the handle.
        unsafe { u64s(r.logical_shape, r.logical_rank as usize) }
    }

    /// A packed weight resolved with its scale/bias companions.
    pub fn is_quantized(&self) -> bool {
        self.raw().quant_flags & sys::TBLOB_TENSOR_QUANTIZED != 0
    }

    /// A scale, bias or global scale of a quantized tensor.
    pub fn is_companion(&self) -> bool {
        self.raw().quant_flags & sys::TBLOB_TENSOR_COMPANION != 0
    }

    /// Which source file holds the bytes.
    pub fn file_index(&self) -> u32 {
        self.raw().file_index
    }

    /// Offset of the bytes relative to that file's data region.
    pub fn data_offset(&self) -> u64 {
        self.raw().data_offset
    }

    /// Absolute byte offset of the bytes in that file.
    pub fn file_offset(&self) -> u64 {
        self.raw().file_offset
    }

    /// Number of stored bytes.
    pub fn data_len(&self) -> u64 {
        self.raw().data_length
    }

    /// The tensor itself (bytes and dequantization).
    pub fn tensor(&self) -> Tensor<'m> {
        Tensor { model: self.model, index: self.index }
    }
}

/// # Safety
/// When non-null, `p` points to `n` u64s valid for `'x`.
unsafe fn u64s<'x>(p: *const u64, n: usize) -> &'x [u64] {
    if p.is_null() || n == 0 {
        &[]
    } else {
        // SAFETY: guaranteed by the caller.
        unsafe { std::slice::from_raw_parts(p, n) }
    }
}

/// A tensor of a model: its bytes (zero copy) and its values (dequantized).
#[derive(Clone, Copy)]
pub struct Tensor<'m> {
    model: &'m Model<'m>,
    index: usize,
}

impl std::fmt::Debug for Tensor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.info().fmt(f)
    }
}

impl<'m> Tensor<'m> {
    /// Name, type, shape and location.
    pub fn info(&self) -> TensorInfo<'m> {
        TensorInfo { model: self.model, index: self.index }
    }
    /// See [`TensorInfo::name`].
    pub fn name(&self) -> &'m str {
        self.info().name()
    }
    /// See [`TensorInfo::dtype`].
    pub fn dtype(&self) -> DType {
        self.info().dtype()
    }
    /// See [`TensorInfo::shape`].
    pub fn shape(&self) -> &'m [u64] {
        self.info().shape()
    }

    /// The stored bytes, borrowed from the model's mapping or buffer (no copy). Empty for a
    /// model opened with [`Model::open_reader`], which maps nothing: use
    /// [`Tensor::read_into`].
    pub fn data(&self) -> &'m [u8] {
        let (p, len) = self.model.data[self.index];
        // SAFETY: tblob_tensor_data gave this view; it stays valid until the model is
        // closed, and 'm borrows the model.
        unsafe { bytes(p, len) }
    }

    /// Copies the stored bytes `[offset, offset + buf.len())` into `buf`
    /// (`tblob_tensor_read`): from the mapping, or through the reader of a model opened with
    /// [`Model::open_reader`]. [`Status::Range`] when the range passes the tensor's end
    /// (nothing copied).
    pub fn read_into(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        // SAFETY: valid index; buf is writable for its length.
        check(|d| unsafe {
            sys::tblob_tensor_read(self.model.raw(), self.index as u64, offset, buf.as_mut_ptr().cast(), buf.len(), d)
        })
        .map_err(|e| self.model.wrap(e))
    }

    /// The whole stored bytes as a new vector ([`Tensor::read_into`]).
    pub fn read_to_vec(&self) -> Result<Vec<u8>> {
        let len = usize::try_from(self.info().data_len())
            .map_err(|_| Error::new(Status::OutOfMemory, "tensor larger than the address space"))?;
        let mut v = vec![0u8; len];
        self.read_into(0, &mut v)?;
        Ok(v)
    }

    /// How the tensor dequantizes.
    pub fn quant_info(&self) -> Result<QuantInfo> {
        let mut qi: sys::tblob_quant_info = init(sys::tblob_quant_info_init);
        // SAFETY: valid index, qi writable with struct_size set.
        check(|d| unsafe { sys::tblob_tensor_quant_info(self.model.raw(), self.index as u64, &mut qi, d) })?;
        Ok(QuantInfo {
            scheme: scheme_name(qi.scheme),
            bits: qi.bits,
            group_size: qi.group_size,
            rows: qi.rows,
            cols: qi.cols,
            status: Status::from_code(qi.status as i32),
        })
    }

    /// Number of values the whole tensor dequantizes to.
    pub fn dequantized_len(&self) -> Result<usize> {
        self.dequantized_len_as::<f32>(0..u64::MAX)
    }

    /// Values of type `T` that rows `rows` dequantize to (`tblob_tensor_dequant_size`).
    fn dequantized_len_as<T: Element>(&self, rows: Range<u64>) -> Result<usize> {
        let mut bytes = 0u64;
        // SAFETY: valid index; bytes is a writable out-parameter.
        check(|d| unsafe {
            sys::tblob_tensor_dequant_size(self.model.raw(), self.index as u64, T::DTYPE, rows.start, rows.end, &mut bytes, d)
        })?;
        usize::try_from(bytes / std::mem::size_of::<T>() as u64)
            .map_err(|_| Error::new(Status::ShapeOverflow, "value count exceeds memory"))
    }

    /// Dequantizes the whole tensor into `out` (f32; f16/bf16 with the `half` feature),
    /// row-major. `out` must hold at least [`Tensor::dequantized_len`] values
    /// ([`Status::BufferTooSmall`] otherwise); values past that are left untouched.
    pub fn dequantize_into<T: Element>(&self, out: &mut [T]) -> Result<()> {
        self.dequantize_rows_into(0..u64::MAX, out)
    }

    /// Dequantizes logical rows `rows` (every axis but the last folded into rows); an end
    /// of `u64::MAX` means through the last row.
    pub fn dequantize_rows_into<T: Element>(&self, rows: Range<u64>, out: &mut [T]) -> Result<()> {
        self.dequantize_with(rows, out, &DequantOptions { threads: 1, ..DequantOptions::default() })
    }

    /// [`Tensor::dequantize_rows_into`] on several threads (`tblob_tensor_dequantize_opts`):
    /// the call starts and joins them, and the values are the same whatever their number.
    pub fn dequantize_with<T: Element>(&self, rows: Range<u64>, out: &mut [T], opts: &DequantOptions) -> Result<()> {
        let mut o: sys::tblob_dequant_options = init(sys::tblob_dequant_options_init);
        o.threads = opts.threads;
        o.piece_bytes = opts.piece_bytes;
        o.stores = match opts.stores {
            Stores::Auto => sys::TBLOB_STORES_AUTO,
            Stores::Stream => sys::TBLOB_STORES_STREAM,
            Stores::Cache => sys::TBLOB_STORES_CACHE,
        };
        // SAFETY: out is a writable buffer of size_of_val(out) bytes, and every bit pattern
        // the library writes is a valid T; o is initialised with its struct_size.
        check(|d| unsafe {
            sys::tblob_tensor_dequantize_opts(
                self.model.raw(),
                self.index as u64,
                T::DTYPE,
                rows.start,
                rows.end,
                out.as_mut_ptr().cast(),
                std::mem::size_of_val(out),
                &o,
                d,
            )
        })
        .map_err(|e| self.model.wrap(e))
    }

    /// The dequantized values as a new vector of f32.
    pub fn to_f32_vec(&self) -> Result<Vec<f32>> {
        self.dequantize_vec::<f32>()
    }

    /// The dequantized values as f16.
    #[cfg(feature = "half")]
    pub fn to_f16_vec(&self) -> Result<Vec<half::f16>> {
        self.dequantize_vec::<half::f16>()
    }

    /// The dequantized values as bf16.
    #[cfg(feature = "half")]
    pub fn to_bf16_vec(&self) -> Result<Vec<half::bf16>> {
        self.dequantize_vec::<half::bf16>()
    }

    fn dequantize_vec<T: Element>(&self) -> Result<Vec<T>> {
        let mut v = vec![T::ZERO; self.dequantized_len_as::<T>(0..u64::MAX)?];
        self.dequantize_into(&mut v)?;
        Ok(v)
    }
}

/// Options of [`Tensor::dequantize_with`]. The default decodes on one thread per online core.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DequantOptions {
    /// 0: one per online core; 1: the calling thread only; n: at most n.
    pub threads: u32,
    /// Output bytes a thread takes at a time; 0: the library's choice (1 to 8 MiB).
    pub piece_bytes: u64,
    /// How the output is written.
    pub stores: Stores,
}

/// How [`Tensor::dequantize_with`] writes its output (`tblob_dequant_options.stores`). The
/// values are the same under each choice; only where they end up in the cache differs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Stores {
    /// Non-temporal stores for pieces of 4 MiB or more, normal stores below.
    #[default]
    Auto,
    /// Non-temporal stores for every piece of 64 KiB or more: output not read back soon
    /// (a whole model decoded into memory).
    Stream,
    /// Normal stores: output read right away.
    Cache,
}

/// How a tensor dequantizes ([`Tensor::quant_info`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuantInfo {
    /// `"mlx-affine"`, `"mxfp4"`, `"BF16"`, ...; `"none"` when nothing dequantizes.
    pub scheme: &'static str,
    /// Element bits.
    pub bits: u32,
    /// Values per scale (0 when not grouped).
    pub group_size: u32,
    /// Logical rows (leading axes folded).
    pub rows: u64,
    /// Logical row length.
    pub cols: u64,
    /// `None` when dequantizing works, else the status it fails with.
    pub status: Option<Status>,
}

fn scheme_name(scheme: u32) -> &'static str {
    // SAFETY: tblob_quant_scheme_name returns a static string or NULL.
    unsafe { crate::error::static_str(sys::tblob_quant_scheme_name(scheme)) }
}

/// Dequantizes raw ggml blocks (no model): `out.len()` values of ggml type `ggml_type`
/// (2 = Q4_0 ... 14 = Q6_K, 1 = F16, 30 = BF16) from exactly the bytes they take.
pub fn ggml_dequantize<T: Element>(ggml_type: u32, blocks: &[u8], out: &mut [T]) -> Result<()> {
    // SAFETY: blocks readable for its length; out writable for size_of_val(out) bytes and
    // any bit pattern is a valid T.
    check(|d| unsafe {
        sys::tblob_ggml_dequantize(
            ggml_type,
            blocks.as_ptr().cast(),
            blocks.len(),
            out.len() as u64,
            T::DTYPE,
            out.as_mut_ptr().cast(),
            std::mem::size_of_val(out),
            d,
        )
    })
}

/// Every byte a model allocates through the allocator hook is freed when it closes, on
/// success and on error, for every container (the library reports sizes to `free`).
#[cfg(test)]
mod leak_tests {
    use super::*;
    use std::alloc::{alloc, dealloc, Layout};
    use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

    static LIVE_BYTES: AtomicI64 = AtomicI64::new(0);
    static ALLOCS: AtomicU64 = AtomicU64::new(0);
    static SIZE_MISMATCHES: AtomicU64 = AtomicU64::new(0);
    const HEADER: usize = 16; // keeps the 16-byte alignment the header promises

    fn layout(size: usize) -> Layout {
        Layout::from_size_align(size + HEADER, 16).unwrap()
    }

    unsafe extern "C" fn count_alloc(_: *mut c_void, size: usize) -> *mut c_void {
        // SAFETY: the layout is non-zero-sized; the size is stored in front of the block.
        unsafe {
            let p = alloc(layout(size));
            if p.is_null() {
                return ptr::null_mut();
            }
            p.cast::<usize>().write(size);
            LIVE_BYTES.fetch_add(size as i64, Ordering::SeqCst);
            ALLOCS.fetch_add(1, Ordering::SeqCst);
            p.add(HEADER).cast()
        }
    }

    unsafe extern "C" fn count_free(_: *mut c_void, p: *mut c_void, size: usize) {
        if p.is_null() {
            return;
        }
        // SAFETY: p came from count_alloc, so HEADER bytes before it hold the real size.
        unsafe {
            let base = p.cast::<u8>().sub(HEADER);
            let real = base.cast::<usize>().read();
            if real != size {
                SIZE_MISMATCHES.fetch_add(1, Ordering::SeqCst);
            }
            LIVE_BYTES.fetch_sub(real as i64, Ordering::SeqCst);
            dealloc(base, layout(real));
        }
    }

    #[test]
    fn models_free_everything_they_allocate() {
        let hook = sys::tblob_allocator {
            alloc: Some(count_alloc),
            free: Some(count_free),
            ..init(sys::tblob_allocator_init)
        };
        let mut o = OpenOptions::new();
        o.raw.allocator = &hook;
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
        let tiny = repo.join("examples/tiny-llama/model.safetensors");
        let bytes = std::fs::read(&tiny).unwrap();
        {
            let a = Model::open_with(&tiny, &o).unwrap();
            let b = Model::open_with(&tiny, &o.mode(OpenMode::Read)).unwrap();
            let c = Model::from_bytes_with(&bytes, &o).unwrap();
            let d = Model::open_with(repo.join("examples/sharded"), &o).unwrap();
            let e = Model::open_uqff(&[repo.join("tests/data/uqff/real/dense/q4k")], &o).unwrap();
            let f = Model::open_slm1(repo.join("tests/data/slm1/tiny_btok.slm"), &["norm.weight"], &o).unwrap();
            let mlx = Model::open_with(repo.join("tests/data/dequant/mlx/affine_b4_g64_bf16.safetensors"), &o).unwrap();
            assert!(mlx.get("w").unwrap().to_f32_vec().is_ok());
            assert!(e.tensors().next().unwrap().tensor().to_f32_vec().is_ok());
            assert_eq!(a.len() + b.len() + c.len() + d.len(), 84);
            assert!(!f.is_empty());
            assert!(LIVE_BYTES.load(Ordering::SeqCst) > 0, "the hook was not used");
        }
        // Failures free what they allocated before the error.
        let mut damaged = bytes.clone();
        let last = damaged.len() - 1;
        damaged.truncate(last);
        assert_eq!(Model::from_bytes_with(&damaged, &o).unwrap_err().status(), Status::Truncated);
        assert!(Model::open_with(repo.join("no/such/file"), &o).is_err());
        assert!(ALLOCS.load(Ordering::SeqCst) > 10);
        assert_eq!(LIVE_BYTES.load(Ordering::SeqCst), 0, "bytes still allocated after close");
        assert_eq!(SIZE_MISMATCHES.load(Ordering::SeqCst), 0, "free was told another size");
    }
}
