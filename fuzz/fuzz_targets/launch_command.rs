//! text -> `launch`'s parser, as a pasted command line (one argument, and split into words) and
//! as a script, a docker-compose file and a Dockerfile; and as the options file a line reads
//! (oMLX's model_settings.json, TensorRT-LLM's YAML options), through the deployments `check`
//! makes of it. Invariant: no panic; the input is either a typed launch (whose redacted copy
//! serialises, and whose served length reads) or an error with a message.
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

/// `text` as the options file of `line` (read in place of the file the line names).
fn options(line: &str, text: &str) {
    let reader = |path: &str| Ok((path.to_string(), text.to_string()));
    let args = [line.to_string()];
    match launch::parse_input_with(&args, None, &reader) {
        Ok((l, _)) => {
            let _ = serde_json::to_string(&l.redacted()).unwrap();
            let _ = l.method();
        }
        Err(e) => assert!(!e.message.is_empty()),
    }
    match launch::parse_deployments_with("serve.sh", line, &reader) {
        Ok(d) => {
            for l in &d.launches {
                let _ = serde_json::to_string(&l.redacted()).unwrap();
            }
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
    options("omlx serve --model-dir models --base-path .", text);
    options("trtllm-serve m --extra_llm_api_options o.yaml", text);
});
