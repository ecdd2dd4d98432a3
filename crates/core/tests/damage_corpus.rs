//! Damage corpus: a deterministic mutation harness over the fixtures and the
//! third-party models. Every mutated input goes through ingest and bake
//! (`import_slice`, `Timeline::all_clips`, `bake_bone_textures`) and must
//! come back as `Ok` or an error: never a panic (checked with `catch_unwind`),
//! never over a time bound, never over a memory bound (a counting global
//! allocator records each case's peak). Successful imports are checked against
//! the model invariants and successful bakes against their shapes and for
//! finite values.
//!
//! Reproduce one case with `RIGBAKE_DAMAGE_CASE=<n>`; change the seed with
//! `RIGBAKE_DAMAGE_SEED=<u64>` and the size with `RIGBAKE_DAMAGE_CASES=<n>`.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use rigbake_core::ErrorKind;
use rigbake_core::bake::{BoneBakeOptions, bake_bone_textures};
use rigbake_core::import::{ImportOptions, Limits, Source, import_slice};
use rigbake_core::model::{Interpolation, Model, Property};
use rigbake_core::timeline::{Sampling, Timeline};
use serde_json::Value;

use rigbake_fixtures::testkit::corpus::{
    CountingAllocator, allocated_total, peak_since, report, start_measuring,
};
use rigbake_fixtures::testkit::models::shared_models;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

// ---------------------------------------------------------------------------
// Bounds

/// Largest allocation work one case may do: bytes allocated in total, freed
/// or not. This is the bound on work that does not depend on the machine's
/// load; a case that decoded, evaluated or baked without its limits would
/// allocate far more (the corpus limits alone allow 64 MiB of decoded
/// components per pass). Cases allocate at most about 10 MiB (seed
/// 0x5EED2B1A4E000001); the summary line reports the largest.
const CASE_ALLOCATION_LIMIT: usize = 256 << 20;
/// Largest wall time one case may take. Cases take under a millisecond on
/// average and about 20 ms at worst on an idle machine. This only backs up
/// [`CASE_ALLOCATION_LIMIT`] for work that does not allocate (a loop), so it
/// is generous: 10 s is 500 times the worst case, which a loaded 2-core
/// runner (this binary on a third of a core, descheduled for whole
/// seconds) does not eat, while a case doing unbounded work still trips it.
const CASE_TIME_LIMIT: Duration = Duration::from_secs(10);
/// Largest extra memory one case may hold at its peak: the corpus limits
/// allow 64 MiB of decoded components and 16 MiB per texture; cases peak
/// around 10 MiB.
const CASE_MEMORY_LIMIT: usize = 128 << 20;
/// A case running this long is a hang: the watchdog aborts the run rather
/// than blocking CI. Six times [`CASE_TIME_LIMIT`], so a slow but finite case
/// is reported by that bound (with its case number) before this one fires.
const HANG_LIMIT: Duration = Duration::from_secs(60);
/// Default number of mutated cases.
const DEFAULT_CASES: u64 = 20_000;
/// Default seed.
const DEFAULT_SEED: u64 = 0x5EED_2B1A_4E00_0001;

fn corpus_limits() -> Limits {
    Limits {
        max_file_bytes: 64 << 20,
        max_accessor_components: 1 << 22,
        max_total_components: 1 << 24,
        max_decoded_bytes: 64 << 20,
        max_nodes: 1 << 16,
    }
}

fn bake_options() -> BoneBakeOptions {
    BoneBakeOptions {
        max_texture_size: 1024,
        ..BoneBakeOptions::default()
    }
}

// ---------------------------------------------------------------------------
// Deterministic randomness (splitmix64)

struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Self(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

// ---------------------------------------------------------------------------
// Inputs

/// One base model: its bytes and the folder its relative URIs resolve in.
struct Base {
    name: String,
    bytes: Vec<u8>,
    dir: PathBuf,
}

/// A base split for JSON-level mutation: the JSON document and, for a GLB,
/// the binary chunk.
struct Split {
    doc: Value,
    bin: Option<Vec<u8>>,
    glb: bool,
}

fn split(base: &Base) -> Option<Split> {
    match split_glb(&base.bytes) {
        Some((json, bin)) => Some(Split {
            doc: serde_json::from_slice(&json).ok()?,
            bin,
            glb: true,
        }),
        None => Some(Split {
            doc: serde_json::from_slice(&base.bytes).ok()?,
            bin: None,
            glb: false,
        }),
    }
}

fn models_dir() -> Option<PathBuf> {
    shared_models("damage corpus, third-party part")
}

/// Third-party models small enough to mutate thousands of times in CI time.
const REAL_MODELS: &[&str] = &[
    "khronos/SimpleSkin.gltf",
    "khronos/RiggedSimple.gltf",
    "khronos/RiggedFigure.glb",
    "khronos/BoxAnimated.glb",
    "khronos/InterpolationTest.glb",
    "khronos/AnimatedMorphCube.glb",
    "khronos/SimpleMorph.gltf",
    "khronos/Fox.glb",
    "khronos/CesiumMan.glb",
    "raylib/greenman_hat.glb",
    "raylib/greenman_sword.glb",
];

fn bases() -> Vec<Base> {
    let fixtures = rigbake_fixtures::fixtures_dir();
    let models_in = |dir: &Path| -> Vec<PathBuf> {
        let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
            .expect("fixtures folder")
            .map(|e| e.expect("entry").path())
            .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("gltf" | "glb")))
            .collect();
        names.sort();
        names
    };
    let top = models_in(&fixtures);
    assert!(top.len() >= 4, "fixtures missing: {top:?}");
    // The degenerate fixtures too: damage to a broken model reaches other
    // checks than damage to a sound one.
    let degenerate = models_in(&fixtures.join("degenerate"));
    let mut out: Vec<Base> = top
        .iter()
        .chain(&degenerate)
        .map(|p| Base {
            name: p.strip_prefix(&fixtures).map_or_else(
                |_| p.display().to_string(),
                |r| format!("fixtures/{}", r.display()),
            ),
            bytes: std::fs::read(p).unwrap(),
            dir: p.parent().unwrap().to_path_buf(),
        })
        .collect();
    // The hierarchy fixture's external buffer, embedded as a data URI, so
    // that its binary data gets mutated too.
    let (json, bin) = rigbake_fixtures::models::hierarchy().to_gltf_external("hierarchy.bin");
    let mut doc: Value = serde_json::from_str(&json).unwrap();
    doc["buffers"][0]["uri"] = Value::String(data_uri(&bin));
    out.push(Base {
        name: "fixtures/hierarchy.gltf (embedded)".into(),
        bytes: serde_json::to_vec(&doc).unwrap(),
        dir: fixtures.clone(),
    });
    if let Some(models) = models_dir() {
        for rel in REAL_MODELS {
            let path = models.join(rel);
            match std::fs::read(&path) {
                Ok(bytes) => out.push(Base {
                    name: (*rel).to_owned(),
                    bytes,
                    dir: path.parent().unwrap().to_path_buf(),
                }),
                Err(e) => eprintln!("damage corpus: skipping {}: {e}", path.display()),
            }
        }
    }
    out
}

