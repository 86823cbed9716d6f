//! Dequantization equals the expected values the C tests use: MLX's own output for the MLX
//! fixtures (tests/data/dequant, written by tests/oracles/gen_mlx_fixtures.py) and gguf-py's
//! for the GGML blocks (tests/data/ggml).
mod common;

use tensorblob::{ggml_dequantize, DequantOptions, Model, Status, Stores};

struct Case {
    name: String,
    rows: u64,
    cols: u64,
    amax: bool,
}

fn manifest() -> (String, Vec<Case>) {
    let text = std::fs::read_to_string(common::repo().join("tests/data/dequant/manifest.txt")).unwrap();
    let mut special = String::new();
    let mut cases = Vec::new();
    for line in text.lines() {
        if let Some(s) = line.strip_prefix("# special ") {
            special = s.trim().to_string();
        }
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        cases.push(Case {
            name: f[0].to_string(),
            rows: f[5].parse().unwrap(),
            cols: f[6].parse().unwrap(),
            amax: f[7] == "mlx_amax",
        });
    }
    (special, cases)
}

fn expected_bytes(case: &str, tensor: &str) -> Vec<u8> {
    let p = common::repo().join(format!("tests/data/dequant/mlx_expected/{case}.safetensors"));
    let m = Model::open(&p).unwrap();
    let data = m.get(tensor).unwrap().data().to_vec();
    data
}

fn f32_nan(b: &[u8]) -> bool {
    f32::from_le_bytes(b.try_into().unwrap()).is_nan()
}
#[cfg(feature = "half")]
fn f16_nan(b: &[u8]) -> bool {
    half::f16::from_le_bytes(b.try_into().unwrap()).is_nan()
}
#[cfg(feature = "half")]
fn bf16_nan(b: &[u8]) -> bool {
    half::bf16::from_le_bytes(b.try_into().unwrap()).is_nan()
}

/// Counts elements whose bit patterns differ; where the oracle has NaN and `nan_free` is set,
/// any value passes (the fixtures' MLX decodes E4M3 0x7F as NaN, models of Ollama blobs as
/// 480, as tests/dequant/test_dequant_api.cpp allows).
fn mismatches(got: &[u8], want: &[u8], width: usize, nan: fn(&[u8]) -> bool, nan_free: bool) -> usize {
    assert_eq!(got.len(), want.len());
    got.chunks(width)
        .zip(want.chunks(width))
        .filter(|(g, w)| g != w && !(nan_free && nan(w)))
        .count()
}

#[test]
fn mlx_fixtures_dequantize_to_mlx_values() {
    let (special, cases) = manifest();
    assert!(cases.len() >= 70, "only {} cases", cases.len());
    let nan_free = special == "mlx0324";
    let mut checked = 0;
    for c in cases.iter().filter(|c| !c.amax) {
        let p = common::repo().join(format!("tests/data/dequant/mlx/{}.safetensors", c.name));
        let m = Model::open(&p).unwrap();
        let w = m.get("w").unwrap();
        assert!(w.info().is_quantized(), "{}", c.name);
        let q = w.quant_info().unwrap();
        assert_eq!((q.rows, q.cols, q.status), (c.rows, c.cols, None), "{}", c.name);
        assert_eq!(w.dequantized_len().unwrap() as u64, c.rows * c.cols);
        let got: Vec<u8> = w.to_f32_vec().unwrap().iter().flat_map(|v| v.to_le_bytes()).collect();
        let want = expected_bytes(&c.name, "w");
        assert_eq!(mismatches(&got, &want, 4, f32_nan, nan_free), 0, "{} f32", c.name);
        // On several threads, a row per piece, and with the library's own choices: the same
        // oracle values.
        for opts in [
            DequantOptions { threads: 3, piece_bytes: c.cols * 4, ..Default::default() },
            DequantOptions::default(),
            DequantOptions { threads: 2, stores: Stores::Stream, ..Default::default() },
            DequantOptions { threads: 2, piece_bytes: c.cols * 4, stores: Stores::Cache },
        ] {
            let mut par = vec![0f32; (c.rows * c.cols) as usize];
            w.dequantize_with(0..u64::MAX, &mut par, &opts).unwrap();
            let par: Vec<u8> = par.iter().flat_map(|v| v.to_le_bytes()).collect();
            assert_eq!(mismatches(&par, &want, 4, f32_nan, nan_free), 0, "{} f32 {:?}", c.name, opts);
        }
        checked += 1;
    }
    assert!(checked >= 70);
}

