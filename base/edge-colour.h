/* edge-colour.h — colours for the messages of a schedule, so that the operations one rank
 * posts together meet operations its peers post at the same time.
 *
 * The messages of a group (a phase) are the edges of a bipartite multigraph: each message
 * an edge from its sender's send side to its receiver's receive side. A proper edge
 * colouring gives every message a colour such that no two messages of the group leaving
 * one rank, nor two entering one rank, share it: each colour class is a set of messages in
 * which every rank sends at most once and receives at most once (a partial permutation),
 * so ranks that walk their messages by colour walk them in step. König's theorem (1916)
 * says Δ colours suffice for a bipartite multigraph of largest degree Δ, and its proof is
 * the algorithm used here: each message in input order takes a colour a free at its
 * sender; if a is taken at its receiver, which has some b free, the path from the receiver
 * whose edges alternate a, b, a, ... has its two colours swapped (it cannot reach the
 * sender), which frees a there (e.g. Schrijver, "Combinatorial Optimization", 2003,
 * Thm 20.1). Δ colours exactly: for a complete bipartite pattern every rank has one
 * message of every colour, as in NCCL's p2p schedule (src/init.cc, comm->p2pSchedule:
 * round r sends to rank + delta, receives from rank − delta). First fit, tried before,
 * needs up to 2Δ − 1 colours and left the ranks out of step (docs/DESIGN.md). O(n × (Δ +
 * path length)) time, at worst O(n × ranks); memory at most 8 × n words per group plus 12
 * per rank: a rank side whose degree d is at least Δ / 4 keeps a row of Δ <= 4d entries, a
 * smaller one a list of its d (colour, edge) pairs.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/**
 * rs_edge_colour_bipartite:
 * @src: (array length=n): per message, its sender, below @n_vertices
 * @dst: (array length=n): per message, its receiver, below @n_vertices
 * @group: (array length=n): per message, its group (a phase); colours restart in each
 *   group, and messages of different groups never conflict
 * @n: messages
 * @n_vertices: ranks (one more than the largest rank named)
 * @colour_out: (array length=n) (out caller-allocates): per message, its colour, below the
 *   group's largest degree Δ (sends of one rank or receives of one rank); 0 for a message
 *   with @src == @dst, which takes no colour
 *
 * König's alternating-path edge colouring (see the top of the file), messages of a group in
 * input order. Deterministic. Errors: none at run time; a rank at or above @n_vertices, or
 * @n above G_MAXINT, is a programmer error (g_return_if_fail: a critical warning, and
 * @colour_out is left unwritten). Memory: at most 8 × @n + 12 × @n_vertices words for the
 * largest group (above), freed before it returns.
 */
void rs_edge_colour_bipartite(const guint32 *src, const guint32 *dst, const guint32 *group,
                              guint n, guint n_vertices, guint32 *colour_out);

G_END_DECLS
