//! Drafter and target configs: loading them safely, and reading the fields that matter.
//!
//! A config is kept as the parsed [`Document`] (nothing is dropped, so unknown keys survive a
//! rewrite) plus accessors that know the two layouts in the wild: flat (transformers 4.57:
//! top-level `block_size`, `rope_theta`) and nested (transformers 5: `dflash_config.block_size`,
//! `rope_parameters.rope_theta`). Target configs may nest their text model under `text_config`
//! (Qwen3.5/3.6 are multimodal), so target facts look there first.

use std::fs;
use std::io::Read;
use std::path::{Path as FsPath, PathBuf};

use crate::json::{Document, Node, Path, Segment, Value};
use crate::{Error, Result};

/// A drafter `config.json` is a few kilobytes; anything this large is not one.
pub const MAX_CONFIG_BYTES: u64 = 16 * 1024 * 1024;

/// A parsed JSON config file and where it came from.
#[derive(Debug, Clone)]
pub struct ConfigFile {
    /// The file itself (`<dir>/config.json` when a directory was given).
    pub path: PathBuf,
    /// Shared, not copied, by the reports and runs that keep the config (`check` kept four
    /// copies of each of thousands of drafters' trees, issue 44).
    pub doc: std::sync::Arc<Document>,
}

impl ConfigFile {
    pub fn root(&self) -> &Node {
        &self.doc.root
    }

    /// [`non_finite_numbers`] of the whole config, told without a walk when the parser saw
    /// none (nearly every config).
    pub fn non_finite_numbers(&self) -> Vec<(Path, String)> {
        if self.doc.holds_non_finite {
            non_finite_numbers(self.root())
        } else {
            Vec::new()
        }
    }

    /// The file's path as text: [`path_text`] of [`ConfigFile::path`].
    pub fn path_text(&self) -> String {
        path_text(&self.path)
    }

    /// The directory holding the config.
    pub fn dir(&self) -> PathBuf {
        self.path
            .parent()
            .map(FsPath::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."))
    }
}

/// `path` as text, as `path.display()` writes it (each invalid UTF-8 sequence as U+FFFD), in
/// one allocation at its length: `display().to_string()` went through the formatter and grew
/// its string, six times a drafter in `check` (issue 44).
pub fn path_text(path: &FsPath) -> String {
    path.to_string_lossy().into_owned()
}

/// Resolves `path` (a drafter directory or a config file) to the config file it names.
pub fn config_path(path: &FsPath) -> Result<PathBuf> {
    match fs::metadata(path) {
        Ok(meta) if meta.is_dir() => {
            let file = path.join("config.json");
            match fs::metadata(&file) {
                Ok(m) if m.is_dir() => Err(Error::new(format!(
                    "`{}` is a directory, not a config file",
                    file.display()
                ))),
                Ok(_) => Ok(file),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    if fs::symlink_metadata(&file).is_ok() {
                        Err(
                            Error::new(format!("`{}` is a broken symbolic link", file.display()))
                                .with_hint(
                                    "re-download the model files, or point at the real config",
                                ),
                        )
                    } else {
                        Err(Error::new(format!(
                            "no `config.json` in `{}`",
                            path.display()
                        ))
                        .with_hint(
                            "pass a drafter directory that holds config.json, or the config file itself",
                        ))
                    }
                }
                Err(e) => Err(io_error(&file, &e)),
            }
        }
        Ok(_) => Ok(path.to_path_buf()),
        Err(e)
            if e.kind() == std::io::ErrorKind::NotFound && fs::symlink_metadata(path).is_ok() =>
        {
            Err(Error::new(format!(
                "`{}` is a broken symbolic link",
                path.display()
            )))
        }
        Err(e) => Err(io_error(path, &e)),
    }
}

/// Loads and parses a config from a directory or file path. The top level must be an object.
pub fn load(path: &FsPath) -> Result<ConfigFile> {
    // A config file's own path (what `check` passes for each of thousands of drafters): opened
    // and checked through the open file, without a look at the path first (issue 44). A
    // directory, or a path that does not open, takes `config_path`'s way and its errors.
    if let Ok(file) = open_nonblocking(path) {
        let meta = file.metadata().map_err(|e| io_error(path, &e))?;
        if !meta.is_dir() {
            if let Some(kind) = non_regular_kind(&meta) {
                return Err(non_regular_error(path, kind));
            }
            let bytes = read_opened(path, file, &meta, MAX_CONFIG_BYTES)?;
            return parse(path, &bytes);
        }
    }
    let file = config_path(path)?;
    let bytes = read_capped(&file, MAX_CONFIG_BYTES)?;
    parse(&file, &bytes)
}

/// [`load`] for a `config.json` that a directory listing (`getdents`, no link followed) showed
/// as a regular file: opened and read without first asking the open file what it is, one
/// `statx` a drafter fewer for `check` over thousands (issue 44). What the check refused still
/// cannot hang or flood the read: the file is opened non-blocking (a FIFO put there since the
/// listing reads as empty), and past a mebibyte the file's size is asked for, so the error is
/// the one [`load`] gives. A path that does not open or read as a file takes [`load`]'s way.
pub fn load_listed_file(path: &FsPath) -> Result<ConfigFile> {
    /// The first read's size: the real drafter configs are 1-5 KB.
    const FIRST_READ: usize = 16 * 1024;
    let Ok(file) = open_nonblocking(path) else {
        return load(path);
    };
    // A config is a few kilobytes: one read takes it whole. A read of a regular file returns
    // less than it asked for only at the file's end (POSIX: or when a signal interrupts it,
    // and none is caught here), so a short first read that parses is the whole file: the
    // read that would see the end is not made (a system call a drafter fewer for `check`,
    // issue 44). A short read that does not parse reads on to the end before the error is
    // given (a FUSE file system may return less than the file holds), so an error is always
    // about the whole file.
    let mut bytes = Vec::with_capacity(FIRST_READ);
    let Ok(first) = read_once(&file, &mut bytes) else {
        return load(path);
    };
    if first < FIRST_READ {
        if let Ok(config) = parse(path, &bytes) {
            return Ok(config);
        }
    }
    // Past a mebibyte the file's size is asked for, so one over the cap is refused unread, as
    // `load` refuses it.
    const SMALL: u64 = 1024 * 1024;
    if (&file)
        .take(SMALL + 1 - first as u64)
        .read_to_end(&mut bytes)
        .is_err()
    {
        // Not readable as a file after all (a directory put there since the listing):
        // `load`'s way, and its error.
        return load(path);
    }
    if bytes.len() as u64 > SMALL {
        let meta = file.metadata().map_err(|e| io_error(path, &e))?;
        if meta.len() > MAX_CONFIG_BYTES {
            return Err(over_cap(path, meta.len(), MAX_CONFIG_BYTES));
        }
        (&file)
            .take(MAX_CONFIG_BYTES + 1 - bytes.len() as u64)
            .read_to_end(&mut bytes)
            .map_err(|e| io_error(path, &e))?;
        if bytes.len() as u64 > MAX_CONFIG_BYTES {
            return Err(read_past_cap(path, MAX_CONFIG_BYTES));
        }
    }
    parse(path, &bytes)
}

