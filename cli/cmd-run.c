/* cmd-run.c — `reshard run`: execute a refit plan with real bytes and compare with the
 * prediction.
 *
 * The work is a scenario (shipped default, --scenario, and the simulate-style overrides,
 * including the scaled-model variant --scale/--layers) or one tensor given by the
 * single-tensor flags. The plan is built and checked, predicted with the first-order cost
 * model on the topology (the scenario's or --topology), executed on a transport (`host`:
 * threads of this process; `mpi`: run under mpirun, one process per rank; `cuda-local`:
 * ranks on the GPUs of this process; `nccl`: one GPU per rank), validated
 * element by element, and reported measured next to predicted. Exit codes: 0, 1 (a
 * transfer failed), 2 (bad input), 3 (validation failed). Under mpi every process runs
 * this command; only rank 0's process prints results. */
#include "cli/cli.h"
#include "cli/model-args.h"
#include "cli/outputs.h"
#include "cli/supervise.h"

#include "analysis/report.h"
#include "cli/scenario-args.h"
#include "cli/topology-args.h"
#include "cli/tensor-args.h"
#include "analysis/compare.h"
#include "analysis/timeline.h"
#include "exec/executor.h"
#include "sim/cost.h"
#include "sim/flow-sim.h"
#include "base/units.h"

#include <stdio.h>
#include <math.h>
#include <string.h>

#define DEFAULT_SCENARIO "deepseek-v3-h100"

static RsScenarioArgs sargs;
static RsTensorArgs targs;
static char *opt_strategy;
static char *opt_transport;
static char *opt_runs; /* an integer, as text (rs_cli_parse_int) */
static char *opt_chunk_size;
static char *opt_window; /* an integer, as text (rs_cli_parse_int) */
static char *opt_queue_depth; /* an integer, as text (rs_cli_parse_int) */
static char *opt_eager_size;
static double opt_timeout;
static gboolean opt_no_validate;
static char *opt_trace;
static char *opt_format;
static char *opt_corrupt;
static char *opt_timeline;
static gboolean opt_compare;
static char *opt_compare_posting;
static char *opt_fault;

static GOptionEntry entries[] = {
    {"strategy", 0, 0, G_OPTION_ARG_STRING, &opt_strategy,
     NULL /* rs_cli_strategy_help(), set by make_context() */, "NAME"},
    {"transport", 0, 0, G_OPTION_ARG_STRING, &opt_transport,
     "host (threads, default), mpi (under mpirun -np N), cuda-local (ranks on this "
     "process's GPUs, even one) or nccl (one GPU per rank; under mpirun, one process per GPU)",
     "NAME"},
    {"runs", 'r', 0, G_OPTION_ARG_STRING, &opt_runs,
     "Measured runs; the median is reported "
     "(default 1, at most 10000)",
     "N"},
    {"chunk-size", 0, 0, G_OPTION_ARG_STRING, &opt_chunk_size,
     "Bytes per transport call (bucket), e.g. 4MiB (default), at most 1GiB", "SIZE"},
    {"window", 0, 0, G_OPTION_ARG_STRING, &opt_window, "Chunks in flight per rank (default 8)",
     "N"},
    {"queue-depth", 0, 0, G_OPTION_ARG_STRING, &opt_queue_depth,
     "host: messages queued per rank pair (default 8, at most 1024)", "N"},
    {"eager-size", 0, 0, G_OPTION_ARG_STRING, &opt_eager_size,
     "host: largest message copied at once, e.g. 16KiB (default), at most 1MiB", "SIZE"},
    {"timeout", 0, 0, G_OPTION_ARG_DOUBLE, &opt_timeout,
     "Fail when a rank makes no progress for S seconds, naming the rank; nccl aborts its "
     "communicators (default: wait)",
     "S"},
    {"no-validate", 0, 0, G_OPTION_ARG_NONE, &opt_no_validate,
     "Do not fill and check the buffers (timing only)", NULL},
    {"trace", 0, 0, G_OPTION_ARG_FILENAME, &opt_trace,
     "Write the measured per-message trace (CSV, the simulator's schema)", "FILE"},
    {"format", 'f', 0, G_OPTION_ARG_STRING, &opt_format, "table, csv or json (default table)",
     "FORMAT"},
    {"timeline", 0, 0, G_OPTION_ARG_FILENAME, &opt_timeline,
     "Write the measured per-message trace as a Chrome trace event timeline (Perfetto, "
     "chrome://tracing)",
     "FILE.json"},
    {"compare", 0, 0, G_OPTION_ARG_NONE, &opt_compare,
     "Also simulate the plan (flow-level) on the topology and compare it with the measured "
     "trace per phase, message size and link class (as reshard compare)",
     NULL},
    {"compare-posting", 0, 0, G_OPTION_ARG_STRING, &opt_compare_posting,
     "With --compare: window (the executor's schedule: its chunks in key order, --window "
     "in flight per rank; default) or phases (every message of a phase posted at once, "
     "relays chunked: reshard simulate's default)",
     "MODEL"},
    {"fault", 0, 0, G_OPTION_ARG_STRING, &opt_fault,
     "Test: drop:M, delay:M:SECONDS, duplicate:M (message M), stop:R or kill:R (rank R, mpi); "
     "the timeout, the stray-message check or the launcher must catch it",
     "KIND:ARG"},
    {"corrupt-byte", 0, 0, G_OPTION_ARG_STRING, &opt_corrupt,
     "Test: flip byte B of network message M on arrival; validation must catch it", "M:B"},
    {NULL},
};

