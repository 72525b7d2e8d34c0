//! The ABI against the driver's own headers: C programs compiled against
//! `../shared/data/headers/driver` print every command number, struct
//! size and field offset nrt-ndl uses (`neuron_ioctl.h`), the datastore's
//! layout (`share/neuron_driver_shared.h`) and the device's register map
//! (`udma/udma_regs.h`, `v2/` and `v3/address_map.h`), and each must equal
//! the Rust value. Skipped (with the marker) when the header copy or a C
//! compiler is absent.

use nrt_ndl::abi::{COMMANDS, STRUCTS};
use nrt_test_support::skip;
use std::fmt::Write as _;
use std::process::Command;

#[test]
fn numbers_sizes_and_offsets_match_the_driver_header() {
    let (cc, headers) = match compiler_and_headers("neuron_ioctl.h") {
        Ok(found) => found,
        Err(why) => skip!("{why}"),
    };
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
    // "0x0" prints as "0" with %#x.
    let want = want.replace(" 0x0\n", " 0\n");
    let diffs = compile_and_compare(&cc, &headers, "layout", c, &want);
    assert!(diffs.is_empty(), "the ABI differs from the driver's header:\n{}", diffs.join("\n"));
    assert!(COMMANDS.len() > 30 && STRUCTS.len() > 25, "the tables shrank");
}

