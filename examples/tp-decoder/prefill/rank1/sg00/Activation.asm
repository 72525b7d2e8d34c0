prologue_b1
branch_label
act_table_load
activate func=square in_dtype=float32 out_dtype=float32 partitions=128 input=[0x1000; 1,16; 0,1; 0,1] output=[0x9c80; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem8>=16 update=sem4++
activate func=square in_dtype=float32 out_dtype=float32 partitions=128 input=[0x1040; 1,16; 0,1; 0,1] output=[0x9cc0; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem9>=16 update=sem4++
activate func=rsqrt in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2000000; 1,16; 0,1; 0,1] output=[0x9d00; 1,16; 0,1; 0,1] scale=0.00390625 bias=1e-5 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=2 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2000800; 1,16; 0,1; 0,1] output=[0x9e40; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=4 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=6
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2001000; 1,16; 0,1; 0,1] output=[0x5100; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem7>=4 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=8
activate func=identity in_dtype=float32 out_dtype=float32 partitions=16 input=[0x2001800; 1,32; 0,1; 0,1] output=[0x5300; 1,32; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem7>=5 update=sem4++
activate func=exp in_dtype=float32 out_dtype=float32 partitions=16 input=[0x2002000; 1,16; 0,1; 0,1] output=[0x9f00; 1,16; 0,1; 0,1] scale=0.17677669 bias=0.0 bias_addr=0x9ec0 bias_from_sbuf=true wait=sem6>=7 update=sem4++
activate func=reciprocal in_dtype=float32 out_dtype=float32 partitions=16 input=[0x9f40; 1,1; 0,1; 0,1] output=[0x9f80; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem7>=7 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2002800; 1,16; 0,1; 0,1] output=[0xa040; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=10 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2003000; 1,16; 0,1; 0,1] output=[0xa080; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=12 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=14
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2003800; 1,16; 0,1; 0,1] output=[0x5180; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem7>=9 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=16
activate func=identity in_dtype=float32 out_dtype=float32 partitions=16 input=[0x2000000; 1,32; 0,1; 0,1] output=[0x5380; 1,32; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem7>=10 update=sem4++
activate func=exp in_dtype=float32 out_dtype=float32 partitions=16 input=[0x2000800; 1,16; 0,1; 0,1] output=[0xa140; 1,16; 0,1; 0,1] scale=0.17677669 bias=0.0 bias_addr=0xa100 bias_from_sbuf=true wait=sem6>=10 update=sem4++
activate func=reciprocal in_dtype=float32 out_dtype=float32 partitions=16 input=[0xa180; 1,1; 0,1; 0,1] output=[0xa1c0; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem7>=12 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2001000; 1,16; 0,1; 0,1] output=[0xa280; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=18 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2001800; 1,16; 0,1; 0,1] output=[0xa2c0; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=20 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=22
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2002000; 1,16; 0,1; 0,1] output=[0x5200; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem7>=14 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=24
activate func=identity in_dtype=float32 out_dtype=float32 partitions=16 input=[0x2002800; 1,32; 0,1; 0,1] output=[0x5400; 1,32; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem7>=15 update=sem4++
activate func=exp in_dtype=float32 out_dtype=float32 partitions=16 input=[0x2003000; 1,16; 0,1; 0,1] output=[0xa380; 1,16; 0,1; 0,1] scale=0.17677669 bias=0.0 bias_addr=0xa340 bias_from_sbuf=true wait=sem6>=13 update=sem4++
activate func=reciprocal in_dtype=float32 out_dtype=float32 partitions=16 input=[0xa3c0; 1,1; 0,1; 0,1] output=[0xa400; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem7>=17 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2003800; 1,16; 0,1; 0,1] output=[0xa4c0; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=26 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2000000; 1,16; 0,1; 0,1] output=[0xa500; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=28 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=30
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2000800; 1,16; 0,1; 0,1] output=[0x5280; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem7>=19 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=32
activate func=identity in_dtype=float32 out_dtype=float32 partitions=16 input=[0x2001000; 1,32; 0,1; 0,1] output=[0x5480; 1,32; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem7>=20 update=sem4++
activate func=exp in_dtype=float32 out_dtype=float32 partitions=16 input=[0x2001800; 1,16; 0,1; 0,1] output=[0xa5c0; 1,16; 0,1; 0,1] scale=0.17677669 bias=0.0 bias_addr=0xa580 bias_from_sbuf=true wait=sem6>=16 update=sem4++
activate func=reciprocal in_dtype=float32 out_dtype=float32 partitions=16 input=[0xa600; 1,1; 0,1; 0,1] output=[0xa640; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem7>=22 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2002000; 1,16; 0,1; 0,1] output=[0xa700; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=34 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2002800; 1,16; 0,1; 0,1] output=[0xa740; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=38 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2003000; 1,16; 0,1; 0,1] output=[0xa780; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=42 update=sem4++
activate func=square in_dtype=float32 out_dtype=float32 partitions=128 input=[0xa840; 1,16; 0,1; 0,1] output=[0xa8c0; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem6>=18 update=sem4++
activate func=square in_dtype=float32 out_dtype=float32 partitions=128 input=[0xa880; 1,16; 0,1; 0,1] output=[0xa900; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem6>=19 update=sem4++
activate func=rsqrt in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2003800; 1,16; 0,1; 0,1] output=[0xa940; 1,16; 0,1; 0,1] scale=0.00390625 bias=1e-5 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=44 update=sem4++
activate func=silu in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2000000; 1,16; 0,1; 0,1] output=[0xaa80; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=46 update=sem4++
activate func=silu in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2001000; 1,16; 0,1; 0,1] output=[0xab00; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=50 update=sem4++
activate func=silu in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2002000; 1,16; 0,1; 0,1] output=[0xab80; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=54 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2003000; 1,16; 0,1; 0,1] output=[0xac00; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=59 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2003800; 1,16; 0,1; 0,1] output=[0xac40; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=62 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem6>=27
activate func=square in_dtype=float32 out_dtype=float32 partitions=128 input=[0xad00; 1,16; 0,1; 0,1] output=[0x9c80; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=1 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem6>=28
activate func=square in_dtype=float32 out_dtype=float32 partitions=128 input=[0xad40; 1,16; 0,1; 0,1] output=[0x9cc0; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=2 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=64
activate func=rsqrt in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2000000; 1,16; 0,1; 0,1] output=[0x9d00; 1,16; 0,1; 0,1] scale=0.00390625 bias=1e-5 bias_addr=0x0 bias_from_sbuf=false wait=sem6>=4 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2000800; 1,16; 0,1; 0,1] output=[0x9e40; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=66 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=68
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2001000; 1,16; 0,1; 0,1] output=[0x9580; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem7>=24 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=70
activate func=identity in_dtype=float32 out_dtype=float32 partitions=16 input=[0x2001800; 1,32; 0,1; 0,1] output=[0x9780; 1,32; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem7>=25 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem6>=34
activate func=exp in_dtype=float32 out_dtype=float32 partitions=16 input=[0x2002000; 1,16; 0,1; 0,1] output=[0x9f00; 1,16; 0,1; 0,1] scale=0.17677669 bias=0.0 bias_addr=0x9ec0 bias_from_sbuf=true wait=sem7>=7 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem7>=27
activate func=reciprocal in_dtype=float32 out_dtype=float32 partitions=16 input=[0x9f40; 1,1; 0,1; 0,1] output=[0x9f80; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem6>=8 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2002800; 1,16; 0,1; 0,1] output=[0xa040; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=72 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2003000; 1,16; 0,1; 0,1] output=[0xa080; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=74 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=76
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2003800; 1,16; 0,1; 0,1] output=[0x9600; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem7>=29 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=78
activate func=identity in_dtype=float32 out_dtype=float32 partitions=16 input=[0x2000000; 1,32; 0,1; 0,1] output=[0x9800; 1,32; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem7>=30 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem6>=37
activate func=exp in_dtype=float32 out_dtype=float32 partitions=16 input=[0x2000800; 1,16; 0,1; 0,1] output=[0xa140; 1,16; 0,1; 0,1] scale=0.17677669 bias=0.0 bias_addr=0xa100 bias_from_sbuf=true wait=sem7>=12 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem7>=32
activate func=reciprocal in_dtype=float32 out_dtype=float32 partitions=16 input=[0xa180; 1,1; 0,1; 0,1] output=[0xa1c0; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem6>=11 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2001000; 1,16; 0,1; 0,1] output=[0xa280; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=80 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2001800; 1,16; 0,1; 0,1] output=[0xa2c0; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=82 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=84
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2002000; 1,16; 0,1; 0,1] output=[0x9680; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem7>=34 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=86
activate func=identity in_dtype=float32 out_dtype=float32 partitions=16 input=[0x2002800; 1,32; 0,1; 0,1] output=[0x9880; 1,32; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem7>=35 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem6>=40
activate func=exp in_dtype=float32 out_dtype=float32 partitions=16 input=[0x2003000; 1,16; 0,1; 0,1] output=[0xa380; 1,16; 0,1; 0,1] scale=0.17677669 bias=0.0 bias_addr=0xa340 bias_from_sbuf=true wait=sem7>=17 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem7>=37
activate func=reciprocal in_dtype=float32 out_dtype=float32 partitions=16 input=[0xa3c0; 1,1; 0,1; 0,1] output=[0xa400; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem6>=14 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2003800; 1,16; 0,1; 0,1] output=[0xa4c0; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=88 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2000000; 1,16; 0,1; 0,1] output=[0xa500; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=90 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=92
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2000800; 1,16; 0,1; 0,1] output=[0x9700; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem7>=39 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=94
activate func=identity in_dtype=float32 out_dtype=float32 partitions=16 input=[0x2001000; 1,32; 0,1; 0,1] output=[0x9900; 1,32; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem7>=40 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem6>=43
activate func=exp in_dtype=float32 out_dtype=float32 partitions=16 input=[0x2001800; 1,16; 0,1; 0,1] output=[0xa5c0; 1,16; 0,1; 0,1] scale=0.17677669 bias=0.0 bias_addr=0xa580 bias_from_sbuf=true wait=sem7>=22 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem7>=42
activate func=reciprocal in_dtype=float32 out_dtype=float32 partitions=16 input=[0xa600; 1,1; 0,1; 0,1] output=[0xa640; 1,1; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem6>=17 update=sem4++
activate func=identity in_dtype=float32 out_dtype=float32 partitions=32 input=[0x2002000; 1,16; 0,1; 0,1] output=[0xa700; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=96 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=100
activate func=identity in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2002800; 1,16; 0,1; 0,1] output=[0xa740; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem13>=48 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=104
activate func=identity in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2003000; 1,16; 0,1; 0,1] output=[0xa780; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem14>=48 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem6>=45
activate func=square in_dtype=float32 out_dtype=float32 partitions=128 input=[0xa840; 1,16; 0,1; 0,1] output=[0xa8c0; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=43 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem6>=46
activate func=square in_dtype=float32 out_dtype=float32 partitions=128 input=[0xa880; 1,16; 0,1; 0,1] output=[0xa900; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=44 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=106
activate func=rsqrt in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2003800; 1,16; 0,1; 0,1] output=[0xa940; 1,16; 0,1; 0,1] scale=0.00390625 bias=1e-5 bias_addr=0x0 bias_from_sbuf=false wait=sem6>=22 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=108
activate func=silu in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2000000; 1,16; 0,1; 0,1] output=[0xaa80; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem6>=24 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=112
activate func=silu in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2001000; 1,16; 0,1; 0,1] output=[0xab00; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem6>=25 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=116
activate func=silu in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2002000; 1,16; 0,1; 0,1] output=[0xab80; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem6>=26 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=121
activate func=identity in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2003000; 1,16; 0,1; 0,1] output=[0xac00; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem17>=48 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=124
activate func=identity in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2003800; 1,16; 0,1; 0,1] output=[0xac40; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem18>=48 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem6>=54
activate func=square in_dtype=float32 out_dtype=float32 partitions=128 input=[0xad00; 1,16; 0,1; 0,1] output=[0x9c80; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=63 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem6>=55
activate func=square in_dtype=float32 out_dtype=float32 partitions=128 input=[0xad40; 1,16; 0,1; 0,1] output=[0x9cc0; 1,16; 0,1; 0,1] scale=1.0 bias=0.0 bias_addr=0x0 bias_from_sbuf=false wait=sem5>=64 update=sem4++
event_semaphore ext_wait=none ext_update=none wait=sem5>=126
activate func=rsqrt in_dtype=float32 out_dtype=float32 partitions=128 input=[0x2000000; 1,16; 0,1; 0,1] output=[0x9d00; 1,16; 0,1; 0,1] scale=0.00390625 bias=1e-5 bias_addr=0x0 bias_from_sbuf=false wait=sem6>=31 update=sem4++