/// One `read` of `file` into `bytes`' spare capacity (retried if a signal interrupts it), its
/// length grown by what was read: std's `Read::read` takes an initialised buffer, and zeroing
/// 16 KiB a config cost more than parsing it.
#[cfg(unix)]
fn read_once(file: &fs::File, bytes: &mut Vec<u8>) -> std::io::Result<usize> {
    use std::os::fd::AsRawFd;
    let spare = bytes.spare_capacity_mut();
    loop {
        // SAFETY: the kernel writes at most `spare.len()` bytes into `spare`, memory this
        // vector owns and does not otherwise use; the length is set to cover only what it
        // reports as written.
        let n = unsafe { libc::read(file.as_raw_fd(), spare.as_mut_ptr().cast(), spare.len()) };
        match usize::try_from(n) {
            Ok(n) => {
                // SAFETY: the first `n` spare bytes were just written by `read`.
                unsafe { bytes.set_len(bytes.len() + n) };
                return Ok(n);
            }
            Err(_) => {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
}

/// [`read_once`] where there is no `read(2)`: through a zeroed buffer.
#[cfg(not(unix))]
fn read_once(mut file: &fs::File, bytes: &mut Vec<u8>) -> std::io::Result<usize> {
    let start = bytes.len();
    bytes.resize(bytes.capacity(), 0);
    let read = loop {
        match file.read(&mut bytes[start..]) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            other => break other,
        }
    };
    bytes.truncate(start + *read.as_ref().unwrap_or(&0));
    read
}

/// Parses config bytes, naming `path` in errors.
pub fn parse(path: &FsPath, bytes: &[u8]) -> Result<ConfigFile> {
    let doc = Document::parse_bytes(bytes).map_err(|e| {
        Error::new(format!(
            "`{}`: invalid JSON at line {}, column {}: {}",
            path.display(),
            e.line,
            e.column,
            e.message
        ))
        .at(path, Some((e.line, e.column)))
        .with_hint("fix the syntax (or restore the file from its Hub repo) and run again")
    })?;
    if doc.root.as_object().is_none() {
        let what = match doc.root.type_name() {
            "null" => "null".to_string(),
            name => format!("{} {name}", article(name)),
        };
        return Err(Error::new(format!(
            "`{}`: the top-level value is {what}; a config.json holds a JSON object",
            path.display(),
        )));
    }
    Ok(ConfigFile {
        path: path.to_path_buf(),
        doc: std::sync::Arc::new(doc),
    })
}

fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

/// What kind of non-regular file `meta` describes (`a FIFO (named pipe)`), or `None` for a
/// regular file or a directory.
pub fn non_regular_kind(meta: &fs::Metadata) -> Option<&'static str> {
    let t = meta.file_type();
    if t.is_file() || t.is_dir() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return Some("a FIFO (named pipe)");
        }
        if t.is_char_device() {
            return Some("a character device");
        }
        if t.is_block_device() {
            return Some("a block device");
        }
        if t.is_socket() {
            return Some("a socket");
        }
    }
    Some("not a regular file")
}

/// The refusal of a non-regular input: a FIFO blocks until someone writes to it, a device may
/// never end, so neither is read.
pub fn non_regular_error(path: &FsPath, kind: &str) -> Error {
    Error::new(format!(
        "`{}` is {kind}, not a regular file; refusing to read it",
        path.display()
    ))
    .with_hint("save the content to a regular file and pass that path")
}

/// Opens `path` for reading, refusing at once (never blocking) anything but a regular file.
///
/// On Unix the file is opened with `O_NONBLOCK`, so opening a FIFO that has no writer returns
/// at once instead of waiting for one; the type is then checked on the open descriptor (no
/// race with a rename between a `stat` and the `open`). `O_NONBLOCK` changes nothing for reads
/// of a regular file.
pub fn open_regular(path: &FsPath) -> Result<(fs::File, fs::Metadata)> {
    let file = open_nonblocking(path).map_err(|e| io_error(path, &e))?;
    let meta = file.metadata().map_err(|e| io_error(path, &e))?;
    if meta.is_dir() {
        return Err(
            Error::new(format!("`{}` is a directory, not a file", path.display())).with_hint(
                "a file is expected at this path: remove the directory or pass the file inside it",
            ),
        );
    }
    if let Some(kind) = non_regular_kind(&meta) {
        return Err(non_regular_error(path, kind));
    }
    Ok((file, meta))
}

/// Whether an optional input file is there: `Ok(false)` when nothing is at `path`, `Ok(true)`
/// for a regular file (symlinks followed), an error for a FIFO, device or socket (which would
/// otherwise be skipped as "absent", or block when read).
pub fn regular_file_present(path: &FsPath) -> Result<bool> {
    match fs::metadata(path) {
        Ok(meta) => match non_regular_kind(&meta) {
            Some(kind) => Err(non_regular_error(path, kind)),
            None => Ok(meta.is_file()),
        },
        Err(_) => Ok(false),
    }
}

/// Reads a whole file, refusing anything over `cap` bytes before reading it, and anything
/// that is not a regular file before opening it for good.
pub fn read_capped(path: &FsPath, cap: u64) -> Result<Vec<u8>> {
    let (file, meta) = open_regular(path)?;
    read_opened(path, file, &meta, cap)
}

/// Opens `path` for reading without blocking on a FIFO.
fn open_nonblocking(path: &FsPath) -> std::io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path)
}

