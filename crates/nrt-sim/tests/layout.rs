//! The crate's module layout, checked from its source: no import circle of
//! more than two files, and only the device root names the device's shared
//! state (`Shared`).
//!
//! The dependency graph is built from the `use` trees and the module paths
//! in code (`crate::…`, `super::…`, `self::…` and paths through a file's
//! own child modules) of every file under `src/`, with comments, string
//! literals and `#[cfg(test)]` items left out (unit tests may build a whole
//! device; they are not part of the layering). A path names the file of its
//! longest module prefix; `crate::Name` follows the crate root's `pub use`
//! to the module it re-exports. The circles are the graph's strongly
//! connected components (Tarjan). The layout itself is described in the
//! crate's README.
//!
//! The checker runs on any crate root given in `NRT_LAYOUT_SRC` (a `src`
//! directory) instead of this crate's, so it can be pointed at an older
//! checkout to see that it would have failed there; `NRT_LAYOUT_PRINT=1`
//! prints every file's edges and every circle of two or more files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The largest import circle allowed (a file and its child may use each
/// other, as a `mod.rs` and a `tests` file do).
const MAX_CIRCLE: usize = 2;

/// One source file: its module path and its text without comments,
/// strings and test-only items.
struct File {
    /// Path relative to `src/`.
    rel: String,
    /// Module path from the crate root (`[]` for lib.rs).
    module: Vec<String>,
    /// The code without comments, literals and `#[cfg(test)]` items.
    code: String,
    /// The code without comments and literals, tests included.
    all_code: String,
}

fn src_dir() -> PathBuf {
    match std::env::var_os("NRT_LAYOUT_SRC") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
    }
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display())).flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn module_of(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel.trim_end_matches(".rs").split('/').map(str::to_string).collect();
    let last = parts.last().cloned().unwrap_or_default();
    if last == "mod" || (parts.len() == 1 && last == "lib") {
        parts.pop();
    }
    parts
}

/// The text with comments and string / char literals blanked (newlines
/// kept), lifetimes left alone.
fn strip(src: &str) -> String {
    let b: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if b[i] == '\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
            }
            out.push(' ');
        } else if c == 'r' && (next == Some('"') || (next == Some('#') && !b.get(i.wrapping_sub(1)).is_some_and(|p| p.is_alphanumeric() || *p == '_'))) && !b.get(i.wrapping_sub(1)).is_some_and(|p| p.is_alphanumeric() || *p == '_') {
            // Raw string r"…" / r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                if b[j] == '\n' {
                    out.push('\n');
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    i += 1;
                }
                if b.get(i) == Some(&'\n') {
                    out.push('\n');
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{1F}') or a lifetime ('a).
            if next == Some('\\') {
                let mut j = i + 2;
                while j < b.len() && b[j] != '\'' {
                    j += 1;
                }
                i = j + 1;
                out.push_str("' '");
            } else if b.get(i + 2) == Some(&'\'') {
                i += 3;
                out.push_str("' '");
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// `code` with every item behind `#[cfg(test)]` removed.
fn drop_test_items(code: &str) -> String {
    let mut out = code.to_string();
    while let Some(at) = out.find("#[cfg(test)]") {
        let b = out.as_bytes();
        let mut i = at + "#[cfg(test)]".len();
        // The item: to its `;` (a `use` or `mod x;`) or its braced body.
        let rest = &out[i..];
        let is_use = rest.trim_start().starts_with("use ") || rest.trim_start().starts_with("pub use ");
        let mut depth = 0i32;
        let mut end = out.len();
        while i < b.len() {
            match b[i] {
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                b';' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                b'{' if depth == 0 && !is_use => {
                    let mut d = 0;
                    while i < b.len() {
                        match b[i] {
                            b'{' => d += 1,
                            b'}' => {
                                d -= 1;
                                if d == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                        i += 1;
                    }
                    end = i + 1;
                    break;
                }
                _ => {}
            }
            i += 1;
        }
        let newlines = out[at..end.min(out.len())].matches('\n').count();
        out.replace_range(at..end.min(out.len()), &"\n".repeat(newlines));
    }
    out
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Colons,
    Open,
    Close,
    Comma,
    Semi,
    Star,
    Other(char),
}

fn tokens(code: &str) -> Vec<Tok> {
    let b: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_alphabetic() || c == '_' {
            let s = i;
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            let mut w: String = b[s..i].iter().collect();
            if w == "r" && b.get(i) == Some(&'#') {
                i += 1;
                let s = i;
                while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                    i += 1;
                }
                w = b[s..i].iter().collect();
            }
            out.push(Tok::Ident(w));
            continue;
        }
        if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            out.push(Tok::Other('0'));
            continue;
        }
        i += 1;
        match c {
            ':' if b.get(i) == Some(&':') => {
                i += 1;
                out.push(Tok::Colons);
            }
            '{' => out.push(Tok::Open),
            '}' => out.push(Tok::Close),
            ',' => out.push(Tok::Comma),
            ';' => out.push(Tok::Semi),
            '*' => out.push(Tok::Star),
            c if c.is_whitespace() => {}
            c => out.push(Tok::Other(c)),
        }
    }
    out
}

