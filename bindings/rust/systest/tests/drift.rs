//! The committed tensorblob-sys declarations must be exactly what bindgen makes of the header.

#[test]
fn committed_bindings_match_header() {
    let (gen, com) = (systest::GENERATED, systest::COMMITTED);
    if gen == com {
        return;
    }
    let line = gen
        .lines()
        .zip(com.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| gen.lines().count().min(com.lines().count()));
    panic!(
        "tensorblob-sys/src/bindings.rs differs from bindgen's output for include/tensorblob.h \
         from line {}:\n  header:    {:?}\n  committed: {:?}\n\
         Regenerate with: TENSORBLOB_BLESS=1 cargo build -p systest",
        line + 1,
        gen.lines().nth(line).unwrap_or("<end>"),
        com.lines().nth(line).unwrap_or("<end>"),
    );
}
