//! The rendezvous store of async send/recv: a small key-value store on
//! TCP at `NEURON_RT_ASYNC_SENDRECV_BOOTSTRAP_PORT`, one per host and
//! user, that lets a receiving core publish its transport listen handle
//! and the sending core on another host fetch it.
//!
//! libnrt embeds the same kind of store and elects its server by a file
//! lock per user; the process that takes the lock serves every process of
//! that user on the host. Ours does the same, with the port in the lock's
//! name, so two worlds on different ports (tests, two jobs) do not take
//! each other for their server. The store carries only control bytes
//! (host names and 128-byte listen handles); tensor bytes go through the
//! transport.
//!
//! Wire format (ours; little-endian): a request is `op: u8` (1 SET, 2
//! GET), `key_len: u16`, `value_len: u16`, the key, the value; the answer
//! is `status: u8` (0 OK, 1 NOT_FOUND, 2 refused), `value_len: u16`, the
//! value. One request per connection.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// Longest key or value the store accepts.
pub const MAX_FIELD: usize = 1024;

const OP_SET: u8 = 1;
const OP_GET: u8 = 2;
const ST_OK: u8 = 0;
const ST_NOT_FOUND: u8 = 1;
const ST_REFUSED: u8 = 2;

/// How long one request may take on an established connection; a
/// request is one step of a connect state machine, retried by the caller
/// until its own bound.
const IO_LIMIT: Duration = Duration::from_millis(500);

/// What a GET found.
#[derive(Debug, PartialEq, Eq)]
pub enum Lookup {
    /// The key's value.
    Found(Vec<u8>),
    /// Nobody has set the key yet (ask again later).
    NotFound,
}

/// A store request that could not complete; `retry` says whether asking
/// again later may succeed (the server is not up yet, a busy moment).
#[derive(Debug)]
pub struct KvError {
    /// What went wrong, naming the store's address.
    pub message: String,
    /// Whether a later attempt may succeed.
    pub retry: bool,
}

/// The store of this process, when it won the election for `port`.
struct Server {
    port: u16,
    /// Keeps the lock file (and so the election) for the process's life.
    _lock: File,
}

static SERVERS: OnceLock<Mutex<Vec<Server>>> = OnceLock::new();

/// Makes sure some process of this user on this host serves the store
/// at `port`: takes the election lock without blocking and, when this
/// process wins it, binds the port and serves on a thread for the rest
/// of the process's life. Losing the election is fine (another process
/// serves); a won election whose port is taken by something else is an
/// error naming the port.
pub fn ensure_server(port: u16) -> Result<(), String> {
    let servers = SERVERS.get_or_init(|| Mutex::new(Vec::new()));
    let mut servers = servers.lock().unwrap_or_else(|e| e.into_inner());
    if servers.iter().any(|s| s.port == port) {
        return Ok(());
    }
    let path = lock_path(port);
    let lock = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("cannot open the key-value store's election lock {}: {e}", path.display()))?;
    if lock.try_lock().is_err() {
        // Another process of this user serves the store on this port.
        return Ok(());
    }
    let listener = bind(port)?;
    let map: Arc<Mutex<HashMap<Vec<u8>, Vec<u8>>>> = Arc::default();
    std::thread::Builder::new()
        .name(format!("nrt-sr-kv-{port}"))
        .spawn(move || {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| serve(listener, map)));
            // The store stopped (it serves for ever otherwise): this
            // process gives up the election, so the next core brought up
            // serves it again; clients retry in the meantime, within
            // their own bounds.
            if let Some(servers) = SERVERS.get() {
                servers.lock().unwrap_or_else(|e| e.into_inner()).retain(|s| s.port != port);
            }
        })
        .map_err(|e| format!("cannot start the key-value store thread: {e}"))?;
    servers.push(Server { port, _lock: lock });
    Ok(())
}

/// The election lock of the store at `port` for this user.
pub fn lock_path(port: u16) -> std::path::PathBuf {
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    std::env::temp_dir().join(format!("nrt_kv_store_server_lock_uid_{uid}_port_{port}"))
}

fn bind(port: u16) -> Result<TcpListener, String> {
    // Dual-stack where the host allows it, so IPv6 peers reach us too.
    let v6 = SocketAddr::new(IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED), port);
    let v4 = SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), port);
    TcpListener::bind(v6).or_else(|_| TcpListener::bind(v4)).map_err(|e| {
        format!(
            "cannot serve the async send/recv key-value store on port {port} \
             (NEURON_RT_ASYNC_SENDRECV_BOOTSTRAP_PORT): {e}"
        )
    })
}

fn serve(listener: TcpListener, map: Arc<Mutex<HashMap<Vec<u8>, Vec<u8>>>>) {
    for conn in listener.incoming() {
        let Ok(mut conn) = conn else { continue };
        let map = Arc::clone(&map);
        // Requests are tiny; one at a time on this thread keeps the store
        // simple. A client that stalls is cut off by the I/O limit.
        let _ = conn.set_read_timeout(Some(IO_LIMIT));
        let _ = conn.set_write_timeout(Some(IO_LIMIT));
        let _ = answer(&mut conn, &map);
    }
}

