//! The commands shown in README.md and docs/guide/*.md, run against the real binary, so
//! the documentation cannot drift from the program.
//!
//! - Every ```` ```console ```` block is a trycmd case: its `$ dualperf …` lines run in
//!   order in an empty directory of their own, and what each prints (stdout and stderr
//!   together) must match the lines shown under it, with `...` for any lines and `[..]`
//!   for any text within a line. Studies run on the study crate's fake executor
//!   (`DUALPERF_STUDY_FAKE=instant`: no sockets, runs take no time); `dualperf run`
//!   with no host talks to its embedded server on 127.0.0.1 / ::1 only. A block that runs
//!   no study continues from the studies shown before it on other machines (README's
//!   "compare two systems"): it starts with `debian.db` and `windows.db`, made by short
//!   fake studies with the labels README gives them.
//! - Every `dualperf …` line of a ```` ```sh ```` block (commands that need a second
//!   host, root, a lab or a program from outside Rust) is parsed by the binary: run
//!   with `--help` appended, it must exit 0. clap parses the words before `--help`
//!   first, so an unknown subcommand or flag, or a value that does not parse, fails.
//!   So is every `dualperf …` code span of the prose, except synopses (placeholders in
//!   capitals such as `HOST`, alternatives `a|b`, optional `[…]` parts).
//!
//! One block alone: `cargo test -p dualperf --test docs -- console trycmd=README-L46.md`
//! (a case is named after its page and the line of its opening fence).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use support::BIN;

/// README.md and every page of the guide, in a fixed order.
fn doc_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut guide: Vec<PathBuf> = std::fs::read_dir(root.join("docs/guide"))
        .expect("docs/guide is readable")
        .map(|e| e.expect("docs/guide entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    guide.sort();
    let mut files = vec![root.join("README.md")];
    files.extend(guide);
    files
}

/// A fenced block: its info string (language), the line of its opening fence
/// (1-based) and its lines.
struct Block {
    lang: String,
    line: usize,
    lines: Vec<String>,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in text.lines().enumerate() {
        let fence = line.trim_start().starts_with("```");
        match open.take() {
            None if fence => {
                open = Some(Block {
                    lang: line.trim_start().trim_start_matches('`').trim().to_string(),
                    line: i + 1,
                    lines: Vec::new(),
                })
            }
            None => {}
            Some(b) if fence => out.push(b),
            Some(mut b) => {
                b.lines.push(line.to_string());
                open = Some(b);
            }
        }
    }
    out
}

fn name_of(doc: &Path) -> String {
    let stem = doc.file_stem().and_then(|s| s.to_str()).unwrap_or("doc");
    match doc
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|s| s.to_str())
    {
        Some("guide") => format!("guide-{stem}"),
        _ => stem.to_string(),
    }
}

/// Campaign databases for the blocks that run no study: (file, label), each made by a
/// short fake study against the host README names.
const FIXTURES: [(&str, &str); 2] = [("debian.db", "Debian 12"), ("windows.db", "Windows 11")];