static GOptionContext *
make_context(void)
{
    rs_cli_set_strategy_help(entries, FALSE, "default direct");
    GOptionContext *context = g_option_context_new("- execute a refit plan and measure it");
    g_option_context_set_summary(
        context,
        "Plans a refit (a scenario, or one tensor given by the single-tensor options), runs it\n"
        "with real bytes on a transport, checks every destination element, and prints the\n"
        "measured time next to the first-order prediction of the same plan on the topology.\n"
        "--dtype overrides the scenario's dtype, or sets the single tensor's.");
    g_option_context_set_description(
        context,
        "Examples:\n"
        "  reshard calibrate --ranks 8 --output host.yaml\n"
        "  reshard run --model deepseek-v3 --scale 16 --layers 3-4 --topology host.yaml \\\n"
        "      --train megatron:tp=1,pp=2,ep=2 --train-gpus 0-3 --infer vllm:tp=4 --infer-gpus 4-7\n"
        "  reshard run --shape 4096x4096 --dtype bf16 --src-mesh 2x2 --src-placements 'S(0),R' \\\n"
        "      --dst-mesh 4 --dst-placements 'S(1)' --dst-ranks 4-7 --runs 5\n"
        "  mpirun -np 8 reshard run --transport mpi --shape 1024x1024 --src-mesh 4 \\\n"
        "      --src-placements 'S(0)' --dst-mesh 4 --dst-placements 'S(1)' --dst-ranks 4-7\n"
        "  reshard run --transport cuda-local --shape 8192x8192 --dtype bf16 --src-mesh 4 \\\n"
        "      --src-placements 'S(0)' --dst-mesh 4 --dst-placements 'S(1)' --timeout 30\n"
        "\nExit codes: 0 ok, 1 a transfer failed (or no CUDA device), 2 bad input, 3 validation "
        "failed.\n");
    g_option_context_add_main_entries(context, entries, NULL);
    g_option_context_add_group(context, rs_scenario_args_make_group(&sargs));
    g_option_context_add_group(context, rs_topology_args_group_new());
    g_option_context_add_group(context, rs_tensor_args_make_group(&targs));
    rs_cli_add_common_options(context);
    return context;
}

static gboolean
single_tensor_given(void)
{
    return targs.shape || targs.src_mesh || targs.src_placements || targs.src_ranks ||
           targs.dst_mesh || targs.dst_placements || targs.dst_ranks;
}

static gboolean
parse_size(const char *flag, const char *text, guint64 *out, GError **error)
{
    if (!rs_units_parse_size(text, out, error)) {
        g_prefix_error(error, "%s: ", flag);
        return FALSE;
    }
    return TRUE;
}

