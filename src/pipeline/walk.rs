//! The walk behind [`super::discover`]: every directory under a path listed once, in name
//! order, each `config.json` and deployment file it holds noted, its subdirectories walked.
//!
//! On Linux a directory is opened through its parent's open descriptor (`openat` of one name,
//! links not followed) and listed with `getdents64` into one buffer the whole walk shares:
//! std's `read_dir` opens the whole path again for every directory (the kernel resolves each
//! component) and asks the opened directory's status (`fstat`) before listing it, a system
//! call a drafter folder that `check` over thousands paid for nothing (issue 44). A listing
//! that does not say what an entry is (`DT_UNKNOWN`, some file systems) asks the entry's own
//! status without following it, as std does. Elsewhere the listing is std's.
//!
//! Parents' descriptors stay open while their subdirectories are walked, down to
//! [`HELD_DEPTH`] levels; deeper directories are opened by their whole path, so a tree of any
//! depth never holds more than that many descriptors.

use std::ffi::{OsStr, OsString};
use std::path::Path;

use super::{deployment, Discovered, FoundConfig};
use crate::weights;
use dflash_check_core::launch::files;

/// The deepest level whose directory's descriptor is kept open for its subdirectories.
const HELD_DEPTH: usize = 32;

/// What a listing says an entry is, links not followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Directory,
    File,
    /// A link, a FIFO, a socket or a device.
    Other,
}

/// One entry of a listing: its name, and its kind (`None`: its status could not be had).
struct Entry {
    name: OsString,
    kind: Option<Kind>,
}

/// Walks the directory `dir` (links followed to it, as given), noting what it finds in
/// `found`; a directory that cannot be listed is noted as unreadable.
pub(super) fn walk(dir: &Path, cap: u64, found: &mut Discovered) {
    let mut buffer = list::Buffer::new();
    walk_in(None, dir, OsStr::new(""), 0, cap, found, &mut buffer);
}

fn walk_in(
    parent: Option<&list::Dir>,
    dir: &Path,
    name: &OsStr,
    depth: usize,
    cap: u64,
    found: &mut Discovered,
    buffer: &mut list::Buffer,
) {
    let mut entries = Vec::new();
    let opened = list::open(parent, dir, name)
        .and_then(|handle| list::list(&handle, buffer, &mut entries).map(|()| handle));
    let handle = match opened {
        Ok(handle) => handle,
        Err(e) => return found.unreadable.push((dir.to_path_buf(), e)),
    };
    // Past HELD_DEPTH the descriptor is closed now and subdirectories open by path.
    let held = (depth < HELD_DEPTH).then_some(handle);
    // The names of one directory are distinct, so the unstable sort orders them as the
    // stable one.
    entries.sort_unstable_by(|a, b| a.name.cmp(&b.name));
    let weights_listed = entries
        .iter()
        .any(|e| e.name == weights::index::SINGLE_FILE || e.name == weights::index::INDEX_FILE);
    for entry in &entries {
        let Some(kind) = entry.kind else {
            continue;
        };
        let name = entry.name.to_string_lossy();
        let path = dir.join(&entry.name);
        match kind {
            // A linked directory is not walked (no loops); a linked config.json (Hub cache
            // snapshots) is taken.
            Kind::Directory => {
                if !name.starts_with('.') && name != "node_modules" && name != "target" {
                    let held = held.as_ref();
                    walk_in(held, &path, &entry.name, depth + 1, cap, found, buffer);
                }
            }
            _ if name == "config.json" => found.configs.push(FoundConfig {
                path,
                no_weights_listed: !weights_listed,
                listed_file: kind == Kind::File,
            }),
            _ => {
                if let Some(candidate) = files::candidate(&name) {
                    deployment(&path, candidate, cap, found);
                }
            }
        }
    }
}

#[cfg(target_os = "linux")]
mod list {
    use std::ffi::{OsStr, OsString};
    use std::io;
    use std::mem::MaybeUninit;
    use std::os::unix::ffi::OsStringExt;
    use std::path::Path;

