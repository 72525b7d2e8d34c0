//! The all-engines example end to end: SP moves x in and the covariance
//! out, POOL takes row means, DVE centres the rows, PE multiplies xcᵀ·xc
//! and ACT scales; each hands over to the next through a semaphore. The
//! output is compared with the covariance computed here with plain loops.

mod exec_support;

use exec_support::*;
use nrt::tensor::{Tensor, TensorSet};
use std::sync::Arc;

const R: usize = 32;
const C: usize = 64;

/// cov[m][n] = (1/R) Σ_r (x[r][m] - mean_r)(x[r][n] - mean_r), with
/// mean_r the mean of row r, in f64.
fn reference(x: &[f32]) -> Vec<f64> {
    let xc: Vec<f64> = (0..R)
        .flat_map(|r| {
            let row = &x[r * C..(r + 1) * C];
            let mean = row.iter().map(|v| f64::from(*v)).sum::<f64>() / C as f64;
            row.iter().map(move |v| f64::from(*v) - mean)
        })
        .collect();
    let mut cov = vec![0f64; C * C];
    for m in 0..C {
        for n in 0..C {
            cov[m * C + n] = (0..R).map(|r| xc[r * C + m] * xc[r * C + n]).sum::<f64>() / R as f64;
        }
    }
    cov
}

#[test]
fn all_engines_example_computes_the_row_centred_covariance() {
    let (_dev, host) = host();
    let id = host.load(&pack_dir(&examples_dir().join("all-engines")), -1, -1).expect("load all-engines");
    let (inputs, outputs) = host.tensor_info(id).unwrap();
    assert_eq!((inputs[0].shape.clone(), outputs[0].shape.clone()), (vec![R as u64, C as u64], vec![C as u64, C as u64]));
    for seed in [1u64, 2] {
        // Values in [-4, 4) with a per-row offset, so centring matters.
        let x: Vec<f32> = data(R * C * 4, seed)
            .chunks_exact(4)
            .enumerate()
            .map(|(i, c)| (u32::from_le_bytes(c.try_into().unwrap()) >> 8) as f32 / (1u32 << 21) as f32 - 4.0 + (i / C) as f32)
            .collect();
        let mut ins = TensorSet::new();
        ins.add("x", Arc::new(Tensor::from_host_bytes(x.iter().flat_map(|v| v.to_le_bytes()).collect(), "x")));
        let out = Arc::new(Tensor::allocate_host((C * C * 4) as u64, "cov").unwrap());
        let mut outs = TensorSet::new();
        outs.add("cov", out.clone());
        host.execute(id, &ins, &outs).expect("execute");
        let got: Vec<f32> = read_all(&out).chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
        // fp32 mean, subtraction and a 32-term fp32 accumulation of values
        // below 64: a few ulps of the largest partial sums (~2000), so an
        // absolute 1e-3 after the 1/32 scale is generous yet tight enough
        // to catch a wrong row, a missing centring or a skipped scale.
        for (i, (g, w)) in got.iter().zip(reference(&x)).enumerate() {
            assert!((f64::from(*g) - w).abs() <= 1e-3, "seed {seed}: cov[{}][{}] = {g}, expected {w}", i / C, i % C);
        }
        // A covariance matrix is symmetric, bit for bit here (same products).
        for m in 0..C {
            for n in 0..m {
                assert_eq!(got[m * C + n], got[n * C + m], "cov[{m}][{n}]");
            }
        }
    }
    host.unload(id).unwrap();
    host.close().unwrap();
}

