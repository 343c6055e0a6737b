//! The process's memory allocator: mimalloc (v2) in place of glibc's `malloc`.
//!
//! `check` over thousands of drafters makes about 300 allocations a drafter (the JSON tree, the
//! findings, their text), most of them freed within the drafter: with glibc, `malloc`, `free`
//! and `realloc` were a quarter of its instructions (its per-size caches hold seven blocks, and
//! a drafter frees dozens of one size at once, so most frees took the slow path and every
//! larger request consolidated the fast bins). mimalloc's per-page free lists take those in a
//! few instructions: 245 M -> 209 M instructions for `check` at 1,000 drafters, and `weights`
//! on the 184k-entry index 11-30 % less CPU in two measurements (BENCHMARKS.md, "Issue 44:
//! `check` at scale", third and fourth passes). The cost: about 1.3 MB more resident at start.
//! mimalloc's own Rust -sys crate (`libmimalloc-sys`, under the `mimalloc` crate that uv, polars
//! and others use) builds it, its C compiled by `cc`, which the build already runs for
//! aws-lc-sys; the `GlobalAlloc` over it is written here (below: it asks for an alignment only
//! when a layout needs one, 3.4 % of `check`'s instructions, fifth pass).
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
static GLOBAL: Mimalloc = Mimalloc;

/// mimalloc behind Rust's allocator interface, asking for an alignment only when a layout
/// needs more than every block has. The `mimalloc` crate's binding sends every request through
/// `mi_malloc_aligned`, whose fast path tests the free block's address before taking it: a tenth
/// of the allocator's instructions in `check` over 1,000 drafters, for layouts that nearly all
/// ask for 8 bytes or less.
struct Mimalloc;

/// The alignment of every block mimalloc hands out: blocks are whole words in word-aligned
/// pages (`mi_malloc` on a 64-bit target: 8 bytes). A layout asking for more takes the aligned
/// calls.
const BLOCK_ALIGN: usize = std::mem::size_of::<usize>();

// SAFETY: each call is mimalloc's for the same request (`mi_malloc(size)` returns a block of at
// least `size` bytes aligned to `BLOCK_ALIGN`, the aligned calls any power-of-two alignment, and
// `mi_free`/`mi_realloc` take any block either returned); null is returned on failure, as
// `GlobalAlloc` requires.
unsafe impl std::alloc::GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        use libmimalloc_sys as mi;
        if layout.align() <= BLOCK_ALIGN {
            mi::mi_malloc(layout.size()).cast()
        } else {
            mi::mi_malloc_aligned(layout.size(), layout.align()).cast()
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        use libmimalloc_sys as mi;
        if layout.align() <= BLOCK_ALIGN {
            mi::mi_zalloc(layout.size()).cast()
        } else {
            mi::mi_zalloc_aligned(layout.size(), layout.align()).cast()
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: std::alloc::Layout) {
        libmimalloc_sys::mi_free(ptr.cast());
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, size: usize) -> *mut u8 {
        use libmimalloc_sys as mi;
        if layout.align() <= BLOCK_ALIGN {
            mi::mi_realloc(ptr.cast(), size).cast()
        } else {
            mi::mi_realloc_aligned(ptr.cast(), size, layout.align()).cast()
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::{Mimalloc, BLOCK_ALIGN};
    use std::alloc::{GlobalAlloc, Layout};

    fn pattern(i: usize) -> u8 {
        (i % 251) as u8
    }

    /// Every alignment from one byte to a page, at sizes around it: the block is aligned and
    /// writable, `realloc` keeps its content and alignment (grown, then shrunk), and a zeroed
    /// block is zero. Layouts up to [`BLOCK_ALIGN`] take `mi_malloc`, the others the aligned
    /// calls.
    #[test]
    fn every_alignment_is_honoured() {
        assert_eq!(BLOCK_ALIGN, std::mem::size_of::<usize>());
        let mut align = 1;
        while align <= 4096 {
            for size in [1, align / 2 + 1, align, align + 1, 3 * align, 100_000] {
                let layout = Layout::from_size_align(size, align).unwrap();
                let (grown, shrunk) = (size * 2 + 7, size.div_ceil(2));
                // SAFETY: every size is non-zero; each block is written and read within its
                // size, and freed once, with the layout it has then.
                unsafe {
                    let block = Mimalloc.alloc(layout);
                    assert!(
                        !block.is_null() && block as usize % align == 0,
                        "{layout:?}"
                    );
                    for i in 0..size {
                        *block.add(i) = pattern(i);
                    }
                    let block = Mimalloc.realloc(block, layout, grown);
                    assert!(
                        !block.is_null() && block as usize % align == 0,
                        "{layout:?}"
                    );
                    assert!((0..size).all(|i| *block.add(i) == pattern(i)), "{layout:?}");
                    let at_grown = Layout::from_size_align(grown, align).unwrap();
                    let block = Mimalloc.realloc(block, at_grown, shrunk);
                    assert!(
                        !block.is_null() && block as usize % align == 0,
                        "{layout:?}"
                    );
                    assert!(
                        (0..shrunk).all(|i| *block.add(i) == pattern(i)),
                        "{layout:?}"
                    );
                    Mimalloc.dealloc(block, Layout::from_size_align(shrunk, align).unwrap());
                    let zeroed = Mimalloc.alloc_zeroed(layout);
                    assert!(
                        !zeroed.is_null() && zeroed as usize % align == 0,
                        "{layout:?}"
                    );
                    assert!((0..size).all(|i| *zeroed.add(i) == 0), "{layout:?}");
                    Mimalloc.dealloc(zeroed, layout);
                }
            }
            align *= 2;
        }
    }
}
