//! The process's memory allocator: mimalloc (v2) in place of glibc's `malloc`.
//!
//! `check` over thousands of drafters makes about 300 allocations a drafter (the JSON tree, the
//! findings, their text), most of them freed within the drafter: with glibc, `malloc`, `free`
//! and `realloc` were a quarter of its instructions (its per-size caches hold seven blocks, and
//! a drafter frees dozens of one size at once, so most frees took the slow path and every
//! larger request consolidated the fast bins). mimalloc's per-page free lists take those in a
//! few instructions: 245 M -> 209 M instructions for `check` at 1,000 drafters, and `weights`
//! on the 184k-entry index 11-30 % less CPU in two measurements (BENCHMARKS.md, "Issue 44:
//! `check` at scale", third and fourth passes). The cost: about 1.3 MB more resident at start. The `mimalloc` crate is the allocator's own Rust binding, used by uv, polars and
//! others; its C is compiled by `cc`, which the build already runs for aws-lc-sys.
//!
//! One option differs from mimalloc's default, and it is set before the first allocation: on
//! Linux (an overcommitting OS) mimalloc commits its first arena (1 GiB of address space) in
//! one call, and freed pages inside a committed arena stay resident until a purge: `weights`
//! peaked at 38 MB instead of glibc's 31 MB, over its 35 MB goal. With eager arena commit off,
//! pages are committed and returned as they are used (33-34 MB; `check` at 10,000 drafters
//! 43 MB, glibc 42 MB). Eager commit for `check` alone was tried and not kept: it cut its page
//! faults sevenfold, not its system time (a fault's cost is zeroing the page), for 5 MB more. The option must be set before mimalloc reserves its first arena, which the
//! Rust runtime's first allocation does before `main`: so it is set from a constructor in
//! `.init_array`, which the loader runs before the runtime starts.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_arena_eager_commit`: its index in `mi_option_e` (mimalloc.h) of the mimalloc
/// libmimalloc-sys 0.1.49 builds (2.2), which names no constant for it. `tests/allocator.rs`
/// checks, through mimalloc's own report of its options, that this index is that option.
#[cfg(target_os = "linux")]
const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;

#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static SET_OPTIONS_BEFORE_MAIN: extern "C" fn() = set_options;

#[cfg(target_os = "linux")]
extern "C" fn set_options() {
    // SAFETY: `mi_option_set` writes one entry of mimalloc's option table; any value is valid
    // for this option (0: never commit an arena eagerly), and nothing else runs yet.
    unsafe { libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0) };
}
