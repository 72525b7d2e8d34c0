//! ELF symbol versions of the exports: every `nrt_*` function is bound to
//! version node NRT_2.0.0 and every `nrta_*` function to NRT_3.0.0 (the
//! nodes are defined in `libnrt.map`). `@@@` makes each the default
//! version, so programs linked against libnrt record the node.
//!
//! A `.symver` directive only binds a symbol defined in the same object
//! file, so each API module invokes [`versioned!`] for its own exports
//! (a module's functions and its `global_asm!` share a codegen unit).

/// Binds the listed exports of the invoking module to version `$node`.
macro_rules! versioned {
    ($node:literal: $($name:ident),* $(,)?) => {
        $(
            #[cfg(target_os = "linux")]
            std::arch::global_asm!(concat!(".symver ", stringify!($name), ", ", stringify!($name), "@@@", $node));
        )*
    };
}

pub(crate) use versioned;
