prologue_b1
branch_label
event_semaphore ext_wait=none ext_update=none wait=sem9>=16
ldweights weights=[0x19fc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem7>=1
matmul moving=[0x1400; 1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2000000; 1,128; 0,1; 0,1]
event_semaphore ext_wait=none ext_update=none wait=sem10>=16
ldweights weights=[0x1dfc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem7>=2
matmul moving=[0x1600; 1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000000; 1,128; 0,1; 0,1] update=sem5++
ldweights weights=[0x1bfc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1400; 1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2000800; 1,128; 0,1; 0,1]
ldweights weights=[0x1ffc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1600; 1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000800; 1,128; 0,1; 0,1] update=sem5++
event_semaphore ext_wait=none ext_update=none wait=sem12>=16
ldweights weights=[0x26fc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem4>=2
matmul moving=[0x2100; 1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2000000; 1,128; 0,1; 0,1]
ldweights weights=[0x2afc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15 wait=sem13>=16
matmul moving=[0x2300; 1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000000; 1,128; 0,1; 0,1] update=sem5++
ldweights weights=[0x28fc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x2100; 1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2000800; 1,128; 0,1; 0,1]
ldweights weights=[0x2cfc; -1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x2300; 1,128; 0,1; 0,1] dtype=float32 transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000800; 1,128; 0,1; 0,1] update=sem5++
