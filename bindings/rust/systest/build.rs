//! Runs bindgen on include/tensorblob.h (the only place bindgen is used) and writes to OUT_DIR:
//!  - bindings.rs: what tensorblob-sys/src/bindings.rs must equal (tests/drift.rs compares);
//!  - layout.rs: the same declarations with bindgen's layout assertions (size, alignment and
//!    field offsets as libclang computes them), compiled into this crate;
//!  - layout.c / layout_rs.rs: a table of sizeof/_Alignof/offsetof for every struct field and
//!    the value of every constant, computed by the C compiler on the real header, and the same
//!    table computed by rustc on the committed tensorblob-sys types (tests/layout.rs compares).
//!
//! `TENSORBLOB_BLESS=1 cargo build -p systest` rewrites the committed bindings.
use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;

fn builder(includes: &[PathBuf], layout_tests: bool) -> bindgen::Builder {
    let mut b = bindgen::Builder::default()
        // Experimental declarations are part of the raw surface too.
        .header_contents(
            "tensorblob_wrapper.h",
            "#define TBLOB_EXPERIMENTAL_API 1\n#include <tensorblob.h>\n",
        )
        .allowlist_function("tblob_.*")
        .allowlist_type("tblob_.*")
        .allowlist_var("TBLOB_.*")
        // The wrapper's own switch, not part of the API.
        .blocklist_item("TBLOB_EXPERIMENTAL_API")
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .use_core()
        .generate_comments(false)
        .derive_default(true)
        .merge_extern_blocks(true)
        .layout_tests(layout_tests)
        .rust_target(bindgen::RustTarget::stable(77, 0).expect("known target"))
        // prettyplease is pinned by Cargo.lock, so output does not depend on the local rustfmt.
        .formatter(bindgen::Formatter::Prettyplease);
    for dir in includes {
        b = b.clang_arg(format!("-I{}", dir.display()));
    }
    b
}

fn main() {
    println!("cargo:rerun-if-env-changed=TENSORBLOB_BLESS");
    println!("cargo:rerun-if-env-changed=DEP_TENSORBLOB_INCLUDE");
    let includes: Vec<PathBuf> = env::var_os("DEP_TENSORBLOB_INCLUDE")
        .map(|v| env::split_paths(&v).collect())
        .unwrap_or_default();
    let header = includes
        .iter()
        .map(|d| d.join("tensorblob.h"))
        .find(|p| p.is_file())
        .expect("tensorblob.h in the include directories tensorblob-sys reports");
    println!("cargo:rerun-if-changed={}", header.display());
    for dir in &includes {
        let v = dir.join("tensorblob_version.h");
        if v.is_file() {
            println!("cargo:rerun-if-changed={}", v.display());
        }
    }

    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap());
    let plain = builder(&includes, false)
        .generate()
        .expect("bindgen on tensorblob.h")
        .to_string();
    fs::write(out.join("bindings.rs"), &plain).unwrap();
    builder(&includes, true)
        .generate()
        .expect("bindgen on tensorblob.h (layout tests)")
        .write_to_file(out.join("layout.rs"))
        .unwrap();
    if env::var("TENSORBLOB_BLESS").map(|v| v == "1").unwrap_or(false) {
        let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap());
        fs::write(manifest.join("../tensorblob-sys/src/bindings.rs"), &plain).unwrap();
    }

    let (c, rs) = layout_tables(&plain);
    fs::write(out.join("layout.c"), c).unwrap();
    fs::write(out.join("layout_rs.rs"), rs).unwrap();
    let mut cc = cc::Build::new();
    cc.file(out.join("layout.c")).std("c11").warnings(false);
    for dir in &includes {
        cc.include(dir);
    }
    cc.compile("systest_layout");
}

/// Structs (with their public fields) and constants declared in bindgen's output.
fn parse(bindings: &str) -> (Vec<(String, Vec<String>)>, Vec<String>) {
    let mut structs = Vec::new();
    let mut consts = Vec::new();
    let mut current: Option<(String, Vec<String>)> = None;
    for line in bindings.lines() {
        let t = line.trim();
        if let Some((name, fields)) = current.as_mut() {
            if t == "}" {
                let done = (std::mem::take(name), std::mem::take(fields));
                current = None;
                // Opaque handles have no public fields: nothing to lay out.
                if !done.1.is_empty() {
                    structs.push(done);
                }
            } else if let Some(rest) = t.strip_prefix("pub ") {
                if let Some((field, _)) = rest.split_once(':') {
                    fields.push(field.trim().to_string());
                }
            }
            continue;
        }
        if let Some(rest) = t.strip_prefix("pub struct ") {
            if let Some(name) = rest.strip_suffix(" {") {
                current = Some((name.to_string(), Vec::new()));
            }
        } else if let Some(rest) = t.strip_prefix("pub const ") {
            if let Some((name, ty)) = rest.split_once(':') {
                // Integer constants only (string and float macros have no C integer value).
                let ty = ty.split('=').next().unwrap_or("").trim();
                if !ty.starts_with('&') && !ty.starts_with('f') {
                    consts.push(name.to_string());
                }
            }
        }
    }
    (structs, consts)
}

fn layout_tables(bindings: &str) -> (String, String) {
    let (structs, consts) = parse(bindings);
    let mut c = String::from(
        "#define TBLOB_EXPERIMENTAL_API 1\n#include <tensorblob.h>\n#include <stddef.h>\n\
         struct systest_item { const char *type; const char *field; long long value; };\n\
         const struct systest_item systest_layout[] = {\n",
    );
    let mut rs = String::from("pub const RUST_LAYOUT: &[(&str, &str, i64)] = &[\n");
    let mut n = 0usize;
    for (name, fields) in &structs {
        let _ = writeln!(c, "  {{\"{name}\", \"@size\", (long long)sizeof({name})}},");
        let _ = writeln!(c, "  {{\"{name}\", \"@align\", (long long)_Alignof({name})}},");
        let _ = writeln!(rs, "  (\"{name}\", \"@size\", core::mem::size_of::<tensorblob_sys::{name}>() as i64),");
        let _ = writeln!(rs, "  (\"{name}\", \"@align\", core::mem::align_of::<tensorblob_sys::{name}>() as i64),");
        n += 2;
        for f in fields {
            let cf = f.strip_prefix("r#").unwrap_or(f);
            let _ = writeln!(c, "  {{\"{name}\", \"{cf}\", (long long)offsetof({name}, {cf})}},");
            let _ = writeln!(rs, "  (\"{name}\", \"{cf}\", core::mem::offset_of!(tensorblob_sys::{name}, {f}) as i64),");
            n += 1;
        }
    }
    // Macros bindgen cannot evaluate, declared by hand in tensorblob-sys/src/lib.rs.
    let by_hand = [
        "TBLOB_NO_OFFSET",
        "TBLOB_ALL_ROWS",
        "TBLOB_LAYER_CONFIG_INDEX",
        "TBLOB_SOURCE_SIZE_UNKNOWN",
    ];
    for k in consts.iter().map(String::as_str).chain(by_hand.into_iter().filter(|k| !consts.iter().any(|c| c == k))) {
        let _ = writeln!(c, "  {{\"{k}\", \"@value\", (long long)({k})}},");
        let _ = writeln!(rs, "  (\"{k}\", \"@value\", tensorblob_sys::{k} as i64),");
        n += 1;
    }
    let _ = writeln!(c, "}};\nconst size_t systest_layout_count = {n};");
    rs.push_str("];\n");
    (c, rs)
}