/// The datastore entry's published layout (`nrt_hal::status::nds`)
/// against `share/neuron_driver_shared.h`: section offsets, counts, and
/// the word of every NC counter of every core as the driver's own macros
/// place it.
#[test]
fn the_datastore_layout_matches_the_driver_header() {
    use nrt_hal::status::{self, nds};
    let (cc, headers) = match compiler_and_headers("share/neuron_driver_shared.h") {
        Ok(found) => found,
        Err(why) => skip!("{why}"),
    };
    let mut c = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include <stdint.h>\n#include \"share/neuron_driver_shared.h\"\n\
         static uint64_t ds[262144 / 8];\nint main(void) {\n  char *b = (char *)ds;\n",
    );
    let mut want = String::new();
    let mut check = |expr: &str, value: usize| {
        writeln!(c, "  printf(\"{} %zu\\n\", (size_t)({expr}));", expr.replace('"', "'")).unwrap();
        writeln!(want, "{} {value}", expr.replace('"', "'")).unwrap();
    };
    check("sizeof(nds_header_t)", 8);
    check("NDS_ND_COUNTERS_START", nds::ND_COUNTERS * 8);
    check("NDS_ND_COUNTER_COUNT", nds::ND_COUNTER_COUNT);
    check("NDS_NEURONCORE_COUNTERS_START", nds::NC_COUNTERS * 8);
    check("NDS_NC_COUNTER_COUNT", nds::NC_COUNTER_COUNT);
    check("NDS_MAX_NEURONCORE_COUNT", nds::MAX_NEURONCORE_COUNT);
    check("NDS_EXT_NC_COUNTER_COUNT", nds::EXT_NC_COUNTER_COUNT);
    check("NDS_TOTAL_NC_COUNTER_COUNT", nds::TOTAL_NC_COUNTER_COUNT);
    check("NDS_EXT_MAX_NEURONCORE_COUNT", nds::EXT_MAX_NEURONCORE_COUNT);
    check("NDS_EXT_NEURONCORE_COUNTERS_START", nds::EXT_NC_COUNTERS * 8);
    check("NDS_EXT_NEURONCORE_NC_DATA_START", nds::EXT_NC_DATA * 8);
    check("NDS_EXT_NEURONCORE_NC_DATA_COUNT", nds::EXT_NC_DATA_COUNT);
    check("NDS_NEURONCORE_COUNTERS_START + NDS_NEURONCORE_COUNTERS_SIZE", nds::OBJECTS * 8);
    check("NDS_EXT_OFFSET_OLD / 8", nds::OBJECTS_END);
    check("NEURON_MAX_PROCESS_PER_DEVICE", status::ENTRIES);
    check("NDS_ND_COUNTER_RUNTIME_VERSION", nds::nd::RUNTIME_VERSION);
    check("NDS_ND_COUNTER_MEM_USAGE_CODE_HOST", nds::nd::MEM_USAGE_HOST);
    check("NDS_ND_COUNTER_MEM_USAGE_MISC_HOST", nds::nd::MEM_USAGE_HOST + nds::MemSlot::Misc as usize);
    check("NDS_NC_COUNTER_INFER_COMPLETED", nds::nc::INFER);
    check("NDS_NC_COUNTER_INFER_FAILED_TO_QUEUE", nds::nc::INFER + nrt_hal::status::Outcome::FailedToQueue as usize);
    check("NDS_NC_COUNTER_ERR_GENERIC", nds::nc::ERR_GENERIC);
    check("NDS_NC_COUNTER_ERR_NUMERICAL", nds::nc::ERR_NUMERICAL);
    check("NDS_NC_COUNTER_ERR_MODEL", nds::nc::ERR_MODEL);
    check("NDS_NC_COUNTER_ERR_TRANSIENT", nds::nc::ERR_TRANSIENT);
    check("NDS_NC_COUNTER_ERR_HW", nds::nc::ERR_HW);
    check("NDS_NC_COUNTER_ERR_RT", nds::nc::ERR_RT);
    check("NDS_NC_COUNTER_MEM_USAGE_CODE_DEVICE", nds::nc::MEM_USAGE_DEVICE);
    check("NDS_NC_COUNTER_MEM_USAGE_MISC_DEVICE", nds::nc::MEM_USAGE_DEVICE + nds::MemSlot::Misc as usize);
    check("NDS_NC_COUNTER_MODEL_LOAD_COUNT", nds::nc::MODEL_LOAD_COUNT);
    check("NDS_NC_COUNTER_INFERENCE_COUNT", nds::nc::INFERENCE_COUNT);
    check("NDS_NC_COUNTER_MAC_COUNT", nds::nc::MAC_COUNT);
    for (slot, name) in [(nds::MemSlot::Code, "CODE"), (nds::MemSlot::Tensors, "TENSORS"), (nds::MemSlot::Constants, "CONSTANTS"), (nds::MemSlot::Scratchpad, "SCRATCHPAD"), (nds::MemSlot::Misc, "MISC")] {
        check(&format!("NDS_NC_COUNTER_MEM_USAGE_{name}_DEVICE - NDS_NC_COUNTER_MEM_USAGE_CODE_DEVICE"), slot as usize);
    }
    // Every counter of every core: the word get_neuroncore_counter_value
    // reads, by the header's macros.
    for nc in 0..status::MAX_CORES {
        for k in 0..nds::TOTAL_NC_COUNTER_COUNT {
            let expr = if nc < nds::MAX_NEURONCORE_COUNT && k < nds::NC_COUNTER_COUNT {
                format!("(char *)&NDS_NEURONCORE_COUNTERS(b, {nc})[{k}] - b")
            } else if nc < nds::MAX_NEURONCORE_COUNT {
                format!("(char *)&NDS_EXT_NEURONCORE_COUNTERS(b, {nc})[{k} - NDS_NC_COUNTER_COUNT] - b")
            } else {
                // The macro does not parenthesise its index: pass a number.
                format!("(char *)&NDS_EXT_NEURONCORE_NC_DATA(b, {})[{k}] - b", nc - nds::MAX_NEURONCORE_COUNT)
            };
            check(&expr, nds::nc_word(nc, k).unwrap() * 8);
        }
    }
    let diffs = compile_and_compare(&cc, &headers, "nds_layout", c, &want);
    assert!(diffs.is_empty(), "the datastore layout differs from the driver's header:\n{}", diffs.join("\n"));
}

