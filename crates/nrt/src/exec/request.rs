//! The 52-byte execution request (`device_exec_request_t`) and the 56-byte
//! request buffer it is copied into (body + `cc_dma_increment`).

/// Offset of `do_model_switch`.
pub const DO_MODEL_SWITCH: usize = 0x00;
/// Offset of `eng_addresses_lo[5]` (engine order PE, ACT, POOL, DVE, SP).
pub const ENG_ADDR_LO: usize = 0x04;
/// Offset of `eng_addresses_hi[5]`.
pub const ENG_ADDR_HI: usize = 0x18;
/// Offset of `reload_seq_config`.
pub const RELOAD_SEQ_CONFIG: usize = 0x2C;
/// Offset of `load_act_dve_tables`.
pub const LOAD_ACT_DVE_TABLES: usize = 0x30;
/// Size of the request body.
pub const REQUEST_BYTES: usize = 0x34;
/// Size of the device request buffer (body + the u32 `cc_dma_increment`).
pub const REQUEST_BUFFER_BYTES: usize = 0x38;

/// One execution request, as the dispatcher reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ExecRequest {
    /// The model differs from the last one posted on this core.
    pub do_model_switch: bool,
    /// Per-engine instruction-block addresses (PE, ACT, POOL, DVE, SP).
    pub engine_addresses: [u64; 5],
    /// The sequencers must re-read their configuration.
    pub reload_seq_config: bool,
    /// ACT / DVE lookup tables must be reloaded.
    pub load_act_dve_tables: bool,
    /// Collectives DMA increment (0 without collectives).
    pub cc_dma_increment: u32,
}

impl ExecRequest {
    /// The 56 bytes of the request buffer (little-endian u32 fields).
    pub fn to_bytes(&self) -> [u8; REQUEST_BUFFER_BYTES] {
        let mut b = [0u8; REQUEST_BUFFER_BYTES];
        let mut put = |off: usize, v: u32| b[off..off + 4].copy_from_slice(&v.to_le_bytes());
        put(DO_MODEL_SWITCH, u32::from(self.do_model_switch));
        for (i, a) in self.engine_addresses.iter().enumerate() {
            put(ENG_ADDR_LO + 4 * i, *a as u32);
            put(ENG_ADDR_HI + 4 * i, (*a >> 32) as u32);
        }
        put(RELOAD_SEQ_CONFIG, u32::from(self.reload_seq_config));
        put(LOAD_ACT_DVE_TABLES, u32::from(self.load_act_dve_tables));
        put(REQUEST_BYTES, self.cc_dma_increment);
        b
    }

    /// Reads a request buffer back; flags must be 0 or 1.
    pub fn from_bytes(b: &[u8; REQUEST_BUFFER_BYTES]) -> Option<ExecRequest> {
        let get = |off: usize| u32::from_le_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]]);
        let flag = |off: usize| match get(off) {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        };
        let mut engine_addresses = [0u64; 5];
        for (i, a) in engine_addresses.iter_mut().enumerate() {
            *a = u64::from(get(ENG_ADDR_LO + 4 * i)) | u64::from(get(ENG_ADDR_HI + 4 * i)) << 32;
        }
        Some(ExecRequest {
            do_model_switch: flag(DO_MODEL_SWITCH)?,
            engine_addresses,
            reload_seq_config: flag(RELOAD_SEQ_CONFIG)?,
            load_act_dve_tables: flag(LOAD_ACT_DVE_TABLES)?,
            cc_dma_increment: get(REQUEST_BYTES),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn layout_matches_the_seed() {
        let r = ExecRequest { do_model_switch: true, engine_addresses: [0x1_2345_6780, 0, 0, 0, 0xAB_0000_0040], reload_seq_config: true, load_act_dve_tables: false, cc_dma_increment: 7 };
        let b = r.to_bytes();
        assert_eq!(&b[0..4], &1u32.to_le_bytes());
        assert_eq!(&b[4..8], &0x2345_6780u32.to_le_bytes());
        assert_eq!(&b[0x18..0x1C], &1u32.to_le_bytes());
        assert_eq!(&b[0x14..0x18], &0x40u32.to_le_bytes());
        assert_eq!(&b[0x28..0x2C], &0xABu32.to_le_bytes());
        assert_eq!(&b[0x2C..0x30], &1u32.to_le_bytes());
        assert_eq!(&b[0x34..0x38], &7u32.to_le_bytes());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn round_trips(sw: bool, rl: bool, tb: bool, cc: u32, addrs in any::<[u64; 5]>()) {
            let r = ExecRequest { do_model_switch: sw, engine_addresses: addrs, reload_seq_config: rl, load_act_dve_tables: tb, cc_dma_increment: cc };
            prop_assert_eq!(ExecRequest::from_bytes(&r.to_bytes()), Some(r));
        }

        #[test]
        fn decoding_random_bytes_never_panics(b in any::<[u8; 32]>(), c in any::<[u8; 24]>()) {
            let mut buf = [0u8; REQUEST_BUFFER_BYTES];
            buf[..32].copy_from_slice(&b);
            buf[32..].copy_from_slice(&c);
            let _ = ExecRequest::from_bytes(&buf);
        }
    }
}
