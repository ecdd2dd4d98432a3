//! Bounds-checked decoding of glTF accessors (dense and sparse).
//!
//! The gltf crate's readers panic on some malformed inputs and silently
//! misread others (quantized data read as f32, underflow on count 0), so
//! rigbake decodes accessors itself: every offset, stride and count is checked
//! against the real buffer length with overflow-checked arithmetic before a
//! byte is read, and element counts are bounded before anything is allocated.
//! This module never interprets what the data means.

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::BTreeMap;

use gltf::accessor::{Accessor, DataType, Dimensions};

use super::options::Limits;
use crate::error::{Error, Result};

/// Component types and normalisation allowed for one use of an accessor.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Allowed {
    /// Permitted component types.
    pub types: &'static [DataType],
    /// Permitted element types.
    pub dims: &'static [Dimensions],
}

/// Reads accessors out of loaded buffers, keeping count of everything it
/// decodes against [`Limits::max_total_components`] and
/// [`Limits::max_decoded_bytes`], before allocating it.
pub(crate) struct AccessorReader<'a> {
    buffers: &'a [Cow<'a, [u8]>],
    /// Decoded bytes of meshopt-compressed buffer views, by view index:
    /// they replace the view's own bytes.
    decoded_views: &'a BTreeMap<usize, Vec<u8>>,
    limits: &'a Limits,
    /// Components still allowed before the model exceeds its total limit.
    budget: Cell<usize>,
    /// Bytes still allowed before the import exceeds its memory budget.
    bytes_left: Cell<u64>,
}

/// Bytes one decoded component takes (every component decodes to an `f32`
/// or a `u32`).
pub(crate) const DECODED_COMPONENT_BYTES: u64 = 4;

fn dims_name(d: Dimensions) -> &'static str {
    match d {
        Dimensions::Scalar => "SCALAR",
        Dimensions::Vec2 => "VEC2",
        Dimensions::Vec3 => "VEC3",
        Dimensions::Vec4 => "VEC4",
        Dimensions::Mat2 => "MAT2",
        Dimensions::Mat3 => "MAT3",
        Dimensions::Mat4 => "MAT4",
    }
}

fn type_name(t: DataType) -> &'static str {
    match t {
        DataType::I8 => "BYTE",
        DataType::U8 => "UNSIGNED_BYTE",
        DataType::I16 => "SHORT",
        DataType::U16 => "UNSIGNED_SHORT",
        DataType::U32 => "UNSIGNED_INT",
        DataType::F32 => "FLOAT",
    }
}

/// Where the bytes of `count` elements of `elem` bytes live: (start, stride).
struct Span<'b> {
    bytes: &'b [u8],
    start: usize,
    stride: usize,
}

