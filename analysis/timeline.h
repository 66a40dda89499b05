/* timeline.h — a per-message trace (base/trace.h: simulated or measured) in the Chrome
 * trace event format (the JSON Object Format of "Trace Event Format", Google, the format
 * chrome://tracing and Perfetto's ui.perfetto.dev open).
 *
 * Tracks:
 * - one process per GPU that receives ("GPU N", pid N + 1): each message is a complete
 *   event ("ph": "X", ts and dur in microseconds) named "SRC -> DST", category its phase,
 *   args {message, src, dst, bytes, phase, route}; a GPU's messages overlap in time, so
 *   they are dealt over lanes (threads "lane K"): each message goes to the lowest lane free
 *   at its start (messages by start, then message id), so no two events of a lane overlap;
 * - one process "link classes" (pid 0) with a counter per link class on the messages'
 *   routes (nvlink, pcie, nic, spine: "ph": "C"), the number of messages crossing a link
 *   of that class at each time.
 * Messages without both times (an unmeasured trace) are left out. Deterministic.
 */
#pragma once

#include <glib.h>

#include "base/trace.h"

G_BEGIN_DECLS

/**
 * rs_timeline_to_json:
 * @trace: the messages
 * Returns: (transfer full): the document: {"traceEvents": [...], "displayTimeUnit": "ns",
 *   "otherData": {the provenance (rs_report_provenance_new()) and the trace's metadata}}.
 */
char *rs_timeline_to_json(const RsTrace *trace);

/**
 * rs_timeline_write_file:
 * @path: the output (rs_output_write_file(): a regular file is replaced whole or left as
 *   it was; a device or FIFO is written into)
 * @error: G_FILE_ERROR of rs_output_write_file(), whose message names @path
 * Returns: TRUE on success.
 */
gboolean rs_timeline_write_file(const RsTrace *trace, const char *path, GError **error);

/**
 * rs_timeline_link_class:
 * @link_name: a link of a route ("gpu3.nvlink-egress", "su0.leaf2.uplink")
 * Returns: (transfer none): "nvlink", "pcie", "nic" or "spine" (leaf uplinks and
 *   downlinks), or "other".
 */
const char *rs_timeline_link_class(const char *link_name);

G_END_DECLS