/// Reads an opened regular file whole, at most `cap` bytes (its size, `meta`, checked first).
fn read_opened(path: &FsPath, file: fs::File, meta: &fs::Metadata, cap: u64) -> Result<Vec<u8>> {
    if meta.len() > cap {
        return Err(over_cap(path, meta.len(), cap));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io_error(path, &e))?;
    // A file that grew while being read: its size up front was not the whole story.
    if bytes.len() as u64 > cap {
        return Err(read_past_cap(path, cap));
    }
    Ok(bytes)
}

/// A file whose size is over the cap for its kind.
fn over_cap(path: &FsPath, size: u64, cap: u64) -> Error {
    Error::new(format!(
        "`{}` is {} bytes, over the {} MiB limit for this kind of file",
        path.display(),
        size,
        cap / (1024 * 1024)
    ))
    .with_hint("check that the path names the right file")
}

/// A file read past the cap for its kind, whose size said otherwise (it grew while read).
fn read_past_cap(path: &FsPath, cap: u64) -> Error {
    Error::new(format!(
        "`{}` holds more than the {} MiB limit for this kind of file (reading stopped there)",
        path.display(),
        cap / (1024 * 1024)
    ))
    .with_hint("check that the path names the right file, and that nothing is writing to it")
}

pub fn io_error(path: &FsPath, err: &std::io::Error) -> Error {
    let (what, hint) = match err.kind() {
        std::io::ErrorKind::NotFound => (
            "does not exist".to_string(),
            "check the path (relative paths start from the current directory)",
        ),
        std::io::ErrorKind::PermissionDenied => (
            "cannot be read: permission denied".to_string(),
            "make the file readable by this user, or run as a user who can read it",
        ),
        _ if err.raw_os_error().is_some_and(is_eloop) => (
            "cannot be read: it is a loop of symbolic links".to_string(),
            "point the link at a real file (a Hub cache link whose blob is gone: download again)",
        ),
        _ => (
            format!("cannot be read: {err}"),
            "check the path and the file system it is on",
        ),
    };
    Error::new(format!("`{}` {what}", path.display()))
        .kind(crate::error::ErrorKind::Io)
        .at(path, None)
        .with_hint(hint)
}

/// ELOOP: too many levels of symbolic links (a link that points back at itself).
fn is_eloop(code: i32) -> bool {
    if cfg!(target_os = "linux") {
        code == 40
    } else if cfg!(any(target_os = "macos", target_os = "freebsd")) {
        code == 62
    } else {
        false
    }
}

/// `path` relative to `root` when it is inside it, `/`-separated.
pub fn display(path: &FsPath, root: &FsPath) -> String {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
    shown_under(path, &abs, &root)
}

/// The process's working directory, read once: the commands never change it, and `check` asked
/// the kernel for it for every drafter in three places (issue 44). `None` when it cannot be
/// read (removed, or no permission).
pub fn working_dir() -> Option<&'static FsPath> {
    static CWD: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    CWD.get_or_init(|| std::env::current_dir().ok()).as_deref()
}

/// [`display`] of many paths under one root, the working directory and the root made absolute
/// once: `display` asks the system for the working directory twice a path (2 % of a `check`
/// of 1,000 drafters, issue 44).
pub struct Displayer {
    cwd: Option<PathBuf>,
    root: PathBuf,
    /// The root is the working directory (`check` run where its pin file is, the usual case).
    root_is_cwd: bool,
}

impl Displayer {
    pub fn new(root: &FsPath) -> Displayer {
        let cwd = working_dir().map(FsPath::to_path_buf);
        let root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
        Displayer {
            root_is_cwd: cwd.as_deref() == Some(root.as_path()),
            cwd,
            root,
        }
    }

    /// What [`display`] shows for `path`. A relative path joined to the working directory has
    /// the components `std::path::absolute` gives it (a `.` inside a path is no component).
    pub fn show(&self, path: &FsPath) -> String {
        // A plain relative path (no `.` or `..` component, no doubled or trailing `/`) under
        // a root that is the working directory is shown as it is written: joining it to the
        // working directory and taking the root off again, component by component, was 3,000
        // instructions a drafter (issue 44).
        if self.root_is_cwd
            && !path.is_absolute()
            && plain_unix_text(path)
            && !path.as_os_str().is_empty()
        {
            return path.to_string_lossy().into_owned();
        }
        let abs = match (&self.cwd, path.is_absolute()) {
            (_, true) => std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()),
            (Some(cwd), false) if !path.as_os_str().is_empty() => cwd.join(path),
            _ => path.to_path_buf(),
        };
        shown_under(path, &abs, &self.root)
    }
}

/// `abs` (`path` made absolute) relative to `root` when inside it, else `path`; `/`-separated.
fn shown_under(path: &FsPath, abs: &FsPath, root: &FsPath) -> String {
    slash_joined(abs.strip_prefix(root).unwrap_or(path))
}

/// `path`'s components joined by `/`, `.` components left out: how `check` shows a path and
/// keys a pin.
pub fn slash_joined(path: &FsPath) -> String {
    // That join already: taken as it is (a string per component, then joined, was paid twice
    // a drafter, issue 44).
    if plain_unix_text(path) {
        return path.to_string_lossy().into_owned();
    }
    components_joined(path)
}

/// Whether `path` is a Unix path whose text is its components joined by `/`, with nothing
/// that reading them would drop or fold: no `//`, no trailing `/`, and no `.` or `..`
/// component (no `/.` anywhere, no leading `.`; a name such as `.git` is refused too, and only
/// takes the longer way).
pub fn plain_unix_text(path: &FsPath) -> bool {
    let bytes = path.as_os_str().as_encoded_bytes();
    cfg!(unix)
        && !bytes.starts_with(b".")
        && !bytes.ends_with(b"/")
        && !bytes.windows(2).any(|w| w == b"//" || w == b"/.")
}

fn components_joined(path: &FsPath) -> String {
    // The root component renders as `/` itself: joined with `/` it would print `//tmp/x` for a
    // path outside `root`, so it contributes an empty first part instead.
    path.components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .map(|c| match c {
            std::path::Component::RootDir => String::new(),
            other => other.as_os_str().to_string_lossy().into_owned(),
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// A field that two config layouts spell differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayoutField {
    /// The field's name as this tool reports it (the flat spelling).
    pub name: &'static str,
    /// transformers 4.57-style location.
    pub flat: &'static [&'static str],
    /// transformers 5-style location.
    pub nested: &'static [&'static str],
}

