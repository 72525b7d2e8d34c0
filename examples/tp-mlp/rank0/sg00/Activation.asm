prologue_b1
branch_label
act_table_load
event_semaphore ext_wait=none ext_update=none wait=sem5>=1
activate func=relu in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2000000; 1,128; 0,1; 0,1] output=[0x2100; 1,128; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x2000 bias_from_sbuf=true wait=sem11>=16 update=sem4++
activate func=relu in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2000800; 1,128; 0,1; 0,1] output=[0x2300; 1,128; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x2004 bias_from_sbuf=true wait=sem5>=2 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem14>=16
activate func=identity in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2000000; 1,128; 0,1; 0,1] output=[0x2e00; 1,128; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x2d00 bias_from_sbuf=true wait=sem5>=3 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem14>=16
activate func=identity in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2000800; 1,128; 0,1; 0,1] output=[0x3000; 1,128; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x2d04 bias_from_sbuf=true wait=sem5>=4 update=sem4++