fn data_uri(bytes: &[u8]) -> String {
    format!(
        "data:application/octet-stream;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

// ---------------------------------------------------------------------------
// GLB framing (the harness's own, for re-packing mutated JSON)

fn split_glb(bytes: &[u8]) -> Option<(Vec<u8>, Option<Vec<u8>>)> {
    if bytes.len() < 20 || &bytes[..4] != b"glTF" {
        return None;
    }
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let json_len = u32_at(12);
    let json = bytes.get(20..20 + json_len)?.to_vec();
    let rest = 20 + json_len;
    let bin = if bytes.len() >= rest + 8 {
        let bin_len = u32_at(rest);
        bytes.get(rest + 8..rest + 8 + bin_len).map(<[u8]>::to_vec)
    } else {
        None
    };
    Some((json, bin))
}

fn pack_glb(json: &[u8], bin: Option<&[u8]>) -> Vec<u8> {
    let mut json = json.to_vec();
    while !json.len().is_multiple_of(4) {
        json.push(b' ');
    }
    let total = 12 + 8 + json.len() + bin.map_or(0, |b| 8 + b.len());
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&json);
    if let Some(bin) = bin {
        out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(bin);
    }
    out
}

// ---------------------------------------------------------------------------
// Mutations

const INTERESTING_U32: &[u32] = &[
    0,
    1,
    2,
    3,
    4,
    7,
    8,
    0x7F,
    0x80,
    0xFF,
    0x100,
    0x7FFF,
    0x8000,
    0xFFFF,
    0x1_0000,
    0x7FFF_FFFF,
    0x8000_0000,
    0xFFFF_FFFE,
    0xFFFF_FFFF,
    0x7FC0_0000, // f32 NaN
    0x7F80_0000, // f32 +inf
    0xFF80_0000, // f32 -inf
    0x8000_0001, // f32 -denormal
];

/// Byte-level damage: flips, interesting values, truncation, duplication,
/// deletion and splices from another input.
fn mutate_bytes(rng: &mut Rng, bytes: &mut Vec<u8>, other: &[u8], log: &mut Vec<String>) {
    if bytes.is_empty() {
        bytes.push(rng.next() as u8);
        log.push("grow empty".into());
        return;
    }
    match rng.below(8) {
        0 => {
            let flips = 1 + rng.below(8);
            for _ in 0..flips {
                let at = rng.below(bytes.len());
                bytes[at] ^= 1 << rng.below(8);
            }
            log.push(format!("flip {flips} bits"));
        }
        1 => {
            let at = rng.below(bytes.len());
            bytes[at] = *rng.pick(&[0x00, 0xFF, 0x7F, 0x80, b'"', b'{', b'[', b'-', b'9']);
            log.push(format!("byte {at}"));
        }
        2 => {
            let at = rng.below(bytes.len());
            bytes.truncate(at);
            log.push(format!("truncate at {at}"));
        }
        3 => {
            let start = rng.below(bytes.len());
            let len = 1 + rng.below((bytes.len() - start).min(4096));
            let chunk = bytes[start..start + len].to_vec();
            let at = rng.below(bytes.len() + 1);
            bytes.splice(at..at, chunk);
            log.push(format!("duplicate {len} bytes from {start} at {at}"));
        }
        4 => {
            let start = rng.below(bytes.len());
            let len = 1 + rng.below((bytes.len() - start).min(4096));
            bytes.drain(start..start + len);
            log.push(format!("delete {len} bytes at {start}"));
        }
        5 if !other.is_empty() => {
            let from = rng.below(other.len());
            let len = 1 + rng.below((other.len() - from).min(4096));
            let at = rng.below(bytes.len());
            let end = (at + len).min(bytes.len());
            bytes.splice(at..end, other[from..from + len].iter().copied());
            log.push(format!("splice {len} foreign bytes at {at}"));
        }
        6 if bytes.len() >= 4 => {
            let at = rng.below(bytes.len() - 3);
            let v = *rng.pick(INTERESTING_U32);
            bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
            log.push(format!("u32 {v:#x} at {at}"));
        }
        _ => {
            // Damage near the start, where headers live.
            let at = rng.below(bytes.len().min(64));
            bytes[at] = rng.next() as u8;
            log.push(format!("header byte {at}"));
        }
    }
}

const INTERESTING_NUMBERS: &[f64] = &[
    0.0,
    -0.0,
    -1.0,
    1.0,
    2.0,
    3.0,
    4.0,
    0.5,
    255.0,
    256.0,
    65535.0,
    65536.0,
    4_294_967_295.0,
    4_294_967_296.0,
    9_007_199_254_740_992.0,
    1e30,
    -1e30,
    1e38,
    3.5e38, // overflows f32
    -3.5e38,
    1e300,
    1e-40, // f32 denormal
    -1e-3,
];

/// Every path (as keys and indices) to a value in `doc`, up to `cap` of
/// them, and the numbers met on the way (for swapping indices).
fn value_paths(doc: &Value, cap: usize) -> (Vec<Vec<PathStep>>, Vec<f64>) {
    let mut out = Vec::new();
    let mut numbers = Vec::new();
    let mut stack: Vec<(Vec<PathStep>, &Value)> = vec![(Vec::new(), doc)];
    while let Some((path, v)) = stack.pop() {
        if out.len() >= cap {
            break;
        }
        match v {
            Value::Object(map) => {
                for (k, child) in map {
                    let mut p = path.clone();
                    p.push(PathStep::Key(k.clone()));
                    stack.push((p, child));
                }
            }
            Value::Array(items) => {
                // Long arrays (embedded data, big index lists): sample a few.
                let n = items.len();
                for i in [0, 1, n / 2, n.saturating_sub(1)] {
                    if i < n && !(i > 0 && i == n.saturating_sub(1) && n == 1) {
                        let mut p = path.clone();
                        p.push(PathStep::Index(i));
                        stack.push((p, &items[i]));
                    }
                }
            }
            Value::Number(x) if numbers.len() < 256 => {
                numbers.push(x.as_f64().unwrap_or(0.0));
            }
            _ => {}
        }
        out.push(path);
    }
    (out, numbers)
}

#[derive(Clone, Debug)]
enum PathStep {
    Key(String),
    Index(usize),
}

fn lookup<'a>(doc: &'a mut Value, path: &[PathStep]) -> Option<&'a mut Value> {
    let mut v = doc;
    for step in path {
        v = match step {
            PathStep::Key(k) => v.get_mut(k.as_str())?,
            PathStep::Index(i) => v.get_mut(*i)?,
        };
    }
    Some(v)
}

