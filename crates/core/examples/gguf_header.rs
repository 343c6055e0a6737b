//! bench/gguf.sh: reads one GGUF file's header `RUNS` times with the library's reader
//! (`gguf::read_path`: 1 MiB blocks, header only) and prints the median, minimum and maximum
//! wall time, the median CPU time (user + system, from getrusage: what the read costs on a
//! machine whose other processes take the cores), the header's size and the bytes read.
//!
//!     cargo run --release -p dflash-check-core --example gguf_header -- FILE.gguf [RUNS]

use std::time::{Duration, Instant};

use dflash_check_core::gguf::{self, Limits};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: gguf-header FILE.gguf [RUNS]");
    let runs: usize = args
        .next()
        .map_or(50, |r| r.parse().expect("RUNS is a number"));
    let mut times: Vec<Duration> = Vec::with_capacity(runs);
    let mut cpu: Vec<Duration> = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs.max(1) {
        let (t, c) = (Instant::now(), cpu_time());
        let h = gguf::read_path(path.as_ref(), Limits::default()).unwrap_or_else(|e| panic!("{e}"));
        times.push(t.elapsed());
        cpu.push(cpu_time().saturating_sub(c));
        last = Some(h);
    }
    times.sort();
    cpu.sort();
    let h = last.expect("one run");
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{path}: {} bytes, {} tensors, {} metadata keys, vocabulary {}",
        h.file_size,
        h.tensors.len(),
        h.metadata.len(),
        h.tokenizer().vocab_size().unwrap_or(0)
    );
    println!(
        "header {} bytes; read {} bytes ({} over the header, block {}); {} runs: median {:.2} ms, min {:.2} ms, max {:.2} ms; CPU median {:.2} ms",
        h.header_bytes,
        h.bytes_read,
        h.bytes_read - h.header_bytes,
        gguf::READ_BLOCK,
        times.len(),
        ms(times[times.len() / 2]),
        ms(times[0]),
        ms(times[times.len() - 1]),
        ms(cpu[cpu.len() / 2]),
    );
}

/// User plus system CPU time of this process so far.
fn cpu_time() -> Duration {
    // SAFETY: getrusage fills the struct it is given; a zeroed rusage is a valid value.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}
