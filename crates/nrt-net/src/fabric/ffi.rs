//! The part of libfabric's C interface this crate uses, written by hand
//! from the layouts of Debian 12's libfabric-dev 1.17 headers
//! (`<rdma/fabric.h>`, `fi_domain.h`, `fi_endpoint.h`, `fi_eq.h`,
//! `fi_tagged.h`, `fi_cm.h`) and checked against them by the layout test
//! below (it compiles a C file with the system headers when they exist).
//!
//! The library exports only a few functions (`fi_getinfo`, `fi_fabric`,
//! `fi_freeinfo`, `fi_dupinfo`, `fi_strerror`); everything else is a
//! `static inline` call through the ops tables inside the objects, so the
//! tables are declared here. Entries we never call are kept as opaque
//! pointers, so the tables keep their size and offsets.
//!
//! These declarations are derived from libfabric's headers, whose notice
//! follows.
//!
//! ```text
//! Copyright (c) 2013-2017 Intel Corporation. All rights reserved.
//! Copyright (c) 2016 Cisco Systems, Inc. All rights reserved.
//! (C) Copyright 2020 Hewlett Packard Enterprise Development LP
//! Copyright (c) 2022 DataDirect Networks, Inc. All rights reserved.
//!
//! This software is available to you under a choice of one of two
//! licenses.  You may choose to be licensed under the terms of the GNU
//! General Public License (GPL) Version 2, available from the file
//! COPYING in the main directory of this source tree, or the
//! BSD license below:
//!
//!     Redistribution and use in source and binary forms, with or
//!     without modification, are permitted provided that the following
//!     conditions are met:
//!
//!      - Redistributions of source code must retain the above
//!        copyright notice, this list of conditions and the following
//!        disclaimer.
//!
//!      - Redistributions in binary form must reproduce the above
//!        copyright notice, this list of conditions and the following
//!        disclaimer in the documentation and/or other materials
//!        provided with the distribution.
//!
//! THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND,
//! EXPRESS OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF
//! MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
//! NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS
//! BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN
//! ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN
//! CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
//! SOFTWARE.
//! ```

#![allow(non_camel_case_types, dead_code)]

use std::ffi::{c_char, c_int, c_void};

/// `fi_addr_t`.
pub type fi_addr_t = u64;
/// An entry of an ops table we never call.
pub type Unused = *const c_void;

/// `FI_VERSION(1, 17)`: the API version we request.
pub const FI_VERSION_1_17: u32 = (1 << 16) | 17;

pub const FI_MSG: u64 = 1 << 1;
pub const FI_TAGGED: u64 = 1 << 3;
pub const FI_RECV: u64 = 1 << 10;
pub const FI_SEND: u64 = 1 << 11;
pub const FI_TRANSMIT: u64 = FI_SEND;
pub const FI_CONTEXT: u64 = 1 << 59;
pub const FI_CONTEXT2: u64 = 1 << 52;
pub const FI_ADDR_UNSPEC: fi_addr_t = u64::MAX;
pub const FI_EP_RDM: c_int = 3;
pub const FI_AV_TABLE: c_int = 2;
pub const FI_CQ_FORMAT_TAGGED: c_int = 4;
pub const FI_WAIT_NONE: c_int = 0;
/// `FI_ENABLE`, a control command.
pub const FI_ENABLE: c_int = 6;
pub const FI_MR_LOCAL: c_int = 1 << 2;
pub const FI_MR_VIRT_ADDR: c_int = 1 << 4;
pub const FI_MR_ALLOCATED: c_int = 1 << 5;
pub const FI_MR_PROV_KEY: c_int = 1 << 6;
pub const FI_MR_ENDPOINT: c_int = 1 << 9;
pub const FI_MR_HMEM: c_int = 1 << 10;
/// Errors are returned negated.
pub const FI_EAGAIN: isize = libc::EAGAIN as isize;
pub const FI_EAVAIL: isize = 259;
pub const FI_ETRUNC: c_int = 265;
pub const FI_ECANCELED: c_int = libc::ECANCELED;

