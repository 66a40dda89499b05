/* fuzz-messages.c — a messages CSV (base/trace.h) read and simulated by the flow-level
 * simulator on a 2-node, 4-GPU topology: parse errors and simulation errors are errors,
 * never crashes; a simulated list has finite, non-negative times. */
#include "base/trace.h"
#include "fuzz-common.h"
#include "sim/flow-sim.h"
#include "topologies/topology.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char topology_yaml[] =
    "name: fuzz\nnodes: 2\ngpus_per_node: 2\ngpu:\n  model: test GPU\n  memory: 1 GiB\n"
    "nvlink:\n  bandwidth: 100 GB/s\n  efficiency: 1.0\n  latency: 1 us\n"
    "nic:\n  bandwidth: 80 Gbit/s\n  efficiency: 0.5\n  latency: 10 us\n"
    "software:\n  message_overhead: 2 us\n";

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    static RsTopology *topo;
    if (topo == NULL) {
        GError *error = NULL;
        topo = rs_topology_load_string(topology_yaml, "fuzz-topology", NULL, &error);
        g_assert_no_error(error);
    }
    if (size > 64 << 10)
        return 0;
    GError *error = NULL;
    g_autofree char *path = NULL;
    /* The file reader (NUL bytes included), as reshard simulate --messages reads. */
    path = fuzz_write_file("m.csv", data, size);
    RsTrace *trace = rs_trace_read_file(path, &error);
    g_unlink(path);
    if (trace == NULL) {
        g_assert_nonnull(error);
        g_clear_error(&error);
        return 0;
    }
    if (rs_trace_get_n_rows(trace) > 0 && rs_trace_get_n_rows(trace) <= 256) {
        RsFlowSimOptions options;
        rs_flow_sim_options_init(&options);
        RsFlowSimResult *flow = rs_flow_sim_run_trace(trace, topo, &options, &error);
        if (flow != NULL) {
            for (guint i = 0; i < flow->n_messages; i++)
                g_assert_true(isfinite(flow->message_end_s[i]) && flow->message_end_s[i] >= 0);
            rs_flow_sim_result_free(flow);
        }
        g_clear_error(&error);
    }
    rs_trace_free(trace);
    return 0;
}
