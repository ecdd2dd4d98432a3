//! Damage corpus for the container reader: a deterministic mutation harness
//! over the golden v1.0 container and containers written here. Every mutated
//! file goes through `Container::from_reader`, `verify` and `read_section`
//! and must come back as `Ok` or an error: never a panic (checked with
//! `catch_unwind`), never over a time or memory bound (a counting global
//! allocator records each case's peak).
//!
//! Checksums make most raw damage fail early, so many cases recompute them
//! after damaging a field, which sends hostile values past the checksums to
//! the structural checks and the metadata decoder.
//!
//! Reproduce one case with `RIGBAKE_DAMAGE_CASE=<n>`; change the seed with
//! `RIGBAKE_DAMAGE_SEED=<u64>` and the size with `RIGBAKE_CONTAINER_CASES=<n>`.

use std::collections::BTreeMap;
use std::io::Cursor;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rigbake_format::FormatError;
use rigbake_format::container::{Container, ContainerWriter};
use rigbake_format::meta::{Metadata, Storage};
use rigbake_format::records::SectionKind;

use rigbake_fixtures::testkit::corpus::{
    CountingAllocator, allocated_total, peak_since, report, start_measuring,
};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Largest allocation work one case may do: bytes allocated in total,
/// freed or not. The bound on work that does not depend on the machine's
/// load: a reader that decoded past its limits, or allocated per damaged
/// entry, would exceed it; the summary line reports the largest case.
const CASE_ALLOCATION_LIMIT: usize = 256 << 20;
/// Largest wall time one case may take. Cases take microseconds on an idle
/// machine; this only backs up [`CASE_ALLOCATION_LIMIT`] for work that does
/// not allocate (a loop), so it is generous: 5 s is thousands of times the
/// slowest case, which a loaded 2-core runner (this binary on a third of a
/// core, descheduled for whole seconds) does not eat.
const CASE_TIME_LIMIT: Duration = Duration::from_secs(5);
/// Largest extra memory one case may hold: the metadata decoder's own limit
/// (64 MiB) plus the file.
const CASE_MEMORY_LIMIT: usize = 80 << 20;
const DEFAULT_CASES: u64 = 50_000;
const DEFAULT_SEED: u64 = 0x5EED_C0DE_0000_0001;

// ---------------------------------------------------------------------------
// Deterministic randomness (splitmix64)

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

// ---------------------------------------------------------------------------
// Bases

fn golden() -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../formats/golden/v1.0/tentacle.rigbake");
    std::fs::read(path).expect("golden container")
}

/// The golden file's metadata and payloads rewritten in other shapes: no
/// texture sections (textures beside the file), the texture twice, and an
/// unknown section first.
fn variants(golden: &[u8]) -> Vec<Vec<u8>> {
    let mut c = Container::from_reader(Cursor::new(golden)).unwrap();
    let meta = c.metadata().clone();
    let texture = match meta.textures[0].storage {
        Storage::Section(i) => c.read_section(i as usize).unwrap(),
        Storage::File => unreachable!("golden textures are embedded"),
    };
    let mut out = Vec::new();

    let mut beside = meta.clone();
    beside.textures[0].storage = Storage::File;
    let w = ContainerWriter::new(Cursor::new(Vec::new())).unwrap();
    out.push(w.finish(&beside).unwrap().0.into_inner());

    let mut twice = meta.clone();
    let mut w = ContainerWriter::new(Cursor::new(Vec::new())).unwrap();
    w.add_section(SectionKind::Unknown(7), b"odd-sized unknown payload")
        .unwrap();
    let a = w.add_section(SectionKind::Texture, &texture).unwrap();
    let b = w.add_section(SectionKind::Texture, &texture).unwrap();
    twice.textures[0].storage = Storage::Section(a as u32);
    let mut second = twice.textures[0].clone();
    second.storage = Storage::Section(b as u32);
    twice.textures.push(second);
    out.push(w.finish(&twice).unwrap().0.into_inner());
    out
}

