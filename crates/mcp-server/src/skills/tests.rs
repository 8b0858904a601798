use std::path::Path;

use mcp_types::extensions::skills::SkillResources;

use super::*;

fn write(root: &Path, path: &str, content: &str) {
    let full = root.join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, content).unwrap();
}

fn manifest(name: &str) -> String {
    format!("---\nname: {name}\ndescription: The {name} skill\n---\n# {name}\n")
}

fn files(entry: &SkillEntry) -> Vec<&str> {
    match &entry.resources {
        SkillResources::Files(files) => files.iter().map(|f| f.uri.as_str()).collect(),
        SkillResources::Dynamic => Vec::new(),
    }
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcpkit-skills-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_directory_of_skills_is_served_with_digests_and_directories() {
    let root = temp("tree");
    write(&root, "pdf-processing/SKILL.md", &manifest("pdf-processing"));
    write(&root, "pdf-processing/references/FORMS.md", "forms");
    write(&root, "pdf-processing/.git/config", "hidden");
    write(&root, "acme/billing/refunds/SKILL.md", &manifest("refunds"));
    write(&root, "acme/billing/refunds/nested-one/SKILL.md", &manifest("nested-one"));
    let mut skills = Skills::from_dir(&root);
    assert!(skills.take_errors().is_empty());
    let uris: Vec<&str> = skills.entries().map(|e| e.uri.as_str()).collect();
    assert_eq!(
        uris,
        [
            "skill://acme/billing/refunds/SKILL.md",
            "skill://acme/billing/refunds/nested-one/SKILL.md",
            "skill://pdf-processing/SKILL.md"
        ]
    );
    let refunds = skills.get("skill://acme/billing/refunds/SKILL.md").unwrap();
    assert_eq!(
        files(&refunds.entry),
        ["skill://acme/billing/refunds/SKILL.md", "skill://acme/billing/refunds/nested-one/SKILL.md"],
        "a nested skill's files are the enclosing skill's too"
    );
    let pdf = skills.get("skill://pdf-processing/SKILL.md").unwrap();
    assert_eq!(
        files(&pdf.entry),
        ["skill://pdf-processing/SKILL.md", "skill://pdf-processing/references/FORMS.md"]
    );
    let forms = pdf.entry.file("skill://pdf-processing/references/FORMS.md").unwrap();
    assert_eq!(forms.size, 5);
    assert_eq!(forms.digest, mcp_skills::digest(b"forms"));
    assert_eq!(forms.digest.len(), 7 + 64);

    let children = |uri: &str| -> Vec<(String, Option<String>)> {
        skills.directories[uri].iter().map(|r| (r.uri.clone(), r.mime_type.clone())).collect()
    };
    let dir = |uri: &str| (uri.to_owned(), Some(DIRECTORY_MIME_TYPE.to_owned()));
    assert_eq!(
        children("skill://pdf-processing"),
        [
            ("skill://pdf-processing/SKILL.md".to_owned(), Some("text/markdown".to_owned())),
            dir("skill://pdf-processing/references")
        ]
    );
    assert_eq!(children("skill://acme"), [dir("skill://acme/billing")]);
    assert!(!skills.directories.contains_key("skill://pdf-processing/SKILL.md"));
}

#[test]
fn what_a_skill_may_not_be() {
    let refused = |files: Vec<(&str, &str)>, path: &str| {
        let files = files.into_iter().map(|(p, c)| (p.to_owned(), c.as_bytes().to_vec())).collect();
        let mut skills = Skills::new().files(path, files);
        let errors = skills.take_errors();
        assert_eq!(errors.len(), 1, "{path}: {errors:?}");
        errors[0].to_string()
    };
    let ok = manifest("good");
    assert!(refused(vec![("README.md", "x")], "good").contains("no SKILL.md"));
    assert!(refused(vec![("SKILL.md", "# no frontmatter")], "good").contains("frontmatter"));
    assert!(refused(vec![("SKILL.md", &manifest("other"))], "good").contains("names it"));
    assert!(refused(vec![("SKILL.md", &manifest("Bad_Name"))], "Bad_Name").contains("no valid skill name"));
    assert!(refused(vec![("SKILL.md", &ok)], "a/../good").contains("segment"));
    assert!(refused(vec![("SKILL.md", &ok), ("../escape", "x")], "good").contains("plain path"));
    let many: Vec<(String, Vec<u8>)> = (0..=MAX_FILES).map(|i| (format!("f{i}"), Vec::new())).collect();
    let mut skills = Skills::new().files("good", many);
    assert!(skills.take_errors()[0].to_string().contains("at most 512"));
    // A skill is served once.
    let twice = Skills::new()
        .files("good", vec![("SKILL.md".into(), ok.clone().into_bytes())])
        .files("good", vec![("SKILL.md".into(), ok.into_bytes())]);
    assert_eq!(twice.len(), 1);
    assert!(twice.errors[0].to_string().contains("already served"));
}

#[cfg(unix)]
#[test]
fn symbolic_links_are_never_followed() {
    let root = temp("links");
    let outside = temp("links-outside");
    write(&outside, "secret.txt", "secret");
    write(&root, "linked/SKILL.md", &manifest("linked"));
    std::os::unix::fs::symlink(outside.join("secret.txt"), root.join("linked/secret.txt")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("linked/outside")).unwrap();
    let mut skills = Skills::from_dir(&root);
    assert!(skills.take_errors().is_empty());
    let linked = skills.get("skill://linked/SKILL.md").unwrap();
    assert_eq!(files(&linked.entry), ["skill://linked/SKILL.md"]);
    let served = skills.serve_files(Resources::new());
    assert!(served.resolve("skill://linked/secret.txt").is_none());
    assert!(served.resolve("skill://linked/outside/secret.txt").is_none());
}

#[test]
fn names_with_odd_characters_are_percent_encoded_and_found_only_as_written() {
    let skills = Skills::new().files(
        "tools",
        vec![("SKILL.md".into(), manifest("tools").into_bytes()), ("notes/a b%.md".into(), b"x".to_vec())],
    );
    let entry = &skills.get("skill://tools/SKILL.md").unwrap().entry;
    assert_eq!(files(entry)[1], "skill://tools/notes/a%20b%25.md");
    assert_eq!(encode("é"), "%C3%A9");
    let mut skills = skills;
    let served = skills.serve_files(Resources::new());
    assert!(served.resolve("skill://tools/notes/a%20b%25.md").is_some());
    assert!(served.resolve("skill://tools/notes/a b%.md").is_none());
    assert!(served.resolve("skill://tools/notes/../SKILL.md").is_none());
    assert!(served.resolve("skill://tools/%2e%2e/SKILL.md").is_none());
}
