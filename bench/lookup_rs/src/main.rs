//! The safetensors crate's lookup by name, timed like bench_lookup.cpp: the same names file and
//! safetensors file (bench/make_names.py), every name looked up once per round in the file's
//! order (hits), then every name with its last byte replaced by '#' (misses), best round of N (thread CPU time).
//! Two lookups: `SafeTensors::tensor(name)` (what a user calls; it clones the shape into a new
//! Vec on a hit and formats an error String on a miss) and `Metadata::info(name)` from
//! `SafeTensors::read_metadata` (the crate's `HashMap<String, usize>` lookup and a Vec index,
//! nothing allocated). Prints `rust-<tensor|info> <hit|miss> <best ns/lookup> <median>`.
use safetensors::SafeTensors;

// CPU time of this thread: on a shared machine wall time mostly measures the neighbours.
#[repr(C)]
struct Timespec {
    sec: i64,
    nsec: i64,
}
extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}
const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
struct Instant(u64);
impl Instant {
    fn now() -> Instant {
        let mut ts = Timespec { sec: 0, nsec: 0 };
        // SAFETY: ts is a valid out-pointer; the clock id is Linux's thread CPU clock.
        let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        assert_eq!(rc, 0);
        Instant(ts.sec as u64 * 1_000_000_000 + ts.nsec as u64)
    }
    fn elapsed_ns(&self) -> u64 {
        Instant::now().0 - self.0
    }
}

// Every timed run starts from one of bench_lookup.cpp's two states: `warm` (the same loop once,
// untimed, then 64 MiB written a byte per cache line: the structures in the last-level cache,
// none in L1, L2 or the TLB) or `cold` (only an eviction pass of EVICT_MIB: from memory).
fn evict(junk: &mut [u8]) {
    for i in (0..junk.len()).step_by(64) {
        junk[i] = junk[i].wrapping_add(1);
    }
    std::hint::black_box(&junk);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: lookup_rs NAMES FILE.safetensors [ROUNDS] [warm | cold EVICT_MIB]");
        std::process::exit(2);
    }
    let names_text = std::fs::read_to_string(&args[1]).expect("names file");
    let bytes = std::fs::read(&args[2]).expect("safetensors file");
    let rounds: usize = args.get(3).map_or(7, |r| r.parse().expect("rounds"));
    let warm = args.get(4).map_or(true, |s| s != "cold");
    let evict_mib: usize = if warm { 64 } else { args.get(5).map_or(512, |m| m.parse().expect("EVICT_MIB")) };
    let st = SafeTensors::deserialize(&bytes).expect("deserialize");
    let (_, meta) = SafeTensors::read_metadata(&bytes).expect("read_metadata");
    let hits: Vec<&str> = names_text.lines().filter(|l| !l.is_empty()).collect();
    let misses: Vec<String> = hits
        .iter()
        .map(|n| {
            let mut s = n[..n.len() - 1].to_string();
            s.push('#');
            s
        })
        .collect();
    let mut t_hit = Vec::new();
    let mut t_miss = Vec::new();
    let mut i_hit = Vec::new();
    let mut i_miss = Vec::new();
    let mut junk = vec![0u8; evict_mib << 20];
    // The state's preparation, then body timed; body returns what the checks need.
    let mut timed = |t: &mut Vec<f64>, body: &dyn Fn() -> usize| -> usize {
        if warm {
            std::hint::black_box(body());
        }
        evict(&mut junk);
        let t0 = Instant::now();
        let r = body();
        t.push(t0.elapsed_ns() as f64 / hits.len() as f64);
        r
    };
    let sum_hits = 4 * (hits.len() * (hits.len() - 1) / 2);
    for _ in 0..rounds {
        let sum = timed(&mut i_hit, &|| hits.iter().map(|n| meta.info(n).expect("hit").data_offsets.0).sum());
        assert_eq!(sum, sum_hits);
        let found = timed(&mut i_miss, &|| misses.iter().filter(|n| meta.info(n).is_some()).count());
        assert_eq!(found, 0);
        let sum = timed(&mut t_hit, &|| hits.iter().map(|n| st.tensor(n).expect("hit").data().len()).sum());
        assert_eq!(sum, 4 * hits.len());
        let found = timed(&mut t_miss, &|| misses.iter().filter(|n| st.tensor(n).is_ok()).count());
        assert_eq!(found, 0);
    }
    for (what, t) in [
        ("rust-info hit", &mut i_hit),
        ("rust-info miss", &mut i_miss),
        ("rust-tensor hit", &mut t_hit),
        ("rust-tensor miss", &mut t_miss),
    ] {
        t.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!("{} {:.1} {:.1}", what, t[0], t[t.len() / 2]);
    }
}
