//! Writing a model's outputs safely.
//!
//! - **No half-written files under final names.** Every file is written
//!   under a temporary name in the destination folder and renamed into place
//!   only when all of the model's files are complete; a failed rebake keeps
//!   the previous good output, and its temporaries are removed.
//! - **One commit point.** The container (`*.rigbake`) is renamed last. It
//!   records the size and checksum of every file beside it, so a run killed
//!   between two renames leaves an old container that no longer matches the
//!   new files, and the next run rebakes instead of reporting "up to date".
//! - **No writes through planted links.** Temporaries get unpredictable
//!   names and are created with `O_EXCL` (`create_new`), which never follows
//!   a symbolic link; a rename replaces a link at the final name instead of
//!   writing through it; a model folder that is a symbolic link (or not a
//!   folder) is refused, as is any folder between the output root and it.
//! - **Stale temporaries are cleaned up.** Temporaries left by killed runs
//!   (`.rigbake-*.tmp`, and the older `.<name>.<pid>.tmp`) are removed when
//!   a model folder is next written. Concurrent runs on one output root are
//!   serialised by [`OutputLock`], so this never removes a live run's files.
//!
//! - **Never over an input.** A final name whose file is an input of the
//!   run (the same file, by device and inode, whatever the path's
//!   spelling: `assets/hero/hero.glb` baked with `--out assets` by
//!   `vat --compat openvat`) is refused before anything is written
//!   ([`Protected`]).
//!
//! Files are not fsynced: the rename protects against interrupted processes
//! (the case that matters in CI), not against power loss, and syncing
//! gigabytes of vertex animation textures would dominate bake times.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A file's identity: device and inode on Unix, the canonical path
/// elsewhere.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum FileId {
    #[cfg(unix)]
    Inode(u64, u64),
    #[cfg(not(unix))]
    Path(PathBuf),
}

impl FileId {
    /// The identity of the file `path` names (links followed: the file an
    /// input path reads).
    fn of_input(path: &Path) -> Option<Self> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            fs::metadata(path)
                .ok()
                .map(|m| Self::Inode(m.dev(), m.ino()))
        }
        #[cfg(not(unix))]
        {
            path.canonicalize().ok().map(Self::Path)
        }
    }

    /// The identity of the regular file at the final name `dest` (a link
    /// there is replaced, never written through, so it has none).
    fn of_destination(dest: &Path) -> Option<Self> {
        let meta = fs::symlink_metadata(dest).ok()?;
        if !meta.file_type().is_file() {
            return None;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Some(Self::Inode(meta.dev(), meta.ino()))
        }
        #[cfg(not(unix))]
        {
            dest.canonicalize().ok().map(Self::Path)
        }
    }
}

/// The input files of a run (models, their buffers and images): no output
/// may replace one of them. Cloning is cheap once [`Protected::frozen`]:
/// the run's set is shared, and each model adds its own files.
#[derive(Debug, Clone, Default)]
pub struct Protected {
    run: std::sync::Arc<std::collections::HashMap<FileId, PathBuf>>,
    own: std::collections::HashMap<FileId, PathBuf>,
}

impl Protected {
    /// Protects the file `path` names (nothing when it does not exist).
    pub fn add(&mut self, path: &Path) {
        if let Some(id) = FileId::of_input(path)
            && !self.run.contains_key(&id)
        {
            self.own.entry(id).or_insert_with(|| path.to_path_buf());
        }
    }

    /// The same set, shared: clones then copy no entry.
    pub fn frozen(mut self) -> Self {
        let mut run = std::sync::Arc::unwrap_or_clone(self.run);
        run.extend(self.own.drain());
        Self {
            run: std::sync::Arc::new(run),
            own: self.own,
        }
    }

    /// The protected input that the file at `dest` is, if any.
    pub fn input_at(&self, dest: &Path) -> Option<&Path> {
        if self.run.is_empty() && self.own.is_empty() {
            return None;
        }
        let id = FileId::of_destination(dest)?;
        self.run
            .get(&id)
            .or_else(|| self.own.get(&id))
            .map(PathBuf::as_path)
    }

    /// An error when writing `dest` would replace a protected input.
    pub fn check(&self, dest: &Path) -> io::Result<()> {
        match self.input_at(dest) {
            None => Ok(()),
            Some(input) => Err(io::Error::other(format!(
                "the output `{}` is the input `{}` of this run; rigbake never replaces an input: choose another --out",
                dest.display(),
                input.display()
            ))),
        }
    }
}

/// Name of the lock file in an output root.
pub const LOCK_FILE: &str = ".rigbake.lock";

/// An exclusive lock on an output root, held for a whole run: two runs that
/// write into the same `--out` take turns instead of mixing their outputs.
#[derive(Debug)]
pub struct OutputLock {
    _file: File,
}

