//! From text to commands: a pasted command line, a shell script, a Dockerfile or a
//! docker-compose file becomes a list of tokenised [`Command`]s, each with the environment that
//! the script, `ENV` lines or `environment:` set before it.
//!
//! Words are split by `shell-words` (POSIX quoting, `\` line continuations, `#` comments), never
//! by hand. What this module does itself is only what a splitter cannot: find where one command
//! ends in a script (a line that is complete and not continued), split a line at `&&`, `;`, `|`,
//! and expand `$VAR` / `${VAR}` / `${VAR:-default}` from variables the same script assigned,
//! and `"${NAME[@]}"` from a bash array the script built (`NAME=(…)` over one line or several,
//! `NAME+=(…)`: how the vLLM production-stack chart's Ray entrypoint assembles its command).
//! Quoting is already gone when variables are expanded, so a `'$X'` in single quotes is expanded
//! too; launch commands rarely hold a literal `$`.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::{Error, Result};

/// One command of the input, split into words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    pub words: Vec<String>,
    /// Environment the input set before this command (`export`, Dockerfile `ENV`, compose
    /// `environment:`), in order; the command's own leading `VAR=value` words are still in
    /// `words`.
    pub env: Vec<(String, String)>,
    /// The text the flags are searched in to give diagnostics a line and column: shared by the
    /// commands of one line, or of one compose file, never copied per command.
    pub text: Arc<str>,
    /// The 1-based line of `text`'s first character in the file.
    pub line: usize,
    /// The container image the command runs in, when the input names one (a compose service's
    /// `image:`, a Dockerfile's last `FROM`, a Kubernetes container's `image`): its tag may
    /// name the engine's release.
    pub image: Option<String>,
}

/// What kind of file `--file` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Script,
    Dockerfile,
    Compose,
}

impl FileKind {
    /// From the file name, then the content (`FROM ...` as the first instruction).
    pub fn detect(name: &str, text: &str) -> FileKind {
        let base = name
            .rsplit(['/', '\\'])
            .next()
            .unwrap_or(name)
            .to_ascii_lowercase();
        if base.ends_with(".yml") || base.ends_with(".yaml") {
            return FileKind::Compose;
        }
        if base == "dockerfile"
            || base == "containerfile"
            || base.starts_with("dockerfile.")
            || base.ends_with(".dockerfile")
        {
            return FileKind::Dockerfile;
        }
        let first = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('#'));
        // `get`, not `[..5]`: byte 5 may fall inside a multi-byte character (`vllmé`).
        match first.and_then(|l| l.get(..5)) {
            Some(head) if head.eq_ignore_ascii_case("FROM ") => FileKind::Dockerfile,
            _ => FileKind::Script,
        }
    }
}

/// The command line given after `--`: already split by the user's shell, unless it is one
/// argument holding a whole pasted command (or script), which is split here.
pub fn from_args(args: &[String]) -> Result<Vec<Command>> {
    match args {
        [] => Err(Error::new("no engine command given").with_hint(
            "pass the command after `--`: dflash-check launch -- vllm serve MODEL --speculative-config '{...}'",
        )),
        [one] if one.chars().any(char::is_whitespace) => from_script(one, None),
        words => Ok(vec![Command {
            image: None,
            words: words.to_vec(),
            env: Vec::new(),
            text: shell_words::join(words).into(),
            line: 1,
        }]),
    }
}

/// A file's commands, by its kind.
pub fn from_file(name: &str, text: &str) -> Result<Vec<Command>> {
    let text = text.replace("\r\n", "\n");
    match FileKind::detect(name, &text) {
        FileKind::Script => from_script(&text, Some(name)),
        FileKind::Dockerfile => from_dockerfile(&text, name),
        FileKind::Compose => from_compose(&text, name),
    }
}

fn where_(file: Option<&str>, line: usize) -> String {
    match file {
        Some(f) => format!("{f}:{line}"),
        None if line > 1 => format!("line {line} of the command"),
        None => "the command".to_string(),
    }
}

fn unbalanced(file: Option<&str>, line: usize) -> Error {
    Error::new(format!(
        "unbalanced quote in {}: a ' or \" is never closed",
        where_(file, line)
    ))
    .with_hint(
        "quote the JSON of --speculative-config with single quotes: --speculative-config '{\"method\": \"dflash\", ...}'",
    )
}

/// Whether `s` ends in an odd number of backslashes: a line continued on the next one.
fn continued(s: &str) -> bool {
    s.bytes().rev().take_while(|&b| b == b'\\').count() % 2 == 1
}

