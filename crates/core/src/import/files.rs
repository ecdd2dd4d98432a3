//! Bounded reading of input files (the model, external buffers).
//!
//! A file is opened without blocking (a FIFO in a model's place would
//! otherwise hang on `open` until a writer comes), must be a regular file
//! (devices such as `/dev/zero` have no size and never end), is checked
//! against the size limit before a byte is read, and is read through a
//! `take(limit + 1)` so a file that grows while being read is still refused.

use std::io::Read as _;
use std::path::Path;

/// Why a bounded read failed.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The file could not be opened or read.
    Io(std::io::Error),
    /// A folder, not a file.
    Folder,
    /// Not a regular file (a FIFO, socket or device).
    NotRegular,
    /// Over the limit: the size when known up front.
    TooBig(Option<u64>),
}

/// Opens `path` for reading without blocking on FIFOs.
fn open(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path)
}

/// Reads the regular file at `path`, refusing anything else and anything
/// over `limit` bytes before reading it.
pub(crate) fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let file = open(path).map_err(ReadError::Io)?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if meta.is_dir() {
        return Err(ReadError::Folder);
    }
    if !meta.is_file() {
        return Err(ReadError::NotRegular);
    }
    if meta.len() > limit {
        return Err(ReadError::TooBig(Some(meta.len())));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooBig(None));
    }
    Ok(bytes)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn devices_and_fifos_are_refused_without_reading() {
        assert!(matches!(
            read_bounded(Path::new("/dev/zero"), 1 << 30),
            Err(ReadError::NotRegular)
        ));
        assert!(matches!(
            read_bounded(Path::new("/"), 10),
            Err(ReadError::Folder)
        ));
    }
}
