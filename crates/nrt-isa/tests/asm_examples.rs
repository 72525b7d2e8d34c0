//! Hand-written assembler text for every mnemonic, in the forms a person
//! would type (fields omitted, decimal or hex, named ops), checked against
//! the runtime's documented byte values where they exist.

use nrt_isa::asm::{assemble, assemble_program, disassemble};
use nrt_isa::instr::Instruction;

const PROGRAM: &str = r#"
# PE
ldweights weights=[0x37cfe; -1,32; 0,1; -32,4] dtype=float16 rows=128 cols=128 row_mask=0xf col_mask=0xf wait=sem8>=16
matmul moving=[0x37b00; 1,128; 0,1; 0,1] dtype=float16 rows=128 cols=128 accumulate=single psum=[0x2000800; 1,128; 0,1; 0,1] update=sem5++
# ACT / DVE / POOL
activate func=gelu in_dtype=float32 out_dtype=bfloat16 partitions=128 input=[0x4000; 1,512; 0,1; 0,1] output=[0x6000; 1,512; 0,1; 0,1] scale=0.5 bias=-1.25
act_table_load
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=add partitions=128 in0=[0x2002000; 1,512; 0,1; 0,1] in1=[0x5000; 1,512; 0,1; 0,1] out=[0x5000; 1,512; 0,1; 0,1]
tensor_scalar op0=mult in_dtype=float32 out_dtype=float32 partitions=64 input=[0x100; 1,16; 0,1; 0,1] output=[0x200; 1,16; 0,1; 0,1] scalar0=2.0 op1=add scalar1=1.0
pool op=max in_dtype=float32 out_dtype=float32 partitions=128 input=[0x0; 1,8; 8,4; 0,1] output=[0x400; 1,4; 0,1; 0,1] axes=1
copy src=[0x2000000; 1,64; 1,1; 1,1; 1,1] in_dtype=float32 out_dtype=float32 partitions=128 dst=[0x4200; 1,64; 1,1; 1,1; 1,1]
cast src=[0x4200; 1,64; 1,1; 1,1; 1,1] in_dtype=float32 out_dtype=float16 partitions=128 dst=[0x4400; 1,64; 1,1; 1,1; 1,1]
transpose in_dtype=float16 out_dtype=float16 partitions=32 input=[0x0; 1,32; 0,1; 0,1] output=[0x100; 1,32; 0,1; 0,1]
debug_print dtype=float32 partitions=4 input=[0x0; 1,8; 0,1; 0,1] prefix="x_tile"
embedding_update dtype=float32 index_dtype=int32 partitions=16 indices=[0x0; 1,1; 0,1; 0,1] updates=[0x40; 1,64; 0,1; 0,1] table_addr=0x100000 row_elems=64 num_rows=1000
load_pool_argument move_source=3 embedding_table_lo=0x1000 embedding_table_hi=0x1004 sbuf_base_addr=0x0
iota dtype=int32 partitions=128 output=[0x0; 1,64; 0,1; 0,1] base=0.0 partition_step=64.0 step0=1.0
memset dtype=float32 partitions=128 output=[0x5000; 1,512; 0,1; 0,1] fill=0.0
fill imm=0.0 count=512 in_dtype=float32 out_dtype=float32 partitions=128 dst=[0x5000; 1,512; 1,1; 1,1; 1,1]
copy_predicated mask_dtype=uint8 dtype=float32 partitions=128 mask=[0x0; 1,64; 0,1; 0,1] src=[0x100; 1,64; 0,1; 0,1] dst=[0x300; 1,64; 0,1; 0,1]
# control
event_semaphore wait=sem30>=80 ext_wait=sem6>=12
event_semaphore ext_update=sem7+=1
halt
drain
write addr=0x2802800038 data=4
nop wait=sem27>=16
notify queue=6 subtype=6 sub_id=7 payload=3
alu op=add dtype=int32 src1=imm src0_reg=2 dst_reg=2 imm=1
branch cmp=gt dtype=int32 target=rel_imm imm=10 cmp_reg=2 rel_offset=-4 hint=2
reset_range target=semaphores first=4 last=55
prologue_b1
poll_sem dst_reg=3 count=8 addr=0x2802701000
extended_inst spec=2 has_read=true has_write=true ports=1 data0=0x10 data1=0x20
# pseudo
dma_trigger queue="qSyncIO0" block_id=3
trigger_collective op=add dtype=float32 group_id=1 input_tensor=5 output_tensor=6 num_elements=1024 collective=all_reduce update=sem3++
pseudo_embedding_update queue=2 embedding_table=0x1000 bytes=256
branch_label
function_begin name="fn1" return_addr_reg_lo=10 return_addr_reg_hi=11
function_return
function_call name="fn1" args_table_var_id=7
dma2d sem=24 sem_add=16 src=[dge0+0x0; 0x200,128; 1,1; 512] dst=[var0+0x37c00; 0x40000,128; 1,1; 512] src_dtype=float16 dst_dtype=float16
pseudo_inst sub=exit_execution
"#;

