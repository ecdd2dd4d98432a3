//! Loading the bytes behind glTF buffers: the GLB binary chunk, base64 data
//! URIs, and files beside the model.
//!
//! Policy: no network (any URI with a scheme other than `data:` is refused),
//! and no reads outside the model's folder unless the caller allows it
//! (absolute paths, `..` that climb above the folder, and symbolic links that
//! lead out of it are refused). Only regular files are read, never more than
//! the size limit. Images are never loaded.

use std::borrow::Cow;
use std::path::{Component, Path, PathBuf};

use base64::Engine as _;

use super::files;
use super::options::{ImportOptions, Source};
use crate::error::{Error, ErrorKind, Result};

/// Loads every buffer of `doc`, in glTF order (the GLB binary chunk is
/// borrowed, not copied). Meshopt fallback buffers (indices in `fallback`)
/// are not read: every view into them is decoded from compressed data, so
/// they load as empty.
pub(crate) fn load<'b>(
    doc: &gltf::Document,
    blob: Option<&'b [u8]>,
    source: &Source<'_>,
    options: &ImportOptions,
    fallback: &[usize],
) -> Result<Vec<Cow<'b, [u8]>>> {
    let mut blob = blob;
    let mut out = Vec::with_capacity(doc.buffers().len());
    for buffer in doc.buffers() {
        if fallback.contains(&buffer.index()) {
            out.push(Cow::Borrowed(&[][..]));
            continue;
        }
        let path = format!("buffers[{}]", buffer.index());
        let data = match buffer.source() {
            gltf::buffer::Source::Bin => Cow::Borrowed(blob.take().ok_or_else(|| {
                Error::invalid(
                    &path,
                    "has no uri, so it must be the GLB binary chunk, but the file has none (or an earlier buffer took it)",
                )
                .with_hint("a .gltf file needs a uri on every buffer; only the first buffer of a .glb may omit it")
            })?),
            gltf::buffer::Source::Uri(uri) => Cow::Owned(load_uri(uri, &path, source, options)?),
        };
        if data.len() < buffer.length() {
            return Err(Error::invalid(
                &path,
                format!(
                    "byteLength is {} but only {} bytes are present",
                    buffer.length(),
                    data.len()
                ),
            )
            .with_hint("the buffer data is truncated or damaged; export the model again"));
        }
        out.push(data);
    }
    Ok(out)
}

/// The checked local file an external (non-`data:`) buffer URI names:
/// refuses URLs, paths leaving the model's folder (also through symbolic
/// links), anything that is not a regular file and files over the size limit
/// (checked from the metadata, without opening the file).
pub(super) fn external_file(
    uri: &str,
    path: &str,
    source: &Source<'_>,
    options: &ImportOptions,
) -> Result<PathBuf> {
    if has_scheme(uri) {
        return Err(Error::new(
            ErrorKind::Unsupported,
            path,
            format!("URI `{uri}` points outside the local file system; rigbake never fetches from the network"),
        )
        .with_hint("download the buffer next to the model and use a relative URI"));
    }
    let Some(dir) = source.dir else {
        return Err(Error::new(
            ErrorKind::Unsupported,
            path,
            format!(
                "external buffer `{uri}` cannot be resolved: the model was not read from a file"
            ),
        ));
    };
    let relative = percent_encoding::percent_decode_str(uri)
        .decode_utf8()
        .map_err(|_| {
            Error::invalid(path, format!("URI `{uri}` is not valid UTF-8 once decoded"))
        })?;
    let file = resolve(dir, &relative, options.allow_outside_folder).ok_or_else(|| {
        Error::new(
            ErrorKind::Unsupported,
            path,
            format!("URI `{uri}` leaves the model's folder; refused"),
        )
        .with_hint("keep buffers beside the model, or allow reads outside its folder")
    })?;
    let cannot_read = |e: std::io::Error| {
        Error::new(
            ErrorKind::Io,
            path,
            format!("cannot read `{}`: {e}", file.display()),
        )
    };
    // Does not open the file, so a FIFO cannot block here.
    let meta = std::fs::metadata(&file).map_err(cannot_read)?;
    if !meta.is_file() {
        return Err(not_regular(&file, path));
    }
    if !options.allow_outside_folder && !inside(dir, &file) {
        return Err(Error::new(
            ErrorKind::Unsupported,
            path,
            format!("URI `{uri}` leads out of the model's folder through a symbolic link; refused"),
        )
        .with_hint("keep buffers beside the model, or allow reads outside its folder"));
    }
    if meta.len() > options.limits.max_file_bytes {
        return Err(too_big(&file, path, Some(meta.len()), options));
    }
    Ok(file)
}

fn not_regular(file: &Path, path: &str) -> Error {
    Error::new(
        ErrorKind::Unsupported,
        path,
        format!("`{}` is not a regular file; refused", file.display()),
    )
}

