//! Which GGUF file of a Hub repo llama.cpp loads for `-hf OWNER/REPO[:TAG]` (and `-hfd` for
//! the draft), read from llama.cpp's own code at 0c1e570 (`common/download.cpp`,
//! `common/arg.cpp`, as vendored by llama-cpp-python 0.3.36) and written again here, pure: the
//! caller lists the repo's files (`GET /api/models/{repo}/tree/{sha}?recursive=true`, the list
//! llama.cpp reads in `common/hf-cache.cpp` `get_repo_files`, in the server's order) and reads
//! the chosen file's header.
//!
//! - `OWNER/REPO:TAG` is split at `:` (the last part is the tag) and the repo must have exactly
//!   one `/` (`common_download_split_repo_tag`, download.cpp:74-82).
//! - The model file (`find_best_model`, download.cpp:655-693): for the tag, else `Q4_K_M` then
//!   `Q8_0`, the first listed `.gguf` whose path matches the regex `TAG[.-]` case-insensitively;
//!   without a tag, else the first model file at all. A model file is a `.gguf` whose file name
//!   holds none of `mmproj`, `imatrix`, `mtp-`, `eagle3-`, `dflash-`, `dspark-`
//!   (`gguf_filename_is_model`, download.cpp:637-653); a split `-0000K-of-0000N.gguf` counts
//!   only as its first part, which holds the metadata (`get_gguf_split_info`, download.cpp:482-511; download.cpp:669-672).
//! - `--hf-file FILE` (and `-md FILE` beside `-hfd`, arg.cpp:4244-4245) names the file exactly
//!   instead (download.cpp:729-740).
//! - A sidecar (`mtp-`, `dflash-`, `eagle3-`, `dspark-` in the path) is chosen by
//!   `find_best_sibling` (download.cpp:542-606): in the model's directory or above it, the
//!   deepest first, then an exact `-TAG.` in the path, then the closest quantization bits.
//! - Which sidecar becomes the draft (arg.cpp:361-418, 537-627): a draft repo with no
//!   `--spec-type` looks for all four and takes MTP, else DSpark, else DFlash, else EAGLE-3,
//!   else its model file; with a type, the sidecar of that type; an explicit draft file turns
//!   sidecars off. With no draft named, a requested type's sidecar in the target's repo is the
//!   draft (arg.cpp:640-677).

use regex::RegexBuilder;

/// A sidecar kind: the keyword its file name holds and the `--spec-type` that loads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sidecar {
    Mtp,
    Dflash,
    Eagle3,
    Dspark,
}

impl Sidecar {
    /// In the order llama.cpp wires them when each was requested (arg.cpp:575-616).
    pub const ALL: [Sidecar; 4] = [
        Sidecar::Mtp,
        Sidecar::Dflash,
        Sidecar::Eagle3,
        Sidecar::Dspark,
    ];

    /// The text its file name holds (download.cpp:608-635).
    pub fn keyword(self) -> &'static str {
        match self {
            Sidecar::Mtp => "mtp-",
            Sidecar::Dflash => "dflash-",
            Sidecar::Eagle3 => "eagle3-",
            Sidecar::Dspark => "dspark-",
        }
    }

    /// The `--spec-type` that asks for it.
    pub fn spec_type(self) -> &'static str {
        match self {
            Sidecar::Mtp => "draft-mtp",
            Sidecar::Dflash => "draft-dflash",
            Sidecar::Eagle3 => "draft-eagle3",
            Sidecar::Dspark => "draft-dspark",
        }
    }
}

/// `OWNER/REPO[:TAG]` → (repo, tag; empty when none), as llama.cpp splits it; `Err` says why
/// llama.cpp refuses it.
pub fn split_repo_tag(given: &str) -> Result<(String, String), String> {
    let parts: Vec<&str> = given.split(':').collect();
    let tag = if parts.len() > 1 {
        parts[parts.len() - 1]
    } else {
        ""
    };
    let repo = parts[0];
    if repo.split('/').count() != 2 {
        return Err(format!(
            "`{given}` is not `<user>/<model>[:quant]`: llama.cpp refuses it (invalid HF repo format)"
        ));
    }
    Ok((repo.to_string(), tag.to_string()))
}

