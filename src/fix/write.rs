//! The safe writer: backup, then temp file + `sync_all` + rename + directory fsync.
//!
//! At every instant the config is either the complete original or the complete new version:
//! the new bytes go to a temp file in the same directory (so the rename cannot cross file
//! systems), get the original's permissions and owner, are synced, and replace the original with
//! one `rename(2)`. A backup is written the same way and published with a no-clobber link, so an
//! existing `config.json.bak` is never overwritten. A symlinked config (a Hub cache snapshot
//! points into content-addressed `blobs/`) is never written through: the rename replaces the
//! link with a regular file and the blob stays byte-identical.
//!
//! Concurrent runs on one file are serialised by an advisory lock ([`lock`]) on a lock file
//! beside it, never on the file itself (the rename replaces the file, so a lock on it would
//! guard an inode that is no longer the config). Under the lock the file is read again and
//! compared with what the run planned from (compare-and-swap): a run applies on top of what it
//! read or fails, and a failed verification restores the original only over the bytes this run
//! wrote. The lock file is removed before it is released, and a run that locked a lock file
//! already unlinked by its previous holder starts over, so no lock file is left behind and two
//! runs never hold two different lock files for one config.
//!
//! Test-only hooks, read here and nowhere else (documented in docs/fix.md):
//! `DFLASH_CHECK_FAIL_AT=backup|temp-write|sync|rename|verify` makes that step fail, and
//! `DFLASH_CHECK_STEP_DELAY_MS=N` sleeps N ms before each step so a test can kill the process
//! mid-write.

use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::config::{self, MAX_CONFIG_BYTES};
use crate::{Error, Result};

/// What is known about the file before it is replaced.
#[derive(Debug, Clone)]
pub struct FileState {
    pub path: PathBuf,
    /// The directory holding the path (for a symlink: the link's directory).
    pub dir: PathBuf,
    /// The link's target as written in the link, when the path is a symbolic link.
    pub symlink_target: Option<PathBuf>,
    /// Permission bits of the file (of the link's target for a symlink).
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    /// Hard links to the file; a rename detaches the other names.
    pub nlink: u64,
}

/// What a successful write did.
#[derive(Debug, Clone, Default)]
pub struct Written {
    pub backup: Option<PathBuf>,
    /// Something worth telling (a directory that could not be synced).
    pub notes: Vec<String>,
}

/// A test hook: fails when `DFLASH_CHECK_FAIL_AT` names `step`, after an optional delay.
pub fn fail_point(step: &str) -> io::Result<()> {
    if let Some(ms) = std::env::var("DFLASH_CHECK_STEP_DELAY_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
    match std::env::var("DFLASH_CHECK_FAIL_AT") {
        Ok(v) if v == step => Err(io::Error::other(format!(
            "injected failure (DFLASH_CHECK_FAIL_AT={step}, a test hook)"
        ))),
        _ => Ok(()),
    }
}

/// Looks at `path` without changing anything.
pub fn inspect(path: &Path) -> Result<FileState> {
    let link = fs::symlink_metadata(path).map_err(|e| config::io_error(path, &e))?;
    let symlink_target = if link.file_type().is_symlink() {
        Some(fs::read_link(path).map_err(|e| config::io_error(path, &e))?)
    } else {
        None
    };
    let meta = fs::metadata(path).map_err(|e| config::io_error(path, &e))?;
    if !meta.is_file() {
        return Err(Error::new(format!(
            "`{}` is not a regular file",
            path.display()
        )));
    }
    Ok(FileState {
        path: path.to_path_buf(),
        dir: dir_of(path).to_path_buf(),
        symlink_target,
        mode: meta.permissions().mode() & 0o7777,
        uid: meta.uid(),
        gid: meta.gid(),
        nlink: meta.nlink(),
    })
}

fn access_ok(path: &Path, mode: libc::c_int) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a valid NUL-terminated string for the duration of the call.
    unsafe { libc::access(c.as_ptr(), mode) == 0 }
}

