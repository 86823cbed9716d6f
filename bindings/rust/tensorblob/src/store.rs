//! Ollama stores: list, open and verify models.
use std::ffi::{c_int, c_void, CStr};
use std::ops::ControlFlow;
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;
use std::ptr::{self, NonNull};

use tensorblob_sys as sys;

use crate::error::{check, init, Error, Result, Status};
use crate::model::{c_path, Model};

/// An Ollama model store (the directory Ollama keeps models in). Nothing outside the root is
/// ever opened. Immutable after open and thread-safe, like every handle of the C API.
pub struct Store {
    raw: NonNull<sys::tblob_store>,
}

// SAFETY: the C API documents every handle as immutable after open with every query
// thread-safe on a shared handle (include/tensorblob.h); callbacks run on the calling thread.
unsafe impl Send for Store {}
// SAFETY: as above; all methods take &self.
unsafe impl Sync for Store {}

impl Drop for Store {
    fn drop(&mut self) {
        // SAFETY: raw came from a successful tblob_store_open and is closed once. Models
        // opened from the store borrow it, so none outlives this.
        unsafe { sys::tblob_store_close(self.raw.as_ptr()) }
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("root", &self.root()).finish()
    }
}

/// One manifest of a store ([`Store::models`]).
#[derive(Debug, Clone)]
pub struct StoreModel {
    /// Full name, `"host/namespace/model:tag"`.
    pub name: String,
    /// As `ollama list` shows it (`"model:tag"` for the default host and namespace).
    pub short_name: String,
    /// SHA-256 hex of the manifest bytes (empty when it cannot be read).
    pub manifest_id: String,
    /// Config and layer sizes as the manifest states them.
    pub total_bytes: u64,
    /// Layers in the manifest.
    pub layer_count: u64,
    /// Safetensors tensor layers among them.
    pub tensor_layer_count: u64,
    /// Manifest modification time, seconds since the epoch.
    pub modified_unix: i64,
    /// Why the manifest cannot be read, when it cannot.
    pub error: Option<Error>,
}

/// Progress of [`Store::verify`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VerifyProgress {
    /// Distinct blobs to check.
    pub blobs_total: u64,
    /// Blobs checked so far.
    pub blobs_done: u64,
    /// Bytes to hash.
    pub bytes_total: u64,
    /// Bytes hashed so far.
    pub bytes_done: u64,
}

/// What [`Store::verify`] checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VerifySummary {
    /// Worker threads used.
    pub threads_used: u32,
    /// Manifests read.
    pub manifests: u64,
    /// Distinct blobs checked.
    pub blobs: u64,
    /// Bytes hashed.
    pub bytes_hashed: u64,
}

/// Copies `len` bytes at `p` into a String (lossy; the library hands out UTF-8).
///
/// # Safety
/// When non-null, `p` points to `len` readable bytes.
unsafe fn string(p: *const std::ffi::c_char, len: usize) -> String {
    if p.is_null() || len == 0 {
        return String::new();
    }
    // SAFETY: guaranteed by the caller.
    let b = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) };
    String::from_utf8_lossy(b).into_owned()
}

unsafe extern "C" fn list_cb(user: *mut c_void, e: *const sys::tblob_store_entry) -> c_int {
    // SAFETY: user is the &mut Vec<StoreModel> passed by Store::models for this call only,
    // and e points to an entry valid during the callback.
    let (out, e) = unsafe { (&mut *user.cast::<Vec<StoreModel>>(), &*e) };
    let error = (e.status != 0).then(|| {
        let message = if e.message.is_null() {
            String::new()
        } else {
            // SAFETY: message is NUL-terminated when non-null (header).
            unsafe { CStr::from_ptr(e.message) }.to_string_lossy().into_owned()
        };
        Error::new(Status::from_code(e.status as i32).unwrap_or(Status::Other(0)), message)
    });
    // SAFETY: each pointer/length pair is valid during the callback.
    let (name, short_name, manifest_id) = unsafe {
        (
            string(e.name, e.name_len),
            string(e.short_name, e.short_name_len),
            string(e.manifest_id, e.manifest_id_len),
        )
    };
    out.push(StoreModel {
        name,
        short_name,
        manifest_id,
        total_bytes: e.total_bytes,
        layer_count: e.layer_count,
        tensor_layer_count: e.tensor_layer_count,
        modified_unix: e.modified_unix,
        error,
    });
    0
}

