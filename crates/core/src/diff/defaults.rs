//! Transformers' config defaults for the few keys a drafter config often leaves out, per
//! `model_type`, read from transformers 5.25.0's `configuration_<model>.py` (issue 32).
//!
//! A key one side lacks is read by the loaders as the config class's default: vLLM and SGLang
//! build the drafter's config with transformers' `AutoConfig` (and read these keys with the same
//! default themselves, e.g. `getattr(config, "attention_bias", False)`). So a key present on one
//! side with exactly that default value is not a difference any loader sees: `diff` reports it as
//! info, not as the error or warning of a key that changes what the drafter computes. Keys and
//! model types not in the table keep their severity; the table is small on purpose (each value
//! is cited in evidence/evidence.toml under `only-authority` and `only-local`).

use crate::json::Node;

/// `(model_type, key, default as JSON text)`, each read at transformers 5.25.0.
const DEFAULTS: &[(&str, &str, &str)] = &[
    // models/qwen3/configuration_qwen3.py:70,75,80
    ("qwen3", "initializer_range", "0.02"),
    ("qwen3", "attention_bias", "false"),
    ("qwen3", "attention_dropout", "0.0"),
    // models/qwen3_moe/configuration_qwen3_moe.py:85,90,93
    ("qwen3_moe", "initializer_range", "0.02"),
    ("qwen3_moe", "attention_bias", "false"),
    ("qwen3_moe", "attention_dropout", "0.0"),
    // models/llama/configuration_llama.py:71,80-82
    ("llama", "initializer_range", "0.02"),
    ("llama", "attention_bias", "false"),
    ("llama", "attention_dropout", "0.0"),
    ("llama", "mlp_bias", "false"),
];

/// The default transformers' config class for `model_type` gives `key`, when the table has it.
pub fn default_of(model_type: &str, key: &str) -> Option<Node> {
    DEFAULTS
        .iter()
        .find(|(m, k, _)| *m == model_type && *k == key)
        .map(|(_, _, text)| {
            crate::json::Document::parse(text)
                .expect("the defaults table holds valid JSON")
                .root
        })
}

/// Whether `value` (the side that has `key`) equals the default the other side's loader uses
/// for it, given that side's `model_type`.
pub fn equals_default(model_type: Option<&str>, key: &str, value: &Node) -> bool {
    model_type
        .and_then(|m| default_of(m, key))
        .is_some_and(|d| d.same_value(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(text: &str) -> Node {
        crate::json::Document::parse(text).unwrap().root
    }

    #[test]
    fn a_value_equal_to_the_class_default_is_recognised() {
        assert!(equals_default(
            Some("qwen3"),
            "attention_bias",
            &node("false")
        ));
        assert!(equals_default(
            Some("llama"),
            "attention_dropout",
            &node("0")
        ));
        assert!(!equals_default(
            Some("qwen3"),
            "attention_bias",
            &node("true")
        ));
        // Qwen2's config class has no attention_bias (its q/k/v always carry a bias).
        assert!(!equals_default(
            Some("qwen2"),
            "attention_bias",
            &node("false")
        ));
        assert!(!equals_default(None, "attention_bias", &node("false")));
    }
}
