//! Known traps for a glTF importer and baker, each defended explicitly: every
//! one must end in a clear error (naming the glTF object) or a correct
//! result, never a panic, a hang, a stack overflow or an unbounded
//! allocation. Variants are built in memory from the `two_joint` fixture
//! (accessors: 0 inverse binds, 1 POSITION, 2 NORMAL, 3 TEXCOORD_0,
//! 4 JOINTS_0, 5 WEIGHTS_0, 6 indices, 7/9/11 key times, 8/10/12 key values;
//! buffer view `i` holds accessor `i`; nodes: 0 `root`, 1 `tip`, 2 `mesh`).

// A per-thread counting allocator measures what an import allocates; it only
// forwards to the system allocator.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;
use std::time::{Duration, Instant};

use rigbake_core::bake::vat::{self, VatBaker, VatBatch, VatOptions};
use rigbake_core::bake::{BoneBakeOptions, bake_bone_textures};
use rigbake_core::import::{ImportOptions, Limits, Source, import_bytes, import_slice};
use rigbake_core::layout::MatrixLayout;
use rigbake_core::timeline::{MAX_ROWS, Sampling, Timeline};
use rigbake_core::{Error, ErrorKind, Model};
use rigbake_fixtures::Builder;
use rigbake_fixtures::models::two_joint;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------
// Per-thread allocation peaks

struct PerThread;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
    /// Bytes this thread ever allocated (grown by reallocations too): a
    /// work counter that does not depend on how loaded the machine is.
    static ALLOCATED: Cell<usize> = const { Cell::new(0) };
}

