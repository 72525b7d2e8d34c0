//! The ABI against the driver's own header: a C program compiled against
//! `../shared/data/headers/driver/neuron_ioctl.h` prints every command
//! number, struct size and field offset nrt-ndl uses, and each must equal
//! the Rust value. Skipped (with the marker) when the header copy or a C
//! compiler is absent.

use nrt_ndl::abi::{COMMANDS, STRUCTS};
use nrt_test_support::skip;
use std::fmt::Write as _;
use std::process::Command;

#[test]
fn numbers_sizes_and_offsets_match_the_driver_header() {
    let headers = nrt_test_support::repo_root().join("../shared/data/headers/driver");
    if !headers.join("neuron_ioctl.h").is_file() {
        skip!("{} is absent (the driver's headers are not in ../shared)", headers.join("neuron_ioctl.h").display());
    }
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    if Command::new(&cc).arg("--version").output().is_err() {
        skip!("no C compiler ({cc}) to compile against the driver's header");
    }
    // The header is written for the kernel, where pid_t is always defined.
    let mut c = String::from("#include <stdio.h>\n#include <stddef.h>\n#include <sys/types.h>\n#include \"neuron_ioctl.h\"\nint main(void) {\n");
    let mut want = String::new();
    for (name, cmd) in COMMANDS {
        writeln!(c, "  printf(\"cmd {name} %#x\\n\", (unsigned)({name}));").unwrap();
        writeln!(want, "cmd {name} {cmd:#x}").unwrap();
    }
    for s in STRUCTS {
        let n = s.c_name;
        writeln!(c, "  printf(\"size {n} %zu\\n\", sizeof(struct {n}));").unwrap();
        writeln!(want, "size {n} {}", s.size).unwrap();
        for (f, off) in s.fields {
            writeln!(c, "  printf(\"offset {n}.{f} %zu\\n\", offsetof(struct {n}, {f}));").unwrap();
            writeln!(want, "offset {n}.{f} {off}").unwrap();
        }
    }
    c.push_str("  return 0;\n}\n");
    let dir = std::env::temp_dir().join(format!("nrt-ndl-layout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("layout.c");
    let exe = dir.join("layout");
    std::fs::write(&src, &c).unwrap();
    let out = Command::new(&cc).arg("-I").arg(&headers).arg(&src).arg("-o").arg(&exe).output().unwrap();
    assert!(out.status.success(), "compiling against the driver header failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let run = Command::new(&exe).output().unwrap();
    assert!(run.status.success());
    let got = String::from_utf8(run.stdout).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    // "0x0" prints as "0" with %#x.
    let want = want.replace(" 0x0\n", " 0\n");
    let diffs: Vec<String> = want
        .lines()
        .zip(got.lines())
        .filter(|(w, g)| w != g)
        .map(|(w, g)| format!("  nrt-ndl: {w}\n  driver:  {g}"))
        .collect();
    assert_eq!(want.lines().count(), got.lines().count(), "the C program printed a different number of lines");
    assert!(diffs.is_empty(), "the ABI differs from the driver's header:\n{}", diffs.join("\n"));
    assert!(COMMANDS.len() > 30 && STRUCTS.len() > 25, "the tables shrank");
}
