//! The bootstrap's messages on the TCP connection between a rank and rank
//! 0: a 4-byte little-endian length, then a kind byte and its fields
//! (integers little-endian, byte strings prefixed by a u16 length).
//!
//! A rank sends `Hello`; rank 0 answers `Table` (every rank's endpoint) or
//! `Fail`; the rank confirms with `Ready`; rank 0 ends with `Go` (or
//! `Fail` when a rank died in between).

use super::{Member, Signature};
use crate::error::{NetError, NetResult};

const MAGIC: u32 = u32::from_le_bytes(*b"NRTB");
const VERSION: u16 = 1;
/// Largest frame accepted (a table of thousands of ranks fits easily).
pub(crate) const MAX_FRAME: usize = 16 << 20;

/// A rank's introduction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Hello {
    pub rank: u32,
    pub world_size: u32,
    pub member: Member,
    pub endpoint: Vec<u8>,
    pub signatures: Vec<Signature>,
}

/// Why rank 0 stopped the exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FailKind {
    Bootstrap = 0,
    Mismatch = 1,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Msg {
    Hello(Hello),
    Table(Vec<(Member, Vec<u8>)>),
    Ready,
    Go,
    Fail(FailKind, String),
}

impl Msg {
    /// The framed bytes.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut b = vec![0u8; 4];
        match self {
            Msg::Hello(h) => {
                b.push(1);
                b.extend_from_slice(&MAGIC.to_le_bytes());
                b.extend_from_slice(&VERSION.to_le_bytes());
                b.extend_from_slice(&h.rank.to_le_bytes());
                b.extend_from_slice(&h.world_size.to_le_bytes());
                put_member(&mut b, &h.member);
                put_bytes(&mut b, &h.endpoint);
                b.extend_from_slice(&(h.signatures.len() as u32).to_le_bytes());
                for s in &h.signatures {
                    b.extend_from_slice(&s.group.to_le_bytes());
                    b.extend_from_slice(&s.digest);
                }
            }
            Msg::Table(rows) => {
                b.push(2);
                b.extend_from_slice(&(rows.len() as u32).to_le_bytes());
                for (m, ep) in rows {
                    put_member(&mut b, m);
                    put_bytes(&mut b, ep);
                }
            }
            Msg::Ready => b.push(3),
            Msg::Go => b.push(4),
            Msg::Fail(kind, text) => {
                b.push(5);
                b.push(*kind as u8);
                put_bytes(&mut b, text.as_bytes());
            }
        }
        let len = (b.len() - 4) as u32;
        b[..4].copy_from_slice(&len.to_le_bytes());
        b
    }

    /// Takes one complete frame off the front of `buf`, if there is one.
    pub(crate) fn take(buf: &mut Vec<u8>) -> NetResult<Option<Msg>> {
        if buf.len() < 4 {
            return Ok(None);
        }
        let len = u32::from_le_bytes(buf[..4].try_into().expect("4")) as usize;
        if len == 0 || len > MAX_FRAME {
            return Err(bad(format!("a frame of {len} bytes")));
        }
        if buf.len() < 4 + len {
            return Ok(None);
        }
        let body: Vec<u8> = buf.drain(..4 + len).skip(4).collect();
        let mut r = Reader { b: &body, at: 1 };
        let msg = match body[0] {
            1 => {
                if r.u32()? != MAGIC {
                    return Err(bad("a hello without the bootstrap magic (not an nrt-rs rank?)".into()));
                }
                let v = r.u16()?;
                if v != VERSION {
                    return Err(bad(format!("a hello of protocol version {v}, expected {VERSION}")));
                }
                let rank = r.u32()?;
                let world_size = r.u32()?;
                let member = r.member()?;
                let endpoint = r.bytes()?.to_vec();
                let n = r.u32()? as usize;
                let mut signatures = Vec::with_capacity(n.min(4096));
                for _ in 0..n {
                    let group = r.u32()?;
                    let digest: [u8; 16] = r.take(16)?.try_into().expect("16");
                    signatures.push(Signature { group, digest });
                }
                Msg::Hello(Hello { rank, world_size, member, endpoint, signatures })
            }
            2 => {
                let n = r.u32()? as usize;
                let mut rows = Vec::with_capacity(n.min(65536));
                for _ in 0..n {
                    let m = r.member()?;
                    rows.push((m, r.bytes()?.to_vec()));
                }
                Msg::Table(rows)
            }
            3 => Msg::Ready,
            4 => Msg::Go,
            5 => {
                let kind = if r.take(1)?[0] == 1 { FailKind::Mismatch } else { FailKind::Bootstrap };
                Msg::Fail(kind, String::from_utf8_lossy(r.bytes()?).into_owned())
            }
            k => return Err(bad(format!("a message of unknown kind {k}"))),
        };
        Ok(Some(msg))
    }
}

fn put_bytes(b: &mut Vec<u8>, v: &[u8]) {
    let n = v.len().min(u16::MAX as usize);
    b.extend_from_slice(&(n as u16).to_le_bytes());
    b.extend_from_slice(&v[..n]);
}

fn put_member(b: &mut Vec<u8>, m: &Member) {
    b.extend_from_slice(&m.pid.to_le_bytes());
    put_bytes(b, m.host.as_bytes());
}

fn bad(what: String) -> NetError {
    NetError::Bootstrap(format!("malformed bootstrap message: {what}"))
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> NetResult<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.b.len()).ok_or_else(|| bad("a truncated message".into()))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u16(&mut self) -> NetResult<u16> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().expect("2")))
    }
    fn u32(&mut self) -> NetResult<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4")))
    }
    fn bytes(&mut self) -> NetResult<&'a [u8]> {
        let n = self.u16()? as usize;
        self.take(n)
    }
    fn member(&mut self) -> NetResult<Member> {
        let pid = self.u32()?;
        let host = String::from_utf8_lossy(self.bytes()?).into_owned();
        Ok(Member { host, pid })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_and_split_frames_wait() {
        let member = Member { host: "h1".into(), pid: 42 };
        let msgs = vec![
            Msg::Hello(Hello {
                rank: 3,
                world_size: 4,
                member: member.clone(),
                endpoint: vec![9; 128],
                signatures: vec![Signature { group: 1, digest: [7; 16] }],
            }),
            Msg::Table(vec![(member, vec![1, 2, 3])]),
            Msg::Ready,
            Msg::Go,
            Msg::Fail(FailKind::Mismatch, "no".into()),
        ];
        let mut buf: Vec<u8> = msgs.iter().flat_map(|m| m.encode()).collect();
        let tail = buf.split_off(buf.len() - 3);
        let mut got = Vec::new();
        while let Some(m) = Msg::take(&mut buf).unwrap() {
            got.push(m);
        }
        assert_eq!(got.len(), msgs.len() - 1, "the last frame is incomplete");
        buf.extend(tail);
        got.push(Msg::take(&mut buf).unwrap().unwrap());
        assert_eq!(got, msgs);
        let mut junk = vec![5, 0, 0, 0, 99, 0, 0, 0, 0];
        assert!(Msg::take(&mut junk).is_err());
        let mut huge = vec![0xff; 8];
        assert!(Msg::take(&mut huge).is_err());
    }
}