/// Where `shell_words::split` would be after reading some text: the same states, so that a
/// script can be read line by line without splitting the growing command again at every line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lexer {
    Delimiter,
    Backslash,
    Unquoted,
    UnquotedBackslash,
    SingleQuoted,
    DoubleQuoted,
    DoubleQuotedBackslash,
    Comment,
}

impl Lexer {
    /// The state after `text`, from `self`; the transitions of `shell_words::split`.
    fn after(self, text: &str) -> Lexer {
        use Lexer::*;
        text.chars().fold(self, |state, c| match (state, c) {
            (Delimiter, '\'') | (Unquoted, '\'') => SingleQuoted,
            (Delimiter, '"') | (Unquoted, '"') => DoubleQuoted,
            (Delimiter, '\\') => Backslash,
            (Delimiter, '\t' | ' ' | '\n') => Delimiter,
            (Delimiter, '#') => Comment,
            (Delimiter, _) => Unquoted,
            (Backslash, '\n') => Delimiter,
            (Backslash, _) => Unquoted,
            (Unquoted, '\\') => UnquotedBackslash,
            (Unquoted, '\t' | ' ' | '\n') => Delimiter,
            (Unquoted, _) => Unquoted,
            (UnquotedBackslash, _) => Unquoted,
            (SingleQuoted, '\'') => Unquoted,
            (SingleQuoted, _) => SingleQuoted,
            (DoubleQuoted, '"') => Unquoted,
            (DoubleQuoted, '\\') => DoubleQuotedBackslash,
            (DoubleQuoted, _) => DoubleQuoted,
            (DoubleQuotedBackslash, _) => DoubleQuoted,
            (Comment, '\n') => Delimiter,
            (Comment, _) => Comment,
        })
    }

    /// Whether text that ends here is refused by `shell_words::split` (a quote left open).
    fn in_quote(self) -> bool {
        matches!(
            self,
            Lexer::SingleQuoted | Lexer::DoubleQuoted | Lexer::DoubleQuotedBackslash
        )
    }
}

/// Splits a shell script into commands. A command ends at a line that is not continued with `\`
/// and leaves no quote open; `&&`, `||`, `;`, `|` and `&` words separate commands on one line.
///
/// Whether a quote is open is carried from line to line ([`Lexer`]), so each byte is read once
/// and each command split once: a quote left open over a long file costs one pass, not one
/// re-split of the growing command per line.
pub fn from_script(text: &str, file: Option<&str>) -> Result<Vec<Command>> {
    let text = text.replace("\r\n", "\n");
    let mut out = Vec::new();
    let mut vars: BTreeMap<String, String> = BTreeMap::new();
    let mut arrays = Arrays::default();
    let mut exported: Vec<(String, String)> = Vec::new();
    let mut buf = String::new();
    let mut budget = MAX_EXPANDED_BYTES;
    let mut lexer = Lexer::Delimiter;
    let mut start = 1;
    let lines: Vec<&str> = text.split('\n').collect();
    for (i, line) in lines.iter().enumerate() {
        if buf.is_empty() {
            start = i + 1;
        }
        buf.push_str(line);
        buf.push('\n');
        lexer = lexer.after(line).after("\n");
        if continued(line) || lexer.in_quote() {
            // A continued line, or a quote open across lines (a multi-line JSON value): read on.
            continue;
        }
        let Ok(split) = shell_words::split(&buf) else {
            // Not reached: the lexer says every quote is closed.
            return Err(unbalanced(file, start));
        };
        lexer = Lexer::Delimiter;
        let shared: Arc<str> = Arc::from(buf.as_str());
        // `serve M; echo`: a `;` glued to a word ends the command too (quoting is gone by
        // now, so a quoted word ending in `;` is cut as well; launch commands have none).
        let mut words = Vec::with_capacity(split.len());
        for w in split {
            match w.strip_suffix(';') {
                Some(head) if !head.is_empty() => {
                    words.push(head.to_string());
                    words.push(";".to_string());
                }
                _ => words.push(w),
            }
        }
        for segment in words.split(|w| matches!(w.as_str(), "&&" | "||" | ";" | "|" | "&")) {
            let mut state = Script {
                vars: &mut vars,
                arrays: &mut arrays,
                exported: &mut exported,
                budget: &mut budget,
                out: &mut out,
            };
            take_segment(segment, &mut state, &shared, start)
                .map_err(|limit| too_much(file, start, limit))?;
        }
        buf.clear();
    }
    if !buf.trim().is_empty() {
        return Err(unbalanced(file, start));
    }
    if let Some((name, _, line)) = &arrays.open {
        return Err(Error::new(format!(
            "the bash array `{name}=(` opened at {} is never closed with `)`",
            where_(file, *line)
        ))
        .with_hint("close the array, or pass the engine command after `--`"));
    }
    Ok(out)
}

