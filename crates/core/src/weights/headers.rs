//! The parsed safetensors headers of one drafter's weights, as the rules see them: each
//! shard's tensors (name, dtype, shape, offsets), the index when the weights are sharded, and
//! totals over them. Data only: the main crate reads the files and the Hub and parses each
//! header into these (`weights::header`); nothing here reads a file.

use std::collections::BTreeMap;

use serde::Serialize;

use super::index::Index;

/// One tensor of a header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tensor {
    /// The name as written in the file.
    pub name: String,
    /// `BF16`, `F32`, `I64`, ... as written in the file.
    pub dtype: String,
    pub shape: Vec<u64>,
    /// Start and end of its bytes in the data section (after the header).
    pub data_offsets: [u64; 2],
    /// The file that holds it (`model-00001-of-00003.safetensors`).
    pub shard: String,
}

impl Tensor {
    /// Number of elements (the product of the shape; 1 for a scalar).
    pub fn parameters(&self) -> u64 {
        self.shape.iter().product()
    }

    /// Bytes of data.
    pub fn bytes(&self) -> u64 {
        self.data_offsets[1] - self.data_offsets[0]
    }
}

/// One parsed `.safetensors` file header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Shard {
    /// The file's name inside the model directory or repo (`model.safetensors`).
    pub file: String,
    /// How messages name it: a path as the user gave it, or `ORG/NAME@SHA/FILE`.
    pub display: String,
    /// `n`: the JSON header's length.
    pub header_bytes: u64,
    /// The whole file's size: `8 + n + data`.
    pub file_size: u64,
    /// `__metadata__` (string to string), if any.
    pub metadata: BTreeMap<String, String>,
    /// In data-offset order.
    pub tensors: Vec<Tensor>,
}

/// Every header of one drafter's weights.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WeightsHeaders {
    /// The directory, or `ORG/NAME@SHA`.
    pub source: String,
    /// The index, when the weights are sharded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<Index>,
    /// One per file read, in the index's order.
    pub shards: Vec<Shard>,
    /// Shards the index names that do not exist.
    pub missing_shards: Vec<String>,
    /// For a Hub source: requests sent and body bytes received for the headers and the
    /// vocabulary maps' data (0 when cached).
    pub requests: usize,
    pub body_bytes: u64,
    /// The data of the vocabulary maps (`d2t`, `t2d`) the reader could read: the only tensor
    /// data ever read ([`super::maps::wanted`] says which). Empty where nothing was read (a
    /// shard absent, offline with nothing cached): the value rules then do not run.
    #[serde(skip)]
    pub map_data: Vec<MapData>,
}

/// The bytes of one vocabulary-map tensor, as stored (little-endian, the header's dtype).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapData {
    /// The file that holds it, as [`Tensor::shard`].
    pub shard: String,
    /// The name as written in the file.
    pub name: String,
    pub bytes: Vec<u8>,
}

/// Totals over every tensor.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    pub tensors: usize,
    pub parameters: u64,
    /// Bytes of tensor data.
    pub bytes: u64,
    /// Bytes of the files (data, headers and length prefixes).
    pub file_bytes: u64,
    /// `(dtype, parameters, bytes)`, by dtype name.
    pub by_dtype: Vec<(String, u64, u64)>,
}

impl WeightsHeaders {
    pub fn tensors(&self) -> impl Iterator<Item = &Tensor> {
        self.shards.iter().flat_map(|s| s.tensors.iter())
    }

    /// The data read for tensor `t`, if any.
    pub fn data_of(&self, t: &Tensor) -> Option<&[u8]> {
        self.map_data
            .iter()
            .find(|d| d.shard == t.shard && d.name == t.name)
            .map(|d| d.bytes.as_slice())
    }

    pub fn totals(&self) -> Totals {
        let mut t = Totals::default();
        let mut by: std::collections::BTreeMap<&str, (u64, u64)> = Default::default();
        // Saturating: each shard is checked on its own, and sizes a Hub server claims for many
        // shards (or sub-byte dtypes, two parameters a byte) can add up past u64.
        for x in self.tensors() {
            t.tensors += 1;
            t.parameters = t.parameters.saturating_add(x.parameters());
            t.bytes = t.bytes.saturating_add(x.bytes());
            let e = by.entry(x.dtype.as_str()).or_default();
            e.0 = e.0.saturating_add(x.parameters());
            e.1 = e.1.saturating_add(x.bytes());
        }
        t.file_bytes = self
            .shards
            .iter()
            .fold(0u64, |sum, s| sum.saturating_add(s.file_size));
        t.by_dtype = by
            .into_iter()
            .map(|(d, (p, b))| (d.to_string(), p, b))
            .collect();
        t
    }

    /// How diagnostics name a file: `shard`'s display, or the index's.
    pub(crate) fn display_of(&self, shard: &str) -> String {
        self.shards
            .iter()
            .find(|s| s.file == shard)
            .map(|s| s.display.clone())
            .unwrap_or_else(|| match &self.index {
                Some(i) => i.display.clone(),
                None => shard.to_string(),
            })
    }
}
