//! A C kernel written against include/nrt/nrt_kernel.h, compiled with
//! clang for wasm32, packed and run on the Q7 cluster. Skips with a note
//! when clang (with wasm-ld) is not installed.

mod q7rig;

use nrt_isa::ucode::{STDIO_ENTRY_BYTES, StdioEntryHeader};
use q7rig::Rig;
use std::process::Command;

#[test]
fn c_relu_kernel_runs_on_the_cluster() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let out = std::env::temp_dir().join(format!("nrt-relu-c-{}.wasm", std::process::id()));
    let r = Command::new("clang")
        .args(["--target=wasm32", "-O2", "-msimd128", "-nostdlib", "-Wl,--no-entry", "-I"])
        .arg(format!("{root}/include"))
        .arg("-o")
        .arg(&out)
        .arg(format!("{root}/crates/nrt-kernel/kernels/c/relu.c"))
        .output();
    let wasm = match r {
        Err(_) => {
            eprintln!("note: clang is not installed; skipping the C kernel test");
            return;
        }
        Ok(o) if !o.status.success() && String::from_utf8_lossy(&o.stderr).contains("wasm-ld") => {
            eprintln!("note: clang has no wasm-ld (install lld); skipping the C kernel test");
            return;
        }
        Ok(o) => {
            assert!(o.status.success(), "clang failed:\n{}", String::from_utf8_lossy(&o.stderr));
            let w = std::fs::read(&out).unwrap();
            let _ = std::fs::remove_file(&out);
            w
        }
    };
    let (lib, names) = nrt_sim::q7::build::library_from_wasm(wasm).unwrap();
    assert_eq!(names, ["relu_c"]);
    let rig = Rig::new(true);
    rig.install(&lib);
    let data = rig.install_stdout_ring(4);
    let x: Vec<f32> = (0..5000).map(|i| (i as f32 - 2500.0) * 0.5).collect();
    let (xa, ya) = (rig.put_f32(&x), rig.put_f32(&vec![-1.0; 5000]));
    let blk = Rig::block(vec![Rig::f32_tensor(xa, &[50, 100])], Some(Rig::f32_tensor(ya, &[50, 100])));
    rig.run(&rig.op_program(&blk, 0, None));
    assert!(rig.error_records().is_empty(), "{:?}", rig.error_records());
    assert_eq!(rig.get_f32(ya, 5000), x.iter().map(|v| v.max(0.0)).collect::<Vec<_>>());
    let e = rig.get(data, STDIO_ENTRY_BYTES as usize);
    let h = StdioEntryHeader::decode(e[..16].try_into().unwrap());
    assert_eq!(std::str::from_utf8(&e[16..16 + h.len as usize]).unwrap(), "relu_c: 5000 elements, 100% done, x=1.500000\n");
}
