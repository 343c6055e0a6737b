//! Download progress, reported to whoever wants it. The library never draws anything: the
//! binary plugs in a [`DownloadProgress`] that draws a bar on a terminal (`src/cli/status.rs`),
//! and a caller that plugs in nothing pays nothing.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Downloads at least this large report progress (`tokenizer.json` is 11–30 MB; configs and
/// model cards are a few KB and never do). "Over 1 MB", in bytes.
pub const PROGRESS_MIN_BYTES: u64 = 1_000_000;

/// Receives the progress of one download at a time. Called from the thread doing the
/// download: must not block.
pub trait DownloadProgress: Send + Sync {
    /// A download of `total_bytes` (0 when unknown) of `what` (`Qwen/Qwen3-8B tokenizer.json`)
    /// starts.
    fn start(&self, what: &str, total_bytes: u64);
    /// `bytes_done` bytes of it have arrived so far.
    fn advance(&self, bytes_done: u64);
    /// It ended, successfully or not: clear whatever was drawn.
    fn finish(&self);
}

/// Where download progress goes: nowhere by default. It can also carry a notice said once,
/// before the command's first request to the Hub ([`ProgressSink::announcing`]).
#[derive(Clone, Default)]
pub struct ProgressSink(Option<Arc<dyn DownloadProgress>>, Option<Arc<FirstAsk>>);

/// The notice said before the first request, and whether it was said.
struct FirstAsk {
    said: AtomicBool,
    say: Box<dyn Fn(&str) + Send + Sync>,
}

impl ProgressSink {
    pub fn new(progress: Arc<dyn DownloadProgress>) -> Self {
        ProgressSink(Some(progress), None)
    }

    /// The same sink, also calling `say` once with what is asked (`config.json of Qwen/Qwen3-8B`)
    /// before the first request to the Hub: a command that would otherwise wait in silence on a
    /// slow or absent network says why (`check`, issue 45).
    pub fn announcing(self, say: impl Fn(&str) + Send + Sync + 'static) -> Self {
        let first = FirstAsk {
            said: AtomicBool::new(false),
            say: Box::new(say),
        };
        ProgressSink(self.0, Some(Arc::new(first)))
    }

    /// A request to the Hub for `what` is about to be sent: the notice, the first time.
    pub fn asking(&self, what: &str) {
        if let Some(first) = &self.1 {
            if !first.said.swap(true, Ordering::SeqCst) {
                (first.say)(what);
            }
        }
    }

    /// The receiver, for a download of `size` bytes: `None` below [`PROGRESS_MIN_BYTES`].
    pub fn for_size(&self, size: u64) -> Option<Arc<dyn DownloadProgress>> {
        self.0.clone().filter(|_| size >= PROGRESS_MIN_BYTES)
    }

    pub fn is_set(&self) -> bool {
        self.0.is_some()
    }
}

impl fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.is_set() {
            "ProgressSink(set)"
        } else {
            "ProgressSink(none)"
        })
    }
}

/// Settings compare equal whatever their sink: it changes what is drawn, not what is fetched.
impl PartialEq for ProgressSink {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for ProgressSink {}
