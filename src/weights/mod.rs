//! `weights`: the drafter's safetensors header(s) against its config and target, local or on
//! the Hub, without downloading the weights.
//!
//! A config can be exactly its authority's and still not fit the weights beside it: a drafter
//! trained with 4 target layers shipped with a 5-id config, a `draft_vocab_size` with no `d2t`
//! tensor, a layer count or head size that differs from the file. Engines find some of these
//! at load, after minutes of download, and some never (vLLM silently keeps a zero `d2t`).
//!
//! Reading: [`read_local`] reads `model.safetensors`, or every shard that
//! `model.safetensors.index.json` names, beside a config: only the 8-byte length and the JSON
//! header of each file ([`header`]), and of the tensor data only the vocabulary maps' (`d2t`,
//! `t2d`: [`maps`], capped at [`maps::MAX_MAP_BYTES`] each). [`read_hub`] does the same for a
//! Hub repo at a resolved commit with HTTP range requests
//! (`crate::hub::fetch_safetensors_header`, `crate::hub::fetch_safetensors_bytes`), cached per
//! sha. Hostile headers (truncated, huge length, bad JSON, overlapping or
//! out-of-bounds offsets) are a [`crate::Error`] naming the file.
//!
//! Checking (the core's `weights`, re-exported here): [`run`] compares the tensors with what the
//! config (and, when known, the target) says the engine will build, and returns
//! [`Diagnostic`](crate::diagnostic::Diagnostic)s with `weights-*` codes, the tensor name in
//! the message and in `path`, and the shard in `file`, and the rules it skipped for want of a
//! fact. Each code is a [`Rule`] declared beside its function (`files`, `quant`, `shapes`,
//! `presence`, `vocab` in `crates/core/src/weights/`); the rules see only the parsed headers and
//! config (`view`), never a file. See `docs/weights.md`.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::{self, ConfigFile};
use crate::hub::{self, Freshness, HubSettings, RepoRef};
use crate::{Error, Result};

pub mod gguf;
pub mod header;
pub mod maps;

// The pure part (the parsed headers, the config's facts, the view, the context, the rule list
// and the rules by topic) is the core's; re-exported so `crate::weights::…` reads the same.
pub use dflash_check_core::weights::{
    all_rules, by_engine, check, check_inputs, index, info, map_tensors, quant_exclude, rule, run,
    run_for, run_gguf, Applies, Checked, Cx, GgufTarget, Index, MapData, Need, Purpose, Rule,
    Shard, Skipped, Tensor, Totals, Weights, WeightsCode, WeightsHeaders,
};

/// The directory holding the weights for `path` (a drafter directory or its config file).
fn weights_dir(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.to_path_buf()
    } else {
        dir_of(path)
    }
}

/// The directory a file is in (`.` for a bare name).
fn dir_of(file: &Path) -> PathBuf {
    file.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Whether a file is at `path` (a symlink followed); a broken link is an error. The link
/// itself is looked at first: an absent file, the usual answer for a drafter without weights
/// beside it, costs one `statx`, not two (issue 44).
fn exists(path: &Path) -> Result<bool> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if !m.file_type().is_symlink() => return Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Ok(_) | Err(_) => {}
    }
    match std::fs::metadata(path) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if std::fs::symlink_metadata(path).is_ok() {
                Err(
                    Error::new(format!("`{}` is a broken symbolic link", path.display()))
                        .with_hint("the download is incomplete: download the file again"),
                )
            } else {
                Ok(false)
            }
        }
        Err(e) => Err(config::io_error(path, &e)),
    }
}

/// Reads the headers beside a local config: `model.safetensors`, else every shard of
/// `model.safetensors.index.json`; `Ok(None)` when there is neither.
pub fn read_local(path: &Path) -> Result<Option<WeightsHeaders>> {
    read_in(weights_dir(path))
}

/// [`read_local`] beside a config file already read (no look at the path to learn whether it
/// is a directory: one `statx` less a drafter in `check`, issue 44).
pub fn read_beside(config_file: &Path) -> Result<Option<WeightsHeaders>> {
    read_in(dir_of(config_file))
}

fn read_in(dir: PathBuf) -> Result<Option<WeightsHeaders>> {
    match read_headers_in(&dir)? {
        Some(h) => maps::read_local(&dir, h).map(Some),
        None => Ok(None),
    }
}

