prologue_b1
branch_label
act_table_load
activate func=square in_dtype=float32 out_dtype=float32 partitions=128 input=[0x1000; 1,1; 0,1; 0,1] output=[0x9f00; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem8>=16 update=sem4++
activate func=square in_dtype=float32 out_dtype=float32 partitions=128 input=[0x1040; 1,1; 0,1; 0,1] output=[0x9f40; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem9>=16 update=sem4++
activate func=rsqrt in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2000000; 1,1; 0,1; 0,1] output=[0x9f80; 1,1; 0,1; 0,1] scale=0.00390625 bias=1e-5 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=2 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2000800; 1,1; 0,1; 0,1] output=[0xa0c0; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=4 update=sem4++
activate func=exp in_dtype=float32 out_dtype=float32 partitions=1 input=[0x2002000; 1,32; 0,1; 0,1] output=[0xa180; 1,32; 0,1; 0,1] scale=0.17677669 bias=0.0 bias_addr=0xa140 bias_from_sbuf=true wait=sem6>=11 update=sem4++
activate func=reciprocal in_dtype=float32 out_dtype=float32 partitions=1 input=[0xa200; 1,1; 0,1; 0,1] output=[0xa240; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem7>=6 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2002800; 1,1; 0,1; 0,1] output=[0xa340; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=10 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2003000; 1,1; 0,1; 0,1] output=[0xa380; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=12 update=sem4++
activate func=exp in_dtype=float32 out_dtype=float32 partitions=1 input=[0x2000800; 1,32; 0,1; 0,1] output=[0xa440; 1,32; 0,1; 0,1] scale=0.17677669 bias=0.0 bias_addr=0xa400 bias_from_sbuf=true wait=sem6>=16 update=sem4++
activate func=reciprocal in_dtype=float32 out_dtype=float32 partitions=1 input=[0xa4c0; 1,1; 0,1; 0,1] output=[0xa500; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem7>=9 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2001000; 1,1; 0,1; 0,1] output=[0xa600; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=18 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2001800; 1,1; 0,1; 0,1] output=[0xa640; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=20 update=sem4++
activate func=exp in_dtype=float32 out_dtype=float32 partitions=1 input=[0x2003000; 1,32; 0,1; 0,1] output=[0xa700; 1,32; 0,1; 0,1] scale=0.17677669 bias=0.0 bias_addr=0xa6c0 bias_from_sbuf=true wait=sem6>=21 update=sem4++
activate func=reciprocal in_dtype=float32 out_dtype=float32 partitions=1 input=[0xa780; 1,1; 0,1; 0,1] output=[0xa7c0; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem7>=12 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2003800; 1,1; 0,1; 0,1] output=[0xa8c0; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=26 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2000000; 1,1; 0,1; 0,1] output=[0xa900; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=28 update=sem4++
activate func=exp in_dtype=float32 out_dtype=float32 partitions=1 input=[0x2001800; 1,32; 0,1; 0,1] output=[0xa9c0; 1,32; 0,1; 0,1] scale=0.17677669 bias=0.0 bias_addr=0xa980 bias_from_sbuf=true wait=sem6>=26 update=sem4++
activate func=reciprocal in_dtype=float32 out_dtype=float32 partitions=1 input=[0xaa40; 1,1; 0,1; 0,1] output=[0xaa80; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem7>=15 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2002000; 1,1; 0,1; 0,1] output=[0xab80; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=34 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2002800; 1,1; 0,1; 0,1] output=[0xabc0; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=38 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2003000; 1,1; 0,1; 0,1] output=[0xac00; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=42 update=sem4++
activate func=square in_dtype=float32 out_dtype=float32 partitions=128 input=[0xacc0; 1,1; 0,1; 0,1] output=[0xad40; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem6>=28 update=sem4++
activate func=square in_dtype=float32 out_dtype=float32 partitions=128 input=[0xad00; 1,1; 0,1; 0,1] output=[0xad80; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem6>=29 update=sem4++
activate func=rsqrt in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2003800; 1,1; 0,1; 0,1] output=[0xadc0; 1,1; 0,1; 0,1] scale=0.00390625 bias=1e-5 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=44 update=sem4++
activate func=silu in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2000000; 1,1; 0,1; 0,1] output=[0xaf00; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=46 update=sem4++
activate func=silu in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2001000; 1,1; 0,1; 0,1] output=[0xaf80; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=50 update=sem4++
activate func=silu in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2002000; 1,1; 0,1; 0,1] output=[0xb000; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=54 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2003000; 1,1; 0,1; 0,1] output=[0xb080; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=59 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2003800; 1,1; 0,1; 0,1] output=[0xb0c0; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=62 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem6>=37
activate func=square in_dtype=float32 out_dtype=float32 partitions=128 input=[0xb180; 1,1; 0,1; 0,1] output=[0x9f00; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=1 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem6>=38
activate func=square in_dtype=float32 out_dtype=float32 partitions=128 input=[0xb1c0; 1,1; 0,1; 0,1] output=[0x9f40; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=2 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=64
activate func=rsqrt in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2000000; 1,1; 0,1; 0,1] output=[0x9f80; 1,1; 0,1; 0,1] scale=0.00390625 bias=1e-5 bias_addr=0x0 bias_from_sbuf=false wait=sem6>=6 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2000800; 1,1; 0,1; 0,1] output=[0xa0c0; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=66 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem6>=46
activate func=exp in_dtype=float32 out_dtype=float32 partitions=1 input=[0x2002000; 1,32; 0,1; 0,1] output=[0xa180; 1,32; 0,1; 0,1] scale=0.17677669 bias=0.0 bias_addr=0xa140 bias_from_sbuf=true wait=sem7>=6 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem7>=18
activate func=reciprocal in_dtype=float32 out_dtype=float32 partitions=1 input=[0xa200; 1,1; 0,1; 0,1] output=[0xa240; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem6>=12 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2002800; 1,1; 0,1; 0,1] output=[0xa340; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=72 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2003000; 1,1; 0,1; 0,1] output=[0xa380; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=74 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem6>=51
activate func=exp in_dtype=float32 out_dtype=float32 partitions=1 input=[0x2000800; 1,32; 0,1; 0,1] output=[0xa440; 1,32; 0,1; 0,1] scale=0.17677669 bias=0.0 bias_addr=0xa400 bias_from_sbuf=true wait=sem7>=9 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem7>=21
activate func=reciprocal in_dtype=float32 out_dtype=float32 partitions=1 input=[0xa4c0; 1,1; 0,1; 0,1] output=[0xa500; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem6>=17 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2001000; 1,1; 0,1; 0,1] output=[0xa600; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=80 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2001800; 1,1; 0,1; 0,1] output=[0xa640; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=82 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem6>=56
activate func=exp in_dtype=float32 out_dtype=float32 partitions=1 input=[0x2003000; 1,32; 0,1; 0,1] output=[0xa700; 1,32; 0,1; 0,1] scale=0.17677669 bias=0.0 bias_addr=0xa6c0 bias_from_sbuf=true wait=sem7>=12 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem7>=24
activate func=reciprocal in_dtype=float32 out_dtype=float32 partitions=1 input=[0xa780; 1,1; 0,1; 0,1] output=[0xa7c0; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem6>=22 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2003800; 1,1; 0,1; 0,1] output=[0xa8c0; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=88 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2000000; 1,1; 0,1; 0,1] output=[0xa900; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=90 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem6>=61
activate func=exp in_dtype=float32 out_dtype=float32 partitions=1 input=[0x2001800; 1,32; 0,1; 0,1] output=[0xa9c0; 1,32; 0,1; 0,1] scale=0.17677669 bias=0.0 bias_addr=0xa980 bias_from_sbuf=true wait=sem7>=15 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem7>=27
activate func=reciprocal in_dtype=float32 out_dtype=float32 partitions=1 input=[0xaa40; 1,1; 0,1; 0,1] output=[0xaa80; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem6>=27 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2002000; 1,1; 0,1; 0,1] output=[0xab80; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=96 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=100
activate func=identity in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2002800; 1,1; 0,1; 0,1] output=[0xabc0; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem14>=64 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=104
activate func=identity in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2003000; 1,1; 0,1; 0,1] output=[0xac00; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem15>=64 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem6>=63
activate func=square in_dtype=float32 out_dtype=float32 partitions=128 input=[0xacc0; 1,1; 0,1; 0,1] output=[0xad40; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=43 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem6>=64
activate func=square in_dtype=float32 out_dtype=float32 partitions=128 input=[0xad00; 1,1; 0,1; 0,1] output=[0xad80; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=44 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=106
activate func=rsqrt in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2003800; 1,1; 0,1; 0,1] output=[0xadc0; 1,1; 0,1; 0,1] scale=0.00390625 bias=1e-5 bias_addr=0x0 bias_from_sbuf=false wait=sem6>=32 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=108
activate func=silu in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2000000; 1,1; 0,1; 0,1] output=[0xaf00; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem6>=34 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=112
activate func=silu in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2001000; 1,1; 0,1; 0,1] output=[0xaf80; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem6>=35 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=116
activate func=silu in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2002000; 1,1; 0,1; 0,1] output=[0xb000; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem6>=36 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=121
activate func=identity in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2003000; 1,1; 0,1; 0,1] output=[0xb080; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem18>=64 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=124
activate func=identity in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2003800; 1,1; 0,1; 0,1] output=[0xb0c0; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem19>=64 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem6>=72
activate func=square in_dtype=float32 out_dtype=float32 partitions=128 input=[0xb180; 1,1; 0,1; 0,1] output=[0x9f00; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=63 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem6>=73
activate func=square in_dtype=float32 out_dtype=float32 partitions=128 input=[0xb1c0; 1,1; 0,1; 0,1] output=[0x9f40; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=64 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=126
activate func=rsqrt in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2000000; 1,1; 0,1; 0,1] output=[0x9f80; 1,1; 0,1; 0,1] scale=0.00390625 bias=1e-5 bias_addr=0x0 bias_from_sbuf=false wait=sem6>=41 update=sem4++
