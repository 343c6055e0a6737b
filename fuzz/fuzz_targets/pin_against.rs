//! text -> a pin's `against` path resolved as `check` resolves it (`pins::repo::authority_file`,
//! issue 44), in a temporary repository made once: a model config inside it, a link inside it
//! to that config, a link inside it that leads out, a credentials JSON inside it and one above
//! it. Invariants: no panic; an accepted path is, with every link resolved, inside the
//! repository and a model config, whatever the text (`..`, absolute paths, links, NULs, `~`);
//! an error never quotes the credentials.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use dflash_check::config;
use dflash_check::pins::repo::{authority_file, repository_root};
use libfuzzer_sys::fuzz_target;

const SECRET: &str = "c2VjcmV0";

fn repo() -> &'static (PathBuf, PathBuf) {
    static REPO: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    REPO.get_or_init(|| {
        let outer = std::env::temp_dir().join(format!("pin-against-fuzz-{}", std::process::id()));
        let repo = outer.join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("authorities")).unwrap();
        let creds = format!(r#"{{"auths": {{"registry": {{"auth": "{SECRET}"}}}}}}"#);
        std::fs::write(outer.join("creds.json"), &creds).unwrap();
        std::fs::write(repo.join("authorities/creds.json"), &creds).unwrap();
        std::fs::write(
            repo.join("authorities/config.json"),
            r#"{"architectures": ["DFlashDraftModel"], "model_type": "qwen3"}"#,
        )
        .unwrap();
        let _ = std::os::unix::fs::symlink("config.json", repo.join("authorities/in.json"));
        let _ = std::os::unix::fs::symlink("../../creds.json", repo.join("authorities/out.json"));
        let pins = repo.join("dflash-check.toml");
        std::fs::write(&pins, "version = 2\n").unwrap();
        (repository_root(&pins).unwrap(), pins)
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(against) = std::str::from_utf8(data) else {
        return;
    };
    let (root, pins) = repo();
    match authority_file(pins, "models/d", against) {
        Ok(file) => {
            assert!(file.starts_with(root), "{against:?} -> {}", file.display());
            let bytes = std::fs::read(&file).unwrap();
            let parsed = config::parse(&file, &bytes).unwrap();
            assert!(config::is_model_config(parsed.root()), "{against:?}");
        }
        // The path as written may be named in the error; the file's contents never are.
        Err(e) => assert!(
            against.contains(SECRET) || !e.to_string().contains(SECRET),
            "{e}"
        ),
    }
});