/// The fields whose location differs between the flat and the nested layout.
pub const LAYOUT_FIELDS: &[LayoutField] = &[
    LayoutField {
        name: "block_size",
        flat: &["block_size"],
        nested: &["dflash_config", "block_size"],
    },
    LayoutField {
        name: "rope_theta",
        flat: &["rope_theta"],
        nested: &["rope_parameters", "rope_theta"],
    },
];

/// Which layout a config uses for one [`LayoutField`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    Flat,
    Nested,
    /// Both spellings present (loaders disagree on which wins).
    Both,
    Absent,
}

impl Layout {
    pub fn as_str(self) -> &'static str {
        match self {
            Layout::Flat => "flat",
            Layout::Nested => "nested",
            Layout::Both => "flat and nested",
            Layout::Absent => "absent",
        }
    }
}

/// The node at `keys` under `root` ([`Path::lookup`] of [`path_of`], without building the
/// path: the rules ask this of every config, and most answers are "absent", issue 44).
pub fn get_in<'a>(root: &'a Node, keys: &[&str]) -> Option<&'a Node> {
    keys.iter().try_fold(root, |node, key| node.get(key))
}

pub fn path_of(keys: &[&str]) -> Path {
    // Built in one allocation of its segments (the keys are held inline); `Path::child`
    // copies the path so far for each key (lint's rules build one of these for every field
    // they look up).
    Path(keys.iter().map(|k| Segment::Key((*k).into())).collect())
}

impl LayoutField {
    pub fn flat_path(&self) -> Path {
        path_of(self.flat)
    }

    pub fn nested_path(&self) -> Path {
        path_of(self.nested)
    }

    pub fn layout_in(&self, root: &Node) -> Layout {
        let flat = get_in(root, self.flat).is_some();
        let nested = get_in(root, self.nested).is_some();
        match (flat, nested) {
            (true, true) => Layout::Both,
            (true, false) => Layout::Flat,
            (false, true) => Layout::Nested,
            (false, false) => Layout::Absent,
        }
    }

    /// The value and the path it was found at, preferring the flat spelling.
    pub fn find<'a>(&self, root: &'a Node) -> Option<(Path, &'a Node)> {
        if let Some(n) = get_in(root, self.flat) {
            return Some((self.flat_path(), n));
        }
        get_in(root, self.nested).map(|n| (self.nested_path(), n))
    }
}

/// The layout field called `name`.
pub fn layout_field(name: &str) -> Option<&'static LayoutField> {
    LAYOUT_FIELDS.iter().find(|f| f.name == name)
}

/// Reads a field that may sit in either layout (`block_size`, `rope_theta`), or a plain path.
pub fn field<'a>(root: &'a Node, name: &str) -> Option<(Path, &'a Node)> {
    if let Some(f) = layout_field(name) {
        return f.find(root);
    }
    let path = Path::parse(name);
    path.lookup(root).map(|n| (path, n))
}

