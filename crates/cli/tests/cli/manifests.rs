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

/// The names a crate's manifest lists as normal dependencies (`[dependencies]` and the
/// platform-specific `[target.….dependencies]` tables; not dev- or build-dependencies).
fn normal_dependencies(root: &Path, krate: &str) -> Vec<String> {
    let manifest = root.join("crates").join(krate).join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", manifest.display()));
    let mut normal = false;
    let mut names = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            normal = line == "[dependencies]"
                || (line.starts_with("[target.") && line.ends_with(".dependencies]"));
            continue;
        }
        if !normal || line.is_empty() || line.starts_with('#') {
            continue;
        }
        let name = line.split(['=', '.']).next().unwrap_or("").trim();
        if !name.is_empty() {
            names.push(name.to_string());
        }
    }
    names
}

/// The workspace crates (by directory name) `krate` depends on, directly or through
/// others, as built into a binary (normal dependencies only).
fn reachable(root: &Path, krate: &str) -> std::collections::BTreeSet<String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut todo = vec![krate.to_string()];
    while let Some(k) = todo.pop() {
        for dep in normal_dependencies(root, &k) {
            let workspace_crate = root.join("crates").join(&dep).join("Cargo.toml").exists();
            if workspace_crate && seen.insert(dep.clone()) {
                todo.push(dep);
            }
        }
    }
    seen
}

/// The dependency graph runs one way: the application layer (`runner`) does not depend
/// on the presentation crate (`report` reads the dataset type `store` defines, which
/// `runner` fills, without store's database drivers), and the exporter reaches the engine and the iperf3 port only
/// through `runner`.
#[test]
fn runner_does_not_depend_on_report_and_the_exporter_measures_through_runner() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let runner = reachable(&root, "runner");
    assert!(
        runner.contains("store") && runner.contains("engine"),
        "{runner:?}"
    );
    assert!(
        !runner.contains("report"),
        "runner depends on report (directly or through {runner:?})"
    );
    let report = reachable(&root, "report");
    assert!(report.contains("store"), "{report:?}");
    assert!(!report.contains("runner"), "{report:?}");
    // The report takes store's dataset types without the database drivers (store's
    // default `sql` feature).
    let manifest = std::fs::read_to_string(root.join("crates/report/Cargo.toml")).unwrap();
    let store_line = manifest
        .lines()
        .find(|l| l.trim_start().starts_with("store"))
        .unwrap_or_default();
    assert!(
        store_line.contains("default-features = false") && !store_line.contains("\"sql\""),
        "report's manifest takes store with its database: {store_line}"
    );
    let exporter = normal_dependencies(&root, "exporter");
    assert!(exporter.iter().any(|d| d == "runner"), "{exporter:?}");
    for direct in ["engine", "iperf3"] {
        assert!(
            !exporter.iter().any(|d| d == direct),
            "the exporter depends on {direct} directly: {exporter:?}"
        );
    }
}

/// docs/guide/architecture.md's dependency table is the manifests' graph: every crate,
/// each with exactly the workspace crates it depends on directly.
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
    let mut crates: Vec<String> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").exists())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    crates.sort();
    let want: String = crates
        .iter()
        .map(|c| {
            let mut deps: Vec<String> = normal_dependencies(&root, c)
                .into_iter()
                .filter(|d| d != c && crates.contains(d))
                .collect();
            deps.sort();
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

/// docs/guide/architecture.md lists the source files that name every test kind (the
/// exhaustive matches a new kind must extend): the list is exactly the files under
/// `crates/*/src` (unit tests apart) that name every variant of `TestKind`.
#[test]
fn the_guides_every_kind_files_are_those_that_name_every_test_kind() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let guide = std::fs::read_to_string(root.join("docs/guide/architecture.md")).unwrap();
    let listed: std::collections::BTreeSet<String> = guide
        .split_once("<!-- every-kind files: checked by crates/cli/tests/cli/manifests.rs -->")
        .and_then(|(_, rest)| rest.split_once("```\n"))
        .and_then(|(_, rest)| rest.split_once("```"))
        .map(|(block, _)| block.lines().map(str::to_string).collect())
        .expect("the guide has the marked list of every-kind files");
    let spec = std::fs::read_to_string(root.join("crates/wire/src/spec.rs")).unwrap();
    let body = spec
        .split_once("pub enum TestKind {")
        .and_then(|(_, rest)| rest.split_once("\n}"))
        .map(|(body, _)| body)
        .expect("wire::spec has the TestKind enum");
    let variants: Vec<&str> = body
        .lines()
        .map(str::trim)
        .filter_map(|l| l.strip_suffix(','))
        .filter(|v| v.chars().next().is_some_and(|c| c.is_ascii_uppercase()))
        .collect();
    assert!(variants.len() >= 5, "{variants:?}");
    let names_word = |text: &str, word: &str| {
        text.match_indices(word).any(|(i, _)| {
            let before = text[..i].chars().next_back();
            let after = text[i + word.len()..].chars().next();
            let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
            !ident(before) && !ident(after)
        })
    };
    let mut found = std::collections::BTreeSet::new();
    let mut todo = vec![root.join("crates")];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                if name != "tests" && name != "target" {
                    todo.push(path);
                }
                continue;
            }
            let rel = path
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if !rel.contains("/src/")
                || !name.ends_with(".rs")
                || name == "tests.rs"
                || name.ends_with("_tests.rs")
            {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            // A file's own unit tests do not count.
            let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
            if variants.iter().all(|v| names_word(code, v)) {
                found.insert(rel);
            }
        }
    }
    assert_eq!(
        listed, found,
        "docs/guide/architecture.md's every-kind files differ from the sources"
    );
}
