//! Where each record of a staged engine image came from.
//!
//! The device reports positions as program counters: an error record or a
//! trace record carries the index of the record the engine was executing,
//! counted from the start of the engine's dispatcher stream. Lowering
//! moves records around (a DMA trigger becomes two WRITEs, a custom op six
//! records, a branch label none) and frames MAIN with the runtime's own
//! PREAMBLE and POSTAMBLE, so a raw counter means nothing to a user. An
//! [`ImageMap`], built while lowering, turns an image-relative counter back
//! into the compiler's instruction: its index in the NEFF's stream, its
//! opcode and, when the NEFF carries debug info, the compiler's name for it
//! (`I-87-0`). Error messages and instruction traces speak in those terms.

use nrt_hal::EngineId;
use nrt_isa::opcode::Opcode;
use nrt_isa::record::RecordBytes;

/// What one record of an engine image is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageSite {
    /// The runtime's preamble (model-switch skip and switch region), record `n`.
    Preamble(u32),
    /// The POOL engine's library-configuration head of MAIN, record `n`.
    LibraryConfig(u32),
    /// Record `part` of the `len` records NEFF instruction `index` lowered to.
    Source {
        /// Index of the instruction in the NEFF's engine stream.
        index: u32,
        /// Which of the records it became (0 for a record kept as is).
        part: u32,
        /// How many records it became.
        len: u32,
    },
    /// The runtime's postamble (join, semaphore reset, output notifications, exit), record `n`.
    Postamble(u32),
}

/// The map from image records back to the NEFF instructions they came from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImageMap {
    /// Records of the preamble.
    preamble: u32,
    /// Records of the library-configuration head.
    head: u32,
    /// For source instruction `i`, the MAIN offset (after the head) where
    /// its records start; one extra entry holds MAIN's end.
    starts: Vec<u32>,
    /// Opcode byte of each source instruction.
    opcodes: Vec<u8>,
    /// The compiler's name of each source instruction, where known.
    names: Vec<Option<String>>,
}

impl ImageMap {
    /// A map for an image of `preamble` records, then `head` records, then
    /// MAIN, where source instruction `i` starts at MAIN offset `starts[i]`
    /// (`starts` has one entry more than `sources`: MAIN's length).
    pub fn new(preamble: usize, head: usize, starts: &[usize], sources: &[RecordBytes]) -> ImageMap {
        ImageMap {
            preamble: preamble as u32,
            head: head as u32,
            starts: starts.iter().map(|s| *s as u32).collect(),
            opcodes: sources.iter().map(|r| r[0]).collect(),
            names: Vec::new(),
        }
    }

    /// The map of an image with no NEFF stream (preamble then postamble).
    pub fn frame_only(preamble: usize) -> ImageMap {
        ImageMap { preamble: preamble as u32, head: 0, starts: vec![0], opcodes: Vec::new(), names: Vec::new() }
    }

    /// Attaches the compiler's instruction names (index-aligned with the
    /// source stream; may be shorter or empty).
    pub fn with_names(mut self, names: &[Option<String>]) -> ImageMap {
        self.names = names.to_vec();
        self
    }

    /// Records of MAIN, head included.
    fn main_end(&self) -> u64 {
        u64::from(self.preamble) + u64::from(self.head) + u64::from(*self.starts.last().unwrap_or(&0))
    }

    /// What record `pc` (counted from the image's first record) is.
    pub fn site(&self, pc: u64) -> ImageSite {
        let pre = u64::from(self.preamble);
        if pc < pre {
            return ImageSite::Preamble(pc as u32);
        }
        let in_main = pc - pre;
        if in_main < u64::from(self.head) {
            return ImageSite::LibraryConfig(in_main as u32);
        }
        if pc >= self.main_end() {
            return ImageSite::Postamble((pc - self.main_end()).min(u64::from(u32::MAX)) as u32);
        }
        let off = (in_main - u64::from(self.head)) as u32;
        // The last source instruction whose records start at or before `off`
        // (instructions that became no records share a start with the next).
        let i = self.starts.partition_point(|s| *s <= off).saturating_sub(1);
        let start = self.starts[i];
        let end = self.starts.get(i + 1).copied().unwrap_or(start + 1);
        ImageSite::Source { index: i as u32, part: off - start, len: end.saturating_sub(start).max(1) }
    }

    /// The compiler's name of source instruction `index`, if known.
    pub fn name(&self, index: u32) -> Option<&str> {
        self.names.get(index as usize).and_then(|n| n.as_deref())
    }

    /// The opcode byte of source instruction `index`.
    pub fn opcode(&self, index: u32) -> Option<u8> {
        self.opcodes.get(index as usize).copied()
    }

