prologue_b1
branch_label
dma2d flags=0 sem=8 sem_add=16 src=[dge0+0x0; 0x400,128; 0x1,1; 1024] dst=[var0+0x1000; 0x40000,128; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=9 sem_add=16 src=[var3+0x0; 0x400,128; 0x1,1; 1024] dst=[var0+0x1800; 0x40000,128; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=10 sem_add=16 src=[var3+0x20000; 0x400,128; 0x1,1; 1024] dst=[var0+0x1c00; 0x40000,128; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=11 sem_add=16 src=[var4+0x0; 0x4,128; 0x200,2; 4] dst=[var0+0x2000; 0x40000,128; 0x4,2; 4] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=12 sem_add=16 src=[var5+0x0; 0x400,128; 0x1,1; 1024] dst=[var0+0x2500; 0x40000,128; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=13 sem_add=16 src=[var5+0x20000; 0x400,128; 0x1,1; 1024] dst=[var0+0x2900; 0x40000,128; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=14 sem_add=16 src=[var0+0x3200; 0x40000,128; 0x1,1; 1024] dst=[var7+0x0; 0x400,128; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32 wait=sem7>=4
trigger_collective op=add dtype=float32 group_id=0 input_tensor=0x7 output_tensor=0x8 num_elements=0x8000 collective=all_reduce src_offset=0x0 dst_offset=0x0 wait=sem14>=16 update=sem3++
dma2d flags=0 sem=15 sem_add=16 src=[var8+0x0; 0x400,128; 0x1,1; 1024] dst=[dge1+0x0; 0x400,128; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32 wait=sem3>=1
event_semaphore ext_wait=sem9>=16 ext_update=none wait=sem8>=16
event_semaphore ext_wait=sem11>=16 ext_update=none wait=sem10>=16
event_semaphore ext_wait=sem13>=16 ext_update=none wait=sem12>=16
event_semaphore ext_wait=none ext_update=none wait=sem14>=16
nop wait=sem15>=16
