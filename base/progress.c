/* progress.c — the wall time a long job has left (progress.h). */
#include "base/progress.h"

void
rs_progress_history_init(RsProgressHistory *h)
{
    h->n = 1;
    h->newest = 0;
    h->wall_s[0] = 0.0;
    h->fraction[0] = 0.0;
}

/* The index @back samples before the newest (@back < h->n). */
static guint
sample_at(const RsProgressHistory *h, guint back)
{
    return (h->newest + RS_PROGRESS_SAMPLES - back) % RS_PROGRESS_SAMPLES;
}

void
rs_progress_history_add(RsProgressHistory *h, double wall_s, double fraction)
{
    /* The newest sample is kept once it is RS_PROGRESS_SPACING_S after the one before,
     * else this one takes its place. */
    if (h->n < 2 || h->wall_s[h->newest] - h->wall_s[sample_at(h, 1)] >= RS_PROGRESS_SPACING_S) {
        h->newest = (h->newest + 1) % RS_PROGRESS_SAMPLES;
        h->n = MIN(h->n + 1, RS_PROGRESS_SAMPLES);
    }
    h->wall_s[h->newest] = wall_s;
    h->fraction[h->newest] = CLAMP(fraction, 0.0, 1.0);
}

double
rs_progress_seconds_left(const RsProgressHistory *h, double min_fraction, double *window_s)
{
    double now_s = h->wall_s[h->newest], done = h->fraction[h->newest];
    if (window_s != NULL)
        *window_s = 0.0;
    if (done >= 1.0)
        return 0.0;
    if (done < min_fraction)
        return -1.0;
    double window = CLAMP(now_s / 4, RS_PROGRESS_MIN_WINDOW_S, RS_PROGRESS_MAX_WINDOW_S);
    /* The newest sample at least @window old, else the oldest held. */
    guint ref = sample_at(h, h->n - 1);
    for (guint back = 1; back < h->n; back++) {
        guint i = sample_at(h, back);
        if (h->wall_s[i] <= now_s - window) {
            ref = i;
            break;
        }
    }
    double span_s = now_s - h->wall_s[ref];
    double gained = done - h->fraction[ref];
    if (window_s != NULL)
        *window_s = span_s;
    if (span_s <= 0 || gained <= 0)
        return -2.0;
    return (1.0 - done) * span_s / gained;
}
