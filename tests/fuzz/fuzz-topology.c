/* fuzz-topology.c — topology YAML (topologies/topology.h): loads or fails with an error,
 * never crashes, and a loaded topology's GPU count is within RS_MAX_RANKS. */
#include "base/mesh.h"
#include "fuzz-common.h"
#include "topologies/topology.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    g_autofree char *text = fuzz_text(data, size);
    GError *error = NULL;
    RsTopology *topo = rs_topology_load_string(text, "fuzz.yaml", NULL, &error);
    if (topo == NULL) {
        g_assert_nonnull(error);
        g_clear_error(&error);
        return 0;
    }
    g_assert_cmpuint(rs_topology_get_n_gpus(topo), <=, RS_MAX_RANKS);
    rs_topology_free(topo);
    return 0;
}
