prologue_b1
branch_label
ldweights weights=[0x9bbc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem7>=1
event_semaphore ext_wait=none ext_update=none wait=sem4>=1
matmul moving=[0x9c80; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2000000; 1,16; 0,1; 0,1] wait=sem7>=1 update=sem5++
ldweights weights=[0x9bbc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem7>=1
event_semaphore ext_wait=none ext_update=none wait=sem4>=2
matmul moving=[0x9cc0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000000; 1,16; 0,1; 0,1] wait=sem7>=1 update=sem5++
ldweights weights=[0x113c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem11>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=3
matmul moving=[0x9d80; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2000800; 1,16; 0,1; 0,1] wait=sem11>=16 update=sem5++
ldweights weights=[0x173c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem12>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=5
matmul moving=[0x9e00; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000800; 1,16; 0,1; 0,1] wait=sem12>=16 update=sem5++
ldweights weights=[0x133c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem11>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=3
matmul moving=[0x9d80; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2001000; 1,16; 0,1; 0,1] wait=sem11>=16 update=sem5++
ldweights weights=[0x193c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem12>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=5
matmul moving=[0x9e00; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2001000; 1,16; 0,1; 0,1] wait=sem12>=16 update=sem5++
ldweights weights=[0x9dbc; -1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 row_mask=15 col_mask=15 wait=sem6>=3
event_semaphore ext_wait=none ext_update=none wait=sem11>=16
matmul moving=[0x14c0; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 accumulate=start row_mask=15 col_mask=15 psum=[0x2001800; 1,32; 0,1; 0,1] wait=sem6>=3 update=sem5++
ldweights weights=[0x9e3c; -1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 row_mask=15 col_mask=15 wait=sem6>=5
event_semaphore ext_wait=none ext_update=none wait=sem12>=16
matmul moving=[0x1ac0; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 accumulate=stop row_mask=15 col_mask=15 psum=[0x2001800; 1,32; 0,1; 0,1] wait=sem6>=5 update=sem5++
ldweights weights=[0x9e7c; -1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=16 row_mask=15 col_mask=15 wait=sem4>=4
matmul moving=[0x5100; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=16 accumulate=single row_mask=15 col_mask=15 psum=[0x2002000; 1,16; 0,1; 0,1] wait=sem4>=5 update=sem5++
ldweights weights=[0x537c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=16 cols=32 row_mask=15 col_mask=15 wait=sem4>=6
event_semaphore ext_wait=none ext_update=none wait=sem7>=8
matmul moving=[0xa000; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=16 cols=32 accumulate=single row_mask=15 col_mask=15 psum=[0x2002800; 1,16; 0,1; 0,1] wait=sem4>=6 update=sem5++
ldweights weights=[0x11bc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem11>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=3
matmul moving=[0x9d80; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2003000; 1,16; 0,1; 0,1] wait=sem11>=16 update=sem5++
ldweights weights=[0x17bc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem12>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=5
matmul moving=[0x9e00; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2003000; 1,16; 0,1; 0,1] wait=sem12>=16 update=sem5++
ldweights weights=[0x13bc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem11>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=3
matmul moving=[0x9d80; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2003800; 1,16; 0,1; 0,1] wait=sem11>=16 update=sem5++
ldweights weights=[0x19bc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem12>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=5
matmul moving=[0x9e00; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2003800; 1,16; 0,1; 0,1] wait=sem12>=16 update=sem5++
ldweights weights=[0x9dbc; -1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 row_mask=15 col_mask=15 wait=sem6>=3
event_semaphore ext_wait=sem6>=3 ext_update=none wait=sem11>=16
matmul moving=[0x1540; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 accumulate=start row_mask=15 col_mask=15 psum=[0x2000000; 1,32; 0,1; 0,1] wait=sem4>=3 update=sem5++
ldweights weights=[0x9e3c; -1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 row_mask=15 col_mask=15 wait=sem6>=5
event_semaphore ext_wait=none ext_update=none wait=sem12>=16
matmul moving=[0x1b40; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000000; 1,32; 0,1; 0,1] wait=sem6>=5 update=sem5++
ldweights weights=[0xa0bc; -1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=16 row_mask=15 col_mask=15 wait=sem4>=10
matmul moving=[0x5180; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=16 accumulate=single row_mask=15 col_mask=15 psum=[0x2000800; 1,16; 0,1; 0,1] wait=sem4>=11 update=sem5++
ldweights weights=[0x53fc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=16 cols=32 row_mask=15 col_mask=15 wait=sem4>=12
event_semaphore ext_wait=none ext_update=none wait=sem7>=13
matmul moving=[0xa240; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=16 cols=32 accumulate=single row_mask=15 col_mask=15 psum=[0x2001000; 1,16; 0,1; 0,1] wait=sem4>=12 update=sem5++
ldweights weights=[0x123c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem11>=16
event_semaphore ext_wait=sem11>=16 ext_update=none wait=sem6>=3
matmul moving=[0x9d80; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2001800; 1,16; 0,1; 0,1] wait=sem4>=6 update=sem5++
ldweights weights=[0x183c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem12>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=5
matmul moving=[0x9e00; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2001800; 1,16; 0,1; 0,1] wait=sem12>=16 update=sem5++
ldweights weights=[0x143c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem11>=16
event_semaphore ext_wait=sem11>=16 ext_update=none wait=sem6>=6
event_semaphore ext_wait=none ext_update=none wait=sem7>=6
matmul moving=[0x9d80; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2002000; 1,16; 0,1; 0,1] wait=sem4>=7 update=sem5++
ldweights weights=[0x1a3c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem12>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=5
matmul moving=[0x9e00; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2002000; 1,16; 0,1; 0,1] wait=sem12>=16 update=sem5++
ldweights weights=[0x9dbc; -1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 row_mask=15 col_mask=15 wait=sem6>=3
event_semaphore ext_wait=sem6>=3 ext_update=none wait=sem11>=16
matmul moving=[0x15c0; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 accumulate=start row_mask=15 col_mask=15 psum=[0x2002800; 1,32; 0,1; 0,1] wait=sem4>=9 update=sem5++
ldweights weights=[0x9e3c; -1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 row_mask=15 col_mask=15 wait=sem6>=5
event_semaphore ext_wait=none ext_update=none wait=sem12>=16
matmul moving=[0x1bc0; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 accumulate=stop row_mask=15 col_mask=15 psum=[0x2002800; 1,32; 0,1; 0,1] wait=sem6>=5 update=sem5++
ldweights weights=[0xa2fc; -1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=16 row_mask=15 col_mask=15 wait=sem4>=16
matmul moving=[0x5200; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=16 accumulate=single row_mask=15 col_mask=15 psum=[0x2003000; 1,16; 0,1; 0,1] wait=sem4>=17 update=sem5++
ldweights weights=[0x547c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=16 cols=32 row_mask=15 col_mask=15 wait=sem4>=18
event_semaphore ext_wait=none ext_update=none wait=sem7>=18
matmul moving=[0xa480; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=16 cols=32 accumulate=single row_mask=15 col_mask=15 psum=[0x2003800; 1,16; 0,1; 0,1] wait=sem4>=18 update=sem5++
ldweights weights=[0x12bc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem11>=16
event_semaphore ext_wait=sem11>=16 ext_update=none wait=sem6>=3
matmul moving=[0x9d80; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2000000; 1,16; 0,1; 0,1] wait=sem4>=12 update=sem5++
ldweights weights=[0x18bc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem12>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=5
matmul moving=[0x9e00; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000000; 1,16; 0,1; 0,1] wait=sem12>=16 update=sem5++
ldweights weights=[0x14bc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem11>=16
event_semaphore ext_wait=sem11>=16 ext_update=none wait=sem6>=9
event_semaphore ext_wait=none ext_update=none wait=sem7>=11
matmul moving=[0x9d80; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2000800; 1,16; 0,1; 0,1] wait=sem4>=13 update=sem5++
ldweights weights=[0x1abc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem12>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=5
matmul moving=[0x9e00; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000800; 1,16; 0,1; 0,1] wait=sem12>=16 update=sem5++
ldweights weights=[0x9dbc; -1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 row_mask=15 col_mask=15 wait=sem6>=3
event_semaphore ext_wait=sem6>=3 ext_update=none wait=sem11>=16
matmul moving=[0x1640; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 accumulate=start row_mask=15 col_mask=15 psum=[0x2001000; 1,32; 0,1; 0,1] wait=sem4>=15 update=sem5++
ldweights weights=[0x9e3c; -1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 row_mask=15 col_mask=15 wait=sem6>=5
event_semaphore ext_wait=none ext_update=none wait=sem12>=16
matmul moving=[0x1c40; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 accumulate=stop row_mask=15 col_mask=15 psum=[0x2001000; 1,32; 0,1; 0,1] wait=sem6>=5 update=sem5++
ldweights weights=[0xa53c; -1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=16 row_mask=15 col_mask=15 wait=sem4>=22
matmul moving=[0x5280; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=16 accumulate=single row_mask=15 col_mask=15 psum=[0x2001800; 1,16; 0,1; 0,1] wait=sem4>=23 update=sem5++
ldweights weights=[0x54fc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=16 cols=32 row_mask=15 col_mask=15 wait=sem4>=24
event_semaphore ext_wait=none ext_update=none wait=sem7>=23
matmul moving=[0xa6c0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=16 cols=32 accumulate=single row_mask=15 col_mask=15 psum=[0x2002000; 1,16; 0,1; 0,1] wait=sem4>=24 update=sem5++
ldweights weights=[0x1ebc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem13>=16
event_semaphore ext_wait=none ext_update=none wait=sem4>=18
matmul moving=[0xa040; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2002800; 1,16; 0,1; 0,1] wait=sem13>=16 update=sem5++
ldweights weights=[0x22bc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem14>=16
event_semaphore ext_wait=none ext_update=none wait=sem4>=15
matmul moving=[0xa280; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2002800; 1,16; 0,1; 0,1] wait=sem14>=16 update=sem5++
ldweights weights=[0x26bc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem15>=16
event_semaphore ext_wait=none ext_update=none wait=sem4>=21
matmul moving=[0xa4c0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2002800; 1,16; 0,1; 0,1] wait=sem15>=16 update=sem5++
ldweights weights=[0x2abc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem16>=16
event_semaphore ext_wait=none ext_update=none wait=sem4>=27
matmul moving=[0xa700; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2002800; 1,16; 0,1; 0,1] wait=sem16>=16 update=sem5++
ldweights weights=[0x20bc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem13>=16
event_semaphore ext_wait=sem13>=16 ext_update=none wait=sem4>=19
event_semaphore ext_wait=none ext_update=none wait=sem6>=12
matmul moving=[0xa040; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2003000; 1,16; 0,1; 0,1] wait=sem7>=16 update=sem5++
ldweights weights=[0x24bc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem14>=16
event_semaphore ext_wait=none ext_update=none wait=sem4>=15
matmul moving=[0xa280; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2003000; 1,16; 0,1; 0,1] wait=sem14>=16 update=sem5++
ldweights weights=[0x28bc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem15>=16
event_semaphore ext_wait=none ext_update=none wait=sem4>=21
matmul moving=[0xa4c0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2003000; 1,16; 0,1; 0,1] wait=sem15>=16 update=sem5++
ldweights weights=[0x2cbc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem16>=16
event_semaphore ext_wait=none ext_update=none wait=sem4>=27
matmul moving=[0xa700; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2003000; 1,16; 0,1; 0,1] wait=sem16>=16 update=sem5++
ldweights weights=[0x9bbc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem7>=1
event_semaphore ext_wait=none ext_update=none wait=sem4>=30
matmul moving=[0xa8c0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2003800; 1,16; 0,1; 0,1] wait=sem7>=1 update=sem5++
ldweights weights=[0x9bbc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem7>=1
event_semaphore ext_wait=none ext_update=none wait=sem4>=31
matmul moving=[0xa900; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2003800; 1,16; 0,1; 0,1] wait=sem7>=1 update=sem5++
ldweights weights=[0x2efc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem18>=16
event_semaphore ext_wait=sem18>=16 ext_update=none wait=sem6>=21
matmul moving=[0xa9c0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2000000; 1,16; 0,1; 0,1] wait=sem4>=22 update=sem5++
ldweights weights=[0x3afc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem19>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=23
matmul moving=[0xaa40; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000000; 1,16; 0,1; 0,1] wait=sem19>=16 update=sem5++
ldweights weights=[0x34fc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem18>=16
event_semaphore ext_wait=sem18>=16 ext_update=none wait=sem6>=21
matmul moving=[0xa9c0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2000800; 1,16; 0,1; 0,1] wait=sem4>=23 update=sem5++
ldweights weights=[0x40fc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem19>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=23
matmul moving=[0xaa40; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000800; 1,16; 0,1; 0,1] wait=sem19>=16 update=sem5++
ldweights weights=[0x30fc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem18>=16
event_semaphore ext_wait=sem18>=16 ext_update=none wait=sem6>=21
matmul moving=[0xa9c0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2001000; 1,16; 0,1; 0,1] wait=sem4>=24 update=sem5++
ldweights weights=[0x3cfc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem19>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=23
matmul moving=[0xaa40; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2001000; 1,16; 0,1; 0,1] wait=sem19>=16 update=sem5++
ldweights weights=[0x36fc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem18>=16
event_semaphore ext_wait=sem18>=16 ext_update=none wait=sem6>=21
event_semaphore ext_wait=none ext_update=none wait=sem7>=21
matmul moving=[0xa9c0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2001800; 1,16; 0,1; 0,1] wait=sem4>=25 update=sem5++
ldweights weights=[0x42fc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem19>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=23
matmul moving=[0xaa40; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2001800; 1,16; 0,1; 0,1] wait=sem19>=16 update=sem5++
ldweights weights=[0x32fc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem18>=16
event_semaphore ext_wait=sem18>=16 ext_update=none wait=sem6>=21
matmul moving=[0xa9c0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2002000; 1,16; 0,1; 0,1] wait=sem4>=27 update=sem5++
ldweights weights=[0x3efc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem19>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=23
matmul moving=[0xaa40; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2002000; 1,16; 0,1; 0,1] wait=sem19>=16 update=sem5++
ldweights weights=[0x38fc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem18>=16
event_semaphore ext_wait=sem18>=16 ext_update=none wait=sem6>=21
matmul moving=[0xa9c0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2002800; 1,16; 0,1; 0,1] wait=sem4>=28 update=sem5++
ldweights weights=[0x44fc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem19>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=23
matmul moving=[0xaa40; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2002800; 1,16; 0,1; 0,1] wait=sem19>=16 update=sem5++
ldweights weights=[0x46fc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem20>=16
event_semaphore ext_wait=sem20>=16 ext_update=none wait=sem6>=24
matmul moving=[0xaac0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2003000; 1,16; 0,1; 0,1] wait=sem4>=29 update=sem5++
ldweights weights=[0x4afc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem21>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=25
matmul moving=[0xab40; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2003000; 1,16; 0,1; 0,1] wait=sem21>=16 update=sem5++
ldweights weights=[0x4efc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem22>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=26
matmul moving=[0xabc0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2003000; 1,16; 0,1; 0,1] wait=sem22>=16 update=sem5++
ldweights weights=[0x48fc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem20>=16
event_semaphore ext_wait=sem20>=16 ext_update=none wait=sem6>=24
matmul moving=[0xaac0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2003800; 1,16; 0,1; 0,1] wait=sem4>=32 update=sem5++
ldweights weights=[0x4cfc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem21>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=25
matmul moving=[0xab40; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2003800; 1,16; 0,1; 0,1] wait=sem21>=16 update=sem5++
ldweights weights=[0x50fc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem22>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=26
matmul moving=[0xabc0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2003800; 1,16; 0,1; 0,1] wait=sem22>=16 update=sem5++
ldweights weights=[0x9bbc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem7>=1
event_semaphore ext_wait=none ext_update=none wait=sem4>=38
matmul moving=[0x9c80; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2000000; 1,16; 0,1; 0,1] wait=sem7>=1 update=sem5++
ldweights weights=[0x9bbc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem7>=1
event_semaphore ext_wait=none ext_update=none wait=sem4>=39
matmul moving=[0x9cc0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000000; 1,16; 0,1; 0,1] wait=sem7>=1 update=sem5++
ldweights weights=[0x55bc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem8>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=30
matmul moving=[0x9d80; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2000800; 1,16; 0,1; 0,1] wait=sem8>=32 update=sem5++
ldweights weights=[0x5bbc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem9>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=32
matmul moving=[0x9e00; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000800; 1,16; 0,1; 0,1] wait=sem9>=32 update=sem5++
ldweights weights=[0x57bc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem8>=32
event_semaphore ext_wait=sem8>=32 ext_update=none wait=sem6>=30
matmul moving=[0x9d80; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2001000; 1,16; 0,1; 0,1] wait=sem4>=34 update=sem5++
ldweights weights=[0x5dbc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem9>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=32
matmul moving=[0x9e00; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2001000; 1,16; 0,1; 0,1] wait=sem9>=32 update=sem5++
ldweights weights=[0x9dbc; -1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 row_mask=15 col_mask=15 wait=sem6>=30
event_semaphore ext_wait=none ext_update=none wait=sem8>=32
matmul moving=[0x5940; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 accumulate=start row_mask=15 col_mask=15 psum=[0x2001800; 1,32; 0,1; 0,1] wait=sem6>=30 update=sem5++
ldweights weights=[0x9e3c; -1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 row_mask=15 col_mask=15 wait=sem6>=32
event_semaphore ext_wait=none ext_update=none wait=sem9>=32
matmul moving=[0x5f40; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 accumulate=stop row_mask=15 col_mask=15 psum=[0x2001800; 1,32; 0,1; 0,1] wait=sem6>=32 update=sem5++
ldweights weights=[0x9e7c; -1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=16 row_mask=15 col_mask=15 wait=sem4>=41
matmul moving=[0x9580; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=16 accumulate=single row_mask=15 col_mask=15 psum=[0x2002000; 1,16; 0,1; 0,1] wait=sem4>=42 update=sem5++
ldweights weights=[0x97fc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=16 cols=32 row_mask=15 col_mask=15 wait=sem4>=43
event_semaphore ext_wait=sem4>=43 ext_update=none wait=sem7>=28
matmul moving=[0xa000; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=16 cols=32 accumulate=single row_mask=15 col_mask=15 psum=[0x2002800; 1,16; 0,1; 0,1] wait=sem6>=26 update=sem5++
ldweights weights=[0x563c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem8>=32
event_semaphore ext_wait=sem8>=32 ext_update=none wait=sem6>=30
matmul moving=[0x9d80; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2003000; 1,16; 0,1; 0,1] wait=sem4>=36 update=sem5++
ldweights weights=[0x5c3c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem9>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=32
matmul moving=[0x9e00; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2003000; 1,16; 0,1; 0,1] wait=sem9>=32 update=sem5++
ldweights weights=[0x583c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem8>=32
event_semaphore ext_wait=sem8>=32 ext_update=none wait=sem6>=30
matmul moving=[0x9d80; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2003800; 1,16; 0,1; 0,1] wait=sem4>=37 update=sem5++
ldweights weights=[0x5e3c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem9>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=32
matmul moving=[0x9e00; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2003800; 1,16; 0,1; 0,1] wait=sem9>=32 update=sem5++
ldweights weights=[0x9dbc; -1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 row_mask=15 col_mask=15 wait=sem6>=30
event_semaphore ext_wait=sem6>=30 ext_update=none wait=sem8>=32
matmul moving=[0x59c0; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 accumulate=start row_mask=15 col_mask=15 psum=[0x2000000; 1,32; 0,1; 0,1] wait=sem4>=40 update=sem5++
ldweights weights=[0x9e3c; -1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 row_mask=15 col_mask=15 wait=sem6>=32
event_semaphore ext_wait=none ext_update=none wait=sem9>=32
matmul moving=[0x5fc0; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000000; 1,32; 0,1; 0,1] wait=sem6>=32 update=sem5++
ldweights weights=[0xa0bc; -1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=16 row_mask=15 col_mask=15 wait=sem4>=47
matmul moving=[0x9600; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=16 accumulate=single row_mask=15 col_mask=15 psum=[0x2000800; 1,16; 0,1; 0,1] wait=sem4>=48 update=sem5++
ldweights weights=[0x987c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=16 cols=32 row_mask=15 col_mask=15 wait=sem4>=49
event_semaphore ext_wait=none ext_update=none wait=sem7>=33
matmul moving=[0xa240; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=16 cols=32 accumulate=single row_mask=15 col_mask=15 psum=[0x2001000; 1,16; 0,1; 0,1] wait=sem4>=49 update=sem5++
ldweights weights=[0x56bc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem8>=32
event_semaphore ext_wait=sem8>=32 ext_update=none wait=sem6>=30
matmul moving=[0x9d80; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2001800; 1,16; 0,1; 0,1] wait=sem4>=43 update=sem5++
ldweights weights=[0x5cbc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem9>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=32
matmul moving=[0x9e00; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2001800; 1,16; 0,1; 0,1] wait=sem9>=32 update=sem5++
ldweights weights=[0x58bc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem8>=32
event_semaphore ext_wait=sem8>=32 ext_update=none wait=sem6>=33
event_semaphore ext_wait=none ext_update=none wait=sem7>=26
matmul moving=[0x9d80; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2002000; 1,16; 0,1; 0,1] wait=sem4>=44 update=sem5++
ldweights weights=[0x5ebc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem9>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=32
matmul moving=[0x9e00; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2002000; 1,16; 0,1; 0,1] wait=sem9>=32 update=sem5++
ldweights weights=[0x9dbc; -1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 row_mask=15 col_mask=15 wait=sem6>=30
event_semaphore ext_wait=sem6>=30 ext_update=none wait=sem8>=32
matmul moving=[0x5a40; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 accumulate=start row_mask=15 col_mask=15 psum=[0x2002800; 1,32; 0,1; 0,1] wait=sem4>=46 update=sem5++
ldweights weights=[0x9e3c; -1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 row_mask=15 col_mask=15 wait=sem6>=32
event_semaphore ext_wait=none ext_update=none wait=sem9>=32
matmul moving=[0x6040; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 accumulate=stop row_mask=15 col_mask=15 psum=[0x2002800; 1,32; 0,1; 0,1] wait=sem6>=32 update=sem5++
ldweights weights=[0xa2fc; -1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=16 row_mask=15 col_mask=15 wait=sem4>=53
matmul moving=[0x9680; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=16 accumulate=single row_mask=15 col_mask=15 psum=[0x2003000; 1,16; 0,1; 0,1] wait=sem4>=54 update=sem5++
ldweights weights=[0x98fc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=16 cols=32 row_mask=15 col_mask=15 wait=sem4>=55
event_semaphore ext_wait=none ext_update=none wait=sem7>=38
matmul moving=[0xa480; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=16 cols=32 accumulate=single row_mask=15 col_mask=15 psum=[0x2003800; 1,16; 0,1; 0,1] wait=sem4>=55 update=sem5++
ldweights weights=[0x573c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem8>=32
event_semaphore ext_wait=sem8>=32 ext_update=none wait=sem6>=30
matmul moving=[0x9d80; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2000000; 1,16; 0,1; 0,1] wait=sem4>=49 update=sem5++
ldweights weights=[0x5d3c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem9>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=32
matmul moving=[0x9e00; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000000; 1,16; 0,1; 0,1] wait=sem9>=32 update=sem5++
ldweights weights=[0x593c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem8>=32
event_semaphore ext_wait=sem8>=32 ext_update=none wait=sem6>=36
event_semaphore ext_wait=none ext_update=none wait=sem7>=31
matmul moving=[0x9d80; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2000800; 1,16; 0,1; 0,1] wait=sem4>=50 update=sem5++
ldweights weights=[0x5f3c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem9>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=32
matmul moving=[0x9e00; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000800; 1,16; 0,1; 0,1] wait=sem9>=32 update=sem5++
ldweights weights=[0x9dbc; -1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 row_mask=15 col_mask=15 wait=sem6>=30
event_semaphore ext_wait=sem6>=30 ext_update=none wait=sem8>=32
matmul moving=[0x5ac0; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 accumulate=start row_mask=15 col_mask=15 psum=[0x2001000; 1,32; 0,1; 0,1] wait=sem4>=52 update=sem5++
ldweights weights=[0x9e3c; -1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 row_mask=15 col_mask=15 wait=sem6>=32
event_semaphore ext_wait=none ext_update=none wait=sem9>=32
matmul moving=[0x60c0; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=16 accumulate=stop row_mask=15 col_mask=15 psum=[0x2001000; 1,32; 0,1; 0,1] wait=sem6>=32 update=sem5++
ldweights weights=[0xa53c; -1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=16 row_mask=15 col_mask=15 wait=sem4>=59
matmul moving=[0x9700; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=16 accumulate=single row_mask=15 col_mask=15 psum=[0x2001800; 1,16; 0,1; 0,1] wait=sem4>=60 update=sem5++
ldweights weights=[0x997c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=16 cols=32 row_mask=15 col_mask=15 wait=sem4>=61
event_semaphore ext_wait=none ext_update=none wait=sem7>=43
matmul moving=[0xa6c0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=16 cols=32 accumulate=single row_mask=15 col_mask=15 psum=[0x2002000; 1,16; 0,1; 0,1] wait=sem4>=61 update=sem5++
ldweights weights=[0x633c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem10>=32
event_semaphore ext_wait=none ext_update=none wait=sem4>=55
matmul moving=[0xa040; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2002800; 1,16; 0,1; 0,1] wait=sem10>=32 update=sem5++
ldweights weights=[0x673c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem11>=32
event_semaphore ext_wait=none ext_update=none wait=sem4>=52
matmul moving=[0xa280; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2002800; 1,16; 0,1; 0,1] wait=sem11>=32 update=sem5++
ldweights weights=[0x6b3c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem12>=32
event_semaphore ext_wait=none ext_update=none wait=sem4>=58
matmul moving=[0xa4c0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2002800; 1,16; 0,1; 0,1] wait=sem12>=32 update=sem5++
ldweights weights=[0x6f3c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem13>=32
event_semaphore ext_wait=none ext_update=none wait=sem4>=64
matmul moving=[0xa700; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2002800; 1,16; 0,1; 0,1] wait=sem13>=32 update=sem5++
ldweights weights=[0x653c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem10>=32
event_semaphore ext_wait=sem10>=32 ext_update=none wait=sem4>=56
event_semaphore ext_wait=none ext_update=none wait=sem6>=39
matmul moving=[0xa040; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2003000; 1,16; 0,1; 0,1] wait=sem7>=36 update=sem5++
ldweights weights=[0x693c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem11>=32
event_semaphore ext_wait=none ext_update=none wait=sem4>=52
matmul moving=[0xa280; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2003000; 1,16; 0,1; 0,1] wait=sem11>=32 update=sem5++
ldweights weights=[0x6d3c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem12>=32
event_semaphore ext_wait=none ext_update=none wait=sem4>=58
matmul moving=[0xa4c0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2003000; 1,16; 0,1; 0,1] wait=sem12>=32 update=sem5++
ldweights weights=[0x713c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem13>=32
event_semaphore ext_wait=none ext_update=none wait=sem4>=64
matmul moving=[0xa700; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2003000; 1,16; 0,1; 0,1] wait=sem13>=32 update=sem5++
ldweights weights=[0x9bbc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem7>=1
event_semaphore ext_wait=none ext_update=none wait=sem4>=67
matmul moving=[0xa8c0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2003800; 1,16; 0,1; 0,1] wait=sem7>=1 update=sem5++
ldweights weights=[0x9bbc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem7>=1
event_semaphore ext_wait=none ext_update=none wait=sem4>=68
matmul moving=[0xa900; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2003800; 1,16; 0,1; 0,1] wait=sem7>=1 update=sem5++
ldweights weights=[0x737c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem15>=32
event_semaphore ext_wait=sem15>=32 ext_update=none wait=sem6>=48
matmul moving=[0xa9c0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2000000; 1,16; 0,1; 0,1] wait=sem4>=59 update=sem5++
ldweights weights=[0x7f7c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem16>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=50
matmul moving=[0xaa40; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000000; 1,16; 0,1; 0,1] wait=sem16>=32 update=sem5++
ldweights weights=[0x797c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem15>=32
event_semaphore ext_wait=sem15>=32 ext_update=none wait=sem6>=48
matmul moving=[0xa9c0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2000800; 1,16; 0,1; 0,1] wait=sem4>=60 update=sem5++
ldweights weights=[0x857c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem16>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=50
matmul moving=[0xaa40; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000800; 1,16; 0,1; 0,1] wait=sem16>=32 update=sem5++
ldweights weights=[0x757c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem15>=32
event_semaphore ext_wait=sem15>=32 ext_update=none wait=sem6>=48
matmul moving=[0xa9c0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2001000; 1,16; 0,1; 0,1] wait=sem4>=61 update=sem5++
ldweights weights=[0x817c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem16>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=50
matmul moving=[0xaa40; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2001000; 1,16; 0,1; 0,1] wait=sem16>=32 update=sem5++
ldweights weights=[0x7b7c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem15>=32
event_semaphore ext_wait=sem15>=32 ext_update=none wait=sem6>=48
event_semaphore ext_wait=none ext_update=none wait=sem7>=41
matmul moving=[0xa9c0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2001800; 1,16; 0,1; 0,1] wait=sem4>=62 update=sem5++
ldweights weights=[0x877c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem16>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=50
matmul moving=[0xaa40; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2001800; 1,16; 0,1; 0,1] wait=sem16>=32 update=sem5++
ldweights weights=[0x777c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem15>=32
event_semaphore ext_wait=sem15>=32 ext_update=none wait=sem6>=48
matmul moving=[0xa9c0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2002000; 1,16; 0,1; 0,1] wait=sem4>=64 update=sem5++
ldweights weights=[0x837c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem16>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=50
matmul moving=[0xaa40; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2002000; 1,16; 0,1; 0,1] wait=sem16>=32 update=sem5++
ldweights weights=[0x7d7c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem15>=32
event_semaphore ext_wait=sem15>=32 ext_update=none wait=sem6>=48
matmul moving=[0xa9c0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2002800; 1,16; 0,1; 0,1] wait=sem4>=65 update=sem5++
ldweights weights=[0x897c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem16>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=50
matmul moving=[0xaa40; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2002800; 1,16; 0,1; 0,1] wait=sem16>=32 update=sem5++
ldweights weights=[0x8b7c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem17>=32
event_semaphore ext_wait=sem17>=32 ext_update=none wait=sem6>=51
matmul moving=[0xaac0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2003000; 1,16; 0,1; 0,1] wait=sem4>=66 update=sem5++
ldweights weights=[0x8f7c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem18>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=52
matmul moving=[0xab40; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2003000; 1,16; 0,1; 0,1] wait=sem18>=32 update=sem5++
ldweights weights=[0x937c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem19>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=53
matmul moving=[0xabc0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2003000; 1,16; 0,1; 0,1] wait=sem19>=32 update=sem5++
ldweights weights=[0x8d7c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem17>=32
event_semaphore ext_wait=sem17>=32 ext_update=none wait=sem6>=51
matmul moving=[0xaac0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2003800; 1,16; 0,1; 0,1] wait=sem4>=69 update=sem5++
ldweights weights=[0x917c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem18>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=52
matmul moving=[0xab40; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2003800; 1,16; 0,1; 0,1] wait=sem18>=32 update=sem5++
ldweights weights=[0x957c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem19>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=53
matmul moving=[0xabc0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2003800; 1,16; 0,1; 0,1] wait=sem19>=32 update=sem5++
ldweights weights=[0x9bbc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem7>=1
event_semaphore ext_wait=none ext_update=none wait=sem4>=75
matmul moving=[0x9c80; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2000000; 1,16; 0,1; 0,1] wait=sem7>=1 update=sem5++
ldweights weights=[0x9bbc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem7>=1
event_semaphore ext_wait=none ext_update=none wait=sem4>=76
matmul moving=[0x9cc0; 1,16; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000000; 1,16; 0,1; 0,1] wait=sem7>=1 update=sem5++