fn track(delta: isize) {
    if delta > 0 {
        let _ = ALLOCATED.try_with(|a| a.set(a.get() + delta as usize));
    }
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

// SAFETY: forwards every call to `System` unchanged; only counts sizes.
unsafe impl GlobalAlloc for PerThread {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            track(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            track(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        track(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            track(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: PerThread = PerThread;

/// Runs `f` and returns its result and the most memory this thread held
/// above what it held before.
fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    let out = f();
    let peak = PEAK.with(Cell::get) - base;
    (out, peak.max(0) as usize)
}

/// Runs `f` and returns its result and the bytes this thread allocated
/// during it (all of them, freed or not).
fn allocated_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = ALLOCATED.with(Cell::get);
    let out = f();
    (out, ALLOCATED.with(Cell::get) - before)
}

/// Wall-clock guard of the hierarchy tests below. They exist to catch
/// quadratic walks (a 100,000-level chain walked per node is 5e9 steps,
/// minutes to hours), not to time the linear ones (a few seconds on an
/// idle machine in a debug build). Ten minutes is far above the linear cost
/// even on a loaded 2-core runner where this binary gets a fraction of one
/// core, and still far below the quadratic cost, so it cannot flake.
const QUADRATIC_GUARD: Duration = Duration::from_secs(600);

// ---------------------------------------------------------------------------
// Helpers

const NO_DIR: Source<'static> = Source {
    name: "trap",
    dir: None,
};

fn import(b: &Builder) -> Result<Model, Error> {
    import_slice(&b.to_glb(), &NO_DIR, &ImportOptions::default())
}

fn import_with(b: &Builder, limits: Limits) -> Result<Model, Error> {
    let options = ImportOptions {
        limits,
        ..ImportOptions::default()
    };
    import_slice(&b.to_glb(), &NO_DIR, &options)
}

fn bake(model: &Model) -> Result<(Timeline, usize), Error> {
    let timeline = Timeline::all_clips(model, Sampling::default())?;
    let textures = bake_bone_textures(model, &timeline, &BoneBakeOptions::default())?;
    for t in &textures {
        assert!(t.data.iter().all(|v| v.is_finite()));
    }
    Ok((timeline, textures.len()))
}

/// Asserts `result` is an error of `kind` about `object` whose message
/// contains `words`; returns it.
#[track_caller]
fn expect_error<T: std::fmt::Debug>(
    result: Result<T, Error>,
    kind: ErrorKind,
    object: &str,
    words: &str,
) -> Error {
    let e = result.expect_err("an error");
    assert_eq!(e.kind, kind, "{e}");
    assert_eq!(e.object, object, "{e}");
    assert!(e.message.contains(words), "`{words}` not in: {e}");
    e
}

fn set(b: &mut Builder, key: &str, index: usize, field: &str, value: Value) {
    b.get_mut(key, index).insert(field.into(), value);
}

/// Overwrites the bytes of accessor `acc` (buffer view `acc`) at `offset`.
fn poke(b: &mut Builder, view: usize, offset: usize, bytes: &[u8]) {
    let start = b.root["bufferViews"][view]["byteOffset"].as_u64().unwrap() as usize + offset;
    b.bin[start..start + bytes.len()].copy_from_slice(bytes);
}

/// A fresh `two_joint` whose skin and mesh nodes sit at the bottom of a chain
/// of `depth` extra nodes, with the chain's top node animated.
fn deep_chain(depth: usize) -> Builder {
    let mut b = two_joint();
    let first = b.root["nodes"].as_array().unwrap().len();
    for k in 0..depth {
        b.node(json!({"name": format!("link{k}"), "translation": [0.0, 0.001, 0.0]}));
        if k > 0 {
            b.add_child(first + k - 1, first + k);
        }
    }
    let bottom = first + depth - 1;
    // Hang the skeleton and the mesh node from the bottom of the chain.
    b.add_child(bottom, 0);
    b.add_child(bottom, 2);
    b.root["scenes"] = json!([{"nodes": [first]}]);
    // Animate the top of the chain so every frame re-evaluates all of it.
    b.root["animations"][0]["channels"][0]["target"]["node"] = json!(first);
    b
}

// ---------------------------------------------------------------------------
// Hierarchies

#[test]
fn cycles_and_shared_children_are_refused() {
    // A node that is its own child.
    let mut b = two_joint();
    set(&mut b, "nodes", 1, "children", json!([1]));
    expect_error(
        import(&b),
        ErrorKind::Invalid,
        "nodes[1].children",
        "its own child",
    );
    // A longer cycle: root -> tip -> root, unreachable from any root node.
    let mut b = two_joint();
    set(&mut b, "nodes", 1, "children", json!([0]));
    let e = expect_error(
        import(&b),
        ErrorKind::Invalid,
        "nodes[0].children",
        "is its own ancestor",
    );
    assert!(e.hint.is_some());
    // A child shared by two parents.
    let mut b = two_joint();
    set(&mut b, "nodes", 2, "children", json!([1]));
    expect_error(
        import(&b),
        ErrorKind::Invalid,
        "nodes[2].children",
        "node 1 is already a child of node 0",
    );
}

#[test]
fn a_hierarchy_100000_levels_deep_imports_and_bakes() {
    let started = Instant::now();
    let b = deep_chain(100_000);
    let model = import(&b).expect("deep hierarchy imports");
    assert_eq!(model.nodes.len(), 100_003);
    assert_eq!(model.topological_order.len(), 100_003);
    let (timeline, textures) = bake(&model).expect("deep hierarchy bakes");
    assert_eq!(textures, 1);
    assert!(timeline.rows > 90);
    let skin = &model.skins[0];
    assert_eq!(skin.joint_parents(&model.nodes), [None, Some(0)]);
    // Dropping it must not recurse either.
    drop(model);
    assert!(
        started.elapsed() < QUADRATIC_GUARD,
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn many_skinned_instances_under_a_deep_chain_stay_linear() {
    // 20,000 levels with 5,000 skinned mesh nodes at the bottom: grouping the
    // instances and finding joint parents must not walk the chain per node.
    let started = Instant::now();
    let mut b = deep_chain(20_000);
    let bottom = b.root["nodes"].as_array().unwrap().len() - 1;
    for k in 0..5_000 {
        let n = b.node(json!({"name": format!("copy{k}"), "mesh": 0, "skin": 0}));
        b.add_child(bottom, n);
    }
    let model = import(&b).unwrap();
    let sets = rigbake_core::bake::bone_sets(&model);
    assert_eq!(sets.len(), 1, "identical instances share one texture");
    assert_eq!(sets[0].members.len(), 5_001);
    bake(&model).unwrap();
    assert!(
        started.elapsed() < QUADRATIC_GUARD,
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn many_instances_of_a_large_skinned_mesh_are_checked_once() {
    // 40,000 vertices instanced by 40,000 nodes: checking joints per
    // instance would read 6.4e9 slots; it is done once per mesh.
    let started = Instant::now();
    let mut b = two_joint();
    let mut data = rigbake_fixtures::parts::PrimitiveData::default();
    let (joints, weights): (Vec<[u16; 4]>, Vec<[f64; 4]>) = (0..40_000)
        .map(|v| {
            data.positions.push([f64::from(v) * 1e-3, 0.0, 0.0]);
            ([v as u16 % 2, 0, 0, 0], [1.0, 0.0, 0.0, 0.0])
        })
        .unzip();
    data.influence_sets.push((joints, weights));
    let prim = rigbake_fixtures::parts::primitive(&mut b, &data, rigbake_fixtures::Component::U16);
    let mesh = rigbake_fixtures::parts::add_mesh(&mut b, "big", vec![prim]);
    for _ in 0..40_000 {
        b.node(json!({"mesh": mesh, "skin": 0}));
    }
    let model = import(&b).unwrap();
    assert!(model.has_skinned_mesh());
    let (_, textures) = bake(&model).unwrap();
    assert_eq!(textures, 1, "identical root instances share one texture");
    assert!(
        started.elapsed() < QUADRATIC_GUARD,
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn too_many_distinct_skinned_instances_are_refused() {
    // Each instance under its own static offset needs its own texture.
    let mut b = two_joint();
    for k in 0..1100 {
        let n = b.node(json!({"mesh": 0, "skin": 0, "translation": [f64::from(k), 0.0, 0.0]}));
        // Only nodes of the scene are imported.
        b.root["scenes"][0]["nodes"]
            .as_array_mut()
            .unwrap()
            .push(json!(n));
    }
    let model = import(&b).unwrap();
    assert_eq!(
        rigbake_core::bake::bone_sets(&model).len(),
        1100,
        "k = 0 shares the original node's set"
    );
    let timeline = Timeline::all_clips(&model, Sampling::default()).unwrap();
    let e = expect_error(
        bake_bone_textures(&model, &timeline, &BoneBakeOptions::default()),
        ErrorKind::Limit,
        "nodes",
        "1100 skinned mesh instances each need their own bone texture, more than the limit of 1024",
    );
    assert!(e.hint.is_some());
}

#[test]
fn deeply_nested_json_is_an_error_not_a_stack_overflow() {
    let plain = import(&two_joint()).unwrap();
    for depth in [1_000, 100_000] {
        let nested = "[".repeat(depth) + &"]".repeat(depth);
        // Where a value is parsed (an accessor's `max`) and where it is only
        // skipped (an unknown property).
        for field in ["max", "somethingElse"] {
            let mut doc: Value = serde_json::from_str(&two_joint().to_gltf_embedded()).unwrap();
            doc["accessors"][7][field] = json!("MARK");
            let text = doc.to_string().replace("\"MARK\"", &nested);
            let result = import_slice(text.as_bytes(), &NO_DIR, &ImportOptions::default());
            if field == "max" {
                // Parsed: both depths are past the JSON parser's recursion
                // limit (128), so the document is refused.
                let Err(e) = result else {
                    panic!("{depth} levels in `{field}` imported; expected a refusal")
                };
                assert_eq!(e.kind, ErrorKind::Malformed, "{depth} in {field}: {e}");
                assert!(
                    e.message.contains("recursion limit"),
                    "{depth} in {field}: {e}"
                );
            } else {
                // Skipped: the parser skips an unknown value with a loop,
                // not by recursion, so no depth overflows the stack, and the
                // model is the one without the property.
                let model = result.unwrap_or_else(|e| panic!("{depth} in {field}: {e}"));
                assert_eq!(
                    format!("{model:?}"),
                    format!("{plain:?}"),
                    "{depth} in {field}"
                );
            }
        }
    }
}

#[test]
fn empty_scenes_and_empty_files_import_and_have_nothing_to_bake() {
    for doc in [
        json!({"asset": {"version": "2.0"}}),
        json!({"asset": {"version": "2.0"}, "scenes": [{"nodes": []}], "scene": 0}),
        json!({"asset": {"version": "2.0"}, "nodes": [{}], "scenes": [{}]}),
    ] {
        let model = import_slice(
            doc.to_string().as_bytes(),
            &NO_DIR,
            &ImportOptions::default(),
        )
        .expect("an empty model imports");
        let timeline = Timeline::all_clips(&model, Sampling::default()).unwrap();
        assert_eq!(timeline.rows, 1, "one rest frame");
        let e = bake_bone_textures(&model, &timeline, &BoneBakeOptions::default()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::NothingToBake);
    }
    let doc = json!({"asset": {"version": "2.0"}, "scenes": [], "scene": 0});
    expect_error(
        import_slice(
            doc.to_string().as_bytes(),
            &NO_DIR,
            &ImportOptions::default(),
        ),
        ErrorKind::Malformed,
        "scene",
        "refers to scenes[0], which does not exist (the file has 0 entries)",
    );
}

// ---------------------------------------------------------------------------
// Accessors

#[test]
fn accessors_running_past_their_buffer_are_refused() {
    // Count past the end of the view.
    let mut b = two_joint();
    set(&mut b, "accessors", 2, "count", json!(11));
    expect_error(
        import(&b),
        ErrorKind::Invalid,
        "meshes[0].primitives[0].attributes.NORMAL",
        "11 elements of 12 bytes (stride 12) at byteOffset 0 run past the end of bufferViews[2] (120 bytes)",
    );
    // A stride that walks past the end.
    let mut b = two_joint();
    set(&mut b, "bufferViews", 2, "byteStride", json!(16));
    expect_error(
        import(&b),
        ErrorKind::Invalid,
        "meshes[0].primitives[0].attributes.NORMAL",
        "(stride 16)",
    );
    // An accessor offset past the end.
    let mut b = two_joint();
    set(
        &mut b,
        "accessors",
        2,
        "byteOffset",
        json!(4_294_967_295u64),
    );
    expect_error(
        import(&b),
        ErrorKind::Invalid,
        "meshes[0].primitives[0].attributes.NORMAL",
        "run past the end of bufferViews[2]",
    );
    // A view past the end of its buffer, and one whose end overflows.
    for offset in [900u64, u64::MAX - 8] {
        let mut b = two_joint();
        set(&mut b, "bufferViews", 2, "byteOffset", json!(offset));
        expect_error(
            import(&b),
            ErrorKind::Invalid,
            "bufferViews[2]",
            "runs past the end of buffers[0]",
        );
    }
    // A stride smaller than the element.
    let mut b = two_joint();
    set(&mut b, "bufferViews", 2, "byteStride", json!(8));
    expect_error(
        import(&b),
        ErrorKind::Invalid,
        "meshes[0].primitives[0].attributes.NORMAL",
        "byteStride 8 is smaller than the element size 12",
    );
    // A buffer whose declared length is more than its data.
    let mut b = two_joint();
    let mut doc: Value = serde_json::from_str(&b.to_gltf_embedded()).unwrap();
    doc["buffers"][0]["byteLength"] = json!(1u64 << 40);
    expect_error(
        import_slice(
            doc.to_string().as_bytes(),
            &NO_DIR,
            &ImportOptions::default(),
        ),
        ErrorKind::Invalid,
        "buffers[0]",
        "byteLength is 1099511627776 but only 896 bytes are present",
    );
    b.bin.truncate(100);
    assert!(import(&b).is_err());
}

#[test]
fn accessor_count_zero_is_refused() {
    let mut b = two_joint();
    set(&mut b, "accessors", 7, "count", json!(0));
    expect_error(
        import(&b),
        ErrorKind::Invalid,
        "animations[0].samplers[0].input",
        "accessor count is 0",
    );
}

#[test]
fn huge_declared_counts_are_bounded_before_allocating() {
    let limits = Limits {
        max_accessor_components: 1 << 20,
        max_total_components: 1 << 22,
        ..Limits::default()
    };
    // A count over the per-accessor limit, with data behind it or not.
    for count in [1u64 << 21, u64::from(u32::MAX), 1 << 62] {
        let mut b = two_joint();
        set(&mut b, "accessors", 2, "count", json!(count));
        let (result, peak) = peak_during(|| import_with(&b, limits.clone()));
        expect_error(
            result,
            ErrorKind::Limit,
            "meshes[0].primitives[0].attributes.NORMAL",
            "more than the limit of 1048576 components",
        );
        assert!(peak < 1 << 20, "count {count}: peak {peak} bytes");
    }
    // Within the limit but far past the data: refused before decoding.
    let mut b = two_joint();
    set(&mut b, "accessors", 2, "count", json!(200_000));
    let (result, peak) = peak_during(|| import_with(&b, limits.clone()));
    assert_eq!(result.unwrap_err().kind, ErrorKind::Invalid);
    assert!(peak < 1 << 20, "peak {peak} bytes");
    // A sparse accessor without a buffer view declares zeros it never stores.
    let mut b = two_joint();
    let acc = b.get_mut("accessors", 2);
    acc.remove("bufferView");
    acc.insert("count".into(), json!(1u64 << 40));
    acc.insert(
        "sparse".into(),
        json!({"count": 1, "indices": {"bufferView": 6, "componentType": 5123}, "values": {"bufferView": 2}}),
    );
    let (result, peak) = peak_during(|| import_with(&b, limits.clone()));
    assert_eq!(result.unwrap_err().kind, ErrorKind::Limit);
    assert!(peak < 1 << 20, "peak {peak} bytes");
    // Many uses of one large accessor: the model's total is bounded too.
    let mut b = two_joint();
    let big = b.floats(&vec![0.5; 3 << 18], "VEC3"); // 786,432 components
    let keys: Vec<f64> = (0..1 << 18).map(|k| f64::from(k) * 1e-3).collect();
    let times = b.floats(&keys, "SCALAR");
    for k in 0..8 {
        b.push(
            "animations",
            json!({
                "name": format!("big{k}"),
                "samplers": [{"input": times, "output": big}],
                "channels": [{"sampler": 0, "target": {"node": 1, "path": "translation"}}],
            }),
        );
    }
    let (result, peak) = peak_during(|| import_with(&b, limits.clone()));
    let e = result.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Limit, "{e}");
    assert!(
        e.message
            .contains("more than the limit of 4194304 components"),
        "{e}"
    );
    assert!(peak < 48 << 20, "peak {peak} bytes");
    // Morph weights of many instances of a mesh with many targets.
    let mut b = two_joint();
    let targets: Vec<Value> = (0..1000).map(|_| json!({"POSITION": 2})).collect();
    b.root["meshes"][0]["primitives"][0]["targets"] = json!(targets);
    for _ in 0..5000 {
        b.node(json!({"mesh": 0}));
    }
    let e = import_with(&b, limits.clone()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Limit, "{e}");
    assert!(e.object.starts_with("nodes["), "{e}");
    // Node count.
    let e = import_with(
        &deep_chain(100),
        Limits {
            max_nodes: 50,
            ..Limits::default()
        },
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Limit);
    assert_eq!(e.object, "nodes");
    assert!(
        e.message.contains("103 nodes, more than the limit of 50"),
        "{e}"
    );
}

#[test]
fn component_types_the_spec_forbids_are_refused() {
    let cases: &[(usize, u32, &str)] = &[
        (4, 5126, "meshes[0].primitives[0].attributes.JOINTS_0"), // FLOAT joints
        (5, 5125, "meshes[0].primitives[0].attributes.WEIGHTS_0"), // UNSIGNED_INT weights
        (1, 5121, "meshes[0].primitives[0].attributes.POSITION"), // bytes without quantization
        (6, 5126, "meshes[0].primitives[0].indices"),             // FLOAT indices
        (7, 5121, "animations[0].samplers[0].input"),             // byte key times
        (0, 5122, "skins[0].inverseBindMatrices"),                // SHORT matrices
    ];
    for &(acc, component, object) in cases {
        let mut b = two_joint();
        set(&mut b, "accessors", acc, "componentType", json!(component));
        let e = import(&b).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Invalid, "{e}");
        assert_eq!(e.object, object, "{e}");
        assert!(e.message.contains("is not allowed here (allowed:"), "{e}");
    }
    // A value outside the enum is a schema error naming the allowed values.
    let mut b = two_joint();
    set(&mut b, "accessors", 4, "componentType", json!(5124));
    expect_error(
        import(&b),
        ErrorKind::Malformed,
        "accessors[4].componentType",
        "value 5124 is not allowed here by the glTF 2.0 schema; allowed: 5120 (BYTE)",
    );
}

#[test]
fn sparse_accessors_with_bad_indices_are_refused() {
    // Sparse indices live in a new view; values reuse the NORMAL data.
    let sparse = |b: &mut Builder, indices: &[u16], count: u64| {
        let bytes: Vec<u8> = indices.iter().flat_map(|i| i.to_le_bytes()).collect();
        let view = b.view(&bytes);
        set(
            b,
            "accessors",
            2,
            "sparse",
            json!({"count": count, "indices": {"bufferView": view, "componentType": 5123}, "values": {"bufferView": 2}}),
        );
    };
    let object = "meshes[0].primitives[0].attributes.NORMAL.sparse.indices";
    let mut b = two_joint();
    sparse(&mut b, &[0, 10], 2);
    expect_error(
        import(&b),
        ErrorKind::Invalid,
        object,
        "index 10 at position 1 is out of range (count 10)",
    );
    let mut b = two_joint();
    sparse(&mut b, &[3, 3], 2);
    expect_error(
        import(&b),
        ErrorKind::Invalid,
        object,
        "not strictly increasing",
    );
    let mut b = two_joint();
    sparse(&mut b, &[1, 2], 11);
    expect_error(
        import(&b),
        ErrorKind::Invalid,
        "meshes[0].primitives[0].attributes.NORMAL.sparse",
        "sparse count 11 must be between 1 and the accessor count 10",
    );
    // Sparse values past the end of their view.
    let mut b = two_joint();
    sparse(&mut b, &[1, 2], 2);
    let short = b.view(&[0; 12]);
    b.root["accessors"][2]["sparse"]["values"]["bufferView"] = json!(short);
    expect_error(
        import(&b),
        ErrorKind::Invalid,
        "meshes[0].primitives[0].attributes.NORMAL.sparse.values",
        &format!(
            "2 elements of 12 bytes (stride 12) at byteOffset 0 run past the end of bufferViews[{short}] (12 bytes)"
        ),
    );
}

// ---------------------------------------------------------------------------
// Numbers

fn set_float(b: &mut Builder, view: usize, index: usize, value: f32) {
    poke(b, view, index * 4, &value.to_le_bytes());
}

#[test]
fn bad_key_times_are_refused() {
    for (value, words) in [
        (f32::NAN, "element 1 holds a non-finite value (NaN)"),
        (f32::INFINITY, "element 1 holds a non-finite value (inf)"),
    ] {
        let mut b = two_joint();
        set_float(&mut b, 7, 1, value);
        expect_error(
            import(&b),
            ErrorKind::Invalid,
            "animations[0].samplers[0].input",
            words,
        );
    }
    let mut b = two_joint();
    set_float(&mut b, 7, 0, -0.5);
    expect_error(
        import(&b),
        ErrorKind::Invalid,
        "animations[0].channels[0]",
        "key times are negative (first key at -0.5 s)",
    );
    // Equal keys are not increasing.
    let mut b = two_joint();
    set_float(&mut b, 7, 1, 0.0);
    expect_error(
        import(&b),
        ErrorKind::Invalid,
        "animations[0].channels[0]",
        "key times are not increasing (key 1 at 0 s follows 0 s)",
    );
    // A key time so late the clip would need more rows than a timeline holds.
    let mut b = two_joint();
    set_float(&mut b, 7, 1, 1e9);
    let model = import(&b).unwrap();
    let e = Timeline::all_clips(&model, Sampling::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Limit);
    assert_eq!(e.object, "animations[0]");
    assert!(
        e.message
            .starts_with("clip `turn_linear` lasts 1000000000 s"),
        "{e}"
    );
    assert!(
        e.message.contains(&format!("more than {MAX_ROWS} frames")),
        "{e}"
    );
}

#[test]
fn non_finite_numbers_are_refused_wherever_they_are() {
    // Vertices, inverse binds and key values hold raw floats.
    for (view, object) in [
        (1, "meshes[0].primitives[0].attributes.POSITION"),
        (5, "meshes[0].primitives[0].attributes.WEIGHTS_0"),
        (0, "skins[0].inverseBindMatrices"),
        (8, "animations[0].samplers[0].output"),
    ] {
        for value in [f32::NAN, f32::NEG_INFINITY] {
            let mut b = two_joint();
            set_float(&mut b, view, 2, value);
            let e = import(&b).unwrap_err();
            assert_eq!(e.kind, ErrorKind::Invalid, "{e}");
            assert_eq!(e.object, object, "{e}");
            assert!(e.message.contains("non-finite value"), "{e}");
        }
    }
    // JSON numbers beyond f32: serde_json either refuses them while parsing
    // (with some of its features, as a workspace build enables) or they
    // become infinite, which the importer refuses. Either way the error names
    // the field.
    for (field, value) in [
        ("matrix", {
            let mut m = vec![json!(0.0); 16];
            m[0] = json!(1e39);
            json!(m)
        }),
        ("translation", json!([0.0, -1e39, 0.0])),
        ("scale", json!([0.0, 1e39, 0.0])),
    ] {
        let mut b = two_joint();
        set(&mut b, "nodes", 1, field, value);
        let e = import(&b).unwrap_err();
        assert!(
            e.object.starts_with(&format!("nodes[1].{field}")),
            "{field}: {e}"
        );
        match e.kind {
            ErrorKind::Invalid => assert!(e.message.contains("not a finite number"), "{e}"),
            ErrorKind::Malformed => assert!(e.message.contains("too large"), "{e}"),
            other => panic!("{field}: unexpected {other:?}: {e}"),
        }
    }
    let mut b = two_joint();
    set(&mut b, "nodes", 1, "rotation", json!([0.0, 0.0, 0.0, 0.0]));
    expect_error(
        import(&b),
        ErrorKind::Invalid,
        "nodes[1].rotation",
        "zero quaternion",
    );
    // Finite values that overflow once multiplied down the hierarchy.
    let mut b = two_joint();
    set(&mut b, "nodes", 0, "scale", json!([3e38, 3e38, 3e38]));
    set(&mut b, "nodes", 1, "scale", json!([3e38, 3e38, 3e38]));
    let model = import(&b).unwrap();
    let timeline = Timeline::all_clips(&model, Sampling::default()).unwrap();
    let e = bake_bone_textures(&model, &timeline, &BoneBakeOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Invalid, "{e}");
    assert!(e.object.starts_with("skins[0].joints["), "{e}");
    assert!(
        e.message.contains("is not finite: transforms overflow"),
        "{e}"
    );
}

// ---------------------------------------------------------------------------
// Joints

#[test]
fn joints_that_are_not_nodes_are_refused() {
    let mut b = two_joint();
    set(&mut b, "skins", 0, "joints", json!([0, 99]));
    expect_error(
        import(&b),
        ErrorKind::Malformed,
        "skins[0].joints[1]",
        "refers to nodes[99], which does not exist (the file has 3 entries)",
    );
    // A channel aimed at a node that does not exist: gltf-json does not
    // check channel targets, rigbake does.
    let mut b = two_joint();
    b.root["animations"][0]["channels"][0]["target"]["node"] = json!(7);
    expect_error(
        import(&b),
        ErrorKind::Malformed,
        "animations[0].channels[0].target.node",
        "refers to nodes[7], which does not exist",
    );
    let mut b = two_joint();
    b.root["animations"][0]["channels"][0]["target"]["path"] = json!("matrix");
    expect_error(
        import(&b),
        ErrorKind::Malformed,
        "animations[0].channels[0].target.path",
        "value \"matrix\" is not allowed here by the glTF 2.0 schema; allowed: translation, rotation, scale or weights",
    );
    // A POSITION that is not an accessor (gltf-json's own check panics).
    let mut b = two_joint();
    b.root["meshes"][0]["primitives"][0]["attributes"]["POSITION"] = json!(40);
    expect_error(
        import(&b),
        ErrorKind::Malformed,
        "meshes[0].primitives[0].attributes.POSITION",
        "refers to accessors[40], which does not exist (the file has 13 entries)",
    );
    // A weighted joint index past the skin's joints.
    let mut b = two_joint();
    poke(&mut b, 4, 0, &5u16.to_le_bytes());
    expect_error(
        import(&b),
        ErrorKind::Invalid,
        "meshes[0].primitives[0].attributes.JOINTS_0",
        "vertex 0 uses joint 5 but skins[0] (used by nodes[2]) has only 2 joints",
    );
}

#[test]
fn more_joints_than_a_texture_holds_are_refused() {
    // 3000 joints * 4 pixels > 8192.
    let mut b = two_joint();
    let mut joints = vec![json!(0), json!(1)];
    for _ in 0..2998 {
        joints.push(json!(b.node(json!({}))));
    }
    set(&mut b, "skins", 0, "joints", json!(joints));
    b.get_mut("skins", 0).remove("inverseBindMatrices");
    let model = import(&b).unwrap();
    let timeline = Timeline::all_clips(&model, Sampling::default()).unwrap();
    let e = expect_error(
        bake_bone_textures(&model, &timeline, &BoneBakeOptions::default()),
        ErrorKind::Limit,
        "skins[0]",
        "one row of the bone texture is 12000 pixels (3000 joints x 4), wider than the maximum size 8192",
    );
    assert!(e.hint.unwrap().contains("mat3x4"));
    // Three pixels per joint are still 9000 > 8192.
    let options = BoneBakeOptions {
        layout: MatrixLayout::Mat3x4,
        ..BoneBakeOptions::default()
    };
    let e = bake_bone_textures(&model, &timeline, &options).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Limit);
    // The total size of all textures is bounded too.
    let small = BoneBakeOptions {
        max_total_pixels: 100,
        ..BoneBakeOptions::default()
    };
    let model = import(&two_joint()).unwrap();
    let timeline = Timeline::all_clips(&model, Sampling::default()).unwrap();
    expect_error(
        bake_bone_textures(&model, &timeline, &small),
        ErrorKind::Limit,
        "skins[0]",
        "more than 100 pixels together",
    );
    // And a skin may not have more joints than a JOINTS_n index can address.
    let mut b = two_joint();
    let first = b.root["nodes"].as_array().unwrap().len();
    for _ in 0..65_537 {
        b.node(json!({}));
    }
    let joints: Vec<usize> = (first..first + 65_537).collect();
    set(&mut b, "skins", 0, "joints", json!(joints));
    expect_error(
        import(&b),
        ErrorKind::Limit,
        "skins[0]",
        "65537 joints, more than 65536",
    );
}

#[test]
fn anchor_tracks_count_against_the_texture_limits() {
    use rigbake_core::bake::anchors::{MAX_AUTO_ANCHORS, auto_anchors};
    use rigbake_core::bake::frames::bake_frames;
    // 65,536 socket-like nodes under a joint: the automatic choice is
    // bounded, and tracking them all explicitly is refused by size before
    // anything is allocated (65,536 x 4 pixels x 93 rows would be 390 MB
    // here, 34 GB at 8,100 rows).
    let mut b = two_joint();
    let sockets: Vec<usize> = (0..65_536)
        .map(|k| b.node(json!({"name": format!("socket{k}")})))
        .collect();
    for &s in &sockets {
        b.add_child(1, s);
    }
    let model = import(&b).unwrap();
    let e = expect_error(
        auto_anchors(&model),
        ErrorKind::Limit,
        "nodes",
        &format!(
            "65536 nodes qualify as automatic anchors, more than the limit of {MAX_AUTO_ANCHORS}"
        ),
    );
    assert!(e.hint.is_some());
    let timeline = Timeline::all_clips(&model, Sampling::default()).unwrap();
    let (result, peak) =
        peak_during(|| bake_frames(&model, &timeline, &BoneBakeOptions::default(), &sockets));
    expect_error(
        result,
        ErrorKind::Limit,
        "anchors",
        "one row of anchor tracks is 262144 pixels (65536 anchors), wider than the maximum size 8192",
    );
    assert!(peak < 16 << 20, "refused after allocating {peak} bytes");
    // Within the width, the anchor pixels count with the bone textures'
    // against the total: 2,000 anchors are 8,000 x 93 = 744,000 pixels, the
    // bone texture 8 x 93 = 744.
    let options = BoneBakeOptions {
        max_total_pixels: 744_000,
        ..BoneBakeOptions::default()
    };
    expect_error(
        bake_frames(&model, &timeline, &options, &sockets[..2000]),
        ErrorKind::Limit,
        "anchors",
        "anchor tracks of 744000 pixels (2000 anchors, 93 frames, 2976000 floats) and bone textures of 744 pixels are more than 744000 pixels together",
    );
    let options = BoneBakeOptions {
        max_total_pixels: 744_744,
        ..BoneBakeOptions::default()
    };
    let baked = bake_frames(&model, &timeline, &options, &sockets[..2000]).unwrap();
    assert_eq!(baked.anchors.data.len(), 2000 * 93 * 16);
    // A model with up to MAX_AUTO_ANCHORS sockets gets them all, in order.
    let mut b = two_joint();
    let few: Vec<usize> = (0..MAX_AUTO_ANCHORS)
        .map(|k| b.node(json!({"name": format!("socket{k}")})))
        .collect();
    for &s in &few {
        b.add_child(1, s);
    }
    let model = import(&b).unwrap();
    assert_eq!(auto_anchors(&model).unwrap(), few);
}

// ---------------------------------------------------------------------------
// Clips

#[test]
fn zero_length_single_key_and_empty_clips_bake() {
    let mut b = two_joint();
    // A single key at t = 0 (zero length), a single key at t = 2 (the clip
    // holds that pose for 2 s), and an animation with no channels at all.
    let q = [0.0, 0.0, 0.0, 1.0];
    let a = rigbake_fixtures::parts::add_animation(&mut b, "pose");
    rigbake_fixtures::parts::add_channel(&mut b, a, 1, "rotation", "LINEAR", &[0.0], &q);
    let a = rigbake_fixtures::parts::add_animation(&mut b, "late");
    rigbake_fixtures::parts::add_channel(&mut b, a, 1, "rotation", "STEP", &[2.0], &q);
    let a = rigbake_fixtures::parts::add_animation(&mut b, "cubic_single");
    let cubic = [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0];
    rigbake_fixtures::parts::add_channel(
        &mut b,
        a,
        1,
        "translation",
        "CUBICSPLINE",
        &[0.0],
        &cubic,
    );
    b.push(
        "animations",
        json!({"name": "empty", "channels": [], "samplers": []}),
    );
    let model = import(&b).unwrap();
    let (timeline, _) = bake(&model).unwrap();
    let frames: Vec<_> = timeline.clips[3..]
        .iter()
        .map(|c| (c.name.as_str(), c.frames, c.looping))
        .collect();
    assert_eq!(
        frames,
        [
            ("pose", 1, true),
            ("late", 61, true),
            ("cubic_single", 1, true),
            ("empty", 1, true)
        ]
    );
    // A timeline without rows cannot be baked.
    let empty = Timeline::from_sources(Sampling::default(), Vec::new()).unwrap();
    expect_error(
        bake_bone_textures(&model, &empty, &BoneBakeOptions::default()),
        ErrorKind::Invalid,
        "animations",
        "no frames",
    );
}

/// Most bytes a refused timeline may allocate before refusing (see
/// `evaluation_work_is_bounded`).
const WORK_BOUND: usize = 16 << 20;

#[test]
fn evaluation_work_is_bounded() {
    // A clip of 8 hours at 30 fps (864,001 rows, under MAX_ROWS) on a
    // 3,003-node hierarchy would be 2.6e9 node evaluations.
    let mut b = deep_chain(3_000);
    let times = b.root["animations"][0]["samplers"][0]["input"]
        .as_u64()
        .unwrap() as usize;
    set_float(&mut b, times, 1, 28_800.0);
    let model = import(&b).unwrap();
    // Bounded work is counted, not timed: the refusal must come before the
    // timeline is filled. Its rows alone would be 864,001 x 3,003 matrices
    // (166 GB); evaluating even a few thousand rows would allocate more than
    // the bound below, which is what sizing the refusal itself may take.
    let (result, allocated) = allocated_during(|| Timeline::all_clips(&model, Sampling::default()));
    let e = result.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Limit);
    assert_eq!(e.object, "animations");
    assert!(
        e.message.contains("evaluations, more than the limit"),
        "{e}"
    );
    assert!(
        allocated < WORK_BOUND,
        "allocated {allocated} bytes before refusing"
    );
    // Channels cost too: 300,001 frames of 10,000 channels on one node.
    let mut b = two_joint();
    let times = b.floats(&[0.0, 10_000.0], "SCALAR");
    let values = b.floats(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0], "VEC3");
    let channels: Vec<Value> = (0..10_000)
        .map(|_| json!({"sampler": 0, "target": {"node": 1, "path": "translation"}}))
        .collect();
    b.push(
        "animations",
        json!({"name": "busy", "samplers": [{"input": times, "output": values}], "channels": channels}),
    );
    let model = import(&b).unwrap();
    let (result, allocated) = allocated_during(|| Timeline::all_clips(&model, Sampling::default()));
    let e = result.unwrap_err();
    assert!(e.message.contains("10003 animation channels"), "{e}");
    // 300,001 rows of even one matrix per channel would be 192 GB.
    assert!(
        allocated < WORK_BOUND,
        "allocated {allocated} bytes before refusing"
    );
}

// ---------------------------------------------------------------------------
// GLB framing

#[test]
fn truncated_glb_files_are_errors_at_every_length() {
    let bytes = rigbake_fixtures::models::tentacle().to_glb();
    for len in (0..bytes.len()).step_by(3) {
        let e = import_slice(&bytes[..len], &NO_DIR, &ImportOptions::default())
            .expect_err("a truncated file is an error");
        assert!(
            matches!(e.kind, ErrorKind::Malformed | ErrorKind::Invalid),
            "{len}: {e}"
        );
    }
    // Cut inside the BIN chunk: the header's length no longer matches...
    let cut = &bytes[..bytes.len() - 10];
    let e = import_slice(cut, &NO_DIR, &ImportOptions::default()).unwrap_err();
    assert!(e.message.contains("GLB header says the file is"), "{e}");
    assert!(e.hint.as_deref().unwrap().contains("truncated"));
    // ...and with the header patched, the chunk's own length does not.
    let mut patched = cut.to_vec();
    let len = patched.len() as u32;
    patched[8..12].copy_from_slice(&len.to_le_bytes());
    let e = import_slice(&patched, &NO_DIR, &ImportOptions::default()).unwrap_err();
    assert!(e.message.contains("(BIN) declares"), "{e}");
    // A declared length below the header size (the gltf crate's parser
    // underflows on it).
    let mut tiny = bytes.clone();
    tiny[8..12].copy_from_slice(&3u32.to_le_bytes());
    let e = import_slice(&tiny, &NO_DIR, &ImportOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Malformed);
    // A damaged version field.
    let mut v = bytes.clone();
    v[4] = 7;
    let e = import_slice(&v, &NO_DIR, &ImportOptions::default()).unwrap_err();
    assert!(e.message.contains("holds version 7"), "{e}");
}

// ---------------------------------------------------------------------------
// Buffer URIs

/// The x coordinate of vertex 0 in `inside.bin` (as built by `two_joint`)...
const INSIDE_X: f32 = -0.1;
/// ...and in `outside.bin`, which differs there only, so a test can tell
/// which of the two files an import read (inside the accessor's min/max, so
/// both files are valid for the same JSON).
const OUTSIDE_X: f32 = 0.05;

/// A `.gltf` on disk in `dir/model/` whose buffer URI is `uri`; returns its
/// path. `model/inside.bin` and `outside.bin` (in `dir`) hold the same
/// layout but differ in vertex 0's x coordinate ([`INSIDE_X`],
/// [`OUTSIDE_X`]).
fn gltf_with_uri(dir: &Path, uri: &str) -> std::path::PathBuf {
    let (json, bin) = two_joint().to_gltf_external(uri);
    let mut outside = two_joint();
    poke(&mut outside, 1, 0, &OUTSIDE_X.to_le_bytes());
    let (_, outside_bin) = outside.to_gltf_external(uri);
    assert_eq!(outside_bin.len(), bin.len());
    assert_ne!(outside_bin, bin);
    let model_dir = dir.join("model");
    std::fs::create_dir_all(&model_dir).unwrap();
    std::fs::write(model_dir.join("inside.bin"), &bin).unwrap();
    std::fs::write(dir.join("outside.bin"), &outside_bin).unwrap();
    let path = model_dir.join("m.gltf");
    std::fs::write(&path, json).unwrap();
    path
}

/// Vertex 0's x coordinate in the first primitive of `model`: tells
/// whether `inside.bin` ([`INSIDE_X`]) or `outside.bin` ([`OUTSIDE_X`]) was
/// read.
fn first_x(model: &Model) -> f32 {
    model.meshes[0].primitives[0].positions[0][0]
}

fn import_path(path: &Path, allow_outside_folder: bool) -> Result<Model, Error> {
    let bytes = std::fs::read(path).unwrap();
    let options = ImportOptions {
        allow_outside_folder,
        ..ImportOptions::default()
    };
    import_bytes(path, &bytes, &options)
}

#[test]
fn buffer_uris_cannot_escape_the_folder_or_reach_the_network() {
    let tmp = tempfile::tempdir().unwrap();
    let model = import_path(&gltf_with_uri(tmp.path(), "inside.bin"), false).unwrap();
    assert_eq!(first_x(&model), INSIDE_X, "read model/inside.bin");
    for uri in [
        "../outside.bin",
        "../../etc/passwd",
        "%2e%2e/outside.bin",
        "sub/../../outside.bin",
        "/etc/passwd",
    ] {
        let path = gltf_with_uri(tmp.path(), uri);
        let e = import_path(&path, false).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Unsupported, "{uri}: {e}");
        assert_eq!(e.object, "buffers[0]");
        assert!(
            e.message.contains("leaves the model's folder; refused"),
            "{e}"
        );
        assert!(e.hint.is_some());
        assert_eq!(e.file.as_deref(), Some(path.as_path()), "names the file");
    }
    // Allowed on request.
    let path = gltf_with_uri(tmp.path(), "../outside.bin");
    let model = import_path(&path, true).unwrap();
    assert_eq!(
        first_x(&model),
        OUTSIDE_X,
        "read the outside file, not inside.bin"
    );
    for uri in [
        "http://example.invalid/a.bin",
        "https://example.invalid/a.bin",
        "file:///etc/passwd",
        "ftp://example.invalid/a.bin",
    ] {
        let e = import_path(&gltf_with_uri(tmp.path(), uri), false).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Unsupported, "{uri}: {e}");
        assert!(e.message.contains("never fetches from the network"), "{e}");
    }
    // A directory is not a buffer.
    std::fs::create_dir_all(tmp.path().join("model/sub")).unwrap();
    let e = import_path(&gltf_with_uri(tmp.path(), "sub"), false).unwrap_err();
    assert!(e.message.contains("is not a regular file"), "{e}");
    // A model read from memory has no folder at all.
    let (json, _) = two_joint().to_gltf_external("inside.bin");
    let e = import_slice(json.as_bytes(), &NO_DIR, &ImportOptions::default()).unwrap_err();
    assert!(
        e.message.contains("the model was not read from a file"),
        "{e}"
    );
}

#[test]
fn model_files_are_read_within_the_size_limit() {
    use rigbake_core::import::read_file;
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("m.glb");
    std::fs::write(&path, two_joint().to_glb()).unwrap();
    let small = Limits {
        max_file_bytes: 100,
        ..Limits::default()
    };
    let e = read_file(&path, &small).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Limit);
    assert!(e.message.contains("more than the limit of 100"), "{e}");
    assert_eq!(e.file.as_deref(), Some(path.as_path()));
    let e = read_file(tmp.path(), &Limits::default()).unwrap_err();
    assert!(e.message.contains("is a folder"), "{e}");
    // A device has no size up front; reading stops at the limit.
    #[cfg(unix)]
    {
        let e = read_file(Path::new("/dev/zero"), &small).unwrap_err();
        // Refused as not a regular file, before a byte is read.
        assert_eq!(e.kind, ErrorKind::Io, "{e}");
    }
}

#[cfg(unix)]
#[test]
fn symbolic_links_out_of_the_folder_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let path = gltf_with_uri(tmp.path(), "link.bin");
    std::os::unix::fs::symlink(
        tmp.path().join("outside.bin"),
        tmp.path().join("model/link.bin"),
    )
    .unwrap();
    let e = import_path(&path, false).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unsupported, "{e}");
    assert!(e.message.contains("through a symbolic link"), "{e}");
    let model = import_path(&path, true).unwrap();
    assert_eq!(first_x(&model), OUTSIDE_X, "followed the link out");
    // A link that stays inside is fine.
    let path = gltf_with_uri(tmp.path(), "alias.bin");
    std::os::unix::fs::symlink("inside.bin", tmp.path().join("model/alias.bin")).unwrap();
    let model = import_path(&path, false).unwrap();
    assert_eq!(first_x(&model), INSIDE_X, "followed the link to inside.bin");
}

