//! Which instruction set verify's evaluation is compiled for. The
//! evaluation ([`super::measure`]) is plain f64 and f32 arithmetic over
//! columns; compiled for AVX2 its loops run four doubles (eight floats)
//! per instruction instead of two (four). Only the width changes: Rust
//! never fuses a multiply and an add on its own and this module enables no
//! FMA, so each lane computes the same operations in the same order and
//! the numbers are the same to the bit whichever copy runs (a test runs
//! both on the fixtures and a shared model and compares their reports).
//!
//! The copies are made where the evaluation starts
//! (`measure::evaluate_run`): a function compiled for AVX2 that calls the
//! body, whose every kernel is `#[inline(always)]` so it is compiled into
//! each copy; that call, after [`avx2`] says yes, is verify's only
//! `unsafe`.

use std::sync::OnceLock;

/// The environment variable that, set to `baseline`, keeps verify on the
/// baseline copy on a CPU with AVX2 (to compare the two; tests do).
pub const ISA_VARIABLE: &str = "RIGBAKE_VERIFY_ISA";

/// Whether the AVX2 copy runs here: the CPU has AVX2 and
/// [`ISA_VARIABLE`] does not say `baseline` (read once).
pub fn avx2() -> bool {
    static AVX2: OnceLock<bool> = OnceLock::new();
    *AVX2.get_or_init(|| {
        let baseline = std::env::var_os(ISA_VARIABLE).is_some_and(|v| v == "baseline");
        !baseline && cpu_has_avx2()
    })
}

fn cpu_has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}
