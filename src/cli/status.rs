//! What the binary says on stderr besides errors: warnings about inputs the user did not name
//! that could not be had (the library returns them as data), and, on a terminal, a progress bar
//! for large downloads.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};

use dflash_check::analysis::InputWarning;
use dflash_check::hub::{DownloadProgress, ProgressSink};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Writes each warning as `warning: ...` on stderr (for commands whose report has no place for
/// them; `diff` shows them in its header and its JSON).
pub fn warn_inputs(warnings: &[InputWarning]) {
    let mut err = std::io::stderr().lock();
    for w in warnings {
        let _ = writeln!(err, "warning: {w}");
    }
}

/// The progress sink for Hub downloads: a bar on stderr when stderr is a terminal and `--quiet`
/// was not given; nothing otherwise (a log file or a CI job gets no escape codes).
pub fn progress_sink(quiet: bool) -> ProgressSink {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressSink::default();
    }
    ProgressSink::new(Arc::new(Bar::default()))
}

/// One indicatif bar per download, drawn on stderr and cleared when the download ends.
#[derive(Default)]
struct Bar(Mutex<Option<ProgressBar>>);

impl DownloadProgress for Bar {
    fn start(&self, what: &str, total_bytes: u64) {
        let bar = ProgressBar::with_draw_target(Some(total_bytes), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(
            "{msg} [{bar:30}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec}",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(format!("downloading {what}"));
        // Draw at once: a fast download may end before the first timed redraw.
        bar.tick();
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(bar);
        }
    }

    fn advance(&self, bytes_done: u64) {
        if let Ok(slot) = self.0.lock() {
            if let Some(bar) = slot.as_ref() {
                bar.set_position(bytes_done);
            }
        }
    }

    fn finish(&self) {
        if let Ok(mut slot) = self.0.lock() {
            if let Some(bar) = slot.take() {
                bar.finish_and_clear();
            }
        }
    }
}
