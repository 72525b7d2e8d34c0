//! The engine over the in-process transport: two logical cores of this
//! process exchange tensors through the real rendezvous store on a free
//! loopback port.

use super::*;
use crate::InProcTransport;
use crate::limits::{BOOTSTRAP_TIMEOUT_VAR, NET_TIMEOUT_VAR};
use std::net::TcpListener;

struct Bytes(Mutex<Vec<u8>>);

impl Payload for Bytes {
    fn size(&self) -> u64 {
        lock(&self.0).len() as u64
    }
    fn read(&self, offset: u64, buf: &mut [u8]) -> Result<(), String> {
        let v = lock(&self.0);
        buf.copy_from_slice(&v[offset as usize..offset as usize + buf.len()]);
        Ok(())
    }
    fn write(&self, offset: u64, data: &[u8]) -> Result<(), String> {
        lock(&self.0)[offset as usize..offset as usize + data.len()].copy_from_slice(data);
        Ok(())
    }
}

fn bytes(v: Vec<u8>) -> Arc<Bytes> {
    Arc::new(Bytes(Mutex::new(v)))
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn settings(port: u16, connect_ms: u64) -> Settings {
    Settings {
        port,
        connect: Bound::new(Duration::from_millis(connect_ms), BOOTSTRAP_TIMEOUT_VAR),
        transfer: Bound::new(Duration::from_secs(20), NET_TIMEOUT_VAR),
    }
}

fn engine() -> (SendRecv, Arc<Mutex<Vec<String>>>) {
    let fabric = InProcTransport::with_sink(Arc::new(|_: &str| {}));
    let warnings: Arc<Mutex<Vec<String>>> = Arc::default();
    let w = Arc::clone(&warnings);
    let sink: WarnSink = Arc::new(move |m: &str| lock(&w).push(m.to_string()));
    (SendRecv::new(Box::new(move || Ok(Arc::new(fabric.clone()) as Arc<dyn Transport>)), sink), warnings)
}

fn until<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let end = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < end, "{what} never happened");
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// Cores 0 (sender) and 1 (receiver), connected.
fn pair(sr: &SendRecv, port: u16) -> (CommId, CommId) {
    sr.init(0, settings(port, 20_000)).unwrap();
    sr.init(1, settings(port, 20_000)).unwrap();
    let tx = sr.connect("127.0.0.1", 1, 0).unwrap();
    let rx = sr.accept("127.0.0.1", 0, 1).unwrap();
    until("the send comm to connect", || sr.test_comm(tx).unwrap().then_some(()));
    until("the receive comm to connect", || sr.test_comm(rx).unwrap().then_some(()));
    (tx, rx)
}

#[test]
fn a_tensor_slice_crosses_between_two_cores() {
    let (sr, _) = engine();
    let (tx, rx) = pair(&sr, free_port());
    let src = bytes((0..=255u8).cycle().take(10_000).collect());
    let dst = bytes(vec![0; 12_000]);
    let r = sr.recv(dst.clone(), 1000, 8000, rx).unwrap();
    let s = sr.send(src.clone(), 500, 6000, tx).unwrap();
    assert_eq!(until("the send", || sr.test_request(s).unwrap()), 6000);
    assert_eq!(until("the receive", || sr.test_request(r).unwrap()), 6000);
    sr.flush(1).unwrap();
    let got = lock(&dst.0).clone();
    assert_eq!(&got[1000..7000], &lock(&src.0)[500..6500]);
    assert!(got[..1000].iter().chain(&got[7000..]).all(|b| *b == 0));
    // A finished request's handle is dead.
    assert_eq!(sr.test_request(s).unwrap_err().kind, ErrorKind::InvalidHandle);
    sr.close(0).unwrap();
    sr.close(1).unwrap();
}