/// The device's register and memory map (`nrt_hal::arch`) against the
/// driver's: the UDMA unit's queue blocks and queue registers
/// (`udma/udma_regs.h`), every DMA engine's unit, the TPB windows, the
/// EVT_SEM block, HBM and the host tag (`v2/address_map.h`,
/// `v3/address_map.h`; v3's engine placement is `neuron_dhal_v3.c`'s
/// formula over the header's macros).
#[test]
fn the_register_map_matches_the_driver_headers() {
    use nrt_hal::arch::*;
    use nrt_hal::{CoreId, DmaQueueId};
    let (cc, headers) = match compiler_and_headers("udma/udma_regs.h") {
        Ok(found) => found,
        Err(why) => skip!("{why}"),
    };
    // udma_regs.h is a kernel header: its u32 comes from a stand-in
    // linux/types.h (written by compile_and_compare).
    let mut c = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include <stdint.h>\n#include \"udma/udma_regs.h\"\n\
         #include \"v2/address_map.h\"\n#include \"v3/address_map.h\"\nint main(void) {\n",
    );
    let mut want = String::new();
    let mut check = |expr: &str, value: u64| {
        writeln!(c, "  printf(\"{expr} %llu\\n\", (unsigned long long)({expr}));").unwrap();
        writeln!(want, "{expr} {value}").unwrap();
    };
    check("offsetof(struct unit_regs_v4, m2s) + offsetof(struct udma_m2s_regs_v4, m2s_q)", DMA_M2S_GROUP);
    check("offsetof(struct unit_regs_v4, s2m) + offsetof(struct udma_s2m_regs_v4, s2m_q)", DMA_S2M_GROUP);
    check("sizeof(struct udma_m2s_q)", DMA_QUEUE_REGS_STRIDE);
    check("sizeof(struct udma_s2m_q)", DMA_QUEUE_REGS_STRIDE);
    check("sizeof(((struct udma_m2s_regs_v4 *)0)->m2s_q) / sizeof(struct udma_m2s_q)", u64::from(TRN2.queues_per_dma_engine));
    check("sizeof(struct unit_regs_v4) <= V2_APB_SENG_UDMA_SIZE", 1);
    check("V2_APB_SENG_UDMA_SIZE", DMA_ENGINE_REGS_SIZE);
    for (reg, value) in [("status", DMA_REG_STATUS), ("drbp_low", DMA_REG_DRBP_LOW), ("drbp_high", DMA_REG_DRBP_HIGH), ("drl", DMA_REG_DRL), ("drhp", DMA_REG_DRHP), ("drtp_inc", DMA_REG_DRTP_INC), ("drtp", DMA_REG_DRTP)] {
        check(&format!("offsetof(union udma_q_regs, rings.{reg})"), value);
        let tx = reg.replacen('d', "td", 1);
        let rx = reg.replacen('d', "rd", 1);
        if reg != "status" {
            check(&format!("offsetof(struct udma_m2s_q, {tx})"), value);
            check(&format!("offsetof(struct udma_s2m_q, {rx})"), value);
        }
    }
    check("V2_DMA_ENG_PER_NC", u64::from(TRN1.dma_engines_per_core));
    check("V2_DMA_QUEUE_PER_ENG", u64::from(TRN1.queues_per_dma_engine));
    check("V3_DMA_ENG_PER_NC", u64::from(TRN2.dma_engines_per_core));
    check("V3_DMA_QUEUE_PER_ENG", u64::from(TRN2.queues_per_dma_engine));
    check("V3_NC_PER_SENG", u64::from(TRN2.dma_engines.cores_per_seng));
    check("V3_APB_SDMA_DIST", TRN2.dma_engines.engine_stride);
    for core in 0..TRN1.cores_per_device {
        for e in 0..TRN1.dma_engines_per_core {
            check(&format!("V2_APB_SENG_{core}_UDMA_{e}_BASE"), TRN1.dma_engine_regs(CoreId(core), e).get());
        }
    }
    for core in 0..TRN2.cores_per_device {
        for e in 0..TRN2.dma_engines_per_core {
            let (seng, within) = (core / 2, (core % 2) * 16 + e);
            check(&format!("V3_APB_SE_{seng}_SDMA_0_BASE + {within} * V3_APB_SDMA_DIST"), TRN2.dma_engine_regs(CoreId(core), e).get());
        }
    }
    // One doorbell by the driver's structs, end to end.
    let q = DmaQueueId { engine: 9, queue: 4 };
    check(
        "V3_APB_SE_3_SDMA_0_BASE + 25 * V3_APB_SDMA_DIST + offsetof(struct unit_regs_v4, s2m) + offsetof(struct udma_s2m_regs_v4, s2m_q[4].rdrtp_inc)",
        TRN2.dma_tail_inc_addr(CoreId(7), q, DMA_S2M_GROUP).get(),
    );
    // The windows around them.
    check("V2_MMAP_TPB_OFFSET", TRN1.tpb_base.get());
    check("V2_MMAP_TPB_SIZE", TRN1.tpb_stride);
    check("V3_MMAP_TPB_0_BASE", TRN2.tpb_base.get());
    check("V3_PCIE_BAR0_TPB_DIST", TRN2.tpb_stride);
    check("V2_MMAP_NC_EVENT_OFFSET", TRN1.windows.evt_sem);
    check("V3_MMAP_NC_EVENT_OFFSET", TRN2.windows.evt_sem);
    check("V2_MMAP_NC_SEMA_SIZE", EVT_SEM_SIZE);
    for (alias, value) in [("READ", EVT_SEM_SEM_READ), ("SET", EVT_SEM_SEM_SET), ("INCR", EVT_SEM_SEM_INC), ("DECR", EVT_SEM_SEM_DEC)] {
        check(&format!("V2_MMAP_NC_SEMA_{alias}_OFFSET - V2_MMAP_NC_EVENT_OFFSET"), value);
        check(&format!("V3_MMAP_NC_SEMA_{alias}_OFFSET - V3_MMAP_NC_EVENT_OFFSET"), value);
    }
    check("V2_SEMAPHORE_COUNT", u64::from(TRN1.semaphores));
    check("V3_EVENTS_COUNT", u64::from(TRN2.events));
    check("V2_PCIE_A0_BASE", TRN1.host_dma_base.get());
    check("V3_PCIE_A0_BASE", TRN2.host_dma_base.get());
    check("V2_HBM_0_BASE", TRN1.hbm[0].base.get());
    check("V2_HBM_1_BASE", TRN1.hbm[1].base.get());
    for (i, h) in TRN2.hbm.iter().enumerate() {
        check(&format!("V3_HBM_{i}_BASE"), h.base.get());
        check("V3_HBM_ACTIVE_SIZE", h.size);
    }
    check("V2_MAX_NQ_TYPE", u64::from(TRN1.nq_types));
    check("V3_MAX_NQ_TYPE", u64::from(TRN2.nq_types));
    check("V3_MAX_NQ_QUEUES", u64::from(TRN2.nqs_per_type));
    let diffs = compile_and_compare(&cc, &headers, "register_map", c, &want);
    assert!(diffs.is_empty(), "the register map differs from the driver's headers:\n{}", diffs.join("\n"));
}

