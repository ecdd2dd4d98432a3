//! Bounded reads of regular files. Every file a container, a manifest or a
//! report names is read through here: it must be a regular file (not a FIFO,
//! a device such as `/dev/zero`, a socket or a folder), and it is never read
//! past a stated size.
//!
//! On Unix the file is opened with `O_NONBLOCK`, so opening a FIFO returns at
//! once instead of waiting for a writer; the type check then refuses it. The
//! size is taken from the open file (`fstat`), not from the path, and the
//! read itself stops one byte past the limit, so a file that grows while it
//! is read is refused too.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::error::{FormatError, Result};

/// Opens `path` for reading if it is a regular file of at most `max_bytes`;
/// returns the file and its length.
pub fn open_regular(path: &Path, max_bytes: u64) -> Result<(File, u64)> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(FormatError::Invalid(format!(
            "{} is not a regular file ({})",
            path.display(),
            kind_of(&meta)
        )));
    }
    if meta.len() > max_bytes {
        return Err(FormatError::Invalid(format!(
            "{} is {} bytes, more than the limit of {max_bytes}",
            path.display(),
            meta.len()
        )));
    }
    Ok((file, meta.len()))
}

/// Reads all of `path` if it is a regular file of at most `max_bytes`.
pub fn read_regular(path: &Path, max_bytes: u64) -> Result<Vec<u8>> {
    let (file, len) = open_regular(path, max_bytes)?;
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(FormatError::Invalid(format!(
            "{} grew past the limit of {max_bytes} bytes while it was read",
            path.display()
        )));
    }
    Ok(bytes)
}

/// Size and CRC-32 (IEEE) of the regular file at `path` (at most
/// `max_bytes`), streamed in 1 MiB blocks: checking a large texture costs no
/// more memory than a small one.
pub fn checksum_regular(path: &Path, max_bytes: u64) -> Result<(u64, u32)> {
    let (file, _) = open_regular(path, max_bytes)?;
    let mut reader = file.take(max_bytes.saturating_add(1));
    let mut hasher = crc32fast::Hasher::new();
    let mut block = vec![0u8; 1 << 20];
    let mut len = 0u64;
    loop {
        let n = reader.read(&mut block)?;
        if n == 0 {
            break;
        }
        hasher.update(&block[..n]);
        len += n as u64;
    }
    if len > max_bytes {
        return Err(FormatError::Invalid(format!(
            "{} grew past the limit of {max_bytes} bytes while it was read",
            path.display()
        )));
    }
    Ok((len, hasher.finalize()))
}

/// A word for what a non-regular file is, for messages.
fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    if meta.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "not a plain file"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_are_read_within_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.bin");
        std::fs::write(&p, [1u8, 2, 3]).unwrap();
        assert_eq!(read_regular(&p, 3).unwrap(), vec![1, 2, 3]);
        let e = read_regular(&p, 2).unwrap_err().to_string();
        assert!(e.contains("3 bytes, more than the limit of 2"), "{e}");
    }

    #[test]
    fn checksums_stream_and_match_a_whole_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.bin");
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i * 31 % 251) as u8).collect();
        std::fs::write(&p, &data).unwrap();
        let (len, crc) = checksum_regular(&p, data.len() as u64).unwrap();
        assert_eq!((len, crc), (data.len() as u64, crc32fast::hash(&data)));
        assert!(checksum_regular(&p, data.len() as u64 - 1).is_err());
    }

    #[test]
    fn folders_and_devices_are_refused_without_reading() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_regular(dir.path(), 1 << 30).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        #[cfg(unix)]
        {
            let e = read_regular(Path::new("/dev/zero"), 1 << 30)
                .unwrap_err()
                .to_string();
            assert!(e.contains("a device"), "{e}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pipe");
        let status = std::process::Command::new("mkfifo").arg(&p).status();
        if !status.is_ok_and(|s| s.success()) {
            panic!("mkfifo is needed for this test");
        }
        // Without O_NONBLOCK this open would wait forever for a writer.
        let e = read_regular(&p, 1 << 20).unwrap_err().to_string();
        assert!(e.contains("a FIFO"), "{e}");
    }
}
