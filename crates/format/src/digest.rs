//! Size and CRC-32 of a file, computed while it is written, so large outputs
//! are not read back to be fingerprinted.
//!
//! Encoders may seek back to patch what they wrote first (the EXR writer
//! fills in its offset table last): [`DigestFile`] keeps the file's first
//! [`PREFIX`] bytes in memory, patches included, and hashes every later byte
//! as it streams past. Anything else (a patch beyond the prefix, a gap) marks
//! the running digest unusable, and [`Digest::finish`] then reads the file
//! back, so the result is always the digest of the bytes on disk.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Bytes at the start of a file kept in memory (patchable): room for the
/// header and offset table of an uncompressed EXR of over 30,000 lines.
pub const PREFIX: usize = 1 << 18;

/// The running digest of a file being written.
#[derive(Debug, Default)]
struct State {
    prefix: Vec<u8>,
    /// CRC of the bytes from [`PREFIX`] to `streamed`.
    rest: crc32fast::Hasher,
    /// End of the bytes hashed into `rest` (at least [`PREFIX`]).
    streamed: u64,
    /// Length of the file so far.
    len: u64,
    /// A write the running digest cannot follow happened.
    lost: bool,
}

impl State {
    fn record(&mut self, pos: u64, bytes: &[u8]) {
        let end = pos + bytes.len() as u64;
        let split = (PREFIX as u64).clamp(pos, end);
        let (head, tail) = bytes.split_at((split - pos) as usize);
        if !head.is_empty() {
            let start = pos as usize;
            if self.prefix.len() < start + head.len() {
                self.prefix.resize(start + head.len(), 0);
            }
            self.prefix[start..start + head.len()].copy_from_slice(head);
        }
        if !tail.is_empty() {
            if self.streamed < PREFIX as u64 {
                self.streamed = PREFIX as u64;
            }
            if split == self.streamed {
                self.rest.update(tail);
                self.streamed = end;
            } else {
                self.lost = true;
            }
        }
        self.len = self.len.max(end);
    }
}

/// A file being written whose size and CRC-32 are tracked as it is written.
/// Cloning a [`Digest`] handle from it before handing it to an encoder lets
/// the caller collect the result after the encoder has dropped the file.
#[derive(Debug)]
pub struct DigestFile {
    file: File,
    pos: u64,
    state: Arc<Mutex<State>>,
    path: PathBuf,
}

/// The handle that yields a [`DigestFile`]'s size and CRC-32.
#[derive(Debug, Clone)]
pub struct Digest {
    state: Arc<Mutex<State>>,
    path: PathBuf,
}

impl DigestFile {
    /// Creates the file at `path`, or empties it if it exists.
    ///
    /// An existing empty file (a staged target) is opened as it is, not
    /// truncated: on ext4, truncating a file sets its "allocate on close"
    /// state (`auto_da_alloc`), and closing it then writes the whole file
    /// back synchronously, which took longer than baking BrainStem's VAT.
    pub fn create(path: &Path) -> std::io::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        if file.metadata()?.len() > 0 {
            file.set_len(0)?;
        }
        Ok(Self {
            file,
            pos: 0,
            state: Arc::default(),
            path: path.to_owned(),
        })
    }

    /// The handle that reports this file's digest once writing is done.
    pub fn digest(&self) -> Digest {
        Digest {
            state: Arc::clone(&self.state),
            path: self.path.clone(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Write for DigestFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.file.write(buf)?;
        let pos = self.pos;
        self.state().record(pos, &buf[..n]);
        self.pos += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

impl Seek for DigestFile {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        self.pos = self.file.seek(to)?;
        Ok(self.pos)
    }
}

impl Digest {
    /// Size and CRC-32 of the finished file (call after the writer is
    /// dropped or flushed). Reads the file back only if the writes could not
    /// be followed.
    pub fn finish(&self) -> std::io::Result<(u64, u32)> {
        let state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let gap = state.len > PREFIX as u64 && state.streamed != state.len;
        if state.lost || gap || state.prefix.len() as u64 != state.len.min(PREFIX as u64) {
            drop(state);
            return read_digest(&self.path);
        }
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(&state.prefix);
        hasher.combine(&state.rest);
        Ok((state.len, hasher.finalize()))
    }
}

/// Size and CRC-32 of a file, read back in chunks.
pub fn read_digest(path: &Path) -> std::io::Result<(u64, u32)> {
    let mut file = File::open(path)?;
    let mut hasher = crc32fast::Hasher::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut len = 0u64;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        len += n as u64;
    }
    Ok((len, hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `ops` (position, bytes) through a DigestFile; returns its
    /// digest and the read-back digest.
    fn run(ops: &[(u64, Vec<u8>)]) -> ((u64, u32), (u64, u32)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut f = DigestFile::create(&path).unwrap();
        let digest = f.digest();
        for (pos, bytes) in ops {
            f.seek(SeekFrom::Start(*pos)).unwrap();
            f.write_all(bytes).unwrap();
        }
        drop(f);
        (digest.finish().unwrap(), read_digest(&path).unwrap())
    }

    #[test]
    fn create_empties_an_existing_file_and_keeps_an_empty_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        for before in [&b"old contents, longer than the new ones"[..], &b""[..]] {
            std::fs::write(&path, before).unwrap();
            let mut f = DigestFile::create(&path).unwrap();
            let digest = f.digest();
            f.write_all(b"new").unwrap();
            drop(f);
            assert_eq!(std::fs::read(&path).unwrap(), b"new");
            assert_eq!(digest.finish().unwrap(), read_digest(&path).unwrap());
        }
    }

    fn bytes(n: usize, seed: u8) -> Vec<u8> {
        (0..n)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
            .collect()
    }

    #[test]
    fn streamed_digest_equals_the_read_back_digest() {
        // Sequential writes straddling the prefix boundary.
        let (a, b) = run(&[
            (0, bytes(PREFIX - 10, 1)),
            (PREFIX as u64 - 10, bytes(3 * PREFIX, 2)),
        ]);
        assert_eq!(a, b);
        assert_eq!(a.0, 4 * PREFIX as u64 - 10);
        // A placeholder patched at the end (the EXR offset table).
        let (a, b) = run(&[
            (0, bytes(5000, 3)),
            (5000, bytes(2 * PREFIX, 4)),
            (100, bytes(800, 5)),
        ]);
        assert_eq!(a, b);
        // Small files.
        let (a, b) = run(&[(0, bytes(10, 6)), (3, bytes(2, 7))]);
        assert_eq!(a, b);
    }

    #[test]
    fn writes_it_cannot_follow_fall_back_to_reading_the_file() {
        // A patch beyond the prefix, and a gap: still the true digest.
        let (a, b) = run(&[
            (0, bytes(3 * PREFIX, 1)),
            (PREFIX as u64 + 7, bytes(100, 2)),
        ]);
        assert_eq!(a, b);
        let (a, b) = run(&[(0, bytes(10, 1)), (PREFIX as u64 + 50, bytes(100, 2))]);
        assert_eq!(a, b);
        assert_eq!(a.0, PREFIX as u64 + 150);
    }
}
