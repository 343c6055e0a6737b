//! The binary's allocator option (src/allocator.rs) is the one meant: mimalloc, asked to report
//! its options (`MIMALLOC_VERBOSE=1`), reads `arena_eager_commit` as 0, the value the binary
//! sets before its first allocation (mimalloc's default on Linux is 2). Fails if the option's
//! index moves in a mimalloc update, or if the constructor stops running before the first
//! allocation.

#[cfg(target_os = "linux")]
#[test]
fn arena_eager_commit_is_off_from_the_first_allocation() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dflash-check"))
        .arg("--version")
        .env("MIMALLOC_VERBOSE", "1")
        .output()
        .unwrap();
    assert!(out.status.success());
    let report = String::from_utf8_lossy(&out.stderr);
    let options: Vec<&str> = report
        .lines()
        .map(str::trim_end)
        .filter(|l| l.contains("option '"))
        .collect();
    assert!(
        options.contains(&"mimalloc: option 'arena_eager_commit': 0"),
        "mimalloc's options: {options:#?}"
    );
    // Nothing else changed from mimalloc's defaults.
    assert!(
        options.contains(&"mimalloc: option 'eager_commit': 1"),
        "{options:#?}"
    );
    assert!(
        options.contains(&"mimalloc: option 'purge_delay': 10"),
        "{options:#?}"
    );
}