/// The headers in `dir` ([`read_in`] before the maps' data is read).
fn read_headers_in(dir: &Path) -> Result<Option<WeightsHeaders>> {
    let dir = dir.to_path_buf();
    let source = crate::config::path_text(&dir);
    let single = dir.join(index::SINGLE_FILE);
    if exists(&single)? {
        let shard = header::read_file(&single, index::SINGLE_FILE)?;
        return Ok(Some(WeightsHeaders {
            source,
            index: None,
            shards: vec![shard],
            missing_shards: vec![],
            requests: 0,
            body_bytes: 0,
            map_data: Vec::new(),
        }));
    }
    let index_path = dir.join(index::INDEX_FILE);
    if !exists(&index_path)? {
        return Ok(None);
    }
    let bytes = config::read_capped(&index_path, index::MAX_INDEX_BYTES)?;
    let index = index::parse(&index_path.display().to_string(), bytes)?;
    let mut shards = Vec::new();
    let mut missing_shards = Vec::new();
    for name in &index.shards {
        let p = name.split('/').fold(dir.clone(), |p, c| p.join(c));
        if exists(&p)? {
            shards.push(header::read_file(&p, name)?);
        } else {
            missing_shards.push(name.clone());
        }
    }
    Ok(Some(WeightsHeaders {
        source,
        index: Some(index),
        shards,
        missing_shards,
        requests: 0,
        body_bytes: 0,
        map_data: Vec::new(),
    }))
}

/// A drafter named by a local path, as `dflash-check weights` takes it: a directory, its config
/// file, or one `.safetensors` file; with the config beside it when there is one.
pub fn read_path(path: &Path) -> Result<(WeightsHeaders, Option<ConfigFile>)> {
    let is_safetensors = path.is_file()
        && path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("safetensors"));
    let dir = weights_dir(path);
    let headers = if is_safetensors {
        let file = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        WeightsHeaders {
            source: path.display().to_string(),
            index: None,
            shards: vec![header::read_file(path, &file)?],
            missing_shards: vec![],
            requests: 0,
            body_bytes: 0,
            map_data: Vec::new(),
        }
    } else {
        read_local(path)?.ok_or_else(|| {
            Error::new(format!(
                "no `model.safetensors` or `model.safetensors.index.json` in `{}`",
                dir.display()
            ))
            .with_hint(
                "pass the directory that holds the drafter's weights, or a .safetensors file",
            )
        })?
    };
    let headers = if is_safetensors {
        maps::read_local(&dir, headers)?
    } else {
        headers
    };
    let config_path = if path.is_file() && !is_safetensors {
        path.to_path_buf()
    } else {
        dir.join("config.json")
    };
    let config = if config_path.is_file() {
        Some(config::load(&config_path)?)
    } else {
        None
    };
    Ok((headers, config))
}

/// Tensors over this many bytes are not read whole: a `d2t` of a 256k-token draft vocabulary
/// is 2 MB of int64, so anything near the cap is not a token map.
pub const MAX_TENSOR_READ_BYTES: u64 = 64 * 1024 * 1024;

/// The data of one tensor of the local weights beside `path` (as [`read_local`] found them):
/// one seek to the offsets its header gives and one read of exactly its bytes, never the rest
/// of the shard. `Ok(None)` when no tensor has that name.
pub fn read_local_tensor(
    path: &Path,
    headers: &WeightsHeaders,
    name: &str,
) -> Result<Option<(Tensor, Vec<u8>)>> {
    let Some(shard) = headers
        .shards
        .iter()
        .find(|s| s.tensors.iter().any(|t| t.name == name))
    else {
        return Ok(None);
    };
    let tensor = shard
        .tensors
        .iter()
        .find(|t| t.name == name)
        .cloned()
        .expect("the shard was chosen for holding it");
    if tensor.bytes() > MAX_TENSOR_READ_BYTES {
        return Err(Error::new(format!(
            "`{}`: tensor `{name}` is {} bytes, over the {} MiB read for one tensor",
            shard.display,
            tensor.bytes(),
            MAX_TENSOR_READ_BYTES / (1024 * 1024)
        ))
        .with_hint("a token map this large is not a d2t: check the file"));
    }
    let bytes = read_tensor_in(&weights_dir(path), shard, &tensor)?;
    Ok(Some((tensor, bytes)))
}

/// The bytes of `tensor` of `shard` in the weights directory `dir`: one seek to the offsets its
/// header gives and one read of exactly its bytes, never the rest of the shard. A file whose
/// size changed since its header was read, or that ends early, is an error naming it.
pub(crate) fn read_tensor_in(dir: &Path, shard: &Shard, tensor: &Tensor) -> Result<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let file = shard
        .file
        .split('/')
        .fold(dir.to_path_buf(), |p, c| p.join(c));
    let (mut f, meta) = config::open_regular(&file)?;
    let start = header::LENGTH_BYTES + shard.header_bytes + tensor.data_offsets[0];
    if meta.len() != shard.file_size {
        return Err(Error::new(format!(
            "`{}` changed size while it was read ({} bytes, then {})",
            shard.display,
            shard.file_size,
            meta.len()
        ))
        .with_hint("run again once nothing is writing to the weights"));
    }
    f.seek(SeekFrom::Start(start))
        .map_err(|e| config::io_error(&file, &e))?;
    let mut bytes = Vec::with_capacity(tensor.bytes() as usize);
    f.take(tensor.bytes())
        .read_to_end(&mut bytes)
        .map_err(|e| config::io_error(&file, &e))?;
    if bytes.len() as u64 != tensor.bytes() {
        return Err(Error::new(format!(
            "`{}`: tensor `{}` ends past the end of the file (read {} of {} bytes)",
            shard.display,
            tensor.name,
            bytes.len(),
            tensor.bytes()
        ))
        .with_hint("the file is truncated: download it again"));
    }
    Ok(bytes)
}

