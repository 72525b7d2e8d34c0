# SP engine of device-print: DMA x in, wait for DVE, DMA y out.
# Semaphores: 1 = x landed, 3 = DVE finished, 2 = y written out.
dma_trigger queue="qIn" block_id=0    # x row r -> SBUF partition r at +0x0
dma_trigger queue="qOut" block_id=1 wait=sem3>=1   # y row r from partition r at +0x100
event_semaphore wait=sem2>=1
pseudo_inst sub=exit_execution