/// Refuses a file or directory that is not writable. Permission bits are checked as well as
/// access(2), so a file marked read-only (`chmod a-w`) is refused even for root, who may write
/// anything. A symlink's target is not checked: it is never written.
pub fn check_writable(state: &FileState) -> Result<()> {
    let dir = &state.dir;
    let dmeta = fs::metadata(dir).map_err(|e| config::io_error(dir, &e))?;
    let dmode = dmeta.permissions().mode() & 0o7777;
    if dmode & 0o222 == 0 || !access_ok(dir, libc::W_OK | libc::X_OK) {
        return Err(Error::new(format!(
            "cannot fix `{}`: its directory `{}` is not writable (mode {dmode:04o}); the file is untouched",
            state.path.display(),
            dir.display()
        ))
        .with_hint("the fix writes a temporary file beside the config and renames it over the original; make the directory writable, or copy the drafter somewhere writable"));
    }
    if state.symlink_target.is_none()
        && (state.mode & 0o222 == 0 || !access_ok(&state.path, libc::W_OK))
    {
        return Err(Error::new(format!(
            "cannot fix `{}`: the file is not writable (mode {:04o}); the file is untouched",
            state.path.display(),
            state.mode
        ))
        .with_hint(format!(
            "make it writable first (chmod u+w {}) if it really should change",
            state.path.display()
        )));
    }
    Ok(())
}

/// How long a run waits for another run's lock before giving up (a fix holds it for a write,
/// an fsync and a re-read: well under a second on a healthy disk).
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// An advisory lock (`flock(2)`) on `.<name>.dflash-check.lock` beside a file, held until
/// dropped; dropping removes the lock file, then releases it.
#[derive(Debug)]
pub struct FileLock {
    /// `None` when the file system has no `flock` (some network file systems): the
    /// compare-and-swap under the (absent) lock still refuses a changed file.
    file: Option<File>,
    path: PathBuf,
}

impl Drop for FileLock {
    fn drop(&mut self) {
        if self.file.is_some() {
            // Unlink while still holding the lock: a run waiting on this inode re-checks the
            // path after it gets the lock and starts over on a fresh file.
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// The lock file of `path`: in the same directory (for a symlink: the link's directory).
pub fn lock_path(path: &Path) -> PathBuf {
    dir_of(path).join(format!(".{}.dflash-check.lock", name_of(path)))
}

/// Takes the advisory lock of `path`, waiting up to 30 s for another dflash-check run that
/// holds it. The lock file is opened without following a symlink planted at its name.
pub fn lock(path: &Path) -> Result<FileLock> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let lock_path = lock_path(path);
    let fail = |e: &dyn std::fmt::Display| {
        Error::new(format!(
            "cannot lock `{}` (lock file `{}`): {e}; nothing was written",
            path.display(),
            lock_path.display()
        ))
    };
    let start = std::time::Instant::now();
    loop {
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&lock_path)
            .map_err(|e| fail(&e))?;
        // SAFETY: flock on a descriptor this function owns; no memory is passed.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let err = io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::EWOULDBLOCK) | Some(libc::EINTR) => {
                    if start.elapsed() > LOCK_WAIT {
                        return Err(Error::new(format!(
                            "another run is writing `{}` (it holds `{}`) and did not finish within {} s; nothing was written",
                            path.display(),
                            lock_path.display(),
                            LOCK_WAIT.as_secs()
                        ))
                        .with_hint("run again when it has finished; if no dflash-check is running, delete the lock file"));
                    }
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    continue;
                }
                Some(libc::ENOLCK) | Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS) => {
                    return Ok(FileLock {
                        file: None,
                        path: lock_path,
                    });
                }
                _ => return Err(fail(&err)),
            }
        }
        // The previous holder may have unlinked this inode before we locked it: only a lock
        // on the file the path names now excludes the other runs.
        let held = file.metadata().map_err(|e| fail(&e))?;
        match fs::symlink_metadata(&lock_path) {
            Ok(now) if now.dev() == held.dev() && now.ino() == held.ino() => {
                return Ok(FileLock {
                    file: Some(file),
                    path: lock_path,
                })
            }
            Ok(_) => continue,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(fail(&e)),
        }
    }
}

fn step_error(state: &FileState, step: &str, err: &dyn std::fmt::Display) -> Error {
    Error::new(format!(
        "could not write `{}`: {step}: {err}; the file is unchanged",
        state.path.display()
    ))
}