/// Finite transforms and finite vertices can still multiply past the range
/// of f32: a root scaled by 3e38 is a finite skin matrix, but a vertex two
/// units out lands at 6e38. The animated bounds (every bake records them)
/// and the VAT kernel's rows are checked, and the error names the
/// primitive, the node, the clip and the frame instead of writing
/// infinities that no reader accepts (found by fuzzing, docs/fuzzing.md).
#[test]
fn deformed_positions_past_the_f32_range_are_refused() {
    let mut b = two_joint();
    set(&mut b, "nodes", 0, "scale", json!([3e38, 3e38, 3e38]));
    let model = import(&b).expect("finite transforms import");
    let (timeline, _) = bake(&model).expect("finite skin matrices bake");
    let words = "the deformed positions of node `mesh` are not finite at clip";
    expect_error(
        rigbake_core::bake::bounds::clip_bounds(&model, &timeline),
        ErrorKind::Invalid,
        "meshes[0].primitives[0]",
        words,
    );
    let options = VatOptions {
        normals: true,
        ..VatOptions::default()
    };
    let plan = vat::plan(&model, &timeline, &options).unwrap();
    let baker = VatBaker::new(&model, &timeline, plan, options.convention).unwrap();
    let layout = baker.plan().sets[0].layout;
    let rows = layout.frames * layout.bands;
    let mut positions = vec![0.0; rows * layout.width * 3];
    let mut normals = vec![0.0; rows * layout.width * 3];
    let batch = VatBatch {
        positions: &mut positions,
        normals: Some(&mut normals),
        tangents: None,
    };
    let e = expect_error(
        baker.fill(0, 0, rows, batch),
        ErrorKind::Invalid,
        "meshes[0].primitives[0]",
        words,
    );
    assert!(
        e.message.contains("frame 0"),
        "the first row is reported: {e}"
    );

    // At a scale that stays in range the same model bakes.
    set(&mut b, "nodes", 0, "scale", json!([1e30, 1e30, 1e30]));
    let model = import(&b).unwrap();
    let (timeline, _) = bake(&model).unwrap();
    rigbake_core::bake::bounds::clip_bounds(&model, &timeline).expect("in range");
}

