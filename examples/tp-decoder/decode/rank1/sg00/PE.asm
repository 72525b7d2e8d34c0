prologue_b1
branch_label
ldweights weights=[0x9bfc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem7>=1
event_semaphore ext_wait=none ext_update=none wait=sem4>=1
matmul moving=[0x9f00; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2000000; 1,1; 0,1; 0,1] wait=sem7>=1 update=sem5++
ldweights weights=[0x9bfc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem7>=1
event_semaphore ext_wait=none ext_update=none wait=sem4>=2
matmul moving=[0x9f40; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000000; 1,1; 0,1; 0,1] wait=sem7>=1 update=sem5++
ldweights weights=[0x117c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem12>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=5
matmul moving=[0xa000; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2000800; 1,1; 0,1; 0,1] wait=sem12>=16 update=sem5++
ldweights weights=[0x177c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem13>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=7
matmul moving=[0xa080; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000800; 1,1; 0,1; 0,1] wait=sem13>=16 update=sem5++
ldweights weights=[0x137c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem12>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=5
matmul moving=[0xa000; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2001000; 1,1; 0,1; 0,1] wait=sem12>=16 update=sem5++
ldweights weights=[0x197c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem13>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=7
matmul moving=[0xa080; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2001000; 1,1; 0,1; 0,1] wait=sem13>=16 update=sem5++
ldweights weights=[0xa000; 0,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem6>=5
event_semaphore ext_wait=none ext_update=none wait=sem12>=16
matmul moving=[0x1500; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2001800; 1,32; 0,1; 0,1] wait=sem6>=5 update=sem5++
ldweights weights=[0xa080; 0,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem6>=7
event_semaphore ext_wait=none ext_update=none wait=sem13>=16
matmul moving=[0x1b00; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2001800; 1,32; 0,1; 0,1] wait=sem6>=7 update=sem5++
ldweights weights=[0xa0c0; -1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=1 row_mask=15 col_mask=15 wait=sem4>=4
event_semaphore ext_wait=none ext_update=none wait=sem6>=8
matmul moving=[0x5140; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=1 accumulate=single row_mask=15 col_mask=15 psum=[0x2002000; 1,32; 0,1; 0,1] wait=sem4>=4 update=sem5++
ldweights weights=[0x53bc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=32 row_mask=15 col_mask=15 wait=sem6>=9
event_semaphore ext_wait=none ext_update=none wait=sem7>=7
matmul moving=[0xa300; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=32 accumulate=single row_mask=15 col_mask=15 psum=[0x2002800; 1,1; 0,1; 0,1] wait=sem6>=9 update=sem5++
ldweights weights=[0x11fc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem12>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=5
matmul moving=[0xa000; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2003000; 1,1; 0,1; 0,1] wait=sem12>=16 update=sem5++
ldweights weights=[0x17fc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem13>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=7
matmul moving=[0xa080; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2003000; 1,1; 0,1; 0,1] wait=sem13>=16 update=sem5++
ldweights weights=[0x13fc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem12>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=5
matmul moving=[0xa000; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2003800; 1,1; 0,1; 0,1] wait=sem12>=16 update=sem5++
ldweights weights=[0x19fc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem13>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=7
matmul moving=[0xa080; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2003800; 1,1; 0,1; 0,1] wait=sem13>=16 update=sem5++
ldweights weights=[0xa000; 0,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem6>=5
event_semaphore ext_wait=sem6>=5 ext_update=none wait=sem12>=16
matmul moving=[0x1580; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2000000; 1,32; 0,1; 0,1] wait=sem4>=3 update=sem5++
ldweights weights=[0xa080; 0,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem6>=7
event_semaphore ext_wait=none ext_update=none wait=sem13>=16
matmul moving=[0x1b80; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000000; 1,32; 0,1; 0,1] wait=sem6>=7 update=sem5++
ldweights weights=[0xa380; -1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=1 row_mask=15 col_mask=15 wait=sem4>=8
event_semaphore ext_wait=none ext_update=none wait=sem6>=13
matmul moving=[0x51c0; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=1 accumulate=single row_mask=15 col_mask=15 psum=[0x2000800; 1,32; 0,1; 0,1] wait=sem4>=8 update=sem5++
ldweights weights=[0x543c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=32 row_mask=15 col_mask=15 wait=sem6>=14
event_semaphore ext_wait=none ext_update=none wait=sem7>=10
matmul moving=[0xa5c0; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=32 accumulate=single row_mask=15 col_mask=15 psum=[0x2001000; 1,1; 0,1; 0,1] wait=sem6>=14 update=sem5++
ldweights weights=[0x127c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem12>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=9
matmul moving=[0xa000; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2001800; 1,1; 0,1; 0,1] wait=sem12>=16 update=sem5++
ldweights weights=[0x187c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem13>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=7
matmul moving=[0xa080; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2001800; 1,1; 0,1; 0,1] wait=sem13>=16 update=sem5++
ldweights weights=[0x147c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem12>=16
event_semaphore ext_wait=sem12>=16 ext_update=none wait=sem6>=10
event_semaphore ext_wait=none ext_update=none wait=sem7>=5
matmul moving=[0xa000; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2002000; 1,1; 0,1; 0,1] wait=sem4>=5 update=sem5++
ldweights weights=[0x1a7c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem13>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=7
matmul moving=[0xa080; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2002000; 1,1; 0,1; 0,1] wait=sem13>=16 update=sem5++
ldweights weights=[0xa000; 0,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem6>=5
event_semaphore ext_wait=sem6>=5 ext_update=none wait=sem12>=16
matmul moving=[0x1600; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2002800; 1,32; 0,1; 0,1] wait=sem4>=7 update=sem5++
ldweights weights=[0xa080; 0,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem6>=7
event_semaphore ext_wait=none ext_update=none wait=sem13>=16
matmul moving=[0x1c00; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2002800; 1,32; 0,1; 0,1] wait=sem6>=7 update=sem5++
ldweights weights=[0xa640; -1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=1 row_mask=15 col_mask=15 wait=sem4>=12
event_semaphore ext_wait=none ext_update=none wait=sem6>=18
matmul moving=[0x5240; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=1 accumulate=single row_mask=15 col_mask=15 psum=[0x2003000; 1,32; 0,1; 0,1] wait=sem4>=12 update=sem5++
ldweights weights=[0x54bc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=32 row_mask=15 col_mask=15 wait=sem6>=19
event_semaphore ext_wait=none ext_update=none wait=sem7>=13
matmul moving=[0xa880; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=32 accumulate=single row_mask=15 col_mask=15 psum=[0x2003800; 1,1; 0,1; 0,1] wait=sem6>=19 update=sem5++
ldweights weights=[0x12fc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem12>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=14
matmul moving=[0xa000; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2000000; 1,1; 0,1; 0,1] wait=sem12>=16 update=sem5++
ldweights weights=[0x18fc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem13>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=7
matmul moving=[0xa080; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000000; 1,1; 0,1; 0,1] wait=sem13>=16 update=sem5++
ldweights weights=[0x14fc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem12>=16
event_semaphore ext_wait=sem12>=16 ext_update=none wait=sem6>=15
event_semaphore ext_wait=none ext_update=none wait=sem7>=8
matmul moving=[0xa000; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2000800; 1,1; 0,1; 0,1] wait=sem4>=9 update=sem5++
ldweights weights=[0x1afc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem13>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=7
matmul moving=[0xa080; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000800; 1,1; 0,1; 0,1] wait=sem13>=16 update=sem5++
ldweights weights=[0xa000; 0,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem6>=5
event_semaphore ext_wait=sem6>=5 ext_update=none wait=sem12>=16
matmul moving=[0x1680; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2001000; 1,32; 0,1; 0,1] wait=sem4>=11 update=sem5++
ldweights weights=[0xa080; 0,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem6>=7
event_semaphore ext_wait=none ext_update=none wait=sem13>=16
matmul moving=[0x1c80; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2001000; 1,32; 0,1; 0,1] wait=sem6>=7 update=sem5++
ldweights weights=[0xa900; -1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=1 row_mask=15 col_mask=15 wait=sem4>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=23
matmul moving=[0x52c0; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=1 accumulate=single row_mask=15 col_mask=15 psum=[0x2001800; 1,32; 0,1; 0,1] wait=sem4>=16 update=sem5++
ldweights weights=[0x553c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=32 row_mask=15 col_mask=15 wait=sem6>=24
event_semaphore ext_wait=none ext_update=none wait=sem7>=16
matmul moving=[0xab40; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=32 accumulate=single row_mask=15 col_mask=15 psum=[0x2002000; 1,1; 0,1; 0,1] wait=sem6>=24 update=sem5++
ldweights weights=[0x1efc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem14>=16
event_semaphore ext_wait=sem14>=16 ext_update=none wait=sem4>=7
matmul moving=[0xa340; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2002800; 1,1; 0,1; 0,1] wait=sem6>=19 update=sem5++
ldweights weights=[0x22fc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem15>=16
event_semaphore ext_wait=none ext_update=none wait=sem4>=11
matmul moving=[0xa600; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2002800; 1,1; 0,1; 0,1] wait=sem15>=16 update=sem5++
ldweights weights=[0x26fc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem16>=16
event_semaphore ext_wait=none ext_update=none wait=sem4>=15
matmul moving=[0xa8c0; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2002800; 1,1; 0,1; 0,1] wait=sem16>=16 update=sem5++
ldweights weights=[0x2afc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem17>=16
event_semaphore ext_wait=none ext_update=none wait=sem4>=19
matmul moving=[0xab80; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2002800; 1,1; 0,1; 0,1] wait=sem17>=16 update=sem5++
ldweights weights=[0x20fc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem14>=16
event_semaphore ext_wait=sem14>=16 ext_update=none wait=sem4>=13
event_semaphore ext_wait=none ext_update=none wait=sem6>=20
matmul moving=[0xa340; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2003000; 1,1; 0,1; 0,1] wait=sem7>=11 update=sem5++
ldweights weights=[0x24fc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem15>=16
event_semaphore ext_wait=none ext_update=none wait=sem4>=11
matmul moving=[0xa600; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2003000; 1,1; 0,1; 0,1] wait=sem15>=16 update=sem5++
ldweights weights=[0x28fc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem16>=16
event_semaphore ext_wait=none ext_update=none wait=sem4>=15
matmul moving=[0xa8c0; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2003000; 1,1; 0,1; 0,1] wait=sem16>=16 update=sem5++
ldweights weights=[0x2cfc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem17>=16
event_semaphore ext_wait=none ext_update=none wait=sem4>=19
matmul moving=[0xab80; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2003000; 1,1; 0,1; 0,1] wait=sem17>=16 update=sem5++
ldweights weights=[0x9bfc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem7>=1
event_semaphore ext_wait=none ext_update=none wait=sem4>=22
matmul moving=[0xad40; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2003800; 1,1; 0,1; 0,1] wait=sem7>=1 update=sem5++
ldweights weights=[0x9bfc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem7>=1
event_semaphore ext_wait=none ext_update=none wait=sem4>=23
matmul moving=[0xad80; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2003800; 1,1; 0,1; 0,1] wait=sem7>=1 update=sem5++
ldweights weights=[0x2f3c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem19>=16
event_semaphore ext_wait=sem19>=16 ext_update=none wait=sem6>=31
matmul moving=[0xae40; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2000000; 1,1; 0,1; 0,1] wait=sem4>=16 update=sem5++
ldweights weights=[0x3b3c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem20>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=33
matmul moving=[0xaec0; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000000; 1,1; 0,1; 0,1] wait=sem20>=16 update=sem5++
ldweights weights=[0x353c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem19>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=31
matmul moving=[0xae40; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2000800; 1,1; 0,1; 0,1] wait=sem19>=16 update=sem5++
ldweights weights=[0x413c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem20>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=33
matmul moving=[0xaec0; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000800; 1,1; 0,1; 0,1] wait=sem20>=16 update=sem5++
ldweights weights=[0x313c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem19>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=31
matmul moving=[0xae40; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2001000; 1,1; 0,1; 0,1] wait=sem19>=16 update=sem5++
ldweights weights=[0x3d3c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem20>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=33
matmul moving=[0xaec0; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2001000; 1,1; 0,1; 0,1] wait=sem20>=16 update=sem5++
ldweights weights=[0x373c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem19>=16
event_semaphore ext_wait=sem19>=16 ext_update=none wait=sem6>=31
event_semaphore ext_wait=none ext_update=none wait=sem7>=14
matmul moving=[0xae40; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2001800; 1,1; 0,1; 0,1] wait=sem4>=17 update=sem5++
ldweights weights=[0x433c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem20>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=33
matmul moving=[0xaec0; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2001800; 1,1; 0,1; 0,1] wait=sem20>=16 update=sem5++
ldweights weights=[0x333c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem19>=16
event_semaphore ext_wait=sem19>=16 ext_update=none wait=sem6>=31
matmul moving=[0xae40; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2002000; 1,1; 0,1; 0,1] wait=sem4>=19 update=sem5++
ldweights weights=[0x3f3c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem20>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=33
matmul moving=[0xaec0; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2002000; 1,1; 0,1; 0,1] wait=sem20>=16 update=sem5++
ldweights weights=[0x393c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem19>=16
event_semaphore ext_wait=sem19>=16 ext_update=none wait=sem6>=31
matmul moving=[0xae40; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2002800; 1,1; 0,1; 0,1] wait=sem4>=20 update=sem5++
ldweights weights=[0x453c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem20>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=33
matmul moving=[0xaec0; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2002800; 1,1; 0,1; 0,1] wait=sem20>=16 update=sem5++
ldweights weights=[0x473c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem21>=16
event_semaphore ext_wait=sem21>=16 ext_update=none wait=sem6>=34
matmul moving=[0xaf40; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2003000; 1,1; 0,1; 0,1] wait=sem4>=21 update=sem5++
ldweights weights=[0x4b3c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem22>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=35
matmul moving=[0xafc0; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2003000; 1,1; 0,1; 0,1] wait=sem22>=16 update=sem5++
ldweights weights=[0x4f3c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem23>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=36
matmul moving=[0xb040; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2003000; 1,1; 0,1; 0,1] wait=sem23>=16 update=sem5++
ldweights weights=[0x493c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem21>=16
event_semaphore ext_wait=sem21>=16 ext_update=none wait=sem6>=34
matmul moving=[0xaf40; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2003800; 1,1; 0,1; 0,1] wait=sem4>=24 update=sem5++
ldweights weights=[0x4d3c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem22>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=35
matmul moving=[0xafc0; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2003800; 1,1; 0,1; 0,1] wait=sem22>=16 update=sem5++
ldweights weights=[0x513c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem23>=16
event_semaphore ext_wait=none ext_update=none wait=sem6>=36
matmul moving=[0xb040; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2003800; 1,1; 0,1; 0,1] wait=sem23>=16 update=sem5++
ldweights weights=[0x9bfc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem7>=1
event_semaphore ext_wait=none ext_update=none wait=sem4>=30
matmul moving=[0x9f00; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2000000; 1,1; 0,1; 0,1] wait=sem7>=1 update=sem5++
ldweights weights=[0x9bfc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem7>=1
event_semaphore ext_wait=none ext_update=none wait=sem4>=31
matmul moving=[0x9f40; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000000; 1,1; 0,1; 0,1] wait=sem7>=1 update=sem5++
ldweights weights=[0x55fc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem17>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=40
matmul moving=[0xa000; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2000800; 1,1; 0,1; 0,1] wait=sem17>=32 update=sem5++
ldweights weights=[0x5bfc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem18>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=42
matmul moving=[0xa080; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000800; 1,1; 0,1; 0,1] wait=sem18>=32 update=sem5++
ldweights weights=[0x57fc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem17>=32
event_semaphore ext_wait=sem17>=32 ext_update=none wait=sem6>=40
matmul moving=[0xa000; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2001000; 1,1; 0,1; 0,1] wait=sem4>=26 update=sem5++
ldweights weights=[0x5dfc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem18>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=42
matmul moving=[0xa080; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2001000; 1,1; 0,1; 0,1] wait=sem18>=32 update=sem5++
ldweights weights=[0xa000; 0,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem6>=40
event_semaphore ext_wait=none ext_update=none wait=sem17>=32
matmul moving=[0x5980; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2001800; 1,32; 0,1; 0,1] wait=sem6>=40 update=sem5++
ldweights weights=[0xa080; 0,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem6>=42
event_semaphore ext_wait=none ext_update=none wait=sem18>=32
matmul moving=[0x5f80; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2001800; 1,32; 0,1; 0,1] wait=sem6>=42 update=sem5++
ldweights weights=[0xa0c0; -1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=1 row_mask=15 col_mask=15 wait=sem4>=33
event_semaphore ext_wait=none ext_update=none wait=sem6>=43
matmul moving=[0x95c0; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=1 accumulate=single row_mask=15 col_mask=15 psum=[0x2002000; 1,32; 0,1; 0,1] wait=sem4>=33 update=sem5++
ldweights weights=[0x983c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=32 row_mask=15 col_mask=15 wait=sem6>=44
event_semaphore ext_wait=none ext_update=none wait=sem7>=19
matmul moving=[0xa300; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=32 accumulate=single row_mask=15 col_mask=15 psum=[0x2002800; 1,1; 0,1; 0,1] wait=sem6>=44 update=sem5++
ldweights weights=[0x567c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem17>=32
event_semaphore ext_wait=sem17>=32 ext_update=none wait=sem6>=40
matmul moving=[0xa000; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2003000; 1,1; 0,1; 0,1] wait=sem4>=28 update=sem5++
ldweights weights=[0x5c7c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem18>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=42
matmul moving=[0xa080; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2003000; 1,1; 0,1; 0,1] wait=sem18>=32 update=sem5++
ldweights weights=[0x587c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem17>=32
event_semaphore ext_wait=sem17>=32 ext_update=none wait=sem6>=40
matmul moving=[0xa000; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2003800; 1,1; 0,1; 0,1] wait=sem4>=29 update=sem5++
ldweights weights=[0x5e7c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem18>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=42
matmul moving=[0xa080; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2003800; 1,1; 0,1; 0,1] wait=sem18>=32 update=sem5++
ldweights weights=[0xa000; 0,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem6>=40
event_semaphore ext_wait=sem6>=40 ext_update=none wait=sem17>=32
matmul moving=[0x5a00; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2000000; 1,32; 0,1; 0,1] wait=sem4>=32 update=sem5++
ldweights weights=[0xa080; 0,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem6>=42
event_semaphore ext_wait=none ext_update=none wait=sem18>=32
matmul moving=[0x6000; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000000; 1,32; 0,1; 0,1] wait=sem6>=42 update=sem5++
ldweights weights=[0xa380; -1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=1 row_mask=15 col_mask=15 wait=sem4>=37
event_semaphore ext_wait=none ext_update=none wait=sem6>=48
matmul moving=[0x9640; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=1 accumulate=single row_mask=15 col_mask=15 psum=[0x2000800; 1,32; 0,1; 0,1] wait=sem4>=37 update=sem5++
ldweights weights=[0x98bc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=32 row_mask=15 col_mask=15 wait=sem6>=49
event_semaphore ext_wait=none ext_update=none wait=sem7>=22
matmul moving=[0xa5c0; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=32 accumulate=single row_mask=15 col_mask=15 psum=[0x2001000; 1,1; 0,1; 0,1] wait=sem6>=49 update=sem5++
ldweights weights=[0x56fc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem17>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=44
matmul moving=[0xa000; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2001800; 1,1; 0,1; 0,1] wait=sem17>=32 update=sem5++
ldweights weights=[0x5cfc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem18>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=42
matmul moving=[0xa080; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2001800; 1,1; 0,1; 0,1] wait=sem18>=32 update=sem5++
ldweights weights=[0x58fc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem17>=32
event_semaphore ext_wait=sem17>=32 ext_update=none wait=sem6>=45
event_semaphore ext_wait=none ext_update=none wait=sem7>=17
matmul moving=[0xa000; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2002000; 1,1; 0,1; 0,1] wait=sem4>=34 update=sem5++
ldweights weights=[0x5efc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem18>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=42
matmul moving=[0xa080; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2002000; 1,1; 0,1; 0,1] wait=sem18>=32 update=sem5++
ldweights weights=[0xa000; 0,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem6>=40
event_semaphore ext_wait=sem6>=40 ext_update=none wait=sem17>=32
matmul moving=[0x5a80; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2002800; 1,32; 0,1; 0,1] wait=sem4>=36 update=sem5++
ldweights weights=[0xa080; 0,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem6>=42
event_semaphore ext_wait=none ext_update=none wait=sem18>=32
matmul moving=[0x6080; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2002800; 1,32; 0,1; 0,1] wait=sem6>=42 update=sem5++
ldweights weights=[0xa640; -1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=1 row_mask=15 col_mask=15 wait=sem4>=41
event_semaphore ext_wait=none ext_update=none wait=sem6>=53
matmul moving=[0x96c0; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=1 accumulate=single row_mask=15 col_mask=15 psum=[0x2003000; 1,32; 0,1; 0,1] wait=sem4>=41 update=sem5++
ldweights weights=[0x993c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=32 row_mask=15 col_mask=15 wait=sem6>=54
event_semaphore ext_wait=none ext_update=none wait=sem7>=25
matmul moving=[0xa880; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=32 accumulate=single row_mask=15 col_mask=15 psum=[0x2003800; 1,1; 0,1; 0,1] wait=sem6>=54 update=sem5++
ldweights weights=[0x577c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem17>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=49
matmul moving=[0xa000; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2000000; 1,1; 0,1; 0,1] wait=sem17>=32 update=sem5++
ldweights weights=[0x5d7c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem18>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=42
matmul moving=[0xa080; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000000; 1,1; 0,1; 0,1] wait=sem18>=32 update=sem5++
ldweights weights=[0x597c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem17>=32
event_semaphore ext_wait=sem17>=32 ext_update=none wait=sem6>=50
event_semaphore ext_wait=none ext_update=none wait=sem7>=20
matmul moving=[0xa000; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2000800; 1,1; 0,1; 0,1] wait=sem4>=38 update=sem5++
ldweights weights=[0x5f7c; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem18>=32
event_semaphore ext_wait=none ext_update=none wait=sem6>=42
matmul moving=[0xa080; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000800; 1,1; 0,1; 0,1] wait=sem18>=32 update=sem5++
ldweights weights=[0xa000; 0,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem6>=40
event_semaphore ext_wait=sem6>=40 ext_update=none wait=sem17>=32
matmul moving=[0x5b00; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=start row_mask=15 col_mask=15 psum=[0x2001000; 1,32; 0,1; 0,1] wait=sem4>=40 update=sem5++
ldweights weights=[0xa080; 0,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 row_mask=15 col_mask=15 wait=sem6>=42
event_semaphore ext_wait=none ext_update=none wait=sem18>=32
matmul moving=[0x6100; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=32 accumulate=stop row_mask=15 col_mask=15 psum=[0x2001000; 1,32; 0,1; 0,1] wait=sem6>=42 update=sem5++
ldweights weights=[0xa900; -1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=1 row_mask=15 col_mask=15 wait=sem4>=45
event_semaphore ext_wait=none ext_update=none wait=sem6>=58
matmul moving=[0x9740; 1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=1 accumulate=single row_mask=15 col_mask=15 psum=[0x2001800; 1,32; 0,1; 0,1] wait=sem4>=45 update=sem5++
ldweights weights=[0x99bc; -1,32; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=32 row_mask=15 col_mask=15 wait=sem6>=59
event_semaphore ext_wait=none ext_update=none wait=sem7>=28
matmul moving=[0xab40; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=32 accumulate=single row_mask=15 col_mask=15 psum=[0x2002000; 1,1; 0,1; 0,1] wait=sem6>=59 update=sem5++
ldweights weights=[0x637c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem19>=32
event_semaphore ext_wait=sem19>=32 ext_update=none wait=sem4>=36
matmul moving=[0xa340; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2002800; 1,1; 0,1; 0,1] wait=sem6>=54 update=sem5++
ldweights weights=[0x677c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem20>=32
event_semaphore ext_wait=none ext_update=none wait=sem4>=40
matmul moving=[0xa600; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2002800; 1,1; 0,1; 0,1] wait=sem20>=32 update=sem5++
ldweights weights=[0x6b7c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem21>=32
event_semaphore ext_wait=none ext_update=none wait=sem4>=44
matmul moving=[0xa8c0; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2002800; 1,1; 0,1; 0,1] wait=sem21>=32 update=sem5++
ldweights weights=[0x6f7c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem22>=32
event_semaphore ext_wait=none ext_update=none wait=sem4>=48
matmul moving=[0xab80; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2002800; 1,1; 0,1; 0,1] wait=sem22>=32 update=sem5++
ldweights weights=[0x657c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem19>=32
event_semaphore ext_wait=sem19>=32 ext_update=none wait=sem4>=42
event_semaphore ext_wait=none ext_update=none wait=sem6>=55
matmul moving=[0xa340; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2003000; 1,1; 0,1; 0,1] wait=sem7>=23 update=sem5++
ldweights weights=[0x697c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem20>=32
event_semaphore ext_wait=none ext_update=none wait=sem4>=40
matmul moving=[0xa600; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2003000; 1,1; 0,1; 0,1] wait=sem20>=32 update=sem5++
ldweights weights=[0x6d7c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem21>=32
event_semaphore ext_wait=none ext_update=none wait=sem4>=44
matmul moving=[0xa8c0; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2003000; 1,1; 0,1; 0,1] wait=sem21>=32 update=sem5++
ldweights weights=[0x717c; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 row_mask=15 col_mask=15 wait=sem22>=32
event_semaphore ext_wait=none ext_update=none wait=sem4>=48
matmul moving=[0xab80; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=32 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2003000; 1,1; 0,1; 0,1] wait=sem22>=32 update=sem5++
ldweights weights=[0x9bfc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem7>=1
event_semaphore ext_wait=none ext_update=none wait=sem4>=51
matmul moving=[0xad40; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2003800; 1,1; 0,1; 0,1] wait=sem7>=1 update=sem5++
ldweights weights=[0x9bfc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem7>=1
event_semaphore ext_wait=none ext_update=none wait=sem4>=52
matmul moving=[0xad80; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2003800; 1,1; 0,1; 0,1] wait=sem7>=1 update=sem5++
ldweights weights=[0x73bc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem8>=48
event_semaphore ext_wait=sem8>=48 ext_update=none wait=sem6>=66
matmul moving=[0xae40; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2000000; 1,1; 0,1; 0,1] wait=sem4>=45 update=sem5++
ldweights weights=[0x7fbc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem9>=48
event_semaphore ext_wait=none ext_update=none wait=sem6>=68
matmul moving=[0xaec0; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000000; 1,1; 0,1; 0,1] wait=sem9>=48 update=sem5++
ldweights weights=[0x79bc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem8>=48
event_semaphore ext_wait=none ext_update=none wait=sem6>=66
matmul moving=[0xae40; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2000800; 1,1; 0,1; 0,1] wait=sem8>=48 update=sem5++
ldweights weights=[0x85bc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem9>=48
event_semaphore ext_wait=none ext_update=none wait=sem6>=68
matmul moving=[0xaec0; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000800; 1,1; 0,1; 0,1] wait=sem9>=48 update=sem5++
ldweights weights=[0x75bc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem8>=48
event_semaphore ext_wait=none ext_update=none wait=sem6>=66
matmul moving=[0xae40; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2001000; 1,1; 0,1; 0,1] wait=sem8>=48 update=sem5++
ldweights weights=[0x81bc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem9>=48
event_semaphore ext_wait=none ext_update=none wait=sem6>=68
matmul moving=[0xaec0; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2001000; 1,1; 0,1; 0,1] wait=sem9>=48 update=sem5++
ldweights weights=[0x7bbc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem8>=48
event_semaphore ext_wait=sem8>=48 ext_update=none wait=sem6>=66
event_semaphore ext_wait=none ext_update=none wait=sem7>=26
matmul moving=[0xae40; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2001800; 1,1; 0,1; 0,1] wait=sem4>=46 update=sem5++
ldweights weights=[0x87bc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem9>=48
event_semaphore ext_wait=none ext_update=none wait=sem6>=68
matmul moving=[0xaec0; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2001800; 1,1; 0,1; 0,1] wait=sem9>=48 update=sem5++
ldweights weights=[0x77bc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem8>=48
event_semaphore ext_wait=sem8>=48 ext_update=none wait=sem6>=66
matmul moving=[0xae40; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2002000; 1,1; 0,1; 0,1] wait=sem4>=48 update=sem5++
ldweights weights=[0x83bc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem9>=48
event_semaphore ext_wait=none ext_update=none wait=sem6>=68
matmul moving=[0xaec0; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2002000; 1,1; 0,1; 0,1] wait=sem9>=48 update=sem5++
ldweights weights=[0x7dbc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem8>=48
event_semaphore ext_wait=sem8>=48 ext_update=none wait=sem6>=66
matmul moving=[0xae40; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2002800; 1,1; 0,1; 0,1] wait=sem4>=49 update=sem5++
ldweights weights=[0x89bc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem9>=48
event_semaphore ext_wait=none ext_update=none wait=sem6>=68
matmul moving=[0xaec0; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2002800; 1,1; 0,1; 0,1] wait=sem9>=48 update=sem5++
ldweights weights=[0x8bbc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem10>=48
event_semaphore ext_wait=sem10>=48 ext_update=none wait=sem6>=69
matmul moving=[0xaf40; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2003000; 1,1; 0,1; 0,1] wait=sem4>=50 update=sem5++
ldweights weights=[0x8fbc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem11>=48
event_semaphore ext_wait=none ext_update=none wait=sem6>=70
matmul moving=[0xafc0; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2003000; 1,1; 0,1; 0,1] wait=sem11>=48 update=sem5++
ldweights weights=[0x93bc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem12>=48
event_semaphore ext_wait=none ext_update=none wait=sem6>=71
matmul moving=[0xb040; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2003000; 1,1; 0,1; 0,1] wait=sem12>=48 update=sem5++
ldweights weights=[0x8dbc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem10>=48
event_semaphore ext_wait=sem10>=48 ext_update=none wait=sem6>=69
matmul moving=[0xaf40; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2003800; 1,1; 0,1; 0,1] wait=sem4>=53 update=sem5++
ldweights weights=[0x91bc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem11>=48
event_semaphore ext_wait=none ext_update=none wait=sem6>=70
matmul moving=[0xafc0; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2003800; 1,1; 0,1; 0,1] wait=sem11>=48 update=sem5++
ldweights weights=[0x95bc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem12>=48
event_semaphore ext_wait=none ext_update=none wait=sem6>=71
matmul moving=[0xb040; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2003800; 1,1; 0,1; 0,1] wait=sem12>=48 update=sem5++
ldweights weights=[0x9bfc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem7>=1
event_semaphore ext_wait=none ext_update=none wait=sem4>=59
matmul moving=[0x9f00; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2000000; 1,1; 0,1; 0,1] wait=sem7>=1 update=sem5++
ldweights weights=[0x9bfc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem7>=1
event_semaphore ext_wait=none ext_update=none wait=sem4>=60
matmul moving=[0x9f40; 1,1; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000000; 1,1; 0,1; 0,1] wait=sem7>=1 update=sem5++
