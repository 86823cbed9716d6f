//! Kernel choice: which instruction set the dequantizers and quantizers run on.
use std::ffi::{CStr, CString};
use std::ptr;

use tensorblob_sys as sys;

use crate::error::{check, Error, Result, Status};

/// Forces the process-wide kernel set (`"scalar"`, `"avx2"`, `"avx512"`, `"neon"`); `None`
/// or `"auto"` returns to the automatic choice. A set that is unknown, compiled out or that
/// this host cannot run is `Status::KernelUnavailable`, never a silent fallback. Every set
/// gives the same bits.
pub fn set_kernel(name: Option<&str>) -> Result<()> {
    let c = name
        .map(CString::new)
        .transpose()
        .map_err(|_| Error::new(Status::InvalidArgument, "kernel name holds a NUL byte"))?;
    let p = c.as_ref().map_or(ptr::null(), |c| c.as_ptr());
    // SAFETY: p is NULL or a NUL-terminated string alive for the call.
    check(|d| unsafe { sys::tblob_kernel_set(p, d) })
}

fn static_str(p: *const std::ffi::c_char) -> &'static str {
    if p.is_null() {
        return "";
    }
    // SAFETY: the library returns static NUL-terminated ASCII names.
    unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("")
}

/// The kernel set in use (`"scalar"`, `"avx2"`, ...).
pub fn active_kernel() -> &'static str {
    // SAFETY: no arguments; returns a static string.
    static_str(unsafe { sys::tblob_kernel_active() })
}

/// The GGML kernels in use (`"scalar"`, `"avx2"` or `"neon"`).
pub fn ggml_kernel() -> &'static str {
    // SAFETY: no arguments; returns a static string.
    static_str(unsafe { sys::tblob_ggml_kernel_name() })
}
