//! Work counters: how many elementary steps a few algorithms took on the
//! calling thread, so that tests can assert that their work stays linear
//! (or n log n) in the input instead of timing them. Counting is one
//! thread-local addition per step; nothing else reads the counters.

use std::cell::Cell;

/// A kind of counted step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    /// Products of a local matrix into a global one in the direct
    /// evaluation ([`crate::reference`]).
    ReferenceProducts,
    /// Nodes visited (each following its parent link once) while finding
    /// rigid props and their joints ([`crate::bake::anchors::find_props`]).
    PropNodeVisits,
    /// Name comparisons made while checking baked clip names for
    /// duplicates ([`crate::timeline::Timeline::plan`]).
    ClipNameComparisons,
    /// Bytes of text scanned to turn byte offsets into lines and columns
    /// (the manifest's error positions and model lines).
    TextBytesScanned,
    /// Node visits while grouping `_LOD<n>` names and checking `MSFT_lod`
    /// chains ([`crate::import`], [`crate::lod`]).
    LodNodeVisits,
}

const KINDS: usize = 5;

thread_local! {
    static COUNTS: [Cell<u64>; KINDS] = const { [const { Cell::new(0) }; KINDS] };
}

/// Adds `n` steps of `counter` on this thread (other crates of the
/// workspace count their own steps too).
pub fn add(counter: Counter, n: u64) {
    let _ = COUNTS.try_with(|c| {
        let cell = &c[counter as usize];
        cell.set(cell.get().saturating_add(n));
    });
}

/// The steps of `counter` this thread counted since the last `take`, and
/// resets it to zero.
pub fn take(counter: Counter) -> u64 {
    COUNTS
        .try_with(|c| c[counter as usize].replace(0))
        .unwrap_or(0)
}