impl OutputLock {
    /// Locks `root` (created if needed), waiting while another run holds it;
    /// `waiting` is called once if it has to wait.
    pub fn acquire(root: &Path, waiting: impl FnOnce()) -> io::Result<Self> {
        fs::create_dir_all(root)?;
        let path = root.join(LOCK_FILE);
        if fs::symlink_metadata(&path).is_ok_and(|m| !m.file_type().is_file()) {
            return Err(io::Error::other(format!(
                "`{}` is not a regular file (a symbolic link or something else was planted there); remove it",
                path.display()
            )));
        }
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                waiting();
                file.lock()?;
            }
            Err(fs::TryLockError::Error(e)) => return Err(e),
        }
        Ok(Self { _file: file })
    }
}

/// Creates `dir` below `root` folder by folder, refusing any existing part
/// of the path below `root` that is a symbolic link or not a folder, so a
/// model's outputs never land outside the output root.
pub fn prepare_dir(root: &Path, dir: &Path) -> io::Result<()> {
    fs::create_dir_all(root)?;
    walk_dir(root, dir, true)
}

/// Walks the folders from `root` down to `dir`, refusing a part that is a
/// link or a file; a missing part is created when `create` is set, and ends
/// the walk (nothing below it exists yet) otherwise.
fn walk_dir(root: &Path, dir: &Path, create: bool) -> io::Result<()> {
    let rel = dir.strip_prefix(root).map_err(|_| {
        io::Error::other(format!(
            "`{}` is not inside the output folder `{}`",
            dir.display(),
            root.display()
        ))
    })?;
    let mut at = root.to_path_buf();
    for part in rel.components() {
        match part {
            std::path::Component::Normal(name) => at.push(name),
            _ => {
                return Err(io::Error::other(format!(
                    "`{}` leaves the output folder",
                    dir.display()
                )));
            }
        }
        match fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_dir() => {}
            Ok(_) => {
                return Err(io::Error::other(format!(
                    "`{}` is a symbolic link or a file, not a folder; rigbake never writes through links in the output tree",
                    at.display()
                )));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound && !create => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => match fs::create_dir(&at) {
                Ok(()) => {}
                // Another job made it meanwhile: fine if it is a real folder.
                Err(e)
                    if e.kind() == io::ErrorKind::AlreadyExists
                        && fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_dir()) => {}
                Err(e) => return Err(e),
            },
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Test hook: `RIGBAKE_FAULT=abort-after-renames:N` kills the process
/// (abort, as a `kill -9` would) after `N` of a model's files were renamed
/// into place, so tests can prove that a run killed at any step of the
/// commit is never taken for up to date.
fn kill_after_renames() -> Option<usize> {
    let v = std::env::var("RIGBAKE_FAULT").ok()?;
    v.strip_prefix("abort-after-renames:")?.parse().ok()
}

/// Checks, creating nothing, that every existing folder between `root` and
/// `dir` (below `root`) is a real folder, not a symbolic link or a file; the
/// missing rest is created later by [`Staging::new`] (which removes it again
/// when nothing lands), so a failed model leaves no folder behind.
pub fn check_dir(root: &Path, dir: &Path) -> io::Result<()> {
    walk_dir(root, dir, false)
}

/// Whether `name` is a temporary a rigbake run leaves behind when killed.
fn is_stale_temporary(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".tmp")
}

/// Creates a new, empty temporary output file in `dir` with an
/// unpredictable name (`.rigbake-XXXX.tmp`; `O_EXCL`: an existing file or
/// link there is an error, never opened). Its mode is an ordinary file's
/// under the caller's umask (`0666 & !umask`, 0644 under umask 022), not a
/// temporary's 0600: it is renamed into place as an output that other
/// users, caches and web servers read.
pub fn output_temporary(dir: &Path) -> io::Result<tempfile::NamedTempFile> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(".rigbake-").suffix(".tmp").rand_bytes(12);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    builder.tempfile_in(dir)
}

/// The files of one model being written.
#[derive(Debug)]
pub struct Staging {
    dir: PathBuf,
    /// (temporary path, final name), in creation order; an empty final name
    /// marks a scratch file.
    files: Vec<(PathBuf, String)>,
    committed: bool,
    /// Whether `new` created the folder (removed again if nothing lands).
    created: bool,
    /// Inputs no final name may replace.
    protected: Protected,
}

