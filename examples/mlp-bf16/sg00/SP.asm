# SP engine of mlp-bf16: moves data in and out.
# Semaphores: 1 = qIn blocks landed (x, W, b), 2 = qOut block landed,
# 7 = POOL finished writing y into SBUF.
dma_trigger queue="qIn" block_id=0    # x  -> SBUF +0x0, row i on partition i
dma_trigger queue="qIn" block_id=1    # W  -> SBUF +0x2000, row k on partition k%128, K tile k/128
dma_trigger queue="qIn" block_id=2    # b  -> SBUF +0x4000, 128 values on each of partitions 0..3
dma_trigger queue="qOut" block_id=3 wait=sem7>=1   # y out, once POOL has written it
event_semaphore wait=sem2>=1
pseudo_inst sub=exit_execution
