# PE engine of mlp-bf16: yT chunk jt = W[:, 128jt..128jt+128]^T . xT, accumulating the four
# K tiles in PSUM bank jt (start, mid, mid, stop). Semaphore 5 counts finished chunks.
event_semaphore wait=sem1>=2 ext_wait=sem3>=1   # W landed and xT transposed
ldweights weights=[0x20fe; -1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1000; 1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2000000; 1,128; 0,1; 0,1]
ldweights weights=[0x24fe; -1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1100; 1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2000000; 1,128; 0,1; 0,1]
ldweights weights=[0x28fe; -1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1200; 1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2000000; 1,128; 0,1; 0,1]
ldweights weights=[0x2cfe; -1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1300; 1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000000; 1,128; 0,1; 0,1] update=sem5++
ldweights weights=[0x21fe; -1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1000; 1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2000800; 1,128; 0,1; 0,1]
ldweights weights=[0x25fe; -1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1100; 1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2000800; 1,128; 0,1; 0,1]
ldweights weights=[0x29fe; -1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1200; 1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2000800; 1,128; 0,1; 0,1]
ldweights weights=[0x2dfe; -1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1300; 1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2000800; 1,128; 0,1; 0,1] update=sem5++
ldweights weights=[0x22fe; -1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1000; 1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2001000; 1,128; 0,1; 0,1]
ldweights weights=[0x26fe; -1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1100; 1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2001000; 1,128; 0,1; 0,1]
ldweights weights=[0x2afe; -1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1200; 1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2001000; 1,128; 0,1; 0,1]
ldweights weights=[0x2efe; -1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1300; 1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2001000; 1,128; 0,1; 0,1] update=sem5++
ldweights weights=[0x23fe; -1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1000; 1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2001800; 1,128; 0,1; 0,1]
ldweights weights=[0x27fe; -1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1100; 1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2001800; 1,128; 0,1; 0,1]
ldweights weights=[0x2bfe; -1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1200; 1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 accumulate=mid row_mask=15 col_mask=15 psum=[0x2001800; 1,128; 0,1; 0,1]
ldweights weights=[0x2ffe; -1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 row_mask=15 col_mask=15
matmul moving=[0x1300; 1,128; 0,1; 0,1] dtype=bfloat16 rows=128 cols=128 accumulate=stop row_mask=15 col_mask=15 psum=[0x2001800; 1,128; 0,1; 0,1] update=sem5++
pseudo_inst sub=exit_execution
