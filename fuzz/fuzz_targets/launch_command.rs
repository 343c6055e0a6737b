//! text -> `launch`'s parser, as a pasted command line (one argument, and split into words) and
//! as a script, a docker-compose file and a Dockerfile. Invariant: no panic; the input is either
//! a typed launch (whose redacted copy serialises, and whose served length reads) or an error
//! with a message.
#![no_main]

use dflash_check::launch;
use libfuzzer_sys::fuzz_target;

fn parse(args: &[String], file: Option<(&str, &str)>) {
    match launch::parse_input(args, file) {
        Ok((l, _notes)) => {
            let _ = serde_json::to_string(&l.redacted()).unwrap();
            let _ = (l.method(), l.origin.find(None, "--speculative-config"));
            // The length the line serves the target at (`--max-model-len`, overrides, env).
            let _ = l.engine.code().served_length(&l);
        }
        Err(e) => assert!(!e.message.is_empty()),
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    parse(&[text.to_string()], None);
    let words: Vec<String> = text.split(' ').map(str::to_string).collect();
    parse(&words, None);
    parse(&[], Some(("launch.sh", text)));
    parse(&[], Some(("docker-compose.yml", text)));
    parse(&[], Some(("Dockerfile", text)));
});
