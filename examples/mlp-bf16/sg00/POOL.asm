# POOL engine of mlp-bf16: the transposes around the matmul.
# x [i][k] (partition i) -> xT [k][i]: K tile kt on partitions 0..127 at +0x1000 + kt*128 elements.
transpose in_dtype=bfloat16 out_dtype=bfloat16 partitions=128 input=[0x0; 1,128; 0,1; 0,1] output=[0x1000; 1,128; 0,1; 0,1] wait=sem1>=1
transpose in_dtype=bfloat16 out_dtype=bfloat16 partitions=128 input=[0x100; 1,128; 0,1; 0,1] output=[0x1100; 1,128; 0,1; 0,1]
transpose in_dtype=bfloat16 out_dtype=bfloat16 partitions=128 input=[0x200; 1,128; 0,1; 0,1] output=[0x1200; 1,128; 0,1; 0,1]
transpose in_dtype=bfloat16 out_dtype=bfloat16 partitions=128 input=[0x300; 1,128; 0,1; 0,1] output=[0x1300; 1,128; 0,1; 0,1] update=sem3++
# b as 4 rows of 128 (partitions 0..3) -> one fp32 per partition per column chunk: bT[p][jt] = b[128*jt + p].
transpose in_dtype=float32 out_dtype=float32 partitions=4 input=[0x4000; 1,128; 0,1; 0,1] output=[0x4400; 1,4; 0,1; 0,1] wait=sem1>=3 update=sem4++
# yT chunk jt [j][i] (written by ACT) -> y [i][j], row i on partition i at +0x6000.
transpose in_dtype=float32 out_dtype=float32 partitions=128 input=[0x5000; 1,128; 0,1; 0,1] output=[0x6000; 1,128; 0,1; 0,1] wait=sem6>=1
transpose in_dtype=float32 out_dtype=float32 partitions=128 input=[0x5200; 1,128; 0,1; 0,1] output=[0x6200; 1,128; 0,1; 0,1] wait=sem6>=2
transpose in_dtype=float32 out_dtype=float32 partitions=128 input=[0x5400; 1,128; 0,1; 0,1] output=[0x6400; 1,128; 0,1; 0,1] wait=sem6>=3
transpose in_dtype=float32 out_dtype=float32 partitions=128 input=[0x5600; 1,128; 0,1; 0,1] output=[0x6600; 1,128; 0,1; 0,1] wait=sem6>=4 update=sem7++
pseudo_inst sub=exit_execution