#[test]
fn posts_keep_their_order_and_the_pending_limit_holds() {
    let (sr, _) = engine();
    let (tx, rx) = pair(&sr, free_port());
    let n = MAX_PENDING_REQUESTS;
    let src: Vec<Arc<Bytes>> = (0..n).map(|i| bytes(vec![i as u8; 64])).collect();
    let sends: Vec<RequestId> = src.iter().map(|p| sr.send(p.clone(), 0, 64, tx).unwrap()).collect();
    let e = sr.send(src[0].clone(), 0, 64, tx).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Resource);
    assert!(e.message.contains("Maximum number of pending requests 128 reached"), "{}", e.message);
    let dst: Vec<Arc<Bytes>> = (0..n).map(|_| bytes(vec![0xEE; 64])).collect();
    let recvs: Vec<RequestId> = dst.iter().map(|p| sr.recv(p.clone(), 0, 64, rx).unwrap()).collect();
    for (s, r) in sends.iter().zip(&recvs) {
        until("a send", || sr.test_request(*s).unwrap());
        until("a receive", || sr.test_request(*r).unwrap());
    }
    for (i, d) in dst.iter().enumerate() {
        assert!(lock(&d.0).iter().all(|b| *b == i as u8), "message {i} arrived out of order");
    }
    // The slots are free again.
    let again = sr.send(src[0].clone(), 0, 64, tx).unwrap();
    let d = bytes(vec![0; 64]);
    let rr = sr.recv(d, 0, 64, rx).unwrap();
    until("the send", || sr.test_request(again).unwrap());
    until("the receive", || sr.test_request(rr).unwrap());
}

#[test]
fn bad_posts_get_their_statuses() {
    let (sr, _) = engine();
    let port = free_port();
    let (tx, rx) = pair(&sr, port);
    let p = bytes(vec![0; 100]);
    let e = sr.send(p.clone(), 90, 11, tx).unwrap_err();
    assert!(e.kind == ErrorKind::Failure && e.message.contains("out of bounds"), "{e:?}");
    let e = sr.send(p.clone(), 0, 10, rx).unwrap_err();
    assert!(e.kind == ErrorKind::Failure && e.message.contains("a send posted on a receive communicator"), "{e:?}");
    let e = sr.recv(p.clone(), 0, 10, tx).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Failure);
    // A communicator still connecting refuses posts.
    let lonely = sr.connect("127.0.0.1", 5, 0).unwrap();
    assert!(!sr.test_comm(lonely).unwrap());
    let e = sr.send(p.clone(), 0, 10, lonely).unwrap_err();
    assert!(e.kind == ErrorKind::InvalidHandle && e.message.contains("unconnected"), "{e:?}");
    // Foreign and stale handles.
    assert_eq!(sr.test_comm(CommId::new(0, 77, 12345)).unwrap_err().kind, ErrorKind::InvalidHandle);
    assert_eq!(sr.test_request(RequestId::new(tx, 3, 999)).unwrap_err().kind, ErrorKind::InvalidHandle);
    assert!(CommId::from_raw(0).is_none() && RequestId::from_raw(tx.raw()).is_none() && CommId::from_raw(tx.raw()) == Some(tx));
    // Bad peers and cores.
    assert_eq!(sr.connect("not-an-ip", 1, 0).unwrap_err().kind, ErrorKind::Failure);
    assert!(sr.connect("127.0.0.1", 128, 0).unwrap_err().message.contains("peer_lnc 128"));
    assert!(sr.connect("127.0.0.1", 1, 9).unwrap_err().message.contains("not initialised on logical neuron core 9"));
    assert!(sr.init(-1, settings(port, 1000)).unwrap_err().message.contains("out of range"));
    assert!(sr.init(0, settings(port, 1000)).unwrap_err().message.contains("already initialised"));
}

