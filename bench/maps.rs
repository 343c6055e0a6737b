//! Benchmark helper (issue 42): the vocabulary maps of one drafter read and judged in-process,
//! each step timed over `--repeat N` runs (mean per run on stdout), free of process start-up:
//!
//! 1. `weights::read_local`: the header, then the maps' data (one seek and one read each);
//! 2. `weights::maps::read_local` alone, on headers already parsed: the map reads only;
//! 3. `weights::run`: every weights rule, the three value rules included.
//!
//! It prints the bytes of map data read and the findings' codes.
//!
//!     cargo build --release --example maps
//!     target/release/examples/maps [--repeat N] DRAFTER

use std::path::Path;
use std::time::Instant;

use dflash_check::{config, weights};

/// The mean time per run of `f` over `n` runs, in milliseconds.
fn mean_ms<T>(n: u32, mut f: impl FnMut() -> T) -> f64 {
    let start = Instant::now();
    for _ in 0..n {
        std::hint::black_box(f());
    }
    start.elapsed().as_secs_f64() * 1000.0 / f64::from(n)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let repeat: u32 = match args.iter().position(|a| a == "--repeat") {
        Some(i) => {
            let n = args.get(i + 1).ok_or("--repeat needs a count")?.parse()?;
            args.drain(i..=i + 1);
            n
        }
        None => 100,
    };
    let [drafter] = args.as_slice() else {
        return Err("usage: maps [--repeat N] DRAFTER".into());
    };
    let dir = Path::new(drafter);
    let cfg = config::load(&dir.join("config.json"))?;
    let headers = weights::read_local(dir)?.ok_or("no model.safetensors beside the config")?;
    let bytes: usize = headers.map_data.iter().map(|m| m.bytes.len()).sum();
    let mut bare = headers.clone();
    bare.map_data.clear();
    let codes: Vec<String> = weights::run(&cfg, &headers, None)
        .diagnostics
        .iter()
        .map(|d| format!("{} {}", d.severity, d.code))
        .collect();
    let n = repeat.max(1);
    let read = mean_ms(n, || weights::read_local(dir));
    let maps = mean_ms(n, || weights::maps::read_local(dir, bare.clone()));
    let judge = mean_ms(n, || weights::run(&cfg, &headers, None));
    println!(
        "{drafter}: {} map tensor(s), {bytes} bytes of map data; findings: [{}]",
        headers.map_data.len(),
        codes.join(", ")
    );
    println!(
        "mean of {n}: read_local (header + maps) {read:.3} ms, of which the maps {maps:.3} ms; \
         run (every weights rule) {judge:.3} ms; read + judged {:.3} ms",
        read + judge
    );
    Ok(())
}
