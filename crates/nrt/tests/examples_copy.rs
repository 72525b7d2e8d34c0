//! The copy example end to end: packed in process from examples/copy,
//! loaded on a simulated device, executed, output compared with the input.

mod exec_support;

use exec_support::*;
use nrt::tensor::Tensor;
use nrt::tensor::TensorSet;
use std::sync::Arc;

const BYTES: usize = 8 * 128 * 4;

#[test]
fn copy_example_moves_the_input_to_the_output() {
    let (_dev, host) = host();
    let id = host.load(&copy_neff(), -1, -1).expect("load copy");
    let (inputs, outputs) = host.tensor_info(id).unwrap();
    assert_eq!((inputs[0].name.as_str(), outputs[0].name.as_str()), ("input", "output"));
    assert_eq!(inputs[0].shape, vec![8, 128]);

    // Host tensors (staged through the IO buffers).
    let input = data(BYTES, 1);
    let (ins, outs, out) = host_io(input.clone(), BYTES);
    host.execute(id, &ins, &outs).expect("execute");
    assert_eq!(read_all(&out), input);

    // Device tensors (bound in place), twice with different data.
    let memory = host.memory().clone();
    let core = host.vcores()[0][0];
    let din = Arc::new(Tensor::allocate_device(&memory, core, BYTES as u64, "input").unwrap());
    let dout = Arc::new(Tensor::allocate_device(&memory, core, BYTES as u64, "output").unwrap());
    let mut ins = TensorSet::new();
    ins.add("input", din.clone());
    let mut outs = TensorSet::new();
    outs.add("output", dout.clone());
    for seed in [2, 3] {
        let v = data(BYTES, seed);
        din.write(0, &v).unwrap();
        host.execute(id, &ins, &outs).expect("execute on device tensors");
        assert_eq!(read_all(&dout), v, "seed {seed}");
    }
    host.unload(id).unwrap();
    host.close().unwrap();
}

#[test]
fn copy_example_runs_on_a_threaded_device_too() {
    // Pool mode: the simulator's workers run the engines while this thread
    // spins, then parks, in the harvest loop.
    let cfg = nrt_sim::SimConfig::builder().threads(2).build();
    let dev = Arc::new(nrt_sim::SimDevice::new(&cfg, 0));
    let host = nrt::load::ModelHost::with_lnc(dev, 2, nrt::load::LoadSettings::default()).unwrap();
    let id = host.load(&copy_neff(), 0, -1).unwrap();
    for seed in 0..20 {
        let input = data(BYTES, 100 + seed);
        let (ins, outs, out) = host_io(input.clone(), BYTES);
        host.execute(id, &ins, &outs).unwrap();
        assert_eq!(read_all(&out), input, "run {seed}");
    }
    host.close().unwrap();
}