/// A joint flung 1e13 units away in a clip keeps its rotation and scale
/// within `qts`'s relative limit, but the decoded matrix (f32 parts) is
/// off by far more than the model's size: `qts` is refused for it, naming
/// the skin, instead of recording an error that verify calls absurd
/// (found by fuzzing the bake). The matrix layouts take it.
#[test]
fn qts_is_refused_when_its_error_passes_the_model_size() {
    use rigbake_core::bake::frames::{bake_frames, check_forms};
    use rigbake_fixtures::parts::{add_animation, add_channel};
    let mut b = two_joint();
    let a = add_animation(&mut b, "fling");
    #[rustfmt::skip]
    let keys = [0.0, 1.0, 0.0,  1.234_567e13, 1.0, 0.0];
    add_channel(&mut b, a, 1, "translation", "LINEAR", &[0.0, 1.0], &keys);
    let model = import(&b).unwrap();
    let timeline = Timeline::all_clips(&model, Sampling::default()).unwrap();
    let qts = BoneBakeOptions {
        layout: MatrixLayout::Qts,
        ..BoneBakeOptions::default()
    };
    let baked = bake_frames(&model, &timeline, &qts, &[]).unwrap();
    let e = expect_error(
        check_forms(&model, &timeline, &baked.textures),
        ErrorKind::Invalid,
        "skins[0]",
        "more than the model's size",
    );
    assert!(e.to_string().contains("--layout mat4"), "{e}");
    let mat4 = bake_frames(&model, &timeline, &BoneBakeOptions::default(), &[]).unwrap();
    check_forms(&model, &timeline, &mat4.textures).expect("mat4 has no lossy form");
    // Without the fling the same model takes qts.
    let model = import(&two_joint()).unwrap();
    let timeline = Timeline::all_clips(&model, Sampling::default()).unwrap();
    let baked = bake_frames(&model, &timeline, &qts, &[]).unwrap();
    check_forms(&model, &timeline, &baked.textures).expect("qts holds the plain rig");
}

