//! Writing a model's outputs safely: every file goes to a temporary name in
//! the destination folder and is renamed into place only once all files are
//! complete, so an interrupted or failed bake never leaves a half-written
//! file under a final name, and a failed rebake keeps the previous output.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// One output file: its name inside the model's folder and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputFile {
    /// File name (no directories).
    pub name: String,
    /// Complete contents.
    pub bytes: Vec<u8>,
}

fn temp_name(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!(".{name}.{}.tmp", std::process::id()))
}

/// Writes `files` into `dir` (created if needed): all to temporary names
/// first, synced, then renamed. Returns the final paths and sizes.
pub fn write_all(dir: &Path, files: &[OutputFile]) -> std::io::Result<Vec<(PathBuf, u64)>> {
    fs::create_dir_all(dir)?;
    let mut temps = Vec::with_capacity(files.len());
    let result = (|| {
        for f in files {
            let tmp = temp_name(dir, &f.name);
            temps.push(tmp.clone());
            let mut file = fs::File::create(&tmp)?;
            file.write_all(&f.bytes)?;
            file.sync_all()?;
        }
        let mut written = Vec::with_capacity(files.len());
        for (f, tmp) in files.iter().zip(&temps) {
            let dest = dir.join(&f.name);
            fs::rename(tmp, &dest)?;
            written.push((dest, f.bytes.len() as u64));
        }
        Ok(written)
    })();
    if result.is_err() {
        for tmp in &temps {
            let _ = fs::remove_file(tmp);
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_files_and_leaves_no_temporaries() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("m");
        let files = vec![
            OutputFile {
                name: "a.bin".into(),
                bytes: vec![1, 2, 3],
            },
            OutputFile {
                name: "b.json".into(),
                bytes: b"{}".to_vec(),
            },
        ];
        let written = write_all(&out, &files).unwrap();
        assert_eq!(written.len(), 2);
        assert_eq!(fs::read(out.join("a.bin")).unwrap(), [1, 2, 3]);
        let names: Vec<_> = fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
    }
}