fn is_assignment(word: &str) -> Option<(&str, &str)> {
    let (name, value) = word.split_once('=')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    if (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        Some((name, value))
    } else {
        None
    }
}

/// Most commands and exported variables one input may hold. Each command carries a copy of the
/// environment exported before it, so without a bound a file of alternating `export`s and
/// commands would need memory quadratic in its size; a launch script holds a few of each.
pub const MAX_COMMANDS: usize = 1000;
pub const MAX_EXPORTS: usize = 1000;
/// Most bytes variable expansion may produce over one input: `B=$A$A$A…`, `C=$B$B$B…` grows
/// exponentially with each line, so expansion is charged against this budget.
pub const MAX_EXPANDED_BYTES: usize = 16 << 20;

/// Which bound of a script an input passed.
#[derive(Debug, Clone, Copy)]
enum Limit {
    Commands,
    Exports,
    Expansion,
    Arrays,
}

fn too_much(file: Option<&str>, line: usize, limit: Limit) -> Error {
    let what = match limit {
        Limit::Commands => format!("holds more than {MAX_COMMANDS} commands"),
        Limit::Exports => format!("exports more than {MAX_EXPORTS} variables"),
        Limit::Expansion => format!(
            "expands its variables to more than {} MiB",
            MAX_EXPANDED_BYTES >> 20
        ),
        Limit::Arrays => format!(
            "builds more than {MAX_ARRAYS} bash arrays or more than {MAX_ARRAY_ELEMENTS} elements"
        ),
    };
    let input = match file {
        Some(f) => f.to_string(),
        None => "the command".to_string(),
    };
    Error::new(format!(
        "{input} {what} (by {}): it is not a launch script",
        where_(file, line)
    ))
    .with_hint("pass the engine command after `--`, or a file that holds the launch and its environment only")
}

/// Bash arrays a script has built, and the one whose `(…)` is still open.
#[derive(Default)]
struct Arrays {
    done: BTreeMap<String, Vec<String>>,
    /// `NAME=(` read, `)` not yet: the name, the elements so far (expanded), the line it opened on.
    open: Option<(String, Vec<String>, usize)>,
    /// Elements in all arrays, against [`MAX_ARRAY_ELEMENTS`].
    total: usize,
}

/// Most elements all of a script's arrays may hold together, and most arrays it may build (a
/// launch command has dozens of elements in one array).
pub const MAX_ARRAY_ELEMENTS: usize = 10_000;
pub const MAX_ARRAYS: usize = 100;

/// `NAME=(…` or `NAME+=(…`: the name, whether it appends, and the first element's text. Only
/// when the line itself says `NAME=(` (or `NAME+=(`): quotes are gone from the words by now, and
/// `P="(a) "` must stay a plain assignment.
fn array_start<'w>(word: &'w str, line: &str) -> Option<(&'w str, bool, &'w str)> {
    let (head, first) = word.split_once("=(")?;
    let (name, append) = match head.strip_suffix('+') {
        Some(name) => (name, true),
        None => (head, false),
    };
    let mut chars = name.chars();
    let identifier = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    let written = if append {
        format!("{name}+=(")
    } else {
        format!("{name}=(")
    };
    (identifier && line.contains(&written)).then_some((name, append, first))
}

/// The array a word names whole: `${NAME[@]}` or `${NAME[*]}` (quotes are gone by now).
fn array_use(word: &str) -> Option<&str> {
    let inner = word.strip_prefix("${")?.strip_suffix('}')?;
    inner
        .strip_suffix("[@]")
        .or_else(|| inner.strip_suffix("[*]"))
}

