//! Typed metadata, kernel choice, store import and gc, and the quantizers, each against an
//! outside oracle: gguf-py's reading of tests/data/gguf/arrays.gguf (arrays.typed), ggml's
//! and MLX's quantized bytes (tests/data/ggml_quant, tests/data/quant), the `safetensors`
//! crate and the filesystem.
mod common;

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use safetensors::SafeTensors;
use tensorblob::{
    active_kernel, ggml_kernel, ggml_quantize, ggml_row_size, quant_quantize, quant_quantize_bytes, quant_size,
    set_kernel, DType, GcKind, GlobalScale, MetaElement, MetaType, MetaValue, Model, QuantDesc, QuantScheme,
    QuantizeOptions, Status, Store,
};

fn hex(b: &[u8]) -> String {
    if b.is_empty() {
        return "-".into();
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A value as tests/gguf/gen_typed_metadata.py writes gguf-py's.
fn spell(kind: MetaType, v: &MetaValue) -> String {
    match (kind, v) {
        (_, MetaValue::Uint(u)) => u.to_string(),
        (_, MetaValue::Int(i)) => i.to_string(),
        (_, MetaValue::Bool(b)) => u8::from(*b).to_string(),
        (MetaType::F32, MetaValue::Float(f)) => format!("{:08x}", (*f as f32).to_bits()),
        (_, MetaValue::Float(f)) => format!("{:016x}", f.to_bits()),
        (_, MetaValue::Str(s)) => hex(s),
        (_, MetaValue::Array { .. }) => "array".into(),
    }
}

fn read<T: MetaElement>(m: &Model, index: u64, n: u64) -> Vec<T> {
    let mut v = vec![T::default(); n as usize];
    m.metadata_array(index, 0, &mut v).unwrap();
    v
}

fn elements(m: &Model, index: u64, element: MetaType, n: u64) -> Vec<String> {
    let s = |v: Vec<String>| v;
    match element {
        MetaType::U8 | MetaType::Bool => s(read::<u8>(m, index, n).iter().map(|x| x.to_string()).collect()),
        MetaType::I8 => s(read::<i8>(m, index, n).iter().map(|x| x.to_string()).collect()),
        MetaType::U16 => s(read::<u16>(m, index, n).iter().map(|x| x.to_string()).collect()),
        MetaType::I16 => s(read::<i16>(m, index, n).iter().map(|x| x.to_string()).collect()),
        MetaType::U32 => s(read::<u32>(m, index, n).iter().map(|x| x.to_string()).collect()),
        MetaType::I32 => s(read::<i32>(m, index, n).iter().map(|x| x.to_string()).collect()),
        MetaType::U64 => s(read::<u64>(m, index, n).iter().map(|x| x.to_string()).collect()),
        MetaType::I64 => s(read::<i64>(m, index, n).iter().map(|x| x.to_string()).collect()),
        MetaType::F32 => s(read::<f32>(m, index, n).iter().map(|x| format!("{:08x}", x.to_bits())).collect()),
        MetaType::F64 => s(read::<f64>(m, index, n).iter().map(|x| format!("{:016x}", x.to_bits())).collect()),
        MetaType::String => m.metadata_strings(index, 0, None).unwrap().iter().map(|b| hex(b)).collect(),
        other => panic!("element type {other:?}"),
    }
}

#[test]
fn typed_metadata_matches_gguf_py() {
    let dir = common::repo().join("tests/data/gguf");
    let m = Model::open(dir.join("arrays.gguf")).unwrap();
    let text = std::fs::read_to_string(dir.join("arrays.typed")).unwrap();
    let mut kvs = 0u64;
    let mut want = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.first() {
            Some(&"file") => kvs = f[3].parse().unwrap(),
            Some(&"#") | None => {}
            _ => want.push(f.join(" ")),
        }
    }
    assert!(kvs > 0);
    assert_eq!(m.typed_metadata_len(), kvs);
    let mut got = Vec::new();
    for (i, v) in m.typed_metadata().unwrap().iter().enumerate() {
        assert_eq!(v.index, i as u64);
        let key = std::str::from_utf8(v.key).unwrap();
        match v.value {
            MetaValue::Array { element, count } => {
                let code = [MetaType::U8, MetaType::I8, MetaType::U16, MetaType::I16, MetaType::U32, MetaType::I32,
                    MetaType::F32, MetaType::Bool, MetaType::String, MetaType::Array, MetaType::U64, MetaType::I64,
                    MetaType::F64]
                    .iter()
                    .position(|t| *t == element)
                    .unwrap();
                got.push(format!("arr {key} {code} {count}"));
                for (k, e) in elements(&m, v.index, element, count).iter().enumerate() {
                    got.push(format!("el {k} {e}"));
                }
            }
            _ => {
                let code = [MetaType::U8, MetaType::I8, MetaType::U16, MetaType::I16, MetaType::U32, MetaType::I32,
                    MetaType::F32, MetaType::Bool, MetaType::String, MetaType::Array, MetaType::U64, MetaType::I64,
                    MetaType::F64]
                    .iter()
                    .position(|t| *t == v.kind)
                    .unwrap();
                got.push(format!("kv {key} {code} {}", spell(v.kind, &v.value)));
            }
        }
    }
    assert_eq!(got, want);

    let s = m.typed_metadata_find("a.string").unwrap().unwrap();
    assert_eq!(s.value, MetaValue::Array { element: MetaType::String, count: 5 });
    assert_eq!(m.metadata_strings(s.index, 3, Some(2)).unwrap()[1], b"a b");
    assert_eq!(m.metadata_strings(s.index, 4, Some(2)).unwrap_err().status(), Status::Range);
    assert!(m.typed_metadata_find("no.such.key").unwrap().is_none());
    let u16s = m.typed_metadata_find("a.u16").unwrap().unwrap();
    assert_eq!(m.metadata_array(u16s.index, 0, &mut [0u32; 1]).unwrap_err().status(), Status::InvalidArgument);
    assert_eq!(m.metadata_array(u16s.index, 2, &mut [0u16; 2]).unwrap_err().status(), Status::Range);
    let scalar = m.typed_metadata_find("s.u8").unwrap().unwrap();
    assert_eq!(m.metadata_array(scalar.index, 0, &mut [0u8; 1]).unwrap_err().status(), Status::InvalidArgument);
}

#[test]
fn kernel_set() {
    set_kernel(Some("scalar")).unwrap();
    assert_eq!((active_kernel(), ggml_kernel()), ("scalar", "scalar"));
    assert_eq!(set_kernel(Some("no-such-set")).unwrap_err().status(), Status::KernelUnavailable);
    assert_eq!(active_kernel(), "scalar", "a refused set changed the choice");
    set_kernel(None).unwrap();
    assert!(!active_kernel().is_empty());
}

struct Reader<'a>(&'a [u8]);
impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> &'a [u8] {
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        a
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take(4).try_into().unwrap())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take(8).try_into().unwrap())
    }
    fn f32s(&mut self, n: usize) -> Vec<f32> {
        self.take(4 * n).chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
    }
}

