/* units.h — parsing and formatting of quantities with units: bandwidth, duration, size.
 *
 * Inside the code every quantity is in bytes, seconds or bytes per second. Inputs carry
 * their unit in the text; a number without a unit, or a unit that could mean two things
 * ("Gb/s": gigabits or gigabytes?), is an error. Decimal prefixes are powers of 10
 * (1 GB = 10^9 bytes), binary prefixes powers of 2 (1 GiB = 2^30 bytes).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define RS_UNITS_ERROR (rs_units_error_quark())
GQuark rs_units_error_quark(void);

typedef enum {
    RS_UNITS_ERROR_SYNTAX,    /* not a number followed by a unit */
    RS_UNITS_ERROR_MISSING,   /* a number with no unit */
    RS_UNITS_ERROR_AMBIGUOUS, /* a unit with two readings, e.g. "Gb/s" */
    RS_UNITS_ERROR_UNKNOWN,   /* a unit of the wrong kind or unknown */
    RS_UNITS_ERROR_RANGE,     /* negative, not finite, or too large */
} RsUnitsError;

/* The plausible range of a physical figure read from input; anything outside is a typo or
 * an attack, refused with the limit named. Bandwidth: 1 kB/s (below any link a refit runs
 * over) to 1 PB/s (above the 130 TB/s of a whole NVL72 NVLink switch system, NVIDIA GB200
 * NVL72 datasheet, let alone one link). Duration: at most 10^6 s (11.6 days; latencies,
 * overheads, timeouts and targets are micro- to kiloseconds). Size: at most 2^53 - 1 bytes
 * (8 PiB: a double's whole numbers are exact below 2^53; GPU memories, buckets and chunks
 * are gigabytes). */
#define RS_UNITS_MIN_BANDWIDTH_BYTES_PER_S 1e3
#define RS_UNITS_MAX_BANDWIDTH_BYTES_PER_S 1e15
#define RS_UNITS_MAX_DURATION_S 1e6
#define RS_UNITS_MAX_SIZE_BYTES 9007199254740991.0 /* 2^53 - 1 */

/**
 * rs_units_parse_bandwidth:
 * @text: e.g. "450 GB/s", "400 Gbit/s", "25 GiB/s", "100 Mbit/s"; space optional
 * @bw_bytes_per_s_out: (out): the bandwidth in bytes per second (bits are divided by 8)
 * @error: RS_UNITS_ERROR_MISSING for a bare number, RS_UNITS_ERROR_AMBIGUOUS for "Gb/s",
 *   "Gbps", "GBps" and the like (the message says to use Gbit/s or GB/s),
 *   RS_UNITS_ERROR_UNKNOWN, RS_UNITS_ERROR_SYNTAX, RS_UNITS_ERROR_RANGE for values <= 0 or
 *   outside [RS_UNITS_MIN_BANDWIDTH_BYTES_PER_S, RS_UNITS_MAX_BANDWIDTH_BYTES_PER_S] (the
 *   message names the limit).
 *
 * Accepted units: B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s, bit/s,
 * Kbit/s, Mbit/s, Gbit/s, Tbit/s; kB/s and kbit/s (the SI spelling of kilo).
 *
 * Returns: TRUE on success.
 */
gboolean rs_units_parse_bandwidth(const char *text, double *bw_bytes_per_s_out, GError **error);

/**
 * rs_units_parse_duration:
 * @text: e.g. "3.4 us", "2 ms", "1.5 s", "500 ns"; "µs" is accepted for "us"
 * @duration_s_out: (out): seconds
 * @error: as rs_units_parse_bandwidth(); zero is allowed, negative or above
 *   RS_UNITS_MAX_DURATION_S is RS_UNITS_ERROR_RANGE
 *
 * Returns: TRUE on success.
 */
gboolean rs_units_parse_duration(const char *text, double *duration_s_out, GError **error);

/**
 * rs_units_parse_size:
 * @text: e.g. "80 GiB", "512 MiB", "1.5 GB", "4096 B"
 * @size_bytes_out: (out): bytes (a size that is not a whole number of bytes, "1.5 B" or
 *   "0.1 KiB", is RS_UNITS_ERROR_RANGE)
 * @error: as rs_units_parse_bandwidth(); "Gb" is ambiguous; negative values and values
 *   over RS_UNITS_MAX_SIZE_BYTES (2^53 - 1: the number is read as a double, exact for whole
 *   numbers below 2^53) are RS_UNITS_ERROR_RANGE; a hexadecimal number ("0x10 MiB", which
 *   g_ascii_strtod() would read) is RS_UNITS_ERROR_SYNTAX, for every quantity
 *
 * Accepted units: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB.
 *
 * Returns: TRUE on success.
 */
gboolean rs_units_parse_size(const char *text, guint64 *size_bytes_out, GError **error);

/**
 * rs_units_format_bandwidth:
 * @bw_bytes_per_s: bytes per second
 *
 * Returns: (transfer full): decimal GB/s text such as "450 GB/s" or "48.5 GB/s".
 */
char *rs_units_format_bandwidth(double bw_bytes_per_s);

/**
 * rs_units_format_duration:
 * @duration_s: seconds
 *
 * Returns: (transfer full): text in the largest unit that keeps the value >= 1
 * ("3.40 us", "12.5 ms", "1.84 s").
 */
char *rs_units_format_duration(double duration_s);

G_END_DECLS
