/* compare.h — a predicted trace against a measured one (both in the schema of
 * base/trace.h), message by message, matched by message id.
 *
 * Per message the time is end − start (its post to its last byte). The groups:
 * - total: the span of all messages (first start to last end);
 * - phase P: the span of the phase's messages;
 * - size class: messages by bytes, < 64 KiB, 64 KiB–1 MiB, 1–16 MiB, 16–256 MiB, ≥ 256 MiB
 *   (powers of 16 of the 64 KiB that NCCL's protocols switch around), their summed times;
 * - link class: by the widest class on the predicted route (network: a NIC or the spine;
 *   pcie; nvlink; local: a copy within one GPU; unknown: a message between two GPUs
 *   without a route, as in a trace of reshard run), their summed times.
 * Every group states predicted and measured seconds, the relative error of the group
 * (predicted − measured) / measured, and the median and 90th percentile of its messages'
 * |relative errors| (nearest-rank percentile: the value at rank ceil(0.9 n)). The
 * messages with the largest |relative error| are listed (ties: lower message id).
 * Messages in only one trace are counted and left out.
 */
#pragma once

#include <glib.h>

#include "analysis/table.h"
#include "base/trace.h"

G_BEGIN_DECLS

#define RS_COMPARE_ERROR (rs_compare_error_quark())
GQuark rs_compare_error_quark(void);

typedef enum {
    RS_COMPARE_ERROR_NO_MATCH, /* no message id is in both traces with both times */
    RS_COMPARE_ERROR_MISMATCH, /* a message id names other ranks or bytes in each trace: the
                                * traces are of different plans */
} RsCompareError;

/* One matched message. */
typedef struct {
    guint32 message;
    guint32 src, dst, phase;
    guint64 size_bytes;
    const char *link_class; /* (transfer none) a static string */
    double predicted_s;     /* its time in the predicted trace, seconds */
    double measured_s;
    double error; /* (predicted − measured) / measured; NAN when measured is 0 (no relative
                   * error exists: it is left out of every |error| statistic) */
} RsCompareMessage;

typedef struct _RsCompare RsCompare;

/**
 * rs_compare_new:
 * @error: RS_COMPARE_ERROR_NO_MATCH naming both traces; RS_COMPARE_ERROR_MISMATCH when
 *   the first message id (in @measured's order) whose source, destination, bytes or phase
 *   differ
 *   between the two, named with both traces' lines (they then describe different plans:
 *   another scenario, strategy or planner flag; matching them by id would compare unrelated
 *   messages)
 * Returns: (transfer full): the comparison, or NULL.
 */
RsCompare *rs_compare_new(const RsTrace *predicted, const RsTrace *measured, GError **error);
void rs_compare_free(RsCompare *compare);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsCompare, rs_compare_free)

/** rs_compare_get_messages: Returns: (transfer none) (array length=n_out): by message id. */
const RsCompareMessage *rs_compare_get_messages(const RsCompare *compare, guint *n_out);

/**
 * rs_compare_groups_table:
 * Returns: (transfer full): one row per group: group_kind ("total", "phase", "size",
 *   "link"), group, messages, predicted_s, measured_s, error, median_abs_error,
 *   p90_abs_error.
 */
RsTable *rs_compare_groups_table(const RsCompare *compare);

/** rs_compare_worst_table: Returns: (transfer full): the @n messages of largest |error|. */
RsTable *rs_compare_worst_table(const RsCompare *compare, guint n);

/**
 * rs_compare_report:
 * @format: table (a header line with the matched counts, the groups table, the worst
 *   messages), csv (the groups table) or json (groups[], worst[] and the counts)
 */
void rs_compare_report(const RsCompare *compare, RsFormat format, GString *out);

/** rs_compare_percentile: nearest-rank percentile @p (0 < p <= 1) of @values (sorted in place). */
double rs_compare_percentile(double *values, guint n, double p);

G_END_DECLS
