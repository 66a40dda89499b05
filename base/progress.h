/* progress.h — the wall time a long job has left, from how fast it went lately.
 *
 * A simulation's cost per byte is far from even: the default scenario's nccl-broadcast
 * delivered 98% of its bytes in 32 s of wall time and the last 2% in the next 60 s (its
 * pipelines drain hop by hop, each hop an event over thousands of flows), while the
 * hierarchical plan with domain relays moved 0.1% of its bytes in its first 60 s. An
 * estimate at the average rate since the start ("99%, about 1 s left", 30 s before the
 * end) is then off by the whole tail. This one divides what is left by the rate of a
 * recent window: the last quarter of the elapsed time, at least RS_PROGRESS_MIN_WINDOW_S
 * and at most RS_PROGRESS_MAX_WINDOW_S, so that it follows a slowdown within a fraction
 * of the run instead of never.
 *
 * Samples are kept at least RS_PROGRESS_SPACING_S apart (a later one replaces the newest
 * until then), in a ring of RS_PROGRESS_SAMPLES, which covers the longest window. Not
 * thread-safe: one history per job, updated by one thread at a time.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define RS_PROGRESS_SAMPLES 160
#define RS_PROGRESS_SPACING_S 1.0
#define RS_PROGRESS_MIN_WINDOW_S 5.0
#define RS_PROGRESS_MAX_WINDOW_S 120.0

typedef struct {
    double wall_s[RS_PROGRESS_SAMPLES];   /* seconds since the job started */
    double fraction[RS_PROGRESS_SAMPLES]; /* of the work done, 0 to 1 */
    guint n;                              /* samples held, at most RS_PROGRESS_SAMPLES */
    guint newest;                         /* index of the newest sample (n > 0) */
} RsProgressHistory;

/**
 * rs_progress_history_init:
 * @h: (out caller-allocates): the history
 *
 * Starts @h with the job's start: fraction 0 at 0 s.
 */
void rs_progress_history_init(RsProgressHistory *h);

/**
 * rs_progress_history_add:
 * @h: the history
 * @wall_s: seconds since the job started, not below the newest sample's
 * @fraction: of the work done at @wall_s, 0 to 1 (clamped)
 *
 * Records a sample as the newest. The newest one before it is kept if it came at least
 * RS_PROGRESS_SPACING_S after its own predecessor, else replaced (so kept samples are that
 * far apart and the estimate always sees the latest figure); the oldest sample goes once
 * the ring is full.
 */
void rs_progress_history_add(RsProgressHistory *h, double wall_s, double fraction);

/**
 * rs_progress_seconds_left:
 * @h: the history; its newest sample is now
 * @min_fraction: below this fraction done there is no estimate (the first events of a
 *   simulation cost the most and deliver the least)
 * @window_s: (out) (optional): the seconds of wall time the rate was measured over
 *
 * The wall time left at the rate of the recent window: the window is W = elapsed / 4,
 * clamped to [RS_PROGRESS_MIN_WINDOW_S, RS_PROGRESS_MAX_WINDOW_S], and the rate is the
 * fraction gained since the newest sample at least W older than now (the oldest held if
 * none is), over the seconds between. With a constant rate r this is (1 − f) / r, the
 * estimate at the average rate.
 *
 * Returns: seconds left; 0 when the work is done; -1 below @min_fraction; -2 when nothing
 *   was gained in the window (no rate to divide by: the job is stalled or slowed down to
 *   below what the samples resolve).
 */
double rs_progress_seconds_left(const RsProgressHistory *h, double min_fraction,
                                double *window_s);

G_END_DECLS
