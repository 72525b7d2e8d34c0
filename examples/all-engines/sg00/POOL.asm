# POOL engine of all-engines: the mean of each row of x (32 partitions,
# 64 elements each) into one float per partition at +0x400; semaphore 3.
pool op=mean in_dtype=float32 out_dtype=float32 partitions=32 input=[0x0; 1,64; 0,1; 0,1] output=[0x400; 1,1; 0,1; 0,1] axes=1 wait=sem1>=1 update=sem3++
pseudo_inst sub=exit_execution