std::thread_local! {
    // The store whose verify callback this thread is running, if any: the C API does not
    // support calling back into the library on that handle from its own callback.
    static IN_CALLBACK: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Refuses a call made from inside a callback running on the same store.
fn not_reentrant(store: *const sys::tblob_store) -> Result<()> {
    if IN_CALLBACK.with(|c| c.get()) == store as usize {
        return Err(Error::new(
            Status::InvalidArgument,
            "a store cannot be used from inside its own verify callback",
        ));
    }
    Ok(())
}

/// Marks this thread as running a callback of `store` until dropped.
struct CallbackGuard(usize);

impl CallbackGuard {
    fn enter(store: *const sys::tblob_store) -> CallbackGuard {
        CallbackGuard(IN_CALLBACK.with(|c| c.replace(store as usize)))
    }
}

impl Drop for CallbackGuard {
    fn drop(&mut self) {
        IN_CALLBACK.with(|c| c.set(self.0));
    }
}

struct VerifyState<F> {
    f: F,
    // Set once the closure asked to stop (or panicked): it is not called again, although
    // the library may report progress once more while it winds down.
    stopped: bool,
    panic: Option<Box<dyn std::any::Any + Send>>,
}

unsafe extern "C" fn progress_cb<F>(user: *mut c_void, p: *const sys::tblob_verify_progress) -> c_int
where
    F: FnMut(&VerifyProgress) -> ControlFlow<()>,
{
    // SAFETY: user is the &mut VerifyState<F> Store::verify passes for this call only; the
    // library calls back on the calling thread, never concurrently; p is valid during it.
    let (state, p) = unsafe { (&mut *user.cast::<VerifyState<F>>(), &*p) };
    let progress = VerifyProgress {
        blobs_total: p.blobs_total,
        blobs_done: p.blobs_done,
        bytes_total: p.bytes_total,
        bytes_done: p.bytes_done,
    };
    if state.stopped {
        return 1;
    }
    // A panic must not unwind through C: stop the verify and re-raise it afterwards.
    match panic::catch_unwind(AssertUnwindSafe(|| (state.f)(&progress))) {
        Ok(ControlFlow::Continue(())) => 0,
        Ok(ControlFlow::Break(())) => {
            state.stopped = true;
            1
        }
        Err(payload) => {
            state.stopped = true;
            state.panic = Some(payload);
            1
        }
    }
}

impl Store {
    /// Opens the store at `root` (which must hold `manifests/` and `blobs/`).
    pub fn open(root: impl AsRef<Path>) -> Result<Store> {
        let p = c_path(root.as_ref())?;
        let mut out = ptr::null_mut();
        // SAFETY: p NUL-terminated; NULL options mean defaults; out writable.
        check(|d| unsafe { sys::tblob_store_open(p.as_ptr(), ptr::null(), &mut out, d) })?;
        let raw = NonNull::new(out)
            .ok_or_else(|| Error::new(Status::InvalidArgument, "open returned no store"))?;
        Ok(Store { raw })
    }

    fn raw(&self) -> *const sys::tblob_store {
        self.raw.as_ptr()
    }

    /// The root as opened.
    pub fn root(&self) -> Option<&Path> {
        let (mut p, mut len) = (ptr::null(), 0usize);
        // SAFETY: out-parameters writable; the string is borrowed from the handle.
        if unsafe { sys::tblob_store_root(self.raw(), &mut p, &mut len, ptr::null_mut()) } != 0 || p.is_null() {
            return None;
        }
        // SAFETY: len bytes borrowed from the handle, valid while &self is.
        let b = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) };
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

    /// Every manifest in name order; unreadable ones carry their error.
    pub fn models(&self) -> Result<Vec<StoreModel>> {
        not_reentrant(self.raw())?;
        let mut out: Vec<StoreModel> = Vec::new();
        // SAFETY: list_cb matches tblob_store_entry_fn and gets &mut out, alive for the call.
        check(|d| unsafe {
            sys::tblob_store_list(self.raw(), Some(list_cb), (&mut out as *mut Vec<StoreModel>).cast(), d)
        })?;
        Ok(out)
    }

    /// Opens model `name` (`"model:tag"`, `"namespace/model:tag"`, ...) as one table of
    /// every tensor of its blobs. The model borrows the store.
    pub fn open_model(&self, name: &str) -> Result<Model<'_>> {
        not_reentrant(self.raw())?;
        let mut out = ptr::null_mut();
        // SAFETY: name valid for its length; NULL options mean defaults; out writable.
        check(|d| unsafe {
            sys::tblob_store_open_model(self.raw(), name.as_ptr().cast(), name.len(), ptr::null(), &mut out, d)
        })?;
        Model::from_raw(out)
    }

    /// Verifies every blob of every model (SHA-256 against its digest and size), calling
    /// `progress` on this thread as it goes; returning [`ControlFlow::Break`] cancels
    /// ([`Status::Cancelled`]) and `progress` is not called again. A panic in `progress`
    /// cancels too and resumes in the caller once the library has returned. The first bad blob's error is returned after all are checked.
    pub fn verify<F>(&self, progress: F) -> Result<VerifySummary>
    where
        F: FnMut(&VerifyProgress) -> ControlFlow<()>,
    {
        self.verify_impl(None, progress)
    }

    /// [`Store::verify`] for one model.
    pub fn verify_model<F>(&self, name: &str, progress: F) -> Result<VerifySummary>
    where
        F: FnMut(&VerifyProgress) -> ControlFlow<()>,
    {
        self.verify_impl(Some(name), progress)
    }

    fn verify_impl<F>(&self, name: Option<&str>, f: F) -> Result<VerifySummary>
    where
        F: FnMut(&VerifyProgress) -> ControlFlow<()>,
    {
        not_reentrant(self.raw())?;
        let mut state = VerifyState { f, stopped: false, panic: None };
        let mut options: sys::tblob_verify_options = init(sys::tblob_verify_options_init);
        options.progress = Some(progress_cb::<F>);
        options.progress_user = (&mut state as *mut VerifyState<F>).cast();
        let mut summary: sys::tblob_verify_summary = init(sys::tblob_verify_summary_init);
        let (np, nl) = name.map_or((ptr::null(), 0), |n| (n.as_ptr().cast(), n.len()));
        let r = {
            let _guard = CallbackGuard::enter(self.raw());
            // SAFETY: options points to state, alive for the whole call, and the callback
            // runs only during it on this thread; summary writable with struct_size set.
            check(|d| unsafe { sys::tblob_store_verify(self.raw(), np, nl, &options, &mut summary, d) })
        };
        if let Some(payload) = state.panic.take() {
            panic::resume_unwind(payload);
        }
        r?;
        Ok(VerifySummary {
            threads_used: summary.threads_used,
            manifests: summary.manifests,
            blobs: summary.blobs,
            bytes_hashed: summary.bytes_hashed,
        })
    }
}

