//! Checks of tensorblob-sys against the real header; see build.rs and tests/.
#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals, dead_code)]
#![allow(clippy::all)]

/// bindgen's own declarations with its layout assertions: compiling this module checks size,
/// alignment and every field offset as libclang computes them.
pub mod clang_layout {
    include!(concat!(env!("OUT_DIR"), "/layout.rs"));
}

/// The same facts computed by rustc on the committed tensorblob-sys types.
pub mod rust_layout {
    include!(concat!(env!("OUT_DIR"), "/layout_rs.rs"));
}

/// The table the C compiler computed from the header (layout.c).
pub mod c_layout {
    #[repr(C)]
    pub struct Item {
        pub type_name: *const core::ffi::c_char,
        pub field: *const core::ffi::c_char,
        pub value: i64,
    }
    extern "C" {
        pub static systest_layout: [Item; 0];
        pub static systest_layout_count: usize;
    }
}

/// bindgen's output for the current header, as the committed file must read.
pub const GENERATED: &str = include_str!(concat!(env!("OUT_DIR"), "/bindings.rs"));
/// The committed declarations.
pub const COMMITTED: &str = include_str!("../../tensorblob-sys/src/bindings.rs");