#[repr(C)]
pub struct fi_ops {
    pub size: usize,
    pub close: Option<unsafe extern "C" fn(fid: *mut fid) -> c_int>,
    pub bind: Option<unsafe extern "C" fn(fid: *mut fid, bfid: *mut fid, flags: u64) -> c_int>,
    pub control: Option<unsafe extern "C" fn(fid: *mut fid, command: c_int, arg: *mut c_void) -> c_int>,
    pub ops_open: Unused,
    pub tostr: Unused,
    pub ops_set: Unused,
}

#[repr(C)]
pub struct fid {
    pub fclass: usize,
    pub context: *mut c_void,
    pub ops: *mut fi_ops,
}

#[repr(C)]
pub struct fi_tx_attr {
    pub caps: u64,
    pub mode: u64,
    pub op_flags: u64,
    pub msg_order: u64,
    pub comp_order: u64,
    pub inject_size: usize,
    pub size: usize,
    pub iov_limit: usize,
    pub rma_iov_limit: usize,
    pub tclass: u32,
}

#[repr(C)]
pub struct fi_rx_attr {
    pub caps: u64,
    pub mode: u64,
    pub op_flags: u64,
    pub msg_order: u64,
    pub comp_order: u64,
    pub total_buffered_recv: usize,
    pub size: usize,
    pub iov_limit: usize,
}

#[repr(C)]
pub struct fi_ep_attr {
    pub type_: c_int,
    pub protocol: u32,
    pub protocol_version: u32,
    pub max_msg_size: usize,
    pub msg_prefix_size: usize,
    pub max_order_raw_size: usize,
    pub max_order_war_size: usize,
    pub max_order_waw_size: usize,
    pub mem_tag_format: u64,
    pub tx_ctx_cnt: usize,
    pub rx_ctx_cnt: usize,
    pub auth_key_size: usize,
    pub auth_key: *mut u8,
}

#[repr(C)]
pub struct fi_domain_attr {
    pub domain: *mut fid_domain,
    pub name: *mut c_char,
    pub threading: c_int,
    pub control_progress: c_int,
    pub data_progress: c_int,
    pub resource_mgmt: c_int,
    pub av_type: c_int,
    pub mr_mode: c_int,
    pub mr_key_size: usize,
    pub cq_data_size: usize,
    pub cq_cnt: usize,
    pub ep_cnt: usize,
    pub tx_ctx_cnt: usize,
    pub rx_ctx_cnt: usize,
    pub max_ep_tx_ctx: usize,
    pub max_ep_rx_ctx: usize,
    pub max_ep_stx_ctx: usize,
    pub max_ep_srx_ctx: usize,
    pub cntr_cnt: usize,
    pub mr_iov_limit: usize,
    pub caps: u64,
    pub mode: u64,
    pub auth_key: *mut u8,
    pub auth_key_size: usize,
    pub max_err_data: usize,
    pub mr_cnt: usize,
    pub tclass: u32,
}

#[repr(C)]
pub struct fi_fabric_attr {
    pub fabric: *mut fid_fabric,
    pub name: *mut c_char,
    pub prov_name: *mut c_char,
    pub prov_version: u32,
    pub api_version: u32,
}

#[repr(C)]
pub struct fi_info {
    pub next: *mut fi_info,
    pub caps: u64,
    pub mode: u64,
    pub addr_format: u32,
    pub src_addrlen: usize,
    pub dest_addrlen: usize,
    pub src_addr: *mut c_void,
    pub dest_addr: *mut c_void,
    pub handle: *mut fid,
    pub tx_attr: *mut fi_tx_attr,
    pub rx_attr: *mut fi_rx_attr,
    pub ep_attr: *mut fi_ep_attr,
    pub domain_attr: *mut fi_domain_attr,
    pub fabric_attr: *mut fi_fabric_attr,
    pub nic: *mut c_void,
}

