# PE engine of all-engines: xcᵀ · xc. The stationary and the moving operand
# are both xc (32 partitions = the contraction, 64 elements): PSUM
# partition m, element n = sum over rows r of xc[r][m] · xc[r][n]; semaphore 5.
ldweights weights=[0x8fc; -1,64; 0,1; 0,1] dtype=float32 rows=32 cols=64 row_mask=15 col_mask=15 wait=sem4>=1
matmul moving=[0x800; 1,64; 0,1; 0,1] dtype=float32 rows=32 cols=64 accumulate=single row_mask=15 col_mask=15 psum=[0x2000000; 1,64; 0,1; 0,1] update=sem5++
pseudo_inst sub=exit_execution
