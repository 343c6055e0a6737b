//! The standard Hub cache layout, shared with Python `huggingface_hub`:
//!
//! ```text
//! <cache>/models--ORG--NAME/
//!     blobs/<etag>                      file contents, named by ETag (git blob sha1 or sha256)
//!     refs/<branch>                     the commit sha the branch pointed at, no newline
//!     snapshots/<sha>/<file>            symlink to ../../blobs/<etag>
//!     .no_exist/<sha>/<file>            empty marker: the file does not exist at that commit
//! ```
//!
//! Every write goes to a temporary name in the same directory and is renamed into place, so a
//! reader (ours or Python's) never sees a partial file.

use std::fs;
use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha1::{Digest, Sha1};
use sha2::Sha256;

use super::repo_ref::is_commit_sha;

/// `org/name` → `models--org--name`.
pub fn repo_folder(repo: &str) -> String {
    format!("models--{}", repo.replace('/', "--"))
}

/// The cache's view of one model repo.
#[derive(Debug, Clone)]
pub(crate) struct RepoCache {
    root: PathBuf,
}

fn join_rel(base: &Path, rel: &str) -> PathBuf {
    rel.split('/').fold(base.to_path_buf(), |p, c| p.join(c))
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

fn temp_sibling(path: &Path) -> PathBuf {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.{n}.incomplete", std::process::id()))
}

/// Writes `bytes` to `path` through a temporary sibling and a rename.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    let tmp = temp_sibling(path);
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Whether an ETag is a content hash: a git blob sha1 (40 hex, regular files) or a sha256
/// (64 hex, LFS files). Only these can vouch for a file's bytes.
pub(crate) fn is_content_hash(etag: &str) -> bool {
    matches!(etag.len(), 40 | 64) && etag.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Whether `bytes` match an ETag: a git blob sha1 (regular files) or a sha256 (LFS files).
/// Any other ETag shape cannot vouch for the bytes: `false`.
pub(crate) fn matches_etag(bytes: &[u8], etag: &str) -> bool {
    let etag = etag.to_ascii_lowercase();
    let hex = |d: &[u8]| d.iter().map(|b| format!("{b:02x}")).collect::<String>();
    if etag.len() == 40 && is_commit_sha(&etag) {
        let mut h = Sha1::new();
        h.update(format!("blob {}\0", bytes.len()).as_bytes());
        h.update(bytes);
        hex(&h.finalize()) == etag
    } else if etag.len() == 64 && etag.bytes().all(|b| b.is_ascii_hexdigit()) {
        hex(&Sha256::digest(bytes)) == etag
    } else {
        false
    }
}

/// Whether a cached snapshot file still holds what its blob's name says. The cache names each
/// blob by its ETag (a git blob sha1 or an LFS sha256), so an edited or corrupted cached file
/// can be told from a good one without the network. `Err` says what the name promised; a
/// snapshot file that is no link into `blobs/`, or a blob name that is no hash, cannot be
/// checked and passes.
pub(crate) fn verify_cached(snapshot_file: &Path, bytes: &[u8]) -> Result<(), String> {
    let Ok(target) = fs::read_link(snapshot_file) else {
        return Ok(());
    };
    let Some(name) = target.file_name().and_then(|n| n.to_str()) else {
        return Ok(());
    };
    if is_content_hash(name) && !matches_etag(bytes, name) {
        return Err(format!(
            "its content does not hash to its blob name {name} (edited or corrupted in the cache)"
        ));
    }
    Ok(())
}

/// An ETag safe to use as a file name.
pub(crate) fn safe_etag(etag: &str) -> bool {
    !etag.is_empty()
        && etag.len() <= 128
        && etag
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

impl RepoCache {
    pub fn new(cache_dir: &Path, repo: &str) -> Self {
        RepoCache {
            root: cache_dir.join(repo_folder(repo)),
        }
    }

    /// `<cache>/models--ORG--NAME`.
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn snapshot_path(&self, sha: &str, filename: &str) -> PathBuf {
        join_rel(&self.root.join("snapshots").join(sha), filename)
    }

    pub fn no_exist_path(&self, sha: &str, filename: &str) -> PathBuf {
        join_rel(&self.root.join(".no_exist").join(sha), filename)
    }

    pub fn blob_path(&self, etag: &str) -> PathBuf {
        self.root.join("blobs").join(etag)
    }

    fn ref_path(&self, revision: &str) -> PathBuf {
        join_rel(&self.root.join("refs"), revision)
    }

    /// The sha a branch or tag pointed at when last fetched.
    pub fn read_ref(&self, revision: &str) -> Option<String> {
        let text = fs::read_to_string(self.ref_path(revision)).ok()?;
        let sha = text.trim();
        is_commit_sha(sha).then(|| sha.to_string())
    }

    pub fn write_ref(&self, revision: &str, sha: &str) -> std::io::Result<()> {
        if self.read_ref(revision).as_deref() == Some(sha) {
            return Ok(());
        }
        write_atomic(&self.ref_path(revision), sha.as_bytes())
    }

    /// Stores `bytes` as `blobs/<etag>` unless an identical blob is already there.
    pub fn write_blob(&self, etag: &str, bytes: &[u8]) -> std::io::Result<()> {
        let blob = self.blob_path(etag);
        if fs::read(&blob).is_ok_and(|b| b == bytes) {
            return Ok(());
        }
        write_atomic(&blob, bytes)
    }

    /// Points `snapshots/<sha>/<filename>` at `blobs/<etag>` with a relative symlink (a copy
    /// where symlinks are unavailable), replacing whatever was there atomically.
    pub fn link_snapshot(&self, sha: &str, filename: &str, etag: &str) -> std::io::Result<PathBuf> {
        let link = self.snapshot_path(sha, filename);
        let parent = link.parent().unwrap_or(&self.root).to_path_buf();
        fs::create_dir_all(&parent)?;
        let depth = 2 + filename.matches('/').count();
        let target: PathBuf = std::iter::repeat_n("..", depth)
            .collect::<PathBuf>()
            .join("blobs")
            .join(etag);
        let tmp = temp_sibling(&link);
        #[cfg(unix)]
        let made = std::os::unix::fs::symlink(&target, &tmp);
        #[cfg(not(unix))]
        let made = fs::copy(self.blob_path(etag), &tmp).map(|_| ());
        let result = made.and_then(|()| fs::rename(&tmp, &link));
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result.map(|()| link)
    }

    pub fn mark_no_exist(&self, sha: &str, filename: &str) -> std::io::Result<()> {
        write_atomic(&self.no_exist_path(sha, filename), b"")
    }
}

/// A path inside a Hub cache snapshot (`.../models--ORG--NAME/snapshots/SHA/...`) →
/// `("ORG/NAME", SHA)`. The path is made absolute but not canonicalized: canonicalizing would
/// follow the snapshot symlink into `blobs/` and lose the sha.
pub fn detect_cache_snapshot(path: &Path) -> Option<(String, String)> {
    let abs = std::path::absolute(path).ok()?;
    let parts: Vec<&str> = abs
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => s.to_str(),
            _ => None,
        })
        .collect();
    parts.windows(3).rev().find_map(|w| {
        let folder = w[0].strip_prefix("models--")?;
        if w[1] != "snapshots" || !is_commit_sha(w[2]) {
            return None;
        }
        let (org, name) = folder.split_once("--")?;
        if org.is_empty() || name.is_empty() || name.contains("--") {
            return None;
        }
        Some((format!("{org}/{name}"), w[2].to_ascii_lowercase()))
    })
}

/// A folder made by `hf download --local-dir DIR` (or `hf_hub_download(local_dir=...)`) →
/// the commit sha it was downloaded at, read from
/// `DIR/.cache/huggingface/download/config.json.metadata` (first line: the sha, then the ETag
/// and a timestamp). Given a file inside such a folder, its own `.metadata` is read instead.
pub fn detect_local_dir_download(dir: &Path) -> Option<String> {
    let (dir, name) = if dir.is_file() {
        (dir.parent()?, dir.file_name()?.to_str()?)
    } else {
        (dir, "config.json")
    };
    let meta = dir
        .join(".cache")
        .join("huggingface")
        .join("download")
        .join(format!("{name}.metadata"));
    let text = fs::read_to_string(meta).ok()?;
    let sha = text.lines().next()?.trim();
    is_commit_sha(sha).then(|| sha.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

    #[test]
    fn detects_snapshot_paths() {
        let p = PathBuf::from(format!(
            "/home/u/.cache/huggingface/hub/models--z-lab--Qwen3-8B-DFlash-b16/snapshots/{SHA}/config.json"
        ));
        assert_eq!(
            detect_cache_snapshot(&p),
            Some(("z-lab/Qwen3-8B-DFlash-b16".to_string(), SHA.to_string()))
        );
        let nested = PathBuf::from(format!("/c/models--a--b/snapshots/{SHA}/sub/x.json"));
        assert_eq!(
            detect_cache_snapshot(&nested).map(|r| r.0),
            Some("a/b".into())
        );
        for p in [
            "/c/models--a--b/blobs/abc".to_string(),
            "/c/models--a--b/snapshots/main/config.json".to_string(),
            format!("/c/datasets--a--b/snapshots/{SHA}/x"),
            format!("/c/models--ab/snapshots/{SHA}/x"),
            "config.json".to_string(),
        ] {
            assert_eq!(detect_cache_snapshot(Path::new(&p)), None, "{p}");
        }
    }

    #[test]
    fn detects_local_dir_downloads() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(detect_local_dir_download(dir.path()), None);
        let meta = dir.path().join(".cache/huggingface/download");
        fs::create_dir_all(&meta).unwrap();
        fs::write(
            meta.join("config.json.metadata"),
            format!("{SHA}\nd0f1e2\n1767225600.0\n"),
        )
        .unwrap();
        fs::write(dir.path().join("config.json"), "{}").unwrap();
        assert_eq!(detect_local_dir_download(dir.path()), Some(SHA.to_string()));
        assert_eq!(
            detect_local_dir_download(&dir.path().join("config.json")),
            Some(SHA.to_string())
        );
        fs::write(meta.join("config.json.metadata"), "not-a-sha\n").unwrap();
        assert_eq!(detect_local_dir_download(dir.path()), None);
    }

    #[test]
    fn writes_the_standard_layout_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let cache = RepoCache::new(dir.path(), "org/name");
        let bytes = b"{\"a\": 1}\n";
        let etag = "e3b7a3c1bbc0a7c9b01f55c3a0f2b7a5e2f3e4d5";
        cache.write_blob(etag, bytes).unwrap();
        cache.write_ref("main", SHA).unwrap();
        let link = cache.link_snapshot(SHA, "sub/config.json", etag).unwrap();
        assert_eq!(fs::read(&link).unwrap(), bytes);
        assert_eq!(cache.read_ref("main").as_deref(), Some(SHA));
        #[cfg(unix)]
        assert_eq!(
            fs::read_link(&link).unwrap(),
            PathBuf::from(format!("../../../blobs/{etag}"))
        );
        let leftovers: Vec<_> = walk(dir.path())
            .into_iter()
            .filter(|p| p.to_string_lossy().ends_with(".incomplete"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    #[test]
    fn verifies_cached_files_against_their_blob_names() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = RepoCache::new(tmp.path(), "org/name");
        let bytes = b"{\"a\": 1}\n";
        let mut h = Sha1::new();
        h.update(format!("blob {}\0", bytes.len()).as_bytes());
        h.update(bytes);
        let etag: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        cache.write_blob(&etag, bytes).unwrap();
        let sha = "0123456789abcdef0123456789abcdef01234567";
        let path = cache.link_snapshot(sha, "config.json", &etag).unwrap();
        assert_eq!(verify_cached(&path, bytes), Ok(()));
        let err = verify_cached(&path, b"{\"a\": 2}\n").unwrap_err();
        assert!(err.contains(&etag), "{err}");
    }

    #[test]
    fn checks_git_blob_and_sha256_etags() {
        // `printf 'hello\n' | git hash-object --stdin`
        assert!(matches_etag(
            b"hello\n",
            "ce013625030ba8dba906f756967f9e9ca394464a"
        ));
        assert!(!matches_etag(
            b"hello!\n",
            "ce013625030ba8dba906f756967f9e9ca394464a"
        ));
        assert!(matches_etag(
            b"hello\n",
            "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
        ));
        assert!(!safe_etag("../x"));
        // Not a content hash: nothing to check the bytes against, so no match.
        assert!(!matches_etag(b"hello\n", "abc"));
        assert!(!is_content_hash("abc") && is_content_hash(&"a".repeat(64)));
    }

    fn walk(p: &Path) -> Vec<PathBuf> {
        let mut out = vec![];
        for e in fs::read_dir(p).unwrap().flatten() {
            let path = e.path();
            if path.is_dir() && !path.is_symlink() {
                out.extend(walk(&path));
            }
            out.push(path);
        }
        out
    }
}
