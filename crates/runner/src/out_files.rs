//! Every file dualperf writes, through one writer: a report's files, the manual pages,
//! an export, anything new (the results database aside, which is the store's). Each
//! file is written whole to a temporary name in its own directory, synced, and only
//! then renamed over the old one, so a full disk or a crash leaves the previous file as
//! it was, never a truncated one. Nothing is written through a symbolic link: the
//! target itself, and inside an output directory every directory on the way (a
//! `report.html`, `tables` or `man1` link is refused, naming it); the directory the
//! user named may itself be a link. Every error names the path it is about and keeps
//! the kind of the I/O error (a closed pipe or a full disk is still recognised).
//!
//! A set of files (a report, the manual pages) is staged whole first
//! ([`OutDir::stage`]) and renamed into place only when every file was written
//! ([`Staged::commit`]): when the disk fills, none of the previous files is touched.

use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};
use tempfile::{NamedTempFile, TempPath};

/// An I/O error of `kind` saying `what`.
fn error(kind: io::ErrorKind, what: String) -> io::Error {
    io::Error::new(kind, what)
}

/// `e` with what was being done to which path in front, its kind kept.
fn about(e: io::Error, doing: &str, path: &Path) -> io::Error {
    error(e.kind(), format!("{doing} {}: {e}", path.display()))
}

/// The refusal of a symbolic link at `path`.
fn link_refused(path: &Path, fix: &str) -> io::Error {
    error(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is a symbolic link; dualperf does not write through links (remove it, or \
             {fix})",
            path.display()
        ),
    )
}

/// A new file beside `path`, created as `std::fs::write` would (mode 0666 less the
/// umask), not the temporary file's 0600: a report is often served or shared.
fn temp_beside(path: &Path) -> io::Result<NamedTempFile> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let prefix = format!(".{name}.");
    let mut b = tempfile::Builder::new();
    b.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o666));
    }
    b.tempfile_in(dir)
        .map_err(|e| about(e, "cannot create a temporary file in", dir))
}

/// Refuses `path` when it is a symbolic link or a directory.
fn refuse_link(path: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(link_refused(path, "write elsewhere")),
        Ok(m) if m.is_dir() => Err(error(
            io::ErrorKind::InvalidInput,
            format!("{} is a directory, not a file", path.display()),
        )),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(about(e, "cannot inspect", path)),
    }
}

/// One file being written in place of `path`: writes go to a temporary file beside it;
/// [`AtomicFile::commit`] syncs and renames it over `path`. Dropped without commit, the
/// temporary file is removed and `path` is untouched. Write errors name `path`. A
/// target that exists and is not a regular file (`/dev/null`, a named pipe) is written
/// directly: renaming over it would replace the device.
pub struct AtomicFile {
    path: PathBuf,
    out: Target,
}

enum Target {
    Temp(io::BufWriter<NamedTempFile>),
    Direct(io::BufWriter<std::fs::File>),
}

impl AtomicFile {
    pub fn create(path: &Path) -> io::Result<AtomicFile> {
        refuse_link(path)?;
        let special = std::fs::metadata(path).is_ok_and(|m| !m.is_file());
        let out = if special {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| about(e, "cannot open", path))?;
            Target::Direct(io::BufWriter::new(f))
        } else {
            Target::Temp(io::BufWriter::new(temp_beside(path)?))
        };
        Ok(AtomicFile {
            path: path.to_path_buf(),
            out,
        })
    }

    /// Flush, sync to disk and rename over the target.
    pub fn commit(self) -> io::Result<()> {
        let path = self.path;
        match self.out {
            Target::Temp(out) => {
                let tmp = out.into_inner().map_err(|e| named(e.into_error(), &path))?;
                finish(synced(tmp, &path)?, &path)?;
                sync_dir_of(&path)
            }
            Target::Direct(mut out) => out.flush().map_err(|e| named(e, &path)),
        }
    }
}

/// `bytes` as the whole of `path`, atomically (see [`AtomicFile`]).
pub fn write_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = AtomicFile::create(path)?;
    f.write_all(bytes)?;
    f.commit()
}