#[repr(C)]
pub struct fi_ops_fabric {
    pub size: usize,
    pub domain: Option<
        unsafe extern "C" fn(fabric: *mut fid_fabric, info: *mut fi_info, dom: *mut *mut fid_domain, ctx: *mut c_void) -> c_int,
    >,
    pub passive_ep: Unused,
    pub eq_open: Unused,
    pub wait_open: Unused,
    pub trywait: Unused,
    pub domain2: Unused,
}

#[repr(C)]
pub struct fid_fabric {
    pub fid: fid,
    pub ops: *mut fi_ops_fabric,
    pub api_version: u32,
}

#[repr(C)]
pub struct fi_ops_domain {
    pub size: usize,
    pub av_open: Option<
        unsafe extern "C" fn(domain: *mut fid_domain, attr: *mut fi_av_attr, av: *mut *mut fid_av, ctx: *mut c_void) -> c_int,
    >,
    pub cq_open: Option<
        unsafe extern "C" fn(domain: *mut fid_domain, attr: *mut fi_cq_attr, cq: *mut *mut fid_cq, ctx: *mut c_void) -> c_int,
    >,
    pub endpoint: Option<
        unsafe extern "C" fn(domain: *mut fid_domain, info: *mut fi_info, ep: *mut *mut fid_ep, ctx: *mut c_void) -> c_int,
    >,
    pub scalable_ep: Unused,
    pub cntr_open: Unused,
    pub poll_open: Unused,
    pub stx_ctx: Unused,
    pub srx_ctx: Unused,
    pub query_atomic: Unused,
    pub query_collective: Unused,
    pub endpoint2: Unused,
}

#[repr(C)]
pub struct fi_ops_mr {
    pub size: usize,
    #[allow(clippy::type_complexity)]
    pub reg: Option<
        unsafe extern "C" fn(
            fid: *mut fid,
            buf: *const c_void,
            len: usize,
            access: u64,
            offset: u64,
            requested_key: u64,
            flags: u64,
            mr: *mut *mut fid_mr,
            ctx: *mut c_void,
        ) -> c_int,
    >,
    pub regv: Unused,
    pub regattr: Unused,
}

#[repr(C)]
pub struct fid_domain {
    pub fid: fid,
    pub ops: *mut fi_ops_domain,
    pub mr: *mut fi_ops_mr,
}

#[repr(C)]
pub struct fid_mr {
    pub fid: fid,
    pub mem_desc: *mut c_void,
    pub key: u64,
}

#[repr(C)]
pub struct fi_av_attr {
    pub type_: c_int,
    pub rx_ctx_bits: c_int,
    pub count: usize,
    pub ep_per_node: usize,
    pub name: *const c_char,
    pub map_addr: *mut c_void,
    pub flags: u64,
}

#[repr(C)]
pub struct fi_ops_av {
    pub size: usize,
    pub insert: Option<
        unsafe extern "C" fn(
            av: *mut fid_av,
            addr: *const c_void,
            count: usize,
            fi_addr: *mut fi_addr_t,
            flags: u64,
            ctx: *mut c_void,
        ) -> c_int,
    >,
    pub insertsvc: Unused,
    pub insertsym: Unused,
    pub remove: Unused,
    pub lookup: Unused,
    pub straddr: Unused,
    pub av_set: Unused,
}

#[repr(C)]
pub struct fid_av {
    pub fid: fid,
    pub ops: *mut fi_ops_av,
}

#[repr(C)]
pub struct fi_cq_attr {
    pub size: usize,
    pub flags: u64,
    pub format: c_int,
    pub wait_obj: c_int,
    pub signaling_vector: c_int,
    pub wait_cond: c_int,
    pub wait_set: *mut c_void,
}

