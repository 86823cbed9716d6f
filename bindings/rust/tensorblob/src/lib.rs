//! Safe Rust API of tensorblob: open, validate, look up and dequantize model-weight
//! containers (safetensors files and sharded checkpoints, Ollama stores, mistral.rs UQFF,
//! SLM1, GGUF), through the C library's `include/tensorblob.h`.
//!
//! - [`Model::open`] / [`Model::from_bytes`] open a container; [`Model::tensors`] lists it;
//!   [`Model::get`] finds a tensor; [`Tensor::data`] borrows its bytes without a copy;
//!   [`Tensor::dequantize_into`] / [`Tensor::to_f32_vec`] decode quantized weights.
//! - [`Model::open_reader`] reads a model through any `Read + Seek` (header first, then only
//!   the tensors asked for); [`Tensor::read_into`] copies a tensor's bytes from any model.
//! - [`Store`] opens an Ollama store: [`Store::models`], [`Store::open_model`],
//!   [`Store::verify`], [`Store::import`], [`Store::gc`].
//! - [`Model::typed_metadata`] (GGUF key/values with their types), [`Model::metadata_array`],
//!   [`Model::metadata_strings`]; [`set_kernel`] / [`active_kernel`]; the quantizers
//!   [`ggml_quantize`] (ggml blocks) and [`quant_quantize`] (MLX/FP8 schemes).
//! - Every failure is an [`Error`] carrying a [`Status`] (and its [`Family`]), the library's
//!   message and the byte offset. Input never makes this crate panic.
//! - [`features`] lists what the linked library was built with.
//!
//! See `bindings/rust/README.md` for an example (also run as a doctest).
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]
// bindgen gives each C enum the integer type its values need (u32 or i32); explicit casts
// keep this crate independent of that choice.
#![allow(clippy::unnecessary_cast)]
// Every unsafe block says why it is sound; clippy -D warnings enforces it.
#![warn(clippy::undocumented_unsafe_blocks)]

mod dtype;
mod error;
mod kernel;
mod model;
mod quantize;
mod source;
mod store;
mod typed_metadata;

pub use dtype::{DType, Element};
pub use error::{Error, Family, Result, Status};
pub use model::{
    ggml_dequantize, DequantOptions, Format, Metadata, Model, OpenMode, OpenOptions, QuantInfo, Stores, Tensor,
    TensorInfo, Tensors,
};
pub use source::{ReadSeek, SiblingOpener};
pub use kernel::{active_kernel, ggml_kernel, set_kernel};
pub use quantize::{
    ggml_quantize, ggml_quantize_bytes, ggml_row_size, quant_quantize, quant_quantize_bytes, quant_size, GlobalScale,
    QuantDesc, QuantScheme, QuantSizes, Quantized, QuantizeOptions,
};
pub use store::{GcEntry, GcKind, GcReport, ImportProgress, ImportResult, Store, StoreModel, VerifyProgress, VerifySummary};
pub use typed_metadata::{MetaElement, MetaType, MetaValue, TypedValue};

/// The linked library's version, `"MAJOR.MINOR.PATCH"`.
pub fn library_version() -> &'static str {
    // SAFETY: tblob_version_string returns a static NUL-terminated string.
    unsafe { error::static_str(tensorblob_sys::tblob_version_string()) }
}

/// What the linked library contains: `"format:safetensors"`, `"format:gguf"`, ...,
/// `"kernel:avx2"`, `"kernel:scalar"` (`tblob_features`).
pub fn features() -> Vec<&'static str> {
    let mut n = 0usize;
    // SAFETY: tblob_features returns a static NULL-terminated array of static strings and
    // writes the count through the valid pointer given.
    let list = unsafe { tensorblob_sys::tblob_features(&mut n) };
    (0..n)
        // SAFETY: i < n, the array's length; each entry is a static NUL-terminated string.
        .map(|i| unsafe { error::static_str(*list.add(i)) })
        .collect()
}

#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;
