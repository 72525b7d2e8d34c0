prologue_b1
branch_label
event_semaphore ext_wait=none ext_update=none wait=sem7>=3
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=is_gt partitions=1 in0=[0x9d00; 1,32; 0,1; 0,1] in1=[0x1080; 0,32; 0,1; 0,1] out=[0x9c80; 1,32; 0,1; 0,1] wait=sem10>=16 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem7>=3
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=is_eq partitions=32 in0=[0x9d00; 1,32; 0,1; 0,1] in1=[0x1080; 0,32; 0,1; 0,1] out=[0x9e00; 1,32; 0,1; 0,1] wait=sem10>=16 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem7>=4
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=is_eq partitions=32 in0=[0x9d80; 1,32; 0,1; 0,1] in1=[0x1080; 0,32; 0,1; 0,1] out=[0x9e80; 1,32; 0,1; 0,1] wait=sem10>=16 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem8>=16
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0x1000; 1,1; 0,1; 0,1] in1=[0x9f80; 1,1; 0,1; 0,1] out=[0x9fc0; 1,1; 0,1; 0,1] wait=sem4>=3 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0x9fc0; 1,1; 0,1; 0,1] in1=[0x10c0; 0,1; 0,1; 0,1] out=[0xa000; 1,1; 0,1; 0,1] wait=sem11>=16 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem9>=16
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0x1040; 1,1; 0,1; 0,1] in1=[0x9f80; 1,1; 0,1; 0,1] out=[0xa040; 1,1; 0,1; 0,1] wait=sem4>=3 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xa040; 1,1; 0,1; 0,1] in1=[0x10c4; 0,1; 0,1; 0,1] out=[0xa080; 1,1; 0,1; 0,1] wait=sem11>=16 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem5>=6
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=32 mask=[0x9e00; 1,32; 0,1; 0,1] src=[0x2001000; 0,32; 0,1; 0,1] dst=[0x5140; 1,32; 0,1; 0,1] wait=sem8>=32 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem5>=8
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=32 mask=[0x9e80; 1,32; 0,1; 0,1] src=[0x2001800; 1,32; 0,1; 0,1] dst=[0x5340; 1,32; 0,1; 0,1] wait=sem12>=32 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem7>=2
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=1 mask=[0x9c80; 1,32; 0,1; 0,1] src=[0x9c00; 1,32; 0,1; 0,1] dst=[0x2002000; 1,32; 0,1; 0,1] wait=sem5>=9 update=sem6++
tensor_scalar op0=mult in_dtype=float32 out_dtype=float32 partitions=1 input=[0xa100; 1,1; 0,1; 0,1] output=[0xa140; 1,1; 0,1; 0,1] scalar0=-0.17677669 reverse0=false op1=bypass reverse1=false scalar1=0.0 wait=sem7>=5 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=1 in0=[0xa180; 1,32; 0,1; 0,1] in1=[0xa240; 0,32; 0,1; 0,1] out=[0xa280; 1,32; 0,1; 0,1] wait=sem4>=6 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem5>=14
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=32 mask=[0x9e00; 1,32; 0,1; 0,1] src=[0x2003800; 0,32; 0,1; 0,1] dst=[0x51c0; 1,32; 0,1; 0,1] wait=sem9>=32 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem5>=16
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=32 mask=[0x9e80; 1,32; 0,1; 0,1] src=[0x2000000; 1,32; 0,1; 0,1] dst=[0x53c0; 1,32; 0,1; 0,1] wait=sem13>=32 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem7>=2
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=1 mask=[0x9c80; 1,32; 0,1; 0,1] src=[0x9c00; 1,32; 0,1; 0,1] dst=[0x2000800; 1,32; 0,1; 0,1] wait=sem5>=17 update=sem6++
tensor_scalar op0=mult in_dtype=float32 out_dtype=float32 partitions=1 input=[0xa3c0; 1,1; 0,1; 0,1] output=[0xa400; 1,1; 0,1; 0,1] scalar0=-0.17677669 reverse0=false op1=bypass reverse1=false scalar1=0.0 wait=sem7>=8 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=1 in0=[0xa440; 1,32; 0,1; 0,1] in1=[0xa500; 0,32; 0,1; 0,1] out=[0xa540; 1,32; 0,1; 0,1] wait=sem4>=10 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem5>=22
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=32 mask=[0x9e00; 1,32; 0,1; 0,1] src=[0x2002000; 0,32; 0,1; 0,1] dst=[0x5240; 1,32; 0,1; 0,1] wait=sem10>=32 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem5>=24
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=32 mask=[0x9e80; 1,32; 0,1; 0,1] src=[0x2002800; 1,32; 0,1; 0,1] dst=[0x5440; 1,32; 0,1; 0,1] wait=sem14>=32 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem7>=2
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=1 mask=[0x9c80; 1,32; 0,1; 0,1] src=[0x9c00; 1,32; 0,1; 0,1] dst=[0x2003000; 1,32; 0,1; 0,1] wait=sem5>=25 update=sem6++
tensor_scalar op0=mult in_dtype=float32 out_dtype=float32 partitions=1 input=[0xa680; 1,1; 0,1; 0,1] output=[0xa6c0; 1,1; 0,1; 0,1] scalar0=-0.17677669 reverse0=false op1=bypass reverse1=false scalar1=0.0 wait=sem7>=11 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=1 in0=[0xa700; 1,32; 0,1; 0,1] in1=[0xa7c0; 0,32; 0,1; 0,1] out=[0xa800; 1,32; 0,1; 0,1] wait=sem4>=14 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem5>=30
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=32 mask=[0x9e00; 1,32; 0,1; 0,1] src=[0x2000800; 0,32; 0,1; 0,1] dst=[0x52c0; 1,32; 0,1; 0,1] wait=sem11>=32 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem5>=32
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=32 mask=[0x9e80; 1,32; 0,1; 0,1] src=[0x2001000; 1,32; 0,1; 0,1] dst=[0x54c0; 1,32; 0,1; 0,1] wait=sem15>=32 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem7>=2
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=1 mask=[0x9c80; 1,32; 0,1; 0,1] src=[0x9c00; 1,32; 0,1; 0,1] dst=[0x2001800; 1,32; 0,1; 0,1] wait=sem5>=33 update=sem6++
tensor_scalar op0=mult in_dtype=float32 out_dtype=float32 partitions=1 input=[0xa940; 1,1; 0,1; 0,1] output=[0xa980; 1,1; 0,1; 0,1] scalar0=-0.17677669 reverse0=false op1=bypass reverse1=false scalar1=0.0 wait=sem7>=14 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=1 in0=[0xa9c0; 1,32; 0,1; 0,1] in1=[0xaa80; 0,32; 0,1; 0,1] out=[0xaac0; 1,32; 0,1; 0,1] wait=sem4>=18 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem8>=16
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=add partitions=128 in0=[0x1000; 1,1; 0,1; 0,1] in1=[0xac40; 1,1; 0,1; 0,1] out=[0xacc0; 1,1; 0,1; 0,1] wait=sem16>=64 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem9>=16
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=add partitions=128 in0=[0x1040; 1,1; 0,1; 0,1] in1=[0xac80; 1,1; 0,1; 0,1] out=[0xad00; 1,1; 0,1; 0,1] wait=sem17>=64 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xacc0; 1,1; 0,1; 0,1] in1=[0xadc0; 1,1; 0,1; 0,1] out=[0xae00; 1,1; 0,1; 0,1] wait=sem4>=24 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xae00; 1,1; 0,1; 0,1] in1=[0x2d00; 0,1; 0,1; 0,1] out=[0xae40; 1,1; 0,1; 0,1] wait=sem18>=16 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xad00; 1,1; 0,1; 0,1] in1=[0xadc0; 1,1; 0,1; 0,1] out=[0xae80; 1,1; 0,1; 0,1] wait=sem4>=24 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xae80; 1,1; 0,1; 0,1] in1=[0x2d04; 0,1; 0,1; 0,1] out=[0xaec0; 1,1; 0,1; 0,1] wait=sem18>=16 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem4>=25
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xaf00; 1,1; 0,1; 0,1] in1=[0x2000800; 1,1; 0,1; 0,1] out=[0xaf40; 1,1; 0,1; 0,1] wait=sem5>=48 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem4>=26
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xaf80; 1,1; 0,1; 0,1] in1=[0x2001800; 1,1; 0,1; 0,1] out=[0xafc0; 1,1; 0,1; 0,1] wait=sem5>=52 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem4>=27
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xb000; 1,1; 0,1; 0,1] in1=[0x2002800; 1,1; 0,1; 0,1] out=[0xb040; 1,1; 0,1; 0,1] wait=sem5>=56 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=add partitions=128 in0=[0xacc0; 1,1; 0,1; 0,1] in1=[0xb100; 1,1; 0,1; 0,1] out=[0xb180; 1,1; 0,1; 0,1] wait=sem20>=64 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=add partitions=128 in0=[0xad00; 1,1; 0,1; 0,1] in1=[0xb140; 1,1; 0,1; 0,1] out=[0xb1c0; 1,1; 0,1; 0,1] wait=sem21>=64 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xb180; 1,1; 0,1; 0,1] in1=[0x9f80; 1,1; 0,1; 0,1] out=[0x9fc0; 1,1; 0,1; 0,1] wait=sem4>=32 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem16>=32
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0x9fc0; 1,1; 0,1; 0,1] in1=[0x5540; 0,1; 0,1; 0,1] out=[0xa000; 1,1; 0,1; 0,1] wait=sem5>=31 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xb1c0; 1,1; 0,1; 0,1] in1=[0x9f80; 1,1; 0,1; 0,1] out=[0xa040; 1,1; 0,1; 0,1] wait=sem4>=32 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem16>=32
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xa040; 1,1; 0,1; 0,1] in1=[0x5544; 0,1; 0,1; 0,1] out=[0xa080; 1,1; 0,1; 0,1] wait=sem5>=32 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem5>=68
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=32 mask=[0x9e00; 1,32; 0,1; 0,1] src=[0x2001000; 0,32; 0,1; 0,1] dst=[0x95c0; 1,32; 0,1; 0,1] wait=sem13>=48 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem5>=70
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=32 mask=[0x9e80; 1,32; 0,1; 0,1] src=[0x2001800; 1,32; 0,1; 0,1] dst=[0x97c0; 1,32; 0,1; 0,1] wait=sem17>=48 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem7>=2
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=1 mask=[0x9c80; 1,32; 0,1; 0,1] src=[0x9c00; 1,32; 0,1; 0,1] dst=[0x2002000; 1,32; 0,1; 0,1] wait=sem5>=71 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem7>=17
tensor_scalar op0=mult in_dtype=float32 out_dtype=float32 partitions=1 input=[0xa100; 1,1; 0,1; 0,1] output=[0xa140; 1,1; 0,1; 0,1] scalar0=-0.17677669 reverse0=false op1=bypass reverse1=false scalar1=0.0 wait=sem4>=5 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem4>=35
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=1 in0=[0xa180; 1,32; 0,1; 0,1] in1=[0xa240; 0,32; 0,1; 0,1] out=[0xa280; 1,32; 0,1; 0,1] wait=sem7>=7 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem5>=76
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=32 mask=[0x9e00; 1,32; 0,1; 0,1] src=[0x2003800; 0,32; 0,1; 0,1] dst=[0x9640; 1,32; 0,1; 0,1] wait=sem14>=48 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem5>=78
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=32 mask=[0x9e80; 1,32; 0,1; 0,1] src=[0x2000000; 1,32; 0,1; 0,1] dst=[0x9840; 1,32; 0,1; 0,1] wait=sem18>=48 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem7>=2
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=1 mask=[0x9c80; 1,32; 0,1; 0,1] src=[0x9c00; 1,32; 0,1; 0,1] dst=[0x2000800; 1,32; 0,1; 0,1] wait=sem5>=79 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem7>=20
tensor_scalar op0=mult in_dtype=float32 out_dtype=float32 partitions=1 input=[0xa3c0; 1,1; 0,1; 0,1] output=[0xa400; 1,1; 0,1; 0,1] scalar0=-0.17677669 reverse0=false op1=bypass reverse1=false scalar1=0.0 wait=sem4>=9 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem4>=39
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=1 in0=[0xa440; 1,32; 0,1; 0,1] in1=[0xa500; 0,32; 0,1; 0,1] out=[0xa540; 1,32; 0,1; 0,1] wait=sem7>=10 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem5>=84
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=32 mask=[0x9e00; 1,32; 0,1; 0,1] src=[0x2002000; 0,32; 0,1; 0,1] dst=[0x96c0; 1,32; 0,1; 0,1] wait=sem15>=48 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem5>=86
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=32 mask=[0x9e80; 1,32; 0,1; 0,1] src=[0x2002800; 1,32; 0,1; 0,1] dst=[0x98c0; 1,32; 0,1; 0,1] wait=sem19>=48 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem7>=2
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=1 mask=[0x9c80; 1,32; 0,1; 0,1] src=[0x9c00; 1,32; 0,1; 0,1] dst=[0x2003000; 1,32; 0,1; 0,1] wait=sem5>=87 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem7>=23
tensor_scalar op0=mult in_dtype=float32 out_dtype=float32 partitions=1 input=[0xa680; 1,1; 0,1; 0,1] output=[0xa6c0; 1,1; 0,1; 0,1] scalar0=-0.17677669 reverse0=false op1=bypass reverse1=false scalar1=0.0 wait=sem4>=13 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem4>=43
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=1 in0=[0xa700; 1,32; 0,1; 0,1] in1=[0xa7c0; 0,32; 0,1; 0,1] out=[0xa800; 1,32; 0,1; 0,1] wait=sem7>=13 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem5>=92
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=32 mask=[0x9e00; 1,32; 0,1; 0,1] src=[0x2000800; 0,32; 0,1; 0,1] dst=[0x9740; 1,32; 0,1; 0,1] wait=sem16>=48 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem5>=94
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=32 mask=[0x9e80; 1,32; 0,1; 0,1] src=[0x2001000; 1,32; 0,1; 0,1] dst=[0x9940; 1,32; 0,1; 0,1] wait=sem20>=48 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem7>=2
copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions=1 mask=[0x9c80; 1,32; 0,1; 0,1] src=[0x9c00; 1,32; 0,1; 0,1] dst=[0x2001800; 1,32; 0,1; 0,1] wait=sem5>=95 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem7>=26
tensor_scalar op0=mult in_dtype=float32 out_dtype=float32 partitions=1 input=[0xa940; 1,1; 0,1; 0,1] output=[0xa980; 1,1; 0,1; 0,1] scalar0=-0.17677669 reverse0=false op1=bypass reverse1=false scalar1=0.0 wait=sem4>=17 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem4>=47
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=1 in0=[0xa9c0; 1,32; 0,1; 0,1] in1=[0xaa80; 0,32; 0,1; 0,1] out=[0xaac0; 1,32; 0,1; 0,1] wait=sem7>=16 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem16>=80
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=add partitions=128 in0=[0xb180; 1,1; 0,1; 0,1] in1=[0xac40; 1,1; 0,1; 0,1] out=[0xacc0; 1,1; 0,1; 0,1] wait=sem4>=22 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem17>=80
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=add partitions=128 in0=[0xb1c0; 1,1; 0,1; 0,1] in1=[0xac80; 1,1; 0,1; 0,1] out=[0xad00; 1,1; 0,1; 0,1] wait=sem4>=23 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xacc0; 1,1; 0,1; 0,1] in1=[0xadc0; 1,1; 0,1; 0,1] out=[0xae00; 1,1; 0,1; 0,1] wait=sem4>=53 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem23>=32
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xae00; 1,1; 0,1; 0,1] in1=[0x7180; 0,1; 0,1; 0,1] out=[0xae40; 1,1; 0,1; 0,1] wait=sem5>=55 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xad00; 1,1; 0,1; 0,1] in1=[0xadc0; 1,1; 0,1; 0,1] out=[0xae80; 1,1; 0,1; 0,1] wait=sem4>=53 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem23>=32
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xae80; 1,1; 0,1; 0,1] in1=[0x7184; 0,1; 0,1; 0,1] out=[0xaec0; 1,1; 0,1; 0,1] wait=sem5>=56 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem4>=54
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xaf00; 1,1; 0,1; 0,1] in1=[0x2000800; 1,1; 0,1; 0,1] out=[0xaf40; 1,1; 0,1; 0,1] wait=sem5>=110 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem4>=55
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xaf80; 1,1; 0,1; 0,1] in1=[0x2001800; 1,1; 0,1; 0,1] out=[0xafc0; 1,1; 0,1; 0,1] wait=sem5>=114 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem4>=56
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xb000; 1,1; 0,1; 0,1] in1=[0x2002800; 1,1; 0,1; 0,1] out=[0xb040; 1,1; 0,1; 0,1] wait=sem5>=118 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem20>=80
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=add partitions=128 in0=[0xacc0; 1,1; 0,1; 0,1] in1=[0xb100; 1,1; 0,1; 0,1] out=[0xb180; 1,1; 0,1; 0,1] wait=sem4>=30 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem21>=80
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=add partitions=128 in0=[0xad00; 1,1; 0,1; 0,1] in1=[0xb140; 1,1; 0,1; 0,1] out=[0xb1c0; 1,1; 0,1; 0,1] wait=sem4>=31 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xb180; 1,1; 0,1; 0,1] in1=[0x9f80; 1,1; 0,1; 0,1] out=[0x9fc0; 1,1; 0,1; 0,1] wait=sem4>=61 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem21>=48
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0x9fc0; 1,1; 0,1; 0,1] in1=[0x99c0; 0,1; 0,1; 0,1] out=[0xa000; 1,1; 0,1; 0,1] wait=sem5>=93 update=sem6++
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xb1c0; 1,1; 0,1; 0,1] in1=[0x9f80; 1,1; 0,1; 0,1] out=[0xa040; 1,1; 0,1; 0,1] wait=sem4>=61 update=sem6++
event_semaphore ext_wait=none ext_update=none wait=sem21>=48
tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=mult partitions=128 in0=[0xa040; 1,1; 0,1; 0,1] in1=[0x99c4; 0,1; 0,1; 0,1] out=[0xa080; 1,1; 0,1; 0,1] wait=sem5>=94 update=sem6++