impl Arrays {
    /// Takes the words of an array assignment (the opening one, or any line while one is
    /// open); `Ok(false)` when `words` are not part of one. The element that ends with `)` closes
    /// it: an element whose own text ends with `)` cannot be told from that once quotes are
    /// gone, and is read as the end (launch arguments have none). Elements are expanded as they
    /// are read, and an append adds to the array in place: nothing is copied or expanded twice.
    fn take(
        &mut self,
        words: &[String],
        line_text: &str,
        line: usize,
        vars: &BTreeMap<String, String>,
        budget: &mut usize,
    ) -> std::result::Result<bool, Limit> {
        let mut rest = words;
        if self.open.is_none() {
            let Some((name, append, first)) = words.first().and_then(|w| array_start(w, line_text))
            else {
                return Ok(false);
            };
            let elements = match self.done.remove(name) {
                Some(before) if append => before,
                Some(before) => {
                    self.total -= before.len();
                    Vec::new()
                }
                None => Vec::new(),
            };
            if self.done.len() >= MAX_ARRAYS {
                return Err(Limit::Arrays);
            }
            self.open = Some((name.to_string(), elements, line));
            rest = &words[1..];
            if !self.element(first, vars, budget)? {
                return Ok(true);
            }
        }
        for w in rest {
            if self.open.is_none() || !self.element(w, vars, budget)? {
                break;
            }
        }
        Ok(true)
    }

    /// One element of the open array (`)` at its end closes it); `Ok(false)` once closed.
    fn element(
        &mut self,
        word: &str,
        vars: &BTreeMap<String, String>,
        budget: &mut usize,
    ) -> std::result::Result<bool, Limit> {
        let (text, closes) = match word.strip_suffix(')') {
            Some(head) => (head, true),
            None => (word, false),
        };
        if !text.is_empty() {
            let value = expand_within(text, vars, budget).ok_or(Limit::Expansion)?;
            self.total += 1;
            if self.total > MAX_ARRAY_ELEMENTS {
                return Err(Limit::Arrays);
            }
            if let Some((_, elements, _)) = self.open.as_mut() {
                elements.push(value);
            }
        }
        if closes {
            if let Some((name, elements, _)) = self.open.take() {
                self.done.insert(name, elements);
            }
        }
        Ok(!closes)
    }
}

/// What a script has read so far.
struct Script<'a> {
    vars: &'a mut BTreeMap<String, String>,
    arrays: &'a mut Arrays,
    exported: &'a mut Vec<(String, String)>,
    /// Bytes variable expansion may still produce.
    budget: &'a mut usize,
    out: &'a mut Vec<Command>,
}

/// One command of a script: `export` and bare assignments update the variables; anything else
/// becomes a [`Command`] with variables expanded. `Err` names the bound passed.
fn take_segment(
    segment: &[String],
    state: &mut Script,
    text: &Arc<str>,
    line: usize,
) -> std::result::Result<(), Limit> {
    let Script {
        vars,
        arrays,
        exported,
        budget,
        out,
    } = state;
    if arrays.take(segment, text, line, vars, budget)? {
        return Ok(());
    }
    let mut words = Vec::with_capacity(segment.len());
    for w in segment {
        match array_use(w).and_then(|name| arrays.done.get(name)) {
            Some(elements) => {
                let bytes: usize = elements.iter().map(String::len).sum();
                **budget = budget.checked_sub(bytes).ok_or(Limit::Expansion)?;
                words.extend(elements.iter().cloned());
            }
            None => words.push(expand_within(w, vars, budget).ok_or(Limit::Expansion)?),
        }
    }
    if words.is_empty() {
        return Ok(());
    }
    if words[0] == "export" {
        for w in &words[1..] {
            if let Some((name, value)) = is_assignment(w) {
                vars.insert(name.to_string(), value.to_string());
                exported.retain(|(n, _)| n != name);
                exported.push((name.to_string(), value.to_string()));
            } else if let Some(value) = vars.get(w.as_str()) {
                // `X=1; export X`
                exported.retain(|(n, _)| n != w);
                exported.push((w.clone(), value.clone()));
            }
            if exported.len() > MAX_EXPORTS {
                return Err(Limit::Exports);
            }
        }
        return Ok(());
    }
    if words.iter().all(|w| is_assignment(w).is_some()) {
        // `MODEL=Qwen/Qwen3-8B` alone: a shell variable, not in the environment of later commands.
        for w in &words {
            if let Some((name, value)) = is_assignment(w) {
                vars.insert(name.to_string(), value.to_string());
            }
        }
        return Ok(());
    }
    if out.len() >= MAX_COMMANDS {
        return Err(Limit::Commands);
    }
    out.push(Command {
        image: None,
        words,
        env: exported.clone(),
        text: Arc::clone(text),
        line,
    });
    Ok(())
}

/// Expands `$NAME`, `${NAME}` and `${NAME:-default}` from `vars`; unknown names stay as written.
pub fn expand(word: &str, vars: &BTreeMap<String, String>) -> String {
    let mut unlimited = usize::MAX;
    expand_within(word, vars, &mut unlimited).unwrap_or_default()
}

