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
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok(FileState {
        path: path.to_path_buf(),
        dir,
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

/// Puts the original back: the same bytes and permissions, or the same symlink.
pub fn restore(state: &FileState, original: &[u8]) -> Result<()> {
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
    state.path.file_name().map_or_else(
        || "config.json".into(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn temp_file(state: &FileState, what: &str) -> Result<tempfile::NamedTempFile> {
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
