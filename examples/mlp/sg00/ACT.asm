# ACT engine of mlp: yT chunk jt = relu(PSUM bank jt + b[128jt + j]) into SBUF +0x5000,
# the bias read per partition from bT. Semaphore 6 counts finished chunks.
act_table_load wait=sem4>=1   # bT ready
activate func=relu in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2000000; 1,128; 0,1; 0,1] output=[0x5000; 1,128; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x4400 bias_from_sbuf=true wait=sem5>=1 update=sem6++
activate func=relu in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2000800; 1,128; 0,1; 0,1] output=[0x5200; 1,128; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x4404 bias_from_sbuf=true wait=sem5>=2 update=sem6++
activate func=relu in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2001000; 1,128; 0,1; 0,1] output=[0x5400; 1,128; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x4408 bias_from_sbuf=true wait=sem5>=3 update=sem6++
activate func=relu in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2001800; 1,128; 0,1; 0,1] output=[0x5600; 1,128; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x440c bias_from_sbuf=true wait=sem5>=4 update=sem6++
pseudo_inst sub=exit_execution
