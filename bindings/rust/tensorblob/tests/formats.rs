//! Containers other than one safetensors buffer, each against an independent peer: the
//! files they were made from, read by the `safetensors` crate, or the expected values the C
//! tests use.
mod common;

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use safetensors::SafeTensors;
use tensorblob::{Format, Model, Status, Store};

/// name -> (dtype, shape, bytes) of every tensor in these safetensors files (reference crate).
fn reference(paths: &[std::path::PathBuf]) -> BTreeMap<String, (String, Vec<u64>, Vec<u8>)> {
    let mut out = BTreeMap::new();
    for p in paths {
        let bytes = std::fs::read(p).unwrap();
        let st = SafeTensors::deserialize(&bytes).unwrap();
        for (n, v) in st.iter() {
            let shape = v.shape().iter().map(|&d| d as u64).collect();
            out.insert(n.to_string(), (format!("{:?}", v.dtype()), shape, v.data().to_vec()));
        }
    }
    out
}

fn listing(m: &Model<'_>) -> BTreeMap<String, (String, Vec<u64>, Vec<u8>)> {
    m.tensors()
        .map(|t| {
            let v = (t.dtype().name().unwrap().to_string(), t.shape().to_vec(), t.tensor().data().to_vec());
            (t.name().to_string(), v)
        })
        .collect()
}

#[test]
fn sharded_checkpoint_is_the_union_of_its_shards() {
    let dir = common::repo().join("examples/sharded");
    let m = Model::open(&dir).unwrap();
    assert_eq!(m.format(), Format::SafetensorsSharded);
    assert_eq!(m.file_count(), 2);
    let mut names: Vec<String> =
        (0..2).map(|i| m.file_path(i).unwrap().file_name().unwrap().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]);
    assert!(m.file_path(2).is_none());
    let want = reference(&common::files(&dir, ".safetensors"));
    assert_eq!(want.len(), 21);
    assert_eq!(listing(&m), want);
    assert_eq!(m.metadata_get("format"), Some("pt"));
}

#[test]
fn ollama_store_models_hold_the_imported_file() {
    let store = Store::open(common::repo().join("examples/ollama-store/store")).unwrap();
    let models = store.models().unwrap();
    let names: Vec<&str> = models.iter().map(|m| m.short_name.as_str()).collect();
    assert_eq!(names, ["tiny-llama:latest", "tiny-llama:v1"]);
    assert!(models.iter().all(|m| m.error.is_none() && m.manifest_id.len() == 64 && m.tensor_layer_count == 21));
    // Both tags were imported from examples/tiny-llama/model.safetensors.
    let want = reference(&[common::repo().join("examples/tiny-llama/model.safetensors")]);
    for tag in ["tiny-llama", "tiny-llama:v1", "registry.ollama.ai/library/tiny-llama:latest"] {
        let m = store.open_model(tag).unwrap();
        assert_eq!(m.format(), Format::Ollama);
        assert_eq!(listing(&m), want, "{tag}");
        let full = if tag.ends_with(":v1") { "registry.ollama.ai/library/tiny-llama:v1" } else { "registry.ollama.ai/library/tiny-llama:latest" };
        assert_eq!(m.metadata_get("ollama.name"), Some(full));
    }
    let e = store.open_model("no-such-model:x").unwrap_err();
    assert_eq!(e.status(), Status::OllamaModelNotFound, "{e}");
    let e = store.open_model("Bad Name!").unwrap_err();
    assert_eq!(e.status(), Status::OllamaName, "{e}");
}

#[test]
fn store_verify_reports_progress_and_cancels() {
    let store = Store::open(common::repo().join("examples/ollama-store/store")).unwrap();
    let mut calls = Vec::new();
    let s = store
        .verify(|p| {
            calls.push(*p);
            ControlFlow::Continue(())
        })
        .unwrap();
    // 21 tensor blobs and one config, shared by both tags.
    assert_eq!(s.blobs, 22);
    assert_eq!(s.manifests, 2);
    let last = calls.last().unwrap();
    assert_eq!((last.blobs_done, last.blobs_total), (22, 22));
    assert_eq!(last.bytes_done, s.bytes_hashed);
    assert!(calls.windows(2).all(|w| w[0].bytes_done <= w[1].bytes_done));

    let mut n = 0;
    let e = store
        .verify(|_| {
            n += 1;
            ControlFlow::Break(())
        })
        .unwrap_err();
    assert_eq!((e.status(), n), (Status::Cancelled, 1));
    let one = store.verify_model("tiny-llama:v1", |_| ControlFlow::Continue(())).unwrap();
    assert_eq!(one.manifests, 1);
}