impl Staging {
    /// Starts staging into `dir` (created if needed; it must be a real
    /// folder, not a link), removing temporaries that killed runs left.
    pub fn new(dir: &Path) -> io::Result<Self> {
        let created = fs::symlink_metadata(dir).is_err();
        fs::create_dir_all(dir)?;
        if !fs::symlink_metadata(dir)?.file_type().is_dir() {
            return Err(io::Error::other(format!(
                "`{}` is a symbolic link, not a folder; rigbake never writes through links in the output tree",
                dir.display()
            )));
        }
        for entry in fs::read_dir(dir)? {
            let entry = entry?;
            if entry.file_name().to_str().is_some_and(is_stale_temporary)
                && !entry.file_type()?.is_dir()
            {
                fs::remove_file(entry.path())?;
            }
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            files: Vec::new(),
            committed: false,
            created,
            protected: Protected::default(),
        })
    }

    /// Refuses, from now on, every final name that is one of `inputs`
    /// (checked when the name is registered and again at commit).
    pub fn protect(&mut self, inputs: Protected) {
        self.protected = inputs;
    }

    /// The inputs no final name may replace.
    pub fn protected(&self) -> &Protected {
        &self.protected
    }

    /// Creates a new, empty temporary file with an unpredictable name
    /// ([`output_temporary`]).
    fn create_temporary(&self) -> io::Result<(File, PathBuf)> {
        let temp = output_temporary(&self.dir)?;
        temp.keep().map_err(|e| e.error)
    }

    /// Creates the temporary file for the output that will be called `name`,
    /// registered for the final rename; returns it open for writing.
    pub fn create(&mut self, name: &str) -> io::Result<(File, PathBuf)> {
        self.protected.check(&self.dir.join(name))?;
        let (file, tmp) = self.create_temporary()?;
        self.files.push((tmp.clone(), name.to_owned()));
        Ok((file, tmp))
    }

    /// The temporary path (already created, empty) for the file that will
    /// be called `name`, registered for the final rename. The caller writes
    /// it.
    pub fn path_for(&mut self, name: &str) -> io::Result<PathBuf> {
        self.create(name).map(|(_, path)| path)
    }

    /// A scratch file (already created, empty) that is never renamed into
    /// place (removed at the end).
    pub fn scratch(&mut self) -> io::Result<PathBuf> {
        let (_, tmp) = self.create_temporary()?;
        self.files.push((tmp.clone(), String::new()));
        Ok(tmp)
    }

    /// Stages a file with the given bytes.
    pub fn add_bytes(&mut self, name: &str, bytes: &[u8]) -> io::Result<()> {
        let (mut file, _) = self.create(name)?;
        file.write_all(bytes)
    }

    /// Renames every staged file into place, the container (`*.rigbake`,
    /// the commit point) last, and removes scratch files; returns the final
    /// paths and sizes.
    pub fn commit(mut self) -> io::Result<Vec<(PathBuf, u64)>> {
        let is_commit_point = |name: &str| name.ends_with(".rigbake");
        // Creation indices, the container (the commit point) last.
        let mut order: Vec<usize> = (0..self.files.len()).collect();
        order.sort_by_key(|&i| is_commit_point(&self.files[i].1));
        // Checked again, all before the first rename: an input that
        // appeared at a final name since it was registered.
        for (_, name) in self.files.iter().filter(|(_, n)| !n.is_empty()) {
            self.protected.check(&self.dir.join(name))?;
        }
        let mut written: Vec<(usize, PathBuf, u64)> = Vec::new();
        let kill_after = kill_after_renames();
        for i in order {
            let (tmp, name) = &self.files[i];
            if name.is_empty() {
                let _ = fs::remove_file(tmp);
                continue;
            }
            if kill_after == Some(written.len()) {
                std::process::abort();
            }
            let dest = self.dir.join(name);
            replace(tmp, &dest)?;
            let len = fs::symlink_metadata(&dest)?.len();
            written.push((i, dest, len));
        }
        // Report in creation order, as before.
        written.sort_by_key(|(i, _, _)| *i);
        let written = written.into_iter().map(|(_, p, l)| (p, l)).collect();
        self.committed = true;
        Ok(written)
    }
}