/// Expands the use tree starting at `toks[*i]` (after `use`) into its
/// paths, each a list of segments (`self` inside braces kept as is).
fn use_paths(toks: &[Tok], i: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut path = prefix;
    loop {
        match toks.get(*i) {
            Some(Tok::Ident(w)) if w == "as" => {
                *i += 2;
                out.push(path);
                return;
            }
            Some(Tok::Ident(w)) => {
                path.push(w.clone());
                *i += 1;
            }
            Some(Tok::Colons) => *i += 1,
            Some(Tok::Star) => {
                *i += 1;
                out.push(path);
                return;
            }
            Some(Tok::Open) => {
                *i += 1;
                loop {
                    match toks.get(*i) {
                        Some(Tok::Close) => {
                            *i += 1;
                            return;
                        }
                        Some(Tok::Comma) => *i += 1,
                        None => return,
                        _ => use_paths(toks, i, path.clone(), out),
                    }
                }
            }
            _ => {
                out.push(path);
                return;
            }
        }
    }
}

/// Every module path a file's code names, resolved against the file's
/// module (and its inline modules), as absolute segment lists.
fn named_paths(file: &File, children: &BTreeSet<String>) -> Vec<Vec<String>> {
    let toks = tokens(&file.code);
    let mut out = Vec::new();
    // Inline module nesting: (name, brace depth at which it opened).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        let here: Vec<String> = file.module.iter().cloned().chain(inline.iter().map(|(n, _)| n.clone())).collect();
        match &toks[i] {
            Tok::Open => {
                depth += 1;
                i += 1;
            }
            Tok::Close => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            Tok::Ident(w) if w == "mod" => {
                if let (Some(Tok::Ident(name)), Some(Tok::Open)) = (toks.get(i + 1), toks.get(i + 2)) {
                    inline.push((name.clone(), depth + 1));
                }
                i += 1;
            }
            Tok::Ident(w) if w == "use" => {
                i += 1;
                let mut paths = Vec::new();
                use_paths(&toks, &mut i, Vec::new(), &mut paths);
                for p in paths {
                    if let Some(abs) = absolute(&p, &here, inline.is_empty(), children) {
                        out.push(abs);
                    }
                }
            }
            Tok::Ident(w) if i == 0 || toks[i - 1] != Tok::Colons => {
                if toks.get(i + 1) == Some(&Tok::Colons) {
                    let mut p = vec![w.clone()];
                    let mut j = i + 1;
                    while toks.get(j) == Some(&Tok::Colons) {
                        if let Some(Tok::Ident(n)) = toks.get(j + 1) {
                            p.push(n.clone());
                            j += 2;
                        } else {
                            break;
                        }
                    }
                    if let Some(abs) = absolute(&p, &here, inline.is_empty(), children) {
                        out.push(abs);
                    }
                    i = j;
                } else {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    out
}

/// `p` as an absolute module path, if it names this crate's modules.
fn absolute(p: &[String], here: &[String], at_file_level: bool, children: &BTreeSet<String>) -> Option<Vec<String>> {
    let first = p.first()?;
    let mut base: Vec<String> = match first.as_str() {
        "crate" => Vec::new(),
        "self" => here.to_vec(),
        "super" => {
            let mut b = here.to_vec();
            let mut k = 0;
            while p.get(k).is_some_and(|s| s == "super") {
                b.pop();
                k += 1;
            }
            b.extend(p[k..].iter().filter(|s| *s != "self").cloned());
            return Some(b);
        }
        name if at_file_level && children.contains(name) => {
            let mut b = here.to_vec();
            b.extend(p.iter().cloned());
            return Some(b);
        }
        _ => return None,
    };
    base.extend(p[1..].iter().filter(|s| *s != "self").cloned());
    Some(base)
}

struct Graph {
    files: Vec<File>,
    edges: Vec<BTreeSet<usize>>,
}

fn build() -> Graph {
    let src = src_dir();
    let mut paths = Vec::new();
    rs_files(&src, &mut paths);
    assert!(!paths.is_empty(), "no source files under {}", src.display());
    let mut files: Vec<File> = paths
        .iter()
        .map(|p| {
            let rel = p.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
            let text = std::fs::read_to_string(p).unwrap();
            let all_code = strip(&text);
            File { module: module_of(&rel), code: drop_test_items(&all_code), all_code, rel }
        })
        .collect();
    // Files only test code declares (`#[cfg(test)] mod tests;`) are left out.
    let mut test_only = BTreeSet::new();
    for f in &files {
        for (k, _) in f.all_code.match_indices("#[cfg(test)]") {
            let toks = tokens(&f.all_code[k + "#[cfg(test)]".len()..]);
            let toks: Vec<_> = toks.iter().filter(|t| !matches!(t, Tok::Ident(w) if w == "pub")).take(3).collect();
            if let [Tok::Ident(m), Tok::Ident(name), Tok::Semi] = toks.as_slice()
                && m == "mod"
            {
                let mut child = f.module.clone();
                child.push(name.clone());
                test_only.insert(child);
            }
        }
    }
    files.retain(|f| !test_only.contains(&f.module));
    let by_module: BTreeMap<Vec<String>, usize> = files.iter().enumerate().map(|(i, f)| (f.module.clone(), i)).collect();
    // The crate root's re-exports: `crate::Name` -> the module it comes from.
    let root = &files[by_module[&Vec::new()]];
    let mut reexports: BTreeMap<String, Vec<String>> = BTreeMap::new();
    {
        let toks = tokens(&root.code);
        for k in 0..toks.len() {
            if toks[k] == Tok::Ident("use".into()) && k > 0 && toks[k - 1] == Tok::Ident("pub".into()) {
                let mut i = k + 1;
                let mut ps = Vec::new();
                use_paths(&toks, &mut i, Vec::new(), &mut ps);
                for p in ps {
                    if let Some(name) = p.last() {
                        reexports.insert(name.clone(), p[..p.len() - 1].iter().filter(|s| *s != "crate").cloned().collect());
                    }
                }
            }
        }
    }
    let mut edges = vec![BTreeSet::new(); files.len()];
    for (fi, f) in files.iter().enumerate() {
        let children: BTreeSet<String> = by_module
            .keys()
            .filter(|m| m.len() == f.module.len() + 1 && m.starts_with(&f.module))
            .map(|m| m.last().unwrap().clone())
            .collect();
        for mut p in named_paths(f, &children) {
            if p.len() == 1
                && let Some(m) = reexports.get(&p[0])
                && fi != by_module[&Vec::new()]
            {
                p = m.clone();
            }
            // The file of the longest module prefix.
            let target = (0..=p.len()).rev().find_map(|n| by_module.get(&p[..n]).copied());
            // The crate root only declares modules and re-exports: no edge.
            if let Some(t) = target
                && t != fi
                && !files[t].module.is_empty()
            {
                edges[fi].insert(t);
            }
        }
    }
    Graph { files, edges }
}

/// Tarjan's strongly connected components, each as file indices.
fn sccs(edges: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    struct St<'a> {
        edges: &'a [BTreeSet<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(s: &mut St, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on[v] = true;
        for &w in s.edges[v].iter() {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on[w] => s.low[v] = s.low[v].min(iw),
                _ => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut c = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on[w] = false;
                c.push(w);
                if w == v {
                    break;
                }
            }
            c.sort();
            s.out.push(c);
        }
    }
    let n = edges.len();
    let mut s = St { edges, index: vec![None; n], low: vec![0; n], on: vec![false; n], stack: Vec::new(), next: 0, out: Vec::new() };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.out
}

/// One cycle through the component's first file, as file names.
fn a_cycle(g: &Graph, comp: &[usize]) -> Vec<String> {
    let inside: BTreeSet<usize> = comp.iter().copied().collect();
    let start = comp[0];
    // Breadth-first back to `start`.
    let mut prev: BTreeMap<usize, usize> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &w in &g.edges[v] {
            if !inside.contains(&w) {
                continue;
            }
            if w == start {
                let mut path = vec![v];
                let mut x = v;
                while x != start {
                    x = prev[&x];
                    path.push(x);
                }
                path.reverse();
                path.push(start);
                return path.iter().map(|&i| g.files[i].rel.clone()).collect();
            }
            if let std::collections::btree_map::Entry::Vacant(e) = prev.entry(w) {
                e.insert(v);
                queue.push_back(w);
            }
        }
    }
    Vec::new()
}