// ---------------------------------------------------------------------------
// Mutations

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// Recomputes every checksum that can be found: section payloads, the table
/// and the header, so damage reaches the checks behind them.
fn fix_checksums(b: &mut [u8]) {
    let len = b.len();
    if len < 48 {
        return;
    }
    let count = u32_at(b, 24) as usize;
    let table = u64_at(b, 28);
    let table_ok = count
        .checked_mul(32)
        .and_then(|t| t.checked_add(4))
        .and_then(|t| usize::try_from(table).ok()?.checked_add(t))
        == Some(len);
    if table_ok {
        let table = table as usize;
        for e in 0..count {
            let at = table + e * 32;
            let (offset, length) = (u64_at(b, at + 8), u64_at(b, at + 16));
            if let Some(end) = offset.checked_add(length).filter(|end| *end <= len as u64) {
                let crc = crc32fast::hash(&b[offset as usize..end as usize]);
                b[at + 24..at + 28].copy_from_slice(&crc.to_le_bytes());
            }
        }
        let crc = crc32fast::hash(&b[table..len - 4]);
        b[len - 4..].copy_from_slice(&crc.to_le_bytes());
    }
    let header_len = u32_at(b, 20) as usize;
    if (8..=len).contains(&header_len) {
        let crc = crc32fast::hash(&b[..header_len - 4]);
        b[header_len - 4..header_len].copy_from_slice(&crc.to_le_bytes());
    }
}

const INTERESTING: &[u64] = &[
    0,
    1,
    2,
    7,
    8,
    32,
    47,
    48,
    49,
    0x7F,
    0xFF,
    0x1000,
    0xFFFF,
    0x7FFF_FFFF,
    0xFFFF_FFFF,
    0x1_0000_0000,
    u64::MAX / 2,
    u64::MAX - 7,
    u64::MAX,
];

/// Header fields: (offset, width).
const HEADER_FIELDS: &[(usize, usize)] = &[
    (12, 2),
    (14, 2),
    (16, 1),
    (17, 1),
    (20, 4),
    (24, 4),
    (28, 8),
    (36, 8),
];

/// Table entry fields: (offset within the entry, width).
const ENTRY_FIELDS: &[(usize, usize)] = &[(0, 4), (4, 4), (8, 8), (16, 8), (24, 4), (28, 4)];

fn write_field(b: &mut [u8], at: usize, width: usize, value: u64) {
    if at + width <= b.len() {
        b[at..at + width].copy_from_slice(&value.to_le_bytes()[..width]);
    }
}

fn interesting_near(rng: &mut Rng, b: &[u8], at: usize, width: usize) -> u64 {
    let old = if at + width <= b.len() {
        let mut bytes = [0u8; 8];
        bytes[..width].copy_from_slice(&b[at..at + width]);
        u64::from_le_bytes(bytes)
    } else {
        0
    };
    match rng.below(4) {
        0 => old.wrapping_add(*rng.pick(&[1, 4, 8, 32, u64::MAX, u64::MAX - 7])),
        1 => (b.len() as u64 + *rng.pick(&[0, 1, 8])).saturating_sub(4),
        _ => *rng.pick(INTERESTING),
    }
}

