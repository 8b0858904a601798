//! The skills extension's fixtures (`io.modelcontextprotocol/skills`, SEP-2640): two skills
//! the suite's `sep-2640-skills-*` scenarios find through `skills/list` — one with
//! subdirectories (`resources/directory/read`), one under an organizational prefix.

use mcp_server::Skills;

/// The fixture skills, their files compiled into the server.
pub fn skills() -> Skills {
    // `(path in the skill, content)` of the file at `skills/{skill}/{path}` in this package.
    macro_rules! fixture {
        ($skill:literal, $path:literal) => {
            ($path.to_owned(), include_bytes!(concat!("../skills/", $skill, "/", $path)).to_vec())
        };
    }
    Skills::new()
        .files(
            "pdf-processing",
            vec![
                fixture!("pdf-processing", "SKILL.md"),
                fixture!("pdf-processing", "references/FORMS.md"),
                fixture!("pdf-processing", "scripts/extract.py"),
            ],
        )
        .files(
            "acme/billing/refunds",
            vec![
                fixture!("acme/billing/refunds", "SKILL.md"),
                fixture!("acme/billing/refunds", "examples/email.md"),
            ],
        )
}
