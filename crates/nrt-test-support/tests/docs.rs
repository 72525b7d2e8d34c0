//! The documentation checked against the repository, where that is cheap:
//! every relative link resolves (to a heading, when it names one), every
//! repository path quoted in a code span exists, the crate dependency
//! diagram of docs/architecture.md is the manifests' dependencies, the
//! README's layout table names every crate, and docs/reliability.md's
//! fuzz table names every fuzz target. (The counts of the C API's docs are
//! checked in crates/nrt-capi/tests/c_api.rs, which builds the programs
//! they count; docs/cli.md's command table in crates/nrt-cli/tests/cli.rs.)

use nrt_test_support::repo_root;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every markdown file of the repository, outside build output, VCS data
/// and the fuzz corpora.
fn markdown_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().flatten().map(|e| e.path()).collect();
        entries.sort();
        for p in entries {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                if !(name.starts_with('.') || name == "target" || name == "corpus" || name == "artifacts") {
                    walk(&p, out);
                }
            } else if name.ends_with(".md") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&repo_root(), &mut out);
    assert!(out.len() > 10, "markdown files found: {out:?}");
    out
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()))
}

fn rel(p: &Path) -> String {
    p.strip_prefix(repo_root()).unwrap_or(p).display().to_string()
}

/// The text outside fenced code blocks, line by line (1-based numbers).
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.push((i + 1, line));
        }
    }
    out
}

/// A line without its code spans (`...`).
fn without_code_spans(line: &str) -> String {
    line.split('`').step_by(2).collect::<Vec<_>>().join(" ")
}

/// The code spans of a line.
fn code_spans(line: &str) -> Vec<&str> {
    line.split('`').skip(1).step_by(2).collect()
}

/// The destinations of inline links `[text](dest)` on a line.
fn link_targets(line: &str) -> Vec<String> {
    let line = without_code_spans(line);
    let mut out = Vec::new();
    let mut rest = line.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        match after.find(')') {
            Some(end) => {
                out.push(after[..end].trim().to_string());
                rest = &after[end..];
            }
            None => break,
        }
    }
    out
}

/// GitHub's anchor of a heading: lower case, punctuation dropped (but `-`
/// and `_`), spaces to `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a markdown file's headings.
fn anchors(text: &str) -> BTreeSet<String> {
    prose_lines(text)
        .into_iter()
        .filter_map(|(_, l)| l.strip_prefix('#').map(|h| slug(h.trim_start_matches('#'))))
        .collect()
}

#[test]
fn every_relative_link_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in markdown_files() {
        let text = read(&file);
        for (n, line) in prose_lines(&text) {
            for dest in link_targets(line) {
                if dest.contains("://") || dest.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (path, anchor) = dest.split_once('#').unwrap_or((&dest, ""));
                let target = if path.is_empty() { file.clone() } else { file.parent().unwrap().join(path) };
                if !target.exists() {
                    broken.push(format!("{}:{n}: {dest} (no such file)", rel(&file)));
                } else if !anchor.is_empty() && (!target.is_file() || !anchors(&read(&target)).contains(anchor)) {
                    broken.push(format!("{}:{n}: {dest} (no such heading)", rel(&file)));
                }
            }
        }
    }
    assert!(checked > 10, "links checked: {checked}");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// A code-span word that names a file or directory of this repository:
/// `crates/...`, `docs/...`, `scripts/...`, `include/...`, `examples/...`,
/// `fuzz/...` or `tests/c/...`, `tests/cmake-client/...`, with a
/// `:LINE` suffix dropped; placeholders (`<d>`, `*`, `NN`, an upper-case
/// segment such as `TARGET`) and `...` are not paths.
fn repository_path(word: &str) -> Option<&str> {
    let w = word.trim_matches(|c: char| ",;()".contains(c));
    let w = w.rsplit_once(':').filter(|(_, n)| n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty()).map_or(w, |(p, _)| p);
    let roots = ["crates/", "docs/", "scripts/", "include/", "examples/", "fuzz/", "tests/c/", "tests/cmake-client/"];
    let pathlike = w.chars().all(|c| c.is_ascii_alphanumeric() || "_./-".contains(c));
    let placeholder = w.contains("...") || w.split('/').any(|s| s.len() > 1 && s.chars().all(|c| c.is_ascii_uppercase() || c == '_'));
    (roots.iter().any(|r| w.starts_with(r)) && pathlike && !placeholder).then_some(w)
}

#[test]
fn every_repository_path_in_code_spans_exists() {
    let root = repo_root();
    let mut missing = Vec::new();
    let mut checked = 0;
    for file in markdown_files() {
        let text = read(&file);
        for (n, line) in text.lines().enumerate() {
            for span in code_spans(line) {
                for path in span.split_whitespace().filter_map(repository_path) {
                    checked += 1;
                    if !root.join(path).exists() {
                        missing.push(format!("{}:{}: `{path}`", rel(&file), n + 1));
                    }
                }
            }
        }
    }
    assert!(checked > 50, "paths checked: {checked}");
    assert!(missing.is_empty(), "paths the docs name that do not exist:\n{}", missing.join("\n"));
}

