//! C kernels written against include/nrt/nrt_kernel.h, compiled with
//! clang for wasm32 (warnings are errors), packed and run on the Q7
//! cluster: `c/relu.c` (the header's example) and `c/sdk.c` (every other
//! part of the header: scalars, returning a tensor, the argument errors,
//! the TCM pool, nrt_printf's conversions, the dtype sizes, one_value, a
//! failing kernel). Skipped when clang or lld's wasm-ld is not installed
//! (Debian packages clang and lld; scripts/test-all installs them).

mod q7rig;

use nrt_hal::DeviceAddr;
use nrt_isa::notification::InferErrorSubtype;
use nrt_isa::ucode::{ArgBlock, ArgKind, ArgTensor, GpsimdCause, LibraryImage, STDIO_ENTRY_BYTES, StdioEntryHeader, isa_dtype};
use q7rig::Rig;
use std::process::Command;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// `crates/nrt-kernel/kernels/c/<name>.c` built and packed: the library
/// and its kernel names; `None` (the calling test reported skipped)
/// without clang or wasm-ld.
fn c_library(name: &str) -> Option<(LibraryImage, Vec<String>)> {
    let out = std::env::temp_dir().join(format!("nrt-{name}-c-{}.wasm", std::process::id()));
    let r = Command::new("clang")
        .args(["--target=wasm32", "-O2", "-msimd128", "-nostdlib", "-Wl,--no-entry", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(format!("{ROOT}/include"))
        .arg("-o")
        .arg(&out)
        .arg(format!("{ROOT}/crates/nrt-kernel/kernels/c/{name}.c"))
        .output();
    let wasm = match r {
        Err(_) => nrt_test_support::skip!(return None; "clang is not installed (Debian package clang; scripts/test-all installs it)"),
        Ok(o) if !o.status.success() && String::from_utf8_lossy(&o.stderr).contains("wasm-ld") => {
            nrt_test_support::skip!(return None; "clang finds no wasm-ld (Debian package lld; scripts/test-all installs it)")
        }
        Ok(o) => {
            assert!(o.status.success(), "clang failed on {name}.c:\n{}", String::from_utf8_lossy(&o.stderr));
            let w = std::fs::read(&out).unwrap();
            let _ = std::fs::remove_file(&out);
            w
        }
    };
    Some(nrt_sim::q7::build::library_from_wasm(wasm).unwrap())
}

/// The text of stdout entry `k` of the ring at `data`.
fn printed(rig: &Rig, data: DeviceAddr, k: u64) -> String {
    let e = rig.get(data.offset(k * STDIO_ENTRY_BYTES), STDIO_ENTRY_BYTES as usize);
    let h = StdioEntryHeader::decode(e[..16].try_into().unwrap());
    String::from_utf8(e[16..16 + h.len as usize].to_vec()).unwrap()
}

#[test]
fn c_relu_kernel_runs_on_the_cluster() {
    let Some((lib, names)) = c_library("relu") else { return };
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
    assert_eq!(printed(&rig, data, 0), "relu_c: 5000 elements, 100% done, x=1.500000\n");
}

const SCALE_ADD: u8 = 0;
const COPY_BACK: u8 = 1;
const PROBE: u8 = 2;
const FAILS: u8 = 3;

#[test]
fn c_sdk_scalars_return_tensor_and_errors() {
    let Some((lib, names)) = c_library("sdk") else { return };
    assert_eq!(names, ["scale_add", "copy_back", "probe", "fails"]);

    // y = x * k + f: an int and a float scalar after the tensor, ragged
    // over the 8 cores.
    let rig = Rig::new(true);
    rig.install(&lib);
    let n = 1001usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.25 - 100.0).collect();
    let (xa, ya) = (rig.put_f32(&x), rig.put_f32(&vec![f32::NAN; n]));
    let k = ArgTensor::hbm(rig.put(&(-3i32).to_le_bytes()).get(), isa_dtype::INT32, &[1]);
    let f = ArgTensor::hbm(rig.put(&0.5f32.to_le_bytes()).get(), isa_dtype::FP32, &[1]);
    let blk = ArgBlock {
        args: vec![(ArgKind::Tensor, Rig::f32_tensor(xa, &[n as u32])), (ArgKind::Int, k), (ArgKind::Float, f)],
        dst: Some(Rig::f32_tensor(ya, &[n as u32])),
    };
    rig.run(&rig.op_program(&blk, SCALE_ADD, None));
    assert!(rig.error_records().is_empty(), "{:?}", rig.error_records());
    assert_eq!(rig.get_f32(ya, n), x.iter().map(|v| v * -3.0 + 0.5).collect::<Vec<_>>());

    // customop_return_tensor: fp16 bytes (2 per element) into the
    // destination, more than one 1 KiB chunk.
    let rig = Rig::new(true);
    rig.install(&lib);
    let src: Vec<u8> = (0..3000u32).map(|i| (i * 7 % 251) as u8).collect();
    let (sa, da) = (rig.put(&src), rig.put(&[0u8; 3000]));
    let blk = Rig::block(vec![ArgTensor::hbm(sa.get(), isa_dtype::FP16, &[1500])], Some(ArgTensor::hbm(da.get(), isa_dtype::FP16, &[1500])));
    rig.run(&rig.op_program(&blk, COPY_BACK, None));
    assert!(rig.error_records().is_empty(), "{:?}", rig.error_records());
    assert_eq!(rig.get(da, 3000), src);

    // What only a kernel sees: the argument errors, the TCM pool, the
    // formats, the dtype sizes (those of nrt-isa's table), one_value.
    let rig = Rig::new(true);
    rig.install(&lib);
    let data = rig.install_stdout_ring(4);
    let blk = Rig::block(vec![Rig::f32_tensor(rig.put_f32(&[1.0; 4]), &[4])], None);
    rig.run(&rig.op_program(&blk, PROBE, Some(77)));
    assert!(rig.error_records().is_empty(), "{:?}", rig.error_records());
    let sizes: String = (0..17u8).map(|c| char::from(b'0' + nrt_isa::ucode::args::dtype_bytes(c).unwrap_or(0) as u8)).collect();
    assert_eq!(
        printed(&rig, data, 0),
        format!("probe: kind=2 first=0 end=1 dst=5 ret=5 range=4 tcm=1001 cores=8 one=77 sizes={sizes}\n")
    );
    assert_eq!(printed(&rig, data, 1), "fmt: -7|42|42|ff|-5|4000000000|-5000000000|18446744073709551615|str|c|-1.250000|%|%q\n");

    // A kernel's nonzero status is a KERNEL_STATUS exception.
    let rig = Rig::new(true);
    rig.install(&lib);
    rig.run(&rig.op_program(&Rig::block(vec![], None), FAILS, None));
    let e = rig.error_records();
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].subtype, InferErrorSubtype::GpsimdException);
    assert_eq!(GpsimdCause::from_detail(e[0].detail).unwrap().0, GpsimdCause::KernelStatus);
}