#[repr(C)]
pub struct fi_cq_tagged_entry {
    pub op_context: *mut c_void,
    pub flags: u64,
    pub len: usize,
    pub buf: *mut c_void,
    pub data: u64,
    pub tag: u64,
}

#[repr(C)]
pub struct fi_cq_err_entry {
    pub op_context: *mut c_void,
    pub flags: u64,
    pub len: usize,
    pub buf: *mut c_void,
    pub data: u64,
    pub tag: u64,
    pub olen: usize,
    pub err: c_int,
    pub prov_errno: c_int,
    pub err_data: *mut c_void,
    pub err_data_size: usize,
}

#[repr(C)]
pub struct fi_ops_cq {
    pub size: usize,
    pub read: Option<unsafe extern "C" fn(cq: *mut fid_cq, buf: *mut c_void, count: usize) -> isize>,
    pub readfrom: Unused,
    pub readerr: Option<unsafe extern "C" fn(cq: *mut fid_cq, buf: *mut fi_cq_err_entry, flags: u64) -> isize>,
    pub sread: Unused,
    pub sreadfrom: Unused,
    pub signal: Unused,
    pub strerror: Option<
        unsafe extern "C" fn(
            cq: *mut fid_cq,
            prov_errno: c_int,
            err_data: *const c_void,
            buf: *mut c_char,
            len: usize,
        ) -> *const c_char,
    >,
}

#[repr(C)]
pub struct fid_cq {
    pub fid: fid,
    pub ops: *mut fi_ops_cq,
}

#[repr(C)]
pub struct fi_ops_ep {
    pub size: usize,
    pub cancel: Option<unsafe extern "C" fn(fid: *mut fid, ctx: *mut c_void) -> isize>,
    pub getopt: Unused,
    pub setopt: Unused,
    pub tx_ctx: Unused,
    pub rx_ctx: Unused,
    pub rx_size_left: Unused,
    pub tx_size_left: Unused,
}

#[repr(C)]
pub struct fi_ops_cm {
    pub size: usize,
    pub setname: Unused,
    pub getname: Option<unsafe extern "C" fn(fid: *mut fid, addr: *mut c_void, addrlen: *mut usize) -> c_int>,
    pub getpeer: Unused,
    pub connect: Unused,
    pub listen: Unused,
    pub accept: Unused,
    pub reject: Unused,
    pub shutdown: Unused,
    pub join: Unused,
}

#[repr(C)]
pub struct fi_ops_tagged {
    pub size: usize,
    #[allow(clippy::type_complexity)]
    pub recv: Option<
        unsafe extern "C" fn(
            ep: *mut fid_ep,
            buf: *mut c_void,
            len: usize,
            desc: *mut c_void,
            src_addr: fi_addr_t,
            tag: u64,
            ignore: u64,
            ctx: *mut c_void,
        ) -> isize,
    >,
    pub recvv: Unused,
    pub recvmsg: Unused,
    #[allow(clippy::type_complexity)]
    pub send: Option<
        unsafe extern "C" fn(
            ep: *mut fid_ep,
            buf: *const c_void,
            len: usize,
            desc: *mut c_void,
            dest_addr: fi_addr_t,
            tag: u64,
            ctx: *mut c_void,
        ) -> isize,
    >,
    pub sendv: Unused,
    pub sendmsg: Unused,
    pub inject: Unused,
    pub senddata: Unused,
    pub injectdata: Unused,
}

#[repr(C)]
pub struct fid_ep {
    pub fid: fid,
    pub ops: *mut fi_ops_ep,
    pub cm: *mut fi_ops_cm,
    pub msg: *mut c_void,
    pub rma: *mut c_void,
    pub tagged: *mut fi_ops_tagged,
    pub atomic: *mut c_void,
    pub collective: *mut c_void,
}

/// `struct fi_context2`: scratch space a provider may use per operation
/// when it asks for `FI_CONTEXT`/`FI_CONTEXT2` mode.
#[repr(C)]
pub struct fi_context2 {
    pub internal: [*mut c_void; 8],
}

