//! Models read through a `Read + Seek` (`Model::open_reader`): only the header is read at
//! open, a tensor read adds exactly its bytes, values equal the path-opened model's (and the
//! `safetensors` crate's bytes), and a reader that ends early is `SourceShortRead`.
mod common;

use std::io::{Cursor, ErrorKind, Read, Seek, SeekFrom};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use safetensors::SafeTensors;
use tensorblob::{Model, OpenOptions, ReadSeek, SiblingOpener, Status};

/// A reader over bytes that counts what it hands out and can be told to lie: return half of
/// each read and then end, inside the size it reported.
struct Counting {
    inner: Cursor<Vec<u8>>,
    read: Arc<AtomicU64>,
    lie: Arc<AtomicBool>,
    fail: Arc<AtomicBool>,
}

impl Read for Counting {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.fail.load(Ordering::SeqCst) {
            return Err(std::io::Error::other("disk on fire"));
        }
        let n = if self.lie.load(Ordering::SeqCst) {
            // Half of what was asked, then end of file.
            let half = buf.len().div_ceil(2);
            let n = self.inner.read(&mut buf[..half])?;
            self.inner.set_position(self.inner.get_ref().len() as u64);
            n
        } else {
            self.inner.read(buf)?
        };
        self.read.fetch_add(n as u64, Ordering::SeqCst);
        Ok(n)
    }
}

impl Seek for Counting {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(pos)
    }
}

struct Handles {
    read: Arc<AtomicU64>,
    lie: Arc<AtomicBool>,
    fail: Arc<AtomicBool>,
}

fn counting(bytes: Vec<u8>) -> (Counting, Handles) {
    let h = Handles { read: Arc::default(), lie: Arc::default(), fail: Arc::default() };
    let c = Counting { inner: Cursor::new(bytes), read: h.read.clone(), lie: h.lie.clone(), fail: h.fail.clone() };
    (c, h)
}

fn tiny() -> (std::path::PathBuf, Vec<u8>) {
    let p = common::repo().join("examples/tiny-llama/model.safetensors");
    let b = std::fs::read(&p).unwrap();
    (p, b)
}

/// 8 + the header length the file's first 8 bytes give (the safetensors definition).
fn header_end(b: &[u8]) -> u64 {
    8 + u64::from_le_bytes(b[..8].try_into().unwrap())
}

#[test]
fn open_reads_only_the_header() {
    let (path, bytes) = tiny();
    let end = header_end(&bytes);
    let (r, h) = counting(bytes);
    let m = Model::open_reader(r).unwrap();
    assert_eq!(h.read.load(Ordering::SeqCst), end, "bytes read at open");
    let reference = Model::open(&path).unwrap();
    assert_eq!(m.format(), reference.format());
    let a: Vec<_> = m.tensors().map(|t| (t.name().to_string(), t.dtype(), t.shape().to_vec())).collect();
    let b: Vec<_> = reference.tensors().map(|t| (t.name().to_string(), t.dtype(), t.shape().to_vec())).collect();
    assert_eq!(a, b);
}

#[test]
fn tensor_read_adds_its_bytes_and_values_match() {
    let (path, bytes) = tiny();
    let st_bytes = bytes.clone();
    let st = SafeTensors::deserialize(&st_bytes).unwrap();
    let (r, h) = counting(bytes);
    let m = Model::open_reader(r).unwrap();
    let reference = Model::open(&path).unwrap();
    for name in ["lm_head.weight", "model.norm.weight"] {
        let t = m.get(name).unwrap();
        let before = h.read.load(Ordering::SeqCst);
        let got = t.read_to_vec().unwrap();
        assert_eq!(h.read.load(Ordering::SeqCst) - before, t.info().data_len(), "{name}: bytes read");
        assert_eq!(got, st.tensor(name).unwrap().data(), "{name}: bytes (safetensors crate)");
        assert!(t.data().is_empty(), "a reader model has no views");
        let want = reference.get(name).unwrap().to_f32_vec().unwrap();
        assert_eq!(t.to_f32_vec().unwrap(), want, "{name}: dequantized values");
        // A part of the tensor, and a range past its end.
        let mut part = [0u8; 6];
        t.read_into(4, &mut part).unwrap();
        assert_eq!(&part[..], &got[4..10]);
        let err = t.read_into(t.info().data_len() - 2, &mut part).unwrap_err();
        assert_eq!(err.status(), Status::Range);
    }
}