/// A drafter on the Hub: its config and weights headers at one commit.
#[derive(Debug, Clone)]
pub struct HubDrafter {
    pub repo: String,
    /// As asked (`main` by default).
    pub revision: String,
    /// The commit everything was read at.
    pub sha: String,
    pub config: ConfigFile,
    /// Where the config came from (`hub`, `pinned`, `cache`).
    pub freshness: Freshness,
    pub headers: Option<WeightsHeaders>,
}

/// Reads `config.json` of `repo` (resolving its revision to a sha), then the weights headers
/// at that sha with [`read_hub_headers`].
pub fn read_hub(settings: &HubSettings, repo: &RepoRef) -> Result<HubDrafter> {
    let file = hub::fetch_file(settings, repo, "config.json")?;
    let config = config::parse(&file.path, &file.bytes)?;
    let declares_head = dflash_check_core::family::embedded::declared(config.root())
        .ok()
        .flatten()
        .is_some();
    if declares_head && config::QuantFacts::from_root(config.root()).is_none() {
        // vLLM takes the quantization from hf_quant_config.json when config.json has none
        // (older ModelOpt exports): fetched into the same snapshot at the same commit, so the
        // MTP rules read it beside the config as they do for a local directory. Only for a
        // config that declares an MTP head (the rules that match exclude lists are its): a
        // drafter costs no extra request.
        let at_sha = RepoRef {
            repo: file.repo.clone(),
            revision: Some(file.sha.clone()),
        };
        hub::fetch_optional_file(
            settings,
            &at_sha,
            dflash_check_core::weights::quant_exclude::HF_QUANT_CONFIG,
        )?;
    }
    let headers = read_hub_headers(settings, &file.repo, &file.sha)?;
    Ok(HubDrafter {
        repo: file.repo,
        revision: file.revision,
        sha: file.sha,
        config,
        freshness: file.freshness,
        headers,
    })
}

/// Shard headers asked of the Hub at once: a DeepSeek-V3-class target holds 163 shards, whose
/// headers one at a time cost 163 round trips or more.
const PARALLEL_SHARDS: usize = 8;

/// One file's header read from the Hub: the parsed shard (`None` when the commit does not hold
/// the file), the requests sent and the body bytes received.
type HubShard = (Option<Shard>, usize, u64);

fn read_hub_shard(settings: &HubSettings, repo: &str, sha: &str, file: &str) -> Result<HubShard> {
    let h = match hub::fetch_safetensors_header(settings, repo, sha, file)? {
        hub::HeaderAnswer::Found(h) => h,
        hub::HeaderAnswer::Missing { requests } => return Ok((None, requests, 0)),
    };
    let display = format!("{repo}@{sha}/{file}");
    let shard = header::parse_prefix(&display, file, &h.prefix, h.file_size)?;
    Ok((Some(shard), h.requests, h.body_bytes))
}

/// `read` of every item, [`PARALLEL_SHARDS`] at a time, in the items' order. After a failure no
/// further item is started, and the failure returned is the first in the items' order (the
/// same error whatever the timing: every item before it was claimed, so was read).
fn read_in_parallel<T: Send>(
    items: &[String],
    read: impl Fn(&str) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Mutex;
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let slots: Vec<Mutex<Option<Result<T>>>> = items.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..PARALLEL_SHARDS.min(items.len()) {
            scope.spawn(|| loop {
                // Stop before claiming: an item claimed is always read, so every item before
                // the first failing one has its answer.
                if failed.load(Ordering::SeqCst) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= items.len() {
                    break;
                }
                let r = read(&items[i]);
                if r.is_err() {
                    failed.store(true, Ordering::SeqCst);
                }
                if let Ok(mut slot) = slots[i].lock() {
                    *slot = Some(r);
                }
            });
        }
    });
    // Items are claimed in order, so every item before the first failing one was read: the
    // scan meets that failure before any item left unread.
    let mut out = Vec::with_capacity(items.len());
    for slot in slots {
        match slot.into_inner().ok().flatten() {
            Some(r) => out.push(r?),
            None => {
                return Err(Error::new(
                    "reading the shard headers stopped before every shard was read".to_string(),
                ))
            }
        }
    }
    Ok(out)
}

