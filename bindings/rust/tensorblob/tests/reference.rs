//! The safe crate's listing equals what the reference implementation (the `safetensors`
//! crate) deserializes from the same bytes; what the reference rejects, tensorblob rejects.
mod common;

use common::Tally;

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
        common::check(&common::rel(p), &bytes, &mut t);
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
            common::check(&common::rel(&p), &bytes, &mut t);
            n += 1;
        }
    }
    eprintln!("{n} inputs: {t:?}");
    assert!(n >= 1000, "only {n} corpus inputs");
    // Both outcomes must be well represented for the comparison to mean anything.
    assert!(t.compared >= 100 && t.both_rejected >= 100, "{t:?}");
}
