prologue_b1
branch_label
memset dtype=float32 partitions=128 output=[0x9a00; 1,128; 0,1; 0,1] fill=1.0 update=sem7++
memset dtype=float32 partitions=1 output=[0x9c00; 1,32; 0,1; 0,1] fill=-inf update=sem7++
iota dtype=float32 partitions=128 output=[0x9d00; 1,32; 0,1; 0,1] base=0.0 partition_step=0.0 step0=1.0 step1=0.0 step2=0.0 update=sem7++
iota dtype=float32 partitions=32 output=[0x9d80; 1,32; 0,1; 0,1] base=0.0 partition_step=1.0 step0=0.0 step1=0.0 step2=0.0 update=sem7++
pool op=max in_dtype=float32 out_dtype=float32 partitions=1 input=[0x2002000; 1,32; 0,1; 0,1] output=[0xa100; 1,1; 0,1; 0,1] axes=1 wait=sem6>=10 update=sem7++
pool op=sum in_dtype=float32 out_dtype=float32 partitions=1 input=[0xa180; 1,32; 0,1; 0,1] output=[0xa200; 1,1; 0,1; 0,1] axes=1 wait=sem4>=5 update=sem7++
transpose in_dtype=float32 out_dtype=float32 partitions=1 input=[0xa280; 1,32; 0,1; 0,1] output=[0xa300; 1,1; 0,1; 0,1] wait=sem6>=12 update=sem7++
pool op=max in_dtype=float32 out_dtype=float32 partitions=1 input=[0x2000800; 1,32; 0,1; 0,1] output=[0xa3c0; 1,1; 0,1; 0,1] axes=1 wait=sem6>=15 update=sem7++
pool op=sum in_dtype=float32 out_dtype=float32 partitions=1 input=[0xa440; 1,32; 0,1; 0,1] output=[0xa4c0; 1,1; 0,1; 0,1] axes=1 wait=sem4>=9 update=sem7++
transpose in_dtype=float32 out_dtype=float32 partitions=1 input=[0xa540; 1,32; 0,1; 0,1] output=[0xa5c0; 1,1; 0,1; 0,1] wait=sem6>=17 update=sem7++
pool op=max in_dtype=float32 out_dtype=float32 partitions=1 input=[0x2003000; 1,32; 0,1; 0,1] output=[0xa680; 1,1; 0,1; 0,1] axes=1 wait=sem6>=20 update=sem7++
pool op=sum in_dtype=float32 out_dtype=float32 partitions=1 input=[0xa700; 1,32; 0,1; 0,1] output=[0xa780; 1,1; 0,1; 0,1] axes=1 wait=sem4>=13 update=sem7++
transpose in_dtype=float32 out_dtype=float32 partitions=1 input=[0xa800; 1,32; 0,1; 0,1] output=[0xa880; 1,1; 0,1; 0,1] wait=sem6>=22 update=sem7++
pool op=max in_dtype=float32 out_dtype=float32 partitions=1 input=[0x2001800; 1,32; 0,1; 0,1] output=[0xa940; 1,1; 0,1; 0,1] axes=1 wait=sem6>=25 update=sem7++
pool op=sum in_dtype=float32 out_dtype=float32 partitions=1 input=[0xa9c0; 1,32; 0,1; 0,1] output=[0xaa40; 1,1; 0,1; 0,1] axes=1 wait=sem4>=17 update=sem7++
transpose in_dtype=float32 out_dtype=float32 partitions=1 input=[0xaac0; 1,32; 0,1; 0,1] output=[0xab40; 1,1; 0,1; 0,1] wait=sem6>=27 update=sem7++
pool op=max in_dtype=float32 out_dtype=float32 partitions=1 input=[0x2002000; 1,32; 0,1; 0,1] output=[0xa100; 1,1; 0,1; 0,1] axes=1 wait=sem6>=45 update=sem7++
pool op=sum in_dtype=float32 out_dtype=float32 partitions=1 input=[0xa180; 1,32; 0,1; 0,1] output=[0xa200; 1,1; 0,1; 0,1] axes=1 wait=sem4>=34 update=sem7++
event_semaphore ext_wait=none ext_update=none wait=sem6>=47
transpose in_dtype=float32 out_dtype=float32 partitions=1 input=[0xa280; 1,32; 0,1; 0,1] output=[0xa300; 1,1; 0,1; 0,1] wait=sem5>=10 update=sem7++
pool op=max in_dtype=float32 out_dtype=float32 partitions=1 input=[0x2000800; 1,32; 0,1; 0,1] output=[0xa3c0; 1,1; 0,1; 0,1] axes=1 wait=sem6>=50 update=sem7++
pool op=sum in_dtype=float32 out_dtype=float32 partitions=1 input=[0xa440; 1,32; 0,1; 0,1] output=[0xa4c0; 1,1; 0,1; 0,1] axes=1 wait=sem4>=38 update=sem7++
event_semaphore ext_wait=none ext_update=none wait=sem6>=52
transpose in_dtype=float32 out_dtype=float32 partitions=1 input=[0xa540; 1,32; 0,1; 0,1] output=[0xa5c0; 1,1; 0,1; 0,1] wait=sem5>=18 update=sem7++
pool op=max in_dtype=float32 out_dtype=float32 partitions=1 input=[0x2003000; 1,32; 0,1; 0,1] output=[0xa680; 1,1; 0,1; 0,1] axes=1 wait=sem6>=55 update=sem7++
pool op=sum in_dtype=float32 out_dtype=float32 partitions=1 input=[0xa700; 1,32; 0,1; 0,1] output=[0xa780; 1,1; 0,1; 0,1] axes=1 wait=sem4>=42 update=sem7++
event_semaphore ext_wait=none ext_update=none wait=sem6>=57
transpose in_dtype=float32 out_dtype=float32 partitions=1 input=[0xa800; 1,32; 0,1; 0,1] output=[0xa880; 1,1; 0,1; 0,1] wait=sem5>=26 update=sem7++
pool op=max in_dtype=float32 out_dtype=float32 partitions=1 input=[0x2001800; 1,32; 0,1; 0,1] output=[0xa940; 1,1; 0,1; 0,1] axes=1 wait=sem6>=60 update=sem7++
pool op=sum in_dtype=float32 out_dtype=float32 partitions=1 input=[0xa9c0; 1,32; 0,1; 0,1] output=[0xaa40; 1,1; 0,1; 0,1] axes=1 wait=sem4>=46 update=sem7++
event_semaphore ext_wait=none ext_update=none wait=sem6>=62
transpose in_dtype=float32 out_dtype=float32 partitions=1 input=[0xaac0; 1,32; 0,1; 0,1] output=[0xab40; 1,1; 0,1; 0,1] wait=sem5>=34 update=sem7++
