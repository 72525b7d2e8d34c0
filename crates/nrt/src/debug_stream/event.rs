//! One debug event (`ndebug_stream.h`'s DEBUG_TENSOR_READ) and its C
//! form: the 64-byte header and the payload of the libnrt 2.28 header,
//! a 1024-byte fixed part followed by the tile's bytes.
//!
//! libnrt 2.29 added a physical-core id and a global-rank id to the
//! payload without publishing where; we write the 2.28 layout, whose
//! `reserved0` stays zero (docs/c-api.md, "The debug stream").

use nrt_isa::dtype::Dtype;

/// `NDEBUG_STREAM_EVENT_TYPE_DEBUG_TENSOR_READ`.
pub const EVENT_TYPE_DEBUG_TENSOR_READ: u32 = 1;
/// `sizeof(ndebug_stream_event_header_t)`.
pub const HEADER_BYTES: usize = 64;
/// `sizeof(ndebug_stream_payload_debug_tensor_read_t)` without its data.
pub const PAYLOAD_FIXED_BYTES: usize = 1024;
/// Bytes of the payload's `prefix`.
pub const PREFIX_BYTES: usize = 512;
/// Bytes of the payload's `tensor_dtype`.
pub const DTYPE_BYTES: usize = 16;
/// Entries of the payload's `tensor_shape`.
pub const SHAPE_DIMS: usize = 8;

/// Payload offsets of the 2.28 layout.
mod off {
    pub const LOGICAL_NC_ID: usize = 512;
    pub const PIPE: usize = 516;
    pub const TENSOR_DTYPE: usize = 520;
    pub const TENSOR_SHAPE: usize = 536;
    pub const TENSOR_DATA_SIZE: usize = 600;
}

/// A tile a DEBUG_TENSOR_READ record copied off the device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DebugEvent {
    /// The record's prefix (what `device_print` was given).
    pub prefix: String,
    /// The logical core the model ran on.
    pub logical_nc_id: u32,
    /// The engine that executed the record (PE 0, ACT 1, POOL 2, DVE 3,
    /// SP 4): our reading of the header's `pipe`.
    pub pipe: u32,
    /// Element type.
    pub dtype: Dtype,
    /// Shape: partitions, then the pattern's dimensions outermost first,
    /// dimensions of count 1 left out (at least two entries).
    pub shape: Vec<u64>,
    /// The tile's bytes, row-major in `shape`.
    pub data: Vec<u8>,
}

impl DebugEvent {
    /// The shape of a tile of `partitions` partitions read through a
    /// pattern of counts `num` (dimension 0 innermost).
    pub fn shape_of(partitions: u16, num: [u16; 3]) -> Vec<u64> {
        let mut shape = vec![u64::from(partitions)];
        shape.extend(num.iter().rev().filter(|&&n| n != 1).map(|&n| u64::from(n)));
        if shape.len() == 1 {
            shape.push(1);
        }
        shape
    }

    /// The C header (`ndebug_stream_event_header_t`).
    pub fn header(&self) -> [u8; HEADER_BYTES] {
        let mut h = [0u8; HEADER_BYTES];
        h[0..8].copy_from_slice(&(self.payload_len() as u64).to_le_bytes());
        h[8..12].copy_from_slice(&EVENT_TYPE_DEBUG_TENSOR_READ.to_le_bytes());
        h
    }

    /// Bytes of the C payload.
    pub fn payload_len(&self) -> usize {
        PAYLOAD_FIXED_BYTES + self.data.len()
    }

    /// Writes the C payload (`ndebug_stream_payload_debug_tensor_read_t`
    /// and the data) into `out`, which holds [`DebugEvent::payload_len`]
    /// bytes. Strings are NUL-terminated and cut to fit; a shape of more
    /// than eight dimensions keeps its first eight.
    pub fn write_payload(&self, out: &mut [u8]) {
        out.fill(0);
        let p = self.prefix.as_bytes();
        let n = p.len().min(PREFIX_BYTES - 1);
        out[..n].copy_from_slice(&p[..n]);
        out[off::LOGICAL_NC_ID..off::LOGICAL_NC_ID + 4].copy_from_slice(&self.logical_nc_id.to_le_bytes());
        out[off::PIPE..off::PIPE + 4].copy_from_slice(&self.pipe.to_le_bytes());
        let d = self.dtype.name().as_bytes();
        let n = d.len().min(DTYPE_BYTES - 1);
        out[off::TENSOR_DTYPE..off::TENSOR_DTYPE + n].copy_from_slice(&d[..n]);
        for (i, dim) in self.shape.iter().take(SHAPE_DIMS).enumerate() {
            let at = off::TENSOR_SHAPE + 8 * i;
            out[at..at + 8].copy_from_slice(&dim.to_le_bytes());
        }
        out[off::TENSOR_DATA_SIZE..off::TENSOR_DATA_SIZE + 8].copy_from_slice(&(self.data.len() as u64).to_le_bytes());
        out[PAYLOAD_FIXED_BYTES..PAYLOAD_FIXED_BYTES + self.data.len()].copy_from_slice(&self.data);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_drop_unit_dimensions() {
        assert_eq!(DebugEvent::shape_of(4, [8, 1, 1]), vec![4, 8]);
        assert_eq!(DebugEvent::shape_of(2, [3, 5, 1]), vec![2, 5, 3]);
        assert_eq!(DebugEvent::shape_of(1, [1, 1, 1]), vec![1, 1]);
    }

    #[test]
    fn the_payload_follows_the_2_28_layout() {
        let e = DebugEvent { prefix: "x".into(), logical_nc_id: 3, pipe: 1, dtype: Dtype::Float32, shape: vec![2, 2], data: vec![7; 16] };
        let mut p = vec![0xAA; e.payload_len()];
        e.write_payload(&mut p);
        assert_eq!(&p[..2], b"x\0");
        assert_eq!(u32::from_le_bytes(p[512..516].try_into().unwrap()), 3);
        assert_eq!(u32::from_le_bytes(p[516..520].try_into().unwrap()), 1);
        assert_eq!(&p[520..528], b"float32\0");
        assert_eq!(u64::from_le_bytes(p[536..544].try_into().unwrap()), 2);
        assert_eq!(u64::from_le_bytes(p[552..560].try_into().unwrap()), 0, "unused dimensions are zero");
        assert_eq!(u64::from_le_bytes(p[600..608].try_into().unwrap()), 16);
        assert!(p[608..1024].iter().all(|&b| b == 0), "reserved0 is zero");
        assert_eq!(&p[1024..], &[7; 16]);
        let h = e.header();
        assert_eq!(u64::from_le_bytes(h[..8].try_into().unwrap()), 1040);
        assert_eq!(u32::from_le_bytes(h[8..12].try_into().unwrap()), 1);
    }
}