fn describe(path: &[PathStep]) -> String {
    let mut s = String::new();
    for step in path {
        match step {
            PathStep::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            PathStep::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// Marker replaced by deeply nested brackets after serialising.
const DEEP_MARKER: &str = "\u{1}deep\u{1}";

/// Integers that break sizes, offsets, counts and indices.
const INTERESTING_INTS: &[f64] = &[
    0.0,
    1.0,
    2.0,
    3.0,
    4.0,
    5.0,
    255.0,
    256.0,
    65535.0,
    65536.0,
    1_048_576.0,
    268_435_456.0,
    2_147_483_647.0,
    4_294_967_295.0,
    4_294_967_296.0,
    9_007_199_254_740_992.0,
];

/// Keys worth adding to an object of the given kind (the top-level array it
/// sits in), with values that stress them.
fn insertion(rng: &mut Rng, kind: &str) -> (&'static str, Value) {
    use serde_json::json;
    let huge = 3.0e38;
    let small = rng.below(4);
    match kind {
        "nodes" => match rng.below(9) {
            0 => (
                "matrix",
                json!([huge, 0, 0, 0, 0, huge, 0, 0, 0, 0, huge, 0, 0, 0, 0, 1]),
            ),
            1 => (
                "matrix",
                json!([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
            ),
            2 => ("scale", json!([huge, huge, huge])),
            3 => ("scale", json!([0, 0, 0])),
            4 => ("translation", json!([huge, -huge, huge])),
            5 => ("rotation", json!([0, 0, 0, 0])),
            6 => ("children", json!([small, rng.below(4)])),
            7 => ("weights", json!([huge, 1, 0])),
            _ => ("skin", json!(rng.below(2))),
        },
        "accessors" => match rng.below(5) {
            0 => ("count", json!(*rng.pick(INTERESTING_INTS) as u64)),
            1 => ("byteOffset", json!(*rng.pick(INTERESTING_INTS) as u64)),
            2 => ("normalized", json!(true)),
            3 => (
                "componentType",
                json!(*rng.pick(&[5120, 5121, 5122, 5123, 5125, 5126])),
            ),
            _ => (
                "sparse",
                json!({
                    "count": *rng.pick(&[1u64, 2, 3, 1 << 20]),
                    "indices": {"bufferView": small, "componentType": *rng.pick(&[5121, 5123, 5125])},
                    "values": {"bufferView": rng.below(4)}
                }),
            ),
        },
        "bufferViews" => match rng.below(3) {
            0 => ("byteStride", json!(*rng.pick(&[4, 8, 12, 252, 256]))),
            1 => ("byteOffset", json!(*rng.pick(INTERESTING_INTS) as u64)),
            _ => ("byteLength", json!(*rng.pick(INTERESTING_INTS) as u64)),
        },
        "skins" => match rng.below(3) {
            0 => ("joints", json!([small, small])),
            1 => ("skeleton", json!(small)),
            _ => ("inverseBindMatrices", json!(small)),
        },
        "primitives" => match rng.below(3) {
            0 => ("mode", json!(rng.below(8))),
            1 => ("indices", json!(small)),
            _ => ("targets", json!([{"POSITION": small}])),
        },
        "samplers" => (
            "interpolation",
            json!(*rng.pick(&["STEP", "LINEAR", "CUBICSPLINE"])),
        ),
        _ => ("extras", json!({"x": huge})),
    }
}

/// The kind of object at `path`: the name of the array holding it.
fn object_kind(path: &[PathStep]) -> &str {
    match path {
        [.., PathStep::Key(k), PathStep::Index(_)] => k.as_str(),
        _ => "",
    }
}

/// One JSON-level mutation of `doc`, chosen by the type of the value it
/// hits so that most mutants still parse and reach the importer's checks.
/// Returns the nesting depth to splice in for [`DEEP_MARKER`], if asked.
fn mutate_json(rng: &mut Rng, doc: &mut Value, log: &mut Vec<String>) -> Option<usize> {
    let (paths, numbers) = value_paths(doc, 8192);
    let path = rng.pick(&paths).clone();
    let where_ = describe(&path);
    let target = lookup(doc, &path)?;
    if rng.chance(3) {
        let depth = *rng.pick(&[64, 200, 5000]);
        *target = Value::String(DEEP_MARKER.into());
        log.push(format!("{where_} = nested {depth} deep"));
        return Some(depth);
    }
    if rng.chance(4) {
        let new = rng
            .pick(&[
                Value::Null,
                Value::Bool(true),
                Value::String("x".into()),
                serde_json::json!({}),
                serde_json::json!([]),
            ])
            .clone();
        log.push(format!("{where_} = {new}"));
        *target = new;
        return None;
    }
    match target {
        Value::Number(old) => {
            let old = old.as_f64().unwrap_or(0.0);
            // Integers (indices, counts, offsets) mostly stay integers, and
            // mostly small ones that still index something.
            let integer = old.fract() == 0.0 && rng.chance(85);
            let new = match rng.below(8) {
                0 | 1 => old + *rng.pick(&[-2.0, -1.0, 1.0, 2.0]),
                2 if !numbers.is_empty() => *rng.pick(&numbers),
                3 | 4 if integer => rng.below(9) as f64,
                _ if integer => *rng.pick(INTERESTING_INTS),
                5 => *rng.pick(INTERESTING_INTS),
                _ => *rng.pick(INTERESTING_NUMBERS),
            };
            *target = number(new);
            log.push(format!("{where_} = {new}"));
        }
        Value::String(old) => {
            let key = match path.last() {
                Some(PathStep::Key(k)) => k.as_str(),
                _ => "",
            };
            let choices: &[&str] = match key {
                "interpolation" => &["STEP", "LINEAR", "CUBICSPLINE", "SMOOTH"],
                "path" => &["translation", "rotation", "scale", "weights", "matrix"],
                "type" => &[
                    "SCALAR", "VEC2", "VEC3", "VEC4", "MAT2", "MAT3", "MAT4", "VEC5",
                ],
                _ => &[],
            };
            if !choices.is_empty() && rng.chance(80) {
                let new = *rng.pick(choices);
                log.push(format!("{where_}: {old:?} -> {new:?}"));
                *target = Value::String(new.into());
                return None;
            }
            let new = *rng.pick(&[
                "",
                "../../etc/passwd",
                "/etc/passwd",
                "%2e%2e/%2e%2e/etc/passwd",
                "http://example.invalid/a.bin",
                "file:///etc/passwd",
                "data:application/octet-stream;base64,AAAA",
                "data:application/octet-stream;base64,!!!!",
                "data:,plain",
                "hierarchy.bin",
                "translation",
                "rotation",
                "scale",
                "weights",
                "STEP",
                "LINEAR",
                "CUBICSPLINE",
                "SCALAR",
                "VEC4",
                "MAT4",
                "MAT2",
                "KHR_mesh_quantization",
                "KHR_draco_mesh_compression",
            ]);
            log.push(format!("{where_}: {old:?} -> {new:?}"));
            *target = Value::String(new.into());
        }
        Value::Array(items) if !items.is_empty() => {
            let i = rng.below(items.len());
            match rng.below(6) {
                0 => {
                    items.clear();
                    log.push(format!("{where_} = []"));
                }
                1 => {
                    let copy = items[i].clone();
                    items.push(copy);
                    log.push(format!("duplicate {where_}[{i}]"));
                }
                2 => {
                    items.remove(i);
                    log.push(format!("remove {where_}[{i}]"));
                }
                3 => {
                    let j = rng.below(items.len());
                    items.swap(i, j);
                    log.push(format!("swap {where_}[{i}] and [{j}]"));
                }
                4 => {
                    let n = *rng.pick(&[1000, 70_000]);
                    let v = rng.below(4) as u64;
                    *target = Value::Array(vec![Value::from(v); n]);
                    log.push(format!("{where_} = [{v}; {n}]"));
                }
                _ => {
                    let n = rng.below(4);
                    *target = serde_json::json!([n, n]);
                    log.push(format!("{where_} = [{n}, {n}]"));
                }
            }
        }
        Value::Object(map) if !map.is_empty() && rng.chance(30) => {
            let key = map.keys().nth(rng.below(map.len())).unwrap().clone();
            map.remove(&key);
            log.push(format!("drop {where_}.{key}"));
        }
        Value::Object(map) => {
            let (key, value) = insertion(rng, object_kind(&path));
            log.push(format!("{where_}.{key} = {value}"));
            map.insert(key.into(), value);
        }
        Value::Bool(b) => {
            *b = !*b;
            log.push(format!("flip {where_}"));
        }
        _ => {
            *target = number(*rng.pick(INTERESTING_INTS));
            log.push(format!("{where_} = a number"));
        }
    }
    None
}

fn number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 1.8e19 {
        if v >= 0.0 {
            Value::from(v as u64)
        } else {
            Value::from(v as i64)
        }
    } else {
        serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
    }
}

fn to_text(doc: &Value, deep: Option<usize>) -> Vec<u8> {
    let text = serde_json::to_string(doc).unwrap();
    match deep {
        Some(depth) => {
            let marker = serde_json::to_string(DEEP_MARKER).unwrap();
            let nested = "[".repeat(depth) + &"]".repeat(depth);
            text.replacen(&marker, &nested, 1).into_bytes()
        }
        None => text.into_bytes(),
    }
}

/// Mutates the first data-URI buffer of a `.gltf` document in place.
fn mutate_data_uri(rng: &mut Rng, doc: &mut Value, log: &mut Vec<String>) -> bool {
    let Some(uri) = doc["buffers"][0]["uri"].as_str() else {
        return false;
    };
    let Some((_, payload)) = uri.split_once(";base64,") else {
        return false;
    };
    let Ok(mut bin) = base64::engine::general_purpose::STANDARD.decode(payload) else {
        return false;
    };
    mutate_bytes(rng, &mut bin, &[], log);
    doc["buffers"][0]["uri"] = Value::String(data_uri(&bin));
    true
}

/// Builds case `index`: a mutated copy of one base.
fn make_case(
    seed: u64,
    index: u64,
    bases: &[Base],
    splits: &[Option<Split>],
) -> (usize, Vec<u8>, Vec<String>) {
    let mut rng = Rng::new(seed ^ index.wrapping_mul(0xA076_1D64_78BD_642F));
    let b = rng.below(bases.len());
    let base = &bases[b];
    let other = &bases[rng.below(bases.len())].bytes;
    let mut log = Vec::new();
    let rounds = 1 + rng.below(3);
    let split = splits[b].as_ref();
    let bytes = match (rng.below(10), split) {
        // Damage to a GLB's binary chunk only, re-packed with valid framing.
        (
            3,
            Some(Split {
                doc,
                bin: Some(bin),
                glb: true,
            }),
        ) => {
            let mut bin = bin.clone();
            for _ in 0..rounds {
                mutate_bytes(&mut rng, &mut bin, &[], &mut log);
            }
            log.push("(BIN chunk)".into());
            pack_glb(&serde_json::to_vec(doc).unwrap(), Some(&bin))
        }
        // JSON-level damage (GLB JSON chunks re-packed).
        (3..=9, Some(split)) => {
            let mut doc = split.doc.clone();
            let mut deep = None;
            for _ in 0..rounds {
                deep = mutate_json(&mut rng, &mut doc, &mut log).or(deep);
            }
            if !split.glb && rng.chance(30) {
                mutate_data_uri(&mut rng, &mut doc, &mut log);
            }
            let text = to_text(&doc, deep);
            if split.glb {
                pack_glb(&text, split.bin.as_deref())
            } else {
                text
            }
        }
        // Raw byte damage on the whole file.
        _ => {
            let mut bytes = base.bytes.clone();
            for _ in 0..rounds {
                mutate_bytes(&mut rng, &mut bytes, other, &mut log);
            }
            bytes
        }
    };
    (b, bytes, log)
}

// ---------------------------------------------------------------------------
// Running a case

/// What a case ended with.
enum Outcome {
    /// Imported, timed and baked.
    Baked,
    /// An error, at a stage, with its kind and text.
    Refused(&'static str, ErrorKind, String, bool),
}

fn run_case(bytes: &[u8], base: &Base) -> Outcome {
    let options = ImportOptions {
        limits: corpus_limits(),
        ..ImportOptions::default()
    };
    let source = Source {
        name: "case",
        dir: Some(&base.dir),
    };
    let model = match import_slice(bytes, &source, &options) {
        Ok(m) => m,
        Err(e) => {
            let named = !e.object.is_empty();
            return Outcome::Refused("import", e.kind, e.to_string(), named);
        }
    };
    check_model(&model);
    let timeline = match Timeline::all_clips(&model, Sampling::default()) {
        Ok(t) => t,
        Err(e) => {
            let named = !e.object.is_empty();
            return Outcome::Refused("timeline", e.kind, e.to_string(), named);
        }
    };
    assert_eq!(
        timeline.rows,
        timeline.clips.iter().map(|c| c.frames).sum::<usize>()
    );
    match bake_bone_textures(&model, &timeline, &bake_options()) {
        Ok(textures) => {
            for t in &textures {
                let joints = model.skins[t.set.skin].joints.len();
                assert_eq!(t.width, joints * t.layout.pixels_per_joint());
                assert_eq!(t.height, timeline.rows);
                assert_eq!(t.data.len(), t.width * t.height * 4);
                assert!(
                    t.data.iter().all(|v| v.is_finite()),
                    "a baked texture holds a non-finite value"
                );
            }
            Outcome::Baked
        }
        Err(e) => {
            let named = !e.object.is_empty() || e.kind == ErrorKind::NothingToBake;
            Outcome::Refused("bake", e.kind, e.to_string(), named)
        }
    }
}

/// Asserts the invariants documented on `rigbake_core::model`.
fn check_model(m: &Model) {
    let n = m.nodes.len();
    assert_eq!(
        m.topological_order.len(),
        n,
        "topological order covers all nodes"
    );
    let mut position = vec![usize::MAX; n];
    for (k, &i) in m.topological_order.iter().enumerate() {
        assert!(i < n && position[i] == usize::MAX, "order is a permutation");
        position[i] = k;
    }
    for (i, node) in m.nodes.iter().enumerate() {
        if let Some(p) = node.parent {
            assert!(p < n && position[p] < position[i], "parents first");
            assert!(m.nodes[p].children.contains(&i));
        }
        for &c in &node.children {
            assert_eq!(m.nodes[c].parent, Some(i));
        }
        assert!(node.mesh.is_none_or(|x| x < m.meshes.len()));
        assert!(node.skin.is_none_or(|x| x < m.skins.len()));
        assert!(node.rest_matrix.is_finite());
        let r = node.rest;
        assert!(r.translation.is_finite() && r.rotation.is_finite() && r.scale.is_finite());
        assert!((r.rotation.length() - 1.0).abs() < 1e-6);
        if let Some(w) = &node.morph_weights {
            assert!(w.iter().all(|v| v.is_finite()));
        }
    }
    for skin in &m.skins {
        assert!(!skin.joints.is_empty());
        assert!(skin.joints.iter().all(|&j| j < n));
        assert_eq!(skin.inverse_binds.len(), skin.joints.len());
        assert!(skin.inverse_binds.iter().all(|b| b.is_finite()));
    }
    for mesh in &m.meshes {
        assert!(mesh.default_weights.iter().all(|v| v.is_finite()));
        for p in &mesh.primitives {
            let count = p.vertex_count();
            assert!(p.positions.iter().all(|v| v.is_finite()));
            if let Some(idx) = &p.indices {
                assert!(idx.iter().all(|&i| (i as usize) < count));
            }
            if let Some(inf) = &p.influences {
                assert_eq!(inf.joints.len(), count * inf.per_vertex);
                assert_eq!(inf.weights.len(), count * inf.per_vertex);
                for v in 0..count {
                    let (_, w) = inf.vertex(v);
                    assert!(w.iter().all(|x| x.is_finite() && *x >= 0.0));
                    assert!(w.iter().sum::<f32>() > 0.0);
                }
            }
            assert_eq!(p.morph_targets.len(), mesh.default_weights.len());
        }
    }
    for (i, node) in m.nodes.iter().enumerate() {
        if let (Some(mesh), Some(skin)) = (node.mesh, node.skin) {
            let joints = m.skins[skin].joints.len();
            for p in &m.meshes[mesh].primitives {
                if let Some(inf) = &p.influences {
                    assert!(
                        inf.joints.iter().all(|&j| usize::from(j) < joints),
                        "nodes[{i}]: weighted joints exist in the skin"
                    );
                }
            }
        }
    }
    for clip in &m.clips {
        assert!(clip.duration.is_finite() && clip.duration >= 0.0);
        for ch in &clip.channels {
            assert!(ch.node < n);
            assert!(!ch.times.is_empty());
            assert!(ch.times[0] >= 0.0);
            assert!(ch.times.windows(2).all(|w| w[0] < w[1]));
            assert!(ch.times.iter().all(|t| t.is_finite()));
            assert!(ch.values.iter().all(|v| v.is_finite()));
            let per_key = if ch.interpolation == Interpolation::CubicSpline {
                3 * ch.width
            } else {
                ch.width
            };
            assert_eq!(ch.values.len(), ch.times.len() * per_key);
            match ch.property {
                Property::Translation | Property::Scale => assert_eq!(ch.width, 3),
                Property::Rotation => assert_eq!(ch.width, 4),
                Property::MorphWeights => {
                    let mesh = m.nodes[ch.node].mesh.expect("morph channel on a mesh node");
                    assert_eq!(ch.width, m.meshes[mesh].default_weights.len());
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The corpus

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| {
        v.parse()
            .unwrap_or_else(|_| panic!("{name} must be a number, got {v}"))
    })
}

#[test]
fn damaged_models_never_panic_hang_or_overallocate() {
    let seed = env_u64("RIGBAKE_DAMAGE_SEED").unwrap_or(DEFAULT_SEED);
    let only = env_u64("RIGBAKE_DAMAGE_CASE");
    let cases = env_u64("RIGBAKE_DAMAGE_CASES").unwrap_or(DEFAULT_CASES);
    let bases = bases();
    let splits: Vec<Option<Split>> = bases.iter().map(split).collect();

    // The undamaged bases must bake (or be skipped for want of a skin) under
    // the corpus limits, so the limits do not hide the code under test; the
    // degenerate fixtures fail as they were made to.
    for base in &bases {
        match run_case(&base.bytes, base) {
            Outcome::Baked => {}
            Outcome::Refused(_, ErrorKind::NothingToBake, _, _) => {}
            Outcome::Refused(..) if base.name.contains("degenerate/") => {}
            Outcome::Refused(stage, kind, msg, _) => {
                panic!(
                    "{}: undamaged base fails at {stage} ({kind:?}): {msg}",
                    base.name
                )
            }
        }
    }

    // Panics are expected to be caught and reported, not printed one by one.
    let panics: Arc<Mutex<Vec<String>>> = Arc::default();
    {
        let panics = Arc::clone(&panics);
        std::panic::set_hook(Box::new(move |info| {
            let at = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_default();
            eprintln!("panic: {info} ({at})");
            panics.lock().unwrap().push(format!("{info} ({at})"));
        }));
    }

    // Watchdog: a case that runs far past the bound is a hang; say which and
    // stop the run instead of blocking CI.
    let started = Instant::now();
    let case_started_ms = Arc::new(AtomicU64::new(u64::MAX));
    let case_index = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    {
        let (case_started_ms, case_index, done) =
            (case_started_ms.clone(), case_index.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(200));
                let at = case_started_ms.load(Ordering::Relaxed);
                let now = started.elapsed().as_millis() as u64;
                if at != u64::MAX && now.saturating_sub(at) > HANG_LIMIT.as_millis() as u64 {
                    eprintln!(
                        "damage corpus: case {} (seed {seed:#x}) hangs (over {HANG_LIMIT:?}); rerun with RIGBAKE_DAMAGE_CASE={}",
                        case_index.load(Ordering::Relaxed),
                        case_index.load(Ordering::Relaxed)
                    );
                    std::process::exit(101);
                }
            }
        });
    }

    let range = match only {
        Some(i) => i..i + 1,
        None => 0..cases,
    };
    let mut error_log = std::env::var_os("RIGBAKE_DAMAGE_LOG")
        .map(|p| std::fs::File::create(p).expect("RIGBAKE_DAMAGE_LOG is writable"));
    let mut failures: Vec<String> = Vec::new();
    let mut stats: BTreeMap<String, usize> = BTreeMap::new();
    let mut messages: BTreeMap<String, usize> = BTreeMap::new();
    let mut slowest = (Duration::ZERO, 0u64);
    let mut biggest = (0usize, 0u64);
    let mut most_work = (0usize, 0u64);
    let mut total_bytes = 0usize;
    for index in range.clone() {
        let (b, bytes, log) = make_case(seed, index, &bases, &splits);
        let base = &bases[b];
        total_bytes += bytes.len();
        let what = || format!("case {index} ({}: {})", base.name, log.join("; "));
        if only.is_some() {
            eprintln!("{}", what());
            std::fs::write(std::env::temp_dir().join("rigbake-damage-case"), &bytes).unwrap();
        }

        let baseline = start_measuring();
        let allocated_before = allocated_total();
        case_index.store(index, Ordering::Relaxed);
        case_started_ms.store(started.elapsed().as_millis() as u64, Ordering::Relaxed);
        let t0 = Instant::now();
        let result = catch_unwind(AssertUnwindSafe(|| run_case(&bytes, base)));
        let took = t0.elapsed();
        case_started_ms.store(u64::MAX, Ordering::Relaxed);
        let peak = peak_since(baseline);
        let allocated = allocated_total() - allocated_before;
        if allocated > most_work.0 {
            most_work = (allocated, index);
        }

        if took > slowest.0 {
            slowest = (took, index);
        }
        if peak > biggest.0 {
            biggest = (peak, index);
        }
        match result {
            Ok(Outcome::Baked) => *stats.entry("baked".into()).or_default() += 1,
            Ok(Outcome::Refused(stage, kind, msg, named)) => {
                *stats.entry(format!("{stage}: {kind:?}")).or_default() += 1;
                // Group messages by their first words, for the log.
                let key: String = msg
                    .split(": ")
                    .last()
                    .unwrap_or("")
                    .chars()
                    .take(60)
                    .collect();
                *messages.entry(format!("{kind:?}: {key}")).or_default() += 1;
                if let Some(f) = error_log.as_mut() {
                    use std::io::Write as _;
                    writeln!(f, "{}\n    -> {kind:?}: {msg}", what()).unwrap();
                }
                if !named
                    && matches!(
                        kind,
                        ErrorKind::Invalid | ErrorKind::Limit | ErrorKind::Unsupported
                    )
                {
                    failures.push(format!("{}: error names no glTF object: {msg}", what()));
                }
            }
            Err(_) => {
                let message = panics.lock().unwrap().pop().unwrap_or_default();
                failures.push(format!("{}: PANIC {message}", what()));
            }
        }
        if allocated > CASE_ALLOCATION_LIMIT {
            failures.push(format!(
                "{}: allocated {} MiB in all, over {} MiB",
                what(),
                allocated >> 20,
                CASE_ALLOCATION_LIMIT >> 20
            ));
        }
        if took > CASE_TIME_LIMIT {
            failures.push(format!(
                "{}: took {took:?}, over {CASE_TIME_LIMIT:?}",
                what()
            ));
        }
        if peak > CASE_MEMORY_LIMIT {
            failures.push(format!(
                "{}: peak allocation {} MiB, over {} MiB",
                what(),
                peak >> 20,
                CASE_MEMORY_LIMIT >> 20
            ));
        }
    }
    done.store(true, Ordering::Relaxed);
    let _ = std::panic::take_hook();

    let elapsed = started.elapsed();
    report(&format!(
        "damage corpus: seed {seed:#x}, {} cases over {} bases ({} MiB of input) in {elapsed:.1?}; slowest case {} took {:?}; largest peak {} KiB (case {})",
        range.end - range.start,
        bases.len(),
        total_bytes >> 20,
        slowest.1,
        slowest.0,
        biggest.0 >> 10,
        biggest.1
    ));
    report(&format!(
        "damage corpus: most allocation work {} KiB in all (case {})",
        most_work.0 >> 10,
        most_work.1
    ));
    for (outcome, count) in &stats {
        report(&format!("  {count:6}  {outcome}"));
    }
    let mut common: Vec<_> = messages.into_iter().collect();
    common.sort_by_key(|(_, count)| std::cmp::Reverse(*count));
    for (msg, count) in common.iter().take(40) {
        report(&format!("  {count:6}  {msg}"));
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed; first ones:\n{}",
        failures.len(),
        range.end - range.start,
        failures
            .iter()
            .take(30)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
