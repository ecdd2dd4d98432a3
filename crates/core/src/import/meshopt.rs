//! Decoding `EXT_meshopt_compression` / `KHR_meshopt_compression` buffer
//! views with meshoptimizer's decoders (the `meshopt` crate). A decoded view
//! replaces the view's bytes for every accessor that reads it, so accessors,
//! animation keys and indices need no other change.
//!
//! The decoders are safe on untrusted bytes, but their preconditions (element
//! size, index count a multiple of 3, filter and stride pairs) are asserts in
//! C++, so each one is checked here first. The decoded size
//! (`count * byteStride`) is charged against the import's memory budget
//! before it is allocated.

use super::compression::MeshoptView;
use crate::error::{Error, Result};

/// Largest vertex element meshopt encodes (glTF: `byteStride` at most 256).
const MAX_VERTEX_STRIDE: usize = 256;

/// What a view decodes with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Attributes,
    Triangles,
    Indices,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Filter {
    None,
    Octahedral,
    Quaternion,
    Exponential,
    Color,
}

/// The buffer view that carries the extension: what its decoded bytes must
/// match.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Parent {
    /// Its `byteStride`, when it has one (the extension's must equal it).
    pub stride: Option<usize>,
    /// Its `byteLength` (must be `count * byteStride`).
    pub length: usize,
}

/// The view's mode and filter, and its byte stride checked against both
/// (as the extension allows them).
fn checked_encoding(view: &MeshoptView, ext: &str, path: &str) -> Result<(Mode, Filter, usize)> {
    let mode = match view.mode.as_str() {
        "ATTRIBUTES" => Mode::Attributes,
        "TRIANGLES" => Mode::Triangles,
        "INDICES" => Mode::Indices,
        other => {
            return Err(Error::invalid(
                format!("{path}.mode"),
                format!("mode `{other}` is not ATTRIBUTES, TRIANGLES or INDICES"),
            ));
        }
    };
    let filter = match view.filter.as_deref().unwrap_or("NONE") {
        "NONE" => Filter::None,
        "OCTAHEDRAL" => Filter::Octahedral,
        "QUATERNION" => Filter::Quaternion,
        "EXPONENTIAL" => Filter::Exponential,
        "COLOR" if ext.starts_with("KHR") => Filter::Color,
        other => {
            return Err(Error::invalid(
                format!("{path}.filter"),
                format!("filter `{other}` is not one {ext} defines"),
            ));
        }
    };
    let stride = view.byte_stride;
    let stride_ok = match mode {
        Mode::Attributes => stride > 0 && stride <= MAX_VERTEX_STRIDE && stride.is_multiple_of(4),
        Mode::Triangles | Mode::Indices => stride == 2 || stride == 4,
    };
    if !stride_ok {
        return Err(Error::invalid(
            format!("{path}.byteStride"),
            match mode {
                Mode::Attributes => format!(
                    "byteStride {stride} must be a multiple of 4 from 4 to {MAX_VERTEX_STRIDE} for ATTRIBUTES"
                ),
                _ => format!("byteStride {stride} must be 2 or 4 for {}", view.mode),
            },
        ));
    }
    let filter_ok = match filter {
        Filter::None => true,
        _ if mode != Mode::Attributes => false,
        Filter::Octahedral | Filter::Color => stride == 4 || stride == 8,
        Filter::Quaternion => stride == 8,
        Filter::Exponential => true,
    };
    if !filter_ok {
        return Err(Error::invalid(
            format!("{path}.filter"),
            format!(
                "filter {} cannot apply to {} data of byteStride {stride}",
                view.filter.as_deref().unwrap_or("NONE"),
                view.mode
            ),
        ));
    }
    Ok((mode, filter, stride))
}

