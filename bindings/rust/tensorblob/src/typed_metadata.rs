//! Typed metadata: GGUF's key/values with their types, and array elements.
use std::ptr;

use tensorblob_sys as sys;

use crate::error::{check, init, Error, Result, Status};
use crate::model::Model;

/// The type of a typed metadata value (`tblob_meta_type`, GGUF's numbering).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum MetaType {
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    F32,
    Bool,
    String,
    Array,
    U64,
    I64,
    F64,
    /// A number this crate does not know.
    Other(u32),
}

impl MetaType {
    fn from_raw(v: u32) -> MetaType {
        use MetaType::*;
        [U8, I8, U16, I16, U32, I32, F32, Bool, String, Array, U64, I64, F64]
            .get(v as usize)
            .copied()
            .unwrap_or(Other(v))
    }
}

/// A typed value: scalars in their Rust type, strings as their bytes (not checked as UTF-8,
/// like the file), arrays by element type and count (read them with
/// [`Model::metadata_array`] or [`Model::metadata_strings`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MetaValue<'m> {
    /// U8, U16, U32, U64.
    Uint(u64),
    /// I8, I16, I32, I64.
    Int(i64),
    /// F32 (widened exactly) and F64.
    Float(f64),
    /// Bool.
    Bool(bool),
    /// String bytes.
    Str(&'m [u8]),
    /// An array.
    Array {
        /// The elements' type (never Array).
        element: MetaType,
        /// Number of elements.
        count: u64,
    },
}

/// One typed key/value ([`Model::typed_metadata`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TypedValue<'m> {
    /// Position in the typed table (the index the array readers take).
    pub index: u64,
    /// The key's bytes.
    pub key: &'m [u8],
    /// The stored type.
    pub kind: MetaType,
    /// The value.
    pub value: MetaValue<'m>,
}

/// Element types [`Model::metadata_array`] reads into; the size must be the element's (bool
/// elements read as `u8`, 0 or 1).
pub trait MetaElement: Copy + Default + sealed::Sealed {}
mod sealed {
    pub trait Sealed {}
}
macro_rules! meta_elements {
    ($($t:ty),*) => { $(impl sealed::Sealed for $t {} impl MetaElement for $t {})* };
}
meta_elements!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

fn elem_size(t: MetaType) -> Option<usize> {
    use MetaType::*;
    match t {
        U8 | I8 | Bool => Some(1),
        U16 | I16 => Some(2),
        U32 | I32 | F32 => Some(4),
        U64 | I64 | F64 => Some(8),
        _ => None,
    }
}

/// `len` bytes at `p`, empty for NULL.
///
/// # Safety
/// When non-null, `p` must point to `len` bytes valid for `'m`.
unsafe fn borrowed<'m>(p: *const std::ffi::c_char, len: usize) -> &'m [u8] {
    if p.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: guaranteed by the caller.
        unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }
    }
}

impl<'m> TypedValue<'m> {
    /// # Safety
    /// `v` must have been filled by the library from a model that outlives `'m`.
    unsafe fn from_raw(v: &sys::tblob_metadata_value) -> TypedValue<'m> {
        let kind = MetaType::from_raw(v.value_type);
        let value = match kind {
            MetaType::U8 | MetaType::U16 | MetaType::U32 | MetaType::U64 => MetaValue::Uint(v.uint_value),
            MetaType::I8 | MetaType::I16 | MetaType::I32 | MetaType::I64 => MetaValue::Int(v.int_value),
            MetaType::F32 | MetaType::F64 => MetaValue::Float(v.float_value),
            MetaType::Bool => MetaValue::Bool(v.uint_value != 0),
            MetaType::Array => MetaValue::Array { element: MetaType::from_raw(v.element_type), count: v.count },
            // SAFETY: the string points into the model (caller's contract).
            _ => MetaValue::Str(unsafe { borrowed(v.string, v.string_len) }),
        };
        TypedValue {
            index: v.index,
            // SAFETY: the key points into the model (caller's contract).
            key: unsafe { borrowed(v.key, v.key_len) },
            kind,
            value,
        }
    }
}

