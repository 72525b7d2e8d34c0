prologue_b1
branch_label
dma2d flags=0 sem=8 sem_add=16 src=[dge0+0x0; 0x4,128; 0x400,16; 4] dst=[var0+0x1000; 0x40000,128; 0x4,16; 4] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=9 sem_add=16 src=[dge0+0x200; 0x4,128; 0x400,16; 4] dst=[var0+0x1040; 0x40000,128; 0x4,16; 4] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=10 sem_add=16 src=[dge1+0x0; 0x4,128; 0x200,2; 4] dst=[var0+0x1080; 0x40000,128; 0x4,2; 4] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=11 sem_add=16 src=[dge2+0x0; 0x600,128; 0x1,1; 1536] dst=[var0+0x10c0; 0x40000,128; 0x1,1; 1536] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=12 sem_add=16 src=[dge2+0x30000; 0x600,128; 0x1,1; 1536] dst=[var0+0x16c0; 0x40000,128; 0x1,1; 1536] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=13 sem_add=16 src=[dge3+0x0; 0x400,32; 0x1,1; 1024] dst=[var0+0x1cc0; 0x40000,32; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=14 sem_add=16 src=[dge3+0x8000; 0x400,32; 0x1,1; 1024] dst=[var0+0x20c0; 0x40000,32; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=15 sem_add=16 src=[dge3+0x10000; 0x400,32; 0x1,1; 1024] dst=[var0+0x24c0; 0x40000,32; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=16 sem_add=16 src=[dge3+0x18000; 0x400,32; 0x1,1; 1024] dst=[var0+0x28c0; 0x40000,32; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=17 sem_add=16 src=[dge4+0x0; 0x4,128; 0x200,2; 4] dst=[var0+0x2cc0; 0x40000,128; 0x4,2; 4] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=18 sem_add=16 src=[dge5+0x0; 0xc00,128; 0x1,1; 3072] dst=[var0+0x2d00; 0x40000,128; 0x1,1; 3072] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=19 sem_add=16 src=[dge5+0x60000; 0xc00,128; 0x1,1; 3072] dst=[var0+0x3900; 0x40000,128; 0x1,1; 3072] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=20 sem_add=16 src=[dge6+0x0; 0x400,128; 0x1,1; 1024] dst=[var0+0x4500; 0x40000,128; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=21 sem_add=16 src=[dge6+0x20000; 0x400,128; 0x1,1; 1024] dst=[var0+0x4900; 0x40000,128; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=22 sem_add=16 src=[dge6+0x40000; 0x400,128; 0x1,1; 1024] dst=[var0+0x4d00; 0x40000,128; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=23 sem_add=16 src=[dge1+0x400; 0x4,128; 0x200,2; 4] dst=[var0+0x5500; 0x40000,128; 0x4,2; 4] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=8 sem_add=16 src=[dge2+0x60000; 0x600,128; 0x1,1; 1536] dst=[var0+0x5540; 0x40000,128; 0x1,1; 1536] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=9 sem_add=16 src=[dge2+0x90000; 0x600,128; 0x1,1; 1536] dst=[var0+0x5b40; 0x40000,128; 0x1,1; 1536] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=10 sem_add=16 src=[dge3+0x20000; 0x400,32; 0x1,1; 1024] dst=[var0+0x6140; 0x40000,32; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=11 sem_add=16 src=[dge3+0x28000; 0x400,32; 0x1,1; 1024] dst=[var0+0x6540; 0x40000,32; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=12 sem_add=16 src=[dge3+0x30000; 0x400,32; 0x1,1; 1024] dst=[var0+0x6940; 0x40000,32; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=13 sem_add=16 src=[dge3+0x38000; 0x400,32; 0x1,1; 1024] dst=[var0+0x6d40; 0x40000,32; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=14 sem_add=16 src=[dge4+0x400; 0x4,128; 0x200,2; 4] dst=[var0+0x7140; 0x40000,128; 0x4,2; 4] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=15 sem_add=16 src=[dge5+0xc0000; 0xc00,128; 0x1,1; 3072] dst=[var0+0x7180; 0x40000,128; 0x1,1; 3072] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=16 sem_add=16 src=[dge5+0x120000; 0xc00,128; 0x1,1; 3072] dst=[var0+0x7d80; 0x40000,128; 0x1,1; 3072] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=17 sem_add=16 src=[dge6+0x60000; 0x400,128; 0x1,1; 1024] dst=[var0+0x8980; 0x40000,128; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=18 sem_add=16 src=[dge6+0x80000; 0x400,128; 0x1,1; 1024] dst=[var0+0x8d80; 0x40000,128; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=19 sem_add=16 src=[dge6+0xa0000; 0x400,128; 0x1,1; 1024] dst=[var0+0x9180; 0x40000,128; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=20 sem_add=16 src=[dge7+0x0; 0x4,128; 0x200,2; 4] dst=[var0+0x9980; 0x40000,128; 0x4,2; 4] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=21 sem_add=16 src=[var0+0x5100; 0x40000,32; 0x1,1; 128] dst=[dge8+0x0; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem4>=5
dma2d flags=0 sem=22 sem_add=16 src=[var0+0x5300; 0x40000,32; 0x1,1; 128] dst=[dge9+0x0; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem4>=6
dma2d flags=0 sem=23 sem_add=16 src=[var0+0x5180; 0x40000,32; 0x1,1; 128] dst=[dge8+0x1000; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem4>=11
dma2d flags=0 sem=8 sem_add=16 src=[var0+0x5380; 0x40000,32; 0x1,1; 128] dst=[dge9+0x1000; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem4>=12
dma2d flags=0 sem=9 sem_add=16 src=[var0+0x5200; 0x40000,32; 0x1,1; 128] dst=[dge8+0x2000; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem4>=17
dma2d flags=0 sem=10 sem_add=16 src=[var0+0x5400; 0x40000,32; 0x1,1; 128] dst=[dge9+0x2000; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem4>=18
dma2d flags=0 sem=11 sem_add=16 src=[var0+0x5280; 0x40000,32; 0x1,1; 128] dst=[dge8+0x3000; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem4>=23
dma2d flags=0 sem=12 sem_add=16 src=[var0+0x5480; 0x40000,32; 0x1,1; 128] dst=[dge9+0x3000; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem4>=24
dma2d flags=0 sem=13 sem_add=16 src=[var0+0xa740; 0x40000,128; 0x1,1; 64] dst=[var12+0x0; 0x40,128; 0x1,1; 64] src_dtype=float32 dst_dtype=float32 wait=sem4>=28
event_semaphore ext_wait=none ext_update=none wait=sem4>=29
dma2d flags=0 sem=14 sem_add=16 src=[var0+0xa780; 0x40000,128; 0x1,1; 64] dst=[var12+0x2000; 0x40,128; 0x1,1; 64] src_dtype=float32 dst_dtype=float32 wait=sem13>=48
trigger_collective op=add dtype=float32 group_id=0 input_tensor=0xc output_tensor=0xd num_elements=0x1000 collective=all_reduce src_offset=0x0 dst_offset=0x0 wait=sem14>=48 update=sem3++
dma2d flags=0 sem=15 sem_add=16 src=[var13+0x0; 0x40,128; 0x1,1; 64] dst=[var0+0xa7c0; 0x40000,128; 0x1,1; 64] src_dtype=float32 dst_dtype=float32 wait=sem3>=1
dma2d flags=0 sem=16 sem_add=16 src=[var13+0x2000; 0x40,128; 0x1,1; 64] dst=[var0+0xa800; 0x40000,128; 0x1,1; 64] src_dtype=float32 dst_dtype=float32 wait=sem3>=1
dma2d flags=0 sem=17 sem_add=16 src=[var0+0xac00; 0x40000,128; 0x1,1; 64] dst=[var14+0x0; 0x40,128; 0x1,1; 64] src_dtype=float32 dst_dtype=float32 wait=sem4>=36
event_semaphore ext_wait=none ext_update=none wait=sem4>=37
dma2d flags=0 sem=18 sem_add=16 src=[var0+0xac40; 0x40000,128; 0x1,1; 64] dst=[var14+0x2000; 0x40,128; 0x1,1; 64] src_dtype=float32 dst_dtype=float32 wait=sem17>=48
trigger_collective op=add dtype=float32 group_id=0 input_tensor=0xe output_tensor=0xf num_elements=0x1000 collective=all_reduce src_offset=0x0 dst_offset=0x0 wait=sem18>=48 update=sem3++
dma2d flags=0 sem=19 sem_add=16 src=[var15+0x0; 0x40,128; 0x1,1; 64] dst=[var0+0xac80; 0x40000,128; 0x1,1; 64] src_dtype=float32 dst_dtype=float32 wait=sem3>=2
dma2d flags=0 sem=20 sem_add=16 src=[var15+0x2000; 0x40,128; 0x1,1; 64] dst=[var0+0xacc0; 0x40000,128; 0x1,1; 64] src_dtype=float32 dst_dtype=float32 wait=sem3>=2
dma2d flags=0 sem=21 sem_add=16 src=[var0+0x9580; 0x40000,32; 0x1,1; 128] dst=[dge8+0x4000; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem4>=42
dma2d flags=0 sem=22 sem_add=16 src=[var0+0x9780; 0x40000,32; 0x1,1; 128] dst=[dge9+0x4000; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem4>=43
dma2d flags=0 sem=23 sem_add=16 src=[var0+0x9600; 0x40000,32; 0x1,1; 128] dst=[dge8+0x5000; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem4>=48
dma2d flags=0 sem=8 sem_add=16 src=[var0+0x9800; 0x40000,32; 0x1,1; 128] dst=[dge9+0x5000; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem4>=49
dma2d flags=0 sem=9 sem_add=16 src=[var0+0x9680; 0x40000,32; 0x1,1; 128] dst=[dge8+0x6000; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem4>=54
dma2d flags=0 sem=10 sem_add=16 src=[var0+0x9880; 0x40000,32; 0x1,1; 128] dst=[dge9+0x6000; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem4>=55
dma2d flags=0 sem=11 sem_add=16 src=[var0+0x9700; 0x40000,32; 0x1,1; 128] dst=[dge8+0x7000; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem4>=60
dma2d flags=0 sem=12 sem_add=16 src=[var0+0x9900; 0x40000,32; 0x1,1; 128] dst=[dge9+0x7000; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem4>=61
dma2d flags=0 sem=13 sem_add=16 src=[var0+0xa740; 0x40000,128; 0x1,1; 64] dst=[var16+0x0; 0x40,128; 0x1,1; 64] src_dtype=float32 dst_dtype=float32 wait=sem4>=65
event_semaphore ext_wait=none ext_update=none wait=sem4>=66
dma2d flags=0 sem=14 sem_add=16 src=[var0+0xa780; 0x40000,128; 0x1,1; 64] dst=[var16+0x2000; 0x40,128; 0x1,1; 64] src_dtype=float32 dst_dtype=float32 wait=sem13>=64
trigger_collective op=add dtype=float32 group_id=0 input_tensor=0x10 output_tensor=0x11 num_elements=0x1000 collective=all_reduce src_offset=0x0 dst_offset=0x0 wait=sem14>=64 update=sem3++
event_semaphore ext_wait=sem15>=48 ext_update=none wait=sem3>=3
dma2d flags=0 sem=15 sem_add=16 src=[var17+0x0; 0x40,128; 0x1,1; 64] dst=[var0+0xa7c0; 0x40000,128; 0x1,1; 64] src_dtype=float32 dst_dtype=float32 wait=sem6>=18
event_semaphore ext_wait=sem16>=48 ext_update=none wait=sem3>=3
dma2d flags=0 sem=16 sem_add=16 src=[var17+0x2000; 0x40,128; 0x1,1; 64] dst=[var0+0xa800; 0x40000,128; 0x1,1; 64] src_dtype=float32 dst_dtype=float32 wait=sem6>=19
dma2d flags=0 sem=17 sem_add=16 src=[var0+0xac00; 0x40000,128; 0x1,1; 64] dst=[var18+0x0; 0x40,128; 0x1,1; 64] src_dtype=float32 dst_dtype=float32 wait=sem4>=73
event_semaphore ext_wait=none ext_update=none wait=sem4>=74
dma2d flags=0 sem=18 sem_add=16 src=[var0+0xac40; 0x40000,128; 0x1,1; 64] dst=[var18+0x2000; 0x40,128; 0x1,1; 64] src_dtype=float32 dst_dtype=float32 wait=sem17>=64
trigger_collective op=add dtype=float32 group_id=0 input_tensor=0x12 output_tensor=0x13 num_elements=0x1000 collective=all_reduce src_offset=0x0 dst_offset=0x0 wait=sem18>=64 update=sem3++
event_semaphore ext_wait=sem19>=48 ext_update=none wait=sem3>=4
dma2d flags=0 sem=19 sem_add=16 src=[var19+0x0; 0x40,128; 0x1,1; 64] dst=[var0+0xac80; 0x40000,128; 0x1,1; 64] src_dtype=float32 dst_dtype=float32 wait=sem6>=27
event_semaphore ext_wait=sem20>=48 ext_update=none wait=sem3>=4
dma2d flags=0 sem=20 sem_add=16 src=[var19+0x2000; 0x40,128; 0x1,1; 64] dst=[var0+0xacc0; 0x40000,128; 0x1,1; 64] src_dtype=float32 dst_dtype=float32 wait=sem6>=28
dma2d flags=0 sem=21 sem_add=16 src=[var0+0x9d80; 0x40000,128; 0x4,16; 4] dst=[dge10+0x0; 0x4,128; 0x400,16; 4] src_dtype=float32 dst_dtype=float32 wait=sem6>=57
dma2d flags=0 sem=22 sem_add=16 src=[var0+0x9e00; 0x40000,128; 0x4,16; 4] dst=[dge10+0x200; 0x4,128; 0x400,16; 4] src_dtype=float32 dst_dtype=float32 wait=sem6>=59
event_semaphore ext_wait=sem9>=64 ext_update=none wait=sem8>=64
event_semaphore ext_wait=sem11>=64 ext_update=none wait=sem10>=64
event_semaphore ext_wait=sem13>=64 ext_update=none wait=sem12>=64
event_semaphore ext_wait=sem15>=64 ext_update=none wait=sem14>=64
event_semaphore ext_wait=sem17>=64 ext_update=none wait=sem16>=64
event_semaphore ext_wait=sem19>=64 ext_update=none wait=sem18>=64
event_semaphore ext_wait=sem21>=64 ext_update=none wait=sem20>=64
event_semaphore ext_wait=none ext_update=none wait=sem22>=64
nop wait=sem23>=48