/// Replaces the file's content with `new` (the on-disk bytes must still be `original`).
pub fn replace(state: &FileState, new: &[u8], original: &[u8], backup: bool) -> Result<Written> {
    let current = config::read_capped(&state.path, MAX_CONFIG_BYTES)?;
    if current != original {
        return Err(Error::new(format!(
            "`{}` changed on disk while it was being fixed; nothing was written",
            state.path.display()
        ))
        .with_hint("run the fix again"));
    }
    let mut written = Written::default();
    if backup {
        written.backup = Some(write_backup(state, original)?);
    }
    if let Err(e) = write_and_rename(state, new, true) {
        if let Some(b) = &written.backup {
            let _ = fs::remove_file(b);
        }
        return Err(e);
    }
    if let Err(e) = sync_dir(&state.dir) {
        written.notes.push(format!(
            "the directory `{}` could not be synced ({e}); the new file is in place but may not survive a power loss yet",
            state.dir.display()
        ));
    }
    Ok(written)
}

/// Puts the original back (the same bytes and permissions, or the same symlink), only over
/// the bytes this run wrote: a file changed since by someone else is left alone.
pub fn restore(state: &FileState, original: &[u8], wrote: &[u8]) -> Result<()> {
    let current = config::read_capped(&state.path, MAX_CONFIG_BYTES)?;
    if current != wrote {
        return Err(Error::new(format!(
            "`{}` was changed by something else after this run wrote it; it was left as it is",
            state.path.display()
        )));
    }
    match &state.symlink_target {
        Some(target) => {
            let tmp = state.dir.join(format!(
                ".{}.dflash-check-restore.{}",
                file_name(state),
                std::process::id()
            ));
            let _ = fs::remove_file(&tmp);
            std::os::unix::fs::symlink(target, &tmp)
                .and_then(|()| fs::rename(&tmp, &state.path))
                .map_err(|e| {
                    let _ = fs::remove_file(&tmp);
                    Error::new(format!(
                        "could not restore the symbolic link `{}` -> `{}`: {e}",
                        state.path.display(),
                        target.display()
                    ))
                })?;
        }
        None => write_and_rename(state, original, false)?,
    }
    let _ = sync_dir(&state.dir);
    Ok(())
}

fn file_name(state: &FileState) -> String {
    name_of(&state.path)
}

/// The directory holding `path` (`.` for a bare name; for a symlink, the link's directory).
fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