/// The `architectures` list as strings.
pub fn architectures(root: &Node) -> Vec<String> {
    root.get("architectures")
        .and_then(Node::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|n| n.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Every number in `root` that Python reads as NaN or an infinity: `NaN`, `Infinity`,
/// `-Infinity` (which Python's `json` writes and reads, and JSON does not have) and a float
/// past a double's range (`1e400`, read as `inf`), each with its path and its text, in the
/// order of the file. An integer literal is never one (Python's ints have no range). Only the
/// value a duplicated key ends with is looked at, as Python keeps only that one.
pub fn non_finite_numbers(root: &Node) -> Vec<(Path, String)> {
    let mut out = Vec::new();
    // Nearly every config holds none, and that is told without building a path and a set of
    // keys for every member (the walk was a sixth of `check`'s instructions, twice a drafter:
    // lint and the comparison's report, issue 44).
    if holds_non_finite(root) {
        walk_non_finite(root, &Path::root(), &mut out);
    }
    out
}

/// Whether any number in `node` is one [`non_finite_numbers`] reports, duplicated keys
/// included: nothing allocated.
fn holds_non_finite(node: &Node) -> bool {
    match &node.value {
        Value::Number(n) => is_non_finite(n),
        Value::Array(items) => items.iter().any(holds_non_finite),
        Value::Object(members) => members.iter().any(|m| holds_non_finite(&m.value)),
        _ => false,
    }
}

fn is_non_finite(n: &crate::json::Number) -> bool {
    !n.value.is_finite() && !is_integer_text(&n.text)
}

fn walk_non_finite(node: &Node, at: &Path, out: &mut Vec<(Path, String)>) {
    match &node.value {
        Value::Number(n) if is_non_finite(n) => {
            out.push((at.clone(), n.text.to_string()));
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk_non_finite(item, &at.index(i), out);
            }
        }
        Value::Object(members) => {
            let mut seen = std::collections::HashSet::new();
            let last: Vec<bool> = members
                .iter()
                .rev()
                .map(|m| seen.insert(m.key.as_str()))
                .collect();
            for (m, is_last) in members.iter().zip(last.into_iter().rev()) {
                if is_last {
                    walk_non_finite(&m.value, &at.child(&m.key), out);
                }
            }
        }
        _ => {}
    }
}

/// An integer literal (`-12`, `340282366920938463463374607431768211456`): no `.`, exponent or
/// letter.
fn is_integer_text(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Whether `root` is shaped like a model's `config.json`: an object whose `architectures` is a
/// non-empty list of names, or whose `model_type` is a non-empty name. transformers writes at
/// least one of them into every config it saves (`PretrainedConfig.to_dict` keeps the class's
/// `model_type`; `save_pretrained` records `architectures`), as do the speculators and EAGLE
/// exports; every config in the repository's fixtures and references has one. A credential or
/// settings file has neither, so it is never taken for an authority (a pin file's `against`).
pub fn is_model_config(root: &Node) -> bool {
    let name = |n: &Node| n.as_str().is_some_and(|s| !s.is_empty());
    let architectures = root
        .get("architectures")
        .and_then(Node::as_array)
        .is_some_and(|a| !a.is_empty() && a.iter().all(name));
    architectures || root.get("model_type").is_some_and(name)
}

/// Whether a quantization method (a `quant_method`, or an engine's `--quantization` value) is
/// AWQ or GPTQ (and their Marlin / MoE-WNA16 kernels, and AutoRound's GPTQ export).
pub fn is_awq_gptq_method(method: &str) -> bool {
    matches!(
        method.to_ascii_lowercase().as_str(),
        "awq" | "awq_marlin" | "gptq" | "gptq_marlin" | "moe_wna16" | "auto-round"
    )
}

/// What a model's `quantization_config` says, as far as the rules care: the method, the
/// scheme (ModelOpt's `quant_algo`, compressed-tensors' `format`), the bits and group size,
/// whether the weights were rotated (QuaRot, SpinQuant: the hidden states the target hands a
/// drafter then live in a rotated basis), and the modules left unquantized.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct QuantFacts {
    /// `quant_method`, lower-cased (`awq`, `gptq`, `compressed-tensors`, `modelopt`, `fp8`,
    /// `mxfp4`, `bitsandbytes`); `unknown` when the config has none.
    pub method: String,
    /// `quant_algo` / `moe_quant_algo` / `format` / `fmt`, upper-cased (`NVFP4`, `FP8`,
    /// `PACK_QUANTIZED`).
    pub schemes: Vec<String>,
    pub bits: Option<u64>,
    pub group_size: Option<u64>,
    /// A rotation marker: a key naming `rotat`, `quarot`, `spinquant` or `hadamard` whose value
    /// is not false/null/empty, or a string value naming QuaRot or SpinQuant.
    pub rotated: bool,
    /// `ignore`, `modules_to_not_convert`, `exclude_modules`, `exclude`.
    pub excluded: Vec<String>,
}

impl QuantFacts {
    /// Reads `quantization_config` from a config's top level (or its `text_config`), else MLX's
    /// `quantization` ([`quantization_node`]); `None` when there is neither or it is not an
    /// object.
    pub fn from_root(root: &Node) -> Option<QuantFacts> {
        let q = quantization_node(root)?;
        let text = |k: &str| q.get(k).and_then(Node::as_str).map(str::to_string);
        let mut schemes = Vec::new();
        for k in ["quant_algo", "moe_quant_algo", "format", "fmt"] {
            if let Some(v) = text(k) {
                schemes.push(v.to_ascii_uppercase());
            }
        }
        // compressed-tensors keeps the scheme in config_groups.*.format / weights.num_bits.
        let mut bits = q.get("bits").and_then(Node::as_u64);
        let mut group_size = q.get("group_size").and_then(Node::as_u64);
        if let Some(groups) = q.get("config_groups").and_then(Node::as_object) {
            for g in groups {
                if let Some(f) = g.value.get("format").and_then(Node::as_str) {
                    schemes.push(f.to_ascii_uppercase());
                }
                if let Some(w) = g.value.get("weights") {
                    bits = bits.or_else(|| w.get("num_bits").and_then(Node::as_u64));
                    group_size = group_size.or_else(|| w.get("group_size").and_then(Node::as_u64));
                }
            }
        }
        let excluded = [
            "ignore",
            "modules_to_not_convert",
            "exclude_modules",
            "exclude",
        ]
        .iter()
        .filter_map(|k| q.get(k).and_then(Node::as_array))
        .flatten()
        .filter_map(|n| n.as_str().map(str::to_string))
        .chain(mlx_unquantized(root))
        .collect();
        if mlx(root) {
            // MLX's `mode` (`affine`, `mxfp4`) is its scheme.
            schemes.extend(text("mode").map(|m| m.to_ascii_uppercase()));
        }
        let method = text("quant_method")
            .map(|m| m.to_ascii_lowercase())
            .or_else(|| mlx(root).then(|| "mlx".to_string()))
            .unwrap_or_else(|| "unknown".to_string());
        Some(QuantFacts {
            method: method.clone(),
            schemes,
            bits,
            group_size,
            // FP-Quant (transformers' FPQuantConfig) names `hadamard_group_size`, but its Hadamard
            // matrices are per linear layer (`<module>.forward_hadamard_matrix`), folded into that
            // layer's input and weight, so its output and the hidden states between layers are
            // not rotated.
            rotated: method != "fp_quant" && rotation_marker(q, 0),
            excluded,
        })
    }

    /// AWQ or GPTQ (and their Marlin / MoE-WNA16 kernels, and AutoRound's GPTQ export): integer
    /// weights whose loaders SGLang hands a drafter that has no config of its own.
    pub fn is_awq_gptq(&self) -> bool {
        is_awq_gptq_method(&self.method)
    }

    /// NVFP4 (ModelOpt's `quant_algo` / `moe_quant_algo`, or a compressed-tensors `nvfp4`
    /// group format).
    pub fn is_nvfp4(&self) -> bool {
        self.method == "modelopt_fp4" || self.schemes.iter().any(|s| s.contains("NVFP4"))
    }

    /// `awq, 4 bits, group 128` — what the config says, for messages.
    pub fn describe(&self) -> String {
        let mut parts = vec![self.method.clone()];
        parts.extend(self.schemes.iter().cloned());
        if let Some(b) = self.bits {
            parts.push(format!("{b} bits"));
        }
        if let Some(g) = self.group_size {
            parts.push(format!("group {g}"));
        }
        if self.rotated {
            parts.push("rotated".into());
        }
        parts.join(", ")
    }
}

/// A config's quantization object: `quantization_config` at the top level or under
/// `text_config`, else MLX's `quantization` there. MLX converters write `quantization` (mlx-lm's
/// `quantize_model`: `group_size`, `bits`, `mode`, and one entry per module quantized otherwise);
/// newer ones copy it to `quantization_config` for the Hub's tree, older ones do not: either
/// declares the checkpoint quantized.
pub fn quantization_node(root: &Node) -> Option<&Node> {
    let text = root.get("text_config");
    ["quantization_config", "quantization"]
        .iter()
        .find_map(|k| {
            root.get(k)
                .or_else(|| text.and_then(|t| t.get(k)))
                .filter(|n| n.as_object().is_some())
        })
}

/// MLX's `quantization` object (top level or `text_config`), when the config has one.
fn mlx_quantization(root: &Node) -> Option<&Node> {
    root.get("quantization")
        .or_else(|| root.get("text_config")?.get("quantization"))
        .filter(|n| n.as_object().is_some())
}

/// An MLX checkpoint: a `quantization` object and no `quant_method` in the quantization read.
fn mlx(root: &Node) -> bool {
    mlx_quantization(root).is_some()
        && quantization_node(root).is_some_and(|q| q.get("quant_method").is_none())
}

/// The modules MLX's per-module entries leave unquantized (`"model.layers.0.mlp.gate": false`:
/// mlx-lm's loader takes an entry's value as the module's quantization, `false` none).
fn mlx_unquantized(root: &Node) -> Vec<String> {
    let Some(q) = mlx_quantization(root).and_then(Node::as_object) else {
        return Vec::new();
    };
    if !mlx(root) {
        return Vec::new();
    }
    q.iter()
        .filter(|m| m.value.as_bool() == Some(false))
        .map(|m| m.key.clone())
        .collect()
}

/// Whether a quantization config (to a small depth) marks rotated weights.
fn rotation_marker(node: &Node, depth: usize) -> bool {
    const KEYS: [&str; 4] = ["rotat", "quarot", "spinquant", "hadamard"];
    if depth > 4 {
        return false;
    }
    let truthy = |n: &Node| {
        !(n.is_null()
            || n.as_bool() == Some(false)
            || n.as_str().is_some_and(str::is_empty)
            || n.as_array().is_some_and(<[Node]>::is_empty)
            || n.as_object().is_some_and(<[crate::json::Member]>::is_empty))
    };
    if let Some(s) = node.as_str() {
        let s = s.to_ascii_lowercase();
        return s.contains("quarot") || s.contains("spinquant") || s == "rotation";
    }
    if let Some(items) = node.as_array() {
        return items.iter().any(|i| rotation_marker(i, depth + 1));
    }
    node.as_object().is_some_and(|members| {
        members.iter().any(|m| {
            let k = m.key.to_ascii_lowercase();
            (KEYS.iter().any(|w| k.contains(w)) && truthy(&m.value))
                || rotation_marker(&m.value, depth + 1)
        })
    })
}

/// A config's rotary embedding as its model builds it: the base, and the scaling's type and
/// factor. Both layouts are read: transformers 4.57's top-level `rope_theta` + `rope_scaling`,
/// transformers 5's `rope_parameters` (which holds the base and the scaling together).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct RopeFacts {
    /// `rope_theta` (`None` when absent: loaders then pick their own default).
    pub theta: Option<f64>,
    /// The scaling's `rope_type` (older files: `type`): `yarn`, `llama3`, `linear`, `dynamic`;
    /// `None` for no scaling, `"default"` included.
    pub scaling: Option<String>,
    /// The scaling's `factor`, when there is a scaling.
    pub factor: Option<f64>,
}

