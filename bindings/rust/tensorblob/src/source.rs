//! Models read through a caller's reader (`tblob_model_open_source`): the library reads the
//! header at open and then only the tensor bytes asked for, so the reader may be a remote
//! file, an archive member or anything else that reads and seeks.
use std::ffi::{c_char, c_void};
use std::io::{ErrorKind, Read, Seek, SeekFrom};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::{Arc, Mutex};

use tensorblob_sys as sys;

use crate::error::{check, init, Error, Result, Status};
use crate::model::{Model, OpenOptions};

/// A reader the library can pull bytes from: anything that reads and seeks and can move to
/// another thread ([`std::fs::File`], [`std::io::Cursor`], a buffered remote reader).
pub trait ReadSeek: Read + Seek + Send {}
impl<T: Read + Seek + Send> ReadSeek for T {}

/// Opens the file beside a reader that a sharded checkpoint's index names (a shard):
/// `Ok(reader)`, or an error of kind [`ErrorKind::NotFound`] when there is none.
pub type SiblingOpener = dyn Fn(&str) -> std::io::Result<Box<dyn ReadSeek>> + Send + Sync;

/// The latest reader error, shared by a reader, its siblings and the model, so the
/// [`Error`] of the call that needed the bytes can name it (the library sees a status).
pub(crate) type ReaderError = Arc<Mutex<Option<String>>>;

/// What the C source's user pointer owns: boxed, leaked into the pointer and freed by
/// `close_source`, which the library calls exactly once.
struct Source {
    reader: Mutex<Box<dyn ReadSeek>>,
    siblings: Option<Arc<SiblingOpener>>,
    error: ReaderError,
}

fn remember(error: &ReaderError, msg: String) {
    if let Ok(mut e) = error.lock() {
        *e = Some(msg);
    }
}

/// Adds the reader's latest error (if any) to a failed call's message.
pub(crate) fn with_reader_error(err: Error, error: &ReaderError) -> Error {
    let taken = error.lock().ok().and_then(|mut e| e.take());
    match taken {
        Some(msg) => Error::new(err.status(), format!("{}: reader error: {msg}", err.message())),
        None => err,
    }
}

unsafe extern "C" fn read_source(user: *mut c_void, offset: u64, dst: *mut c_void, len: usize) -> i64 {
    // A panic must not unwind into C: it becomes an I/O error.
    catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: user is the Box<Source> leaked by fill_source, alive until close_source.
        let src = unsafe { &*(user as *const Source) };
        if len == 0 {
            return 0;
        }
        // The library's buffer may be uninitialised: zeroed first, so it can be a &mut [u8].
        // SAFETY: the library passes dst writable for len bytes.
        let buf = unsafe {
            ptr::write_bytes(dst.cast::<u8>(), 0, len);
            std::slice::from_raw_parts_mut(dst.cast::<u8>(), len)
        };
        // A poisoned lock only means another read panicked; the reader is still usable.
        let mut r = src.reader.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(e) = r.seek(SeekFrom::Start(offset)) {
            remember(&src.error, format!("seek to {offset}: {e}"));
            return sys::TBLOB_E_IO as i64;
        }
        let mut done = 0;
        while done < len {
            match r.read(&mut buf[done..]) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    remember(&src.error, format!("read at {}: {e}", offset + done as u64));
                    return sys::TBLOB_E_IO as i64;
                }
            }
        }
        done as i64
    }))
    .unwrap_or(sys::TBLOB_E_IO as i64)
}