/// Every name the workspace's Rust sources define, loosely: the word after
/// `fn`, `struct`, `enum`, `trait`, `const`, `static`, `type`, `mod`,
/// `union` or `macro_rules!`, capitalised words opening a line (enum
/// variants), `name:` opening a line (fields), and file and directory
/// names. Loose on purpose: it only has to notice a name the docs use
/// that no longer exists anywhere.
fn defined_names() -> BTreeSet<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() && name != "target" && !name.starts_with('.') {
                walk(&p, out);
            } else if name.ends_with(".rs") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&repo_root().join("crates"), &mut files);
    walk(&repo_root().join("fuzz/fuzz_targets"), &mut files);
    let mut names = BTreeSet::new();
    let ident = |w: &str| w.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    for f in &files {
        for part in f.strip_prefix(repo_root()).unwrap().iter() {
            names.insert(part.to_string_lossy().trim_end_matches(".rs").to_string());
        }
        let text = read(f);
        let words: Vec<&str> = text.split(|c: char| c.is_whitespace() || c == '(' || c == '<').filter(|w| !w.is_empty()).collect();
        for pair in words.windows(2) {
            if ["fn", "struct", "enum", "trait", "const", "static", "type", "mod", "union", "macro_rules!"].contains(&pair[0]) {
                names.insert(ident(pair[1]));
            }
        }
        for line in text.lines().map(str::trim_start) {
            let line = line.strip_prefix("pub(crate) ").or_else(|| line.strip_prefix("pub ")).unwrap_or(line);
            let word = ident(line);
            let after = line[word.len()..].trim_start();
            let variant = word.starts_with(|c: char| c.is_ascii_uppercase()) && (after.is_empty() || after.starts_with([',', '(', '{', '=']));
            if variant || (word.starts_with(|c: char| c.is_ascii_lowercase() || c == '_') && after.starts_with(':') && !after.starts_with("::")) {
                names.insert(word);
            }
        }
    }
    names
}

/// The Rust paths in a code span (`nrt::exec::execute`,
/// `nrt_isa::instr::slots::{drain_slot, load_pool_argument_slot}`): for
/// each, the last names, which must exist. Paths into other crates
/// (`std::`, `core::`, `loom::`, `f32::`, ...) and name prefixes (`q7_`)
/// are left out.
fn rust_names(span: &str) -> Vec<String> {
    let foreign = ["std", "core", "alloc", "f32", "f64", "u8", "u32", "u64", "loom", "crate", "serde", "serde_json", "libc", "Nrt"];
    let mut out = Vec::new();
    let chars: Vec<char> = span.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if !(chars[i].is_alphabetic() || chars[i] == '_') || (i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == ':') {
            i += 1;
        }
        let path: String = chars[start..i].iter().collect();
        let group = if path.ends_with("::") && chars.get(i) == Some(&'{') {
            let end = chars[i..].iter().position(|c| *c == '}').map_or(chars.len(), |e| i + e);
            let g: String = chars[i + 1..end].iter().collect();
            i = end;
            Some(g)
        } else {
            None
        };
        let segments: Vec<&str> = path.trim_end_matches(':').split("::").collect();
        if segments.len() < 2 && group.is_none() || foreign.contains(&segments[0]) {
            continue;
        }
        let lasts: Vec<String> = match group {
            Some(g) => g.split(',').map(|n| n.trim().to_string()).collect(),
            None => vec![segments.last().unwrap().to_string()],
        };
        out.extend(lasts.into_iter().filter(|n| !n.is_empty() && !n.ends_with('_') && n.chars().all(|c| c.is_alphanumeric() || c == '_')));
    }
    out
}

#[test]
fn every_rust_path_in_code_spans_names_something_that_exists() {
    let names = defined_names();
    let mut missing = Vec::new();
    let mut checked = 0;
    for file in markdown_files() {
        for (n, line) in read(&file).lines().enumerate() {
            for span in code_spans(line) {
                for name in rust_names(span) {
                    checked += 1;
                    if !names.contains(&name) {
                        missing.push(format!("{}:{}: `{span}` ({name})", rel(&file), n + 1));
                    }
                }
            }
        }
    }
    assert!(checked > 100, "names checked: {checked}");
    assert!(missing.is_empty(), "Rust items the docs name that the source does not define:\n{}", missing.join("\n"));
}

