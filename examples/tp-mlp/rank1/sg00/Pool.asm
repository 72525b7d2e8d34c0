prologue_b1
branch_label
transpose in_dtype=float32 out_dtype=float32 partitions=128 input=[0x1000; 1,128; 0,1; 0,1] output=[0x1400; 1,128; 0,1; 0,1] wait=sem8>=16 update=sem7++
transpose in_dtype=float32 out_dtype=float32 partitions=128 input=[0x1200; 1,128; 0,1; 0,1] output=[0x1600; 1,128; 0,1; 0,1] wait=sem8>=16 update=sem7++
transpose in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2e00; 1,128; 0,1; 0,1] output=[0x3200; 1,128; 0,1; 0,1] wait=sem4>=3 update=sem7++
transpose in_dtype=float32 out_dtype=float32 partitions=128 input=[0x3000; 1,128; 0,1; 0,1] output=[0x3400; 1,128; 0,1; 0,1] wait=sem4>=4 update=sem7++
