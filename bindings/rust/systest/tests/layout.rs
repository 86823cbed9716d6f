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
fn sentinels_written_by_hand_are_all_ones() {
    // The header defines these as UINT64_MAX; bindgen cannot evaluate that macro.
    assert_eq!(tensorblob_sys::TBLOB_NO_OFFSET, u64::MAX);
    assert_eq!(tensorblob_sys::TBLOB_ALL_ROWS, u64::MAX);
    assert_eq!(tensorblob_sys::TBLOB_LAYER_CONFIG_INDEX, u64::MAX);
}