/// [`expand`], charging the bytes produced to `budget`; `None` once they would pass it.
fn expand_within(
    word: &str,
    vars: &BTreeMap<String, String>,
    budget: &mut usize,
) -> Option<String> {
    if !word.contains('$') {
        return Some(word.to_string());
    }
    let mut out = String::new();
    // Only a variable's value is charged: the rest is the input's own text.
    let mut push = |out: &mut String, s: &str| -> Option<()> {
        *budget = budget.checked_sub(s.len())?;
        out.push_str(s);
        Some(())
    };
    let mut rest = word;
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        if let Some(inner) = after.strip_prefix('{') {
            if let Some(end) = inner.find('}') {
                let body = &inner[..end];
                let (name, default) = match body.split_once(":-") {
                    Some((n, d)) => (n, Some(d)),
                    None => (body, None),
                };
                match (vars.get(name), default) {
                    (Some(v), _) => push(&mut out, v)?,
                    (None, Some(d)) => out.push_str(d),
                    (None, None) => out.push_str(&rest[pos..pos + 2 + end + 1]),
                }
                rest = &inner[end + 1..];
                continue;
            }
        }
        let len = after
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        let name = &after[..len];
        match vars.get(name) {
            Some(v) if !name.is_empty() => push(&mut out, v)?,
            _ => {
                out.push('$');
                out.push_str(name);
            }
        }
        rest = &after[len..];
    }
    out.push_str(rest);
    Some(out)
}

/// A Dockerfile: the final stage's `ENTRYPOINT` and `CMD` (exec JSON form or shell form) and
/// its `ENV`. Without an `ENTRYPOINT`, the base image's name comes first so that an engine
/// image (`vllm/vllm-openai`, whose entrypoint is the vLLM server) is recognised.
fn from_dockerfile(text: &str, file: &str) -> Result<Vec<Command>> {
    let mut image: Option<String> = None;
    let mut env: Vec<(String, String)> = Vec::new();
    let mut entrypoint: Option<Vec<String>> = None;
    let mut cmd: Option<Vec<String>> = None;
    let mut logical = String::new();
    let mut start = 1;
    let lines: Vec<&str> = text.split('\n').collect();
    for (i, raw) in lines.iter().enumerate() {
        let trimmed = raw.trim();
        if logical.is_empty() {
            start = i + 1;
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
        } else if trimmed.starts_with('#') {
            // Docker drops comment lines inside a continued instruction.
            continue;
        }
        let body = raw.trim_end();
        if continued(body) {
            logical.push_str(&body[..body.len() - 1]);
            logical.push(' ');
            continue;
        }
        logical.push_str(body);
        let instruction = std::mem::take(&mut logical);
        let instruction = instruction.trim();
        let (keyword, rest) = instruction
            .split_once(char::is_whitespace)
            .unwrap_or((instruction, ""));
        let rest = rest.trim();
        match keyword.to_ascii_uppercase().as_str() {
            "FROM" => {
                // A new stage starts from scratch.
                image = rest.split_whitespace().next().map(str::to_string);
                env.clear();
                entrypoint = None;
                cmd = None;
            }
            "ENV" => {
                let words = shell_words::split(rest).map_err(|_| unbalanced(Some(file), start))?;
                if words.first().is_some_and(|w| is_assignment(w).is_some()) {
                    for w in &words {
                        if let Some((n, v)) = is_assignment(w) {
                            env.retain(|(k, _)| k != n);
                            env.push((n.to_string(), v.to_string()));
                        }
                    }
                } else if let Some((n, v)) = rest.split_once(char::is_whitespace) {
                    // Legacy `ENV NAME value`.
                    env.retain(|(k, _)| k != n);
                    env.push((n.to_string(), v.trim().to_string()));
                }
            }
            "ENTRYPOINT" => entrypoint = Some(docker_words(rest, file, start)?),
            "CMD" => cmd = Some(docker_words(rest, file, start)?),
            _ => {}
        }
    }
    // An exec-form ENTRYPOINT gets CMD appended; without one, the image's own entrypoint runs.
    let mut words: Vec<String> = entrypoint.unwrap_or_else(|| image.iter().cloned().collect());
    words.extend(cmd.unwrap_or_default());
    if words.is_empty() {
        return Ok(Vec::new());
    }
    Ok(vec![Command {
        image,
        words,
        env,
        text: text.into(),
        line: 1,
    }])
}