/// Moves `tmp` to `dest`, replacing a file already there atomically.
///
/// On Linux an existing regular file is exchanged with `tmp`
/// (`RENAME_EXCHANGE`), then the old contents, now under `tmp`, are
/// removed: a plain rename over an existing file makes ext4 write the new
/// file back synchronously first (`auto_da_alloc`), which took longer than
/// rebaking BrainStem's VAT. Elsewhere, or where the exchange is not
/// supported, a plain rename.
fn replace(tmp: &Path, dest: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    if fs::symlink_metadata(dest).is_ok_and(|m| m.file_type().is_file()) {
        use rustix::fs::{CWD, RenameFlags, renameat_with};
        if renameat_with(CWD, tmp, CWD, dest, RenameFlags::EXCHANGE).is_ok() {
            return fs::remove_file(tmp);
        }
    }
    fs::rename(tmp, dest)
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
        let scratch = s.scratch().unwrap();
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

    #[test]
    fn the_container_is_renamed_last() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("m");
        let mut s = Staging::new(&out).unwrap();
        s.add_bytes("m.rigbake", b"container").unwrap();
        s.add_bytes("bones.exr", b"texture").unwrap();
        // Make the second rename fail: the container's final name is a
        // folder, so its rename is refused after the texture landed.
        fs::create_dir_all(out.join("m.rigbake").join("x")).unwrap();
        assert!(s.commit().is_err());
        assert_eq!(fs::read(out.join("bones.exr")).unwrap(), b"texture");
        assert!(
            out.join("m.rigbake").is_dir(),
            "the commit point was not renamed first"
        );
    }

    #[cfg(unix)]
    #[test]
    fn links_at_final_names_are_replaced_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim.txt");
        fs::write(&victim, b"precious").unwrap();
        let out = dir.path().join("m");
        fs::create_dir_all(&out).unwrap();
        std::os::unix::fs::symlink(&victim, out.join("a.bin")).unwrap();
        std::os::unix::fs::symlink(&victim, out.join(".a.bin.1.tmp")).unwrap();
        let mut s = Staging::new(&out).unwrap();
        s.add_bytes("a.bin", b"new").unwrap();
        s.commit().unwrap();
        assert_eq!(fs::read(&victim).unwrap(), b"precious");
        assert!(fs::symlink_metadata(out.join("a.bin")).unwrap().is_file());
        assert_eq!(
            names(&out),
            ["a.bin"],
            "the planted temporary link was cleaned up"
        );
    }

    #[test]
    fn a_commit_over_earlier_outputs_replaces_them_and_leaves_no_temporaries() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("m");
        fs::create_dir_all(&out).unwrap();
        fs::write(out.join("a.bin"), b"old, longer contents").unwrap();
        fs::create_dir(out.join("b.bin")).unwrap();
        let mut s = Staging::new(&out).unwrap();
        s.add_bytes("a.bin", b"new").unwrap();
        let written = s.commit().unwrap();
        assert_eq!(written, [(out.join("a.bin"), 3)]);
        assert_eq!(fs::read(out.join("a.bin")).unwrap(), b"new");
        assert_eq!(names(&out), ["a.bin", "b.bin"]);
        // A folder at a final name is never exchanged with a file.
        let mut s = Staging::new(&out).unwrap();
        s.add_bytes("b.bin", b"file").unwrap();
        assert!(s.commit().is_err());
        assert!(out.join("b.bin").is_dir());
    }

    #[cfg(unix)]
    #[test]
    fn a_final_name_that_is_an_input_is_refused_whatever_its_spelling() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("assets/hero");
        fs::create_dir_all(&out).unwrap();
        let source = out.join("hero.glb");
        fs::write(&source, b"the source").unwrap();
        let mut inputs = Protected::default();
        // Protected under another spelling of the same file.
        inputs.add(&dir.path().join("assets/./hero/../hero/hero.glb"));
        let mut s = Staging::new(&out).unwrap();
        s.protect(inputs.clone());
        let err = s.add_bytes("hero.glb", b"static mesh").unwrap_err();
        assert!(err.to_string().contains("never replaces an input"), "{err}");
        s.add_bytes("hero.vat.glb", b"fine").unwrap();
        // An input that appears at a final name after registration.
        s.add_bytes("late.glb", b"output").unwrap();
        fs::hard_link(&source, out.join("late.glb")).unwrap();
        assert!(s.commit().is_err());
        assert_eq!(fs::read(&source).unwrap(), b"the source");
        assert!(!out.join("hero.vat.glb").exists(), "nothing was committed");
    }

    #[test]
    fn folders_that_are_links_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        fs::create_dir_all(&outside).unwrap();
        let root = dir.path().join("out");
        fs::create_dir_all(root.join("a")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("a/b")).unwrap();
        let e = prepare_dir(&root, &root.join("a/b/c")).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        let e = check_dir(&root, &root.join("a/b/c")).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        check_dir(&root, &root.join("a/new/deeper")).unwrap();
        assert!(!root.join("a/new").exists(), "check_dir creates nothing");
        assert!(Staging::new(&root.join("a/b")).is_err());
        assert!(fs::read_dir(&outside).unwrap().next().is_none());
        prepare_dir(&root, &root.join("a/d/e")).unwrap();
        assert!(root.join("a/d/e").is_dir());
    }

    #[test]
    fn a_second_lock_on_the_same_root_waits() {
        let dir = tempfile::tempdir().unwrap();
        let first = OutputLock::acquire(dir.path(), || panic!("the first lock waited")).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let root = dir.path().to_path_buf();
        let t = std::thread::spawn(move || {
            let _second = OutputLock::acquire(&root, || tx.send(()).unwrap()).unwrap();
        });
        // The second acquirer reports that it waits, and gets the lock once
        // the first is released.
        rx.recv().unwrap();
        drop(first);
        t.join().unwrap();
    }
}
