//! The ggml tensor types a GGUF tensor table names: id, name, and the block layout (elements
//! per block, bytes per block) that gives a tensor's byte size, so the reader can check that
//! every tensor lies inside the file without reading its data.
//!
//! Read from llama.cpp's `gguf-py/gguf/constants.py` (`GGMLQuantizationType`,
//! `GGML_QUANT_SIZES`) at the commit vendored in `llama-cpp-python==0.3.36` (ggml-org/llama.cpp
//! 0c1e57098bba43ac29e6e3b677cdceebdd22334f). Ids without a row (4 and 5, the removed
//! `Q4_2`/`Q4_3`; 31–33, the removed `Q4_0_4_4`-style repacks; anything newer than that commit)
//! are kept as `type N` with no size: their tensors are listed but not bounds-checked.

/// Elements per 256-element super-block (`QK_K`).
const QK_K: u64 = 256;

/// One ggml type: `(id, name, elements per block, bytes per block)`.
const TYPES: &[(u32, &str, u64, u64)] = &[
    (0, "F32", 1, 4),
    (1, "F16", 1, 2),
    (2, "Q4_0", 32, 2 + 16),
    (3, "Q4_1", 32, 2 + 2 + 16),
    (6, "Q5_0", 32, 2 + 4 + 16),
    (7, "Q5_1", 32, 2 + 2 + 4 + 16),
    (8, "Q8_0", 32, 2 + 32),
    (9, "Q8_1", 32, 2 + 2 + 32),
    (10, "Q2_K", 256, 2 + 2 + QK_K / 16 + QK_K / 4),
    (11, "Q3_K", 256, 2 + QK_K / 4 + QK_K / 8 + 12),
    (12, "Q4_K", 256, 2 + 2 + QK_K / 2 + 12),
    (13, "Q5_K", 256, 2 + 2 + QK_K / 2 + QK_K / 8 + 12),
    (14, "Q6_K", 256, 2 + QK_K / 2 + QK_K / 4 + QK_K / 16),
    (15, "Q8_K", 256, 4 + QK_K + QK_K / 8),
    (16, "IQ2_XXS", 256, 2 + QK_K / 4),
    (17, "IQ2_XS", 256, 2 + QK_K / 4 + QK_K / 32),
    (18, "IQ3_XXS", 256, 2 + QK_K / 4 + QK_K / 8),
    (19, "IQ1_S", 256, 2 + QK_K / 8 + QK_K / 16),
    (20, "IQ4_NL", 32, 2 + 16),
    (21, "IQ3_S", 256, 2 + QK_K / 4 + QK_K / 8 + QK_K / 32 + 4),
    (22, "IQ2_S", 256, 2 + QK_K / 4 + QK_K / 16),
    (23, "IQ4_XS", 256, 2 + 2 + QK_K / 2 + QK_K / 64),
    (24, "I8", 1, 1),
    (25, "I16", 1, 2),
    (26, "I32", 1, 4),
    (27, "I64", 1, 8),
    (28, "F64", 1, 8),
    (29, "IQ1_M", 256, QK_K / 8 + QK_K / 16 + QK_K / 32),
    (30, "BF16", 1, 2),
    (34, "TQ1_0", 256, 2 + 4 * 13),
    (35, "TQ2_0", 256, 2 + 64),
    (39, "MXFP4", 32, 1 + 16),
    (40, "NVFP4", 64, 4 + 32),
    (41, "Q1_0", 128, 2 + 16),
    (42, "Q2_0", 64, 2 + 16),
];

/// A tensor's ggml type as the table knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GgmlType {
    pub id: u32,
    pub name: &'static str,
    pub block_elements: u64,
    pub block_bytes: u64,
}

/// The type with this id, when the table has it.
pub fn by_id(id: u32) -> Option<GgmlType> {
    TYPES
        .iter()
        .find(|t| t.0 == id)
        .map(|&(id, name, block_elements, block_bytes)| GgmlType {
            id,
            name,
            block_elements,
            block_bytes,
        })
}

/// How a type id is shown: its name, or `type N` when the table does not have it.
pub fn name(id: u32) -> String {
    by_id(id).map_or_else(|| format!("type {id}"), |t| t.name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_sizes_positive() {
        for (i, a) in TYPES.iter().enumerate() {
            assert!(a.2 > 0 && a.3 > 0, "{a:?}");
            assert!(TYPES[i + 1..].iter().all(|b| b.0 != a.0 && b.1 != a.1));
        }
        assert_eq!(by_id(12).unwrap().name, "Q4_K");
        assert_eq!(by_id(12).unwrap().block_bytes, 144);
        assert_eq!(name(4), "type 4");
    }
}