/* --fault KIND:ARG[:SECONDS]. */
static gboolean
parse_fault(const char *text, RsExecOptions *opts, GError **error)
{
    g_auto(GStrv) parts = g_strsplit(text, ":", -1);
    guint n = g_strv_length(parts);
    guint64 v = 0;
    char *end = NULL;
    gboolean ok = n >= 2 && g_ascii_string_to_unsigned(parts[1], 10, 0, G_MAXUINT32, &v, NULL);
    if (ok && strcmp(parts[0], "drop") == 0 && n == 2) {
        opts->fault = RS_EXEC_FAULT_DROP;
    } else if (ok && strcmp(parts[0], "delay") == 0 && n == 3) {
        opts->fault = RS_EXEC_FAULT_DELAY;
        opts->fault_delay_s = g_ascii_strtod(parts[2], &end);
        ok = end != parts[2] && *end == '\0' && isfinite(opts->fault_delay_s);
    } else if (ok && strcmp(parts[0], "duplicate") == 0 && n == 2) {
        opts->fault = RS_EXEC_FAULT_DUPLICATE;
    } else if (ok && strcmp(parts[0], "stop") == 0 && n == 2) {
        opts->fault = RS_EXEC_FAULT_STOP;
    } else if (ok && strcmp(parts[0], "kill") == 0 && n == 2) {
        opts->fault = RS_EXEC_FAULT_KILL;
    } else {
        ok = FALSE;
    }
    if (!ok) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--fault \"%s\": expected drop:MESSAGE, delay:MESSAGE:SECONDS, "
                    "duplicate:MESSAGE, stop:RANK or kill:RANK",
                    text);
        return FALSE;
    }
    opts->fault_message = opts->fault_rank = (guint32)v;
    if (opts->fault == RS_EXEC_FAULT_STOP || opts->fault == RS_EXEC_FAULT_KILL)
        opts->fault_message = G_MAXUINT32;
    else
        opts->fault_rank = G_MAXUINT32;
    return TRUE;
}

static gboolean
parse_options(RsExecOptions *opts, RsTransportConfig *tconfig, RsStrategy *strategy,
              RsFormat *format, GError **error)
{
    memset(opts, 0, sizeof *opts);
    memset(tconfig, 0, sizeof *tconfig);
    *strategy = RS_STRATEGY_DIRECT;
    if (!rs_cli_parse_format(opt_format, format, error))
        return FALSE;
    if (opt_strategy != NULL && !rs_strategy_parse(opt_strategy, strategy, error)) {
        g_prefix_error(error, "--strategy: ");
        return FALSE;
    }
    /* 0 stands for "the default" in the option structs; a 0 given on the command line is an
     * error, not that default. */
    gint64 runs = 0, window = 0, queue_depth = 0;
    if (!rs_cli_parse_int("--runs", opt_runs, 1, RS_CLI_MAX_RUNS, &runs, error) ||
        !rs_cli_parse_int("--window", opt_window, 1, G_MAXINT32, &window, error) ||
        !rs_cli_parse_int("--queue-depth", opt_queue_depth, 1, RS_TRANSPORT_MAX_QUEUE_DEPTH,
                          &queue_depth, error))
        return FALSE;
    /* NaN compares false with everything: it would never fire, the wait it guards would
     * hang; infinity is the default (0, wait) spelled another way. */
    if (!isfinite(opt_timeout) || opt_timeout < 0) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--timeout %g: must be a finite number of seconds, at least 0 (0 waits)",
                    opt_timeout);
        return FALSE;
    }
    opts->n_runs = (guint)runs;
    opts->window = (guint)window;
    opts->timeout_s = opt_timeout;
    tconfig->timeout_s = opt_timeout; /* the mpi transport's barrier, gather and broadcast */
    opts->no_validate = opt_no_validate;
    tconfig->queue_depth = (guint)queue_depth;
    if (opt_chunk_size != NULL) {
        if (!parse_size("--chunk-size", opt_chunk_size, &opts->chunk_bytes, error))
            return FALSE;
        if (opts->chunk_bytes == 0 || opts->chunk_bytes > RS_EXEC_MAX_CHUNK_BYTES) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--chunk-size: %s is outside 1 B .. 1 GiB", opt_chunk_size);
            return FALSE;
        }
    }
    if (opt_eager_size != NULL) {
        guint64 eager;
        if (!parse_size("--eager-size", opt_eager_size, &eager, error))
            return FALSE;
        if (eager > RS_TRANSPORT_MAX_EAGER_BYTES) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--eager-size: %s is above the largest, 1 MiB (messages above it go "
                        "by rendezvous anyway)", opt_eager_size);
            return FALSE;
        }
        tconfig->eager_bytes = (gsize)MAX(eager, 1);
    }
    if (opt_corrupt != NULL) {
        g_auto(GStrv) parts = g_strsplit(opt_corrupt, ":", -1);
        guint64 m, b;
        if (g_strv_length(parts) != 2 ||
            !g_ascii_string_to_unsigned(parts[0], 10, 0, G_MAXUINT32, &m, NULL) ||
            !g_ascii_string_to_unsigned(parts[1], 10, 0, G_MAXINT64, &b, NULL)) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--corrupt-byte \"%s\": expected MESSAGE:BYTE", opt_corrupt);
            return FALSE;
        }
        opts->corrupt = TRUE;
        opts->corrupt_message = (guint32)m;
        opts->corrupt_byte = b;
    }
    if (opt_fault != NULL && !parse_fault(opt_fault, opts, error))
        return FALSE;
    /* An injected fault exists to be caught by a check; without validation nothing would
     * catch it and the run would exit 0. */
    if (opt_no_validate && (opts->corrupt || opts->fault != RS_EXEC_FAULT_NONE)) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "%s: an injected fault needs validation; drop --no-validate",
                    opts->corrupt ? "--corrupt-byte" : "--fault");
        return FALSE;
    }
    return TRUE;
}