#[test]
fn a_peer_that_never_comes_times_out_naming_it_and_close_then_fails() {
    let (sr, warnings) = engine();
    let port = free_port();
    sr.init(3, settings(port, 400)).unwrap();
    let tx = sr.connect("127.0.0.1", 4, 3).unwrap();
    let e = until("the connect to time out", || match sr.test_comm(tx) {
        Ok(false) => None,
        Ok(true) => panic!("connected to nobody"),
        Err(e) => Some(e),
    });
    assert_eq!(e.kind, ErrorKind::Timeout);
    assert!(e.message.contains("core 4 at 127.0.0.1") && e.message.contains(BOOTSTRAP_TIMEOUT_VAR), "{}", e.message);
    assert!(e.message.contains("has not published its listen handle"), "{}", e.message);
    assert!(lock(&warnings).iter().any(|w| w.contains("Timeout waiting for") && w.contains("retrying")), "{:?}", lock(&warnings));
    // Closing with a communicator that never connected fails, and the
    // core then refuses a new init, as libnrt's does.
    let e = sr.close(3).unwrap_err();
    assert!(e.message.contains("is not connected"), "{}", e.message);
    let e = sr.init(3, settings(port, 400)).unwrap_err();
    assert!(e.message.contains("its last close failed"), "{}", e.message);
    assert!(sr.close(3).unwrap_err().message.contains("not initialised"));
}

#[test]
fn a_transfer_nobody_answers_times_out_and_frees_its_slot() {
    let (sr, _) = engine();
    let port = free_port();
    sr.init(0, settings(port, 20_000)).unwrap();
    sr.init(1, Settings { transfer: Bound::new(Duration::from_millis(300), NET_TIMEOUT_VAR), ..settings(port, 20_000) }).unwrap();
    let tx = sr.connect("127.0.0.1", 1, 0).unwrap();
    let rx = sr.accept("127.0.0.1", 0, 1).unwrap();
    until("connected", || (sr.test_comm(tx).unwrap() && sr.test_comm(rx).unwrap()).then_some(()));
    let r = sr.recv(bytes(vec![0; 16]), 0, 16, rx).unwrap();
    let e = until("the receive to time out", || match sr.test_request(r) {
        Ok(None) => None,
        Ok(Some(_)) => panic!("received from nobody"),
        Err(e) => Some(e),
    });
    assert!(e.kind == ErrorKind::Timeout && e.message.contains(NET_TIMEOUT_VAR) && e.message.contains("a receive of 16 bytes"), "{}", e.message);
    assert_eq!(sr.test_request(r).unwrap_err().kind, ErrorKind::InvalidHandle);
    // Nothing is in flight any more, so both cores close cleanly.
    sr.close(1).unwrap();
    sr.close(0).unwrap();
}

#[test]
fn settings_name_the_variable_to_set() {
    let b = Bound::new(Duration::from_secs(1), NET_TIMEOUT_VAR);
    assert_eq!(Settings::new(true, Some(5000), b, b).unwrap().port, 5000);
    let off = Settings::new(false, Some(5000), b, b).unwrap_err();
    assert!(off.kind == ErrorKind::Failure && off.message.contains(&format!("set {ENABLE_VAR}=1")), "{off:?}");
    let no_port = Settings::new(true, None, b, b).unwrap_err();
    assert!(no_port.kind == ErrorKind::Failure && no_port.message.contains(PORT_VAR) && no_port.message.contains("1-65535"), "{no_port:?}");
    let key = handle_key(1, 2, b"h");
    assert_eq!(key, [b"handle-".as_slice(), &1u32.to_le_bytes(), &2u32.to_le_bytes(), b"h"].concat());
}

/// A tensor that claims more bytes than any host has (never read).
struct Claims(u64);

impl Payload for Claims {
    fn size(&self) -> u64 {
        self.0
    }
    fn read(&self, _: u64, _: &mut [u8]) -> Result<(), String> {
        Err("never read".into())
    }
    fn write(&self, _: u64, _: &[u8]) -> Result<(), String> {
        Err("never written".into())
    }
}

