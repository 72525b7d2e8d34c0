prologue_b1
branch_label
dma2d flags=0 sem=8 sem_add=16 src=[dge0+0x0; 0x4,128; 0x400,1; 4] dst=[var0+0x1000; 0x40000,128; 0x4,1; 4] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=9 sem_add=16 src=[dge0+0x200; 0x4,128; 0x400,1; 4] dst=[var0+0x1040; 0x40000,128; 0x4,1; 4] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=10 sem_add=16 src=[dge1+0x0; 0x0,128; 0x1,1; 4] dst=[var0+0x1080; 0x40000,128; 0x1,1; 4] src_dtype=int32 dst_dtype=float32
dma2d flags=0 sem=11 sem_add=16 src=[dge2+0x0; 0x4,128; 0x200,2; 4] dst=[var0+0x10c0; 0x40000,128; 0x4,2; 4] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=12 sem_add=16 src=[dge3+0x0; 0x600,128; 0x1,1; 1536] dst=[var0+0x1100; 0x40000,128; 0x1,1; 1536] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=13 sem_add=16 src=[dge3+0x30000; 0x600,128; 0x1,1; 1536] dst=[var0+0x1700; 0x40000,128; 0x1,1; 1536] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=14 sem_add=16 src=[dge4+0x0; 0x400,32; 0x1,1; 1024] dst=[var0+0x1d00; 0x40000,32; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=15 sem_add=16 src=[dge4+0x8000; 0x400,32; 0x1,1; 1024] dst=[var0+0x2100; 0x40000,32; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=16 sem_add=16 src=[dge4+0x10000; 0x400,32; 0x1,1; 1024] dst=[var0+0x2500; 0x40000,32; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=17 sem_add=16 src=[dge4+0x18000; 0x400,32; 0x1,1; 1024] dst=[var0+0x2900; 0x40000,32; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=18 sem_add=16 src=[dge5+0x0; 0x4,128; 0x200,2; 4] dst=[var0+0x2d00; 0x40000,128; 0x4,2; 4] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=19 sem_add=16 src=[dge6+0x0; 0xc00,128; 0x1,1; 3072] dst=[var0+0x2d40; 0x40000,128; 0x1,1; 3072] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=20 sem_add=16 src=[dge6+0x60000; 0xc00,128; 0x1,1; 3072] dst=[var0+0x3940; 0x40000,128; 0x1,1; 3072] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=21 sem_add=16 src=[dge7+0x0; 0x400,128; 0x1,1; 1024] dst=[var0+0x4540; 0x40000,128; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=22 sem_add=16 src=[dge7+0x20000; 0x400,128; 0x1,1; 1024] dst=[var0+0x4940; 0x40000,128; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=23 sem_add=16 src=[dge7+0x40000; 0x400,128; 0x1,1; 1024] dst=[var0+0x4d40; 0x40000,128; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=8 sem_add=16 src=[dge9+0x0; 0x80,32; 0x1,1; 128] dst=[var0+0x5140; 0x40000,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=9 sem_add=16 src=[dge9+0x1000; 0x80,32; 0x1,1; 128] dst=[var0+0x51c0; 0x40000,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=10 sem_add=16 src=[dge9+0x2000; 0x80,32; 0x1,1; 128] dst=[var0+0x5240; 0x40000,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=11 sem_add=16 src=[dge9+0x3000; 0x80,32; 0x1,1; 128] dst=[var0+0x52c0; 0x40000,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=12 sem_add=16 src=[dge10+0x0; 0x80,32; 0x1,1; 128] dst=[var0+0x5340; 0x40000,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=13 sem_add=16 src=[dge10+0x1000; 0x80,32; 0x1,1; 128] dst=[var0+0x53c0; 0x40000,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=14 sem_add=16 src=[dge10+0x2000; 0x80,32; 0x1,1; 128] dst=[var0+0x5440; 0x40000,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=15 sem_add=16 src=[dge10+0x3000; 0x80,32; 0x1,1; 128] dst=[var0+0x54c0; 0x40000,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=16 sem_add=16 src=[dge2+0x400; 0x4,128; 0x200,2; 4] dst=[var0+0x5540; 0x40000,128; 0x4,2; 4] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=17 sem_add=16 src=[dge3+0x60000; 0x600,128; 0x1,1; 1536] dst=[var0+0x5580; 0x40000,128; 0x1,1; 1536] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=18 sem_add=16 src=[dge3+0x90000; 0x600,128; 0x1,1; 1536] dst=[var0+0x5b80; 0x40000,128; 0x1,1; 1536] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=19 sem_add=16 src=[dge4+0x20000; 0x400,32; 0x1,1; 1024] dst=[var0+0x6180; 0x40000,32; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=20 sem_add=16 src=[dge4+0x28000; 0x400,32; 0x1,1; 1024] dst=[var0+0x6580; 0x40000,32; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=21 sem_add=16 src=[dge4+0x30000; 0x400,32; 0x1,1; 1024] dst=[var0+0x6980; 0x40000,32; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=22 sem_add=16 src=[dge4+0x38000; 0x400,32; 0x1,1; 1024] dst=[var0+0x6d80; 0x40000,32; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=23 sem_add=16 src=[dge5+0x400; 0x4,128; 0x200,2; 4] dst=[var0+0x7180; 0x40000,128; 0x4,2; 4] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=8 sem_add=16 src=[dge6+0xc0000; 0xc00,128; 0x1,1; 3072] dst=[var0+0x71c0; 0x40000,128; 0x1,1; 3072] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=9 sem_add=16 src=[dge6+0x120000; 0xc00,128; 0x1,1; 3072] dst=[var0+0x7dc0; 0x40000,128; 0x1,1; 3072] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=10 sem_add=16 src=[dge7+0x60000; 0x400,128; 0x1,1; 1024] dst=[var0+0x89c0; 0x40000,128; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=11 sem_add=16 src=[dge7+0x80000; 0x400,128; 0x1,1; 1024] dst=[var0+0x8dc0; 0x40000,128; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=12 sem_add=16 src=[dge7+0xa0000; 0x400,128; 0x1,1; 1024] dst=[var0+0x91c0; 0x40000,128; 0x1,1; 1024] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=13 sem_add=16 src=[dge9+0x4000; 0x80,32; 0x1,1; 128] dst=[var0+0x95c0; 0x40000,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=14 sem_add=16 src=[dge9+0x5000; 0x80,32; 0x1,1; 128] dst=[var0+0x9640; 0x40000,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=15 sem_add=16 src=[dge9+0x6000; 0x80,32; 0x1,1; 128] dst=[var0+0x96c0; 0x40000,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=16 sem_add=16 src=[dge9+0x7000; 0x80,32; 0x1,1; 128] dst=[var0+0x9740; 0x40000,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=17 sem_add=16 src=[dge10+0x4000; 0x80,32; 0x1,1; 128] dst=[var0+0x97c0; 0x40000,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=18 sem_add=16 src=[dge10+0x5000; 0x80,32; 0x1,1; 128] dst=[var0+0x9840; 0x40000,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=19 sem_add=16 src=[dge10+0x6000; 0x80,32; 0x1,1; 128] dst=[var0+0x98c0; 0x40000,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=20 sem_add=16 src=[dge10+0x7000; 0x80,32; 0x1,1; 128] dst=[var0+0x9940; 0x40000,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32
dma2d flags=0 sem=21 sem_add=16 src=[dge8+0x0; 0x4,128; 0x200,2; 4] dst=[var0+0x99c0; 0x40000,128; 0x4,2; 4] src_dtype=float32 dst_dtype=float32
event_semaphore ext_wait=none ext_update=none wait=sem6>=8
dma2d flags=0 sem=22 sem_add=16 src=[var0+0x5140; 0x40000,32; 0x1,1; 128] dst=[dge9+0x0; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem8>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=9
dma2d flags=0 sem=23 sem_add=16 src=[var0+0x5340; 0x40000,32; 0x1,1; 128] dst=[dge10+0x0; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem12>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=13
dma2d flags=0 sem=8 sem_add=16 src=[var0+0x51c0; 0x40000,32; 0x1,1; 128] dst=[dge9+0x1000; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem9>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=14
dma2d flags=0 sem=9 sem_add=16 src=[var0+0x53c0; 0x40000,32; 0x1,1; 128] dst=[dge10+0x1000; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem13>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=18
dma2d flags=0 sem=10 sem_add=16 src=[var0+0x5240; 0x40000,32; 0x1,1; 128] dst=[dge9+0x2000; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem10>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=19
dma2d flags=0 sem=11 sem_add=16 src=[var0+0x5440; 0x40000,32; 0x1,1; 128] dst=[dge10+0x2000; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem14>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=23
dma2d flags=0 sem=12 sem_add=16 src=[var0+0x52c0; 0x40000,32; 0x1,1; 128] dst=[dge9+0x3000; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem11>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=24
dma2d flags=0 sem=13 sem_add=16 src=[var0+0x54c0; 0x40000,32; 0x1,1; 128] dst=[dge10+0x3000; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem15>=32
dma2d flags=0 sem=14 sem_add=16 src=[var0+0xabc0; 0x40000,128; 0x1,1; 4] dst=[var13+0x0; 0x4,128; 0x1,1; 4] src_dtype=float32 dst_dtype=float32 wait=sem4>=20
event_semaphore ext_wait=none ext_update=none wait=sem4>=21
dma2d flags=0 sem=15 sem_add=16 src=[var0+0xac00; 0x40000,128; 0x1,1; 4] dst=[var13+0x200; 0x4,128; 0x1,1; 4] src_dtype=float32 dst_dtype=float32 wait=sem14>=64
trigger_collective op=add dtype=float32 group_id=0 input_tensor=0xd output_tensor=0xe num_elements=0x100 collective=all_reduce src_offset=0x0 dst_offset=0x0 wait=sem15>=64 update=sem3++
dma2d flags=0 sem=16 sem_add=16 src=[var14+0x0; 0x4,128; 0x1,1; 4] dst=[var0+0xac40; 0x40000,128; 0x1,1; 4] src_dtype=float32 dst_dtype=float32 wait=sem3>=1
dma2d flags=0 sem=17 sem_add=16 src=[var14+0x200; 0x4,128; 0x1,1; 4] dst=[var0+0xac80; 0x40000,128; 0x1,1; 4] src_dtype=float32 dst_dtype=float32 wait=sem3>=1
dma2d flags=0 sem=18 sem_add=16 src=[var0+0xb080; 0x40000,128; 0x1,1; 4] dst=[var15+0x0; 0x4,128; 0x1,1; 4] src_dtype=float32 dst_dtype=float32 wait=sem4>=28
event_semaphore ext_wait=none ext_update=none wait=sem4>=29
dma2d flags=0 sem=19 sem_add=16 src=[var0+0xb0c0; 0x40000,128; 0x1,1; 4] dst=[var15+0x200; 0x4,128; 0x1,1; 4] src_dtype=float32 dst_dtype=float32 wait=sem18>=64
trigger_collective op=add dtype=float32 group_id=0 input_tensor=0xf output_tensor=0x10 num_elements=0x100 collective=all_reduce src_offset=0x0 dst_offset=0x0 wait=sem19>=64 update=sem3++
dma2d flags=0 sem=20 sem_add=16 src=[var16+0x0; 0x4,128; 0x1,1; 4] dst=[var0+0xb100; 0x40000,128; 0x1,1; 4] src_dtype=float32 dst_dtype=float32 wait=sem3>=2
dma2d flags=0 sem=21 sem_add=16 src=[var16+0x200; 0x4,128; 0x1,1; 4] dst=[var0+0xb140; 0x40000,128; 0x1,1; 4] src_dtype=float32 dst_dtype=float32 wait=sem3>=2
event_semaphore ext_wait=none ext_update=none wait=sem6>=43
dma2d flags=0 sem=22 sem_add=16 src=[var0+0x95c0; 0x40000,32; 0x1,1; 128] dst=[dge9+0x4000; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem13>=48
event_semaphore ext_wait=none ext_update=none wait=sem6>=44
dma2d flags=0 sem=23 sem_add=16 src=[var0+0x97c0; 0x40000,32; 0x1,1; 128] dst=[dge10+0x4000; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem17>=48
event_semaphore ext_wait=none ext_update=none wait=sem6>=48
dma2d flags=0 sem=8 sem_add=16 src=[var0+0x9640; 0x40000,32; 0x1,1; 128] dst=[dge9+0x5000; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem14>=48
event_semaphore ext_wait=none ext_update=none wait=sem6>=49
dma2d flags=0 sem=9 sem_add=16 src=[var0+0x9840; 0x40000,32; 0x1,1; 128] dst=[dge10+0x5000; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem18>=48
event_semaphore ext_wait=none ext_update=none wait=sem6>=53
dma2d flags=0 sem=10 sem_add=16 src=[var0+0x96c0; 0x40000,32; 0x1,1; 128] dst=[dge9+0x6000; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem15>=48
event_semaphore ext_wait=none ext_update=none wait=sem6>=54
dma2d flags=0 sem=11 sem_add=16 src=[var0+0x98c0; 0x40000,32; 0x1,1; 128] dst=[dge10+0x6000; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem19>=48
event_semaphore ext_wait=none ext_update=none wait=sem6>=58
dma2d flags=0 sem=12 sem_add=16 src=[var0+0x9740; 0x40000,32; 0x1,1; 128] dst=[dge9+0x7000; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem16>=48
event_semaphore ext_wait=none ext_update=none wait=sem6>=59
dma2d flags=0 sem=13 sem_add=16 src=[var0+0x9940; 0x40000,32; 0x1,1; 128] dst=[dge10+0x7000; 0x80,32; 0x1,1; 128] src_dtype=float32 dst_dtype=float32 wait=sem20>=48
dma2d flags=0 sem=14 sem_add=16 src=[var0+0xabc0; 0x40000,128; 0x1,1; 4] dst=[var17+0x0; 0x4,128; 0x1,1; 4] src_dtype=float32 dst_dtype=float32 wait=sem4>=49
event_semaphore ext_wait=none ext_update=none wait=sem4>=50
dma2d flags=0 sem=15 sem_add=16 src=[var0+0xac00; 0x40000,128; 0x1,1; 4] dst=[var17+0x200; 0x4,128; 0x1,1; 4] src_dtype=float32 dst_dtype=float32 wait=sem14>=80
trigger_collective op=add dtype=float32 group_id=0 input_tensor=0x11 output_tensor=0x12 num_elements=0x100 collective=all_reduce src_offset=0x0 dst_offset=0x0 wait=sem15>=80 update=sem3++
event_semaphore ext_wait=sem16>=64 ext_update=none wait=sem3>=3
dma2d flags=0 sem=16 sem_add=16 src=[var18+0x0; 0x4,128; 0x1,1; 4] dst=[var0+0xac40; 0x40000,128; 0x1,1; 4] src_dtype=float32 dst_dtype=float32 wait=sem6>=28
event_semaphore ext_wait=sem17>=64 ext_update=none wait=sem3>=3
dma2d flags=0 sem=17 sem_add=16 src=[var18+0x200; 0x4,128; 0x1,1; 4] dst=[var0+0xac80; 0x40000,128; 0x1,1; 4] src_dtype=float32 dst_dtype=float32 wait=sem6>=29
dma2d flags=0 sem=18 sem_add=16 src=[var0+0xb080; 0x40000,128; 0x1,1; 4] dst=[var19+0x0; 0x4,128; 0x1,1; 4] src_dtype=float32 dst_dtype=float32 wait=sem4>=57
event_semaphore ext_wait=none ext_update=none wait=sem4>=58
dma2d flags=0 sem=19 sem_add=16 src=[var0+0xb0c0; 0x40000,128; 0x1,1; 4] dst=[var19+0x200; 0x4,128; 0x1,1; 4] src_dtype=float32 dst_dtype=float32 wait=sem18>=80
trigger_collective op=add dtype=float32 group_id=0 input_tensor=0x13 output_tensor=0x14 num_elements=0x100 collective=all_reduce src_offset=0x0 dst_offset=0x0 wait=sem19>=80 update=sem3++
event_semaphore ext_wait=sem20>=64 ext_update=none wait=sem3>=4
dma2d flags=0 sem=20 sem_add=16 src=[var20+0x0; 0x4,128; 0x1,1; 4] dst=[var0+0xb100; 0x40000,128; 0x1,1; 4] src_dtype=float32 dst_dtype=float32 wait=sem6>=37
event_semaphore ext_wait=sem21>=64 ext_update=none wait=sem3>=4
dma2d flags=0 sem=21 sem_add=16 src=[var20+0x200; 0x4,128; 0x1,1; 4] dst=[var0+0xb140; 0x40000,128; 0x1,1; 4] src_dtype=float32 dst_dtype=float32 wait=sem6>=38
dma2d flags=0 sem=22 sem_add=16 src=[var0+0xa000; 0x40000,128; 0x4,1; 4] dst=[dge11+0x0; 0x4,128; 0x400,1; 4] src_dtype=float32 dst_dtype=float32 wait=sem6>=75
dma2d flags=0 sem=23 sem_add=16 src=[var0+0xa080; 0x40000,128; 0x4,1; 4] dst=[dge11+0x200; 0x4,128; 0x400,1; 4] src_dtype=float32 dst_dtype=float32 wait=sem6>=77
event_semaphore ext_wait=sem9>=80 ext_update=none wait=sem8>=80
event_semaphore ext_wait=sem11>=80 ext_update=none wait=sem10>=80
event_semaphore ext_wait=sem13>=80 ext_update=none wait=sem12>=80
event_semaphore ext_wait=sem15>=80 ext_update=none wait=sem14>=80
event_semaphore ext_wait=sem17>=80 ext_update=none wait=sem16>=80
event_semaphore ext_wait=sem19>=80 ext_update=none wait=sem18>=80
event_semaphore ext_wait=sem21>=80 ext_update=none wait=sem20>=80
event_semaphore ext_wait=none ext_update=none wait=sem22>=80
nop wait=sem23>=80
