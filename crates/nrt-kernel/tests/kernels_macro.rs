//! The `kernels!` table on the host, and an SPMD kernel run through the
//! native harness core by core.

use nrt_kernel::host::{Harness, HostTensor};
use nrt_kernel::{KernelError, customop_next_tensor, get_dst_tensor, my_share};

fn double() -> Result<(), KernelError> {
    let x = customop_next_tensor()?;
    let y = get_dst_tensor()?;
    let (s, e) = my_share(x.numel());
    let mut buf = [0f32; 64];
    let mut at = s;
    while at < e {
        let n = (e - at).min(64);
        x.tcm_accessor().tensor_to_tcm(&mut buf[..n], at)?;
        for v in &mut buf[..n] {
            *v *= 2.0;
        }
        y.tcm_accessor().tcm_to_tensor(&buf[..n], at)?;
        at += n;
    }
    Ok(())
}

fn refuse() -> Result<(), KernelError> {
    Err(KernelError::ShapeMismatch)
}

nrt_kernel::kernels!(double, refuse);

#[test]
fn table_exports_count_and_handles() {
    assert_eq!(get_func_cnt(), 2);
    assert_eq!((get_func_ptr(0), get_func_ptr(1), get_func_ptr(2), get_func_ptr(-1)), (1, 2, 0, 0));
    assert_eq!(get_func_name(5), 0);
}

#[test]
fn an_spmd_kernel_covers_its_tensor_over_eight_cores() {
    let x: Vec<f32> = (0..1001).map(|i| i as f32).collect();
    let mut h = Harness::new(0, 8);
    h.push_tensor(HostTensor::f32(&[1001], &x));
    h.set_dst(HostTensor::f32(&[1001], &vec![0.0; 1001]));
    h.install();
    for id in 0..8 {
        Harness::set_cpu(id);
        assert_eq!(nrt_kernel::entry(double), 0);
    }
    assert_eq!(nrt_kernel::entry(refuse), KernelError::ShapeMismatch.code());
    let out = Harness::take().dst.unwrap().to_f32();
    assert_eq!(out, x.iter().map(|v| v * 2.0).collect::<Vec<_>>());
}