/* The work to run: a refit, a description, and the topology of the prediction. */
typedef struct {
    RsScenarioBuild build; /* scenario mode */
    RsRefit *refit;        /* borrowed from build, or owned in single-tensor mode */
    RsRefit *own_refit;
    RsTopology *own_topology;
    const RsTopology *topology; /* nullable */
    char *work;
} Work;

static void
work_clear(Work *w)
{
    rs_scenario_build_clear(&w->build);
    rs_refit_free(w->own_refit);
    rs_topology_free(w->own_topology);
    g_free(w->work);
}

static void warn_conversions(const RsRefit *refit);

static gboolean
load_work(Work *w, GError **error)
{
    memset(w, 0, sizeof *w);
    if (single_tensor_given()) {
        if (rs_scenario_args_is_set(&sargs)) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "give either scenario options or single-tensor options, not both");
            return FALSE;
        }
        w->own_refit = rs_tensor_args_build_refit(&targs, error);
        if (w->own_refit == NULL)
            return FALSE;
        w->refit = w->own_refit;
        if (!rs_exec_check_refit(w->refit, error))
            return FALSE;
        const RsRefitTensor *t = rs_refit_get_tensor(w->refit, 0);
        g_autofree char *src = rs_layout_format(t->src);
        g_autofree char *dst = rs_layout_format(t->dst);
        g_autoptr(GString) shape = g_string_new(NULL);
        for (guint d = 0; d < t->n_dims; d++)
            g_string_append_printf(shape, "%s%" G_GINT64_FORMAT, d ? ", " : "", t->shape[d]);
        w->work = g_strdup_printf("tensor [%s] %s: %s -> %s", shape->str,
                                  rs_dtype_get_name(t->dtype), src, dst);
        warn_conversions(w->refit);
        if (sargs.topology != NULL) {
            w->own_topology = rs_topology_args_load(sargs.topology, error);
            if (w->own_topology == NULL)
                return FALSE;
            w->topology = w->own_topology;
        }
        return TRUE;
    }
    g_autoptr(RsScenario) scenario = rs_scenario_args_load(&sargs, DEFAULT_SCENARIO, targs.dtype,
                                                           error);
    if (scenario == NULL || !rs_scenario_build(scenario, &w->build, error))
        return FALSE;
    rs_cli_print_model_warnings("run", w->build.model);
    rs_cli_print_topology_warnings(w->build.topology);
    w->refit = w->build.refit;
    w->topology = w->build.topology;
    if (!rs_exec_check_refit(w->refit, error))
        return FALSE;
    warn_conversions(w->refit);
    g_autofree char *variant = rs_model_format_variant(w->build.model);
    g_autofree char *train = rs_convention_format(scenario->train);
    g_autofree char *infer = rs_convention_format(scenario->infer);
    g_autofree char *train_gpus = rs_ranks_format((const guint32 *)scenario->train_gpus->data,
                                                  scenario->train_gpus->len);
    g_autofree char *infer_gpus = rs_ranks_format((const guint32 *)scenario->infer_gpus->data,
                                                  scenario->infer_gpus->len);
    g_autofree char *dtypes = rs_refit_format_wire_dtypes(w->refit);
    w->work = g_strdup_printf("%s%s%s%s, %.4f GB as %s: %s on %s -> %s on %s",
                              rs_model_get_name(w->build.model), *variant ? " [" : "", variant,
                              *variant ? "]" : "", rs_refit_get_size_bytes(w->refit) / 1e9,
                              dtypes, train, train_gpus, infer, infer_gpus);
    return TRUE;
}

