prologue_b1
branch_label
tensor_scalar op0=is_gt in_dtype=float32 out_dtype=float32 partitions=16 input=[0x9c40; 1,16; 0,1; 0,1] output=[0x9c00; 1,16; 0,1; 0,1] scalar0=0.0 reverse0=false op1=bypass reverse1=false scalar1=0.0 wait=sem7>=3 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem8>=16
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0x1000; 1,16; 0,1; 0,1] in1=[0x9d00; 1,16; 0,1; 0,1] out=[0x9d40; 1,16; 0,1; 0,1] wait=sem4>=3 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0x9d40; 1,16; 0,1; 0,1] in1=[0x1080; 0,16; 0,1; 0,1] out=[0x9d80; 1,16; 0,1; 0,1] wait=sem10>=16 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem9>=16
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0x1040; 1,16; 0,1; 0,1] in1=[0x9d00; 1,16; 0,1; 0,1] out=[0x9dc0; 1,16; 0,1; 0,1] wait=sem4>=3 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0x9dc0; 1,16; 0,1; 0,1] in1=[0x1084; 0,16; 0,1; 0,1] out=[0x9e00; 1,16; 0,1; 0,1] wait=sem10>=16 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem7>=2
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=16 mask=[0x9c00; 1,16; 0,1; 0,1] src=[0x9bc0; 1,16; 0,1; 0,1] dst=[0x2002000; 1,16; 0,1; 0,1] wait=sem5>=9 update=sem6++
tensor_scalar op0=mult in_dtype=float32 out_dtype=float32 partitions=16 input=[0x9e80; 1,1; 0,1; 0,1] output=[0x9ec0; 1,1; 0,1; 0,1] scalar0=-0.17677669 reverse0=false op1=bypass reverse1=false scalar1=0.0 wait=sem7>=6 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=16 in0=[0x9f00; 1,16; 0,1; 0,1] in1=[0x9f80; 0,16; 0,1; 0,1] out=[0x9fc0; 1,16; 0,1; 0,1] wait=sem4>=8 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem7>=2
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=16 mask=[0x9c00; 1,16; 0,1; 0,1] src=[0x9bc0; 1,16; 0,1; 0,1] dst=[0x2000800; 1,16; 0,1; 0,1] wait=sem5>=17 update=sem6++
tensor_scalar op0=mult in_dtype=float32 out_dtype=float32 partitions=16 input=[0xa0c0; 1,1; 0,1; 0,1] output=[0xa100; 1,1; 0,1; 0,1] scalar0=-0.17677669 reverse0=false op1=bypass reverse1=false scalar1=0.0 wait=sem7>=11 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=16 in0=[0xa140; 1,16; 0,1; 0,1] in1=[0xa1c0; 0,16; 0,1; 0,1] out=[0xa200; 1,16; 0,1; 0,1] wait=sem4>=14 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem7>=2
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=16 mask=[0x9c00; 1,16; 0,1; 0,1] src=[0x9bc0; 1,16; 0,1; 0,1] dst=[0x2003000; 1,16; 0,1; 0,1] wait=sem5>=25 update=sem6++
tensor_scalar op0=mult in_dtype=float32 out_dtype=float32 partitions=16 input=[0xa300; 1,1; 0,1; 0,1] output=[0xa340; 1,1; 0,1; 0,1] scalar0=-0.17677669 reverse0=false op1=bypass reverse1=false scalar1=0.0 wait=sem7>=16 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=16 in0=[0xa380; 1,16; 0,1; 0,1] in1=[0xa400; 0,16; 0,1; 0,1] out=[0xa440; 1,16; 0,1; 0,1] wait=sem4>=20 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem7>=2
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=16 mask=[0x9c00; 1,16; 0,1; 0,1] src=[0x9bc0; 1,16; 0,1; 0,1] dst=[0x2001800; 1,16; 0,1; 0,1] wait=sem5>=33 update=sem6++
tensor_scalar op0=mult in_dtype=float32 out_dtype=float32 partitions=16 input=[0xa540; 1,1; 0,1; 0,1] output=[0xa580; 1,1; 0,1; 0,1] scalar0=-0.17677669 reverse0=false op1=bypass reverse1=false scalar1=0.0 wait=sem7>=21 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=16 in0=[0xa5c0; 1,16; 0,1; 0,1] in1=[0xa640; 0,16; 0,1; 0,1] out=[0xa680; 1,16; 0,1; 0,1] wait=sem4>=26 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem8>=16
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=add partitions=128 in0=[0x1000; 1,16; 0,1; 0,1] in1=[0xa7c0; 1,16; 0,1; 0,1] out=[0xa840; 1,16; 0,1; 0,1] wait=sem15>=48 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem9>=16
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=add partitions=128 in0=[0x1040; 1,16; 0,1; 0,1] in1=[0xa800; 1,16; 0,1; 0,1] out=[0xa880; 1,16; 0,1; 0,1] wait=sem16>=48 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xa840; 1,16; 0,1; 0,1] in1=[0xa940; 1,16; 0,1; 0,1] out=[0xa980; 1,16; 0,1; 0,1] wait=sem4>=32 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xa980; 1,16; 0,1; 0,1] in1=[0x2cc0; 0,16; 0,1; 0,1] out=[0xa9c0; 1,16; 0,1; 0,1] wait=sem17>=16 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xa880; 1,16; 0,1; 0,1] in1=[0xa940; 1,16; 0,1; 0,1] out=[0xaa00; 1,16; 0,1; 0,1] wait=sem4>=32 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xaa00; 1,16; 0,1; 0,1] in1=[0x2cc4; 0,16; 0,1; 0,1] out=[0xaa40; 1,16; 0,1; 0,1] wait=sem17>=16 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem4>=33
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xaa80; 1,16; 0,1; 0,1] in1=[0x2000800; 1,16; 0,1; 0,1] out=[0xaac0; 1,16; 0,1; 0,1] wait=sem5>=48 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem4>=34
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xab00; 1,16; 0,1; 0,1] in1=[0x2001800; 1,16; 0,1; 0,1] out=[0xab40; 1,16; 0,1; 0,1] wait=sem5>=52 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem4>=35
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xab80; 1,16; 0,1; 0,1] in1=[0x2002800; 1,16; 0,1; 0,1] out=[0xabc0; 1,16; 0,1; 0,1] wait=sem5>=56 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=add partitions=128 in0=[0xa840; 1,16; 0,1; 0,1] in1=[0xac80; 1,16; 0,1; 0,1] out=[0xad00; 1,16; 0,1; 0,1] wait=sem19>=48 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=add partitions=128 in0=[0xa880; 1,16; 0,1; 0,1] in1=[0xacc0; 1,16; 0,1; 0,1] out=[0xad40; 1,16; 0,1; 0,1] wait=sem20>=48 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xad00; 1,16; 0,1; 0,1] in1=[0x9d00; 1,16; 0,1; 0,1] out=[0x9d40; 1,16; 0,1; 0,1] wait=sem4>=40 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem23>=16
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0x9d40; 1,16; 0,1; 0,1] in1=[0x5500; 0,16; 0,1; 0,1] out=[0x9d80; 1,16; 0,1; 0,1] wait=sem5>=31 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xad40; 1,16; 0,1; 0,1] in1=[0x9d00; 1,16; 0,1; 0,1] out=[0x9dc0; 1,16; 0,1; 0,1] wait=sem4>=40 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem23>=16
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0x9dc0; 1,16; 0,1; 0,1] in1=[0x5504; 0,16; 0,1; 0,1] out=[0x9e00; 1,16; 0,1; 0,1] wait=sem5>=32 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem7>=2
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=16 mask=[0x9c00; 1,16; 0,1; 0,1] src=[0x9bc0; 1,16; 0,1; 0,1] dst=[0x2002000; 1,16; 0,1; 0,1] wait=sem5>=71 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem7>=26
tensor_scalar op0=mult in_dtype=float32 out_dtype=float32 partitions=16 input=[0x9e80; 1,1; 0,1; 0,1] output=[0x9ec0; 1,1; 0,1; 0,1] scalar0=-0.17677669 reverse0=false op1=bypass reverse1=false scalar1=0.0 wait=sem4>=7 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem4>=45
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=16 in0=[0x9f00; 1,16; 0,1; 0,1] in1=[0x9f80; 0,16; 0,1; 0,1] out=[0x9fc0; 1,16; 0,1; 0,1] wait=sem7>=8 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem7>=2
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=16 mask=[0x9c00; 1,16; 0,1; 0,1] src=[0x9bc0; 1,16; 0,1; 0,1] dst=[0x2000800; 1,16; 0,1; 0,1] wait=sem5>=79 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem7>=31
tensor_scalar op0=mult in_dtype=float32 out_dtype=float32 partitions=16 input=[0xa0c0; 1,1; 0,1; 0,1] output=[0xa100; 1,1; 0,1; 0,1] scalar0=-0.17677669 reverse0=false op1=bypass reverse1=false scalar1=0.0 wait=sem4>=13 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem4>=51
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=16 in0=[0xa140; 1,16; 0,1; 0,1] in1=[0xa1c0; 0,16; 0,1; 0,1] out=[0xa200; 1,16; 0,1; 0,1] wait=sem7>=13 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem7>=2
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=16 mask=[0x9c00; 1,16; 0,1; 0,1] src=[0x9bc0; 1,16; 0,1; 0,1] dst=[0x2003000; 1,16; 0,1; 0,1] wait=sem5>=87 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem7>=36
tensor_scalar op0=mult in_dtype=float32 out_dtype=float32 partitions=16 input=[0xa300; 1,1; 0,1; 0,1] output=[0xa340; 1,1; 0,1; 0,1] scalar0=-0.17677669 reverse0=false op1=bypass reverse1=false scalar1=0.0 wait=sem4>=19 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem4>=57
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=16 in0=[0xa380; 1,16; 0,1; 0,1] in1=[0xa400; 0,16; 0,1; 0,1] out=[0xa440; 1,16; 0,1; 0,1] wait=sem7>=18 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem7>=2
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=16 mask=[0x9c00; 1,16; 0,1; 0,1] src=[0x9bc0; 1,16; 0,1; 0,1] dst=[0x2001800; 1,16; 0,1; 0,1] wait=sem5>=95 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem7>=41
tensor_scalar op0=mult in_dtype=float32 out_dtype=float32 partitions=16 input=[0xa540; 1,1; 0,1; 0,1] output=[0xa580; 1,1; 0,1; 0,1] scalar0=-0.17677669 reverse0=false op1=bypass reverse1=false scalar1=0.0 wait=sem4>=25 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem4>=63
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=16 in0=[0xa5c0; 1,16; 0,1; 0,1] in1=[0xa640; 0,16; 0,1; 0,1] out=[0xa680; 1,16; 0,1; 0,1] wait=sem7>=23 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem15>=64
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=add partitions=128 in0=[0xad00; 1,16; 0,1; 0,1] in1=[0xa7c0; 1,16; 0,1; 0,1] out=[0xa840; 1,16; 0,1; 0,1] wait=sem4>=30 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem16>=64
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=add partitions=128 in0=[0xad40; 1,16; 0,1; 0,1] in1=[0xa800; 1,16; 0,1; 0,1] out=[0xa880; 1,16; 0,1; 0,1] wait=sem4>=31 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xa840; 1,16; 0,1; 0,1] in1=[0xa940; 1,16; 0,1; 0,1] out=[0xa980; 1,16; 0,1; 0,1] wait=sem4>=69 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem14>=32
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xa980; 1,16; 0,1; 0,1] in1=[0x7140; 0,16; 0,1; 0,1] out=[0xa9c0; 1,16; 0,1; 0,1] wait=sem5>=55 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xa880; 1,16; 0,1; 0,1] in1=[0xa940; 1,16; 0,1; 0,1] out=[0xaa00; 1,16; 0,1; 0,1] wait=sem4>=69 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem14>=32
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xaa00; 1,16; 0,1; 0,1] in1=[0x7144; 0,16; 0,1; 0,1] out=[0xaa40; 1,16; 0,1; 0,1] wait=sem5>=56 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem4>=70
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xaa80; 1,16; 0,1; 0,1] in1=[0x2000800; 1,16; 0,1; 0,1] out=[0xaac0; 1,16; 0,1; 0,1] wait=sem5>=110 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem4>=71
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xab00; 1,16; 0,1; 0,1] in1=[0x2001800; 1,16; 0,1; 0,1] out=[0xab40; 1,16; 0,1; 0,1] wait=sem5>=114 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem4>=72
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xab80; 1,16; 0,1; 0,1] in1=[0x2002800; 1,16; 0,1; 0,1] out=[0xabc0; 1,16; 0,1; 0,1] wait=sem5>=118 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem19>=64
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=add partitions=128 in0=[0xa840; 1,16; 0,1; 0,1] in1=[0xac80; 1,16; 0,1; 0,1] out=[0xad00; 1,16; 0,1; 0,1] wait=sem4>=38 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem20>=64
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=add partitions=128 in0=[0xa880; 1,16; 0,1; 0,1] in1=[0xacc0; 1,16; 0,1; 0,1] out=[0xad40; 1,16; 0,1; 0,1] wait=sem4>=39 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xad00; 1,16; 0,1; 0,1] in1=[0x9d00; 1,16; 0,1; 0,1] out=[0x9d40; 1,16; 0,1; 0,1] wait=sem4>=77 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem20>=32
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0x9d40; 1,16; 0,1; 0,1] in1=[0x9980; 0,16; 0,1; 0,1] out=[0x9d80; 1,16; 0,1; 0,1] wait=sem5>=93 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xad40; 1,16; 0,1; 0,1] in1=[0x9d00; 1,16; 0,1; 0,1] out=[0x9dc0; 1,16; 0,1; 0,1] wait=sem4>=77 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem20>=32
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0x9dc0; 1,16; 0,1; 0,1] in1=[0x9984; 0,16; 0,1; 0,1] out=[0x9e00; 1,16; 0,1; 0,1] wait=sem5>=94 update=sem6++