/// What [`Store::import`] did (`tblob_import_result`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ImportResult {
    /// False when the manifest already had these exact bytes.
    pub manifest_written: bool,
    /// Layers in the manifest.
    pub layers: u64,
    /// Tensors imported.
    pub tensors: u64,
    /// Blobs written.
    pub blobs_written: u64,
    /// Blobs already in the store (de-duplicated).
    pub blobs_reused: u64,
    /// Bytes written.
    pub bytes_written: u64,
}

/// How far [`Store::import_with_progress`] is (`tblob_import_progress`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ImportProgress {
    /// Source tensors to import.
    pub tensors_total: u64,
    /// Tensors in blobs written or found in the store.
    pub tensors_done: u64,
    /// Their data bytes.
    pub bytes_total: u64,
    /// Bytes done.
    pub bytes_done: u64,
}

unsafe extern "C" fn import_progress_cb<F>(user: *mut c_void, p: *const sys::tblob_import_progress) -> c_int
where
    F: FnMut(&ImportProgress) -> ControlFlow<()>,
{
    // SAFETY: user is the &mut VerifyState<F> Store::import_with_progress passes for this call
    // only; the library calls back on the calling thread; p is valid during it.
    let (state, p) = unsafe { (&mut *user.cast::<VerifyState<F>>(), &*p) };
    if state.stopped {
        return 1;
    }
    let progress = ImportProgress {
        tensors_total: p.tensors_total,
        tensors_done: p.tensors_done,
        bytes_total: p.bytes_total,
        bytes_done: p.bytes_done,
    };
    // A panic must not unwind through C: cancel and re-raise it afterwards.
    match panic::catch_unwind(AssertUnwindSafe(|| (state.f)(&progress))) {
        Ok(ControlFlow::Continue(())) => 0,
        Ok(ControlFlow::Break(())) => {
            state.stopped = true;
            1
        }
        Err(payload) => {
            state.stopped = true;
            state.panic = Some(payload);
            1
        }
    }
}

/// Why [`Store::gc`] lists a file (`tblob_gc_kind`).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GcKind {
    /// A blob no manifest references.
    Unreferenced,
    /// A partial download.
    Partial,
    /// A temporary file left by an interrupted write.
    Temp,
    /// A number this crate does not know.
    Other(u32),
}

/// One file [`Store::gc`] listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GcEntry {
    /// Why it is listed.
    pub kind: GcKind,
    /// Its name inside blobs/ (or manifests/... for temporary files).
    pub file_name: String,
    /// Its size.
    pub size: u64,
    /// With removal: None when it was deleted, else why not.
    pub remove_error: Option<Status>,
}

/// Totals of [`Store::gc`] and the files it listed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GcReport {
    /// Manifests read.
    pub manifests: u64,
    /// Blobs they reference.
    pub referenced_blobs: u64,
    /// Files listed.
    pub listed_files: u64,
    /// Their bytes.
    pub listed_bytes: u64,
    /// Files removed.
    pub removed_files: u64,
    /// Their bytes.
    pub removed_bytes: u64,
    /// Every listed file.
    pub entries: Vec<GcEntry>,
}