/// What is wrong with a `-hf REPO:TAG` tag, if anything (an empty tag: nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagProblem {
    /// llama.cpp compiles `TAG[.-]` as a regular expression (`find_best_model`) and libstdc++
    /// refuses it: llama-server stops ("failed to fetch model metadata"). Bad input.
    Invalid(super::ecma::Refused),
    /// libstdc++ compiles it, but the `regex` crate this tool matches with does not (a
    /// lookahead, a back-reference): which file llama.cpp picks is not decided here.
    Unevaluated,
}

/// Whether llama.cpp can use `tag` to pick a file, and whether this tool can follow it.
pub fn tag_problem(tag: &str) -> Option<TagProblem> {
    if tag.is_empty() {
        return None;
    }
    if let Err(why) = super::ecma::compiles(&format!("{tag}[.-]")) {
        return Some(TagProblem::Invalid(why));
    }
    tag_regex(tag).is_none().then_some(TagProblem::Unevaluated)
}

/// `TAG[.-]`, case-insensitive, as the `regex` crate reads it.
fn tag_regex(tag: &str) -> Option<regex::Regex> {
    RegexBuilder::new(&format!("{tag}[.-]"))
        .case_insensitive(true)
        .build()
        .ok()
}

/// A `.gguf` path's split and tag (`get_gguf_split_info`, download.cpp:482-511).
struct SplitInfo {
    tag: String,
    index: u32,
    count: u32,
}

fn split_info(path: &str) -> SplitInfo {
    let Some(mut prefix) = path.strip_suffix(".gguf") else {
        return SplitInfo {
            tag: String::new(),
            index: 0,
            count: 0,
        };
    };
    let (mut index, mut count) = (1, 1);
    // `^(.+)-([0-9]{5})-of-([0-9]{5})$`, case-insensitive.
    // On bytes: a name from a listing may hold any UTF-8, and a byte index into it may fall inside
    // a character (the pattern is ASCII, so such a name never matches it).
    let b = prefix.as_bytes();
    if b.len() > 15 {
        let tail = &b[b.len() - 15..];
        let digits = |s: &[u8]| s.len() == 5 && s.iter().all(u8::is_ascii_digit);
        let number = |s: &[u8]| s.iter().fold(0u32, |n, c| n * 10 + u32::from(c - b'0'));
        if tail[0] == b'-'
            && digits(&tail[1..6])
            && tail[6..10].eq_ignore_ascii_case(b"-of-")
            && digits(&tail[10..15])
        {
            index = number(&tail[1..6]);
            count = number(&tail[10..15]);
            // The 15 bytes cut are ASCII, so the cut is on a character boundary.
            prefix = &prefix[..prefix.len() - 15];
        }
    }
    // `[-.]([A-Z0-9_]+)$`, case-insensitive, upper-cased.
    let word = prefix
        .bytes()
        .rev()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
        .count();
    let before = prefix.len() - word;
    let tag = if word > 0 && before > 0 && matches!(prefix.as_bytes()[before - 1], b'-' | b'.') {
        prefix[before..].to_ascii_uppercase()
    } else {
        String::new()
    };
    SplitInfo { tag, index, count }
}

/// `Q4_0` → 4, `F16` → 16: the number from the tag's first digit (`extract_quant_bits`).
fn bits_of_tag(tag: &str) -> i64 {
    match tag.find(|c: char| c.is_ascii_digit()) {
        Some(pos) => tag[pos..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .unwrap_or(0),
        None => 0,
    }
}

/// Whether a listed path is a model file, not a projector, an importance matrix or a sidecar
/// (`gguf_filename_is_model`).
pub fn is_model_file(path: &str) -> bool {
    if !path.ends_with(".gguf") {
        return false;
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    !["mmproj", "imatrix", "mtp-", "eagle3-", "dflash-", "dspark-"]
        .iter()
        .any(|k| name.contains(k))
}

fn first_split_or_whole(path: &str) -> bool {
    let s = split_info(path);
    !(s.count > 1 && s.index != 1)
}

/// The model file llama.cpp loads for `tag` (empty: none given), `None` when nothing matches.
/// The tag is a regex in llama.cpp (`std::regex(t + "[.-]", icase)`); one llama.cpp cannot
/// compile is refused before ([`tag_problem`]), one the `regex` crate cannot matches nothing.
pub fn find_best_model<'a>(files: &[&'a str], tag: &str) -> Option<&'a str> {
    let defaults = ["Q4_K_M", "Q8_0"];
    let tags: Vec<&str> = if tag.is_empty() {
        defaults.to_vec()
    } else {
        vec![tag]
    };
    for t in tags {
        let Some(pattern) = tag_regex(t) else {
            continue;
        };
        let hit = files
            .iter()
            .find(|f| is_model_file(f) && pattern.is_match(f) && first_split_or_whole(f));
        if let Some(f) = hit {
            return Some(f);
        }
    }
    if tag.is_empty() {
        return files
            .iter()
            .find(|f| is_model_file(f) && first_split_or_whole(f))
            .copied();
    }
    None
}