#[test]
fn no_import_circle_of_more_than_two_files() {
    let g = build();
    let mut bad = Vec::new();
    let comps = sccs(&g.edges);
    if std::env::var_os("NRT_LAYOUT_PRINT").is_some() {
        for (i, f) in g.files.iter().enumerate() {
            let to: Vec<_> = g.edges[i].iter().map(|&t| g.files[t].rel.as_str()).collect();
            eprintln!("{} -> {}", f.rel, to.join(" "));
        }
        for comp in comps.iter().filter(|c| c.len() > 1) {
            let names: Vec<_> = comp.iter().map(|&i| g.files[i].rel.as_str()).collect();
            eprintln!("circle of {}: {}", comp.len(), names.join(", "));
        }
    }
    for comp in comps {
        if comp.len() > MAX_CIRCLE {
            let names: Vec<_> = comp.iter().map(|&i| g.files[i].rel.as_str()).collect();
            bad.push(format!("{} files: {}\n    e.g. {}", comp.len(), names.join(", "), a_cycle(&g, &comp).join(" -> ")));
        }
    }
    assert!(bad.is_empty(), "import circles of more than {MAX_CIRCLE} files in {}:\n  {}", src_dir().display(), bad.join("\n  "));
}

#[test]
fn only_the_device_root_names_shared() {
    let g = build();
    let mut bad = Vec::new();
    for f in &g.files {
        if f.rel.starts_with("device/") {
            continue;
        }
        let named = tokens(&f.all_code).iter().any(|t| *t == Tok::Ident("Shared".into()));
        if named {
            bad.push(f.rel.clone());
        }
    }
    assert!(bad.is_empty(), "files outside device/ that name `Shared`: {}", bad.join(", "));
}

