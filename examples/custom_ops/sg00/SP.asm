# SP engine of custom_ops: moves data in and out.
# Semaphores: 1 = qIn blocks landed (x, two argument blocks), 2 = qOut
# blocks landed, 5 = relu done (1 per op, see POOL.asm), 6 = softmax done.
dma_trigger queue="qIn" block_id=0    # x -> SBUF +0x0, row i on partition i
dma_trigger queue="qIn" block_id=1    # relu's argument block -> SBUF +0x2000
dma_trigger queue="qIn" block_id=2    # softmax's argument block -> SBUF +0x2400
dma_trigger queue="qOut" block_id=3 wait=sem5>=1   # y out, once relu is done
dma_trigger queue="qOut" block_id=4 wait=sem6>=1   # z out, once softmax is done
event_semaphore wait=sem2>=2
pseudo_inst sub=exit_execution