fn name_of(path: &Path) -> String {
    path.file_name().map_or_else(
        || "config.json".into(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn temp_file(state: &FileState, what: &str) -> Result<tempfile::NamedTempFile> {
    // O_EXCL on a random name: a symlink planted beside the file is never followed.
    tempfile::Builder::new()
        .prefix(&format!(".{}.", file_name(state)))
        .suffix(".dflash-check.tmp")
        .tempfile_in(&state.dir)
        .map_err(|e| {
            step_error(
                state,
                &format!(
                    "cannot create a temporary {what} in `{}`",
                    state.dir.display()
                ),
                &e,
            )
        })
}

/// Writes `bytes` to a synced temp file with the original's permissions and owner.
fn prepared_temp(
    state: &FileState,
    bytes: &[u8],
    what: &str,
    hooks: bool,
) -> Result<tempfile::NamedTempFile> {
    let mut tmp = temp_file(state, what)?;
    let hook = |step: &str| if hooks { fail_point(step) } else { Ok(()) };
    hook("temp-write")
        .and_then(|()| tmp.write_all(bytes))
        .and_then(|()| tmp.flush())
        .map_err(|e| step_error(state, &format!("writing the temporary {what}"), &e))?;
    // Owner first (only root may give a file away; others keep their own), then the mode,
    // since chown can clear set-id bits. A fresh temp file is 0600.
    let _ = std::os::unix::fs::fchown(tmp.as_file(), Some(state.uid), Some(state.gid));
    tmp.as_file()
        .set_permissions(fs::Permissions::from_mode(state.mode))
        .map_err(|e| step_error(state, "copying the permissions", &e))?;
    hook("sync")
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(|e| step_error(state, &format!("syncing the temporary {what}"), &e))?;
    Ok(tmp)
}

/// Writes `bytes` to `path` atomically (temp file beside it, `sync_all`, rename, directory
/// sync), for small files other than the config (the pin file). An existing file keeps its
/// mode and owner; a new one gets 0666 minus the umask, like any new file. The caller holds
/// [`lock`] when others may write the same file.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let exists = fs::symlink_metadata(path).is_ok();
    let tmp = if exists {
        let state = inspect(path)?;
        prepared_temp(&state, bytes, "file", false)?
    } else {
        let mut tmp = tempfile::Builder::new()
            .prefix(&format!(".{}.", name_of(path)))
            .suffix(".dflash-check.tmp")
            .permissions(fs::Permissions::from_mode(0o666))
            .tempfile_in(dir_of(path))
            .map_err(|e| Error::new(format!("cannot write `{}`: {e}", path.display())))?;
        tmp.write_all(bytes)
            .and_then(|()| tmp.as_file().sync_all())
            .map_err(|e| Error::new(format!("cannot write `{}`: {e}", path.display())))?;
        tmp
    };
    tmp.persist(path)
        .map_err(|e| Error::new(format!("cannot write `{}`: {}", path.display(), e.error)))?;
    let _ = sync_dir(dir_of(path));
    Ok(())
}

fn write_and_rename(state: &FileState, bytes: &[u8], hooks: bool) -> Result<()> {
    let tmp = prepared_temp(state, bytes, "file", hooks)?;
    if hooks {
        fail_point("rename").map_err(|e| step_error(state, "renaming over the original", &e))?;
    }
    tmp.persist(&state.path)
        .map_err(|e| step_error(state, "renaming over the original", &e.error))?;
    Ok(())
}

/// `config.json.bak`, or the first free `config.json.bak.N`; never overwrites.
fn write_backup(state: &FileState, original: &[u8]) -> Result<PathBuf> {
    let hook = fail_point("backup").map_err(|e| step_error(state, "writing the backup", &e));
    hook?;
    let mut tmp = prepared_temp(state, original, "backup", false)?;
    let base = file_name(state);
    for n in 0..10_000u32 {
        let name = if n == 0 {
            format!("{base}.bak")
        } else {
            format!("{base}.bak.{n}")
        };
        let candidate = state.dir.join(name);
        if fs::symlink_metadata(&candidate).is_ok() {
            continue;
        }
        match tmp.persist_noclobber(&candidate) {
            Ok(_) => return Ok(candidate),
            Err(e) if e.error.kind() == io::ErrorKind::AlreadyExists => tmp = e.file,
            Err(e) => return Err(step_error(state, "writing the backup", &e.error)),
        }
    }
    Err(step_error(
        state,
        "writing the backup",
        &"10,000 backups already exist",
    ))
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A failed verification restores the original only over what this run wrote: a file
    /// changed since (another writer's fix) is left alone.
    #[test]
    fn restore_leaves_a_file_someone_else_changed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        fs::write(&path, b"{\"a\": 2}").unwrap();
        let state = inspect(&path).unwrap();
        let err = restore(&state, b"{\"a\": 1}", b"{\"a\": 3}").unwrap_err();
        assert!(err.message.contains("changed by something else"), "{err:?}");
        assert_eq!(fs::read(&path).unwrap(), b"{\"a\": 2}");
        restore(&state, b"{\"a\": 1}", b"{\"a\": 2}").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"{\"a\": 1}");
    }

    /// The lock file is a hidden name beside the file; a second taker waits, and the file is
    /// gone once the lock is released. A symlink planted at its name is not followed.
    #[test]
    fn lock_is_exclusive_and_cleans_up() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        let held = lock(&path).unwrap();
        let lp = lock_path(&path);
        assert!(lp.ends_with(".config.json.dflash-check.lock"));
        let (tx, rx) = std::sync::mpsc::channel();
        let p2 = path.clone();
        let waiter = std::thread::spawn(move || {
            let l = lock(&p2).unwrap();
            tx.send(()).unwrap();
            drop(l);
        });
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(rx.try_recv().is_err(), "the second lock did not wait");
        drop(held);
        waiter.join().unwrap();
        assert!(rx.try_recv().is_ok());
        assert!(!lp.exists(), "lock file left behind");

        let victim = dir.path().join("victim");
        fs::write(&victim, "x").unwrap();
        std::os::unix::fs::symlink(&victim, &lp).unwrap();
        assert!(lock(&path).is_err());
        assert_eq!(fs::read_to_string(&victim).unwrap(), "x");
    }
}