/// The best sidecar of `kind` for the model file `model` (empty when there is none), as
/// `find_best_sibling` ranks them.
pub fn find_best_sibling<'a>(
    files: &[&'a str],
    model: &str,
    kind: Sidecar,
    tag: &str,
) -> Option<&'a str> {
    let tag_upper = tag.to_ascii_uppercase();
    let model_bits = if tag_upper.is_empty() {
        bits_of_tag(&split_info(model).tag)
    } else {
        bits_of_tag(&tag_upper)
    };
    let model_parts: Vec<&str> = model.split('/').collect();
    let model_dirs = &model_parts[..model_parts.len() - 1];
    // (file, depth, diff, exact) of the best so far.
    let mut best: Option<(&str, usize, i64, bool)> = None;
    for f in files {
        if !f.ends_with(".gguf") || !f.contains(kind.keyword()) {
            continue;
        }
        let parts: Vec<&str> = f.split('/').collect();
        let dirs = &parts[..parts.len() - 1];
        // The sibling's directory must be the model's or one above it.
        if dirs.len() > model_dirs.len() || dirs.iter().zip(model_dirs).any(|(a, b)| a != b) {
            continue;
        }
        let depth = dirs.len();
        let diff = (bits_of_tag(&split_info(f).tag) - model_bits).abs();
        let exact =
            !tag_upper.is_empty() && f.to_ascii_uppercase().contains(&format!("-{tag_upper}."));
        let better = match best {
            None => true,
            Some((_, d, b_diff, b_exact)) => {
                depth > d
                    || (depth == d && exact && !b_exact)
                    || (depth == d && exact == b_exact && diff < b_diff)
            }
        };
        if better {
            best = Some((f, depth, diff, exact));
        }
    }
    best.map(|b| b.0)
}

/// What a repo resolves to for one model llama.cpp loads: the file, and the sidecar kind when
/// the file is a sidecar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    pub file: String,
    pub sidecar: Option<Sidecar>,
}

/// Why no file was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotChosen {
    /// The repo's root has `preset.ini`: llama-server runs it as a router of its presets
    /// (download.cpp:720-726), not one model.
    Preset,
    /// `--hf-file` names a file the repo does not list.
    NoSuchFile(String),
    /// No GGUF model file matches the tag (or none at all).
    NoMatch,
}

fn preset(files: &[&str]) -> bool {
    files.contains(&"preset.ini")
}

fn primary<'a>(
    files: &[&'a str],
    tag: &str,
    hf_file: Option<&str>,
) -> Result<Option<&'a str>, NotChosen> {
    if preset(files) {
        return Err(NotChosen::Preset);
    }
    match hf_file {
        Some(name) => match files.iter().find(|f| **f == name) {
            Some(f) => Ok(Some(f)),
            None => Err(NotChosen::NoSuchFile(name.to_string())),
        },
        None => Ok(find_best_model(files, tag)),
    }
}

/// Whether the command asks for no type (llama.cpp's default, `none`): a draft repo's sidecars
/// then decide it.
pub fn types_default(types: &[String]) -> bool {
    types.is_empty() || types.iter().all(|t| t == "none")
}

/// The file of the target repo llama.cpp loads (`-hf REPO[:TAG]`, `--hf-file`).
pub fn target_file(files: &[&str], tag: &str, hf_file: Option<&str>) -> Result<Chosen, NotChosen> {
    match primary(files, tag, hf_file)? {
        Some(f) => Ok(Chosen {
            file: f.to_string(),
            sidecar: None,
        }),
        None => Err(NotChosen::NoMatch),
    }
}

