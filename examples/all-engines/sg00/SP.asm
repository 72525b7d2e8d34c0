# SP engine of all-engines: DMA x in, wait for ACT, DMA cov out.
# Semaphores: 1 = x landed, 2 = cov written out, 6 = ACT finished.
dma_trigger queue="qIn" block_id=0    # x row r -> SBUF partition r at +0x0
dma_trigger queue="qOut" block_id=1 wait=sem6>=1   # cov row m from partition m at +0x1000
event_semaphore wait=sem2>=1
pseudo_inst sub=exit_execution