impl<'a> AccessorReader<'a> {
    /// A reader over `buffers` (and the decoded views that replace some
    /// buffer views) with a fresh budget.
    pub fn new(
        buffers: &'a [Cow<'a, [u8]>],
        decoded_views: &'a BTreeMap<usize, Vec<u8>>,
        limits: &'a Limits,
    ) -> Self {
        Self {
            buffers,
            decoded_views,
            limits,
            budget: Cell::new(limits.max_total_components),
            bytes_left: Cell::new(limits.max_decoded_bytes),
        }
    }

    /// Takes `components` out of the model's total budget, and their decoded
    /// bytes out of the memory budget, or fails with a limit error about
    /// `path`.
    pub fn charge(&self, components: usize, path: &str) -> Result<()> {
        match self.budget.get().checked_sub(components) {
            Some(left) => {
                let bytes = (components as u64).saturating_mul(DECODED_COMPONENT_BYTES);
                self.charge_bytes(bytes, path)?;
                self.budget.set(left);
                Ok(())
            }
            None => Err(Error::limit(
                path,
                format!(
                    "the model holds more than the limit of {} components (vertex data, keys, matrices and morph weights together)",
                    self.limits.max_total_components
                ),
            )),
        }
    }

    /// Takes `bytes` out of the import's memory budget
    /// ([`Limits::max_decoded_bytes`]) before they are allocated, or fails
    /// with a limit error about `path`.
    pub fn charge_bytes(&self, bytes: u64, path: &str) -> Result<()> {
        let left = self.bytes_left.get();
        match left.checked_sub(bytes) {
            Some(rest) => {
                self.bytes_left.set(rest);
                Ok(())
            }
            None => {
                let used = self.limits.max_decoded_bytes - left;
                Err(Error::limit(
                    path,
                    format!(
                        "decoding it needs {bytes} bytes; with the {used} bytes already decoded that is more than the import memory budget of {} bytes (max_decoded_bytes)",
                        self.limits.max_decoded_bytes
                    ),
                ))
            }
        }
    }

    /// Decodes an accessor as floats (flat, `dims.multiplicity()` per
    /// element). Integer components are normalised when the accessor says so
    /// (glTF rules: `max(c / 127, -1)` for BYTE, `c / 255` for UNSIGNED_BYTE,
    /// and likewise for 16-bit) and converted as plain numbers otherwise.
    /// Every value must be finite.
    pub fn floats(&self, acc: &Accessor<'_>, path: &str, allowed: Allowed) -> Result<Vec<f32>> {
        let ty = self.check_types(acc, path, allowed)?;
        let normalized = acc.normalized();
        let convert = move |b: &[u8]| -> f32 {
            match (ty, normalized) {
                (DataType::F32, _) => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
                (DataType::I8, true) => (f32::from(b[0] as i8) / 127.0).max(-1.0),
                (DataType::U8, true) => f32::from(b[0]) / 255.0,
                (DataType::I16, true) => {
                    (f32::from(i16::from_le_bytes([b[0], b[1]])) / 32767.0).max(-1.0)
                }
                (DataType::U16, true) => f32::from(u16::from_le_bytes([b[0], b[1]])) / 65535.0,
                (DataType::I8, false) => f32::from(b[0] as i8),
                (DataType::U8, false) => f32::from(b[0]),
                (DataType::I16, false) => f32::from(i16::from_le_bytes([b[0], b[1]])),
                (DataType::U16, false) => f32::from(u16::from_le_bytes([b[0], b[1]])),
                (DataType::U32, _) => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32,
            }
        };
        let values = self.decode(acc, path, ty, 0.0f32, convert)?;
        if let Some(k) = values.iter().position(|v| !v.is_finite()) {
            let n = acc.dimensions().multiplicity();
            return Err(Error::invalid(
                path,
                format!("element {} holds a non-finite value ({})", k / n, values[k]),
            ));
        }
        Ok(values)
    }

    /// Checks floats decoded elsewhere (a Draco stream) for `acc` as
    /// [`Self::floats`] checks its own: the accessor's type, then integer
    /// values normalised when the accessor says so, then finiteness. The
    /// values were charged with [`Self::charge_accessor`].
    pub fn floats_decoded(
        &self,
        acc: &Accessor<'_>,
        path: &str,
        allowed: Allowed,
        mut values: Vec<f32>,
        integer: bool,
    ) -> Result<Vec<f32>> {
        let ty = self.check_types(acc, path, allowed)?;
        if integer && acc.normalized() {
            let (scale, min) = match ty {
                DataType::I8 => (127.0, -1.0),
                DataType::U8 => (255.0, 0.0),
                DataType::I16 => (32767.0, -1.0),
                DataType::U16 => (65535.0, 0.0),
                _ => (1.0, f32::NEG_INFINITY),
            };
            for v in &mut values {
                *v = (*v / scale).max(min);
            }
        }
        if let Some(k) = values.iter().position(|v| !v.is_finite()) {
            let n = acc.dimensions().multiplicity();
            return Err(Error::invalid(
                path,
                format!("element {} holds a non-finite value ({})", k / n, values[k]),
            ));
        }
        Ok(values)
    }

    /// Checks unsigned integers decoded elsewhere (Draco joint indices,
    /// given as floats) for `acc`: whole numbers from 0 to 2^32 - 1.
    pub fn uints_decoded(
        &self,
        acc: &Accessor<'_>,
        path: &str,
        allowed: Allowed,
        values: &[f32],
    ) -> Result<Vec<u32>> {
        self.check_types(acc, path, allowed)?;
        values
            .iter()
            .enumerate()
            .map(|(k, &v)| {
                if v >= 0.0 && v.fract() == 0.0 && v <= u32::MAX as f32 {
                    Ok(v as u32)
                } else {
                    Err(Error::invalid(
                        path,
                        format!(
                            "element {} holds {v}, not an unsigned integer",
                            k / acc.dimensions().multiplicity()
                        ),
                    ))
                }
            })
            .collect()
    }

    /// Bytes left in the import's memory budget.
    pub fn bytes_left(&self) -> u64 {
        self.bytes_left.get()
    }

    /// The bytes of buffer view `view` (its decoded bytes when it was
    /// meshopt-compressed), checked to lie within its buffer.
    pub fn view_bytes(&self, view: &gltf::buffer::View<'_>) -> Result<&'a [u8]> {
        if let Some(d) = self.decoded_views.get(&view.index()) {
            return Ok(d);
        }
        let buffer_index = view.buffer().index();
        let bytes = self.buffers.get(buffer_index).ok_or_else(|| {
            Error::invalid(
                format!("bufferViews[{}]", view.index()),
                "buffer not loaded",
            )
        })?;
        let view_path = format!("bufferViews[{}]", view.index());
        let view_end = view
            .offset()
            .checked_add(view.length())
            .filter(|end| *end <= bytes.len())
            .ok_or_else(|| {
                Error::invalid(
                    &view_path,
                    format!(
                        "byteOffset {} + byteLength {} runs past the end of buffers[{}] ({} bytes)",
                        view.offset(),
                        view.length(),
                        buffer_index,
                        bytes.len()
                    ),
                )
            })?;
        Ok(&bytes[view.offset()..view_end])
    }

    /// Checks `acc`'s declared size against
    /// [`Limits::max_accessor_components`] and charges it to the budgets, as
    /// decoding it would; returns its component count.
    pub fn charge_accessor(&self, acc: &Accessor<'_>, path: &str) -> Result<usize> {
        let count = acc.count();
        if count == 0 {
            return Err(Error::invalid(path, "accessor count is 0"));
        }
        let ncomp = acc.dimensions().multiplicity();
        let total = count
            .checked_mul(ncomp)
            .filter(|t| *t <= self.limits.max_accessor_components)
            .ok_or_else(|| {
                Error::limit(
                    path,
                    format!(
                        "accessor declares {count} elements of {ncomp} components, more than the limit of {} components",
                        self.limits.max_accessor_components
                    ),
                )
            })?;
        self.charge(total, path)?;
        Ok(total)
    }

    /// Decodes an accessor of unsigned integers (indices, joint indices).
    pub fn uints(&self, acc: &Accessor<'_>, path: &str, allowed: Allowed) -> Result<Vec<u32>> {
        let ty = self.check_types(acc, path, allowed)?;
        let convert = move |b: &[u8]| -> u32 {
            match ty {
                DataType::U8 | DataType::I8 => u32::from(b[0]),
                DataType::U16 | DataType::I16 => u32::from(u16::from_le_bytes([b[0], b[1]])),
                DataType::U32 | DataType::F32 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            }
        };
        self.decode(acc, path, ty, 0u32, convert)
    }

    fn check_types(&self, acc: &Accessor<'_>, path: &str, allowed: Allowed) -> Result<DataType> {
        let ty = acc.data_type();
        let dims = acc.dimensions();
        if !allowed.dims.contains(&dims) {
            let want: Vec<_> = allowed.dims.iter().map(|d| dims_name(*d)).collect();
            return Err(Error::invalid(
                path,
                format!(
                    "accessor type is {}, expected {}",
                    dims_name(dims),
                    want.join(" or ")
                ),
            ));
        }
        if !allowed.types.contains(&ty) {
            let want: Vec<_> = allowed.types.iter().map(|t| type_name(*t)).collect();
            return Err(Error::invalid(
                path,
                format!(
                    "component type {} is not allowed here (allowed: {})",
                    type_name(ty),
                    want.join(", ")
                ),
            ));
        }
        if matches!(dims, Dimensions::Mat2 | Dimensions::Mat3) && ty.size() < 4 {
            // Column padding rules for small matrices; glTF never needs them
            // for anything rigbake reads.
            return Err(Error::invalid(
                path,
                "padded small-component matrices are not supported",
            ));
        }
        Ok(ty)
    }

    /// Checks that `count` elements of `elem` bytes at `offset` with `stride`
    /// fit inside the buffer view `view`, and returns the span.
    fn span(
        &self,
        view: &gltf::buffer::View<'_>,
        offset: usize,
        count: usize,
        elem: usize,
        stride: usize,
        path: &str,
    ) -> Result<Span<'a>> {
        let bytes = self.view_bytes(view)?;
        let view_path = format!("bufferViews[{}]", view.index());
        let needed = count
            .checked_sub(1)
            .and_then(|c| c.checked_mul(stride))
            .and_then(|b| b.checked_add(elem))
            .and_then(|b| b.checked_add(offset));
        match needed {
            Some(n) if n <= bytes.len() => Ok(Span {
                bytes,
                start: offset,
                stride,
            }),
            _ => Err(Error::invalid(
                path,
                format!(
                    "{count} elements of {elem} bytes (stride {stride}) at byteOffset {offset} run past the end of {view_path} ({} bytes)",
                    bytes.len()
                ),
            )),
        }
    }

    fn decode<T: Copy>(
        &self,
        acc: &Accessor<'_>,
        path: &str,
        ty: DataType,
        zero: T,
        convert: impl Fn(&[u8]) -> T,
    ) -> Result<Vec<T>> {
        let count = acc.count();
        let ncomp = acc.dimensions().multiplicity();
        let csize = ty.size();
        let elem = ncomp * csize;
        let total = self.charge_accessor(acc, path)?;

        let mut out = Vec::new();
        match acc.view() {
            Some(view) => {
                let stride = match view.stride() {
                    Some(s) if s < elem => {
                        return Err(Error::invalid(
                            path,
                            format!("byteStride {s} is smaller than the element size {elem}"),
                        ));
                    }
                    Some(s) => s,
                    None => elem,
                };
                let span = self.span(&view, acc.offset(), count, elem, stride, path)?;
                out.reserve_exact(total);
                for i in 0..count {
                    let at = span.start + i * span.stride;
                    let element = &span.bytes[at..at + elem];
                    out.extend(element.chunks_exact(csize).map(&convert));
                }
            }
            None => out.resize(total, zero),
        }

        if let Some(sparse) = acc.sparse() {
            let sparse_path = format!("{path}.sparse");
            let n = sparse.count();
            if n == 0 || n > count {
                return Err(Error::invalid(
                    &sparse_path,
                    format!("sparse count {n} must be between 1 and the accessor count {count}"),
                ));
            }
            let indices = sparse.indices();
            let isize = match indices.index_type() {
                gltf::accessor::sparse::IndexType::U8 => 1,
                gltf::accessor::sparse::IndexType::U16 => 2,
                gltf::accessor::sparse::IndexType::U32 => 4,
            };
            let ispan = self.span(
                &indices.view(),
                indices.offset(),
                n,
                isize,
                isize,
                &format!("{sparse_path}.indices"),
            )?;
            let values = sparse.values();
            let vspan = self.span(
                &values.view(),
                values.offset(),
                n,
                elem,
                elem,
                &format!("{sparse_path}.values"),
            )?;
            let mut previous: Option<usize> = None;
            for k in 0..n {
                let at = ispan.start + k * isize;
                let b = &ispan.bytes[at..at + isize];
                let index = match isize {
                    1 => usize::from(b[0]),
                    2 => usize::from(u16::from_le_bytes([b[0], b[1]])),
                    _ => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize,
                };
                if index >= count || previous.is_some_and(|p| index <= p) {
                    return Err(Error::invalid(
                        format!("{sparse_path}.indices"),
                        format!(
                            "index {index} at position {k} is out of range (count {count}) or not strictly increasing"
                        ),
                    ));
                }
                previous = Some(index);
                let vat = vspan.start + k * elem;
                let element = &vspan.bytes[vat..vat + elem];
                for (c, bytes) in element.chunks_exact(csize).enumerate() {
                    out[index * ncomp + c] = convert(bytes);
                }
            }
        }
        Ok(out)
    }
}