fn answer(conn: &mut TcpStream, map: &Mutex<HashMap<Vec<u8>, Vec<u8>>>) -> std::io::Result<()> {
    let mut head = [0u8; 5];
    conn.read_exact(&mut head)?;
    let (op, klen, vlen) = (head[0], u16::from_le_bytes([head[1], head[2]]) as usize, u16::from_le_bytes([head[3], head[4]]) as usize);
    if klen > MAX_FIELD || vlen > MAX_FIELD {
        return reply(conn, ST_REFUSED, &[]);
    }
    let mut body = vec![0u8; klen + vlen];
    conn.read_exact(&mut body)?;
    let (key, value) = body.split_at(klen);
    let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
    match op {
        OP_SET => {
            map.insert(key.to_vec(), value.to_vec());
            drop(map);
            reply(conn, ST_OK, &[])
        }
        OP_GET => match map.get(key).cloned() {
            Some(v) => {
                drop(map);
                reply(conn, ST_OK, &v)
            }
            None => {
                drop(map);
                reply(conn, ST_NOT_FOUND, &[])
            }
        },
        _ => {
            drop(map);
            reply(conn, ST_REFUSED, &[])
        }
    }
}

fn reply(conn: &mut TcpStream, status: u8, value: &[u8]) -> std::io::Result<()> {
    let len = (value.len() as u16).to_le_bytes();
    let mut out = Vec::with_capacity(3 + value.len());
    out.push(status);
    out.extend_from_slice(&len);
    out.extend_from_slice(value);
    conn.write_all(&out)
}

/// Sets `key` to `value` in the store at `host:port`.
pub fn set(host: IpAddr, port: u16, key: &[u8], value: &[u8]) -> Result<(), KvError> {
    match request(host, port, OP_SET, key, value)? {
        (ST_OK, _) => Ok(()),
        (s, _) => Err(KvError { message: format!("the key-value store at {} refused a SET (status {s})", addr(host, port)), retry: false }),
    }
}

/// Reads `key` from the store at `host:port`.
pub fn get(host: IpAddr, port: u16, key: &[u8]) -> Result<Lookup, KvError> {
    match request(host, port, OP_GET, key, &[])? {
        (ST_OK, v) => Ok(Lookup::Found(v)),
        (ST_NOT_FOUND, _) => Ok(Lookup::NotFound),
        (s, _) => Err(KvError { message: format!("the key-value store at {} refused a GET (status {s})", addr(host, port)), retry: false }),
    }
}

fn addr(host: IpAddr, port: u16) -> SocketAddr {
    SocketAddr::new(host, port)
}

fn request(host: IpAddr, port: u16, op: u8, key: &[u8], value: &[u8]) -> Result<(u8, Vec<u8>), KvError> {
    if key.len() > MAX_FIELD || value.len() > MAX_FIELD {
        return Err(KvError { message: format!("a key-value store field is longer than {MAX_FIELD} bytes"), retry: false });
    }
    let at = addr(host, port);
    // Not listening yet (the serving process is still starting) or a
    // moment of overload: the caller asks again on its next step.
    let mut conn = TcpStream::connect_timeout(&at, IO_LIMIT)
        .map_err(|e| KvError { message: format!("cannot reach the key-value store at {at}: {e}"), retry: true })?;
    let io = |e: std::io::Error| KvError { message: format!("the key-value store at {at} failed mid-request: {e}"), retry: true };
    conn.set_read_timeout(Some(IO_LIMIT)).map_err(io)?;
    conn.set_write_timeout(Some(IO_LIMIT)).map_err(io)?;
    let mut out = Vec::with_capacity(5 + key.len() + value.len());
    out.push(op);
    out.extend_from_slice(&(key.len() as u16).to_le_bytes());
    out.extend_from_slice(&(value.len() as u16).to_le_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(value);
    conn.write_all(&out).map_err(io)?;
    let mut head = [0u8; 3];
    conn.read_exact(&mut head).map_err(io)?;
    let mut v = vec![0u8; u16::from_le_bytes([head[1], head[2]]) as usize];
    conn.read_exact(&mut v).map_err(io)?;
    Ok((head[0], v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn free_port() -> u16 {
        TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
    }

    #[test]
    fn set_then_get_and_missing_keys() {
        let port = free_port();
        ensure_server(port).unwrap();
        // A second call in the same process is a no-op.
        ensure_server(port).unwrap();
        let lo = IpAddr::V4(Ipv4Addr::LOCALHOST);
        assert_eq!(get(lo, port, b"k").unwrap(), Lookup::NotFound);
        set(lo, port, b"k", b"v1").unwrap();
        assert_eq!(get(lo, port, b"k").unwrap(), Lookup::Found(b"v1".to_vec()));
        set(lo, port, b"k", b"v2").unwrap();
        assert_eq!(get(lo, port, b"k").unwrap(), Lookup::Found(b"v2".to_vec()));
        assert!(lock_path(port).exists());
    }

    #[test]
    fn nobody_serving_is_a_retryable_error_naming_the_address() {
        let port = free_port();
        let e = get(IpAddr::V4(Ipv4Addr::LOCALHOST), port, b"k").unwrap_err();
        assert!(e.retry && e.message.contains(&format!("127.0.0.1:{port}")), "{}", e.message);
    }

    #[test]
    fn oversized_fields_are_refused_before_sending() {
        let e = set(IpAddr::V4(Ipv4Addr::LOCALHOST), 1, &vec![0; MAX_FIELD + 1], b"").unwrap_err();
        assert!(!e.retry && e.message.contains("longer than"), "{}", e.message);
    }
}
