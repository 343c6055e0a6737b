//! text -> `launch`'s parser, as a pasted command line and as a script file. Invariant: no panic;
//! the input is either a typed launch or an error.
#![no_main]

use dflash_check::launch;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = launch::parse_input(&[text.to_string()], None);
    let _ = launch::parse_input(&[], Some(("launch.sh", text)));
    let _ = launch::parse_input(&[], Some(("docker-compose.yml", text)));
    let _ = launch::parse_input(&[], Some(("Dockerfile", text)));
});