/// `fi_getinfo(version, node, service, flags, hints, info)`.
pub type FiGetinfo = unsafe extern "C" fn(
    version: u32,
    node: *const c_char,
    service: *const c_char,
    flags: u64,
    hints: *const fi_info,
    info: *mut *mut fi_info,
) -> c_int;
/// `fi_freeinfo(info)`.
pub type FiFreeinfo = unsafe extern "C" fn(info: *mut fi_info);
/// `fi_dupinfo(info)`; `fi_allocinfo()` is `fi_dupinfo(NULL)`.
pub type FiDupinfo = unsafe extern "C" fn(info: *const fi_info) -> *mut fi_info;
/// `fi_fabric(attr, fabric, context)`.
pub type FiFabric = unsafe extern "C" fn(attr: *mut fi_fabric_attr, fabric: *mut *mut fid_fabric, ctx: *mut c_void) -> c_int;
/// `fi_strerror(errnum)`.
pub type FiStrerror = unsafe extern "C" fn(errnum: c_int) -> *const c_char;

#[cfg(test)]
mod layout {
    //! Compares our layouts with the C compiler's view of the system
    //! headers. Skips (with a note) where gcc or the headers are missing.

    use super::*;
    use std::mem::{offset_of, size_of};
    use std::process::Command;