/* The executor moves and validates the bytes on the wire: a conversion at the source (f32
 * trained, bf16 served) is not run, so its cost is not in the measurement. Said, not
 * hidden (the run with --dtype f32 --dst-dtype bf16 read as one of bf16 alone). */
static void
warn_conversions(const RsRefit *refit)
{
    guint n = 0;
    const RsRefitTensor *first = NULL;
    for (guint i = 0; i < rs_refit_get_n_tensors(refit); i++) {
        const RsRefitTensor *t = rs_refit_get_tensor(refit, i);
        if (t->src_dtype != t->dtype && n++ == 0)
            first = t;
    }
    if (n > 0)
        rs_cli_warn("run",
                    "%u tensor%s converted at the source (first: \"%s\", %s -> %s): the run "
                    "moves and validates the %s bytes on the wire; the conversion itself is "
                    "not executed or measured (its cost is the simulator's GPU copy cost)",
                    n, n == 1 ? "" : "s", first->name, rs_dtype_get_name(first->src_dtype),
                    rs_dtype_get_name(first->dtype), rs_dtype_get_name(first->dtype));
}

static guint64
checked_elems(const RsRefit *refit)
{
    guint64 n = 0;
    for (guint i = 0; i < rs_refit_get_n_tensors(refit); i++) {
        const RsRefitTensor *t = rs_refit_get_tensor(refit, i);
        for (guint e = 0; e < rs_layout_get_n_ranks(t->dst); e++) {
            guint n_boxes;
            const RsLocalBox *boxes = rs_layout_get_boxes(t->dst, e, &n_boxes);
            for (guint b = 0; b < n_boxes; b++)
                n += rs_box_get_n_elems(&boxes[b].box);
        }
    }
    return n;
}

static guint
copy_rates_of(const RsTopology *topo)
{
    guint n;
    rs_topology_get_copy_rates(topo, &n);
    return n;
}