#[test]
fn read_into_on_a_mapped_model() {
    let (path, _) = tiny();
    let m = Model::open(&path).unwrap();
    let t = m.get("lm_head.weight").unwrap();
    assert_eq!(t.read_to_vec().unwrap(), t.data());
}

#[test]
fn lying_and_failing_readers() {
    let (_, bytes) = tiny();
    // Short at open: the header read ends early inside the size.
    let (r, h) = counting(bytes.clone());
    h.lie.store(true, Ordering::SeqCst);
    assert_eq!(Model::open_reader(r).unwrap_err().status(), Status::SourceShortRead);
    // Short after open: the tensor read and the dequantization say so.
    let (r, h) = counting(bytes.clone());
    let m = Model::open_reader(r).unwrap();
    h.lie.store(true, Ordering::SeqCst);
    let t = m.get("lm_head.weight").unwrap();
    assert_eq!(t.read_to_vec().unwrap_err().status(), Status::SourceShortRead);
    assert_eq!(t.to_f32_vec().unwrap_err().status(), Status::SourceShortRead);
    // A failing reader: Io, with the reader's message.
    h.lie.store(false, Ordering::SeqCst);
    h.fail.store(true, Ordering::SeqCst);
    let e = t.read_to_vec().unwrap_err();
    assert_eq!(e.status(), Status::Io);
    assert!(e.message().contains("disk on fire"), "{}", e.message());
}

#[test]
fn sharded_index_with_siblings() {
    let dir = common::repo().join("examples/sharded");
    let index = std::fs::read(dir.join("model.safetensors.index.json")).unwrap();
    let opened = Arc::new(AtomicU64::new(0));
    let counter = opened.clone();
    let d = dir.clone();
    let siblings: Arc<SiblingOpener> = Arc::new(move |name: &str| {
        counter.fetch_add(1, Ordering::SeqCst);
        let f = std::fs::File::open(d.join(name))?;
        Ok(Box::new(f) as Box<dyn ReadSeek>)
    });
    let m = Model::open_reader_with(Cursor::new(index.clone()), &OpenOptions::new(), Some(siblings)).unwrap();
    assert_eq!(opened.load(Ordering::SeqCst), 2, "both shards opened");
    let reference = Model::open(&dir).unwrap();
    assert_eq!(m.len(), reference.len());
    for t in m.tensors() {
        let r = reference.get(t.name()).unwrap();
        assert_eq!(t.tensor().read_to_vec().unwrap(), r.data(), "{}", t.name());
    }
    // Without siblings, or with shards missing, the index does not open.
    assert!(Model::open_reader(Cursor::new(index.clone())).is_err());
    let missing: Arc<SiblingOpener> = Arc::new(|_: &str| Err(std::io::Error::from(ErrorKind::NotFound)));
    let e = Model::open_reader_with(Cursor::new(index), &OpenOptions::new(), Some(missing)).unwrap_err();
    assert_eq!(e.status(), Status::NotFound);
}

#[test]
fn shared_between_threads() {
    let (path, bytes) = tiny();
    let (r, _) = counting(bytes);
    let m = Model::open_reader(r).unwrap();
    let reference = Model::open(&path).unwrap();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for t in m.tensors() {
                    assert_eq!(t.tensor().read_to_vec().unwrap(), reference.get(t.name()).unwrap().data());
                }
            });
        }
    });
}
