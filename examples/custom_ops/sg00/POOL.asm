# POOL engine of custom_ops: two GPSIMD custom ops on the Q7 cores.
# Each PSEUDO_EMBEDDING_UPDATE is lowered by the runtime into DMA config,
# LOAD_POOL_ARGUMENT (argument block at SBUF + embedding_table), DRAIN and
# the op's completion gate (an EVENT_SEMAPHORE incrementing the op's
# semaphore); the EXTENDED_INST after it runs the kernel (spec =
# sub_opcode in def.json) on the 8 cores. The gate's increment is the
# op's completion write, made once all 8 cores are done: 1 per op.
event_semaphore wait=sem1>=3
pseudo_embedding_update queue=0 embedding_table=0x2000 sbuf_base_addr=0 src_addr=0 dst_addr=0 bytes=576 update=sem5++
extended_inst spec=1
pseudo_embedding_update queue=1 embedding_table=0x2400 sbuf_base_addr=0 src_addr=0 dst_addr=0 bytes=576 update=sem6++
extended_inst spec=2
pseudo_inst sub=exit_execution
