# DVE engine of all-engines: centre each row, xc = x - mean (the mean
# broadcast along the row by a step-0 pattern), into +0x800; semaphore 4.
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=sub partitions=32 in0=[0x0; 1,64; 0,1; 0,1] in1=[0x400; 0,64; 0,1; 0,1] out=[0x800; 1,64; 0,1; 0,1] wait=sem3>=1 update=sem4++
pseudo_inst sub=exit_execution
