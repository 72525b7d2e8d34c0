//! `--processes P` of `nrt cc-test` and `nrt run --ranks`: the command
//! runs again as P worker processes on this machine, each owning its
//! share of the logical cores (`NEURON_RT_VISIBLE_CORES`), meeting at
//! `NEURON_RT_ROOT_COMM_ID` (a free loopback port unless set) and moving
//! bytes over libfabric (tcp on `lo` unless `FI_TCP_IFACE` names an
//! interface); the launcher reads their standard output.

use anyhow::{Result, anyhow, bail};
use nrt::config::Env;

/// NEURON_RT_ROOT_COMM_ID as the runtime's configuration reads it (a
/// malformed value is the bootstrap's error, named before any worker
/// starts).
pub fn root_comm_id() -> Result<Option<String>> {
    let config = nrt::config::Config::from_env(&Env::from_process()).map_err(|e| anyhow!("{e}"))?;
    match config.collectives.root_comm_id {
        None => Ok(None),
        Some(nrt::config::RootComm::Addr(a)) => Ok(Some(a.to_string())),
        Some(nrt::config::RootComm::Malformed { message, .. }) => bail!("{message}"),
    }
}

/// One worker's end: its index, exit status and standard output.
pub struct Finished {
    /// The worker's index (0..P).
    pub index: usize,
    /// Its exit status, as text.
    pub status: String,
    /// Whether it exited with 0.
    pub success: bool,
    /// Everything it printed on stdout.
    pub stdout: String,
}

/// Runs this command again as `processes` workers, worker `p` with
/// `var=p` and logical cores `p * per .. (p + 1) * per` visible, and waits
/// for every one (their stderr is this process's).
pub fn run(processes: usize, per: usize, var: &str) -> Result<Vec<Finished>> {
    let root = match root_comm_id()? {
        Some(r) => r,
        None => format!("127.0.0.1:{}", std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port()),
    };
    let exe = std::env::current_exe()?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut children = Vec::new();
    for p in 0..processes {
        let cores = (p * per..(p + 1) * per).map(|c| c.to_string()).collect::<Vec<_>>().join(",");
        let mut cmd = std::process::Command::new(&exe);
        cmd.args(&args).env(var, p.to_string()).env("NEURON_RT_ROOT_COMM_ID", &root).env("NEURON_RT_VISIBLE_CORES", cores).stdout(std::process::Stdio::piped());
        if std::env::var_os("FI_TCP_IFACE").is_none() {
            cmd.env("FI_TCP_IFACE", "lo");
        }
        children.push(cmd.spawn().map_err(|e| anyhow!("cannot start worker {p} ({}): {e}", exe.display()))?);
    }
    let mut finished = Vec::new();
    for (index, c) in children.into_iter().enumerate() {
        let out = c.wait_with_output().map_err(|e| anyhow!("worker {index}: {e}"))?;
        finished.push(Finished { index, status: out.status.to_string(), success: out.status.success(), stdout: String::from_utf8_lossy(&out.stdout).into_owned() });
    }
    Ok(finished)
}

/// This process's worker index under `var` when `processes` > 1 (None:
/// the launcher, or a single process).
pub fn index(var: &str, processes: usize) -> Result<Option<usize>> {
    match std::env::var(var) {
        Ok(w) if processes > 1 => Ok(Some(w.parse::<usize>().ok().filter(|p| *p < processes).ok_or_else(|| anyhow!("{var}={w}: expected a process index below {processes}"))?)),
        _ => Ok(None),
    }
}
