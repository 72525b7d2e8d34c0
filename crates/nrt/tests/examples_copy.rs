//! The copy example end to end: packed in process from examples/copy,
//! loaded on a simulated device, executed, output compared with the input.

mod exec_support;

use exec_support::*;
use nrt::tensor::Tensor;
use nrt::tensor::TensorSet;
use std::sync::Arc;

const BYTES: usize = 128 * 512 * 4;

#[test]
fn copy_example_moves_the_input_to_the_output() {
    let (_dev, host) = host();
    let id = host.load(&copy_neff(), -1, -1).expect("load copy");
    let (inputs, outputs) = host.tensor_info(id).unwrap();
    assert_eq!((inputs[0].name.as_str(), outputs[0].name.as_str()), ("input", "output"));
    assert_eq!(inputs[0].shape, vec![128, 512]);

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
