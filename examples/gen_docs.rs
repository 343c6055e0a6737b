//! Regenerates the code tables of docs/rules.md, docs/commands.md, docs/weights.md and docs/launch.md
//! from the registry, and the
//! evidence table of docs/evidence.md:
//! `cargo run --example gen_docs`. tests/docs.rs fails when the committed files are stale.

use dflash_check::registry;

fn main() -> std::io::Result<()> {
    for (file, name, body) in [
        ("docs/rules.md", "codes", registry::codes_table()),
        ("docs/rules.md", "aliases", registry::aliases_table()),
        ("docs/commands.md", "lint-rules", registry::readme_table()),
        (
            "docs/weights.md",
            "weights-codes",
            registry::family_table("weights"),
        ),
        (
            "docs/launch.md",
            "launch-codes",
            registry::family_table("launch"),
        ),
        ("docs/engines.md", "engines", registry::engines_table()),
        (
            "docs/engines.md",
            "capabilities",
            registry::capabilities_table(),
        ),
        (
            "docs/evidence.md",
            "evidence",
            dflash_check::registry::evidence_markdown(),
        ),
    ] {
        let doc = std::fs::read_to_string(file)?;
        let new = registry::replace_generated(&doc, name, &body).unwrap_or_else(|| {
            panic!("{file} lacks the <!-- BEGIN/END GENERATED: {name} --> markers")
        });
        if new != doc {
            std::fs::write(file, new)?;
            println!("updated {file}");
        }
    }
    Ok(())
}
