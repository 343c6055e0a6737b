//! Times the two phases of the draft-vocabulary comparison in one process (BENCHMARKS.md,
//! issue 31): reading each `tokenizer.json` with `vocab::hf::from_dir`, and comparing them. The
//! best of 30 rounds, so the figures are the reader's own cost with the page cache and the
//! allocator warm; `bench/vocab.sh` times the whole command, process start included. Built
//! with the `profiling` profile it is what `perf record` was pointed at.
//!
//!     cargo build --profile profiling -p dflash-check-core --example vocab_phase
//!     target/profiling/examples/vocab_phase DRAFT_DIR TARGET_DIR

use std::path::Path;
use std::time::Instant;

use dflash_check_core::vocab;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, draft, target] = args.as_slice() else {
        eprintln!("usage: vocab_phase DRAFT_DIR TARGET_DIR");
        std::process::exit(2);
    };
    let mut best = [f64::MAX; 3];
    for _ in 0..30 {
        let start = Instant::now();
        let here = vocab::hf::from_dir(Path::new(draft)).expect("the draft's tokenizer");
        let read_draft = start.elapsed().as_secs_f64();
        let there = vocab::hf::from_dir(Path::new(target)).expect("the target's tokenizer");
        let read_target = start.elapsed().as_secs_f64();
        let comparison = vocab::compare(&here, &there);
        let compared = start.elapsed().as_secs_f64();
        std::hint::black_box(comparison);
        let phases = [read_draft, read_target - read_draft, compared - read_target];
        for (b, v) in best.iter_mut().zip(phases) {
            *b = b.min(v);
        }
    }
    println!(
        "best of 30: draft read {:.2} ms, target read {:.2} ms, compare {:.2} ms",
        best[0] * 1e3,
        best[1] * 1e3,
        best[2] * 1e3
    );
}