unsafe extern "C" fn gc_cb(user: *mut c_void, entry: *const sys::tblob_gc_entry) -> c_int {
    let r = panic::catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: user is the &mut Vec<GcEntry> Store::gc passed, alive for the call; entry
        // is valid for this callback, its name file_name_len bytes.
        let (out, e) = unsafe { (&mut *user.cast::<Vec<GcEntry>>(), &*entry) };
        // SAFETY: as above.
        let name = unsafe { std::slice::from_raw_parts(e.file_name.cast::<u8>(), e.file_name_len) };
        out.push(GcEntry {
            kind: match e.kind {
                1 => GcKind::Unreferenced,
                2 => GcKind::Partial,
                3 => GcKind::Temp,
                k => GcKind::Other(k),
            },
            file_name: String::from_utf8_lossy(name).into_owned(),
            size: e.size,
            remove_error: Status::from_code(e.removed as i32),
        });
    }));
    c_int::from(r.is_err())
}

impl Store {
    /// Imports `source_dir` (config.json, `*.safetensors` or a sharded checkpoint, other
    /// `*.json`, component subdirectories) as model `name`, the way `ollama create` does: one
    /// blob per tensor, de-duplicated by content, the manifest written last and atomically.
    /// Running it again changes nothing.
    pub fn import(&self, name: &str, source_dir: impl AsRef<Path>) -> Result<ImportResult> {
        self.import_with_progress(name, source_dir, |_| ControlFlow::Continue(()))
    }

    /// [`Store::import`], calling `progress` on this thread before the first blob and after
    /// every tensor blob; [`ControlFlow::Break`] cancels ([`Status::Cancelled`]: no manifest
    /// is written; blobs already written are complete and reused by the next import). A panic
    /// in `progress` cancels too and resumes in the caller once the library has returned.
    pub fn import_with_progress<F>(&self, name: &str, source_dir: impl AsRef<Path>, progress: F) -> Result<ImportResult>
    where
        F: FnMut(&ImportProgress) -> ControlFlow<()>,
    {
        not_reentrant(self.raw())?;
        let dir = c_path(source_dir.as_ref())?;
        let mut state = VerifyState { f: progress, stopped: false, panic: None };
        let mut o: sys::tblob_import_options = init(sys::tblob_import_options_init);
        o.progress = Some(import_progress_cb::<F>);
        o.progress_user = (&mut state as *mut VerifyState<F>).cast();
        let mut r: sys::tblob_import_result = init(sys::tblob_import_result_init);
        let st = {
            let _guard = CallbackGuard::enter(self.raw());
            // SAFETY: name valid for its length, dir NUL-terminated; o points to state, alive
            // for the call, and the callback runs only during it on this thread; r writable
            // with struct_size set.
            check(|d| unsafe {
                sys::tblob_store_import(self.raw(), name.as_ptr().cast(), name.len(), dir.as_ptr(), &o, &mut r, d)
            })
        };
        if let Some(payload) = state.panic.take() {
            panic::resume_unwind(payload);
        }
        st?;
        Ok(ImportResult {
            manifest_written: r.manifest_written != 0,
            layers: r.layers,
            tensors: r.tensors,
            blobs_written: r.blobs_written,
            blobs_reused: r.blobs_reused,
            bytes_written: r.bytes_written,
        })
    }

    /// Lists the files of blobs/ that no manifest references, partial downloads and temporary
    /// files older than `min_age_seconds`, and with `remove` deletes them. Refuses with
    /// `Status::OllamaCorruptStore` when some manifest cannot be read.
    pub fn gc(&self, remove: bool, min_age_seconds: i64) -> Result<GcReport> {
        not_reentrant(self.raw())?;
        let mut entries: Vec<GcEntry> = Vec::new();
        let mut o: sys::tblob_gc_options = init(sys::tblob_gc_options_init);
        o.flags = if remove { sys::TBLOB_GC_REMOVE as u32 } else { 0 };
        o.min_age_seconds = min_age_seconds;
        o.on_entry = Some(gc_cb);
        o.user = (&mut entries as *mut Vec<GcEntry>).cast();
        let mut r: sys::tblob_gc_result = init(sys::tblob_gc_result_init);
        {
            let _guard = CallbackGuard::enter(self.raw());
            // SAFETY: o points to entries, alive for the call; the callback runs only during it
            // on this thread; r writable with struct_size set.
            check(|d| unsafe { sys::tblob_store_gc(self.raw(), &o, &mut r, d) })?;
        }
        Ok(GcReport {
            manifests: r.manifests,
            referenced_blobs: r.referenced_blobs,
            listed_files: r.listed_files,
            listed_bytes: r.listed_bytes,
            removed_files: r.removed_files,
            removed_bytes: r.removed_bytes,
            entries,
        })
    }
}