/// The device-print example: DVE's two DEBUG_TENSOR_READ records reach the
/// debug stream of the model's logical core after each execution, only
/// while a client is connected, with the tiles' bytes as the device had
/// them (x as written, y = 2x + 1); without a client and with an output
/// directory, the runtime's consumer writes one `.npy` per print and
/// iteration; a ring without room drops on the device and counts.
#[test]
fn device_prints_reach_the_debug_stream() {
    use nrt::debug_stream::{self, Settings};
    let (dev, host) = host();
    let id = host.load(&pack_dir(&examples_dir().join("device-print")), -1, -1).expect("load device-print");
    let lnc = host.models().get(id).unwrap().vnc;
    let x: Vec<f32> = (0..32).map(|i| i as f32 * 0.5 - 3.0).collect();
    let y_want: Vec<f32> = x.iter().map(|v| v * 2.0 + 1.0).collect();
    let bytes = |v: &[f32]| v.iter().flat_map(|f| f.to_le_bytes()).collect::<Vec<u8>>();
    let run = || {
        let mut ins = TensorSet::new();
        ins.add("x", Arc::new(Tensor::from_host_bytes(bytes(&x), "x")));
        let out = Arc::new(Tensor::allocate_host(128, "y").unwrap());
        let mut outs = TensorSet::new();
        outs.add("y", out.clone());
        host.execute(id, &ins, &outs).expect("execute");
        assert_eq!(read_all(&out), bytes(&y_want), "the model still computes y");
    };
    // No client yet: the events of this execution go nowhere.
    run();
    let fd = debug_stream::connect(lnc as i32).unwrap();
    assert_eq!(debug_stream::read_one(fd).unwrap(), None, "events before the connection are not kept");
    for _ in 0..2 {
        run();
        for (prefix, want) in [("x", &x), ("y", &y_want)] {
            let e = debug_stream::read_one(fd).unwrap().unwrap_or_else(|| panic!("no event for {prefix}"));
            assert_eq!((e.prefix.as_str(), e.logical_nc_id, e.pipe), (prefix, lnc, nrt_hal::EngineId::Dve.index() as u32));
            assert_eq!((e.dtype, e.shape.clone()), (nrt_isa::dtype::Dtype::Float32, vec![4, 8]));
            assert_eq!(e.data, bytes(want), "{prefix}");
        }
        assert_eq!(debug_stream::read_one(fd).unwrap(), None);
    }
    debug_stream::disconnect(fd).unwrap();

    // The runtime's own consumer.
    let dir = std::env::temp_dir().join(format!("nrt-device-print-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    debug_stream::configure(Settings { output_dir: Some(dir.clone()), ..Settings::default() });
    run();
    run();
    debug_stream::configure(Settings::default());
    for (prefix, want) in [("x", &x), ("y", &y_want)] {
        for iteration in 0..2 {
            let path = dir.join(prefix).join(format!("core_{lnc}")).join(iteration.to_string()).join(debug_stream::TENSOR_FILE);
            let file = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let header = nrt_neff::npy::parse_npy_header(&path.display().to_string(), &file).unwrap();
            assert_eq!((header.descr.as_str(), header.shape.clone()), ("<f4", vec![4, 8]), "{}", path.display());
            assert_eq!(&file[header.data_offset..], bytes(want).as_slice(), "{}", path.display());
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();

    // A ring without room for one entry: the device drops and counts.
    let model = host.models().get(id).unwrap();
    let ring = &model.program.as_ref().unwrap().cores[0].debug_rings[0];
    use nrt_hal::Device;
    let mut header = [0u8; 32];
    dev.read(ring.addr, &mut header).unwrap();
    let mut h = nrt_isa::debug_ring::Header::read(&header);
    let dropped_before = h.dropped;
    h.capacity = 64;
    dev.write(ring.addr, &h.to_bytes()).unwrap();
    let fd = debug_stream::connect(lnc as i32).unwrap();
    run();
    assert_eq!(debug_stream::read_one(fd).unwrap(), None, "nothing fit");
    dev.read(ring.addr, &mut header).unwrap();
    assert_eq!(nrt_isa::debug_ring::Header::read(&header).dropped, dropped_before + 2);
    debug_stream::disconnect(fd).unwrap();
    drop(model);
    host.unload(id).unwrap();
    host.close().unwrap();
}
