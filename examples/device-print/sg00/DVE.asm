# DVE engine of device-print: print x, y = x * 2 + 1 into +0x100, print y.
# Each debug_print copies the tile into DVE's debug ring; the runtime
# hands it to the debug stream after the execution (docs/isa.md §9).
debug_print dtype=float32 partitions=4 input=[0x0; 1,8; 0,1; 0,1] prefix="x" wait=sem1>=1
tensor_scalar op0=mult in_dtype=float32 out_dtype=float32 partitions=4 input=[0x0; 1,8; 0,1; 0,1] output=[0x100; 1,8; 0,1; 0,1] scalar0=2.0 op1=add scalar1=1.0
debug_print dtype=float32 partitions=4 input=[0x100; 1,8; 0,1; 0,1] prefix="y" update=sem3++
pseudo_inst sub=exit_execution
