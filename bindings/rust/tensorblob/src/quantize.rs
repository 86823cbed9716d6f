//! Quantizers: ggml blocks (`tblob_ggml_quantize`) and the MLX/FP8 schemes
//! (`tblob_quant_quantize`).
use std::ffi::c_void;
use std::ptr;

use tensorblob_sys as sys;

use crate::dtype::DType;
use crate::error::{check, init, Error, Result, Status};

/// Options of both quantizers. `threads` 0 uses one per online core, 1 the calling thread;
/// the bytes written never depend on it.
#[derive(Debug, Clone, Copy, Default)]
pub struct QuantizeOptions {
    /// Worker threads.
    pub threads: u32,
}

impl QuantizeOptions {
    fn raw(&self) -> sys::tblob_quantize_options {
        let mut o: sys::tblob_quantize_options = init(sys::tblob_quantize_options_init);
        o.threads = self.threads;
        o
    }
}

/// Bytes of one row of `cols` values of ggml type `ggml_type` (ggml's `ggml_row_size`);
/// `cols` must be a multiple of the type's block (`Status::QuantGroupSize`).
pub fn ggml_row_size(ggml_type: u32, cols: u64) -> Result<u64> {
    let mut n = 0u64;
    // SAFETY: n writable.
    check(|d| unsafe { sys::tblob_ggml_row_size(ggml_type, cols, &mut n, d) })?;
    Ok(n)
}

/// Quantizes `rows` x `cols` f32 values (row-major) into ggml blocks of type `ggml_type`,
/// bit-exact with ggml's `ggml_quantize_chunk`: `rows * ggml_row_size(cols)` bytes.
/// `importance`: `cols` per-column weights for the types that take them.
pub fn ggml_quantize(
    ggml_type: u32,
    src: &[f32],
    rows: u64,
    cols: u64,
    importance: Option<&[f32]>,
    options: &QuantizeOptions,
) -> Result<Vec<u8>> {
    ggml_quantize_raw(ggml_type, DType::F32, src.as_ptr().cast(), std::mem::size_of_val(src), rows, cols, importance, options)
}

/// [`ggml_quantize`] for little-endian F32, F16 or BF16 bytes (`src_dtype`).
pub fn ggml_quantize_bytes(
    ggml_type: u32,
    src_dtype: DType,
    src: &[u8],
    rows: u64,
    cols: u64,
    importance: Option<&[f32]>,
    options: &QuantizeOptions,
) -> Result<Vec<u8>> {
    ggml_quantize_raw(ggml_type, src_dtype, src.as_ptr().cast(), src.len(), rows, cols, importance, options)
}

#[allow(clippy::too_many_arguments)]
fn ggml_quantize_raw(
    ggml_type: u32,
    src_dtype: DType,
    src: *const c_void,
    src_bytes: usize,
    rows: u64,
    cols: u64,
    importance: Option<&[f32]>,
    options: &QuantizeOptions,
) -> Result<Vec<u8>> {
    let total = ggml_row_size(ggml_type, cols)?
        .checked_mul(rows)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| Error::new(Status::ShapeOverflow, "rows * row size overflows"))?;
    let mut dst = vec![0u8; total];
    let o = options.raw();
    // The library reads `cols` weights: a slice of another length is refused here.
    if let Some(w) = importance {
        if w.len() as u64 != cols {
            return Err(Error::new(Status::InvalidArgument, format!("{} importance weights for {cols} columns", w.len())));
        }
    }
    let imp = importance.map_or(ptr::null(), |w| w.as_ptr());
    // SAFETY: src is src_bytes readable bytes (from a slice); imp is NULL or cols readable
    // f32; dst is total writable bytes; o is an initialised options struct.
    check(|d| unsafe {
        sys::tblob_ggml_quantize(ggml_type, src_dtype.to_raw(), src, src_bytes, rows, cols, imp,
                                 dst.as_mut_ptr().cast(), dst.len(), &o, d)
    })?;
    Ok(dst)
}

/// A quantization scheme `quant_quantize` writes (`tblob_quant_scheme`).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuantScheme {
    /// MLX affine: `w = scale * q + bias`.
    MlxAffine,
    /// MX FP4 (E2M1 codes, E8M0 scale per 32).
    Mxfp4,
    /// MX FP8 (E4M3 codes, E8M0 scale per 32).
    Mxfp8,
    /// NV FP4 (E2M1 codes, E4M3 scale per 16, optional global scale).
    Nvfp4,
    /// E4M3 codes with one scale per `group_size`² block.
    BlockFp8,
    /// SLM1 Q8_0.
    Slm1Q8_0,
    /// SLM1 Q4_0.
    Slm1Q4_0,
}

impl QuantScheme {
    fn to_raw(self) -> u32 {
        (match self {
            QuantScheme::MlxAffine => sys::TBLOB_QUANT_MLX_AFFINE,
            QuantScheme::Mxfp4 => sys::TBLOB_QUANT_MXFP4,
            QuantScheme::Mxfp8 => sys::TBLOB_QUANT_MXFP8,
            QuantScheme::Nvfp4 => sys::TBLOB_QUANT_NVFP4,
            QuantScheme::BlockFp8 => sys::TBLOB_QUANT_BLOCK_FP8,
            QuantScheme::Slm1Q8_0 => sys::TBLOB_QUANT_SLM1_Q8_0,
            QuantScheme::Slm1Q4_0 => sys::TBLOB_QUANT_SLM1_Q4_0,
        }) as u32
    }
}

