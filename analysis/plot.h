/* plot.h — pictures of a refit, rendered by gnuplot: each plot writes its data
 * (PREFIX.dat, whitespace-separated columns with a "#" header line naming them, as gnuplot
 * reads them) and its script (PREFIX.gp), then one gnuplot process renders PREFIX.png
 * (pngcairo) and PREFIX.svg (svg) of the requested size from them.
 *
 * gnuplot is found as $RESHARD_GNUPLOT or "gnuplot" on PATH; without it every plot fails
 * with RS_PLOT_ERROR_NO_GNUPLOT and the hint to install it (Debian: gnuplot-nox, which
 * scripts/install-deps.sh installs). A failed plot leaves none of its files.
 *
 * The plots:
 *   strategies   per strategy a bar of the first-order parts of the time (busiest link of
 *                the scale-out network or of NVLink, copies, fixed per-message costs), a
 *                point at the predicted time, the lower bound as a horizontal line;
 *   timeline     per message a segment from its start to its end on the row of its
 *                destination GPU (the per-GPU timeline of messages);
 *   links        link utilisation over time as a heatmap: the most loaded links (rows)
 *                against timeline buckets (columns), colour = fraction of capacity used;
 *   traffic      the source × destination traffic matrix as a heatmap (GB per pair, GPUs
 *                grouped per node beyond 512 GPUs);
 *   compare      predicted against measured message times, log-log, with y = x;
 *   sweep        refit time against inference GPUs, one curve per tensor-parallel size,
 *                the Pareto front as a line and infeasible points as crosses.
 */
#pragma once

#include <glib.h>

#include "analysis/sweep.h"
#include "base/trace.h"
#include "sim/flow-sim.h"
#include "topologies/topology.h"

G_BEGIN_DECLS

#define RS_PLOT_ERROR (rs_plot_error_quark())
GQuark rs_plot_error_quark(void);

typedef enum {
    RS_PLOT_ERROR_NO_GNUPLOT, /* gnuplot is not installed */
    RS_PLOT_ERROR_FAILED,     /* gnuplot failed (its stderr in the message), or a file */
    RS_PLOT_ERROR_EMPTY,      /* nothing to plot */
} RsPlotError;

/* Size of every PNG and SVG, pixels. */
#define RS_PLOT_WIDTH 1000
#define RS_PLOT_HEIGHT 600

/**
 * rs_plot_render:
 * @prefix: the files written: PREFIX.dat (@data), PREFIX.gp (the script: @script after a
 *   preamble setting the PNG terminal) and PREFIX.png, PREFIX.svg
 * @data: the data file's text
 * @script: gnuplot commands that plot, reading the data as '@prefix.dat' (the caller
 *   writes the name); run once for the PNG and, through `replot`, once for the SVG
 * @width, @height: pixels
 * @error: RS_PLOT_ERROR_NO_GNUPLOT or RS_PLOT_ERROR_FAILED
 * Returns: TRUE when both images were written.
 */
gboolean rs_plot_render(const char *prefix, const char *data, const char *script, guint width,
                        guint height, GError **error);

/* One strategy's bar (seconds). */
typedef struct {
    const char *label;
    double network_s; /* first-order: the busiest link's time when it is a network link */
    double nvlink_s;  /* … when it is an NVLink link */
    double copy_s;
    double fixed_s;
    double time_s; /* the prediction shown (flow-level when simulated) */
} RsPlotBar;

/** rs_plot_strategies: the strategies plot (plot.h); @bound_s the lower bound, seconds. */
gboolean rs_plot_strategies(const RsPlotBar *bars, guint n_bars, double bound_s, const char *prefix,
                            GError **error);

/** rs_plot_timeline: the per-GPU timeline of @trace's messages with known times. */
gboolean rs_plot_timeline(const RsTrace *trace, const char *prefix, GError **error);

/**
 * rs_plot_links:
 * @flow: a simulation with a timeline (n_buckets > 0)
 * @max_links: rows: the most loaded links (bytes / capacity: the seconds their bytes take
 *   at full rate), at most this many (in link id order); the x axis spans the run
 *   (total_s)
 */
gboolean rs_plot_links(const RsFlowSimResult *flow, const RsTopology *topo, guint max_links,
                       const char *prefix, GError **error);

/** rs_plot_traffic: the traffic matrix of @trace (bytes by src and dst, local copies out). */
gboolean rs_plot_traffic(const RsTrace *trace, guint gpus_per_node, const char *prefix,
                         GError **error);

/**
 * rs_plot_compare:
 * @predicted_s, @measured_s: (array length=n): per message durations, seconds (> 0 kept)
 */
gboolean rs_plot_compare(const double *predicted_s, const double *measured_s, guint n,
                         const char *prefix, GError **error);

/** rs_plot_sweep: the sweep plot of @results (plot.h). */
gboolean rs_plot_sweep(const RsSweepPoint *points, const RsSweepResult *results, guint n,
                       const char *prefix, GError **error);

G_END_DECLS
