//! Element types.
use tensorblob_sys as sys;

macro_rules! dtypes {
    ($($variant:ident = $code:ident,)*) => {
        /// The 22 safetensors element types (`tblob_dtype`).
        #[non_exhaustive]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum DType {
            $(
                #[allow(missing_docs)]
                $variant,
            )*
            /// A number this crate does not know.
            Other(u32),
        }

        impl DType {
            pub(crate) fn from_raw(v: u32) -> DType {
                match v {
                    $(x if x == sys::$code as u32 => DType::$variant,)*
                    x => DType::Other(x),
                }
            }

            /// The `tblob_dtype` number.
            pub fn to_raw(self) -> u32 {
                match self {
                    $(DType::$variant => sys::$code as u32,)*
                    DType::Other(x) => x,
                }
            }
        }
    };
}

dtypes! {
    Bool = TBLOB_DTYPE_BOOL,
    U8 = TBLOB_DTYPE_U8,
    I8 = TBLOB_DTYPE_I8,
    I16 = TBLOB_DTYPE_I16,
    U16 = TBLOB_DTYPE_U16,
    F16 = TBLOB_DTYPE_F16,
    BF16 = TBLOB_DTYPE_BF16,
    I32 = TBLOB_DTYPE_I32,
    U32 = TBLOB_DTYPE_U32,
    F32 = TBLOB_DTYPE_F32,
    F64 = TBLOB_DTYPE_F64,
    I64 = TBLOB_DTYPE_I64,
    U64 = TBLOB_DTYPE_U64,
    C64 = TBLOB_DTYPE_C64,
    F8E5M2 = TBLOB_DTYPE_F8_E5M2,
    F8E4M3 = TBLOB_DTYPE_F8_E4M3,
    F8E8M0 = TBLOB_DTYPE_F8_E8M0,
    F8E4M3Fnuz = TBLOB_DTYPE_F8_E4M3FNUZ,
    F8E5M2Fnuz = TBLOB_DTYPE_F8_E5M2FNUZ,
    F4 = TBLOB_DTYPE_F4,
    F6E2M3 = TBLOB_DTYPE_F6_E2M3,
    F6E3M2 = TBLOB_DTYPE_F6_E3M2,
}

impl DType {
    /// The name as a safetensors header spells it (`"F32"`, `"F8_E4M3"`, ...); `None` for
    /// an unknown number.
    pub fn name(self) -> Option<&'static str> {
        // SAFETY: tblob_dtype_name returns a static NUL-terminated string or NULL.
        let p = unsafe { sys::tblob_dtype_name(self.to_raw()) };
        // SAFETY: as above.
        (!p.is_null()).then(|| unsafe { crate::error::static_str(p) })
    }

    /// Bits per element (4 for F4, 6 for F6_*); `None` for an unknown number.
    pub fn bits(self) -> Option<u32> {
        // SAFETY: pure function of its argument.
        let b = unsafe { sys::tblob_dtype_bits(self.to_raw()) };
        (b != 0).then_some(b)
    }
}

mod sealed {
    pub trait Sealed {}
}

/// Output element types of dequantization: `f32`, and with the `half` feature
/// `half::f16` and `half::bf16`.
pub trait Element: sealed::Sealed + Copy {
    /// The `tblob_dtype` the library writes.
    #[doc(hidden)]
    const DTYPE: u32;
    /// Zero, to allocate output.
    #[doc(hidden)]
    const ZERO: Self;
}

impl sealed::Sealed for f32 {}
impl Element for f32 {
    const DTYPE: u32 = sys::TBLOB_DTYPE_F32 as u32;
    const ZERO: f32 = 0.0;
}

#[cfg(feature = "half")]
impl sealed::Sealed for half::f16 {}
#[cfg(feature = "half")]
impl Element for half::f16 {
    const DTYPE: u32 = sys::TBLOB_DTYPE_F16 as u32;
    const ZERO: half::f16 = half::f16::ZERO;
}

#[cfg(feature = "half")]
impl sealed::Sealed for half::bf16 {}
#[cfg(feature = "half")]
impl Element for half::bf16 {
    const DTYPE: u32 = sys::TBLOB_DTYPE_BF16 as u32;
    const ZERO: half::bf16 = half::bf16::ZERO;
}