/// The NVFP4 global scale (`tblob_global_scale_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum GlobalScale {
    /// None.
    #[default]
    None,
    /// MLX's f32 argument (the tensor's amax).
    MlxAmax(f32),
}

/// The parameters of a quantized matrix (`tblob_quant_desc` without its buffers).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuantDesc {
    /// The scheme.
    pub scheme: QuantScheme,
    /// Affine: 2-6 or 8; others 0.
    pub bits: u32,
    /// Group (block FP8: block edge).
    pub group_size: u32,
    /// Scale encoding (affine: F32/F16/BF16; mx*: F8E8M0; nvfp4: F8E4M3).
    pub scale_dtype: DType,
    /// Affine: equal to `scale_dtype`; others `None`.
    pub bias_dtype: Option<DType>,
    /// NVFP4's global scale.
    pub global_scale: GlobalScale,
    /// Rows.
    pub rows: u64,
    /// Columns.
    pub cols: u64,
}

/// Byte lengths of a quantized matrix's parts ([`quant_size`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QuantSizes {
    /// Codes.
    pub data: u64,
    /// Scales.
    pub scales: u64,
    /// Biases (affine).
    pub biases: u64,
    /// Global scale.
    pub global_scale: u64,
}

/// What [`quant_quantize`] writes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Quantized {
    /// Packed codes.
    pub data: Vec<u8>,
    /// Scales.
    pub scales: Vec<u8>,
    /// Biases (affine; empty otherwise).
    pub biases: Vec<u8>,
}

impl QuantDesc {
    fn raw(&self) -> sys::tblob_quant_desc {
        let mut d: sys::tblob_quant_desc = init(sys::tblob_quant_desc_init);
        d.scheme = self.scheme.to_raw();
        d.bits = self.bits;
        d.group_size = self.group_size;
        d.scale_dtype = self.scale_dtype.to_raw();
        d.bias_dtype = self.bias_dtype.map_or(0, DType::to_raw);
        d.global_scale_mode = match self.global_scale {
            GlobalScale::None => sys::TBLOB_GLOBAL_SCALE_NONE,
            GlobalScale::MlxAmax(_) => sys::TBLOB_GLOBAL_SCALE_MLX_AMAX,
        } as u32;
        d.rows = self.rows;
        d.cols = self.cols;
        d
    }
}

/// The byte lengths of the parts of a matrix described by `desc` (`tblob_quant_size`).
pub fn quant_size(desc: &QuantDesc) -> Result<QuantSizes> {
    let mut d = desc.raw();
    // SAFETY: d is an initialised descriptor; the call writes only its length fields.
    check(|g| unsafe { sys::tblob_quant_size(&mut d, g) })?;
    Ok(QuantSizes { data: d.data_bytes, scales: d.scales_bytes, biases: d.biases_bytes, global_scale: d.global_scale_bytes })
}

/// Quantizes `desc.rows` x `desc.cols` f32 values (row-major) with `desc`'s scheme, the
/// inverse of the library's dequantizer (bit-exact with `mx.quantize` on the CPU for the MLX
/// schemes; docs/quantize.md).
pub fn quant_quantize(desc: &QuantDesc, src: &[f32], options: &QuantizeOptions) -> Result<Quantized> {
    quant_quantize_raw(desc, DType::F32, src.as_ptr().cast(), std::mem::size_of_val(src), options)
}

/// [`quant_quantize`] for little-endian F32, F16 or BF16 bytes (`src_dtype`).
pub fn quant_quantize_bytes(desc: &QuantDesc, src_dtype: DType, src: &[u8], options: &QuantizeOptions) -> Result<Quantized> {
    quant_quantize_raw(desc, src_dtype, src.as_ptr().cast(), src.len(), options)
}

fn quant_quantize_raw(
    desc: &QuantDesc,
    src_dtype: DType,
    src: *const c_void,
    src_bytes: usize,
    options: &QuantizeOptions,
) -> Result<Quantized> {
    let sizes = quant_size(desc)?;
    let len = |n: u64| usize::try_from(n).map_err(|_| Error::new(Status::ShapeOverflow, "quantized size overflows"));
    let mut out = Quantized { data: vec![0; len(sizes.data)?], scales: vec![0; len(sizes.scales)?], biases: vec![0; len(sizes.biases)?] };
    let mut d = desc.raw();
    let global = match desc.global_scale {
        GlobalScale::MlxAmax(g) => g,
        GlobalScale::None => 0.0,
    };
    // An absent part is NULL (the library refuses a pointer to a part the scheme has not).
    let part = |v: &mut Vec<u8>| if v.is_empty() { ptr::null() } else { v.as_mut_ptr().cast_const().cast::<c_void>() };
    (d.data, d.data_bytes) = (part(&mut out.data), sizes.data);
    (d.scales, d.scales_bytes) = (part(&mut out.scales), sizes.scales);
    (d.biases, d.biases_bytes) = (part(&mut out.biases), sizes.biases);
    if !matches!(desc.global_scale, GlobalScale::None) {
        d.global_scale = ptr::from_ref(&global).cast();
        d.global_scale_bytes = 4;
    }
    let o = options.raw();
    // SAFETY: the descriptor names three distinct writable Vecs of exactly the lengths
    // tblob_quant_size reported, and a live f32; src is src_bytes readable bytes.
    check(|g| unsafe { sys::tblob_quant_quantize(&d, src_dtype.to_raw(), src, src_bytes, &o, g) })?;
    Ok(out)
}
