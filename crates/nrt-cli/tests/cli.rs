//! End-to-end tests of the `nrt` binary: what a user runs and sees.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

fn nrt(args: &[&str]) -> Output {
    common::nrt_command().args(args).output().expect("run nrt")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The compiler sample beside the project, or None (the calling test
/// reported skipped) when absent.
fn real_neff() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/neff/matmul_small.neff");
    if !p.exists() {
        nrt_test_support::skip!(return None; "{} is absent (the compiler's sample lives beside the checkout)", p.display());
    }
    Some(p)
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("nrt-cli-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn inspect_json_reports_the_real_neff() {
    let Some(neff) = real_neff() else { return };
    let out = nrt(&["neff", "inspect", neff.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("one JSON object");
    let h = &v["header"];
    assert_eq!(h["pkg_version"], 2);
    assert_eq!(h["header_size"], 1024);
    assert_eq!(h["neff_version_major"], 2);
    assert_eq!(h["neff_version_minor"], 0);
    assert_eq!(h["neff_build_version"], "");
    assert_eq!(h["num_tpb"], 1);
    assert_eq!(h["name"], "file.neff");
    assert_eq!(h["requested_tpb_count"], 1);
    assert_eq!(h["feature_bits"], 0x209c00);
    assert_eq!(h["lnc_size"], 2);
    assert_eq!(h["hash"].as_str().unwrap().len(), 64, "hash in hex");
    assert!(h["hash"].as_str().unwrap().starts_with("bcb3e9ef"));
    assert_eq!(h["uuid"].as_str().unwrap().len(), 32, "uuid in hex");
    assert!(h["data_size"].as_u64().unwrap() > 0);

    let sgs = v["subgraphs"].as_array().unwrap();
    assert_eq!(sgs.len(), 2);
    assert_eq!(sgs[0]["name"], "sg00");
    assert_eq!(sgs[1]["name"], "sg01");
    for sg in sgs {
        let vars: Vec<(&str, &str)> = sg["vars"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| (v["name"].as_str().unwrap(), v["type"].as_str().unwrap()))
            .collect();
        assert_eq!(
            vars,
            [
                ("SB", "state-buffer"),
                ("x", "input"),
                ("y", "input"),
                ("output0", "output"),
                ("identity_82_sg0000", "file"),
                ("DGETable0", "dge-table")
            ]
        );
        let qs: Vec<&str> = sg["queue_sets"].as_array().unwrap().iter().map(|q| q["name"].as_str().unwrap()).collect();
        assert_eq!(qs, ["qPoolDynamic", "qSPDynamicHW"]);
        for q in sg["queue_sets"].as_array().unwrap() {
            assert_eq!(q["type"], "dynamic");
            assert_eq!(q["num_queues"], 16);
            assert_eq!(q["semaphores"].as_array().unwrap().len(), 16);
        }
    }
    let io = |key: &str| -> Vec<(String, String, Vec<u64>)> {
        v[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                let shape = t["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap()).collect();
                (t["name"].as_str().unwrap().to_string(), t["dtype"].as_str().unwrap().to_string(), shape)
            })
            .collect()
    };
    assert_eq!(
        io("inputs"),
        [("x".into(), "float16".into(), vec![128, 256]), ("y".into(), "float16".into(), vec![256, 128])]
    );
    assert_eq!(io("outputs"), [("output0".into(), "float16".into(), vec![128, 128])]);

    // Opcode histograms per engine, as decoded in spec/real-isa-observed.md.
    let pe = &v["opcodes"]["sg00"]["pe"];
    assert_eq!(pe["LDWEIGHTS"], 4);
    assert_eq!(pe["MATMUL"], 4);
    assert_eq!(pe["EVENT_SEMAPHORE"], 2);
    let act = &v["opcodes"]["sg00"]["act"];
    assert_eq!(act["COPY"], 2);
    assert_eq!(act["ACTIVATION_TABLE_LOAD"], 1);
    let total: u64 = ["pe", "act", "pool", "dve", "sp"]
        .iter()
        .map(|e| v["opcodes"]["sg01"][e].as_object().unwrap().values().map(|n| n.as_u64().unwrap()).sum::<u64>())
        .sum();
    assert_eq!(total, 12 + 5 + 7 + 2 + 3);
}

#[test]
fn inspect_tables_name_every_section() {
    let Some(neff) = real_neff() else { return };
    let out = nrt(&["neff", "inspect", neff.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    for needle in ["NEFF header", "feature_bits", "0x209c00", "Subgraph sg00", "Subgraph sg01", "qPoolDynamic", "MATMULx4"] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
}

#[test]
fn verify_hash_on_the_sample_reports_expected_and_found() {
    // The sample's hash does not cover the payload (see its README), so a
    // verification must fail and say both digests.
    let Some(neff) = real_neff() else { return };
    let out = nrt(&["neff", "inspect", neff.to_str().unwrap(), "--verify-hash"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains("bcb3e9ef"), "{err}");
}

#[test]
fn a_bad_file_fails_with_one_line() {
    let d = scratch("bad");
    let f = d.join("short.neff");
    std::fs::write(&f, b"not a neff").unwrap();
    let out = nrt(&["neff", "inspect", f.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("nrt: error:"), "{err}");
    assert!(err.to_lowercase().contains("header"), "{err}");

    let missing = nrt(&["neff", "inspect", d.join("nope.neff").to_str().unwrap()]);
    assert!(!missing.status.success());
    assert!(stderr(&missing).contains("nope.neff"));
}

/// An argument error (a logical core the instance does not have) is the
/// command's one `nrt: error:` line: no runtime log line repeating it, no
/// support dump (that is for device errors and timeouts).
#[test]
fn an_argument_error_prints_one_line() {
    let copy = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/copy");
    let out = common::nrt_command().args(["run", copy.to_str().unwrap()]).env("NEURON_RT_VISIBLE_CORES", "99").output().expect("run nrt");
    assert!(!out.status.success());
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("nrt: error:") && err.contains("logical core 99"), "{err}");
}

#[test]
fn unpack_then_pack_reproduces_every_member() {
    let Some(neff) = real_neff() else { return };
    let d = scratch("roundtrip");
    let dir = d.join("unpacked");
    let repacked = d.join("repacked.neff");
    let out = nrt(&["neff", "unpack", neff.to_str().unwrap(), dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = nrt(&["neff", "pack", dir.to_str().unwrap(), repacked.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));

    let a = nrt_neff::Neff::parse(&std::fs::read(&neff).unwrap()).unwrap();
    let b = nrt_neff::Neff::parse(&std::fs::read(&repacked).unwrap()).unwrap();
    assert_eq!(a.members, b.members, "every member byte for byte");
    assert_eq!(a.header.name(), b.header.name());
    assert_eq!(a.header.uuid, b.header.uuid);
    assert_eq!(a.header.feature_bits, b.header.feature_bits);
    assert_eq!(a.header.lnc_size, b.header.lnc_size);
    assert_eq!(b.header.pkg_version, 2);

    // Packing twice gives the same bytes.
    let again = d.join("again.neff");
    assert!(nrt(&["neff", "pack", dir.to_str().unwrap(), again.to_str().unwrap()]).status.success());
    assert_eq!(std::fs::read(&repacked).unwrap(), std::fs::read(&again).unwrap());

    // A sha256 pack with a new name is a plain tar with pkg_version 1.
    let sha = d.join("sha.neff");
    let out = nrt(&["neff", "pack", dir.to_str().unwrap(), sha.to_str().unwrap(), "--hash", "sha256", "--name", "renamed"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let c = nrt_neff::Neff::parse_with(
        &std::fs::read(&sha).unwrap(),
        &nrt_neff::ReadOptions { verify_hash: true, ..Default::default() },
    )
    .unwrap();
    assert_eq!(c.header.pkg_version, 1);
    assert_eq!(c.header.name(), "renamed");
    assert_eq!(c.members, a.members);
}

#[test]
fn pack_assembles_asm_programs_into_bin_members() {
    let Some(neff) = real_neff() else { return };
    let d = scratch("asm");
    let dir = d.join("unpacked");
    assert!(nrt(&["neff", "unpack", neff.to_str().unwrap(), dir.to_str().unwrap()]).status.success());
    // Replace the PE stream by its disassembly; packing must reassemble it.
    let pe_bin = dir.join("sg00/PE.bin");
    let original = std::fs::read(&pe_bin).unwrap();
    let text = nrt(&["disasm", pe_bin.to_str().unwrap()]);
    assert!(text.status.success());
    std::fs::write(dir.join("sg00/PE.asm"), &text.stdout).unwrap();
    std::fs::remove_file(&pe_bin).unwrap();
    let out_file = d.join("out.neff");
    let out = nrt(&["neff", "pack", dir.to_str().unwrap(), out_file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let packed = nrt_neff::Neff::parse(&std::fs::read(&out_file).unwrap()).unwrap();
    assert_eq!(packed.member("sg00/PE.bin").unwrap(), &original[..]);
    assert!(packed.member("sg00/PE.asm").is_none());

    // Both forms present is ambiguous and refused.
    std::fs::write(&pe_bin, &original).unwrap();
    let out = nrt(&["neff", "pack", dir.to_str().unwrap(), out_file.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("PE.asm"), "{}", stderr(&out));
}

/// One rule for a tree whose def.json names a constant it lacks: `nrt neff
/// pack`, `nrt run` and `nrt bench` all generate the examples' generated
/// members (so packing examples/mlp gives a NEFF that runs) and all refuse
/// any other tree with the same one-line message naming the member and
/// the fix, instead of writing a NEFF that fails at load.
#[test]
fn pack_and_run_take_a_tree_with_a_missing_constant_alike() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let d = scratch("missing_constant");
    // A copy of the mlp tree without its generated constants, under a
    // name that is not an example's.
    let tree = d.join("my-model");
    for entry in ["neff.json", "kelf-0.json", "info.json", "neff-header.json"] {
        std::fs::create_dir_all(&tree).unwrap();
        std::fs::copy(examples.join("mlp").join(entry), tree.join(entry)).unwrap();
    }
    std::fs::create_dir_all(tree.join("sg00")).unwrap();
    for f in std::fs::read_dir(examples.join("mlp/sg00")).unwrap() {
        let f = f.unwrap().path();
        if f.extension().is_some_and(|e| e != "npy") {
            std::fs::copy(&f, tree.join("sg00").join(f.file_name().unwrap())).unwrap();
        }
    }
    let neff = d.join("my-model.neff");
    for args in [vec!["neff", "pack", tree.to_str().unwrap(), neff.to_str().unwrap()], vec!["run", tree.to_str().unwrap()], vec!["bench", tree.to_str().unwrap(), "--iterations", "1"]] {
        let out = nrt(&args);
        let err = stderr(&out);
        assert!(!out.status.success(), "nrt {args:?} accepted a tree without its constants");
        assert_eq!(err.lines().count(), 1, "nrt {args:?}: one line: {err}");
        assert!(err.contains("sg00/W.npy is missing") && err.contains("nrt example-data"), "nrt {args:?}: {err}");
    }
    assert!(!neff.exists(), "pack wrote a NEFF that cannot load");

    // The example itself packs with its constants generated, as run takes it.
    let packed = d.join("mlp.neff");
    let out = nrt(&["neff", "pack", examples.join("mlp").to_str().unwrap(), packed.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let n = nrt_neff::Neff::parse(&std::fs::read(&packed).unwrap()).unwrap();
    assert!(n.member("sg00/W.npy").is_some() && n.member("sg00/b.npy").is_some(), "the generated constants are packed");
    let run = nrt(&["run", packed.to_str().unwrap()]);
    assert!(run.status.success(), "the packed mlp runs: {}", stderr(&run));
}

#[test]
fn asm_and_disasm_round_trip_every_real_stream() {
    let Some(neff) = real_neff() else { return };
    let d = scratch("streams");
    let dir = d.join("unpacked");
    assert!(nrt(&["neff", "unpack", neff.to_str().unwrap(), dir.to_str().unwrap()]).status.success());
    for sg in ["sg00", "sg01"] {
        for engine in ["PE", "Activation", "Pool", "DVE", "SP"] {
            let bin = dir.join(format!("{sg}/{engine}.bin"));
            let text = nrt(&["disasm", bin.to_str().unwrap()]);
            assert!(text.status.success(), "{}", stderr(&text));
            let asm = d.join(format!("{sg}-{engine}.asm"));
            std::fs::write(&asm, &text.stdout).unwrap();
            let out_bin = d.join(format!("{sg}-{engine}.bin"));
            let out = nrt(&["asm", asm.to_str().unwrap(), "-o", out_bin.to_str().unwrap()]);
            assert!(out.status.success(), "{}", stderr(&out));
            assert_eq!(std::fs::read(&out_bin).unwrap(), std::fs::read(&bin).unwrap(), "{sg}/{engine}");
        }
    }
}

#[test]
fn asm_errors_name_file_and_line() {
    let d = scratch("asmerr");
    let src = d.join("bad.asm");
    std::fs::write(&src, "nop\nfrobnicate x=1\n").unwrap();
    let out = nrt(&["asm", src.to_str().unwrap(), "-o", d.join("bad.bin").to_str().unwrap()]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("bad.asm") && err.contains('2'), "{err}");
}

#[test]
fn disasm_of_a_neff_names_instructions_from_its_debug_info() {
    let Some(neff) = real_neff() else { return };
    let out = nrt(&["disasm", neff.to_str().unwrap(), "--subgraph", "sg00", "--engine", "pool"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("# sg00 pool (7 records)"), "{text}");
    // The last Pool record is the compiler's end-of-block NOP.
    assert!(text.lines().last().unwrap().ends_with("# Block1-final-DMA-NOP"), "{text}");
    assert_eq!(text.lines().filter(|l| l.starts_with("dma2d")).count(), 4);

    let all = stdout(&nrt(&["disasm", neff.to_str().unwrap()]));
    assert_eq!(all.lines().filter(|l| l.starts_with("# sg")).count(), 10, "2 subgraphs x 5 engines");

    let bad = nrt(&["disasm", neff.to_str().unwrap(), "--subgraph", "sg09"]);
    assert!(!bad.status.success());
    assert!(stderr(&bad).contains("sg00, sg01"), "{}", stderr(&bad));
}

#[test]
fn neff_lower_prints_the_staged_stream_of_each_engine() {
    let copy = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/copy");
    let o = nrt(&["neff", "lower", copy, "--engine", "sp"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("sg00 SP ("), "{out}");
    // The trigger became two tail-increment WRITEs; the image ends with EXIT.
    assert_eq!(out.lines().filter(|l| l.contains("  10a3  WRITE ")).count(), 2, "{out}");
    assert!(out.trim_end().ends_with("pseudo_inst sub=exit_execution index=0x0  # runtime postamble"), "{out}");
    // Each record says where it came from.
    let writes: Vec<&str> = out.lines().filter(|l| l.contains("  10a3  WRITE ")).collect();
    assert!(writes[0].ends_with("(1 of 2)") && writes[1].ends_with("(2 of 2)"), "{writes:?}");
    assert!(out.lines().nth(1).is_some_and(|l| l.ends_with("# runtime preamble")), "{out}");
    assert!(!out.contains("dma_trigger"), "no pseudo survives the lowering");
    // Without --engine every engine is listed.
    let all = stdout(&nrt(&["neff", "lower", copy]));
    for e in ["PE", "ACT", "POOL", "DVE", "SP"] {
        assert!(all.contains(&format!("sg00 {e} (")), "{e}: {all}");
    }
    let bad = nrt(&["neff", "lower", copy, "--engine", "gpsimd"]);
    assert!(!bad.status.success());
    assert!(stderr(&bad).contains("expected pe, act, pool, dve or sp"));
}

#[test]
fn run_with_profile_writes_a_trace_of_named_instructions() {
    let Some(neff) = real_neff() else { return };
    let dir = scratch("profile");
    let out = nrt(&["run", neff.to_str().unwrap(), "--profile", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let line = text.lines().find(|l| l.starts_with("profile ")).unwrap_or_else(|| panic!("no profile line in:\n{text}"));
    let path = line.trim_start_matches("profile ").split(" (").next().unwrap();
    let json = std::fs::read_to_string(path).unwrap();
    assert!(json.starts_with("{\"displayTimeUnit\""), "{}", &json[..json.len().min(200)]);
    // The compiler's names of the matmuls, from the NEFF's debug info.
    assert!(json.contains("\"name\":\"I-87-0\""), "no I-87-0 event in the profile");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `nrt neff inspect F | head`: a reader that closes the pipe early ends
/// the command by SIGPIPE, as for other Unix tools, not by a panic.
#[test]
fn a_closed_stdout_pipe_ends_the_command_quietly() {
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    let Some(neff) = real_neff() else { return };
    let mut child = common::nrt_command()
        .args(["neff", "inspect", neff.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run nrt");
    // The reader goes before the first line is written.
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait for nrt");
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    // 13: SIGPIPE on Linux.
    assert_eq!(out.status.signal(), Some(13), "ended by SIGPIPE: {:?}", out.status);
}

/// The words of a help text or synopsis that are options (`-w`, `--input`),
/// without brackets, punctuation and `=VALUE`.
fn options_in(text: &str) -> std::collections::BTreeSet<String> {
    text.split_whitespace()
        .map(|w| w.trim_matches(|c: char| "[](),|.".contains(c)))
        .map(|w| w.split(['=', '<']).next().unwrap())
        .filter(|w| w.starts_with('-') && w.len() > 1 && w.chars().nth(1).is_some_and(|c| c == '-' || c.is_ascii_alphabetic()))
        .map(str::to_string)
        .collect()
}

/// The subcommands a help text lists under `Commands:` (without `help`).
fn subcommands(help: &str) -> Vec<String> {
    help.split("Commands:")
        .nth(1)
        .map(|c| c.lines().skip(1).take_while(|l| !l.trim().is_empty()).filter_map(|l| l.split_whitespace().next()).filter(|w| *w != "help").map(str::to_string).collect())
        .unwrap_or_default()
}

/// docs/cli.md's command table is the CLI: every row's command exists and
/// every option the row shows is in that command's `--help`, and every
/// command and subcommand of `nrt --help` has a row.
#[test]
fn the_command_table_is_the_cli() {
    let section = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/cli.md")).expect("docs/cli.md");
    let mut rows = std::collections::BTreeSet::new();
    let mut wrong = Vec::new();
    for line in section.lines().filter(|l| l.starts_with("| `nrt ")) {
        let synopsis = line.split('`').nth(1).unwrap().replace("\\|", "|");
        let verbs: Vec<&str> = synopsis.split_whitespace().skip(1).take_while(|w| w.chars().all(|c| c.is_ascii_lowercase() || c == '-') && !w.starts_with('-')).collect();
        let help = nrt(&[verbs.as_slice(), &["--help"]].concat());
        if !help.status.success() {
            wrong.push(format!("`nrt {}` does not exist: {}", verbs.join(" "), stderr(&help)));
            continue;
        }
        let known = options_in(&stdout(&help));
        for opt in options_in(&synopsis).difference(&known) {
            wrong.push(format!("`nrt {}` has no option {opt}", verbs.join(" ")));
        }
        rows.insert(verbs.join(" "));
    }
    for cmd in subcommands(&stdout(&nrt(&["--help"]))) {
        let subs = subcommands(&stdout(&nrt(&[&cmd, "--help"])));
        let paths = if subs.is_empty() { vec![cmd.clone()] } else { subs.iter().map(|s| format!("{cmd} {s}")).collect() };
        wrong.extend(paths.into_iter().filter(|p| !rows.contains(p)).map(|p| format!("`nrt {p}` has no row in docs/cli.md's table")));
    }
    assert!(rows.len() > 15, "rows read: {rows:?}");
    assert!(wrong.is_empty(), "docs/cli.md's command table against the CLI:\n{}", wrong.join("\n"));
}