impl RopeFacts {
    /// The rotary embedding `node` (a config, or its text model's config) declares; `None` when
    /// it declares none of base, scaling type and factor.
    pub fn read(node: &Node) -> Option<RopeFacts> {
        let object = |key: &str| node.get(key).filter(|n| n.as_object().is_some());
        let params = object("rope_parameters");
        let scaling = object("rope_scaling").or(params);
        let number = |n: Option<&Node>| {
            n.and_then(Node::as_number)
                .map(|n| n.value)
                .filter(|v| v.is_finite())
        };
        let theta = number(node.get("rope_theta"))
            .or_else(|| number(params.and_then(|p| p.get("rope_theta"))));
        let kind = scaling
            .and_then(|s| s.get("rope_type").or_else(|| s.get("type")))
            .and_then(Node::as_str)
            .filter(|t| *t != "default")
            .map(str::to_string);
        let factor = kind
            .as_ref()
            .and_then(|_| number(scaling.and_then(|s| s.get("factor"))));
        let facts = RopeFacts {
            theta,
            scaling: kind,
            factor,
        };
        (facts != RopeFacts::default()).then_some(facts)
    }
}

/// Facts about the target model that checks need, from its `config.json`.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct TargetFacts {
    /// Where the facts come from (a path, or a built-in table's name).
    pub source: String,
    /// The text model's `model_type` (`qwen3_5_text`, `llama`), where the facts were read.
    pub model_type: Option<String>,
    pub num_hidden_layers: Option<u64>,
    pub hidden_size: Option<u64>,
    /// Embedding rows: ids at or above this do not exist.
    pub vocab_size: Option<u64>,
    pub bos_token_id: Option<u64>,
    pub eos_token_ids: Vec<u64>,
    pub pad_token_id: Option<u64>,
    /// The context length the target was built for.
    pub max_position_embeddings: Option<u64>,
    /// The target's rotary embedding (base and scaling), when its config declares one.
    pub rope: Option<RopeFacts>,
    /// The target's `architectures` (top level).
    pub architectures: Vec<String>,
    /// The target's `quantization_config`, when it has one (`None` = not quantized).
    pub quantization: Option<QuantFacts>,
    /// The JSON path each fact was read from (`num_hidden_layers` →
    /// `thinker_config.text_config.num_hidden_layers`), so a user can check it; empty for
    /// facts that come from a built-in table rather than a file.
    pub origins: std::collections::BTreeMap<String, String>,
}

/// Where multimodal and composite targets keep their text model's config, most specific first:
/// Qwen3-Omni's `thinker_config.text_config`, Qwen3.5/3.6 and Llama 4's `text_config`,
/// InternVL's `llm_config`.
const TEXT_CONFIG_PATHS: &[&[&str]] = &[
    &["thinker_config", "text_config"],
    &["text_config"],
    &["llm_config"],
];

impl TargetFacts {
    /// Reads the target facts from a target model config, looking into its text model's
    /// config first. The layer count is `num_hidden_layers`, or `num_layers` (LongCat).
    pub fn from_config(config: &ConfigFile) -> TargetFacts {
        let root = config.root();
        let text = TEXT_CONFIG_PATHS.iter().find_map(|keys| {
            path_of(keys)
                .lookup(root)
                .filter(|n| n.as_object().is_some())
                .map(|n| (keys.join("."), n))
        });
        // The sub-config's value first, then the root's, skipping nulls; with the path read.
        let pick = |key: &str| -> Option<(String, &Node)> {
            text.as_ref()
                .and_then(|(prefix, t)| {
                    t.get(key)
                        .filter(|n| !n.is_null())
                        .map(|n| (format!("{prefix}.{key}"), n))
                })
                .or_else(|| {
                    root.get(key)
                        .filter(|n| !n.is_null())
                        .map(|n| (key.to_string(), n))
                })
        };
        let mut origins = std::collections::BTreeMap::new();
        let mut number = |name: &str, keys: &[&str]| -> Option<u64> {
            let (path, value) = keys
                .iter()
                .find_map(|k| pick(k).and_then(|(p, n)| n.as_u64().map(|v| (p, v))))?;
            origins.insert(name.to_string(), path);
            Some(value)
        };
        let num_hidden_layers = number("num_hidden_layers", &["num_hidden_layers", "num_layers"]);
        let hidden_size = number("hidden_size", &["hidden_size"]);
        let vocab_size = number("vocab_size", &["vocab_size"]);
        let max_position_embeddings =
            number("max_position_embeddings", &["max_position_embeddings"]);
        let pick = |key: &str| pick(key).map(|(_, n)| n);
        TargetFacts {
            source: config.path.display().to_string(),
            model_type: pick("model_type")
                .and_then(Node::as_str)
                .map(str::to_string),
            num_hidden_layers,
            hidden_size,
            vocab_size,
            bos_token_id: pick("bos_token_id").and_then(Node::as_u64),
            eos_token_ids: match pick("eos_token_id") {
                Some(n) => match n.as_array() {
                    Some(items) => items.iter().filter_map(Node::as_u64).collect(),
                    None => n.as_u64().into_iter().collect(),
                },
                None => Vec::new(),
            },
            pad_token_id: pick("pad_token_id").and_then(Node::as_u64),
            max_position_embeddings,
            // The text model's rotary embedding where it has one (Qwen3.5 keeps it in
            // `text_config.rope_parameters`), else the root's.
            rope: text
                .as_ref()
                .and_then(|(_, t)| RopeFacts::read(t))
                .or_else(|| RopeFacts::read(root)),
            architectures: architectures(root),
            quantization: QuantFacts::from_root(root),
            origins,
        }
    }