static int
report(const Work *w, const RsPlan *plan, const RsExecResult *res, const RsCostEstimate *cost,
       RsTransport *transport, const RsExecOptions *opts, RsFormat format)
{
    guint n_phases = rs_plan_get_n_phases(plan);
    g_autofree RsRunPhase *phases = g_new0(RsRunPhase, MAX(n_phases, 1));
    for (guint m = 0; m < rs_plan_get_n_messages(plan); m++) {
        const RsMessage *msg = rs_plan_get_message(plan, m);
        if (msg->src == msg->dst)
            continue;
        phases[msg->phase].n_messages++;
        phases[msg->phase].size_bytes += msg->size_bytes;
    }
    for (guint p = 0; p < n_phases && p < res->phase_s->len; p++)
        phases[p].measured_s = g_array_index(res->phase_s, double, p);
    g_autofree char *first_bad =
        res->n_bad_elems > 0 ? rs_exec_mismatch_format(&res->first_bad, w->refit) : NULL;
    RsRunReport r = {
        .work = w->work,
        .strategy = rs_strategy_get_name(rs_plan_get_strategy(plan)),
        .transport = rs_transport_get_name(transport),
        .n_ranks = res->n_ranks,
        .n_transfers = rs_plan_get_n_transfers(plan),
        .n_network_messages = rs_plan_get_n_network_messages(plan),
        .bytes_moved = res->bytes_moved,
        .local_bytes = res->local_bytes,
        .chunk_bytes = opts->chunk_bytes ? opts->chunk_bytes : RS_EXEC_DEFAULT_CHUNK_BYTES,
        .window = opts->window ? opts->window : RS_EXEC_DEFAULT_WINDOW,
        .n_runs = res->n_runs,
        .run_s = (const double *)res->run_s->data,
        .measured_s = res->median_s,
        .has_prediction = w->topology != NULL,
        .predicted_s = cost->predicted_s,
        .topology = w->topology ? rs_topology_get_name(w->topology) : NULL,
        .predicted_link_s = cost->link_s,
        .predicted_copy_s = cost->copy_s,
        .predicted_fixed_s = cost->latency_s,
        .copies_modelled = w->topology != NULL && copy_rates_of(w->topology) > 0,
        .n_copy_bound_phases = cost->copy_bound_phases,
        .n_phases = n_phases,
        .phases = phases,
        .validated = res->validated,
        .n_checked_elems = checked_elems(w->refit),
        .n_bad_elems = res->n_bad_elems,
        .first_bad = first_bad,
        .n_sends = res->n_sends,
        .n_zero_copy = res->n_zero_copy,
        .peak_pack_bytes = res->peak_pack_bytes,
        .buffer_bytes = res->buffer_bytes,
    };
    g_autoptr(GString) out = g_string_new(NULL);
    rs_report_run(&r, format, out);
    fputs(out->str, stdout);
    fflush(stdout);
    if (res->n_bad_elems > 0) {
        rs_cli_printerr("reshard run: validation failed: %" G_GUINT64_FORMAT " element%s; "
                        "first: %s\n",
                        res->n_bad_elems, res->n_bad_elems == 1 ? " differs" : "s differ",
                        first_bad);
        return RS_EXIT_CHECK;
    }
    return RS_EXIT_OK;
}

/* --compare: the flow-level simulation of the plan on the prediction's topology against
 * the measured trace (message i of both is plan message i). */
