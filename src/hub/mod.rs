//! The Hugging Face Hub as a source of authoritative configs: settings, repo references, the
//! standard cache, and fetching one file at a resolved commit sha with an honest freshness label;
//! reading just the header of a large safetensors file with range requests (`range`), or the
//! start of a file as a parser asks for it (`blocks`: a GGUF header); and listing a repo's files
//! at its current commit as llama.cpp does for `-hf` (`tree`).
//!
//! Every request goes through the one HTTP client, [`crate::net`] (redirects followed by hand,
//! the token only to the endpoint's origin, one deadline per request, bodies read up to a cap,
//! loopback never through a proxy); `http` adds the Hub's URLs, retries and error wording,
//! configured from [`HubSettings`]. The cache is written in `huggingface_hub`'s layout by
//! `cache`. See `docs/hub.md`.

mod blocks;
mod cache;
mod error;
mod fetch;
mod http;
mod progress;
mod range;
mod repo_ref;
mod settings;
mod tree;

pub use blocks::{gguf_cache_path, read_start, Ask as RangedAsk, BlockStats, FIRST_BLOCK};
pub use cache::{detect_cache_snapshot, detect_local_dir_download, repo_folder};
pub use error::{HubError, HubErrorKind};
pub use fetch::{
    fetch_file, fetch_optional_file, size_limit, Freshness, HubFile, MAX_CONFIG_BYTES,
    MAX_TOKENIZER_BYTES,
};
pub use http::RETRIES;
pub use progress::{DownloadProgress, ProgressSink, PROGRESS_MIN_BYTES};
pub use range::{
    data_cache_path, fetch_safetensors_bytes, fetch_safetensors_header, header_cache_path,
    HeaderAnswer, RangedBytes, RangedHeader, FIRST_RANGE_END,
    MAX_HEADER_BYTES as MAX_SAFETENSORS_HEADER_BYTES,
};
pub use repo_ref::{check_revision, is_commit_sha, RepoRef, MAX_NAME_LEN, MAX_REVISION_LEN};
pub use settings::{
    Env, HubFlags, HubSettings, SettingSource, SettingsCell, Sourced, Token, DEFAULT_ENDPOINT,
    DEFAULT_TIMEOUT_SECS,
};
pub use tree::{
    list_repo_files, listing_cache_path, parse_listing, RepoFile, RepoListing, MAX_LISTING_BYTES,
    MAX_LISTING_ENTRIES, MAX_REFS_BYTES,
};
