//! `acceptance`: a running server's speculative-decoding acceptance, from its Prometheus
//! metrics. (Being built; see issue 13.)

crate::declare_codes! {
    /// Codes of the acceptance check.
    pub enum AcceptanceCode {}
}