impl<'a> Model<'a> {
    /// Number of typed key/values (GGUF: the file's key/value count).
    pub fn typed_metadata_len(&self) -> u64 {
        // SAFETY: raw is an open model.
        unsafe { sys::tblob_metadata_typed_count(self.raw()) }
    }

    /// The typed key/value at `index` (Status::Range past the end).
    pub fn typed_metadata_at(&self, index: u64) -> Result<TypedValue<'_>> {
        let mut v: sys::tblob_metadata_value = init(sys::tblob_metadata_value_init);
        // SAFETY: raw is open; v is an initialised, writable value.
        check(|d| unsafe { sys::tblob_metadata_typed_at(self.raw(), index, &mut v, d) })?;
        // SAFETY: v was filled from self, which the result borrows.
        Ok(unsafe { TypedValue::from_raw(&v) })
    }

    /// Every typed key/value, in file order, duplicates included.
    pub fn typed_metadata(&self) -> Result<Vec<TypedValue<'_>>> {
        (0..self.typed_metadata_len()).map(|i| self.typed_metadata_at(i)).collect()
    }

    /// The first key/value named `key` (arrays included), or None.
    pub fn typed_metadata_find(&self, key: &str) -> Result<Option<TypedValue<'_>>> {
        let mut v: sys::tblob_metadata_value = init(sys::tblob_metadata_value_init);
        // SAFETY: key is key.len() readable bytes; v writable.
        let r = check(|d| unsafe {
            sys::tblob_metadata_typed_find(self.raw(), key.as_ptr().cast(), key.len(), &mut v, d)
        });
        match r {
            // SAFETY: v was filled from self, which the result borrows.
            Ok(()) => Ok(Some(unsafe { TypedValue::from_raw(&v) })),
            Err(e) if e.status() == Status::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Reads `dst.len()` elements, from element `first`, of the numeric or bool array at typed
    /// index `index`, in host byte order. `T` must have the element's size (refused with
    /// Status::InvalidArgument otherwise, since the library checks only the byte count).
    pub fn metadata_array<T: MetaElement>(&self, index: u64, first: u64, dst: &mut [T]) -> Result<()> {
        let v = self.typed_metadata_at(index)?;
        if let MetaValue::Array { element, .. } = v.value {
            if let Some(size) = elem_size(element) {
                if size != std::mem::size_of::<T>() {
                    return Err(Error::new(
                        Status::InvalidArgument,
                        format!("array {index} has {size}-byte elements, dst {}-byte ones", std::mem::size_of::<T>()),
                    ));
                }
            }
        }
        let bytes = std::mem::size_of_val(dst);
        // SAFETY: dst is `bytes` writable bytes; the library writes at most that many.
        check(|d| unsafe {
            sys::tblob_metadata_array_get(self.raw(), index, first, dst.len() as u64, dst.as_mut_ptr().cast(), bytes, d)
        })
    }

    /// Elements `first..first + count` (None: through the last) of the string array at typed
    /// index `index`, borrowed from the model; each element after the first costs O(1).
    pub fn metadata_strings(&self, index: u64, first: u64, count: Option<u64>) -> Result<Vec<&[u8]>> {
        let total = match self.typed_metadata_at(index)?.value {
            MetaValue::Array { count, .. } => count,
            _ => 1,
        };
        // Past the end: one element, so that the library reports the range.
        let count = count.unwrap_or(if first <= total { total - first } else { 1 });
        let mut cursor: sys::tblob_metadata_cursor = init(sys::tblob_metadata_cursor_init);
        let mut out = Vec::with_capacity(count.min(total) as usize);
        for k in 0..count {
            let (mut s, mut len) = (ptr::null(), 0usize);
            let i = first.checked_add(k).ok_or_else(|| Error::new(Status::Range, "element index overflows"))?;
            // SAFETY: raw is open; cursor, s and len are writable.
            check(|d| unsafe {
                sys::tblob_metadata_array_string(self.raw(), index, i, &mut cursor, &mut s, &mut len, d)
            })?;
            // SAFETY: s points into the model, which the result borrows.
            out.push(unsafe { borrowed(s, len) });
        }
        Ok(out)
    }
}