#[test]
fn ggml_quantize_matches_ggml() {
    let dir = common::repo().join("tests/data/ggml_quant");
    let inputs = std::fs::read(dir.join("inputs.bin")).unwrap();
    let mut r = Reader(&inputs);
    assert_eq!((r.take(4), r.u32()), (&b"TBQI"[..], 1));
    let (nc, nw) = (r.u32(), r.u32());
    let mut cases = Vec::new();
    for _ in 0..nc {
        let n = r.u32() as usize;
        r.take(n);
        let (rows, cols) = (r.u64(), r.u64());
        cases.push((rows, cols, r.f32s((rows * cols) as usize)));
    }
    let mut weights = Vec::new();
    for _ in 0..nw {
        let n = r.u32() as usize;
        r.take(n);
        let cols = r.u64() as usize;
        weights.push(r.f32s(cols));
    }
    let one = QuantizeOptions { threads: 1 };
    let mut checked = 0;
    for p in common::files(&dir, ".bin") {
        if p.ends_with("inputs.bin") {
            continue;
        }
        let b = std::fs::read(&p).unwrap();
        let mut r = Reader(&b);
        assert_eq!((r.take(4), r.u32()), (&b"TBQE"[..], 1));
        let (ty, n) = (r.u32(), r.u32());
        for _ in 0..n {
            let (ci, wi) = (r.u32() as usize, r.u32() as i32);
            let len = r.u64() as usize;
            let want = r.take(len);
            let (rows, cols, x) = &cases[ci];
            assert_eq!(ggml_row_size(ty, *cols).unwrap() * rows, len as u64, "{p:?} case {ci}");
            let imp = (wi >= 0).then(|| weights[wi as usize].as_slice());
            let got = ggml_quantize(ty, x, *rows, *cols, imp, &one).unwrap();
            assert!(got == want, "{p:?} case {ci} weights {wi}: bytes differ from ggml's");
            checked += 1;
        }
    }
    assert!(checked >= 16, "only {checked} records");
    assert_eq!(ggml_row_size(2, 33).unwrap_err().status(), Status::QuantGroupSize);
    let mut nan = vec![0f32; 32];
    nan[5] = f32::NAN;
    assert_eq!(ggml_quantize(8, &nan, 1, 32, None, &one).unwrap_err().status(), Status::QuantNonfinite);
}

