//! The workspace's manifests: every crate takes the workspace's lint table, so one
//! `[workspace.lints]` edit reaches all of them.

use std::path::Path;

#[test]
fn every_crate_takes_the_workspace_lints() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let top = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    assert!(
        top.contains("\n[workspace.lints.clippy]\n"),
        "the root Cargo.toml has no [workspace.lints.clippy] table"
    );
    let mut crates = 0;
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let manifest = entry.unwrap().path().join("Cargo.toml");
        let Ok(text) = std::fs::read_to_string(&manifest) else {
            continue;
        };
        crates += 1;
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        let takes = lines
            .windows(2)
            .any(|w| w == ["[lints]", "workspace = true"]);
        assert!(
            takes,
            "{} lacks `[lints] workspace = true`",
            manifest.display()
        );
    }
    assert!(crates >= 15, "{crates} crates found");
}

/// The workspace's own crates each crate's manifest names as normal dependencies
/// (`[dependencies]` and per-target `[target.….dependencies]`; not dev- or build-), by
/// folder name under `crates/`.
fn crate_graph(root: &Path) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut dirs: Vec<String> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            p.join("Cargo.toml")
                .exists()
                .then(|| p.file_name().unwrap().to_string_lossy().into_owned())
        })
        .collect();
    dirs.sort();
    let mut graph = std::collections::BTreeMap::new();
    for dir in &dirs {
        let text =
            std::fs::read_to_string(root.join("crates").join(dir).join("Cargo.toml")).unwrap();
        let mut section = String::new();
        let mut deps = std::collections::BTreeSet::new();
        for line in text.lines().map(str::trim) {
            if line.starts_with('[') {
                section = line.to_string();
                continue;
            }
            let normal = section == "[dependencies]"
                || (section.starts_with("[target.") && section.ends_with(".dependencies]"));
            if !normal {
                continue;
            }
            let key = line.split(['.', '=', ' ']).next().unwrap_or("");
            // A workspace crate is named by its folder (`wire.workspace = true`) or by
            // its package (`dualperf-wire = { path = … }`).
            let key = key.strip_prefix("dualperf-").unwrap_or(key);
            if dirs.iter().any(|d| d == key) && key != dir {
                deps.insert(key.to_string());
            }
        }
        graph.insert(dir.clone(), deps.into_iter().collect());
    }
    graph
}

/// docs/guide/architecture.md's dependency table is the manifests' graph: every crate,
/// each with exactly the workspace crates it depends on.
#[test]
fn the_architecture_guides_dependency_table_is_the_manifests_graph() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let guide = std::fs::read_to_string(root.join("docs/guide/architecture.md")).unwrap();
    let start =
        "<!-- crate graph: checked against the manifests by crates/cli/tests/cli/manifests.rs -->";
    let block = guide
        .split_once(start)
        .and_then(|(_, rest)| rest.split_once("```\n"))
        .and_then(|(_, rest)| rest.split_once("```"))
        .map(|(block, _)| block)
        .expect("the guide has the marked crate graph block");
    let want: String = crate_graph(&root)
        .iter()
        .map(|(c, deps)| {
            let deps = if deps.is_empty() {
                "(none)".to_string()
            } else {
                deps.join(" ")
            };
            format!("{c:<9}-> {deps}\n")
        })
        .collect();
    assert_eq!(
        block, want,
        "docs/guide/architecture.md's crate graph differs from the manifests; it should read:\n{want}"
    );
}
