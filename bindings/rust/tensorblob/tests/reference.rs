//! The safe crate's listing equals what the reference implementation (the `safetensors`
//! crate) deserializes from the same bytes; what the reference rejects, tensorblob rejects.
mod common;

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

use safetensors::SafeTensors;
use tensorblob::{Format, Model, Status};

/// Statuses with which tensorblob refuses files the reference accepts, each documented in
/// docs/safetensors.md ("Our policy: stricter than the reference").
const STRICTER: &[Status] = &[Status::DuplicateName, Status::Metadata, Status::Schema];

#[derive(Default, Debug)]
struct Tally {
    compared: usize,
    both_rejected: usize,
    stricter: usize,
    other_format: usize,
}

fn check(name: &str, bytes: &[u8], t: &mut Tally) {
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

#[test]
fn every_safetensors_file_in_the_repository_lists_as_the_reference_reads_it() {
    let root = common::repo();
    let mut paths = common::files(&root.join("examples"), ".safetensors");
    paths.extend(common::files(&root.join("tests"), ".safetensors"));
    // 204 committed files when this test was written; far fewer means the walk broke.
    assert!(paths.len() >= 200, "found only {} .safetensors files", paths.len());
    let mut t = Tally::default();
    for p in &paths {
        let bytes = std::fs::read(p).unwrap();
        check(&common::rel(p), &bytes, &mut t);
    }
    eprintln!("{t:?}");
    assert!(t.compared >= 190, "{t:?}");
}

#[test]
fn fuzz_corpora_are_accepted_and_rejected_as_the_reference_does() {
    let mut t = Tally::default();
    let mut n = 0;
    for target in ["fuzz_st_scan", "fuzz_open_memory"] {
        for (p, bytes) in common::corpus_files(target) {
            check(&common::rel(&p), &bytes, &mut t);
            n += 1;
        }
    }
    eprintln!("{n} inputs: {t:?}");
    assert!(n >= 1000, "only {n} corpus inputs");
    // Both outcomes must be well represented for the comparison to mean anything.
    assert!(t.compared >= 100 && t.both_rejected >= 100, "{t:?}");
}
