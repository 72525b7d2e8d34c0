# ACT engine of all-engines: cov = PSUM · (1/32), PSUM -> SBUF +0x1000
# (64 partitions = rows of cov); semaphore 6.
act_table_load
activate func=identity in_dtype=float32 out_dtype=float32 partitions=64 input=[0x2000000; 1,64; 0,1; 0,1] output=[0x1000; 1,64; 0,1; 0,1] scale=0.03125 bias=0.0 wait=sem5>=1 update=sem6++
pseudo_inst sub=exit_execution