/// Reads the weights headers of `repo` at commit `sha` with range requests (cached per sha):
/// `model.safetensors`, else every shard of `model.safetensors.index.json`, [`PARALLEL_SHARDS`]
/// at a time, then the vocabulary maps' data ([`maps`], one range each); `Ok(None)` when there
/// is neither file.
pub fn read_hub_headers(
    settings: &HubSettings,
    repo: &str,
    sha: &str,
) -> Result<Option<WeightsHeaders>> {
    match read_hub_headers_only(settings, repo, sha)? {
        Some(h) => maps::read_hub(settings, repo, sha, h).map(Some),
        None => Ok(None),
    }
}

/// [`read_hub_headers`] before the maps' data is read.
fn read_hub_headers_only(
    settings: &HubSettings,
    repo: &str,
    sha: &str,
) -> Result<Option<WeightsHeaders>> {
    let source = format!("{repo}@{sha}");
    let display = |file: &str| format!("{repo}@{sha}/{file}");
    let (single, mut requests, mut body_bytes) =
        read_hub_shard(settings, repo, sha, index::SINGLE_FILE)?;
    if let Some(shard) = single {
        return Ok(Some(WeightsHeaders {
            source,
            index: None,
            shards: vec![shard],
            missing_shards: vec![],
            requests,
            body_bytes,
            map_data: Vec::new(),
        }));
    }
    let at_sha = RepoRef {
        repo: repo.to_string(),
        revision: Some(sha.to_string()),
    };
    let Some(index_file) = hub::fetch_optional_file(settings, &at_sha, index::INDEX_FILE)? else {
        return Ok(None);
    };
    let index = index::parse(&display(index::INDEX_FILE), index_file.bytes)?;
    let read = read_in_parallel(&index.shards, |name| {
        read_hub_shard(settings, repo, sha, name)
    })?;
    let mut shards = Vec::new();
    let mut missing_shards = Vec::new();
    for (name, (shard, r, b)) in index.shards.iter().zip(read) {
        requests += r;
        body_bytes += b;
        match shard {
            Some(s) => shards.push(s),
            None => missing_shards.push(name.clone()),
        }
    }
    Ok(Some(WeightsHeaders {
        source,
        index: Some(index),
        shards,
        missing_shards,
        requests,
        body_bytes,
        map_data: Vec::new(),
    }))
}

/// Where a Hub drafter was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HubOrigin {
    pub repo: String,
    pub revision: String,
    pub sha: String,
    /// `hub`, `pinned` or `cache`: where the config came from.
    pub freshness: String,
}

/// Everything `dflash-check weights` shows.
#[derive(Debug, Clone, PartialEq)]
pub struct WeightsReport {
    pub headers: WeightsHeaders,
    pub hub: Option<HubOrigin>,
    /// The config the tensors were checked against (none: table only).
    pub config: Option<String>,
    /// The drafter family, when the config names a known one.
    pub family: Option<String>,
    /// The MTP head a target's config declares (`num_nextn_predict_layers = 1`), whose layers
    /// and storage the MTP rules checked.
    pub mtp_head: Option<String>,
    /// Where the target facts came from, if any.
    pub target: Option<String>,
    pub diagnostics: Vec<crate::diagnostic::Diagnostic>,
    /// Rules not run (or not finished) for want of a fact, such as the target's hidden size.
    pub skipped: Vec<Skipped>,
    /// For a `.gguf` file: the lines about its header (`gguf::header_lines`); its metadata is
    /// what was checked, `config` is `None`.
    pub gguf: Option<Vec<String>>,
    /// The engine and release the weights were judged for (`--engine`); `None`: the statements
    /// that hold whatever the engine.
    pub engine: Option<crate::engine::EngineRelease>,
}

impl WeightsReport {
    pub fn summary(&self) -> crate::diagnostic::Summary {
        crate::diagnostic::Summary::of(&self.diagnostics)
    }

    /// Whether the report fails the gate: any error, or any warning with `deny_warnings`.
    pub fn fails(&self, deny_warnings: bool) -> bool {
        self.summary().fails(deny_warnings)
    }
}

#[cfg(test)]
mod tests {
    /// The Hub reads an index up to the same cap as a local file (the Hub's small-file cap,
    /// 4 MiB, refused DeepSeek-V3's 8.9 MB index).
    #[test]
    fn the_hub_reads_an_index_up_to_the_index_cap() {
        assert_eq!(
            crate::hub::size_limit(super::index::INDEX_FILE),
            super::index::MAX_INDEX_BYTES
        );
    }
}