    /// (C type, C field or "" for sizeof, our value).
    fn ours() -> Vec<(&'static str, &'static str, usize)> {
        macro_rules! s {
            ($c:literal, $t:ty) => {
                ($c, "", size_of::<$t>())
            };
        }
        macro_rules! o {
            ($c:literal, $t:ty, $cf:literal, $f:ident) => {
                ($c, $cf, offset_of!($t, $f))
            };
        }
        vec![
            s!("struct fid", fid),
            s!("struct fi_ops", fi_ops),
            o!("struct fi_ops", fi_ops, "control", control),
            s!("struct fi_tx_attr", fi_tx_attr),
            o!("struct fi_tx_attr", fi_tx_attr, "tclass", tclass),
            s!("struct fi_rx_attr", fi_rx_attr),
            s!("struct fi_ep_attr", fi_ep_attr),
            o!("struct fi_ep_attr", fi_ep_attr, "mem_tag_format", mem_tag_format),
            o!("struct fi_ep_attr", fi_ep_attr, "auth_key", auth_key),
            s!("struct fi_domain_attr", fi_domain_attr),
            o!("struct fi_domain_attr", fi_domain_attr, "av_type", av_type),
            o!("struct fi_domain_attr", fi_domain_attr, "mr_mode", mr_mode),
            o!("struct fi_domain_attr", fi_domain_attr, "caps", caps),
            o!("struct fi_domain_attr", fi_domain_attr, "mr_cnt", mr_cnt),
            o!("struct fi_domain_attr", fi_domain_attr, "tclass", tclass),
            s!("struct fi_fabric_attr", fi_fabric_attr),
            o!("struct fi_fabric_attr", fi_fabric_attr, "prov_name", prov_name),
            o!("struct fi_fabric_attr", fi_fabric_attr, "api_version", api_version),
            s!("struct fi_info", fi_info),
            o!("struct fi_info", fi_info, "caps", caps),
            o!("struct fi_info", fi_info, "mode", mode),
            o!("struct fi_info", fi_info, "addr_format", addr_format),
            o!("struct fi_info", fi_info, "tx_attr", tx_attr),
            o!("struct fi_info", fi_info, "ep_attr", ep_attr),
            o!("struct fi_info", fi_info, "domain_attr", domain_attr),
            o!("struct fi_info", fi_info, "fabric_attr", fabric_attr),
            o!("struct fi_info", fi_info, "nic", nic),
            s!("struct fi_ops_fabric", fi_ops_fabric),
            o!("struct fi_ops_fabric", fi_ops_fabric, "domain", domain),
            s!("struct fid_fabric", fid_fabric),
            o!("struct fid_fabric", fid_fabric, "ops", ops),
            s!("struct fi_ops_domain", fi_ops_domain),
            o!("struct fi_ops_domain", fi_ops_domain, "av_open", av_open),
            o!("struct fi_ops_domain", fi_ops_domain, "cq_open", cq_open),
            o!("struct fi_ops_domain", fi_ops_domain, "endpoint", endpoint),
            s!("struct fi_ops_mr", fi_ops_mr),
            o!("struct fi_ops_mr", fi_ops_mr, "reg", reg),
            s!("struct fid_domain", fid_domain),
            o!("struct fid_domain", fid_domain, "ops", ops),
            o!("struct fid_domain", fid_domain, "mr", mr),
            s!("struct fid_mr", fid_mr),
            o!("struct fid_mr", fid_mr, "mem_desc", mem_desc),
            s!("struct fi_av_attr", fi_av_attr),
            o!("struct fi_av_attr", fi_av_attr, "count", count),
            o!("struct fi_av_attr", fi_av_attr, "flags", flags),
            s!("struct fi_ops_av", fi_ops_av),
            o!("struct fi_ops_av", fi_ops_av, "insert", insert),
            s!("struct fid_av", fid_av),
            s!("struct fi_cq_attr", fi_cq_attr),
            o!("struct fi_cq_attr", fi_cq_attr, "format", format),
            o!("struct fi_cq_attr", fi_cq_attr, "wait_obj", wait_obj),
            o!("struct fi_cq_attr", fi_cq_attr, "wait_set", wait_set),
            s!("struct fi_cq_tagged_entry", fi_cq_tagged_entry),
            o!("struct fi_cq_tagged_entry", fi_cq_tagged_entry, "len", len),
            o!("struct fi_cq_tagged_entry", fi_cq_tagged_entry, "tag", tag),
            s!("struct fi_cq_err_entry", fi_cq_err_entry),
            o!("struct fi_cq_err_entry", fi_cq_err_entry, "olen", olen),
            o!("struct fi_cq_err_entry", fi_cq_err_entry, "err", err),
            o!("struct fi_cq_err_entry", fi_cq_err_entry, "prov_errno", prov_errno),
            o!("struct fi_cq_err_entry", fi_cq_err_entry, "err_data", err_data),
            s!("struct fi_ops_cq", fi_ops_cq),
            o!("struct fi_ops_cq", fi_ops_cq, "read", read),
            o!("struct fi_ops_cq", fi_ops_cq, "readerr", readerr),
            o!("struct fi_ops_cq", fi_ops_cq, "strerror", strerror),
            s!("struct fid_cq", fid_cq),
            s!("struct fi_ops_ep", fi_ops_ep),
            o!("struct fi_ops_ep", fi_ops_ep, "cancel", cancel),
            s!("struct fi_ops_cm", fi_ops_cm),
            o!("struct fi_ops_cm", fi_ops_cm, "getname", getname),
            s!("struct fi_ops_tagged", fi_ops_tagged),
            o!("struct fi_ops_tagged", fi_ops_tagged, "recv", recv),
            o!("struct fi_ops_tagged", fi_ops_tagged, "send", send),
            s!("struct fid_ep", fid_ep),
            o!("struct fid_ep", fid_ep, "cm", cm),
            o!("struct fid_ep", fid_ep, "tagged", tagged),
            s!("struct fi_context2", fi_context2),
        ]
    }

