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

/// An execution that sees the sets of the previous one skips matching and
/// binding them; a set changed in place in between (a tensor replaced, a
/// wrong size, a host tensor) must still be matched, checked and bound.
#[test]
fn sets_changed_between_executions_are_bound_again() {
    let (_dev, host) = host();
    let id = host.load(&copy_neff(), -1, -1).expect("load copy");
    let memory = host.memory().clone();
    let core = host.vcores()[0][0];
    let device = |name: &str, bytes: usize| Arc::new(Tensor::allocate_device(&memory, core, bytes as u64, name).unwrap());
    let din = device("input", BYTES);
    let mut ins = TensorSet::new();
    ins.add("input", din.clone());
    let mut outs = TensorSet::new();
    let first = device("output", BYTES);
    outs.add("output", first.clone());
    din.write(0, &data(BYTES, 7)).unwrap();
    host.execute(id, &ins, &outs).unwrap();
    host.execute(id, &ins, &outs).unwrap();
    assert_eq!(read_all(&first), data(BYTES, 7));

    // Another output tensor under the same name, same set object.
    let second = device("output", BYTES);
    outs.add("output", second.clone());
    din.write(0, &data(BYTES, 8)).unwrap();
    host.execute(id, &ins, &outs).unwrap();
    assert_eq!(read_all(&second), data(BYTES, 8));
    assert_eq!(read_all(&first), data(BYTES, 7), "the replaced tensor is no longer bound");

    // A wrong-size input in the same set is refused, then the right one works again.
    ins.add("input", device("input", BYTES / 2));
    let e = host.execute(id, &ins, &outs).unwrap_err();
    assert_eq!(e.status, nrt::NrtStatus::ExecBadInput, "{e}");
    ins.add("input", din.clone());
    host.execute(id, &ins, &outs).unwrap();

    // A host input is staged on every execution, even with unchanged sets.
    let (hins, _, _) = host_io(data(BYTES, 9), BYTES);
    host.execute(id, &hins, &outs).unwrap();
    assert_eq!(read_all(&second), data(BYTES, 9));
    let staged = hins.get("input").unwrap().clone();
    staged.write(0, &data(BYTES, 10)).unwrap();
    host.execute(id, &hins, &outs).unwrap();
    assert_eq!(read_all(&second), data(BYTES, 10));

    // A clone of a set is the same set; removing a tensor is a change.
    let same = outs.clone();
    host.execute(id, &ins, &same).unwrap();
    let mut fewer = outs.clone();
    fewer.remove("output");
    assert_eq!(host.execute(id, &ins, &fewer).unwrap_err().status, nrt::NrtStatus::Invalid);
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
