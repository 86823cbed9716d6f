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

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

use safetensors::SafeTensors;
use tensorblob::{Format, Model, Status};

/// Statuses with which tensorblob refuses files the reference accepts, each documented in
/// docs/safetensors.md ("Our policy: stricter than the reference").
pub const STRICTER: &[Status] = &[Status::DuplicateName, Status::Metadata, Status::Schema];

#[derive(Default, Debug)]
pub struct Tally {
    pub compared: usize,
    pub both_rejected: usize,
    pub stricter: usize,
    pub other_format: usize,
}

/// Opens `bytes` with tensorblob and with the reference and asserts they agree.
pub fn check(name: &str, bytes: &[u8], t: &mut Tally) {
    // The reference panics on some overflowing offsets in debug builds: that is a rejection.
    let reference = catch_unwind(AssertUnwindSafe(|| {
        SafeTensors::deserialize(bytes).map(|st| {
            let meta = SafeTensors::read_metadata(bytes).unwrap().1;
            let tensors: Vec<(String, String, Vec<u64>, Vec<u8>)> = st
                .iter()
                .map(|(n, v)| {
                    let shape = v.shape().iter().map(|&d| d as u64).collect();
                    (n.to_string(), format!("{:?}", v.dtype()), shape, v.data().to_vec())
                })
                .collect();
            (tensors, meta.metadata().clone().unwrap_or_default())
        })
    }))
    .ok()
    .and_then(|r| r.ok());
    let ours = Model::from_bytes(bytes);

    match (reference, ours) {
        (None, Err(_)) => t.both_rejected += 1,
        (_, Ok(m)) if m.format() != Format::Safetensors => t.other_format += 1,
        (None, Ok(m)) => panic!("{name}: the reference rejects it, tensorblob opened {} tensors", m.len()),
        (Some(_), Err(e)) => {
            assert!(STRICTER.contains(&e.status()), "{name}: the reference accepts it, tensorblob: {e}");
            t.stricter += 1;
        }
        (Some((tensors, meta)), Ok(m)) => {
            assert_eq!(m.len(), tensors.len(), "{name}: tensor count");
            assert_eq!(m.tensors().count(), tensors.len(), "{name}: iterator length");
            for (n, dtype, shape, data) in &tensors {
                let got = m.get(n).unwrap_or_else(|| panic!("{name}: tensor {n:?} missing"));
                assert_eq!(got.name(), n);
                assert_eq!(got.dtype().name(), Some(dtype.as_str()), "{name}: {n} dtype");
                assert_eq!(got.shape(), &shape[..], "{name}: {n} shape");
                assert!(got.data() == &data[..], "{name}: {n} data bytes differ");
            }
            // Names are unique in our table, so equal counts plus every reference name found
            // means equal sets; the listing walks the same rows.
            for info in m.tensors() {
                assert!(tensors.iter().any(|(n, ..)| n == info.name()), "{name}: extra {:?}", info.name());
            }
            let ours: HashMap<String, String> =
                m.metadata().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            assert_eq!(m.metadata().len(), ours.len(), "{name}: duplicate metadata keys listed");
            assert_eq!(ours, meta, "{name}: metadata");
            t.compared += 1;
        }
    }
}