static int
compare_with_flow(const char *cmd, const Work *w, const RsPlan *plan, const RsExecResult *res,
                  const RsExecOptions *opts, RsFormat format)
{
    g_autoptr(GError) error = NULL;
    if (w->topology == NULL) {
        g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--compare needs a topology to simulate on (--topology)");
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    RsFlowSimOptions fo;
    rs_flow_sim_options_init(&fo);
    /* Predicted as the executor ran it: its chunks, not the step of the library a peer's
     * plan models. */
    fo.plan_relays = FALSE;
    fo.chunk_bytes = opts->chunk_bytes ? opts->chunk_bytes : RS_EXEC_DEFAULT_CHUNK_BYTES;
    if (opt_compare_posting == NULL || strcmp(opt_compare_posting, "window") == 0) {
        fo.posting = RS_FLOW_SIM_POST_WINDOW;
        fo.window = opts->window ? opts->window : RS_EXEC_DEFAULT_WINDOW;
    }
    g_autoptr(RsFlowSimResult) flow = rs_flow_sim_run(plan, w->topology, &fo, &error);
    if (flow == NULL)
        return rs_cli_fail(cmd, error, RS_EXIT_RUNTIME);
    g_autoptr(RsTrace) predicted = rs_flow_sim_result_to_trace(flow, w->topology, NULL);
    if (format == RS_FORMAT_TABLE)
        printf("\npredicted  flow model, %s\n",
               fo.posting == RS_FLOW_SIM_POST_WINDOW
                   ? "the executor's schedule (its chunks in key order, --window in flight per "
                     "rank)"
                   : "whole phases posted at once, relays chunked (--compare-posting phases)");
    g_autoptr(RsCompare) c = rs_compare_new(predicted, res->trace, &error);
    if (c == NULL)
        return rs_cli_fail(cmd, error, RS_EXIT_RUNTIME);
    g_autoptr(GString) out = g_string_new(format == RS_FORMAT_TABLE ? "\n" : "");
    rs_compare_report(c, format, out);
    fputs(out->str, stdout);
    return RS_EXIT_OK;
}

static int
run(int argc, char **argv)
{
    const char *cmd = "run";
    int code = RS_EXIT_OK;
    if (!rs_cli_parse(cmd, make_context, &argc, &argv, &code))
        return code;

    g_autoptr(GError) error = NULL;
    RsExecOptions opts;
    RsTransportConfig tconfig;
    RsStrategy strategy;
    RsFormat format;
    /* The trace path before any work: a wrong folder is a usage error found now, not after
     * the run. */
    if (!parse_options(&opts, &tconfig, &strategy, &format, &error) ||
        !rs_cli_check_output("--trace", opt_trace, &error) ||
        !rs_cli_check_output("--timeline", opt_timeline, &error) ||
        !rs_cli_check_distinct_outputs("--trace", opt_trace, "--timeline", opt_timeline,
                                       &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    /* The trace's metadata sidecar is an output too. */
    g_autofree char *trace_meta = opt_trace ? rs_trace_get_meta_path(opt_trace) : NULL;
    if (!rs_cli_check_distinct_outputs("--trace (its metadata sidecar)", trace_meta,
                                       "--timeline", opt_timeline, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    if (!rs_scenario_args_check_no_memory(&sargs, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    if (opt_compare_posting != NULL && !opt_compare) {
        g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--compare-posting applies to --compare: give both");
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    if (opt_compare_posting != NULL && strcmp(opt_compare_posting, "window") != 0 &&
        strcmp(opt_compare_posting, "phases") != 0) {
        g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--compare-posting: unknown model \"%s\" (known: window, phases)",
                    opt_compare_posting);
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    /* Two documents on stdout would not load as one CSV or JSON. */
    if (opt_compare && format != RS_FORMAT_TABLE) {
        g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--compare prints its tables after the run's; for CSV or JSON write "
                    "--trace and run reshard compare on it");
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    /* Open the transport first: under mpirun only rank 0's process then reports input
     * errors, and every process leaves through MPI_Finalize. */
    /* Under mpirun a watcher process stays behind, so that a rank killed by a signal ends
     * the job with exit 1 and its name (cli/supervise.h). */
    if (opt_transport != NULL &&
        (strcmp(opt_transport, "mpi") == 0 || strcmp(opt_transport, "nccl") == 0))
        rs_cli_supervise_rank(cmd);
    g_autoptr(RsTransport) transport =
        rs_transport_open(opt_transport ? opt_transport : "host", &tconfig, &error);
    if (transport == NULL && g_error_matches(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_UNKNOWN))
        g_prefix_error(&error, "--transport: ");
    if (transport == NULL)
        return rs_cli_fail(cmd, error,
                           g_error_matches(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_FAILED)
                               ? RS_EXIT_RUNTIME
                               : RS_EXIT_USAGE);
    gboolean root = rs_transport_is_root(transport);
    if (!root)
        rs_cli_quiet = rs_cli_secondary_rank = TRUE;

    Work w;
    /* The trace may not replace an input (the scenario, model or topology just read). */
    if (!load_work(&w, &error) || !rs_cli_check_not_input("--trace", opt_trace, &error)) {
        work_clear(&w);
        return root ? rs_cli_fail(cmd, error, RS_EXIT_USAGE) : RS_EXIT_USAGE;
    }
    /* Before the run, not after it (it ran and printed its report first). */
    if (opt_compare && w.topology == NULL) {
        g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--compare needs a topology to simulate on (--topology)");
        work_clear(&w);
        return root ? rs_cli_fail(cmd, error, RS_EXIT_USAGE) : RS_EXIT_USAGE;
    }
    rs_cli_progress("planning %s ...", rs_strategy_get_name(strategy));
    /* Planned on the topology of the prediction, as reshard simulate plans: node-aware and
     * hierarchical follow its NVLink domains and NICs, buckets its GPU memory. */
    RsPlanOptions plan_options;
    rs_plan_options_init(&plan_options, w.topology);
    g_autoptr(RsPlan) plan = rs_plan_build_full(w.refit, strategy, &plan_options, &error);
    if (plan == NULL) {
        work_clear(&w);
        return root ? rs_cli_fail(cmd, error, RS_EXIT_USAGE) : RS_EXIT_USAGE;
    }
    if (!rs_plan_check(plan, w.refit, &error)) {
        work_clear(&w);
        return root ? rs_cli_fail(cmd, error, RS_EXIT_CHECK) : RS_EXIT_CHECK;
    }
    RsCostEstimate cost = {0};
    if (w.topology != NULL &&
        !rs_cost_estimate_chunked(plan, w.refit, w.topology,
                                  opts.chunk_bytes ? opts.chunk_bytes : RS_EXEC_DEFAULT_CHUNK_BYTES,
                                  &cost, &error)) {
        g_prefix_error(&error, "prediction: ");
        work_clear(&w);
        return root ? rs_cli_fail(cmd, error, RS_EXIT_USAGE) : RS_EXIT_USAGE;
    }
    guint n_transfers = rs_plan_get_n_transfers(plan);
    rs_cli_progress("running %u transfer%s (%.3f GB between ranks) on the %s transport ...",
                    n_transfers, n_transfers == 1 ? "" : "s", rs_plan_get_bytes_moved(plan) / 1e9,
                    rs_transport_get_name(transport));
    RsExecResult res;
    if (!rs_exec_run(transport, plan, w.refit, &opts, &res, &error)) {
        /* Bad options and a world of the wrong size are found the same way by every
         * process: rank 0 reports them. Anything else (a failed transfer, memory a
         * process could not get) is reported by the process that saw it, which then ends
         * the job so that no process waits for it forever. */
        gboolean everywhere = g_error_matches(error, RS_EXEC_ERROR, RS_EXEC_ERROR_INVALID) ||
                              g_error_matches(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_WORLD);
        code = everywhere || g_error_matches(error, RS_EXEC_ERROR, RS_EXEC_ERROR_MEMORY)
                   ? RS_EXIT_USAGE
                   : RS_EXIT_RUNTIME;
        if (g_error_matches(error, RS_EXEC_ERROR, RS_EXEC_ERROR_MEMORY))
            rs_cli_append_hint(error, single_tensor_given()
                                          ? "give a smaller --chunk-size or --window (pack "
                                            "buffers per rank: window x the chunk, or x the "
                                            "largest message when smaller), or a smaller "
                                            "--shape"
                                          : "run a scaled model (--scale) or fewer layers "
                                            "(--layers), or give a smaller --chunk-size or "
                                            "--window");
        if (root || !everywhere)
            rs_cli_fail(cmd, error, code);
        if (!everywhere && rs_transport_get_world_size(transport) > 0)
            rs_transport_abort(transport, code);
        rs_exec_result_clear(&res);
        work_clear(&w);
        return code;
    }
    if (root) {
        if (opt_trace != NULL) {
            rs_trace_set_meta(res.trace, "work", w.work);
            g_autofree char *meta = rs_trace_get_meta_path(opt_trace);
            if (!rs_cli_begin_output("--trace", opt_trace, &error) ||
                !rs_cli_begin_output("--trace", meta, &error)) {
                code = rs_cli_fail(cmd, error, RS_EXIT_USAGE);
            } else if (!rs_trace_write_file(res.trace, opt_trace, &error)) {
                g_prefix_error(&error, "--trace: "); /* (the message names the path) */
                code = rs_cli_fail(cmd, error, RS_EXIT_RUNTIME);
            }
        }
        if (code == RS_EXIT_OK && opt_timeline != NULL) {
            if (!rs_cli_begin_output("--timeline", opt_timeline, &error))
                code = rs_cli_fail(cmd, error, RS_EXIT_USAGE);
            else if (!rs_timeline_write_file(res.trace, opt_timeline, &error))
                code = rs_cli_fail(cmd, error, RS_EXIT_RUNTIME);
        }
        int report_code = report(&w, plan, &res, &cost, transport, &opts, format);
        if (code == RS_EXIT_OK)
            code = report_code;
        if (code == RS_EXIT_OK && opt_compare)
            code = compare_with_flow(cmd, &w, plan, &res, &opts, format);
        /* A failed run (a write error, wrong bytes) leaves no trace file of its own. */
        if (code != RS_EXIT_OK)
            rs_cli_remove_created_outputs();
    } else if (res.n_bad_elems > 0) {
        code = RS_EXIT_CHECK;
    }
    rs_exec_result_clear(&res);
    work_clear(&w);
    return code;
}

const RsCommand rs_command_run = {
    "run",
    "Execute a refit plan with real bytes, validate it, compare with the prediction",
    run,
    make_context,
};