fn too_big(file: &Path, path: &str, size: Option<u64>, options: &ImportOptions) -> Error {
    let limit = options.limits.max_file_bytes;
    Error::limit(
        path,
        match size {
            Some(n) => format!(
                "`{}` is {n} bytes, more than the limit of {limit}",
                file.display()
            ),
            None => format!(
                "`{}` is more than the limit of {limit} bytes",
                file.display()
            ),
        },
    )
}

/// The external files (buffers referred to by relative URIs) a model reads,
/// checked like [`load`] checks them, in buffer order.
pub(crate) fn external_files(
    doc: &gltf::Document,
    source: &Source<'_>,
    options: &ImportOptions,
    fallback: &[usize],
) -> Result<Vec<std::path::PathBuf>> {
    let mut files = Vec::new();
    for buffer in doc.buffers() {
        if fallback.contains(&buffer.index()) {
            continue;
        }
        if let gltf::buffer::Source::Uri(uri) = buffer.source()
            && !uri.starts_with("data:")
        {
            let path = format!("buffers[{}]", buffer.index());
            files.push(external_file(uri, &path, source, options)?);
        }
    }
    Ok(files)
}

pub(super) fn load_uri(
    uri: &str,
    path: &str,
    source: &Source<'_>,
    options: &ImportOptions,
) -> Result<Vec<u8>> {
    if let Some(rest) = uri.strip_prefix("data:") {
        let (_, payload) = rest.split_once(";base64,").ok_or_else(|| {
            Error::new(
                ErrorKind::Unsupported,
                path,
                "data URI is not base64-encoded",
            )
        })?;
        // Bound the decoded size before decoding.
        let decoded_len = payload.len() / 4 * 3;
        if decoded_len as u64 > options.limits.max_file_bytes {
            return Err(Error::limit(
                path,
                format!(
                    "embedded buffer of about {decoded_len} bytes exceeds the limit of {} bytes",
                    options.limits.max_file_bytes
                ),
            ));
        }
        return base64::engine::general_purpose::STANDARD
            .decode(payload.trim_end())
            .map_err(|e| Error::invalid(path, format!("data URI is not valid base64: {e}")));
    }
    let file = external_file(uri, path, source, options)?;
    // The file may have changed since it was checked: read it bounded.
    files::read_bounded(&file, options.limits.max_file_bytes).map_err(|e| match e {
        files::ReadError::Io(e) => Error::new(
            ErrorKind::Io,
            path,
            format!("cannot read `{}`: {e}", file.display()),
        ),
        files::ReadError::Folder | files::ReadError::NotRegular => not_regular(&file, path),
        files::ReadError::TooBig(size) => too_big(&file, path, size, options),
    })
}

/// Whether `file` (which exists) lies inside `dir` once symbolic links are
/// resolved.
fn inside(dir: &Path, file: &Path) -> bool {
    match (std::fs::canonicalize(dir), std::fs::canonicalize(file)) {
        (Ok(dir), Ok(file)) => file.starts_with(dir),
        _ => false,
    }
}

/// Whether `uri` starts with a URI scheme (`http:`, `file:`, ...). A single
/// letter followed by `:` is a Windows drive, treated as an absolute path.
fn has_scheme(uri: &str) -> bool {
    match uri.find(':') {
        Some(i) if i > 1 => uri[..i]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')),
        _ => false,
    }
}

/// Joins `relative` to `dir`, refusing absolute paths and `..` that climb out
/// of `dir` unless `allow_outside` is set.
fn resolve(dir: &Path, relative: &str, allow_outside: bool) -> Option<PathBuf> {
    let rel = Path::new(relative);
    if allow_outside {
        return Some(dir.join(rel));
    }
    let mut depth = 0usize;
    for component in rel.components() {
        match component {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir => depth = depth.checked_sub(1)?,
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    if relative.contains(':') || relative.starts_with('\\') {
        return None;
    }
    Some(dir.join(rel))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes_are_recognised() {
        assert!(has_scheme("http://example.com/a.bin"));
        assert!(has_scheme("file:///etc/passwd"));
        assert!(!has_scheme("a.bin"));
        assert!(!has_scheme("sub/a.bin"));
        assert!(!has_scheme("C:/a.bin"));
    }

    #[test]
    fn paths_escaping_the_folder_are_refused() {
        let dir = Path::new("/models/x");
        assert_eq!(resolve(dir, "a.bin", false), Some(dir.join("a.bin")));
        assert_eq!(
            resolve(dir, "sub/../a.bin", false),
            Some(dir.join("sub/../a.bin"))
        );
        assert_eq!(resolve(dir, "../../etc/passwd", false), None);
        assert_eq!(resolve(dir, "sub/../../a.bin", false), None);
        assert_eq!(resolve(dir, "/etc/passwd", false), None);
        assert_eq!(resolve(dir, "C:/x.bin", false), None);
        assert!(resolve(dir, "../a.bin", true).is_some());
    }
}