    /// Whether the target is a Qwen3.5/3.6 model (its own DFlash capture path in SGLang).
    pub fn is_qwen3_5(&self) -> bool {
        self.model_type
            .as_deref()
            .is_some_and(|m| m.starts_with("qwen3_5"))
            || self.architectures.iter().any(|a| a.starts_with("Qwen3_5"))
    }
}

#[cfg(test)]
mod tests {

    /// Under a root that is the working directory, the displayer's shortcut for a plain
    /// relative path shows what `display` shows, and every other path takes the long way to
    /// the same answer.
    #[test]
    fn the_displayers_shortcut_is_display() {
        use super::{display, working_dir, Displayer, FsPath};
        let cwd = working_dir().unwrap();
        let shown = Displayer::new(cwd);
        assert!(shown.root_is_cwd);
        let outside = cwd.parent().unwrap_or(cwd).join("elsewhere/config.json");
        let inside = cwd.join("models/x/config.json");
        let paths = [
            "models/x/config.json",
            "config.json",
            "./models/x/config.json",
            "models/./x/config.json",
            "models//x/config.json",
            "models/x/",
            "../models/config.json",
            "models/../x/config.json",
            ".hidden/config.json",
            "models/.hidden/config.json",
            "models/x y/cönfig.json",
            "",
            outside.to_str().unwrap(),
            inside.to_str().unwrap(),
        ];
        for p in paths {
            assert_eq!(
                shown.show(FsPath::new(p)),
                display(FsPath::new(p), cwd),
                "{p:?}"
            );
        }
        let elsewhere = Displayer::new(&cwd.join("models"));
        assert!(!elsewhere.root_is_cwd);
        assert_eq!(
            elsewhere.show(FsPath::new("models/x/config.json")),
            "x/config.json"
        );
    }

    /// A path taken as it is joins to what its components give.
    #[test]
    fn slash_joined_is_the_components_join() {
        use super::{components_joined, slash_joined, FsPath};
        for p in [
            "/a/b",
            "a/b",
            "./a",
            "a/./b",
            "a//b",
            "a/b/",
            "/",
            "",
            ".",
            "..",
            "a/../b",
            "/a/.hidden/b",
            "a/b.c",
            "/a/b/..",
            "a/b/.",
            ".a/b",
            "/tmp/x y/ü",
        ] {
            assert_eq!(
                slash_joined(FsPath::new(p)),
                components_joined(FsPath::new(p)),
                "{p}"
            );
        }
    }

    /// A path outside the root is shown absolute with one leading `/`, never `//`; a path
    /// inside it relative.
    #[cfg(unix)]
    #[test]
    fn display_shows_outside_paths_with_a_single_leading_slash() {
        let root = FsPath::new("/work/project");
        assert_eq!(
            display(FsPath::new("/tmp/drafters/a/config.json"), root),
            "/tmp/drafters/a/config.json"
        );
        assert_eq!(
            display(FsPath::new("/work/project/./a/config.json"), root),
            "a/config.json"
        );
    }

    use super::*;

    fn cfg(text: &str) -> ConfigFile {
        parse(FsPath::new("config.json"), text.as_bytes()).unwrap()
    }

