//! How acceptance messages and reports write numbers: fixed decimals and percentages, the
//! same in every rule, the reading's errors and the human report.

pub fn fmt2(x: f64) -> String {
    format!("{x:.2}")
}

pub fn fmt3(x: f64) -> String {
    format!("{x:.3}")
}

pub fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}