#[test]
fn every_mnemonic_assembles_from_hand_written_text() {
    let prog = assemble_program(PROGRAM).unwrap();
    for m in Instruction::MNEMONICS {
        assert!(
            prog.instructions.iter().any(|i| i.mnemonic() == Some(m)),
            "no example for {m}"
        );
    }
    let bytes = prog.to_bytes();
    let text = disassemble(&bytes).unwrap();
    assert_eq!(assemble(&text).unwrap(), bytes);
}

/// DMAMEMCPY 0xB8 has no public layout: the assembler has no mnemonic
/// for it and the disassembler shows such a record as raw bytes.
#[test]
fn dmamemcpy_has_no_mnemonic() {
    assert!(!Instruction::MNEMONICS.contains(&"dma_memcpy"));
    assert!(assemble("dma_memcpy queue=1 sem=9 sem_add=16 src=0x1000 dst=0x2000 bytes=4096").is_err());
    let mut rec = [0u8; 64];
    rec[0] = 0xB8;
    rec[1] = 0x10;
    let text = disassemble(&rec).unwrap();
    assert!(!text.contains("dma_memcpy"), "{text}");
}

fn record_of(line: &str) -> [u8; 64] {
    assemble(line).unwrap().try_into().unwrap()
}

#[test]
fn runtime_descriptor_bytes_match_the_builders() {
    // CTRL_BR with cmp GT_IMM: descriptor 0x30806 at +0x0C, debug_hint 2.
    let br = record_of("branch cmp=gt dtype=int32 target=rel_imm hint=2");
    assert_eq!(&br[..4], &[0xA9, 0x10, 0, 2]);
    assert_eq!(&br[0x0C..0x0F], &[0x06, 0x08, 0x03]);
    assert_eq!(
        &record_of("branch cmp=eq dtype=int32 target=rel_imm")[0x0C..0x0F],
        &[0x03, 0x08, 0x03]
    );
    // CTRL_AL add-immediate: descriptor 0x10804.
    assert_eq!(
        &record_of("alu op=add dtype=int32 src1=imm")[0x0C..0x0F],
        &[0x04, 0x08, 0x01]
    );
    // CTRL_ES semaphore increment: update_mode 0x15 at +0x22, id at +0x23, delta at +0x28.
    let es = record_of("event_semaphore ext_update=sem7+=1");
    assert_eq!((es[0x22], es[0x23], es[0x28]), (0x15, 7, 1));
    // PSEUDO_TRIGGER_COLLECTIVE: ADD 4 at +0x0C, FP32 0x0A at +0x0D, ALL_REDUCE 1 at +0x20.
    let cc =
        record_of("trigger_collective op=add dtype=float32 collective=all_reduce update=sem3++");
    assert_eq!((cc[0x0C], cc[0x0D], cc[0x20], cc[6]), (4, 0x0A, 1, 0x13));
    // PSEUDO_INST EXIT_EXECUTION: byte 0 = 0xDF and byte 12 = 1 (the runtime's terminator scan).
    let exit = record_of("pseudo_inst sub=exit_execution");
    assert_eq!((exit[0], exit[12]), (0xDF, 1));
    // PSEUDO_DMA_TRIGGER: queue name at +0x0C.
    let trig = record_of("dma_trigger queue=\"qSyncIO0\"");
    assert_eq!(&trig[0x0C..0x14], b"qSyncIO0");
}