    /// One rotary embedding in both layouts reads the same; `"default"` is no scaling.
    #[test]
    fn rope_reads_both_layouts() {
        let flat = cfg(r#"{"rope_theta": 1e6, "rope_scaling": {"type": "yarn", "factor": 4}}"#);
        let nested = cfg(
            r#"{"rope_parameters": {"rope_type": "yarn", "rope_theta": 1000000, "factor": 4.0}}"#,
        );
        let a = RopeFacts::read(flat.root()).unwrap();
        assert_eq!(Some(a.clone()), RopeFacts::read(nested.root()));
        assert_eq!(
            (a.theta, a.scaling.as_deref(), a.factor),
            (Some(1e6), Some("yarn"), Some(4.0))
        );
        let plain = cfg(r#"{"rope_parameters": {"rope_type": "default", "rope_theta": 1e4}}"#);
        let p = RopeFacts::read(plain.root()).unwrap();
        assert_eq!((p.theta, p.scaling, p.factor), (Some(1e4), None, None));
        assert_eq!(
            RopeFacts::read(cfg(r#"{"rope_scaling": null}"#).root()),
            None
        );
    }

    #[test]
    fn layout_fields_are_found_in_either_layout() {
        let flat = cfg(r#"{"block_size": 16, "rope_theta": 1e7}"#);
        let nested = cfg(
            r#"{"dflash_config": {"block_size": 16}, "rope_parameters": {"rope_theta": 10000000}}"#,
        );
        let f = layout_field("block_size").unwrap();
        assert_eq!(f.layout_in(flat.root()), Layout::Flat);
        assert_eq!(f.layout_in(nested.root()), Layout::Nested);
        let (p, n) = field(nested.root(), "rope_theta").unwrap();
        assert_eq!(p.to_string(), "rope_parameters.rope_theta");
        assert_eq!(n.as_u64(), Some(10_000_000));
    }

    #[test]
    fn quantization_configs_are_read() {
        let none = cfg(r#"{"hidden_size": 8}"#);
        assert_eq!(TargetFacts::from_config(&none).quantization, None);
        let awq = cfg(
            r#"{"quantization_config": {"quant_method": "AWQ", "bits": 4, "group_size": 128, "modules_to_not_convert": ["mtp"]}}"#,
        );
        let q = TargetFacts::from_config(&awq).quantization.unwrap();
        assert!(q.is_awq_gptq() && !q.is_nvfp4() && !q.rotated);
        assert_eq!(q.describe(), "awq, 4 bits, group 128");
        assert_eq!(q.excluded, vec!["mtp"]);
        let nvfp4 = cfg(
            r#"{"quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16}}"#,
        );
        assert!(QuantFacts::from_root(nvfp4.root()).unwrap().is_nvfp4());
        let ct = cfg(
            r#"{"quantization_config": {"quant_method": "compressed-tensors", "config_groups": {"group_0": {"format": "nvfp4-pack-quantized", "weights": {"num_bits": 4, "group_size": 16}}}}}"#,
        );
        let q = QuantFacts::from_root(ct.root()).unwrap();
        assert!(q.is_nvfp4());
        assert_eq!((q.bits, q.group_size), (Some(4), Some(16)));
        for (text, rotated) in [
            (r#"{"quant_method": "ascend", "quarot": true}"#, true),
            (
                r#"{"quant_method": "quark", "algo_config": [{"name": "rotation"}]}"#,
                true,
            ),
            (
                r#"{"quant_method": "quark", "algo_config": [{"name": "awq"}]}"#,
                false,
            ),
            (r#"{"quant_method": "fp8", "rotation": null}"#, false),
            (
                r#"{"quant_method": "fp8", "rotation": {"r1": "hadamard"}}"#,
                true,
            ),
            // Issue 32: FP-Quant's Hadamard transforms are per linear layer (transformers 5.25.0
            // FPQuantConfig, integrations/fp_quant.py): the residual stream is not rotated.
            (
                r#"{"quant_method": "fp_quant", "forward_dtype": "mxfp4", "hadamard_group_size": 32, "transform_init": "hadamard"}"#,
                false,
            ),
        ] {
            let c = cfg(&format!(r#"{{"quantization_config": {text}}}"#));
            assert_eq!(
                QuantFacts::from_root(c.root()).unwrap().rotated,
                rotated,
                "{text}"
            );
        }
    }

    /// MLX's `quantization` declares the quantization, alone or beside an identical
    /// `quantization_config` (no `quant_method`); a per-module `false` leaves a module
    /// unquantized, a per-module object quantizes it otherwise.
    #[test]
    fn mlx_quantization_is_read() {
        let only = cfg(
            r#"{"quantization": {"group_size": 64, "bits": 4, "mode": "affine", "model.layers.0.mlp.gate": false, "lm_head": {"group_size": 64, "bits": 8}}}"#,
        );
        let q = QuantFacts::from_root(only.root()).unwrap();
        assert_eq!(q.describe(), "mlx, AFFINE, 4 bits, group 64");
        assert_eq!(q.excluded, vec!["model.layers.0.mlp.gate"]);
        let both = cfg(
            r#"{"quantization": {"group_size": 64, "bits": 8, "mode": "affine"}, "quantization_config": {"group_size": 64, "bits": 8, "mode": "affine"}}"#,
        );
        assert_eq!(
            QuantFacts::from_root(both.root()).unwrap().describe(),
            "mlx, AFFINE, 8 bits, group 64"
        );
        let nested = cfg(r#"{"text_config": {"quantization": {"bits": 8}}}"#);
        assert_eq!(QuantFacts::from_root(nested.root()).unwrap().method, "mlx");
        // A quant_method is the quantizer's, whatever else the config holds.
        let awq = cfg(
            r#"{"quantization": {"bits": 4}, "quantization_config": {"quant_method": "awq", "bits": 4}}"#,
        );
        assert_eq!(QuantFacts::from_root(awq.root()).unwrap().method, "awq");
    }

    #[test]
    fn target_facts_prefer_text_config() {
        let t = cfg(
            r#"{"vocab_size": 1, "text_config": {"num_hidden_layers": 64, "hidden_size": 5120, "vocab_size": 248320, "eos_token_id": [248044, 248046]}}"#,
        );
        let facts = TargetFacts::from_config(&t);
        assert_eq!(facts.num_hidden_layers, Some(64));
        assert_eq!(facts.vocab_size, Some(248320));
        assert_eq!(facts.eos_token_ids, vec![248044, 248046]);
        // Each number says where it was read: the text sub-config, not the root's vocab_size.
        assert_eq!(facts.origins["vocab_size"], "text_config.vocab_size");
        assert_eq!(
            facts.origins["num_hidden_layers"],
            "text_config.num_hidden_layers"
        );
    }

    /// LongCat's `num_layers`, Qwen3-Omni's `thinker_config.text_config` and InternVL's
    /// `llm_config` give a layer count too.
    #[test]
    fn target_facts_read_composite_and_renamed_layer_counts() {
        let longcat = cfg(r#"{"num_layers": 28, "hidden_size": 6144}"#);
        assert_eq!(
            TargetFacts::from_config(&longcat).num_hidden_layers,
            Some(28)
        );
        let omni = cfg(
            r#"{"thinker_config": {"text_config": {"num_hidden_layers": 48, "hidden_size": 2048, "vocab_size": 151936}}}"#,
        );
        let f = TargetFacts::from_config(&omni);
        assert_eq!(
            (f.num_hidden_layers, f.vocab_size),
            (Some(48), Some(151936))
        );
        assert_eq!(
            f.origins["num_hidden_layers"],
            "thinker_config.text_config.num_hidden_layers"
        );
        assert_eq!(
            TargetFacts::from_config(&longcat).origins["num_hidden_layers"],
            "num_layers"
        );
        let internvl = cfg(r#"{"llm_config": {"num_hidden_layers": 36, "model_type": "qwen3"}}"#);
        let f = TargetFacts::from_config(&internvl);
        assert_eq!(f.num_hidden_layers, Some(36));
        assert_eq!(f.model_type.as_deref(), Some("qwen3"));
    }

    #[test]
    fn top_level_must_be_an_object() {
        let err = parse(FsPath::new("c.json"), b"[1]").unwrap_err();
        assert!(err.message.contains("an array"), "{}", err.message);
    }
}
