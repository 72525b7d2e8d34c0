//! DMA blocks beyond plain copies, lowered to pattern blocks: a strided
//! read (every other column) and a float32 -> bfloat16 cast, each checked
//! against a reference computed here.

mod exec_support;

use exec_support::*;
use nrt::tensor::{Tensor, TensorSet};
use std::sync::Arc;

/// The copy example with its output var resized and its one descriptor
/// replaced by `desc` (JSON).
fn variant(out_bytes: usize, out_dtype: &str, out_shape: [u64; 2], desc: &str) -> Vec<u8> {
    let contents = nrt_neff::read_dir(&examples_dir().join("copy")).unwrap();
    let mut m = contents.members;
    resize_copy_io(&mut m, 128, 512);
    let mut def: serde_json::Value = serde_json::from_slice(&m["sg00/def.json"]).unwrap();
    def["var"]["output"] = serde_json::json!({"type": "output", "var_id": 1, "size": out_bytes, "dtype": out_dtype, "shape": out_shape});
    m.insert("sg00/def.json".into(), serde_json::to_vec(&def).unwrap());
    let mut sp: serde_json::Value = serde_json::from_slice(&m["sg00/SP.json"]).unwrap();
    sp["dma"][0]["desc"] = serde_json::from_str(desc).unwrap();
    m.insert("sg00/SP.json".into(), serde_json::to_vec(&sp).unwrap());
    let mut g: serde_json::Value = serde_json::from_slice(&m["neff.json"]).unwrap();
    g["attrs"]["shape"][1][1] = serde_json::json!(out_shape);
    g["attrs"]["dltype"][1][1] = serde_json::json!(out_dtype);
    m.insert("neff.json".into(), serde_json::to_vec(&g).unwrap());
    pack_members(&contents.header.unwrap(), m)
}

fn floats() -> Vec<f32> {
    (0..128 * 512).map(|i| (i as f32) * 0.37 - 5000.0 + (i % 7) as f32 / 3.0).collect()
}

fn run(neff: &[u8], input: &[u8], out_bytes: usize, device_tensors: bool) -> Vec<u8> {
    let (_dev, host) = host();
    let id = host.load(neff, 0, -1).unwrap();
    let (ins, outs, out) = if device_tensors {
        let core = host.vcores()[0][0];
        let i = Arc::new(Tensor::allocate_device(host.memory(), core, input.len() as u64, "input").unwrap());
        i.write(0, input).unwrap();
        let o = Arc::new(Tensor::allocate_device(host.memory(), core, out_bytes as u64, "output").unwrap());
        let (mut a, mut b) = (TensorSet::new(), TensorSet::new());
        a.add("input", i);
        b.add("output", o.clone());
        (a, b, o)
    } else {
        let mut a = TensorSet::new();
        a.add("input", Arc::new(Tensor::from_host_bytes(input.to_vec(), "input")));
        let o = Arc::new(Tensor::allocate_host(out_bytes as u64, "output").unwrap());
        let mut b = TensorSet::new();
        b.add("output", o.clone());
        (a, b, o)
    };
    host.execute(id, &ins, &outs).unwrap();
    read_all(&out)
}

#[test]
fn strided_read_takes_every_other_column() {
    let x = floats();
    let input: Vec<u8> = x.iter().flat_map(|f| f.to_le_bytes()).collect();
    let want: Vec<u8> = (0..128).flat_map(|r| (0..256).map(move |c| r * 512 + 2 * c)).flat_map(|i| x[i].to_le_bytes()).collect();
    let neff = variant(
        128 * 256 * 4,
        "float32",
        [128, 256],
        r#"[{"from": "input", "from_sizes": [4, 256, 128], "from_steps": [4, 8, 2048], "from_dtype": "float32",
             "to": "output", "to_sizes": [1024, 128], "to_steps": [1, 1024], "to_dtype": "float32"}]"#,
    );
    for device_tensors in [false, true] {
        assert_eq!(run(&neff, &input, want.len(), device_tensors), want, "device tensors: {device_tensors}");
    }
}

#[test]
fn cast_to_bfloat16_rounds_to_nearest_even() {
    let x = floats();
    let input: Vec<u8> = x.iter().flat_map(|f| f.to_le_bytes()).collect();
    let bf16 = |f: f32| {
        let b = f.to_bits();
        ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) as u16
    };
    let want: Vec<u8> = x.iter().flat_map(|f| bf16(*f).to_le_bytes()).collect();
    let neff = variant(
        128 * 512 * 2,
        "bfloat16",
        [128, 512],
        r#"[{"op": "cast", "from": "input", "from_dtype": "float32", "to": "output", "to_dtype": "bfloat16"}]"#,
    );
    assert_eq!(run(&neff, &input, want.len(), false), want);
}
