//! Link settings of `libnrt.so`: the SONAME libnrt clients record
//! (`libnrt.so.1`) and the linker version script that defines the
//! NRT_2.0.0 and NRT_3.0.0 version nodes. Each export is bound to its node
//! by a `.symver` directive in `src/symbols.rs`; the script also makes
//! every symbol that is not versioned there local.

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let script = format!("{dir}/libnrt.map");
    println!("cargo:rerun-if-changed=libnrt.map");
    println!("cargo:rerun-if-changed=build.rs");
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if target_os == "linux" {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libnrt.so.1");
        println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={script}");
    }
}