    /// A human description of record `pc` of `engine`'s image in
    /// `subgraph`: "sg00 PE instruction 12 'I-87-0' (MATMUL)", with the
    /// lowered part when an instruction became several records, or the
    /// runtime frame part it belongs to.
    pub fn describe(&self, subgraph: &str, engine: EngineId, pc: u64) -> String {
        let e = engine.name();
        match self.site(pc) {
            ImageSite::Preamble(n) => format!("{subgraph} {e} runtime preamble record {n}"),
            ImageSite::LibraryConfig(n) => format!("{subgraph} {e} GPSIMD library configuration record {n}"),
            ImageSite::Postamble(n) => format!("{subgraph} {e} runtime postamble record {n}"),
            ImageSite::Source { index, part, len } => {
                let name = self.name(index).map(|n| format!(" '{n}'")).unwrap_or_default();
                let op = self.opcode(index).map(opcode_label).unwrap_or_default();
                let lowered = if len > 1 { format!(", lowered record {} of {len}", part + 1) } else { String::new() };
                format!("{subgraph} {e} instruction {index}{name} ({op}{lowered})")
            }
        }
    }
}

/// "MATMUL" for a known opcode, "opcode 0x5e" otherwise.
pub fn opcode_label(byte: u8) -> String {
    Opcode::from_u8(byte).name().map_or_else(|| format!("opcode {byte:#04x}"), str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rec(op: u8) -> RecordBytes {
        let mut r = [0u8; 64];
        r[0] = op;
        r
    }

    /// Preamble 2, head 1, sources: kept (1), dropped (0), trigger (2), kept (1).
    fn sample() -> ImageMap {
        let sources = [rec(0x02), rec(0xCC), rec(0xD4), rec(0x46)];
        ImageMap::new(2, 1, &[0, 1, 1, 3, 4], &sources).with_names(&[Some("I-1".into()), None, Some("dma-7".into())])
    }

    #[test]
    fn every_region_is_found() {
        let m = sample();
        assert_eq!(m.site(0), ImageSite::Preamble(0));
        assert_eq!(m.site(1), ImageSite::Preamble(1));
        assert_eq!(m.site(2), ImageSite::LibraryConfig(0));
        assert_eq!(m.site(3), ImageSite::Source { index: 0, part: 0, len: 1 });
        // The dropped instruction 1 owns no record; 2's two records follow.
        assert_eq!(m.site(4), ImageSite::Source { index: 2, part: 0, len: 2 });
        assert_eq!(m.site(5), ImageSite::Source { index: 2, part: 1, len: 2 });
        assert_eq!(m.site(6), ImageSite::Source { index: 3, part: 0, len: 1 });
        assert_eq!(m.site(7), ImageSite::Postamble(0));
        assert_eq!(m.site(9), ImageSite::Postamble(2));
    }

    #[test]
    fn descriptions_name_the_compiler_instruction() {
        let m = sample();
        assert_eq!(m.describe("sg00", EngineId::Pe, 3), "sg00 PE instruction 0 'I-1' (MATMUL)");
        assert_eq!(m.describe("sg01", EngineId::Sp, 5), "sg01 SP instruction 2 'dma-7' (PSEUDO_DMA_DIRECT2D, lowered record 2 of 2)");
        assert_eq!(m.describe("sg00", EngineId::Act, 6), format!("sg00 ACT instruction 3 ({})", opcode_label(0x46)));
        assert_eq!(m.describe("sg00", EngineId::Pe, 1), "sg00 PE runtime preamble record 1");
        assert_eq!(opcode_label(0xEE), "opcode 0xee");
        assert_eq!(m.describe("sg00", EngineId::Pe, 8), "sg00 PE runtime postamble record 1");
    }

    #[test]
    fn an_image_without_a_stream_is_all_frame() {
        let m = ImageMap::frame_only(2);
        assert_eq!(m.site(1), ImageSite::Preamble(1));
        assert_eq!(m.site(2), ImageSite::Postamble(0));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// For any expansion of a stream, walking the image visits every
        /// source instruction that owns records, in order, with parts
        /// 0..len, and never panics past the end.
        #[test]
        fn sites_follow_the_lowering(sizes in prop::collection::vec(0usize..7, 0..40), pre in 0usize..4, head in 0usize..4) {
            let mut starts = vec![0usize];
            for s in &sizes { starts.push(starts.last().unwrap() + s); }
            let sources: Vec<RecordBytes> = sizes.iter().map(|_| rec(0x02)).collect();
            let m = ImageMap::new(pre, head, &starts, &sources);
            let mut pc = (pre + head) as u64;
            for (i, s) in sizes.iter().enumerate() {
                for part in 0..*s {
                    prop_assert_eq!(m.site(pc), ImageSite::Source { index: i as u32, part: part as u32, len: *s as u32 });
                    pc += 1;
                }
            }
            prop_assert_eq!(m.site(pc), ImageSite::Postamble(0));
            let _ = m.site(u64::MAX);
        }
    }
}