/// NORMAL must be unit length; a file whose normals are tiny (1e-33) used
/// to bake zero VAT normals (their square underflows in f32) where the
/// reference evaluation found unit ones (found by fuzzing). The importer
/// rescales directions off unit length by more than a thousandth, in f64,
/// and keeps the rest bit for bit.
#[test]
fn normals_far_from_unit_length_are_rescaled_on_import() {
    let mut b = two_joint();
    let original = import(&b).unwrap().meshes[0].primitives[0]
        .normals
        .clone()
        .unwrap();
    // Vertex 0 tiny, vertex 1 huge, vertex 2 slightly long (kept).
    let tiny: Vec<u8> = [3e-33f32, 0.0, 4e-33]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let huge: Vec<u8> = [0.0f32, 6e30, 8e30]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let long: Vec<u8> = [0.0f32, 1.0005, 0.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    poke(&mut b, 2, 0, &tiny);
    poke(&mut b, 2, 12, &huge);
    poke(&mut b, 2, 24, &long);
    let model = import(&b).unwrap();
    let normals = model.meshes[0].primitives[0].normals.as_ref().unwrap();
    assert!(
        (normals[0] - glam::Vec3::new(0.6, 0.0, 0.8)).length() < 1e-6,
        "{}",
        normals[0]
    );
    assert!(
        (normals[1] - glam::Vec3::new(0.0, 0.6, 0.8)).length() < 1e-6,
        "{}",
        normals[1]
    );
    assert_eq!(normals[2], glam::Vec3::new(0.0, 1.0005, 0.0));
    assert_eq!(normals[3..], original[3..], "unit normals are untouched");
}