    /// Constants, checked the same way.
    fn constants() -> Vec<(&'static str, i128)> {
        vec![
            ("FI_VERSION(1, 17)", FI_VERSION_1_17 as i128),
            ("FI_MSG", FI_MSG as i128),
            ("FI_TAGGED", FI_TAGGED as i128),
            ("FI_RECV", FI_RECV as i128),
            ("FI_SEND", FI_SEND as i128),
            ("FI_CONTEXT", FI_CONTEXT as i128),
            ("FI_CONTEXT2", FI_CONTEXT2 as i128),
            ("FI_EP_RDM", FI_EP_RDM as i128),
            ("FI_AV_TABLE", FI_AV_TABLE as i128),
            ("FI_CQ_FORMAT_TAGGED", FI_CQ_FORMAT_TAGGED as i128),
            ("FI_WAIT_NONE", FI_WAIT_NONE as i128),
            ("FI_ENABLE", FI_ENABLE as i128),
            ("FI_MR_LOCAL", FI_MR_LOCAL as i128),
            ("FI_MR_VIRT_ADDR", FI_MR_VIRT_ADDR as i128),
            ("FI_MR_ALLOCATED", FI_MR_ALLOCATED as i128),
            ("FI_MR_PROV_KEY", FI_MR_PROV_KEY as i128),
            ("FI_MR_ENDPOINT", FI_MR_ENDPOINT as i128),
            ("FI_MR_HMEM", FI_MR_HMEM as i128),
            ("FI_EAGAIN", FI_EAGAIN as i128),
            ("FI_EAVAIL", FI_EAVAIL as i128),
            ("FI_ETRUNC", FI_ETRUNC as i128),
            ("FI_ECANCELED", FI_ECANCELED as i128),
        ]
    }

    #[test]
    fn layouts_match_the_system_headers() {
        if !std::path::Path::new("/usr/include/rdma/fi_tagged.h").exists() {
            nrt_test_support::skip!("the libfabric headers are absent (Debian package libfabric-dev; scripts/test-all installs it)");
        }
        let dir = std::env::temp_dir().join(format!("nrt-net-layout-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut c = String::from(
            "#include <stdio.h>\n#include <stddef.h>\n#include <rdma/fabric.h>\n#include <rdma/fi_domain.h>\n\
             #include <rdma/fi_endpoint.h>\n#include <rdma/fi_eq.h>\n#include <rdma/fi_cm.h>\n\
             #include <rdma/fi_tagged.h>\n#include <rdma/fi_errno.h>\nint main(void) {\n",
        );
        let items = ours();
        for (t, f, _) in &items {
            if f.is_empty() {
                c.push_str(&format!("  printf(\"%zu\\n\", sizeof({t}));\n"));
            } else {
                c.push_str(&format!("  printf(\"%zu\\n\", offsetof({t}, {f}));\n"));
            }
        }
        let consts = constants();
        for (name, _) in &consts {
            c.push_str(&format!("  printf(\"%lld\\n\", (long long)({name}));\n"));
        }
        c.push_str("  return 0;\n}\n");
        let src = dir.join("layout.c");
        let exe = dir.join("layout");
        std::fs::write(&src, c).unwrap();
        let cc = match Command::new("gcc").arg("-o").arg(&exe).arg(&src).output() {
            Ok(o) => o,
            Err(e) => nrt_test_support::skip!("gcc cannot be run ({e})"),
        };
        assert!(cc.status.success(), "gcc failed: {}", String::from_utf8_lossy(&cc.stderr));
        let out = Command::new(&exe).output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let values: Vec<i128> = text.lines().map(|l| l.parse().unwrap()).collect();
        assert_eq!(values.len(), items.len() + consts.len());
        let mut bad = Vec::new();
        for ((t, f, ours), theirs) in items.iter().zip(&values) {
            if *ours as i128 != *theirs {
                bad.push(format!("{t} {f}: ours {ours}, headers {theirs}"));
            }
        }
        for ((name, ours), theirs) in consts.iter().zip(&values[items.len()..]) {
            if ours != theirs {
                bad.push(format!("{name}: ours {ours}, headers {theirs}"));
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        assert!(bad.is_empty(), "layout differences:\n{}", bad.join("\n"));
    }
}
