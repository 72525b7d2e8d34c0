//! A program that uses a compute engine between two DMAs: SP moves the
//! input into SBUF, ACT applies relu in SBUF, SP moves the result out.
//! Checks the cross-engine semaphore hand-offs inside the runtime's image
//! frame and the compute wiring of the simulator, against relu computed
//! here.

mod exec_support;

use exec_support::*;

const ROWS: usize = 128;
const COLS: usize = 512;
const BYTES: usize = ROWS * COLS * 4;

fn relu_neff(partition_bytes: u64) -> Vec<u8> {
    let contents = nrt_neff::read_dir(&examples_dir().join("copy")).unwrap();
    let mut m = contents.members;
    resize_copy_io(&mut m, ROWS as u64, COLS as u64);
    let mut def: serde_json::Value = serde_json::from_slice(&m["sg00/def.json"]).unwrap();
    def["var"]["SB"] = serde_json::json!({"type": "state-buffer", "var_id": 2});
    def["act"] = "Activation.json".into();
    def["act_instr"] = "Activation.bin".into();
    def["dma_queue"] = serde_json::json!({
        "qIn": {"type": "in", "num_queues": 1, "owner": "sp", "semaphore": 1},
        "qOut": {"type": "out", "num_queues": 1, "owner": "sp", "semaphore": 4}
    });
    m.insert("sg00/def.json".into(), serde_json::to_vec(&def).unwrap());
    let pb = partition_bytes;
    let sp = serde_json::json!({
        "name": "SP.json",
        "dma": [
            {"id": 0, "queue": "qIn", "semaphore": 1, "desc": [{
                "from": "input", "from_sizes": [2048, 128], "from_steps": [1, 2048], "from_dtype": "float32",
                "to": "SB", "to_off": 0, "to_sizes": [2048, 128], "to_steps": [1, pb], "to_dtype": "float32"}]},
            {"id": 1, "queue": "qOut", "semaphore": 4, "desc": [{
                "from": "SB", "from_off": 8192, "from_sizes": [2048, 128], "from_steps": [1, pb], "from_dtype": "float32",
                "to": "output", "to_sizes": [2048, 128], "to_steps": [1, 2048], "to_dtype": "float32"}]}
        ]
    });
    m.insert("sg00/SP.json".into(), serde_json::to_vec(&sp).unwrap());
    m.insert("sg00/Activation.json".into(), br#"{"name": "Activation.json", "dma": []}"#.to_vec());
    m.insert(
        "sg00/SP.asm".into(),
        b"dma_trigger queue=\"qIn\" block_id=0\n\
          event_semaphore wait=sem1>=1 ext_update=sem2+=1\n\
          dma_trigger queue=\"qOut\" block_id=1 wait=sem3>=1\n\
          event_semaphore wait=sem4>=1\n\
          pseudo_inst sub=exit_execution\n"
            .to_vec(),
    );
    m.insert(
        "sg00/Activation.asm".into(),
        b"activate func=relu in_dtype=float32 out_dtype=float32 partitions=128 input=[0x0; 1,512; 0,1; 0,1] output=[0x2000; 1,512; 0,1; 0,1] scale=1.0 bias=0.0 wait=sem2>=1 update=sem3++\n\
          pseudo_inst sub=exit_execution\n"
            .to_vec(),
    );
    pack_members(&contents.header.unwrap(), m)
}

#[test]
fn dma_in_relu_on_act_dma_out() {
    let (_dev, host) = host();
    let neff = relu_neff(host.device().info().arch.sbuf_partition_bytes);
    let id = host.load(&neff, 0, -1).unwrap();
    let x: Vec<f32> = (0..ROWS * COLS).map(|i| ((i * 37) % 1001) as f32 - 500.25).collect();
    let input: Vec<u8> = x.iter().flat_map(|f| f.to_le_bytes()).collect();
    let want: Vec<u8> = x.iter().flat_map(|f| f.max(0.0).to_le_bytes()).collect();
    for run in 0..3 {
        let (ins, outs, out) = host_io(input.clone(), BYTES);
        host.execute(id, &ins, &outs).unwrap_or_else(|e| panic!("run {run}: {e}"));
        let got = read_all(&out);
        if got != want {
            let f = |b: &[u8], i: usize| f32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap());
            let bad = (0..ROWS * COLS).find(|&i| f(&got, i) != f(&want, i)).unwrap();
            panic!("run {run}: element {bad}: got {} want {} (input {}); got[0..4] {:?}", f(&got, bad), f(&want, bad), x[bad], (0..4).map(|i| f(&got, i)).collect::<Vec<_>>());
        }
    }
}