/// What a write error says: the file it was for (its kind kept, so that a closed pipe
/// or a full disk is still recognised).
fn named(e: io::Error, path: &Path) -> io::Error {
    about(e, "cannot write", path)
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.out {
            Target::Temp(w) => w.write(buf),
            Target::Direct(w) => w.write(buf),
        }
        .map_err(|e| named(e, &self.path))
    }
    fn flush(&mut self) -> io::Result<()> {
        match &mut self.out {
            Target::Temp(w) => w.flush(),
            Target::Direct(w) => w.flush(),
        }
        .map_err(|e| named(e, &self.path))
    }
}

/// `tmp` synced to disk and closed; its path is still removed if it is dropped.
fn synced(tmp: NamedTempFile, target: &Path) -> io::Result<TempPath> {
    tmp.as_file().sync_all().map_err(|e| {
        error(
            e.kind(),
            format!("cannot write {} (sync to disk): {e}", target.display()),
        )
    })?;
    Ok(tmp.into_temp_path())
}

/// Renames the synced temporary file over `path` (checked again: no link).
fn finish(tmp: TempPath, path: &Path) -> io::Result<()> {
    refuse_link(path)?;
    tmp.persist(path)
        .map_err(|e| about(e.error, "cannot replace", path))
}

/// Syncs the directory holding `path`, so that a rename into it survives a crash.
fn sync_dir_of(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| about(e, "cannot sync directory", dir))?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// The directory a set of files (a report, the manual pages) is written into.
pub struct OutDir {
    root: PathBuf,
    /// What the user can do about a refused link ("choose another --out").
    fix: String,
}

/// Files written to temporary names, waiting to be renamed into place.
#[derive(Default)]
pub struct Staged {
    files: Vec<(TempPath, PathBuf)>,
}

impl OutDir {
    /// `root`, created if missing (it may be a symbolic link the user chose); `flag` is
    /// the option that named it, quoted when a link inside it is refused.
    pub fn create(root: &Path, flag: &str) -> io::Result<OutDir> {
        std::fs::create_dir_all(root).map_err(|e| about(e, "cannot create directory", root))?;
        Ok(OutDir {
            root: root.to_path_buf(),
            fix: format!("choose another {flag}"),
        })
    }

    /// The path of `name` (relative, `/`-separated) under the root, its directories
    /// created; refuses a name that leaves the root and any symbolic link on the way.
    pub fn path_of(&self, name: &str) -> io::Result<PathBuf> {
        let rel = Path::new(name);
        let mut path = self.root.clone();
        let parts: Vec<Component> = rel.components().collect();
        for (i, part) in parts.iter().enumerate() {
            let Component::Normal(p) = part else {
                return Err(error(
                    io::ErrorKind::InvalidInput,
                    format!("{name}: not a plain relative file name"),
                ));
            };
            path.push(p);
            if i + 1 == parts.len() {
                break;
            }
            match std::fs::symlink_metadata(&path) {
                Ok(m) if m.file_type().is_symlink() => return Err(link_refused(&path, &self.fix)),
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    return Err(error(
                        io::ErrorKind::InvalidInput,
                        format!("{} is not a directory", path.display()),
                    ))
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => std::fs::create_dir(&path)
                    .map_err(|e| about(e, "cannot create directory", &path))?,
                Err(e) => return Err(about(e, "cannot inspect", &path)),
            }
        }
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => Err(link_refused(&path, &self.fix)),
            _ => refuse_link(&path).map(|()| path),
        }
    }

    /// Write `bytes` for `name` to a temporary file beside it, synced; nothing is
    /// replaced until [`Staged::commit`].
    pub fn stage(&self, staged: &mut Staged, name: &str, bytes: &[u8]) -> io::Result<()> {
        let path = self.path_of(name)?;
        let mut tmp = temp_beside(&path)?;
        tmp.write_all(bytes).map_err(|e| named(e, &path))?;
        let tmp = synced(tmp, &path)?;
        staged.files.push((tmp, path));
        Ok(())
    }
}

