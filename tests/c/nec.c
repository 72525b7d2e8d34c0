/* nec.h on a simulated trn2.48xlarge (NEURON_SIM_INSTANCE): device count
 * and PCI addresses from the topology table, the LNC size, the version,
 * MLA indexes over the driver's routing ids and the 4x4 torus links (the
 * identity, then a map built for one device), pods (a node outside any),
 * the dynamic size table, a semaphore register store and the driver log
 * line. Usage: nec */
#include "check.h"
#include "nrt/nec.h"
#include <stdint.h>

int main(void) {
    EXPECT(nec_get_device_count(NULL, 0) == -1); /* before init */
    OK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""));

    int ids[4] = {-1, -1, -1, -1};
    EXPECT(nec_get_device_count(NULL, 0) == 16);
    EXPECT(nec_get_device_count(ids, 3) == 16);
    EXPECT(ids[0] == 0 && ids[1] == 1 && ids[2] == 2 && ids[3] == -1);

    uint32_t dom = 9, bus = 9;
    uint8_t slot = 9, fn = 9;
    EXPECT(nec_get_device_pci_bdf(2, &dom, &bus, &slot, &fn) == 0);
    EXPECT(dom == 0 && bus == 0x12 && slot == 0 && fn == 0); /* ours: bus 0x10 + device */

    uint32_t lnc = 0;
    OK(nec_get_virtual_core_size(&lnc));
    EXPECT(lnc == 2); /* trn2's default logical core size */

    nec_version_info_t v;
    memset(&v, 0xff, sizeof v);
    OK(nec_get_version_info(&v));
    EXPECT(v.major == 2 && v.minor == 32 && v.patch == 0 && v.compatibility_version == 0);
    EXPECT(strlen(v.git_hash) == 15);

    /* The identity: MLA index = host device id; host device 3 has routing
     * id 1 (the driver's trn2 order); device 0's torus links 12, 3, 4, 1. */
    EXPECT(nec_is_mla_available(0, 15) && !nec_is_mla_available(0, 16));
    EXPECT(nec_mla_idx_to_rid(0, 3) == 1 && nec_rid_to_mla_idx(0, 1) == 3);
    EXPECT(nec_get_peer_mla_idx(0, 0, 0) == 12 && nec_get_peer_mla_idx(0, 0, 1) == 3);
    EXPECT(nec_get_peer_mla_idx(0, 0, 3) == 1 && nec_get_peer_mla_idx(0, 0, 4) == NEC_UNKNOWN_MLA_DEV);
    uint32_t count = 16, rids[16];
    OK(nrt_host_device_id_rid_map_get(&count, rids));
    for (int d = 0; d < 16; d++) EXPECT(nec_mla_idx_to_rid(5, d) == (int)rids[d]);

    /* Device 0 numbers two devices its own way; device 1 keeps the identity. */
    int mla[2] = {0, 1}, dev[2] = {5, 3};
    OK(nec_build_port_and_rid_map(0, mla, dev, 2));
    EXPECT(nec_is_mla_available(0, 1) && !nec_is_mla_available(0, 2));
    EXPECT(nec_mla_idx_to_rid(0, 0) == (int)rids[5] && nec_mla_idx_to_rid(0, 1) == 1);
    EXPECT(nec_rid_to_mla_idx(0, (int)rids[5]) == 0 && nec_rid_to_mla_idx(0, 0) == NEC_UNKNOWN_MLA_DEV);
    EXPECT(nec_mla_idx_to_rid(1, 3) == 1);
    int dup[2] = {0, 0};
    EXPECT_STATUS(nec_build_port_and_rid_map(0, dup, dev, 2), NRT_INVALID);
    EXPECT(nec_mla_idx_to_rid(0, 1) == 1); /* a refused map changes nothing */

    /* Pods: every device of the node is reachable, no other node's. */
    int can = 7, peer = 7;
    OK(nec_pod_node_can_access_peer_node(NEC_POD_TYPE_P2P, 0, 0, 5, 0, &can));
    EXPECT(can == 1);
    OK(nec_pod_node_can_access_peer_node(NEC_POD_TYPE_SWITCH, 0, 0, 5, 1, &can));
    EXPECT(can == 0);
    EXPECT(nec_get_p2p_pod_peer_node(0, 2, 0, &peer) == 0 && peer == 2);
    peer = 7;
    EXPECT(nec_get_p2p_pod_peer_node(0, 2, 1, &peer) == -1 && peer == 7);

    /* A two-rank dynamic size table: 7 floats to rank 1 at element 2;
     * 10 floats received from rank 0. */
    uint64_t table[8] = {0, 7, 0, 2, 0, 0, 0, 0};
    enc_host_mem_t m = {NULL, table, 0, sizeof table};
    EXPECT(nec_get_dynamic_send_size_bytes(&m, 4, 1, 2) == 28);
    EXPECT(nec_get_dynamic_send_offset_bytes(&m, 4, 1, 2) == 8);
    nec_set_recv_size_bytes(&m, 40, 4, 0, 2);
    EXPECT(table[6] == 10 && nec_get_dynamic_recv_offset_bytes(&m, 4, 0, 2) == 0);

    /* A register outside the runtime's doorbells gets the plain store. */
    volatile uint32_t reg = 0;
    nec_inc_semaphore(&reg, 5);
    EXPECT(reg == 5);
    char line[] = "nec: hello from the proxy";
    nec_ndl_printk(line, sizeof line, 1);

    nrt_close();
    return finish("nec");
}