/// A transfer whose staging buffer the host cannot give is the post's
/// NRT_RESOURCE, and the request slot stays free. Before the reservation
/// moved into `post`, growing the buffer aborted the process, so the
/// posts run in a child process (this test binary, filtered to this test).
#[test]
fn a_transfer_the_host_cannot_stage_is_a_resource_error() {
    const CHILD: &str = "NRT_NET_TEST_CHILD";
    if std::env::var_os(CHILD).is_none() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "sendrecv::tests::a_transfer_the_host_cannot_stage_is_a_resource_error", "--nocapture", "--test-threads=1"])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success() && text.contains("1 passed"), "child failed ({}):\n{text}", out.status);
        return;
    }
    let (sr, _) = engine();
    let (tx, rx) = pair(&sr, free_port());
    for (comm, send) in [(tx, true), (rx, false), (tx, true)] {
        let huge: Arc<dyn Payload> = Arc::new(Claims(1 << 50));
        let r = if send { sr.send(huge, 0, 1 << 50, comm) } else { sr.recv(huge, 0, 1 << 50, comm) };
        let e = r.unwrap_err();
        assert_eq!(e.kind, ErrorKind::Resource, "{}", e.message);
        assert!(e.message.contains("1125899906842624 bytes"), "{}", e.message);
    }
    // Every slot is still free: a real transfer of the pending limit's
    // count of requests still posts.
    let src = bytes(vec![7; 8]);
    for _ in 0..MAX_PENDING_REQUESTS {
        sr.send(src.clone(), 0, 8, tx).unwrap();
    }
}

/// The in-process transport, except that `listen` (which the service
/// thread calls in a receiver's rendezvous) panics or blocks until told.
struct Faulty {
    inner: InProcTransport,
    listen: Box<dyn Fn() + Send + Sync>,
}

impl Transport for Faulty {
    fn name(&self) -> String {
        "faulty".into()
    }
    fn listen(&self) -> NetResult<(Handle, Box<dyn Listener>)> {
        (self.listen)();
        self.inner.listen()
    }
    fn connect(&self, handle: &Handle) -> NetResult<Box<dyn SendComm>> {
        self.inner.connect(handle)
    }
    unsafe fn register(&self, base: *const u8, len: usize) -> NetResult<crate::transport::Registration> {
        // SAFETY: the caller's promise, passed on.
        unsafe { self.inner.register(base, len) }
    }
}

fn faulty_engine(listen: impl Fn() + Send + Sync + Clone + 'static) -> SendRecv {
    let inner = InProcTransport::with_sink(Arc::new(|_: &str| {}));
    let opener: Opener = Box::new(move || Ok(Arc::new(Faulty { inner: inner.clone(), listen: Box::new(listen.clone()) }) as Arc<dyn Transport>));
    SendRecv::new(opener, Arc::new(|_: &str| {}))
}

/// The service thread panics in a receiver's rendezvous: the
/// communicator's test fails at once naming the panic (not at the end of
/// its connect bound), and the core still closes.
#[test]
fn a_service_thread_that_dies_fails_what_it_would_have_advanced() {
    let sr = faulty_engine(|| panic!("the listener fails"));
    sr.init(1, settings(free_port(), 600_000)).unwrap();
    let rx = sr.accept("127.0.0.1", 0, 1).unwrap();
    let e = until("the receive comm to fail", || match sr.test_comm(rx) {
        Ok(false) => None,
        Ok(true) => panic!("connected with a panicking listener"),
        Err(e) => Some(e),
    });
    assert_eq!(e.kind, ErrorKind::Failure);
    assert!(e.message.contains("never connected: the send/recv service thread died (it panicked: the listener fails)"), "{}", e.message);
    let e = sr.close(1).unwrap_err();
    assert!(e.message.contains("is not connected") && !e.message.contains("did not stop"), "{}", e.message);
}

/// A service thread stuck inside one step (here a listen that does not
/// return): close gives up after its limit and fails naming the thread,
/// instead of joining it for ever.
#[test]
fn close_does_not_wait_for_ever_for_a_stuck_service_thread() {
    let (go, stuck) = std::sync::mpsc::channel::<()>();
    let stuck = Arc::new(Mutex::new(stuck));
    let sr = faulty_engine(move || {
        let _ = lock(&stuck).recv();
    });
    sr.init(2, settings(free_port(), 600_000)).unwrap();
    let _rx = sr.accept("127.0.0.1", 0, 2).unwrap();
    // Let the service thread reach the listen.
    std::thread::sleep(Duration::from_millis(200));
    let e = sr.close(2).unwrap_err();
    assert!(e.message.contains(&format!("its service thread did not stop within {}", secs(STOP_LIMIT))), "{}", e.message);
    drop(go);
}