fn make_fixtures(dir: &Path) {
    for (file, label) in FIXTURES {
        let out = Command::new(BIN)
            .args(["study", "server.example", "--label", label, "--db"])
            .arg(dir.join(file))
            .args(["--sizes", "128", "--duration", "0.01", "--quiet"])
            .env("DUALPERF_STUDY_FAKE", "instant")
            .env_remove("DUALPERF_DB")
            .output()
            .expect("the dualperf binary runs");
        assert!(
            out.status.success(),
            "fixture study {file}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn console_blocks_run_as_shown() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let fixtures = tempfile::tempdir().expect("temporary directory");
    make_fixtures(fixtures.path());
    let mut cases = 0;
    let mut commands = 0;
    let mut foreign = Vec::new();
    let mut unmatchable = Vec::new();
    for doc in doc_files() {
        let text = std::fs::read_to_string(&doc).expect("doc page is readable");
        for b in blocks(&text).into_iter().filter(|b| b.lang == "console") {
            for l in b.lines.iter().filter(|l| l.starts_with("$ ")) {
                commands += 1;
                if !l.starts_with("$ dualperf ") {
                    foreign.push(format!("{}:{}: {l}", doc.display(), b.line));
                }
            }
            // trycmd drops the newline of a step's last expected line but compares it
            // with the program's, so that line must be `...`, end in `[..]`, or be
            // followed by a blank line (which gives the newline back).
            for (i, l) in b.lines.iter().enumerate() {
                let last = b.lines.get(i + 1).is_none_or(|n| n.starts_with("$ "));
                if last
                    && !l.starts_with("$ ")
                    && !l.is_empty()
                    && l != "..."
                    && !l.ends_with("[..]")
                {
                    unmatchable.push(format!("{}:{}: {l}", doc.display(), b.line + 1 + i));
                }
            }
            // One case per block, named after its page and line; an empty `.out`
            // directory beside it makes trycmd run it in a fresh sandbox directory.
            let case = dir.path().join(format!("{}-L{}", name_of(&doc), b.line));
            std::fs::create_dir(case.with_extension("out")).expect("sandbox marker");
            if !b.lines.iter().any(|l| l.starts_with("$ dualperf study")) {
                let base = case.with_extension("in");
                std::fs::create_dir(&base).expect("case input directory");
                for (file, _) in FIXTURES {
                    std::fs::copy(fixtures.path().join(file), base.join(file)).expect("fixture");
                }
            }
            let body = format!("```console\n{}\n```\n", b.lines.join("\n"));
            std::fs::write(case.with_extension("md"), body).expect("case file");
            cases += 1;
        }
    }
    // trycmd skips a step whose program it does not know, so a console block may only
    // run dualperf: show anything else in an `sh` block.
    assert!(
        foreign.is_empty(),
        "console blocks may only run dualperf (trycmd would skip the rest silently):\n{}",
        foreign.join("\n")
    );
    assert!(
        unmatchable.is_empty(),
        "end each step's output with `...`, `[..]` or a blank line (trycmd would miss its newline):\n{}",
        unmatchable.join("\n")
    );
    assert!(cases >= 3, "README and guide show {cases} console blocks");
    eprintln!("docs: {commands} commands in {cases} console blocks");
    trycmd::TestCases::new()
        .register_bin("dualperf", Path::new(BIN))
        .env("DUALPERF_STUDY_FAKE", "instant")
        // The default, so that a DUALPERF_DB of the caller's cannot redirect a study.
        .env("DUALPERF_DB", "dualperf.db")
        .case(dir.path().join("*.md"))
        .run();
}

/// The commands of a shell line, each as its words: whitespace-separated, with '…' and
/// "…" quoting, commands separated by `;`, `|` or `&&`, up to a `#` comment.
fn commands(line: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut command = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => word.push(c),
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                in_word = true;
            }
            None if c == '#' && !in_word => break,
            None if c.is_whitespace() || matches!(c, ';' | '|' | '&') => {
                if in_word {
                    command.push(std::mem::take(&mut word));
                    in_word = false;
                }
                if !c.is_whitespace() && !command.is_empty() {
                    out.push(std::mem::take(&mut command));
                }
            }
            None => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        command.push(word);
    }
    if !command.is_empty() {
        out.push(command);
    }
    out
}

/// The `dualperf` arguments of a shell command (after `sudo`, `ip netns exec NS` and
/// `VAR=value` prefixes), or `None` when the command runs another program.
fn dualperf_args(mut w: &[String]) -> Option<Vec<String>> {
    loop {
        match w {
            [first, rest @ ..] if first == "sudo" || first.contains('=') => w = rest,
            [ip, netns, exec, _ns, rest @ ..]
                if ip == "ip" && netns == "netns" && exec == "exec" =>
            {
                w = rest
            }
            [first, rest @ ..] if first == "dualperf" => return Some(rest.to_vec()),
            _ => return None,
        }
    }
}

