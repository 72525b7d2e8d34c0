prologue_b1
branch_label
memset dtype=float32 partitions=128 output=[0x99c0; 1,128; 0,1; 0,1] fill=1.0 update=sem7++
memset dtype=float32 partitions=16 output=[0x9bc0; 1,16; 0,1; 0,1] fill=-inf update=sem7++
iota dtype=float32 partitions=16 output=[0x9c40; 1,16; 0,1; 0,1] base=0.0 partition_step=-1.0 step0=1.0 step1=0.0 step2=0.0 update=sem7++
memset dtype=float32 partitions=32 output=[0x5140; 1,16; 0,1; 0,1] fill=0.0 update=sem7++
memset dtype=float32 partitions=16 output=[0x405300; 1,32; 0,1; 0,1] fill=0.0 update=sem7++
pool op=max in_dtype=float32 out_dtype=float32 partitions=16 input=[0x2002000; 1,16; 0,1; 0,1] output=[0x9e80; 1,1; 0,1; 0,1] axes=1 wait=sem6>=6 update=sem7++
pool op=sum in_dtype=float32 out_dtype=float32 partitions=16 input=[0x9f00; 1,16; 0,1; 0,1] output=[0x9f40; 1,1; 0,1; 0,1] axes=1 wait=sem4>=7 update=sem7++
transpose in_dtype=float32 out_dtype=float32 partitions=16 input=[0x9fc0; 1,16; 0,1; 0,1] output=[0xa000; 1,16; 0,1; 0,1] wait=sem6>=8 update=sem7++
memset dtype=float32 partitions=32 output=[0x51c0; 1,16; 0,1; 0,1] fill=0.0 update=sem7++
memset dtype=float32 partitions=16 output=[0x405380; 1,32; 0,1; 0,1] fill=0.0 update=sem7++
pool op=max in_dtype=float32 out_dtype=float32 partitions=16 input=[0x2000800; 1,16; 0,1; 0,1] output=[0xa0c0; 1,1; 0,1; 0,1] axes=1 wait=sem6>=9 update=sem7++
pool op=sum in_dtype=float32 out_dtype=float32 partitions=16 input=[0xa140; 1,16; 0,1; 0,1] output=[0xa180; 1,1; 0,1; 0,1] axes=1 wait=sem4>=13 update=sem7++
transpose in_dtype=float32 out_dtype=float32 partitions=16 input=[0xa200; 1,16; 0,1; 0,1] output=[0xa240; 1,16; 0,1; 0,1] wait=sem6>=11 update=sem7++
memset dtype=float32 partitions=32 output=[0x5240; 1,16; 0,1; 0,1] fill=0.0 update=sem7++
memset dtype=float32 partitions=16 output=[0x405400; 1,32; 0,1; 0,1] fill=0.0 update=sem7++
pool op=max in_dtype=float32 out_dtype=float32 partitions=16 input=[0x2003000; 1,16; 0,1; 0,1] output=[0xa300; 1,1; 0,1; 0,1] axes=1 wait=sem6>=12 update=sem7++
pool op=sum in_dtype=float32 out_dtype=float32 partitions=16 input=[0xa380; 1,16; 0,1; 0,1] output=[0xa3c0; 1,1; 0,1; 0,1] axes=1 wait=sem4>=19 update=sem7++
transpose in_dtype=float32 out_dtype=float32 partitions=16 input=[0xa440; 1,16; 0,1; 0,1] output=[0xa480; 1,16; 0,1; 0,1] wait=sem6>=14 update=sem7++
memset dtype=float32 partitions=32 output=[0x52c0; 1,16; 0,1; 0,1] fill=0.0 update=sem7++
memset dtype=float32 partitions=16 output=[0x405480; 1,32; 0,1; 0,1] fill=0.0 update=sem7++
pool op=max in_dtype=float32 out_dtype=float32 partitions=16 input=[0x2001800; 1,16; 0,1; 0,1] output=[0xa540; 1,1; 0,1; 0,1] axes=1 wait=sem6>=15 update=sem7++
pool op=sum in_dtype=float32 out_dtype=float32 partitions=16 input=[0xa5c0; 1,16; 0,1; 0,1] output=[0xa600; 1,1; 0,1; 0,1] axes=1 wait=sem4>=25 update=sem7++
transpose in_dtype=float32 out_dtype=float32 partitions=16 input=[0xa680; 1,16; 0,1; 0,1] output=[0xa6c0; 1,16; 0,1; 0,1] wait=sem6>=17 update=sem7++
memset dtype=float32 partitions=32 output=[0x95c0; 1,16; 0,1; 0,1] fill=0.0 update=sem7++
memset dtype=float32 partitions=16 output=[0x409780; 1,32; 0,1; 0,1] fill=0.0 update=sem7++
pool op=max in_dtype=float32 out_dtype=float32 partitions=16 input=[0x2002000; 1,16; 0,1; 0,1] output=[0x9e80; 1,1; 0,1; 0,1] axes=1 wait=sem6>=33 update=sem7++
pool op=sum in_dtype=float32 out_dtype=float32 partitions=16 input=[0x9f00; 1,16; 0,1; 0,1] output=[0x9f40; 1,1; 0,1; 0,1] axes=1 wait=sem4>=44 update=sem7++
event_semaphore ext_wait=none ext_update=none wait=sem6>=35
transpose in_dtype=float32 out_dtype=float32 partitions=16 input=[0x9fc0; 1,16; 0,1; 0,1] output=[0xa000; 1,16; 0,1; 0,1] wait=sem5>=10 update=sem7++
memset dtype=float32 partitions=32 output=[0x9640; 1,16; 0,1; 0,1] fill=0.0 update=sem7++
memset dtype=float32 partitions=16 output=[0x409800; 1,32; 0,1; 0,1] fill=0.0 update=sem7++
pool op=max in_dtype=float32 out_dtype=float32 partitions=16 input=[0x2000800; 1,16; 0,1; 0,1] output=[0xa0c0; 1,1; 0,1; 0,1] axes=1 wait=sem6>=36 update=sem7++
pool op=sum in_dtype=float32 out_dtype=float32 partitions=16 input=[0xa140; 1,16; 0,1; 0,1] output=[0xa180; 1,1; 0,1; 0,1] axes=1 wait=sem4>=50 update=sem7++
event_semaphore ext_wait=none ext_update=none wait=sem6>=38
transpose in_dtype=float32 out_dtype=float32 partitions=16 input=[0xa200; 1,16; 0,1; 0,1] output=[0xa240; 1,16; 0,1; 0,1] wait=sem5>=18 update=sem7++
memset dtype=float32 partitions=32 output=[0x96c0; 1,16; 0,1; 0,1] fill=0.0 update=sem7++
memset dtype=float32 partitions=16 output=[0x409880; 1,32; 0,1; 0,1] fill=0.0 update=sem7++
pool op=max in_dtype=float32 out_dtype=float32 partitions=16 input=[0x2003000; 1,16; 0,1; 0,1] output=[0xa300; 1,1; 0,1; 0,1] axes=1 wait=sem6>=39 update=sem7++
pool op=sum in_dtype=float32 out_dtype=float32 partitions=16 input=[0xa380; 1,16; 0,1; 0,1] output=[0xa3c0; 1,1; 0,1; 0,1] axes=1 wait=sem4>=56 update=sem7++
event_semaphore ext_wait=none ext_update=none wait=sem6>=41
transpose in_dtype=float32 out_dtype=float32 partitions=16 input=[0xa440; 1,16; 0,1; 0,1] output=[0xa480; 1,16; 0,1; 0,1] wait=sem5>=26 update=sem7++
memset dtype=float32 partitions=32 output=[0x9740; 1,16; 0,1; 0,1] fill=0.0 update=sem7++
memset dtype=float32 partitions=16 output=[0x409900; 1,32; 0,1; 0,1] fill=0.0 update=sem7++
pool op=max in_dtype=float32 out_dtype=float32 partitions=16 input=[0x2001800; 1,16; 0,1; 0,1] output=[0xa540; 1,1; 0,1; 0,1] axes=1 wait=sem6>=42 update=sem7++
pool op=sum in_dtype=float32 out_dtype=float32 partitions=16 input=[0xa5c0; 1,16; 0,1; 0,1] output=[0xa600; 1,1; 0,1; 0,1] axes=1 wait=sem4>=62 update=sem7++
event_semaphore ext_wait=none ext_update=none wait=sem6>=44
transpose in_dtype=float32 out_dtype=float32 partitions=16 input=[0xa680; 1,16; 0,1; 0,1] output=[0xa6c0; 1,16; 0,1; 0,1] wait=sem5>=34 update=sem7++