#[cfg(feature = "half")]
#[test]
fn mlx_fixtures_dequantize_to_f16_and_bf16() {
    let (special, cases) = manifest();
    let nan_free = special == "mlx0324";
    let mut checked = 0;
    for c in cases.iter().filter(|c| !c.amax) {
        let p = common::repo().join(format!("tests/data/dequant/mlx/{}.safetensors", c.name));
        let m = Model::open(&p).unwrap();
        let w = m.get("w").unwrap();
        let f16: Vec<u8> = w.to_f16_vec().unwrap().iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(mismatches(&f16, &expected_bytes(&c.name, "w.f16"), 2, f16_nan, nan_free), 0, "{} f16", c.name);
        let bf16: Vec<u8> = w.to_bf16_vec().unwrap().iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(mismatches(&bf16, &expected_bytes(&c.name, "w.bf16"), 2, bf16_nan, nan_free), 0, "{} bf16", c.name);
        checked += 1;
    }
    assert!(checked >= 70);
}

#[test]
fn row_ranges_are_the_rows_of_the_whole() {
    let p = common::repo().join("tests/data/dequant/mlx/affine_b4_g32_bf16_3d.safetensors");
    let m = Model::open(p).unwrap();
    let w = m.get("w").unwrap();
    let q = w.quant_info().unwrap();
    assert!(q.rows >= 3);
    let all = w.to_f32_vec().unwrap();
    let cols = q.cols as usize;
    let mut part = vec![f32::NAN; 2 * cols + 1];
    w.dequantize_rows_into(1..3, &mut part).unwrap();
    assert_eq!(part[..2 * cols].iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
               all[cols..3 * cols].iter().map(|v| v.to_bits()).collect::<Vec<_>>());
    // The value past the requested rows is left untouched.
    assert!(part[2 * cols].is_nan());
    // Too small a buffer is an error, not a partial write.
    let mut small = vec![0f32; 2 * cols - 1];
    assert_eq!(w.dequantize_rows_into(1..3, &mut small).unwrap_err().status(), Status::BufferTooSmall);
    // A reversed row range, as a caller computing bounds might pass it.
    let (begin, end) = (3, 1);
    assert_eq!(w.dequantize_rows_into(begin..end, &mut part).unwrap_err().status(), Status::Range);
}

#[test]
fn ggml_blocks_dequantize_to_gguf_values() {
    let dir = common::repo().join("tests/data/ggml");
    let text = std::fs::read_to_string(dir.join("MANIFEST")).unwrap();
    let mut seen = 0;
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (id, name, elements): (u32, &str, usize) = (f[0].parse().unwrap(), f[1], f[3].parse().unwrap());
        let blocks = std::fs::read(dir.join(format!("{name}.blocks"))).unwrap();
        let want = std::fs::read(dir.join(format!("{name}.f32"))).unwrap();
        assert_eq!(want.len(), elements * 4, "{name}");
        let mut got = vec![0f32; elements];
        ggml_dequantize(id, &blocks, &mut got).unwrap_or_else(|e| panic!("{name}: {e}"));
        let got: Vec<u8> = got.iter().flat_map(|v| v.to_le_bytes()).collect();
        assert!(got == want, "{name}: values differ from gguf-py's");
        seen += 1;
    }
    assert!(seen >= 12);
    // 64 Q4_0 values take two 18-byte blocks: 17 bytes are refused, naming both numbers.
    let mut out = vec![0f32; 64];
    let e = ggml_dequantize(2, &[0u8; 17], &mut out).unwrap_err();
    assert_eq!(e.status(), Status::TensorSize, "{e}");
    assert!(e.message().contains("36") && e.message().contains("17"), "{e}");
}
