//! Writing a model's outputs safely. Every file is written under a temporary
//! name (`.<name>.<pid>.tmp`) in the destination folder and renamed into place
//! only when all of the model's files are complete, so an interrupted or
//! failed bake never leaves a half-written file under a final name and a
//! failed rebake keeps the previous good output. Temporaries of a failed bake
//! are removed.
//!
//! Files are not fsynced: the rename protects against interrupted processes
//! (the case that matters in CI), not against power loss, and syncing
//! gigabytes of vertex animation textures would dominate bake times.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The files of one model being written.
#[derive(Debug)]
pub struct Staging {
    dir: PathBuf,
    /// (temporary path, final name), in creation order.
    files: Vec<(PathBuf, String)>,
    committed: bool,
    /// Whether `new` created the folder (removed again if nothing lands).
    created: bool,
}

impl Staging {
    /// Starts staging into `dir` (created if needed).
    pub fn new(dir: &Path) -> std::io::Result<Self> {
        let created = !dir.exists();
        fs::create_dir_all(dir)?;
        Ok(Self {
            dir: dir.to_path_buf(),
            files: Vec::new(),
            committed: false,
            created,
        })
    }

    /// The temporary path for the file that will be called `name`, registered
    /// for the final rename. The caller writes it.
    pub fn path_for(&mut self, name: &str) -> PathBuf {
        let tmp = self.dir.join(format!(".{name}.{}.tmp", std::process::id()));
        self.files.push((tmp.clone(), name.to_owned()));
        tmp
    }

    /// A scratch file that is never renamed into place (removed at the end).
    pub fn scratch(&mut self, name: &str) -> PathBuf {
        let tmp = self
            .dir
            .join(format!(".{name}.{}.scratch.tmp", std::process::id()));
        self.files.push((tmp.clone(), String::new()));
        tmp
    }

    /// Stages a file with the given bytes.
    pub fn add_bytes(&mut self, name: &str, bytes: &[u8]) -> std::io::Result<()> {
        let tmp = self.path_for(name);
        let mut file = File::create(&tmp)?;
        file.write_all(bytes)
    }

    /// Renames every staged file into place and removes scratch files;
    /// returns the final paths and sizes.
    pub fn commit(mut self) -> std::io::Result<Vec<(PathBuf, u64)>> {
        let mut written = Vec::new();
        for (tmp, name) in &self.files {
            if name.is_empty() {
                let _ = fs::remove_file(tmp);
                continue;
            }
            let dest = self.dir.join(name);
            fs::rename(tmp, &dest)?;
            written.push((dest.clone(), fs::metadata(&dest)?.len()));
        }
        self.committed = true;
        Ok(written)
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            for (tmp, _) in &self.files {
                let _ = fs::remove_file(tmp);
            }
            if self.created {
                // Only succeeds when the folder is empty.
                let _ = fs::remove_dir(&self.dir);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut n: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        n.sort();
        n
    }

    #[test]
    fn commit_renames_everything_into_place() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("m");
        let mut s = Staging::new(&out).unwrap();
        s.add_bytes("a.bin", &[1, 2, 3]).unwrap();
        let scratch = s.scratch("big");
        fs::write(&scratch, b"x").unwrap();
        s.add_bytes("b.json", b"{}").unwrap();
        // Nothing appears under a final name before the commit.
        assert!(names(&out).iter().all(|n| n.ends_with(".tmp")));
        let written = s.commit().unwrap();
        assert_eq!(written.len(), 2);
        assert_eq!(fs::read(out.join("a.bin")).unwrap(), [1, 2, 3]);
        assert_eq!(names(&out), ["a.bin", "b.json"]);
    }

    #[test]
    fn an_abandoned_bake_keeps_the_previous_output_and_leaves_no_temporaries() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("m");
        let mut s = Staging::new(&out).unwrap();
        s.add_bytes("a.bin", b"old").unwrap();
        s.commit().unwrap();
        let mut s = Staging::new(&out).unwrap();
        s.add_bytes("a.bin", b"new, half written").unwrap();
        drop(s); // the bake failed
        assert_eq!(fs::read(out.join("a.bin")).unwrap(), b"old");
        assert_eq!(names(&out), ["a.bin"]);
    }
}
