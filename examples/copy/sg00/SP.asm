# SP engine of the copy example.
# Fire DMA block 0 of queue set qCopy (input -> output), wait until the
# queue's completion semaphore 1 says the block is done, and finish.
dma_trigger queue="qCopy" block_id=0
event_semaphore wait=sem1>=1
pseudo_inst sub=exit_execution
