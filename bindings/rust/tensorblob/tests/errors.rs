//! Damaged input gives `Err` with the right status and byte offset, never a panic. Expected
//! offsets are computed here from where the damage was put.
mod common;

use proptest::prelude::*;
use tensorblob::{Model, Status};

/// A safetensors buffer: 8-byte little-endian header length, header, data.
fn st(header: &[u8], data: &[u8]) -> Vec<u8> {
    let mut b = (header.len() as u64).to_le_bytes().to_vec();
    b.extend_from_slice(header);
    b.extend_from_slice(data);
    b
}

fn at(header: &[u8], needle: &[u8]) -> u64 {
    8 + header.windows(needle.len()).position(|w| w == needle).unwrap() as u64
}

fn err(b: &[u8]) -> tensorblob::Error {
    Model::from_bytes(b).unwrap_err()
}

const ONE: &[u8] = br#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#;

#[test]
fn the_undamaged_buffer_opens() {
    let b = st(ONE, &[0; 8]);
    let m = Model::from_bytes(&b).unwrap();
    assert_eq!(m.get("a").unwrap().data(), &[0; 8]);
}

#[test]
fn short_buffers() {
    let e = err(&[1, 0, 0]);
    assert_eq!((e.status(), e.offset()), (Status::HeaderTooSmall, Some(0)));
    // Header length 100 but only 2 header bytes follow.
    let mut b = 100u64.to_le_bytes().to_vec();
    b.extend_from_slice(b"{}");
    let e = err(&b);
    assert_eq!((e.status(), e.offset()), (Status::HeaderLength, Some(0)));
    let e = err(&(100_000_001u64).to_le_bytes());
    assert_eq!(e.status(), Status::HeaderTooLarge);
}

#[test]
fn data_region_one_byte_short_or_long() {
    let b = st(ONE, &[0; 7]);
    let e = err(&b);
    // Reported at the end of the buffer, where the missing byte should be.
    assert_eq!((e.status(), e.offset()), (Status::Truncated, Some(b.len() as u64)));
    let b = st(ONE, &[0; 9]);
    let e = err(&b);
    // Reported at the first byte after the last tensor.
    assert_eq!((e.status(), e.offset()), (Status::TrailingBytes, Some(8 + ONE.len() as u64 + 8)));
}

#[test]
fn header_damage_is_reported_where_it_is() {
    let h = br#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}"#;
    let e = err(&st(h, &[0; 4]));
    assert_eq!((e.status(), e.offset(), e.tensor_index()), (Status::TensorSize, Some(at(h, b"\"a\"")), Some(0)));
    assert!(e.message().contains("\"a\""), "{e}");

    let h = br#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]]}"#;
    let e = err(&st(h, &[0; 8]));
    assert_eq!((e.status(), e.offset()), (Status::Json, Some(at(h, b"]]") + 1)));

    let h = b"{\"a\xff\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
    let e = err(&st(h, &[0; 8]));
    assert_eq!((e.status(), e.offset()), (Status::Utf8, Some(at(h, b"\xff"))));

    let h = br#"{"a":{"dtype":"F33","shape":[2],"data_offsets":[0,8]}}"#;
    let e = err(&st(h, &[0; 8]));
    assert_eq!((e.status(), e.offset()), (Status::Dtype, Some(at(h, b"\"F33\""))));

    // Stricter than the reference (docs/safetensors.md): "a" and "\u0061" are one name.
    let h = br#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"\u0061":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}"#;
    let e = err(&st(h, &[0; 2]));
    assert_eq!((e.status(), e.offset(), e.tensor_index()), (Status::DuplicateName, Some(at(h, b"\"\\u0061\"")), Some(1)));

    let h = br#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"U8","shape":[1],"data_offsets":[2,3]}}"#;
    let e = err(&st(h, &[0; 3]));
    assert_eq!((e.status(), e.offset()), (Status::Offsets, Some(at(h, b"\"b\""))));
}

#[test]
fn limits_have_their_own_statuses() {
    let b = st(ONE, &[0; 8]);
    let o = tensorblob::OpenOptions::new().max_rank(0);
    assert_eq!(Model::from_bytes_with(&b, &o).unwrap_err().status(), Status::LimitRank);
    let o = tensorblob::OpenOptions::new().max_header_bytes(10);
    assert_eq!(Model::from_bytes_with(&b, &o).unwrap_err().status(), Status::LimitHeaderBytes);
}