fn mutate(rng: &mut Rng, b: &mut Vec<u8>, other: &[u8], log: &mut Vec<String>) {
    if b.is_empty() {
        b.push(0);
        return;
    }
    match rng.below(9) {
        0 => {
            let n = 1 + rng.below(4);
            for _ in 0..n {
                let at = rng.below(b.len());
                b[at] ^= 1 << rng.below(8);
            }
            log.push(format!("flip {n} bits"));
        }
        1 => {
            let at = rng.below(b.len());
            b.truncate(at);
            log.push(format!("truncate at {at}"));
        }
        2 => {
            let start = rng.below(b.len());
            let len = 1 + rng.below((b.len() - start).min(512));
            let chunk = b[start..start + len].to_vec();
            let at = rng.below(b.len() + 1);
            b.splice(at..at, chunk);
            log.push(format!("duplicate {len} bytes at {at}"));
        }
        3 => {
            let start = rng.below(b.len());
            let len = 1 + rng.below((b.len() - start).min(512));
            b.drain(start..start + len);
            log.push(format!("delete {len} bytes at {start}"));
        }
        4 => {
            let from = rng.below(other.len());
            let len = 1 + rng.below((other.len() - from).min(512));
            let at = rng.below(b.len());
            let end = (at + len).min(b.len());
            b.splice(at..end, other[from..from + len].iter().copied());
            log.push(format!("splice {len} foreign bytes at {at}"));
        }
        5 => {
            let &(at, width) = rng.pick(HEADER_FIELDS);
            let v = interesting_near(rng, b, at, width);
            write_field(b, at, width, v);
            log.push(format!("header field {at} = {v:#x}"));
        }
        6 if b.len() >= 48 => {
            // A table entry field, the table located through the header.
            let table = u64_at(b, 28) as usize;
            let count = u32_at(b, 24) as usize;
            if count > 0 && table < b.len() {
                let e = rng.below(count.min(16));
                let &(off, width) = rng.pick(ENTRY_FIELDS);
                let at = table.saturating_add(e * 32 + off);
                let v = interesting_near(rng, b, at, width);
                write_field(b, at, width, v);
                log.push(format!("section {e} field {off} = {v:#x}"));
            }
        }
        7 if b.len() >= 48 => {
            // Damage inside the last payload before the table (the metadata).
            let table = u64_at(b, 28) as usize;
            let count = u32_at(b, 24) as usize;
            let entry = count
                .checked_sub(1)
                .and_then(|c| table.checked_add(c.checked_mul(32)?))
                .filter(|e| e.saturating_add(32) <= b.len());
            let last = entry.map(|e| (u64_at(b, e + 8), u64_at(b, e + 16)));
            if let Some((offset, length)) = last {
                let (offset, length) = (offset as usize, length as usize);
                if length > 0 && offset.saturating_add(length) <= b.len() {
                    let at = offset + rng.below(length);
                    b[at] = *rng.pick(&[0x00, 0xFF, 0xFB, 0xFC, 0xFD, 0x80, 0x7F]);
                    log.push(format!("metadata byte {}", at - offset));
                }
            }
        }
        _ => {
            let at = rng.below(b.len());
            let v = *rng.pick(INTERESTING);
            let width = *rng.pick(&[4usize, 8]);
            write_field(b, at, width, v);
            log.push(format!("u{} {v:#x} at {at}", width * 8));
        }
    }
}

/// A re-encoded container whose metadata lies about its sections.
fn lying_metadata(rng: &mut Rng, golden: &[u8], log: &mut Vec<String>) -> Vec<u8> {
    let mut c = Container::from_reader(Cursor::new(golden)).unwrap();
    let mut meta: Metadata = c.metadata().clone();
    let payload = c.read_section(0).unwrap();
    let t = &mut meta.textures[0];
    match rng.below(5) {
        0 => {
            let i = *rng.pick(&[1u32, 2, 99, u32::MAX]);
            t.storage = Storage::Section(i);
            log.push(format!("texture in section {i}"));
        }
        1 => {
            let n = *rng.pick(&[0u64, 1, u64::MAX]);
            t.bytes = n;
            log.push(format!("texture of {n} bytes"));
        }
        2 => {
            t.width = u32::MAX;
            t.height = u32::MAX;
            log.push("texture of u32::MAX squared pixels".into());
        }
        3 => {
            meta.clips[0].start_row = u32::MAX;
            meta.clips[0].frames = u32::MAX;
            log.push("clip rows out of range".into());
        }
        _ => {
            meta.skins[0].parents = vec![i32::MAX; 3];
            log.push("joint parents out of range".into());
        }
    }
    let mut w = ContainerWriter::new(Cursor::new(Vec::new())).unwrap();
    w.add_section(SectionKind::Texture, &payload).unwrap();
    w.finish(&meta).unwrap().0.into_inner()
}

fn make_case(seed: u64, index: u64, bases: &[Vec<u8>]) -> (Vec<u8>, Vec<String>) {
    let mut rng = Rng(seed ^ index.wrapping_mul(0xA076_1D64_78BD_642F));
    let mut log = Vec::new();
    if rng.below(20) == 0 {
        return (lying_metadata(&mut rng, &bases[0], &mut log), log);
    }
    let b = rng.below(bases.len());
    let mut bytes = bases[b].clone();
    let other = &bases[rng.below(bases.len())];
    for _ in 0..1 + rng.below(3) {
        mutate(&mut rng, &mut bytes, other, &mut log);
    }
    if rng.below(3) > 0 {
        fix_checksums(&mut bytes);
        log.push("checksums recomputed".into());
    }
    log.insert(0, format!("base {b}"));
    (bytes, log)
}

