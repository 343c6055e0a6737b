//! What the binary says on stderr: errors ([`say`], from `main`), warnings about inputs the
//! user did not name that could not be had (the library returns them as data), notes, and, on a
//! terminal, a progress bar for large downloads.
//!
//! Every line goes through [`say`]: input text in it through the display filter
//! ([`dflash_check::display::shown`]), and under `--format github` the whole message as a
//! workflow command's data (`::error::…`, escaped as the runner expects), so no text in an
//! error can start a workflow command of its own on a line of the job log.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use dflash_check::analysis::InputWarning;
use dflash_check::hub::{DownloadProgress, ProgressSink};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Whether this run's output format is `github` (set once, by `cli::run`).
static GITHUB: AtomicBool = AtomicBool::new(false);

/// Makes every later [`say`] write workflow commands (`--format github`).
pub fn set_github(on: bool) {
    GITHUB.store(on, Ordering::Relaxed);
}

/// What a stderr line is: its prefix in a terminal, its workflow command under `--format github`.
#[derive(Debug, Clone, Copy)]
pub enum Level {
    /// `error: …`, `::error::…`
    Error,
    /// `warning: …`, `::warning::…`
    Warning,
    /// `dflash-check: …`, `::notice::…`
    Note,
}

/// Writes `text` on stderr at `level`. `text` may quote input: it is shown through the display
/// filter (only an error's `\n  hint: …` keeps its line break), and under `--format github` it
/// is one workflow command whose data is escaped (`%`, CR, LF) as the runner expects.
pub fn say(level: Level, text: &str) {
    let _ = writeln!(
        std::io::stderr().lock(),
        "{}",
        line(level, text, GITHUB.load(Ordering::Relaxed))
    );
}

fn line(level: Level, text: &str, github: bool) -> String {
    let shown = dflash_check::display::shown_lines(text);
    if github {
        let command = match level {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Note => "notice",
        };
        return format!(
            "::{command}::{}",
            dflash_check::report::github::escape_data(&shown)
        );
    }
    let prefix = match level {
        Level::Error => "error",
        Level::Warning => "warning",
        Level::Note => "dflash-check",
    };
    format!("{prefix}: {shown}")
}

/// An error and its causes, `: `-separated as anyhow's `{:#}` writes them (the display
/// filter is [`say`]'s).
pub fn error_text(err: &anyhow::Error) -> String {
    format!("{err:#}")
}

/// Writes each warning as `warning: ...` on stderr (for commands whose report has no place for
/// them; `diff` shows them in its header and its JSON).
pub fn warn_inputs(warnings: &[InputWarning]) {
    for w in warnings {
        say(Level::Warning, &w.to_string());
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
        bar.set_message(format!(
            "downloading {}",
            dflash_check::display::shown(what)
        ));
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