    use rustix::fs::{openat, statat, AtFlags, FileType, Mode, OFlags, RawDir, CWD};

    use super::{Entry, Kind};

    pub(super) type Dir = rustix::fd::OwnedFd;

    /// The buffer `getdents64` fills, shared by the whole walk (glibc's readdir uses 32 KiB).
    pub(super) struct Buffer(Vec<MaybeUninit<u8>>);

    impl Buffer {
        pub(super) fn new() -> Buffer {
            Buffer(vec![MaybeUninit::uninit(); 32 * 1024])
        }
    }

    /// The directory `name` in `parent`, links not followed (the walk goes only into what its
    /// parent's listing showed as a directory), or, without a parent, the directory `path`,
    /// links followed as std's `read_dir` follows them.
    pub(super) fn open(parent: Option<&Dir>, path: &Path, name: &OsStr) -> io::Result<Dir> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let opened = match parent {
            Some(parent) => openat(parent, name, flags | OFlags::NOFOLLOW, Mode::empty()),
            None => openat(CWD, path, flags, Mode::empty()),
        };
        Ok(opened?)
    }

    /// Every entry of `dir` but `.` and `..`, appended to `out`. An entry whose kind the
    /// listing does not give is asked for its own status (not followed).
    pub(super) fn list(dir: &Dir, buffer: &mut Buffer, out: &mut Vec<Entry>) -> io::Result<()> {
        let mut raw = RawDir::new(dir, &mut buffer.0);
        while let Some(entry) = raw.next() {
            let entry = entry?;
            let name = entry.file_name();
            if matches!(name.to_bytes(), b"." | b"..") {
                continue;
            }
            let kind = match entry.file_type() {
                FileType::Unknown => statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
                    .ok()
                    .map(|status| kind_of(FileType::from_raw_mode(status.st_mode))),
                known => Some(kind_of(known)),
            };
            out.push(Entry {
                name: OsString::from_vec(name.to_bytes().to_vec()),
                kind,
            });
        }
        Ok(())
    }

    fn kind_of(file_type: FileType) -> Kind {
        match file_type {
            FileType::Directory => Kind::Directory,
            FileType::RegularFile => Kind::File,
            _ => Kind::Other,
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod list {
    use std::ffi::OsStr;
    use std::io;
    use std::path::{Path, PathBuf};

    use super::{Entry, Kind};

    /// The directory's path: std's `read_dir` opens it by path.
    pub(super) struct Dir(PathBuf);

    pub(super) struct Buffer;

    impl Buffer {
        pub(super) fn new() -> Buffer {
            Buffer
        }
    }

    pub(super) fn open(_parent: Option<&Dir>, path: &Path, _name: &OsStr) -> io::Result<Dir> {
        Ok(Dir(path.to_path_buf()))
    }

    pub(super) fn list(dir: &Dir, _buffer: &mut Buffer, out: &mut Vec<Entry>) -> io::Result<()> {
        for entry in std::fs::read_dir(&dir.0)?.flatten() {
            let kind = entry.file_type().ok().map(|t| match t {
                t if t.is_dir() => Kind::Directory,
                t if t.is_file() => Kind::File,
                _ => Kind::Other,
            });
            out.push(Entry {
                name: entry.file_name(),
                kind,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// The walk as std's `read_dir` made it (before issue 44's listing through descriptors):
    /// the oracle the walk is held to.
    fn std_walk(dir: &Path, found: &mut Vec<(PathBuf, bool, bool)>, unreadable: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return unreadable.push(dir.to_path_buf());
        };
        let mut entries: Vec<_> = entries.flatten().map(|e| (e.file_name(), e)).collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let weights = entries
            .iter()
            .any(|(n, _)| n == weights::index::SINGLE_FILE || n == weights::index::INDEX_FILE);
        for (name, entry) in entries {
            let name = name.to_string_lossy();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if !name.starts_with('.') && name != "node_modules" && name != "target" {
                    std_walk(&entry.path(), found, unreadable);
                }
            } else if name == "config.json" {
                found.push((entry.path(), !weights, kind.is_file()));
            }
        }
    }

    fn walked(root: &Path) -> (Vec<(PathBuf, bool, bool)>, Vec<PathBuf>) {
        let mut found = Discovered::default();
        walk(root, 1 << 20, &mut found);
        let configs = found.configs.into_iter();
        (
            configs
                .map(|c| (c.path, c.no_weights_listed, c.listed_file))
                .collect(),
            found.unreadable.into_iter().map(|(dir, _)| dir).collect(),
        )
    }

    /// A tree of every kind of entry the walk tells apart, deeper than the descriptors it
    /// holds ([`HELD_DEPTH`]): what it finds, in what order, with what it noted, is what std's
    /// walk found. Linked directories are not walked, a linked `config.json` and a FIFO named
    /// so are taken but not as regular files, hidden folders, `node_modules` and `target` are
    /// skipped, a folder named in bytes that are not UTF-8 is walked, a linked root is followed,
    /// and a root that is not there is unreadable.
    #[cfg(unix)]
    #[test]
    fn the_walk_finds_what_stds_walk_found() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        let config = |dir: &Path| {
            std::fs::create_dir_all(dir).unwrap();
            std::fs::write(dir.join("config.json"), "{}").unwrap();
        };
        let mut deep = root.join("deep");
        for level in 0..HELD_DEPTH + 8 {
            deep = deep.join(format!("level-{level:02}"));
            if level % 10 == 9 {
                config(&deep);
            }
        }
        config(&deep);
        for name in [
            "a",
            "a.b",
            "b/c",
            ".hidden",
            "node_modules/x",
            "target/y",
            "with-weights",
        ] {
            config(&root.join(name));
        }
        std::fs::write(
            root.join("with-weights").join(weights::index::INDEX_FILE),
            "{}",
        )
        .unwrap();
        std::fs::create_dir_all(root.join("linked-file")).unwrap();
        std::os::unix::fs::symlink("../a/config.json", root.join("linked-file/config.json"))
            .unwrap();
        std::os::unix::fs::symlink("a", root.join("linked-dir")).unwrap();
        // A folder whose name is not UTF-8 (Latin-1 `é`): walked, its path kept byte for byte.
        let latin1 = <OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(b"caf\xe9");
        config(&root.join(latin1));
        std::fs::create_dir_all(root.join("fifo")).unwrap();
        let fifo = std::ffi::CString::new(
            root.join("fifo/config.json")
                .into_os_string()
                .into_encoded_bytes(),
        )
        .unwrap();
        // SAFETY: a NUL-terminated path; mkfifo only creates the node.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);

        let (mut expected, mut expected_unreadable) = (Vec::new(), Vec::new());
        std_walk(&root, &mut expected, &mut expected_unreadable);
        let (found, unreadable) = walked(&root);
        assert_eq!(found, expected);
        assert_eq!(unreadable, expected_unreadable);
        assert_eq!(found.len(), 11, "{found:#?}");
        assert!(found
            .iter()
            .any(|(p, _, _)| p.parent().and_then(Path::file_name) == Some(latin1)));
        assert!(found
            .iter()
            .any(|(p, _, file)| p.ends_with("linked-file/config.json") && !file));
        assert!(found
            .iter()
            .any(|(p, _, file)| p.ends_with("fifo/config.json") && !file));
        assert!(found
            .iter()
            .any(|(p, none, _)| p.ends_with("with-weights/config.json") && !none));

        // A linked root is followed, as std's read_dir follows it.
        std::os::unix::fs::symlink("repo", tmp.path().join("link-to-repo")).unwrap();
        let (through_link, _) = walked(&tmp.path().join("link-to-repo"));
        assert_eq!(through_link.len(), found.len());

        // A root that is not there: unreadable, with std's words.
        let missing = tmp.path().join("missing");
        let mut found = Discovered::default();
        walk(&missing, 1 << 20, &mut found);
        let (dir, e) = &found.unreadable[0];
        assert_eq!(dir, &missing);
        assert_eq!(
            e.to_string(),
            std::fs::read_dir(&missing).unwrap_err().to_string()
        );
    }
}
