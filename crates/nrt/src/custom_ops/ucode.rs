//! The POOL engine's Q7 code image and the rules for replacing it
//! (`nrt_set_pool_eng_ucode`, seed 001 §2.1).
//!
//! A caller may register an {IRAM, DRAM} image before `nrt_init` only:
//! while the runtime is initialised the call returns NRT_UNINITIALIZED
//! (13 = 0xd) and after `nrt_close` NRT_CLOSED (14 = 0xe), the values
//! libnrt's guard returns. The image is stored; at init the runtime takes
//! its stock image first and then, if one was registered, silently
//! replaces it (no check, no log line beyond the debug trace), exactly
//! like libnrt's override of the shipped ucode.

use crate::status::{NrtError, NrtResult, NrtStatus};

/// A Q7 code image: what goes into each core's instruction RAM and data
/// RAM. In this implementation the IRAM image is a WebAssembly module.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Q7Image {
    /// Code image (IRAM).
    pub iram: Vec<u8>,
    /// Data image (DRAM).
    pub dram: Vec<u8>,
}

/// Where the image the runtime installs came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageSource {
    /// The runtime's own stock image.
    Stock,
    /// The image registered with `nrt_set_pool_eng_ucode`.
    Registered,
}

impl Q7Image {
    /// The runtime's stock image: the stock library of the device
    /// contract (`nrt_isa::ucode::stock_library`, one kernel `nrt_nop` at
    /// spec 0), split into its IRAM and DRAM images.
    pub fn stock() -> Q7Image {
        let lib = nrt_isa::ucode::stock_library();
        Q7Image { iram: lib.iram(), dram: lib.dram() }
    }

    /// The image parsed as a library (for its kernel table), if it is one.
    pub fn library(&self) -> Option<nrt_isa::ucode::LibraryImage> {
        nrt_isa::ucode::LibraryImage::from_parts(&self.iram, &self.dram).ok()
    }
}

/// The init-time choice: the stock image, then silently the registered
/// one if there is one (libnrt loads the stock ucode first and overwrites
/// each half that was registered).
pub fn resolve_install_image(stock: Q7Image, registered: Option<&Q7Image>) -> (Q7Image, ImageSource) {
    match registered {
        None => (stock, ImageSource::Stock),
        Some(r) => {
            let iram = if r.iram.is_empty() { stock.iram } else { r.iram.clone() };
            let dram = if r.dram.is_empty() { stock.dram } else { r.dram.clone() };
            (Q7Image { iram, dram }, ImageSource::Registered)
        }
    }
}

/// Where the process-wide runtime is, as the ucode guard sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GuardState {
    /// Before `nrt_init` (the only state that accepts an image).
    Start,
    /// Initialised.
    Init,
    /// After `nrt_close`.
    Closed,
}

/// libnrt's guard of `nrt_set_pool_eng_ucode`: store before init; refuse
/// with 0xd while initialised and 0xe after close.
pub fn check_registration(state: GuardState) -> NrtResult<()> {
    match state {
        GuardState::Start => Ok(()),
        GuardState::Init => Err(NrtError::new(
            NrtStatus::Uninitialized,
            "nrt_set_pool_eng_ucode must be called before nrt_init; the runtime is already initialised",
        )),
        GuardState::Closed => Err(NrtError::new(NrtStatus::Closed, "nrt_set_pool_eng_ucode after nrt_close; register the image before nrt_init")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_start_state_accepts_an_image() {
        assert!(check_registration(GuardState::Start).is_ok());
        let e = check_registration(GuardState::Init).unwrap_err();
        assert_eq!(e.status as i32, 0xd);
        let e = check_registration(GuardState::Closed).unwrap_err();
        assert_eq!(e.status as i32, 0xe);
    }

    #[test]
    fn a_registered_image_silently_replaces_the_stock_one() {
        let stock = Q7Image::stock();
        assert_eq!(resolve_install_image(stock.clone(), None), (stock.clone(), ImageSource::Stock));
        let mine = Q7Image { iram: b"\0asm\x01\0\0\0mine".to_vec(), dram: vec![7; 16] };
        assert_eq!(resolve_install_image(stock.clone(), Some(&mine)), (mine, ImageSource::Registered));
        // A half left empty keeps the stock half.
        let code_only = Q7Image { iram: vec![1, 2, 3], dram: Vec::new() };
        let (img, src) = resolve_install_image(Q7Image { iram: vec![9], dram: vec![4, 4] }, Some(&code_only));
        assert_eq!((img.iram, img.dram, src), (vec![1, 2, 3], vec![4, 4], ImageSource::Registered));
    }
}
