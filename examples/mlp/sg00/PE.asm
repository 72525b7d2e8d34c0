# PE engine of mlp: yT chunk jt = W[:, 128jt..128jt+128]^T . xT, accumulating the four
# K tiles in PSUM bank jt (start, mid, mid, stop). Semaphore 5 counts finished chunks.
event_semaphore wait=sem1>=2 ext_wait=sem3>=1   # W landed and xT transposed
ldweights weights=[0x21fc; -1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1000; 1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2000000; 1,128; 0,1; 0,1]
ldweights weights=[0x29fc; -1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1200; 1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2000000; 1,128; 0,1; 0,1]
ldweights weights=[0x31fc; -1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1400; 1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2000000; 1,128; 0,1; 0,1]
ldweights weights=[0x39fc; -1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1600; 1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000000; 1,128; 0,1; 0,1] update=sem5++
ldweights weights=[0x23fc; -1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1000; 1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2000800; 1,128; 0,1; 0,1]
ldweights weights=[0x2bfc; -1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1200; 1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2000800; 1,128; 0,1; 0,1]
ldweights weights=[0x33fc; -1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1400; 1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2000800; 1,128; 0,1; 0,1]
ldweights weights=[0x3bfc; -1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1600; 1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000800; 1,128; 0,1; 0,1] update=sem5++
ldweights weights=[0x25fc; -1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1000; 1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2001000; 1,128; 0,1; 0,1]
ldweights weights=[0x2dfc; -1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1200; 1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2001000; 1,128; 0,1; 0,1]
ldweights weights=[0x35fc; -1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1400; 1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2001000; 1,128; 0,1; 0,1]
ldweights weights=[0x3dfc; -1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1600; 1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2001000; 1,128; 0,1; 0,1] update=sem5++
ldweights weights=[0x27fc; -1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1000; 1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2001800; 1,128; 0,1; 0,1]
ldweights weights=[0x2ffc; -1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1200; 1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2001800; 1,128; 0,1; 0,1]
ldweights weights=[0x37fc; -1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1400; 1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2001800; 1,128; 0,1; 0,1]
ldweights weights=[0x3ffc; -1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1600; 1,128; 0,1; 0,1] dtype=float32 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2001800; 1,128; 0,1; 0,1] update=sem5++
pseudo_inst sub=exit_execution