#[test]
fn quant_quantize_matches_mlx() {
    let dir = common::repo().join("tests/data/quant");
    let manifest = std::fs::read_to_string(dir.join("manifest.txt")).unwrap();
    let blob = std::fs::read(dir.join("cases.bin")).unwrap();
    let mut r = Reader(&blob);
    let dtype = |s: &str| match s {
        "6" => DType::F16,
        "7" => DType::BF16,
        "10" => DType::F32,
        "16" => DType::F8E4M3,
        "17" => DType::F8E8M0,
        other => panic!("dtype {other}"),
    };
    let mut checked = 0;
    for line in manifest.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let n = |i: usize| f[i].parse::<u64>().unwrap();
        let scheme = match n(1) {
            1 => QuantScheme::MlxAffine,
            2 => QuantScheme::Mxfp4,
            3 => QuantScheme::Mxfp8,
            4 => QuantScheme::Nvfp4,
            s => panic!("scheme {s}"),
        };
        let g: Vec<u8> = (0..4).map(|i| u8::from_str_radix(&f[7][2 * i..2 * i + 2], 16).unwrap()).collect();
        let desc = QuantDesc {
            scheme,
            bits: n(2) as u32,
            group_size: n(3) as u32,
            scale_dtype: dtype(f[5]),
            bias_dtype: (scheme == QuantScheme::MlxAffine).then(|| dtype(f[5])),
            global_scale: if n(6) == 2 { GlobalScale::MlxAmax(f32::from_le_bytes(g.try_into().unwrap())) } else { GlobalScale::None },
            rows: n(8),
            cols: n(9),
        };
        let src_dtype = dtype(f[4]);
        let sizes = quant_size(&desc).unwrap();
        let elem = if src_dtype == DType::F32 { 4 } else { 2 };
        let src = r.take((desc.rows * desc.cols * elem) as usize).to_vec();
        let want = (r.take(sizes.data as usize).to_vec(), r.take(sizes.scales as usize).to_vec(), r.take(sizes.biases as usize).to_vec());
        let got = if src_dtype == DType::F32 {
            let x: Vec<f32> = src.chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
            quant_quantize(&desc, &x, &QuantizeOptions::default())
        } else {
            quant_quantize_bytes(&desc, src_dtype, &src, &QuantizeOptions::default())
        }
        .unwrap_or_else(|e| panic!("{}: {e}", f[0]));
        assert!((got.data, got.scales, got.biases) == want, "{}: differs from mx.quantize", f[0]);
        checked += 1;
    }
    assert!(r.0.is_empty() && checked >= 170, "{checked} cases, {} bytes left", r.0.len());
}

#[test]
fn store_import_and_gc() {
    let root = std::env::temp_dir().join(format!("tblob-rust-import-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("manifests")).unwrap();
    std::fs::create_dir_all(root.join("blobs")).unwrap();
    let src = common::repo().join("examples/tiny-llama");
    let store = Store::open(&root).unwrap();
    // Cancelled before the first blob: no manifest, so no model.
    let err = store.import_with_progress("tiny:1", &src, |_| ControlFlow::Break(())).unwrap_err();
    assert_eq!(err.status(), Status::Cancelled);
    assert_eq!(store.open_model("tiny:1").unwrap_err().status(), Status::OllamaModelNotFound);
    let mut seen = Vec::new();
    let first = store
        .import_with_progress("tiny:1", &src, |p| {
            seen.push(*p);
            ControlFlow::Continue(())
        })
        .unwrap();
    assert!(first.manifest_written && first.tensors == 21 && first.blobs_written > 0, "{first:?}");
    let last = seen.last().unwrap();
    assert_eq!((last.tensors_done, last.tensors_total, last.bytes_done), (21, 21, last.bytes_total), "{seen:?}");
    let again = store.import("tiny:1", &src).unwrap();
    assert!(!again.manifest_written && again.blobs_written == 0, "{again:?}");

    // The imported tensors are the source's, as the safetensors crate reads them.
    let bytes = std::fs::read(src.join("model.safetensors")).unwrap();
    let st = SafeTensors::deserialize(&bytes).unwrap();
    let want: BTreeMap<String, Vec<u8>> = st.iter().map(|(n, v)| (n.to_string(), v.data().to_vec())).collect();
    {
        let m = store.open_model("tiny:1").unwrap();
        assert_eq!(m.len(), want.len());
        for (name, data) in &want {
            assert_eq!(m.get(name).unwrap().data(), &data[..], "{name}");
        }
    }

    // Nothing to collect; then a stray blob, listed by the dry run and removed.
    let clean = store.gc(false, 0).unwrap();
    assert!(clean.entries.is_empty() && clean.manifests == 1 && clean.referenced_blobs > 0, "{clean:?}");
    let stray = format!("sha256-{}", "ab".repeat(32));
    std::fs::write(root.join("blobs").join(&stray), b"not referenced").unwrap();
    let dry = store.gc(false, 0).unwrap();
    assert_eq!(dry.entries.len(), 1);
    assert_eq!((dry.entries[0].kind, dry.entries[0].file_name.as_str(), dry.entries[0].size), (GcKind::Unreferenced, stray.as_str(), 14));
    assert!(root.join("blobs").join(&stray).exists(), "a dry run removed the file");
    let removed = store.gc(true, 0).unwrap();
    assert_eq!((removed.removed_files, removed.removed_bytes, removed.entries[0].remove_error), (1, 14, None));
    assert!(!root.join("blobs").join(&stray).exists());
    assert_eq!(store.open_model("tiny:1").unwrap().len(), want.len());
    drop(store);
    std::fs::remove_dir_all(&root).unwrap();
}