/// The workspace's crates: directory name -> package name.
fn workspace_crates() -> BTreeMap<String, String> {
    let manifest = read(&repo_root().join("Cargo.toml"));
    let members = manifest.split("members = [").nth(1).and_then(|m| m.split(']').next()).expect("workspace members");
    members
        .split(',')
        .map(|m| m.trim().trim_matches('"'))
        .filter(|m| !m.is_empty())
        .map(|m| {
            let name = package_name(&read(&repo_root().join(m).join("Cargo.toml")));
            (m.to_string(), name)
        })
        .collect()
}

fn package_name(manifest: &str) -> String {
    manifest
        .lines()
        .find_map(|l| l.strip_prefix("name = \"").and_then(|r| r.strip_suffix('"')))
        .expect("package name")
        .to_string()
}

/// The workspace crates a manifest depends on outside its tests: every
/// `[dependencies]` and `[target.'cfg(...)'.dependencies]` entry (a
/// renamed one by its `package`), not dev- or build-dependencies.
fn normal_dependencies(manifest: &str, ours: &BTreeSet<String>) -> BTreeSet<String> {
    let mut section = String::new();
    let mut out = BTreeSet::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.to_string();
            continue;
        }
        let normal = section == "[dependencies]" || (section.starts_with("[target.") && section.ends_with(".dependencies]"));
        let Some((key, value)) = line.split_once('=').filter(|_| normal) else { continue };
        let key = key.trim().split('.').next().unwrap().to_string();
        let name = value.split("package = \"").nth(1).and_then(|r| r.split('"').next()).map_or(key, str::to_string);
        if ours.contains(&name) {
            out.insert(name);
        }
    }
    out
}

/// The diagram of docs/architecture.md: `a, b ─► c, d  (what they are)`
/// lines in the first code block under "Crates and their dependencies".
fn diagram() -> BTreeMap<String, BTreeSet<String>> {
    let doc = read(&repo_root().join("docs/architecture.md"));
    let section = doc.split("## Crates and their dependencies").nth(1).expect("the section");
    let block = section.split("```").nth(1).expect("the diagram's code block");
    let mut out = BTreeMap::new();
    for line in block.lines().skip(1).filter(|l| l.contains('►')) {
        let (left, right) = line.split_once('►').unwrap();
        let right = right.trim();
        let deps: BTreeSet<String> = if right.starts_with("(nothing of ours)") {
            BTreeSet::new()
        } else {
            right.split("  (").next().unwrap().split(',').map(|d| d.trim().to_string()).filter(|d| !d.is_empty()).collect()
        };
        for name in left.trim_end_matches(['─', ' ']).split(',').map(str::trim) {
            assert!(out.insert(name.to_string(), deps.clone()).is_none(), "{name} is in the diagram twice");
        }
    }
    out
}

#[test]
fn the_dependency_diagram_is_the_manifests() {
    let crates = workspace_crates();
    let ours: BTreeSet<String> = crates.values().cloned().collect();
    let drawn = diagram();
    let mut wrong = Vec::new();
    for (dir, name) in &crates {
        let real = normal_dependencies(&read(&repo_root().join(dir).join("Cargo.toml")), &ours);
        match drawn.get(name) {
            None => wrong.push(format!("{name} is not in the diagram (it depends on {real:?})")),
            Some(d) if *d != real => wrong.push(format!("{name}: the diagram says {d:?}, {dir}/Cargo.toml says {real:?}")),
            Some(_) => {}
        }
    }
    for name in drawn.keys().filter(|n| !ours.contains(*n)) {
        wrong.push(format!("{name} is in the diagram but not a workspace crate"));
    }
    assert!(wrong.is_empty(), "docs/architecture.md's diagram:\n{}", wrong.join("\n"));
}

#[test]
fn the_readme_layout_table_names_every_crate() {
    let readme = read(&repo_root().join("README.md"));
    let table = readme.split("## Layout").nth(1).expect("README's Layout section").split("\n## ").next().unwrap();
    let named: BTreeSet<String> = table
        .lines()
        .filter(|l| l.starts_with("| `crates/"))
        .map(|l| l.split('`').nth(1).unwrap().to_string())
        .collect();
    let dirs: BTreeSet<String> = workspace_crates().into_keys().collect();
    assert_eq!(named, dirs, "README's Layout table, one row per crate");
}

