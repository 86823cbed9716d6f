//! One Model shared by several threads reading and dequantizing at once gives what one thread
//! gets alone.
mod common;

use tensorblob::Model;

type Snap = Vec<(String, Vec<u8>, Vec<u32>)>;

/// Every tensor's name, bytes and f32 bits (empty when not dequantizable), in table order;
/// walked backwards when `rev` is set.
fn snapshot(m: &Model<'_>, rev: bool) -> Snap {
    let order: Vec<_> = if rev { m.tensors().rev().collect() } else { m.tensors().collect() };
    let mut s: Snap = order
        .into_iter()
        .map(|t| {
            let tensor = t.tensor();
            let values = tensor.to_f32_vec().map(|v| v.iter().map(|x| x.to_bits()).collect()).unwrap_or_default();
            (t.name().to_string(), tensor.data().to_vec(), values)
        })
        .collect();
    if rev {
        s.reverse();
    }
    s
}

#[test]
fn one_model_many_threads() {
    // A quantized MLX blob and a plain checkpoint, read from memory and from a mapping.
    let mlx = std::fs::read(common::repo().join("tests/data/dequant/mlx/affine_b4_g64_bf16.safetensors")).unwrap();
    let models = [
        Model::from_bytes(&mlx).unwrap(),
        Model::open(common::repo().join("examples/tiny-llama/model.safetensors")).unwrap(),
        Model::open(common::repo().join("examples/sharded")).unwrap(),
    ];
    for m in &models {
        let alone = snapshot(m, false);
        assert!(alone.iter().any(|(_, _, v)| !v.is_empty()), "nothing dequantized");
        let results: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|i| {
                    s.spawn(move || {
                        // Different threads walk the table in different orders.
                        let mut got = Vec::new();
                        for _ in 0..4 {
                            got = snapshot(m, i % 2 == 1);
                        }
                        let name = &got[i % got.len()].0;
                        assert!(m.get(name).is_some());
                        got
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for r in results {
            assert!(r == alone, "a thread saw different bytes or values");
        }
    }
}

// Compile-time: shared handles cross threads (a model without Sync would not build here).
#[allow(dead_code)]
fn model_and_store_are_send_and_sync() {
    fn both<T: Send + Sync>() {}
    both::<Model<'static>>();
    both::<tensorblob::Store>();
    both::<tensorblob::Tensor<'static>>();
}