/// Run `dualperf ARGS --help` (the `--help` before a `--` that hands the rest to another
/// program, and without the shell's redirections): `None` when clap accepts the words,
/// else what it said.
fn parse_error(mut args: Vec<String>) -> Option<String> {
    args.truncate(
        args.iter()
            .position(|a| a.starts_with(['>', '<']))
            .unwrap_or(args.len()),
    );
    let at = args.iter().position(|a| a == "--").unwrap_or(args.len());
    args.insert(at, "--help".to_string());
    let out = Command::new(BIN)
        .args(&args)
        .env_remove("DUALPERF_DB")
        .output()
        .expect("the dualperf binary runs");
    (!out.status.success()).then(|| {
        format!(
            "dualperf {}\n{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn sh_block_commands_parse() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for doc in doc_files() {
        let text = std::fs::read_to_string(&doc).expect("doc page is readable");
        for b in blocks(&text).into_iter().filter(|b| b.lang == "sh") {
            for line in &b.lines {
                for command in commands(line) {
                    let Some(args) = dualperf_args(&command) else {
                        continue;
                    };
                    checked += 1;
                    if let Some(e) = parse_error(args) {
                        failures.push(format!("{} (block at line {}): {e}", doc.display(), b.line));
                    }
                }
            }
        }
    }
    eprintln!("docs: {checked} sh-block commands parsed");
    assert!(
        checked >= 10,
        "only {checked} dualperf commands in sh blocks"
    );
    assert!(
        failures.is_empty(),
        "{} documented commands do not parse:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The `dualperf …` code spans of a page's prose (outside fenced blocks), newlines as
/// spaces.
fn inline_commands(text: &str) -> Vec<String> {
    let mut prose = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            prose.push_str(line);
            prose.push(' ');
        }
    }
    prose
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::trim)
        .filter(|s| s.starts_with("dualperf ") || s.starts_with("sudo dualperf "))
        .map(str::to_string)
        .collect()
}

/// A synopsis rather than a command: a placeholder in capitals (`HOST`, `PORT`),
/// alternatives (`p2p|client-server`), optional parts (`[--lab-rate RATE]`), or a log
/// line quoted in prose (`dualperf server: …`).
fn is_synopsis(span: &str) -> bool {
    span.contains(['|', '[', '…'])
        || span.split_whitespace().any(|w| {
            w.ends_with(':')
                || (w.starts_with(|c: char| c.is_ascii_uppercase())
                    && w.chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
        })
}

#[test]
fn inline_commands_parse() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for doc in doc_files() {
        let text = std::fs::read_to_string(&doc).expect("doc page is readable");
        for span in inline_commands(&text) {
            if is_synopsis(&span) {
                continue;
            }
            for command in commands(&span) {
                let Some(args) = dualperf_args(&command) else {
                    continue;
                };
                if args.first().is_some_and(|a| a == "help") {
                    continue;
                }
                checked += 1;
                if let Some(e) = parse_error(args) {
                    failures.push(format!("{}: `{span}`: {e}", doc.display()));
                }
            }
        }
    }
    eprintln!("docs: {checked} commands in prose parsed");
    assert!(checked >= 10, "only {checked} dualperf commands in prose");
    assert!(
        failures.is_empty(),
        "{} commands in prose do not parse:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn shell_lines_split_as_a_shell_would() {
    let words = |line: &str| commands(line).concat();
    assert_eq!(
        words(r#"dualperf study --label "Debian 12 / 10GbE" HOST  # on each controller"#),
        ["dualperf", "study", "--label", "Debian 12 / 10GbE", "HOST"]
    );
    assert_eq!(words("a 'b c'd # e"), ["a", "b cd"]);
    assert_eq!(
        commands("dualperf show; dualperf report --campaign 3 7 # ; x"),
        [
            vec!["dualperf", "show"],
            vec!["dualperf", "report", "--campaign", "3", "7"]
        ]
    );
    assert_eq!(commands("a && b | c").len(), 3);
    let w = words("sudo ip netns exec dpl-ap-client dualperf run fd00:231:2::2");
    assert_eq!(
        dualperf_args(&w),
        Some(vec!["run".to_string(), "fd00:231:2::2".to_string()])
    );
    assert_eq!(dualperf_args(&words("openssl rand -hex 32")), None);
    assert_eq!(
        inline_commands(
            "Run `dualperf show 3`, not\n```sh\n`dualperf x`\n```\nor `dualperf\nrun -d 1`."
        ),
        ["dualperf show 3", "dualperf run -d 1"]
    );
    assert!(is_synopsis("dualperf run HOST --peer iperf3"));
    assert!(is_synopsis("dualperf run --lab p2p|client-server"));
    assert!(is_synopsis("dualperf server: iperf3 PEER tcp"));
    assert!(!is_synopsis("dualperf run ::1 -f 6 --rate 100M"));
}