/// The draft llama.cpp loads from the draft repo (`-hfd REPO[:TAG]`; `hf_file`: `-md FILE`
/// beside it), with the `--spec-type`s of the command.
pub fn draft_file(
    files: &[&str],
    tag: &str,
    hf_file: Option<&str>,
    types: &[String],
) -> Result<Chosen, NotChosen> {
    let model = primary(files, tag, hf_file)?;
    let wanted: Vec<Sidecar> = if hf_file.is_some() {
        Vec::new()
    } else if types_default(types) {
        // MTP, then DSpark (it outranks DFlash), then DFlash, then EAGLE-3 (arg.cpp:547-565).
        vec![
            Sidecar::Mtp,
            Sidecar::Dspark,
            Sidecar::Dflash,
            Sidecar::Eagle3,
        ]
    } else {
        Sidecar::ALL
            .into_iter()
            .filter(|s| types.iter().any(|t| t == s.spec_type()))
            .collect()
    };
    let model_path = model.unwrap_or("");
    for kind in wanted {
        if let Some(f) = find_best_sibling(files, model_path, kind, tag) {
            return Ok(Chosen {
                file: f.to_string(),
                sidecar: Some(kind),
            });
        }
    }
    match model {
        Some(f) => Ok(Chosen {
            file: f.to_string(),
            sidecar: None,
        }),
        None => Err(NotChosen::NoMatch),
    }
}

