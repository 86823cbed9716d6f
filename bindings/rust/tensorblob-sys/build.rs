//! Finds (or builds) the tensorblob C library and tells Cargo how to link it.
//!
//! Order:
//! 1. feature `bundled`: build this repository's sources with Meson into OUT_DIR as a static
//!    library and link that (needs meson, ninja, a C++17 compiler and the library's own
//!    dependencies; nothing installed of tensorblob itself);
//! 2. `TENSORBLOB_LIB_DIR`: link the library found in that directory (headers from
//!    `TENSORBLOB_INCLUDE_DIR` when set);
//! 3. pkg-config `tensorblob` (Meson's `meson-uninstalled` directory on PKG_CONFIG_PATH works
//!    for an uninstalled build).
//!
//! `TENSORBLOB_STATIC=1` links statically in cases 2 and 3. The include directories are
//! published to dependents as `DEP_TENSORBLOB_INCLUDE` (joined like PATH).
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const MIN_VERSION: &str = "0.1.0";
// Exclusive upper bound: the declarations are generated from a 0.1 header.
const MAX_VERSION: &str = "0.2.0";

fn main() {
    for var in [
        "TENSORBLOB_LIB_DIR",
        "TENSORBLOB_INCLUDE_DIR",
        "TENSORBLOB_STATIC",
        "PKG_CONFIG_PATH",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let statik = env::var("TENSORBLOB_STATIC").map(|v| v == "1").unwrap_or(false);

    let includes = if env::var_os("CARGO_FEATURE_BUNDLED").is_some() {
        bundled()
    } else if let Some(dir) = env::var_os("TENSORBLOB_LIB_DIR") {
        from_lib_dir(Path::new(&dir), statik)
    } else {
        from_pkg_config(statik)
    };
    if !includes.is_empty() {
        let joined = env::join_paths(&includes).expect("include directory with a separator");
        println!("cargo:include={}", joined.to_string_lossy());
    }
}

fn from_pkg_config(statik: bool) -> Vec<PathBuf> {
    let mut cfg = pkg_config::Config::new();
    cfg.range_version(MIN_VERSION..MAX_VERSION).statik(statik);
    match cfg.probe("tensorblob") {
        // With statik set the probe also emits Libs.private (-lstdc++) and Requires.private.
        Ok(lib) => lib.include_paths,
        Err(e) => panic!(
            "tensorblob not found by pkg-config ({e}).\n\
             Install the library, put <meson builddir>/meson-uninstalled on PKG_CONFIG_PATH, \
             set TENSORBLOB_LIB_DIR, or enable the `bundled` feature."
        ),
    }
}

fn from_lib_dir(dir: &Path, statik: bool) -> Vec<PathBuf> {
    println!("cargo:rustc-link-search=native={}", dir.display());
    if statik {
        println!("cargo:rustc-link-lib=static=tensorblob");
        link_static_deps();
    } else {
        println!("cargo:rustc-link-lib=dylib=tensorblob");
    }
    env::var_os("TENSORBLOB_INCLUDE_DIR")
        .map(|d| env::split_paths(&d).collect())
        .unwrap_or_default()
}

/// What a static libtensorblob.a needs besides itself: the C++ runtime and, when the Ollama
/// part is compiled in, libcrypto (simdjson is linked into the archive by Meson as a
/// static dependency only when it is static; ask pkg-config first).
fn link_static_deps() {
    for dep in ["libcrypto", "simdjson"] {
        // Missing optional deps are fine: the archive then does not reference them.
        let _ = pkg_config::Config::new().statik(false).probe(dep);
    }
    println!("cargo:rustc-link-lib=dylib={}", cxx_runtime());
}

fn cxx_runtime() -> &'static str {
    let target = env::var("TARGET").unwrap_or_default();
    if target.contains("apple") || target.contains("freebsd") || target.contains("android") {
        "c++"
    } else {
        "stdc++"
    }
}

/// Builds the repository's library with Meson (static, no tools/tests) into OUT_DIR.
fn bundled() -> Vec<PathBuf> {
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap());
    // bindings/rust/tensorblob-sys -> repository root.
    let root = manifest.join("../../..").canonicalize().expect("repository root");
    if !root.join("meson.build").is_file() {
        panic!("feature `bundled` needs the tensorblob repository around this crate ({} has no meson.build)", root.display());
    }
    for sub in ["meson.build", "meson_options.txt", "lib", "include"] {
        println!("cargo:rerun-if-changed={}", root.join(sub).display());
    }
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap());
    let build = out.join("meson-build");
    let profile_release = env::var("PROFILE").map(|p| p == "release").unwrap_or(false);
    if !build.join("build.ninja").is_file() {
        let status = Command::new("meson")
            .arg("setup")
            .arg(&build)
            .arg(&root)
            .args([
                "--default-library=static",
                "-Dtests=disabled",
                "-Dbenchmarks=disabled",
                "-Dcli=disabled",
                "-Dfuzzing=false",
                "-Db_staticpic=true",
            ])
            .arg(if profile_release { "--buildtype=release" } else { "--buildtype=debugoptimized" })
            .status()
            .expect("running meson (feature `bundled` needs meson and ninja on PATH)");
        assert!(status.success(), "meson setup failed");
    }
    let jobs = env::var("NUM_JOBS").unwrap_or_else(|_| "2".into());
    let status = Command::new("ninja")
        .arg("-C")
        .arg(&build)
        .arg("-j")
        .arg(&jobs)
        .arg("libtensorblob.a")
        .status()
        .expect("running ninja");
    assert!(status.success(), "ninja failed");

    println!("cargo:rustc-link-search=native={}", build.display());
    println!("cargo:rustc-link-lib=static=tensorblob");
    // The uninstalled .pc of the bundled build lists exactly the dependencies this
    // configuration found (libcrypto and simdjson when the Ollama part is built).
    let pc_dir = build.join("meson-uninstalled");
    let deps = Command::new("pkg-config")
        .env("PKG_CONFIG_PATH", &pc_dir)
        .args(["--static", "--libs-only-l", "--libs-only-L", "tensorblob"])
        .output()
        .expect("running pkg-config");
    assert!(deps.status.success(), "pkg-config on the bundled build failed");
    for flag in String::from_utf8_lossy(&deps.stdout).split_whitespace() {
        if let Some(lib) = flag.strip_prefix("-l") {
            if lib != "tensorblob" {
                println!("cargo:rustc-link-lib=dylib={lib}");
            }
        } else if let Some(dir) = flag.strip_prefix("-L") {
            if Path::new(dir) != build {
                println!("cargo:rustc-link-search=native={dir}");
            }
        }
    }
    vec![root.join("include"), build.join("include")]
}