/// Opens, verifies and reads every section; Ok(true) when all of it passed.
fn run_case(bytes: &[u8]) -> Result<(), FormatError> {
    let mut c = Container::from_reader(Cursor::new(bytes))?;
    c.verify()?;
    for i in 0..c.sections().len() {
        c.read_section(i)?;
    }
    // What the metadata says about embedded textures was checked on open.
    for t in &c.metadata().textures {
        if let Storage::Section(i) = t.storage {
            let s = c.sections()[i as usize];
            assert_eq!(s.kind, SectionKind::Texture);
            assert_eq!(s.length, t.bytes);
        }
    }
    Ok(())
}

#[test]
fn damaged_containers_never_panic_or_overallocate() {
    let seed = std::env::var("RIGBAKE_DAMAGE_SEED")
        .ok()
        .map_or(DEFAULT_SEED, |v| v.parse().expect("a number"));
    let cases: u64 = std::env::var("RIGBAKE_CONTAINER_CASES")
        .ok()
        .map_or(DEFAULT_CASES, |v| v.parse().expect("a number"));
    let only: Option<u64> = std::env::var("RIGBAKE_DAMAGE_CASE")
        .ok()
        .map(|v| v.parse().expect("a number"));
    let golden = golden();
    let mut bases = vec![golden.clone()];
    bases.extend(variants(&golden));
    for base in &bases {
        run_case(base).expect("undamaged bases read");
    }

    let panics: Arc<Mutex<Vec<String>>> = Arc::default();
    {
        let panics = Arc::clone(&panics);
        std::panic::set_hook(Box::new(move |info| {
            // Kept for the report; printed too, in case it is the harness's own.
            eprintln!("panic: {info}");
            panics.lock().unwrap().push(info.to_string());
        }));
    }
    let started = Instant::now();
    let range = only.map_or(0..cases, |i| i..i + 1);
    let mut failures = Vec::new();
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    let mut slowest = Duration::ZERO;
    let mut biggest = 0usize;
    let mut most_work = 0usize;
    for index in range.clone() {
        let (bytes, log) = make_case(seed, index, &bases);
        let what = || format!("case {index} ({})", log.join("; "));
        let baseline = start_measuring();
        let allocated_before = allocated_total();
        let t0 = Instant::now();
        let result = catch_unwind(AssertUnwindSafe(|| run_case(&bytes)));
        let took = t0.elapsed();
        let peak = peak_since(baseline);
        let allocated = allocated_total() - allocated_before;
        most_work = most_work.max(allocated);
        if allocated > CASE_ALLOCATION_LIMIT {
            failures.push(format!(
                "{}: allocated {} MiB in all",
                what(),
                allocated >> 20
            ));
        }
        slowest = slowest.max(took);
        biggest = biggest.max(peak);
        match result {
            Ok(Ok(())) => *outcomes.entry("read and verified".into()).or_default() += 1,
            Ok(Err(e)) => {
                let key: String = e.to_string().chars().take(50).collect();
                *outcomes.entry(key).or_default() += 1;
            }
            Err(_) => {
                let message = panics.lock().unwrap().pop().unwrap_or_default();
                failures.push(format!("{}: PANIC {message}", what()));
            }
        }
        if took > CASE_TIME_LIMIT {
            failures.push(format!("{}: took {took:?}", what()));
        }
        if peak > CASE_MEMORY_LIMIT {
            failures.push(format!("{}: peak {} MiB", what(), peak >> 20));
        }
    }
    let _ = std::panic::take_hook();
    report(&format!(
        "container corpus: seed {seed:#x}, {} cases over {} bases in {:.1?}; slowest case {slowest:?}; largest peak {} KiB; most allocation work {} KiB",
        range.end - range.start,
        bases.len(),
        started.elapsed(),
        biggest >> 10,
        most_work >> 10
    ));
    let mut common: Vec<_> = outcomes.into_iter().collect();
    common.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    for (what, n) in common.iter().take(25) {
        report(&format!("  {n:6}  {what}"));
    }
    assert!(
        failures.is_empty(),
        "{} cases failed; first ones:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}