/// `["vllm", "serve", ...]` (exec form, JSON) or `vllm serve ...` (shell form). Docker treats
/// text that starts with `[` but is not a JSON array of strings as shell form; so does this.
fn docker_words(rest: &str, file: &str, line: usize) -> Result<Vec<String>> {
    if rest.starts_with('[') {
        if let Ok(words) = serde_json::from_str::<Vec<String>>(rest) {
            return Ok(words);
        }
    }
    shell_words::split(rest).map_err(|_| unbalanced(Some(file), line))
}

/// The YAML loader compose files share with Kubernetes manifests and engines' options files
/// (caps on what aliases expand to), under the names this module's callers use.
pub use crate::yaml::{load as load_yaml, MAX_YAML_COST};

/// A docker-compose file: one command per service with a `command:`, `entrypoint:` or `image:`;
/// `command:` and `entrypoint:` as a string (split like a shell) or a list.
fn from_compose(text: &str, file: &str) -> Result<Vec<Command>> {
    use yaml_rust2::Yaml;
    let docs = load_yaml(
        text,
        file,
        "a docker-compose file",
        "--file takes a shell script, a Dockerfile or a docker-compose file",
    )?;
    let Some(Yaml::Hash(services)) = docs.first().map(|d| &d["services"]) else {
        return Err(Error::new(format!(
            "{file} has no `services:` mapping: it is not a docker-compose file"
        ))
        .with_hint("--file takes a shell script, a Dockerfile, or a docker-compose file whose `services:` maps names to services"));
    };
    let scalar = |y: &Yaml| -> Option<String> {
        match y {
            Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
            Yaml::Integer(i) => Some(i.to_string()),
            Yaml::Boolean(b) => Some(b.to_string()),
            _ => None,
        }
    };
    let words_of = |y: &Yaml, what: &str, service: &str| -> Result<Vec<String>> {
        match y {
            Yaml::BadValue | Yaml::Null => Ok(Vec::new()),
            Yaml::Array(items) => Ok(items.iter().filter_map(scalar).collect()),
            other => match scalar(other) {
                Some(s) => shell_words::split(&s).map_err(|_| {
                    Error::new(format!(
                        "unbalanced quote in the `{what}:` of service `{service}` in {file}"
                    ))
                    .with_hint("close the quote, or write the command as a YAML list of words")
                }),
                None => Ok(Vec::new()),
            },
        }
    };
    let mut out = Vec::new();
    let shared: Arc<str> = Arc::from(text);
    for (name, service) in services {
        let name = scalar(name).unwrap_or_default();
        let entry = words_of(&service["entrypoint"], "entrypoint", &name)?;
        let command = words_of(&service["command"], "command", &name)?;
        let mut words = if entry.is_empty() {
            scalar(&service["image"]).into_iter().collect()
        } else {
            entry
        };
        words.extend(command);
        if words.is_empty() {
            continue;
        }
        let mut env = Vec::new();
        match &service["environment"] {
            Yaml::Hash(h) => {
                for (k, v) in h {
                    if let Some(k) = scalar(k) {
                        env.push((k, scalar(v).unwrap_or_default()));
                    }
                }
            }
            Yaml::Array(items) => {
                for item in items.iter().filter_map(scalar) {
                    if let Some((k, v)) = item.split_once('=') {
                        env.push((k.to_string(), v.to_string()));
                    }
                }
            }
            _ => {}
        }
        out.push(Command {
            words,
            env,
            text: Arc::clone(&shared),
            line: 1,
            image: scalar(&service["image"]),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Aliases of one long scalar: few nodes, a lot of memory. Counting nodes alone let
    /// 40,000 aliases of a 0.5 MB scalar (a 1 MiB file) build 20 GB; the cost counts bytes.
    #[test]
    fn aliases_of_a_long_scalar_are_refused_by_their_bytes() {
        let big = "a".repeat(100_000);
        let items = "      - *big\n".repeat(200);
        let text = format!(
            "x-big: &big {big}\nservices:\n  vllm:\n    image: vllm/vllm-openai\n    command:\n{items}"
        );
        let err = from_compose(&text, "compose.yml").unwrap_err();
        assert!(err.message.contains("16 MiB of YAML"), "{}", err.message);
        // A few aliases of it are fine.
        let few = "      - *big\n".repeat(3);
        let text = format!("x-big: &big {big}\nservices:\n  vllm:\n    command:\n{few}");
        assert!(from_compose(&text, "compose.yml").is_ok());
    }

    fn words(cmds: &[Command]) -> Vec<Vec<&str>> {
        cmds.iter()
            .map(|c| c.words.iter().map(String::as_str).collect())
            .collect()
    }

    #[test]
    fn a_script_with_continuations_comments_and_exports() {
        let script = "#!/bin/bash\nexport SGLANG_X=1\n# a comment with an ' apostrophe\nMODEL=Qwen/Qwen3-8B\n\
                      python -m sglang.launch_server \\\n    --model-path $MODEL \\\n    --tp-size ${TP:-1}\n";
        let cmds = from_script(script, Some("run.sh")).unwrap();
        assert_eq!(
            words(&cmds),
            vec![vec![
                "python",
                "-m",
                "sglang.launch_server",
                "--model-path",
                "Qwen/Qwen3-8B",
                "--tp-size",
                "1"
            ]]
        );
        assert_eq!(cmds[0].env, vec![("SGLANG_X".into(), "1".into())]);
        assert_eq!(cmds[0].line, 5);
    }

    #[test]
    fn a_quoted_json_value_may_span_lines() {
        let script =
            "vllm serve M --speculative-config '{\n  \"method\": \"dflash\"\n}'\necho done\n";
        let cmds = from_script(script, None).unwrap();
        assert_eq!(cmds.len(), 2);
        assert_eq!(cmds[0].words[4], "{\n  \"method\": \"dflash\"\n}");
    }

    #[test]
    fn an_unbalanced_quote_names_its_line() {
        let err = from_script(
            "echo ok\nvllm serve M --speculative-config '{\"a\": 1}\n",
            Some("x.sh"),
        )
        .unwrap_err();
        assert!(err.message.contains("x.sh:2"), "{}", err.message);
    }

    #[test]
    fn operators_separate_commands() {
        let cmds = from_script("cd /app && VLLM_X=1 vllm serve M; echo hi", None).unwrap();
        assert_eq!(
            words(&cmds),
            vec![
                vec!["cd", "/app"],
                vec!["VLLM_X=1", "vllm", "serve", "M"],
                vec!["echo", "hi"]
            ]
        );
    }

    #[test]
    fn a_dockerfile_joins_entrypoint_and_cmd() {
        let text = "FROM nvidia/cuda:12\nENV A=1 B=\"two words\"\nENV LEGACY value here\n\
                    ENTRYPOINT [\"vllm\", \"serve\"]\nCMD [\"Qwen/Qwen3-8B\", \\\n     \"--max-num-seqs\", \"8\"]\n";
        let cmds = from_file("Dockerfile", text).unwrap();
        assert_eq!(
            words(&cmds),
            vec![vec![
                "vllm",
                "serve",
                "Qwen/Qwen3-8B",
                "--max-num-seqs",
                "8"
            ]]
        );
        assert_eq!(
            cmds[0].env,
            vec![
                ("A".into(), "1".into()),
                ("B".into(), "two words".into()),
                ("LEGACY".into(), "value here".into())
            ]
        );
    }

    #[test]
    fn a_dockerfile_shell_form_cmd_on_an_engine_image() {
        let text = "FROM vllm/vllm-openai:v0.25.0\nCMD --model Qwen/Qwen3-8B --max-num-seqs 8\n";
        let cmds = from_file("serve.Dockerfile", text).unwrap();
        assert_eq!(
            words(&cmds),
            vec![vec![
                "vllm/vllm-openai:v0.25.0",
                "--model",
                "Qwen/Qwen3-8B",
                "--max-num-seqs",
                "8"
            ]]
        );
    }

    #[test]
    fn compose_command_as_string_or_list() {
        let text = "services:\n  a:\n    image: vllm/vllm-openai:latest\n    command: >\n      --model X --speculative-config '{\"method\": \"dflash\"}'\n    environment:\n      VLLM_USE_V2_MODEL_RUNNER: 1\n  b:\n    image: lmsysorg/sglang\n    command: [\"python3\", \"-m\", \"sglang.launch_server\", \"--model-path\", \"Y\"]\n    environment:\n      - HF_HUB_OFFLINE=1\n";
        let cmds = from_file("docker-compose.yml", text).unwrap();
        assert_eq!(
            words(&cmds),
            vec![
                vec![
                    "vllm/vllm-openai:latest",
                    "--model",
                    "X",
                    "--speculative-config",
                    "{\"method\": \"dflash\"}"
                ],
                vec![
                    "lmsysorg/sglang",
                    "python3",
                    "-m",
                    "sglang.launch_server",
                    "--model-path",
                    "Y"
                ]
            ]
        );
        assert_eq!(
            cmds[0].env,
            vec![("VLLM_USE_V2_MODEL_RUNNER".into(), "1".into())]
        );
        assert_eq!(cmds[1].env, vec![("HF_HUB_OFFLINE".into(), "1".into())]);
    }

    #[test]
    fn one_pasted_argument_is_split_like_a_shell() {
        let cmds =
            from_args(&["vllm serve M --speculative-config '{\"a\": 1}'".to_string()]).unwrap();
        assert_eq!(
            words(&cmds),
            vec![vec![
                "vllm",
                "serve",
                "M",
                "--speculative-config",
                "{\"a\": 1}"
            ]]
        );
        assert!(from_args(&["vllm serve M '".to_string()]).is_err());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(5000))]
        /// The line-by-line lexer agrees with `shell_words::split` on whether a quote is left
        /// open, for text made of every character the splitter treats specially, read whole or
        /// in two pieces (as from_script reads a script line by line).
        #[test]
        fn lexer_agrees_with_shell_words(text in "[a'\"\\\\# \t\n$é]{0,24}", cut in 0usize..25) {
            let whole = Lexer::Delimiter.after(&text);
            proptest::prop_assert_eq!(whole.in_quote(), shell_words::split(&text).is_err(), "{:?}", text);
            let at = (0..=cut.min(text.len())).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
            let pieces = Lexer::Delimiter.after(&text[..at]).after(&text[at..]);
            proptest::prop_assert_eq!(pieces, whole);
        }
    }

    #[test]
    fn expansion_leaves_unknown_variables() {
        let mut vars = BTreeMap::new();
        vars.insert("A".to_string(), "x".to_string());
        assert_eq!(expand("$A/${A}/${B:-d}/$B/${B}", &vars), "x/x/d/$B/${B}");
    }

    /// Bash arrays as the production-stack chart's Ray entrypoint builds its command: over
    /// several lines, appended to, quoted pieces glued (`""M""`), used as `"${ARGS[@]}"`.
    #[test]
    fn bash_arrays_build_the_command() {
        let script = "M=Qwen/Qwen3-8B\nARGS=(\n  \"vllm\"\n  \"serve\"\n  \"\"$M\"\"\n  \"--port\" \"8000\"\n)\nARGS+=(\"--speculative-config\")\nARGS+=(\"{\\\"method\\\":\\\"eagle3\\\"}\")\nEMPTY=()\necho \"Executing: ${ARGS[@]}\"\nexec \"${ARGS[@]}\" ${EMPTY[*]} --x\n";
        let commands = from_script(script, None).unwrap();
        let last = &commands.last().unwrap().words;
        assert_eq!(
            last,
            &[
                "exec",
                "vllm",
                "serve",
                "Qwen/Qwen3-8B",
                "--port",
                "8000",
                "--speculative-config",
                "{\"method\":\"eagle3\"}",
                "--x"
            ]
        );
        // `echo "… ${ARGS[@]}"` is one word that only mentions the array: left as written.
        assert_eq!(commands[0].words[1], "Executing: ${ARGS[@]}");
        // One line, reassigned (not appended): the last assignment wins.
        let commands = from_script("A=(x y)\nA=(z)\nrun ${A[@]}\n", None).unwrap();
        assert_eq!(commands[0].words, ["run", "z"]);
        // An array left open is refused naming where it opened, not read as commands.
        let err = from_script("X=1\nARGS=(\n vllm serve M\n", Some("s.sh")).unwrap_err();
        assert!(
            err.message.contains("`ARGS=(` opened at s.sh:2"),
            "{}",
            err.message
        );
        // Quoted parentheses are no array: `P="(a) "` is a plain assignment, and a quoted
        // `x=(1)` inside another assignment leaves the command on the line a command.
        let commands = from_script("P=\"(a) \"\nvllm serve M\n", None).unwrap();
        assert_eq!(commands[0].words, ["vllm", "serve", "M"]);
        let commands = from_script("A=\"x=(1)\" vllm serve M\n", None).unwrap();
        assert_eq!(commands[0].words[1..], ["vllm", "serve", "M"]);
        // Elements and arrays are bounded, and appends cost only what they add.
        let huge = format!("A=({})\n", "x ".repeat(MAX_ARRAY_ELEMENTS + 1));
        let err = from_script(&huge, None).unwrap_err();
        assert!(
            err.message.contains("bash arrays or more than"),
            "{}",
            err.message
        );
        let many: String = (0..=MAX_ARRAYS).map(|i| format!("a{i}=()\n")).collect();
        assert!(from_script(&many, None).is_err());
        let appends = format!("A=(x)\n{}run ${{A[@]}}\n", "A+=(y)\n".repeat(5_000));
        let commands = from_script(&appends, None).unwrap();
        assert_eq!(commands[0].words.len(), 5_002);
    }
}