#[test]
fn a_store_refuses_calls_from_its_own_callback() {
    let store = Store::open(common::repo().join("examples/ollama-store/store")).unwrap();
    let other = Store::open(common::repo().join("examples/ollama-store/store")).unwrap();
    let mut seen = Vec::new();
    store
        .verify(|_| {
            seen.push(store.models().map(|_| ()).map_err(|e| e.status()));
            seen.push(store.open_model("tiny-llama").map(|_| ()).map_err(|e| e.status()));
            // Another handle is a different store: allowed.
            seen.push(other.models().map(|_| ()).map_err(|e| e.status()));
            ControlFlow::Break(())
        })
        .unwrap_err();
    assert_eq!(seen, [Err(Status::InvalidArgument), Err(Status::InvalidArgument), Ok(())]);
    // Outside the callback the store works again.
    assert_eq!(store.models().unwrap().len(), 2);
}

#[test]
#[should_panic(expected = "from the progress callback")]
fn a_panicking_callback_unwinds_to_the_caller() {
    let store = Store::open(common::repo().join("examples/ollama-store/store")).unwrap();
    let _ = store.verify(|_| panic!("from the progress callback"));
}

/// FNV-1a 64, written out here as the peer of the C tests' hashes.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100000001b3))
}

#[test]
fn uqff_ggml_layers_dequantize_to_gguf_values() {
    let real = common::repo().join("tests/data/uqff/real");
    let text = std::fs::read_to_string(real.join("expected_ggml.txt")).unwrap();
    let mut open: BTreeMap<String, Model<'static>> = BTreeMap::new();
    let mut checked = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (export, name, n, hash) = (f[0], f[1], f[3].parse::<usize>().unwrap(), f[4]);
        let m = open.entry(export.to_string()).or_insert_with(|| Model::open(real.join(export)).unwrap());
        assert_eq!(m.format(), Format::Uqff);
        let v = m.get(name).unwrap().to_f32_vec().unwrap_or_else(|e| panic!("{export} {name}: {e}"));
        assert_eq!(v.len(), n, "{export} {name}");
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        assert_eq!(format!("{:016x}", fnv1a64(&bytes)), hash, "{export} {name}");
        checked += 1;
    }
    assert!(checked >= 63, "{checked}");

    // The same set opened from its shard list instead of the directory.
    let dir = real.join("dense/q8_0");
    let shards = common::files(&dir, ".uqff");
    assert_eq!(shards.len(), 1);
    let by_list = Model::open_uqff(&shards, &tensorblob::OpenOptions::new()).unwrap();
    let by_dir = &open["dense/q8_0"];
    let names = |m: &Model<'_>| m.tensors().filter(|t| t.name().ends_with(".weight")).map(|t| t.name().to_string()).collect::<Vec<_>>();
    assert!(!names(by_dir).is_empty());
    assert_eq!(names(&by_list), names(by_dir));
}

/// The writer's quantization (tests/data/slm1/gen_golden.py), redone here: scale = amax/qmax
/// in f32 (1 when 0), codes rounded half to even and clamped, decoded as code * scale.
fn slm1_expected(values: &[f32], group: usize, qmax: f32) -> Vec<f32> {
    values
        .chunks(group)
        .flat_map(|g| {
            let amax = g.iter().fold(0f32, |a, v| a.max(v.abs()));
            let s = if amax / qmax == 0.0 { 1.0 } else { amax / qmax };
            g.iter().map(move |&x| (x / s).round_ties_even().clamp(-qmax, qmax) * s)
        })
        .collect()
}

#[test]
fn slm1_files_open_with_their_names_and_dequantize() {
    let p = common::repo().join("tests/data/slm1/tiny_btok.slm");
    let anon = Model::open(&p).unwrap();
    assert_eq!(anon.format(), Format::Slm1);
    assert_eq!(anon.len(), 3);
    // Files store only name hashes: unlisted tensors are labelled with the hash.
    let label = format!("fnv1a:{:016x}", fnv1a64(b"norm.weight"));
    assert!(anon.tensors().any(|t| t.name() == label), "no {label}");

    let names = ["norm.weight", "attn.q.weight", "ffn.up.weight"];
    let m = Model::open_slm1(&p, &names, &tensorblob::OpenOptions::new()).unwrap();
    let norm = m.get("norm.weight").unwrap().to_f32_vec().unwrap();
    assert_eq!(norm, [1.0, 0.5, -2.0, 0.25]);
    let q8 = [127.0, 2.5, -3.5, -0.5, 1.0, -2.0, 3.0, -4.0];
    let got = m.get("attn.q.weight").unwrap().to_f32_vec().unwrap();
    assert_eq!(got, slm1_expected(&q8, 4, 127.0));
    let q4 = [7.0, 3.5, -2.5, 0.5, 1.0, 2.0, 3.0, 4.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0.5, 0.0, 0.25];
    let got = m.get("ffn.up.weight").unwrap().to_f32_vec().unwrap();
    assert_eq!(got, slm1_expected(&q4, 4, 7.0));
}