/// With no draft named: the sidecar of a requested type in the target's repo, which llama.cpp
/// loads as the draft (arg.cpp:640-677), MTP first, then DFlash, EAGLE-3, DSpark.
pub fn target_sidecar(files: &[&str], model: &str, tag: &str, types: &[String]) -> Option<Chosen> {
    Sidecar::ALL
        .into_iter()
        .filter(|s| types.iter().any(|t| t == s.spec_type()))
        .find_map(|kind| {
            find_best_sibling(files, model, kind, tag).map(|f| Chosen {
                file: f.to_string(),
                sidecar: Some(kind),
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn types(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| s.to_string()).collect()
    }

    /// File names come from the Hub's listing: any UTF-8, never a panic (a byte index into
    /// `ééééééééé` used to fall inside a character).
    #[test]
    fn non_ascii_file_names_are_read_not_sliced() {
        for name in [
            "ééééééééé.gguf",
            "x-ééééééé.gguf",
            "é-00001-of-00002.gguf",
            "モデル-Q4_K_M.gguf",
            "ü.gguf",
        ] {
            let _ = split_info(name);
        }
        let info = split_info("é-00001-of-00002.gguf");
        assert_eq!((info.index, info.count), (1, 2));
        assert_eq!(split_info("モデル-Q4_K_M.gguf").tag, "Q4_K_M");
    }

    #[test]
    fn tags_llama_cpp_cannot_compile_are_invalid() {
        use super::super::ecma::Refused;
        assert_eq!(tag_problem(""), None);
        assert_eq!(tag_problem("Q4_K_M"), None);
        assert_eq!(tag_problem("UD-Q4_K_XL"), None);
        assert_eq!(
            tag_problem("Q4["),
            Some(TagProblem::Invalid(Refused::Collate))
        );
        assert_eq!(
            tag_problem("(Q4"),
            Some(TagProblem::Invalid(Refused::Paren))
        );
        assert_eq!(tag_problem("Q4(?=_K)"), Some(TagProblem::Unevaluated));
        assert_eq!(tag_problem("(Q)\\1"), Some(TagProblem::Unevaluated));
    }

    #[test]
    fn splits_repo_and_tag_as_llama_cpp() {
        assert_eq!(
            split_repo_tag("org/m-GGUF:q8_0"),
            Ok(("org/m-GGUF".into(), "q8_0".into()))
        );
        assert_eq!(split_repo_tag("org/m"), Ok(("org/m".into(), "".into())));
        assert!(split_repo_tag("m:Q4_K_M").is_err());
        assert!(split_repo_tag("a/b/c").is_err());
    }

    #[test]
    fn the_default_tags_then_the_first_model() {
        let files = [
            "README.md",
            "m-F16.gguf",
            "m-Q8_0.gguf",
            "mmproj-m-Q4_K_M.gguf",
            "m-Q4_K_M.gguf",
        ];
        assert_eq!(find_best_model(&files, ""), Some("m-Q4_K_M.gguf"));
        assert_eq!(find_best_model(&files[..3], ""), Some("m-Q8_0.gguf"));
        assert_eq!(find_best_model(&files[..2], ""), Some("m-F16.gguf"));
        // Case-insensitive, `TAG.` or `TAG-`, anywhere in the path.
        assert_eq!(find_best_model(&files, "q8_0"), Some("m-Q8_0.gguf"));
        assert_eq!(find_best_model(&files, "Q5_K_M"), None);
        assert_eq!(
            find_best_model(&["Q4_K_M-dir/m.gguf"], "q4_k_m"),
            Some("Q4_K_M-dir/m.gguf")
        );
        // A named tag never falls back.
        assert_eq!(find_best_model(&["m-F16.gguf"], "Q4_K_M"), None);
    }

    #[test]
    fn splits_count_as_their_first_part_and_sidecars_never_as_models() {
        let files = [
            "imatrix-Q4_K_M.gguf",
            "dflash-m-Q4_K_M.gguf",
            "m-Q4_K_M-00002-of-00003.gguf",
            "m-Q4_K_M-00001-of-00003.gguf",
        ];
        assert_eq!(
            find_best_model(&files, ""),
            Some("m-Q4_K_M-00001-of-00003.gguf")
        );
        let s = split_info("dir/m-Q4_K_M-00002-OF-00003.gguf");
        assert_eq!((s.tag.as_str(), s.index, s.count), ("Q4_K_M", 2, 3));
        assert!(!is_model_file("sub/mtp-m-Q8_0.gguf") && is_model_file("mtp/m-Q8_0.gguf"));
    }

    #[test]
    fn siblings_rank_by_depth_then_exact_tag_then_bits() {
        let files = [
            "dflash-m-Q8_0.gguf",
            "dflash-m-Q4_K_M.gguf",
            "sub/dflash-m-F16.gguf",
            "other/dflash-m-Q4_0.gguf",
        ];
        let f = |model, tag| find_best_sibling(&files, model, Sidecar::Dflash, tag);
        assert_eq!(f("m-Q8_0.gguf", ""), Some("dflash-m-Q8_0.gguf"));
        assert_eq!(f("m-Q4_K_M.gguf", ""), Some("dflash-m-Q4_K_M.gguf"));
        assert_eq!(f("sub/m-Q4_K_M.gguf", ""), Some("sub/dflash-m-F16.gguf"));
        assert_eq!(f("", "q8_0"), Some("dflash-m-Q8_0.gguf"));
        assert_eq!(f("m-Q4_K_M.gguf", "F16"), Some("dflash-m-Q8_0.gguf"));
    }

    #[test]
    fn a_draft_repo_resolves_to_its_sidecar_unless_a_file_is_named() {
        let files = [
            "d-Q4_K_M.gguf",
            "eagle3-d-Q4_K_M.gguf",
            "dflash-d-Q4_K_M.gguf",
        ];
        let chosen = draft_file(&files, "", None, &[]).unwrap();
        assert_eq!(
            (chosen.file.as_str(), chosen.sidecar),
            ("dflash-d-Q4_K_M.gguf", Some(Sidecar::Dflash))
        );
        let eagle = draft_file(&files, "", None, &types(&["draft-eagle3"])).unwrap();
        assert_eq!(eagle.sidecar, Some(Sidecar::Eagle3));
        let simple = draft_file(&files, "", None, &types(&["draft-simple"])).unwrap();
        assert_eq!(
            (simple.file.as_str(), simple.sidecar),
            ("d-Q4_K_M.gguf", None)
        );
        let named = draft_file(&files, "", Some("eagle3-d-Q4_K_M.gguf"), &[]).unwrap();
        assert_eq!(named.sidecar, None);
        assert_eq!(
            draft_file(&files, "", Some("x.gguf"), &[]),
            Err(NotChosen::NoSuchFile("x.gguf".into()))
        );
        assert_eq!(
            draft_file(&["README.md"], "", None, &[]),
            Err(NotChosen::NoMatch)
        );
        assert_eq!(
            target_file(&["preset.ini", "m-Q4_K_M.gguf"], "", None),
            Err(NotChosen::Preset)
        );
    }

    #[test]
    fn a_target_repo_sidecar_is_the_draft_only_when_asked_for() {
        let files = ["m-Q4_K_M.gguf", "mtp-m-Q4_K_M.gguf"];
        assert_eq!(target_sidecar(&files, "m-Q4_K_M.gguf", "", &[]), None);
        let mtp = target_sidecar(&files, "m-Q4_K_M.gguf", "", &types(&["draft-mtp"])).unwrap();
        assert_eq!(mtp.file, "mtp-m-Q4_K_M.gguf");
    }
}