/// The checker itself sees a circle and a `Shared` where they are.
#[test]
fn the_checker_finds_a_planted_circle() {
    let a = File { rel: "a.rs".into(), module: vec!["a".into()], code: strip("use crate::b::X; // crate::c\nfn f() { let s = \"crate::c\"; }"), all_code: String::new() };
    let none = BTreeSet::new();
    let got = named_paths(&a, &none);
    assert_eq!(got, vec![vec!["b".to_string(), "X".to_string()]], "comments and strings name nothing");
    let b = File { rel: "b/mod.rs".into(), module: vec!["b".into()], code: drop_test_items(&strip("use super::{c::{self, Y}, d};\n#[cfg(test)]\nmod tests { use crate::a::Z; }\nfn g() { kid::h(); }")), all_code: String::new() };
    let kids = BTreeSet::from(["kid".to_string()]);
    let got = named_paths(&b, &kids);
    assert_eq!(got, vec![vec!["c".to_string()], vec!["c".into(), "Y".into()], vec!["d".to_string()], vec!["b".into(), "kid".into(), "h".into()]]);
    let edges = vec![BTreeSet::from([1]), BTreeSet::from([2]), BTreeSet::from([0]), BTreeSet::from([0])];
    let comps = sccs(&edges);
    assert!(comps.iter().any(|c| c == &vec![0, 1, 2]), "{comps:?}");
}

/// The files a cell of the README's tier table names: code spans outside
/// parentheses, `dir/{a,b}` and `dir/*` expanded, `.rs` implied.
fn tier_cell_files(cell: &str, src: &Path) -> BTreeSet<String> {
    let mut depth = 0;
    let outside: String = cell
        .chars()
        .filter(|c| {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => return depth == 0,
            }
            false
        })
        .collect();
    let mut out = BTreeSet::new();
    for span in outside.split('`').skip(1).step_by(2) {
        let span = span.trim_end_matches(".rs");
        if let Some(dir) = span.strip_suffix("/*") {
            let mut files = Vec::new();
            rs_files(&src.join(dir), &mut files);
            out.extend(files.iter().map(|f| f.strip_prefix(src).unwrap().to_string_lossy().into_owned()));
        } else if let Some((dir, group)) = span.split_once("/{") {
            out.extend(group.trim_end_matches("}.rs").trim_end_matches('}').split(',').map(|n| format!("{dir}/{}.rs", n.trim())));
        } else {
            out.insert(format!("{span}.rs"));
        }
    }
    out
}

/// The README's tier table names every file of `src/` (but lib.rs) once,
/// and no file that does not exist.
#[test]
fn the_readme_tier_table_names_every_file() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).expect("README.md");
    let table = readme.split("| tier | files |").nth(1).expect("the tier table").split("\n\n").next().unwrap();
    let mut listed = BTreeMap::new();
    for row in table.lines().filter(|l| l.starts_with("| ") && !l.starts_with("|---")) {
        let cells: Vec<&str> = row.split('|').collect();
        for f in tier_cell_files(cells[2], &src) {
            *listed.entry(f).or_insert(0) += 1;
        }
    }
    let mut files = Vec::new();
    rs_files(&src, &mut files);
    let real: BTreeSet<String> = files.iter().map(|f| f.strip_prefix(&src).unwrap().to_string_lossy().into_owned()).filter(|f| f != "lib.rs").collect();
    let missing: Vec<&String> = real.iter().filter(|f| !listed.contains_key(*f)).collect();
    let stale: Vec<&String> = listed.keys().filter(|f| !real.contains(*f)).collect();
    let twice: Vec<&String> = listed.iter().filter(|(_, n)| **n > 1).map(|(f, _)| f).collect();
    assert!(missing.is_empty() && stale.is_empty() && twice.is_empty(), "README's tier table: missing {missing:?}, not in src/ {stale:?}, listed twice {twice:?}");
}