/// The C compiler (`$CC`, else `cc`) and the driver's header directory
/// in `../shared`, or why a test against `header` cannot run here.
fn compiler_and_headers(header: &str) -> Result<(String, std::path::PathBuf), String> {
    let headers = nrt_test_support::repo_root().join("../shared/data/headers/driver");
    if !headers.join(header).is_file() {
        return Err(format!("{} is absent (the driver's headers are not in ../shared)", headers.join(header).display()));
    }
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    if Command::new(&cc).arg("--version").output().is_err() {
        return Err(format!("no C compiler ({cc}) to compile against the driver's header"));
    }
    Ok((cc, headers))
}

/// Ends the C program `c`, compiles it against `headers` (and a stand-in
/// `linux/types.h` giving the kernel's `u32`), runs it and answers the
/// lines that differ from `want` (ours, then the driver's).
fn compile_and_compare(cc: &str, headers: &std::path::Path, name: &str, mut c: String, want: &str) -> Vec<String> {
    c.push_str("  return 0;\n}\n");
    let dir = std::env::temp_dir().join(format!("nrt-ndl-{name}-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("linux")).unwrap();
    std::fs::write(dir.join("linux/types.h"), "#pragma once\n#include_next <linux/types.h>\n#include <stdint.h>\ntypedef uint32_t u32;\n").unwrap();
    let src = dir.join(format!("{name}.c"));
    let exe = dir.join(name);
    std::fs::write(&src, &c).unwrap();
    let out = Command::new(cc).arg("-I").arg(&dir).arg("-I").arg(headers).arg(&src).arg("-o").arg(&exe).output().unwrap();
    assert!(out.status.success(), "compiling against the driver header failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let run = Command::new(&exe).output().unwrap();
    assert!(run.status.success());
    let got = String::from_utf8(run.stdout).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(want.lines().count(), got.lines().count(), "the C program printed a different number of lines");
    want.lines().zip(got.lines()).filter(|(w, g)| w != g).map(|(w, g)| format!("  ours:   {w}\n  driver: {g}")).collect()
}