/// Decodes one compressed view. `source` is the buffer the extension names;
/// `budget` is the number of bytes the import may still allocate, and the
/// decoded length is checked against it before anything is allocated.
/// `path` names the extension object (`bufferViews[3].extensions.EXT_meshopt_compression`).
pub(crate) fn decode_view(
    view: &MeshoptView,
    parent: Option<Parent>,
    ext: &str,
    source: &[u8],
    budget: u64,
    path: &str,
) -> Result<Vec<u8>> {
    let (mode, filter, stride) = checked_encoding(view, ext, path)?;
    if view.count == 0 {
        return Err(Error::invalid(format!("{path}.count"), "count is 0"));
    }
    if mode == Mode::Triangles && !view.count.is_multiple_of(3) {
        return Err(Error::invalid(
            format!("{path}.count"),
            format!(
                "count {} is not a multiple of 3, as TRIANGLES needs",
                view.count
            ),
        ));
    }
    // Vertex streams pass through one transient copy of the decoded size
    // (the decoder's elements, then their bytes), so they are charged twice
    // while decoding: the peak stays within the budget.
    let transient = if mode == Mode::Attributes { 2 } else { 1 };
    let decoded = view
        .count
        .checked_mul(stride)
        .filter(|n| (*n as u64).saturating_mul(transient) <= budget)
        .ok_or_else(|| {
            Error::limit(
                path,
                format!(
                    "decoding it needs {} elements of {stride} bytes ({transient} times that while decoding); that is more than the {budget} bytes left of the import memory budget (max_decoded_bytes)",
                    view.count
                ),
            )
        })?;
    // The extension's rules against the view that carries it (a mismatch
    // used to decode into scrambled positions with no error).
    if let Some(parent) = parent {
        if let Some(s) = parent.stride
            && s != stride
        {
            return Err(Error::invalid(
                format!("{path}.byteStride"),
                format!(
                    "byteStride {stride} differs from the buffer view's byteStride {s}; the extension requires them equal"
                ),
            ));
        }
        if decoded != parent.length {
            return Err(Error::invalid(
                format!("{path}.count"),
                format!(
                    "count {} x byteStride {stride} is {decoded} bytes, not the buffer view's byteLength {}; the extension requires them equal",
                    view.count, parent.length
                ),
            ));
        }
    }
    let bytes = view
        .byte_offset
        .checked_add(view.byte_length)
        .and_then(|end| source.get(view.byte_offset..end))
        .ok_or_else(|| {
            Error::invalid(
                path,
                format!(
                    "byteOffset {} + byteLength {} runs past the end of buffers[{}] ({} bytes)",
                    view.byte_offset,
                    view.byte_length,
                    view.buffer,
                    source.len()
                ),
            )
        })?;
    let damaged = |e: meshopt::Error| {
        Error::invalid(
            path,
            format!("the compressed data cannot be decoded ({e}); the buffer is damaged"),
        )
        .with_hint("export or compress the model again")
    };
    let out = match mode {
        Mode::Attributes => attributes(bytes, view.count, stride / 4, filter).map_err(damaged)?,
        Mode::Triangles if stride == 2 => {
            as_bytes(&meshopt::decode_index_buffer::<u16>(bytes, view.count).map_err(damaged)?)
        }
        Mode::Triangles => {
            as_bytes(&meshopt::decode_index_buffer::<u32>(bytes, view.count).map_err(damaged)?)
        }
        Mode::Indices if stride == 2 => {
            as_bytes(&meshopt::decode_index_sequence::<u16>(bytes, view.count).map_err(damaged)?)
        }
        Mode::Indices => {
            as_bytes(&meshopt::decode_index_sequence::<u32>(bytes, view.count).map_err(damaged)?)
        }
    };
    debug_assert_eq!(out.len(), decoded);
    Ok(out)
}

fn as_bytes<T: bytemuck::Pod>(values: &[T]) -> Vec<u8> {
    bytemuck::cast_slice(values).to_vec()
}

/// Decodes `count` vertex elements of `words` 32-bit words each (the C API
/// takes the element size from the element type, so each size is its own
/// instance), then applies the filter in place.
fn attributes(
    bytes: &[u8],
    count: usize,
    words: usize,
    filter: Filter,
) -> Result<Vec<u8>, meshopt::Error> {
    macro_rules! sizes {
        ($($k:literal)*) => {
            match words {
                $($k => decode_elements::<$k>(bytes, count, filter),)*
                _ => unreachable!("byteStride checked to be 4..=256"),
            }
        };
    }
    sizes!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32
           33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64)
}

/// One vertex element of `K` words (the decoder's element size is its size).
#[derive(Clone, Copy)]
#[repr(transparent)]
struct Element<const K: usize>([u32; K]);

impl<const K: usize> Default for Element<K> {
    fn default() -> Self {
        Self([0; K])
    }
}

fn decode_elements<const K: usize>(
    bytes: &[u8],
    count: usize,
    filter: Filter,
) -> Result<Vec<u8>, meshopt::Error> {
    let mut elements = meshopt::decode_vertex_buffer::<Element<K>>(bytes, count)?;
    // Filters act element by element, in place: no intermediate copy.
    for e in &mut elements {
        let words = &mut e.0;
        match (filter, K) {
            (Filter::None, _) => {}
            (Filter::Exponential, _) => {
                meshopt::encoding::decode_filter_exp::<K>(std::slice::from_mut(words));
            }
            (Filter::Octahedral, 1) => {
                meshopt::encoding::decode_filter_oct::<i8>(bytemuck::cast_slice_mut(words));
            }
            (Filter::Octahedral, _) => {
                meshopt::encoding::decode_filter_oct::<i16>(bytemuck::cast_slice_mut(words));
            }
            (Filter::Color, 1) => {
                meshopt::encoding::decode_filter_color::<u8>(bytemuck::cast_slice_mut(words));
            }
            (Filter::Color, _) => {
                meshopt::encoding::decode_filter_color::<u16>(bytemuck::cast_slice_mut(words));
            }
            (Filter::Quaternion, _) => {
                meshopt::encoding::decode_filter_quat(bytemuck::cast_slice_mut(words));
            }
        }
    }
    // The decoded bytes, written once (the elements are then dropped).
    let mut out = Vec::with_capacity(count * K * 4);
    for e in &elements {
        for w in e.0 {
            out.extend_from_slice(&w.to_ne_bytes());
        }
    }
    Ok(out)
}
