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