#[test]
fn read_mode_and_memory_give_the_mapped_listing() {
    let p = common::repo().join("examples/tiny-llama/model.safetensors");
    let mapped = Model::open(&p).unwrap();
    let read = Model::open_with(&p, &tensorblob::OpenOptions::new().mode(tensorblob::OpenMode::Read)).unwrap();
    let bytes = std::fs::read(&p).unwrap();
    let memory = Model::from_bytes(&bytes).unwrap();
    assert_eq!(listing(&read), listing(&mapped));
    assert_eq!(listing(&memory), listing(&mapped));
    // The memory model's views point into the caller's buffer: zero copy.
    let t = memory.get("lm_head.weight").unwrap();
    let off = t.info().file_offset() as usize;
    assert_eq!(t.data().as_ptr(), bytes[off..].as_ptr());
    assert_eq!(memory.file_path(0), Some(std::path::Path::new("")));
}

#[test]
fn compact_preset_limits() {
    // A name of 1,025 bytes: over the compact preset's 1 KiB, fine by default.
    let long = "n".repeat(1025);
    let header = format!(r#"{{"{long}":{{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}}}"#);
    let mut b = (header.len() as u64).to_le_bytes().to_vec();
    b.extend_from_slice(header.as_bytes());
    b.push(7);
    assert_eq!(Model::from_bytes(&b).unwrap().get(&long).unwrap().data(), [7]);
    let e = Model::from_bytes_with(&b, &tensorblob::OpenOptions::compact()).unwrap_err();
    assert_eq!((e.status(), e.offset()), (Status::LimitNameBytes, Some(9)));
}

#[test]
fn slm1_names_with_one_hash_are_refused() {
    let pair = std::fs::read_to_string(common::repo().join("tests/data/slm1/fnv1a_collision.txt")).unwrap();
    let names: Vec<&str> = pair.lines().filter(|l| !l.starts_with('#') && !l.is_empty()).collect();
    assert_eq!(names.len(), 2);
    assert_ne!(names[0], names[1]);
    assert_eq!(fnv1a64(names[0].as_bytes()), fnv1a64(names[1].as_bytes()));
    let p = common::repo().join("tests/data/slm1/tiny_btok.slm");
    let e = Model::open_slm1(&p, &names, &tensorblob::OpenOptions::new()).unwrap_err();
    assert_eq!(e.status(), Status::HashCollision, "{e}");
    // One of them listed: the other is refused by lookup rather than guessed.
    let m = Model::open_slm1(&p, &names[..1], &tensorblob::OpenOptions::new()).unwrap();
    assert!(m.get(names[1]).is_none());
}

/// GGUF (docs/gguf.md): a file the `gguf` package wrote opens as Format::Gguf, its q4_0 tensor
/// dequantizes to what gguf.quants.dequantize gave (tests/data/gguf/good_v3.manifest + .f32),
/// and a big-endian file is refused with its own status.
#[test]
fn gguf_files_open_and_dequantize_to_gguf_values() {
    let dir = common::repo().join("tests/data/gguf");
    let m = Model::open(dir.join("good_v3.gguf")).unwrap();
    assert_eq!(m.format(), Format::Gguf);
    assert_eq!(m.metadata_get("general.architecture"), Some("llama"));
    let manifest = std::fs::read_to_string(dir.join("good_v3.manifest")).unwrap();
    let line = manifest.lines().find(|l| l.starts_with("tensor q4_0 ")).unwrap();
    let f: Vec<&str> = line.split_whitespace().collect();
    let rank: usize = f[5].parse().unwrap();
    let dims: Vec<u64> = f[6..6 + rank].iter().map(|d| d.parse().unwrap()).collect();
    let at: usize = f[6 + rank].parse().unwrap();
    let t = m.get("q4_0").unwrap();
    assert_eq!(t.shape(), &dims[..]);
    let n: usize = dims.iter().product::<u64>() as usize;
    let expected = std::fs::read(dir.join("good_v3.f32")).unwrap();
    let want: Vec<u32> = expected[at * 4..(at + n) * 4].chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    let got: Vec<u32> = t.to_f32_vec().unwrap().iter().map(|v| v.to_bits()).collect();
    assert_eq!(got, want);
    let e = Model::open(dir.join("big_endian.gguf")).unwrap_err();
    assert_eq!(e.status(), Status::GgufBigEndian);
}
