//! Sizes, alignments and field offsets of every public struct, and the value of every integer
//! constant, as the C compiler sees the header, equal those of the committed Rust declarations.
use std::collections::BTreeMap;
use std::ffi::CStr;

fn c_table() -> BTreeMap<(String, String), i64> {
    let mut m = BTreeMap::new();
    // SAFETY: layout.c defines systest_layout with systest_layout_count items whose strings
    // are NUL-terminated literals; the table is immutable static data.
    unsafe {
        let base = systest::c_layout::systest_layout.as_ptr();
        for i in 0..systest::c_layout::systest_layout_count {
            let it = &*base.add(i);
            let t = CStr::from_ptr(it.type_name).to_str().unwrap().to_string();
            let f = CStr::from_ptr(it.field).to_str().unwrap().to_string();
            m.insert((t, f), it.value);
        }
    }
    m
}

#[test]
fn c_compiler_layout_equals_committed_declarations() {
    let c = c_table();
    let rust = systest::rust_layout::RUST_LAYOUT;
    assert_eq!(c.len(), rust.len(), "tables of different length");
    let structs = rust.iter().filter(|(_, f, _)| *f == "@size").count();
    // The sentinels tensorblob-sys declares by hand are compared too.
    assert!(rust.iter().any(|(k, f, v)| *k == "TBLOB_NO_OFFSET" && *f == "@value" && *v == -1));
    // The header has dozens of public structs; an empty table would prove nothing.
    assert!(structs >= 30, "only {structs} structs found in the bindings");
    let mut bad = Vec::new();
    for (t, f, v) in rust {
        let want = c.get(&(t.to_string(), f.to_string())).copied();
        if want != Some(*v) {
            bad.push(format!("{t}.{f}: C {want:?}, Rust {v}"));
        }
    }
    assert!(bad.is_empty(), "layout differs:\n{}", bad.join("\n"));
}

#[test]
fn linked_library_is_the_version_the_declarations_come_from() {
    // SAFETY: both return values of static storage (a number, a static NUL-terminated string).
    let (number, string) = unsafe { (tensorblob_sys::tblob_version(), CStr::from_ptr(tensorblob_sys::tblob_version_string())) };
    assert_eq!(number, tensorblob_sys::TBLOB_VERSION_NUMBER);
    assert_eq!(string.to_bytes_with_nul(), tensorblob_sys::TBLOB_VERSION_STRING);
}