#[test]
fn errors_display_message_and_status_name() {
    let e = err(&st(ONE, &[0; 7]));
    assert_eq!(e.status().name(), "TBLOB_E_TRUNCATED");
    assert_eq!(e.status().code(), -33);
    assert_eq!(Status::from_code(-33), Some(Status::Truncated));
    assert_eq!(Status::from_code(0), None);
    assert_eq!(Status::from_code(-199), Some(Status::Other(-199)));
    let shown = e.to_string();
    assert!(shown.contains("TBLOB_E_TRUNCATED") && shown.contains(e.message()), "{shown}");
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(e);
    assert!(!boxed.to_string().is_empty());
}

#[test]
fn missing_files_and_unknown_names() {
    let e = Model::open("/nonexistent/tensorblob/model.safetensors").unwrap_err();
    assert_eq!(e.status(), Status::NotFound, "{e}");
    let b = st(ONE, &[0; 8]);
    let m = Model::from_bytes(&b).unwrap();
    assert!(m.get("b").is_none());
    assert_eq!(m.find("b").unwrap_err().status(), Status::NotFound);
    let e = m.get("a").unwrap().to_f32_vec().map(|v| v.len());
    assert_eq!(e, Ok(2));
    let ints = st(br#"{"i":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}}"#, &[0; 4]);
    let m = Model::from_bytes(&ints).unwrap();
    assert_eq!(m.get("i").unwrap().to_f32_vec().unwrap_err().status(), Status::NotDequantizable);
}

fn tiny_llama() -> Vec<u8> {
    std::fs::read(common::repo().join("examples/tiny-llama/model.safetensors")).unwrap()
}

proptest! {
    // Bounded for CI; raise PROPTEST_CASES locally for a longer run.
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random bytes: never a panic; whatever opens keeps every view inside the buffer; and
    /// accept/reject agrees with the reference.
    #[test]
    fn random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        if let Ok(m) = Model::from_bytes(&bytes) {
            let range = bytes.as_ptr_range();
            for t in m.tensors() {
                let d = t.tensor().data();
                prop_assert!(d.is_empty() || (range.start <= d.as_ptr() && d.as_ptr_range().end <= range.end));
            }
            let _ = m.metadata().count();
        }
        common::check("random", &bytes, &mut common::Tally::default());
    }

    /// Random bytes behind a plausible header length.
    #[test]
    fn random_header(len in 0u64..300, body in proptest::collection::vec(any::<u8>(), 0..300)) {
        let mut b = len.to_le_bytes().to_vec();
        b.extend_from_slice(&body);
        common::check("random header", &b, &mut common::Tally::default());
    }

    /// A real file with up to four bytes changed in its header: same verdict as the
    /// reference, the same listing when both accept.
    #[test]
    fn mutated_real_file(edits in proptest::collection::vec((0usize..1800, any::<u8>()), 1..5)) {
        let mut b = tiny_llama();
        for (pos, v) in edits {
            let p = pos % b.len();
            b[p] = v;
        }
        common::check("mutated tiny-llama", &b, &mut common::Tally::default());
    }
}

// The families the header documents for these statuses (tblob_family's comments), asked of the
// library: the crate spells no number ranges.
#[test]
fn status_families() {
    use tensorblob::Family;
    let cases = [
        (Status::InvalidArgument, Family::Argument, "argument"),
        (Status::OutOfMemory, Family::Memory, "memory"),
        (Status::Io, Family::Io, "io"),
        (Status::SourceShortRead, Family::Io, "io"),
        (Status::NotFound, Family::NotFound, "not-found"),
        (Status::TrailingBytes, Family::Format, "format"),
        (Status::GgufLayout, Family::Format, "format"),
        (Status::LimitTensors, Family::Limit, "limit"),
        (Status::DigestMismatch, Family::Digest, "digest"),
        (Status::Slm1Checksum, Family::Digest, "digest"),
        (Status::QuantPacking, Family::Dequant, "dequant"),
        (Status::FeatureDisabled, Family::Unsupported, "unsupported"),
        (Status::Cancelled, Family::Cancelled, "cancelled"),
    ];
    for (s, f, name) in cases {
        assert_eq!(s.family(), f, "{s}");
        assert_eq!(f.name(), name);
    }
    assert_eq!(Status::Other(-9999).family(), Family::Unknown(0));
    assert_eq!(Family::Unknown(0).name(), "unknown");
}

#[test]
fn features_list_the_build() {
    let f = tensorblob::features();
    assert!(f.contains(&"format:safetensors") && f.contains(&"format:safetensors-sharded"), "{f:?}");
    assert_eq!(f.last(), Some(&"kernel:scalar"), "{f:?}");
    assert!(f.iter().all(|e| e.starts_with("format:") || e.starts_with("kernel:")), "{f:?}");
}