unsafe extern "C" fn open_sibling(
    user: *mut c_void,
    name: *const c_char,
    name_len: usize,
    out: *mut sys::tblob_byte_source,
) -> sys::tblob_status {
    catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: user is the live Box<Source> (see read_source).
        let src = unsafe { &*(user as *const Source) };
        let Some(opener) = src.siblings.clone() else {
            return sys::TBLOB_E_NOT_FOUND;
        };
        // SAFETY: the library passes name_len readable bytes at name.
        let name = unsafe { std::slice::from_raw_parts(name.cast::<u8>(), name_len) };
        let Ok(name) = std::str::from_utf8(name) else {
            return sys::TBLOB_E_NOT_FOUND;
        };
        match opener(name).and_then(|r| Source::new(r, Some(opener.clone()), src.error.clone())) {
            Ok((s, size)) => {
                // SAFETY: out is the library's initialised source struct, writable.
                unsafe { fill_source(&mut *out, s, size) };
                0
            }
            Err(e) => {
                remember(&src.error, format!("{name}: {e}"));
                if e.kind() == ErrorKind::NotFound {
                    sys::TBLOB_E_NOT_FOUND
                } else {
                    sys::TBLOB_E_IO
                }
            }
        }
    }))
    .unwrap_or(sys::TBLOB_E_IO)
}

unsafe extern "C" fn close_source(user: *mut c_void) {
    // SAFETY: the library calls close exactly once per source, with the pointer fill_source
    // leaked; nothing uses it afterwards.
    drop(unsafe { Box::from_raw(user as *mut Source) });
}

impl Source {
    /// The source and the reader's size (found by seeking to its end).
    fn new(
        mut reader: Box<dyn ReadSeek>,
        siblings: Option<Arc<SiblingOpener>>,
        error: ReaderError,
    ) -> std::io::Result<(Box<Source>, u64)> {
        let size = reader.seek(SeekFrom::End(0))?;
        Ok((Box::new(Source { reader: Mutex::new(reader), siblings, error }), size))
    }
}

/// Hands `s` to the C struct (leaked into its user pointer).
fn fill_source(out: &mut sys::tblob_byte_source, s: Box<Source>, size: u64) {
    out.size = size;
    out.read = Some(read_source);
    out.open_sibling = if s.siblings.is_some() { Some(open_sibling) } else { None };
    out.close = Some(close_source);
    out.user = Box::into_raw(s).cast();
}

impl Model<'static> {
    /// Opens a model whose bytes come from `reader` (owned by the model, read under a mutex):
    /// a safetensors file, GGUF, a UQFF shard or SLM1. Only the header is read at open; tensor
    /// bytes are read when asked for ([`crate::Tensor::read_into`], the dequantize methods).
    /// Nothing is mapped, so [`crate::Tensor::data`] is empty for such a model. A read error
    /// fails the call that needed the bytes with [`Status::Io`], naming the reader's error; a
    /// reader that ends early inside its size is [`Status::SourceShortRead`].
    pub fn open_reader<R: Read + Seek + Send + 'static>(reader: R) -> Result<Model<'static>> {
        Model::open_reader_with(reader, &OpenOptions::new(), None)
    }

    /// [`Model::open_reader`] with limits and, for a sharded checkpoint's index, the opener of
    /// its shards (called with each name the index gives).
    pub fn open_reader_with<R: Read + Seek + Send + 'static>(
        reader: R,
        options: &OpenOptions,
        siblings: Option<Arc<SiblingOpener>>,
    ) -> Result<Model<'static>> {
        let error: ReaderError = Arc::new(Mutex::new(None));
        let (s, size) = Source::new(Box::new(reader), siblings, error.clone())
            .map_err(|e| Error::new(Status::Io, format!("reader: {e}")))?;
        let mut src: sys::tblob_byte_source = init(sys::tblob_byte_source_init);
        fill_source(&mut src, s, size);
        let mut out = ptr::null_mut();
        // SAFETY: src is fully initialised (the library takes ownership of its user pointer
        // and calls close exactly once, also on failure); options is initialised; out is a
        // writable out-parameter.
        check(|d| unsafe { sys::tblob_model_open_source(&src, options.as_raw(), &mut out, d) })
            .map_err(|e| with_reader_error(e, &error))?;
        let mut m = Model::from_raw(out)?;
        m.set_reader_error(error);
        Ok(m)
    }
}
