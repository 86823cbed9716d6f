#![allow(dead_code)]
use std::path::{Path, PathBuf};

/// The repository this workspace lives in (bindings/rust/tensorblob -> root).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

/// Every file under `dir` (recursively) whose name ends with `suffix`, sorted.
pub fn files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(suffix)) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A fuzz corpus entry is a file followed by a 3-byte options trailer (fuzz/fuzz_common.h).
pub fn corpus_files(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    files(&repo().join("fuzz/corpora").join(target), "")
        .into_iter()
        .map(|p| {
            let mut b = std::fs::read(&p).unwrap();
            if b.len() >= 3 {
                b.truncate(b.len() - 3);
            }
            (p, b)
        })
        .collect()
}

pub fn rel(p: &Path) -> String {
    p.strip_prefix(repo()).unwrap_or(p).display().to_string()
}
