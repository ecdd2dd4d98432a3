# rigbake tasks. `just --list` shows them all.

# Build everything (release).
build:
    cargo build --workspace --release

# Run the whole test suite (the command README gives; .ci/run runs it too,
# with the reference tools installed and required).
test:
    cargo test --workspace --locked

# Build the Bevy checkers (tools/openvat-player's workspace: the OpenVAT
# player and bevy_rigbake with rigbake-bevy-shots and the crowd example;
# Bevy built once), which
# the tests find in tools/openvat-player/target/debug; then run the
# plugin's own tests and the tests that use them.
bevy:
    cargo build --locked --manifest-path tools/openvat-player/Cargo.toml --workspace --bins --examples
    cargo test --locked --manifest-path tools/openvat-player/Cargo.toml -p bevy_rigbake --lib
    cargo test --locked -p rigbake-cli --test bevy_plugin --test openvat_player

# Bake the bundled example into out/.
example:
    cargo run --release -p rigbake-cli -- bake fixtures/tentacle.glb --out out

# Play the bakes under out/ (or DIR) as a crowd in the browser (docs/viewer.md).
view DIR="out":
    cargo run --release -p rigbake-cli -- view {{DIR}}

# The library example: open a bake and sample skin matrices at a time
# (bakes fixtures/tentacle.glb first when no container is given).
example-lib *ARGS:
    cargo run -p rigbake --example open_bake -- {{ARGS}}

# Performance summary: every throughput target beside its measured figure
# (docs/performance.md explains them).
bench:
    cargo bench -p rigbake-cli --bench summary

# The output-speed comparison of issue 20 (every VAT encoding of BrainStem,
# write floors, three.js, corpus; medians of interleaved runs).
bench-output *ARGS:
    tools/bench/issue20.sh {{ARGS}}

# The read side against the bake (issue 34): bake, verify, preview and the
# view page (headless Chromium) of BrainStem and Knight, wall time, peak
# memory and ratios to the bake.
bench-read *ARGS:
    tools/bench/read_side.sh {{ARGS}}

# The compact encodings against the forms they replace (issue 52): Knight's
# qts unorm16 bone texture against mat4 f32, BrainStem's packed VAT against
# the EXR16 and PNG16 pairs, and in KTX2 against the half-float pair; GPU
# bytes, verify's largest errors, bake time.
bench-compact *ARGS:
    tools/bench/compact.sh {{ARGS}}

# The per-texel VAT encoders on one thread: packed-normal search (AVX2
# where the CPU has it) and 16-bit quantisation, texels per second.
bench-encode:
    cargo bench -p rigbake-format --bench vat_encode

# Bake time of every compact encoding against today's form of the same
# model (issue 52: within 1.5x), over several shared models, best of N.
bench-encoding-times *ARGS:
    tools/bench/encoding_times.sh {{ARGS}}

# What measuring every clip's encoding error costs: bake time against a
# baseline build without it (--baseline BIN).
bench-measure-cost *ARGS:
    tools/bench/measure_cost.sh {{ARGS}}

# Every benchmark, with divan's detailed statistics.
bench-all:
    cargo bench --workspace

# Regenerate fixtures/ from the generator.
fixtures:
    cargo run -p rigbake-fixtures

# Regenerate docs/shaders/generated/ (GLSL, GLSL ES, HLSL) from docs/shaders/rigbake.wgsl
# and the viewer's crates/view/assets/shaders.js (with viewer.wgsl) with naga; the
# shaders test fails until the committed files are what this writes.
shaders:
    RIGBAKE_BLESS=1 cargo test --workspace --locked --test shaders

# Regenerate formats/*.schema.json from the serde types of the documents
# they describe (schemars, crates/bake/src/schemas.rs); the schemas test
# fails until the committed files are what this writes.
schemas:
    RIGBAKE_BLESS=1 cargo test -p rigbake --locked --lib schemas

# Format and lint (code and API docs).
lint:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -- -D warnings
    RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps

# Fuzz one target (import, bake, container, texture or manifest) with cargo-fuzz until
# stopped (docs/fuzzing.md; needs `cargo install cargo-fuzz`). `bake` runs
# without debug assertions (-O): one of zune-inflate's fires on valid ZIP
# EXRs (docs/fuzzing.md).
fuzz TARGET *ARGS:
    test -d fuzz/seeds || tools/fuzz/seeds.sh
    cd fuzz && mkdir -p corpus/{{TARGET}} && FUZZ_SCRATCH="${FUZZ_SCRATCH:-/tmp}" RAYON_NUM_THREADS=1 RUSTC_BOOTSTRAP=1 cargo fuzz run {{ if TARGET == "bake" { "-O" } else { "" } }} -s none {{TARGET}} corpus/{{TARGET}} seeds/{{TARGET}} -- -max_len=300000 -timeout=30 -rss_limit_mb=4096 {{ARGS}}