#[test]
fn the_examples_table_names_every_example() {
    let root = repo_root().join("examples");
    let readme = read(&root.join("README.md"));
    let linked: BTreeSet<String> = readme
        .lines()
        .filter(|l| l.starts_with("| ["))
        .filter_map(|l| link_targets(l).first().and_then(|t| t.strip_suffix("/README.md")).map(str::to_string))
        .collect();
    let dirs: BTreeSet<String> = std::fs::read_dir(&root).unwrap().flatten().filter(|e| e.path().is_dir()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(linked, dirs, "examples/README.md's table, one row per example");
}

/// The README's documentation line links every page of docs/.
#[test]
fn the_readme_links_every_docs_page() {
    let root = repo_root();
    let readme = read(&root.join("README.md"));
    let line = readme.split("\nDocumentation: ").nth(1).expect("README's `Documentation:` paragraph").split("\n\n").next().unwrap().replace('\n', " ");
    let linked: BTreeSet<String> = link_targets(&line).into_iter().filter_map(|t| t.strip_prefix("docs/").map(str::to_string)).collect();
    let pages: BTreeSet<String> = std::fs::read_dir(root.join("docs")).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.ends_with(".md")).collect();
    assert_eq!(linked, pages, "README's documentation line, one link per docs page");
}

/// The fuzz targets: the `[[bin]]` names of fuzz/Cargo.toml, and those
/// that need the runtime.
fn fuzz_targets() -> (BTreeSet<String>, BTreeSet<String>) {
    let manifest = read(&repo_root().join("fuzz/Cargo.toml"));
    let mut all = BTreeSet::new();
    let mut runtime = BTreeSet::new();
    for bin in manifest.split("[[bin]]").skip(1) {
        let name = package_name(bin);
        if bin.contains("required-features = [\"runtime\"]") {
            runtime.insert(name.clone());
        }
        all.insert(name);
    }
    (all, runtime)
}

/// A small count in the words docs use.
fn number_word(n: usize) -> String {
    let words = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"];
    words.get(n).map_or_else(|| n.to_string(), |w| w.to_string())
}

#[test]
fn the_fuzz_section_names_every_target() {
    let (all, runtime) = fuzz_targets();
    let doc = read(&repo_root().join("docs/reliability.md"));
    let section = doc.split("## Fuzzing").nth(1).expect("reliability.md's Fuzzing section").split("\n## ").next().unwrap();
    let table = section.split("\n\n").find(|p| p.contains("| target | input |")).expect("the targets table");
    let rows: BTreeSet<String> = table.lines().filter_map(|l| l.strip_prefix("| `")).map(|l| l.split('`').next().unwrap().to_string()).collect();
    assert_eq!(rows, all, "the targets table of docs/reliability.md against fuzz/Cargo.toml");
    let prose = section.split_whitespace().collect::<Vec<_>>().join(" ");
    let parsers = all.len() - runtime.len();
    let sentence = format!("The {} parser targets build without a sanitizer", number_word(parsers));
    assert!(prose.contains(&sentence), "docs/reliability.md should say \"{sentence}\"");
    for claim in [" link the runtime", " need the `runtime` feature"] {
        assert_eq!(named_before(&prose, claim), runtime, "the targets docs/reliability.md says{claim}");
    }
}

/// The code-span names in the clause of `prose` that ends in `claim`
/// (from the previous full stop or semicolon up to the claim).
fn named_before(prose: &str, claim: &str) -> BTreeSet<String> {
    let at = prose.find(claim).unwrap_or_else(|| panic!("no sentence says \"{claim}\""));
    let start = prose[..at].rfind([';', '.']).map_or(0, |i| i + 1);
    code_spans(&prose[start..at]).into_iter().map(str::to_string).collect()
}

#[test]
fn the_helpers_parse_what_the_docs_write() {
    assert_eq!(link_targets("see [a](docs/x.md#b) and `[c](not)` [d](e)"), ["docs/x.md#b", "e"]);
    assert_eq!(slug("2. The ABI: `abi` (v1)"), "2-the-abi-abi-v1");
    assert_eq!(repository_path("crates/nrt/src/lib.rs:12,"), Some("crates/nrt/src/lib.rs"));
    assert_eq!(repository_path("fuzz/artifacts/TARGET/"), None);
    assert_eq!(repository_path("docs/<x>.md"), None);
    assert_eq!(repository_path("src/lib.rs"), None);
    assert_eq!(rust_names("nrt::exec::execute(&m)"), ["execute"]);
    assert_eq!(rust_names("a `x` nrt_isa::slots::{drain_slot, load_slot} std::mem::swap f32::max Opcode::is_pseudo"), ["drain_slot", "load_slot", "is_pseudo"]);
    assert_eq!(rust_names("nrt_hal::ArchDesc::q7_ plain words"), Vec::<String>::new());
    let ours: BTreeSet<String> = ["nrt", "nrt-hal", "nrt-sim"].map(String::from).into();
    let manifest = "[dependencies]\nnrt-core = { package = \"nrt\", path = \"../nrt\" }\nnrt-hal.workspace = true\nserde = \"1\"\n\
                    [dev-dependencies]\nnrt-sim.workspace = true\n[target.'cfg(loom)'.dependencies]\nnrt-sim = { path = \"x\" }\n";
    assert_eq!(normal_dependencies(manifest, &ours), ["nrt", "nrt-hal", "nrt-sim"].map(String::from).into());
}