impl Staged {
    pub fn new() -> Staged {
        Staged { files: Vec::new() }
    }

    /// Rename every staged file into place, those named `last` (e.g. `report.html`, the
    /// page that links the others) after the rest; the paths, in the order staged.
    pub fn commit(mut self, last: &str) -> io::Result<Vec<PathBuf>> {
        let staged: Vec<PathBuf> = self.files.iter().map(|(_, p)| p.clone()).collect();
        let (tail, head): (Vec<_>, Vec<_>) = std::mem::take(&mut self.files)
            .into_iter()
            .partition(|(_, p)| p.file_name().is_some_and(|n| n == last));
        let mut dirs = std::collections::BTreeMap::new();
        for (tmp, path) in head.into_iter().chain(tail) {
            finish(tmp, &path)?;
            dirs.entry(path.parent().map(Path::to_path_buf))
                .or_insert(path);
        }
        for path in dirs.values() {
            sync_dir_of(path)?;
        }
        Ok(staged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_staged_report_replaces_files_only_on_commit() {
        let dir = tempfile::tempdir().unwrap();
        let out = OutDir::create(dir.path(), "--out").unwrap();
        let mut s = Staged::new();
        out.stage(&mut s, "report.html", b"new page").unwrap();
        out.stage(&mut s, "tables/runs.csv", b"a,b\r\n").unwrap();
        assert!(
            !dir.path().join("report.html").exists(),
            "not before commit"
        );
        s.commit("report.html").unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("report.html")).unwrap(),
            b"new page"
        );
        // Dropped without commit: nothing replaced, no temporary file left.
        let mut s = Staged::new();
        out.stage(&mut s, "report.html", b"other").unwrap();
        drop(s);
        assert_eq!(
            std::fs::read(dir.path().join("report.html")).unwrap(),
            b"new page"
        );
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(out.path_of("../x").is_err() && out.path_of("/etc/x").is_err());
    }

    #[cfg(unix)]
    #[test]
    fn links_inside_the_directory_are_refused_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let target = elsewhere.path().join("target.html");
        std::fs::write(&target, b"keep").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("report.html")).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), dir.path().join("tables")).unwrap();
        let out = OutDir::create(dir.path(), "--out").unwrap();
        let mut s = Staged::new();
        let e = out.stage(&mut s, "report.html", b"x").unwrap_err();
        assert!(
            format!("{e:#}").contains("report.html is a symbolic link"),
            "{e:#}"
        );
        let e = out.stage(&mut s, "tables/t.csv", b"x").unwrap_err();
        assert!(
            format!("{e:#}").contains("tables is a symbolic link"),
            "{e:#}"
        );
        let e = AtomicFile::create(&dir.path().join("report.html"))
            .err()
            .unwrap();
        assert!(format!("{e:#}").contains("symbolic link"), "{e:#}");
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 1);
    }

    #[test]
    fn an_atomic_file_appears_whole_on_commit_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs.csv");
        std::fs::write(&path, b"old").unwrap();
        let mut f = AtomicFile::create(&path).unwrap();
        f.write_all(b"new rows").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        f.commit().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new rows");
        let mut f = AtomicFile::create(&path).unwrap();
        f.write_all(b"half").unwrap();
        drop(f);
        assert_eq!(std::fs::read(&path).unwrap(), b"new rows");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    /// `export -o /dev/null` as root must not replace the device: a named pipe stands in
    /// for it here.
    #[cfg(unix)]
    #[test]
    fn a_named_pipe_is_written_directly_never_replaced() {
        use std::io::Read;
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("SKIPPED: mkfifo is not available");
            return;
        }
        let reader_path = fifo.clone();
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            std::fs::File::open(reader_path)
                .and_then(|mut f| f.read_to_end(&mut got))
                .map(|_| got)
        });
        let mut f = AtomicFile::create(&fifo).unwrap();
        f.write_all(b"rows").unwrap();
        f.commit().unwrap();
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(kind.is_fifo(), "the pipe was replaced: {kind:?}");
        assert_eq!(reader.join().unwrap().unwrap(), b"rows");
    }
}
