/* The cycle model of `hls/dpn/timing.py`, in C: the same rules, the same counts, cycle for cycle.
 *
 * Why C: the compiler runs the model on every candidate network and every `deepen` trial, and in
 * Python it was a quarter to two fifths of a compile (bench/results/scaling-session36*).  This file
 * is the model's fast path; `timing.simulate_timing` in Python stays its specification and oracle
 * (tests/dpn/test_native_model.py runs both on every example) and what records schedules.
 *
 * Layout (built by hls/dpn/native_model.py from `timing.Plan`): every list of entries is in
 * compressed rows.  A "group" is one process's reads at issue (group proc_group[i]) or at its j-th
 * late stage (group proc_group[i] + 1 + j), or its writes (group proc_wgroup[i]); group g's rows
 * for iterations 0 .. n-1 start at offs[group_base[g] + k] and end at offs[group_base[g] + k + 1],
 * indices into the entry columns (r_* for reads, w_* for writes).  Values and slots are per
 * channel: channel c's values are avail[val_base[c] ..], its slots occupied[slot_base[c] ..].
 *
 * Deliberately left out: the Python model's sleeping processes (a bookkeeping shortcut that counts
 * the same waits; here every process is evaluated every pass) and the schedule recorder.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int64_t i64;

typedef struct {
    i64 *k, *base;
    i64 head, size, cap;
} Ring;

static void ring_push(Ring *r, i64 k, i64 base) {
    i64 at = (r->head + r->size) % r->cap;
    r->k[at] = k;
    r->base[at] = base;
    r->size++;
}

static void ring_pop(Ring *r) {
    r->head = (r->head + 1) % r->cap;
    r->size--;
}

typedef struct {
    i64 ci, slot;
} Free;

typedef struct {
    /* what the helpers below read of the plan (dpn_cycle_model's parameters) */
    const i64 *lat, *njoins, *join_base, *joins, *offs, *r_ci, *r_v, *r_slot, *val_base;
    const uint8_t *r_free;
    /* state */
    i64 *avail, *fill;
    uint8_t *occupied;
    i64 t, wake;
    int progress;
    Free *frees;
    i64 nfrees, frees_cap;
    i64 *nxt, *ready, *ready_base, *qt, *before_last, *at_join, *shifts, *ck, *marks;
    Ring *seg;
    i64 last, W; /* W: timing.ISSUE_WINDOWS */
} Model;

static void push_free(Model *m, i64 ci, i64 slot) {
    if (m->nfrees == m->frees_cap) {
        m->frees_cap = m->frees_cap ? 2 * m->frees_cap : 256;
        m->frees = realloc(m->frees, (size_t)m->frees_cap * sizeof(Free));
    }
    m->frees[m->nfrees].ci = ci;
    m->frees[m->nfrees].slot = slot;
    m->nfrees++;
}

/* The channel of the first read of rows [lo, hi) whose value is not readable at cycle t, or -1. */
static i64 missing_of(Model *m, i64 lo, i64 hi) {
    for (i64 e = lo; e < hi; e++) {
        i64 ci = m->r_ci[e];
        i64 when = m->avail[m->val_base[ci] + m->r_v[e]];
        if (when < 0 || when > m->t) {
            if (when >= 0 && (m->wake < 0 || when < m->wake)) m->wake = when;
            return ci;
        }
    }
    return -1;
}

static void frees_of(Model *m, i64 lo, i64 hi) {
    for (i64 e = lo; e < hi; e++)
        if (m->r_free[e]) push_free(m, m->r_ci[e], m->r_slot[e]);
}

/* Process i starts iteration k at cycle m->t, its operands at issue read (row: their rows). */
static void issue(Model *m, i64 i, i64 k, i64 row) {
    frees_of(m, m->offs[row], m->offs[row + 1]);
    if (m->njoins[i]) { /* into the first segment, at stage 1 */
        i64 g = m->join_base[i];
        if (m->joins[g] == 1) m->at_join[g] = k;
        else ring_push(&m->seg[g], k, m->shifts[g] - 1);
        m->before_last[i]++;
    } else {
        m->ready[m->ready_base[i] + m->qt[i]] = m->t + m->lat[i];
        m->qt[i]++;
    }
    m->nxt[i] = k + 1;
    for (i64 j = 0; j < m->W + 1; j++)
        if (m->ck[i * (m->W + 1) + j] == k) m->marks[i * (m->W + 1) + j] = m->t;
    m->progress = 1;
    if (m->t + 1 > m->last) m->last = m->t + 1;
}

/* Returns the cycle count, -1 when the model stops making progress or passes max_cycles.  Outputs:
 * full_waits and empty_waits per channel, busy (iterations issued) per process, and per process the
 * cycles it issued iterations j (n - 1) / W at, j = 0 .. W (marks, W + 1 per process). */
i64 dpn_cycle_model(i64 P, i64 C, const i64 *n, const i64 *lat, const i64 *njoins, const i64 *join_base,
                    const i64 *joins, const i64 *proc_group, const i64 *proc_wgroup, const i64 *line_port,
                    const i64 *line_rank, const i64 *line_base, const uint8_t *line_flags, i64 nports,
                    const i64 *group_base, const i64 *offs, const i64 *r_ci, const i64 *r_v,
                    const uint8_t *r_free, const i64 *r_slot, const i64 *w_ci, const i64 *w_v,
                    const i64 *w_slot, const i64 *cap, const i64 *delay, const i64 *buffered,
                    const i64 *val_base, i64 nvals, const i64 *slot_base, i64 nslots, i64 max_cycles,
                    i64 W, i64 *full_waits, i64 *empty_waits, i64 *busy, i64 *marks) {
    Model m = {0};
    m.lat = lat; m.njoins = njoins; m.join_base = join_base; m.joins = joins; m.offs = offs;
    m.r_ci = r_ci; m.r_v = r_v; m.r_slot = r_slot; m.r_free = r_free; m.val_base = val_base; m.W = W;
    m.avail = malloc((size_t)(nvals ? nvals : 1) * sizeof(i64));
    for (i64 v = 0; v < nvals; v++) m.avail[v] = -1;
    m.fill = calloc((size_t)(C ? C : 1), sizeof(i64));
    m.occupied = calloc((size_t)(nslots ? nslots : 1), 1);
    for (i64 c = 0; c < C; c++) full_waits[c] = empty_waits[c] = 0;

    i64 total_n = 0, total_j = 0;
    for (i64 i = 0; i < P; i++) { total_n += n[i]; total_j += njoins[i]; }
    i64 *nxt = calloc((size_t)P, sizeof(i64));
    i64 *ready = malloc((size_t)(total_n ? total_n : 1) * sizeof(i64)); /* per iteration: results out */
    i64 *ready_base = malloc((size_t)P * sizeof(i64));
    i64 *qh = calloc((size_t)P, sizeof(i64)), *qt = calloc((size_t)P, sizeof(i64)); /* in flight: [qh, qt) */
    i64 *before_last = calloc((size_t)P, sizeof(i64));
    uint8_t *done = calloc((size_t)P, 1);
    i64 *at_join = malloc((size_t)(total_j ? total_j : 1) * sizeof(i64));
    i64 *shifts = calloc((size_t)(total_j ? total_j : 1), sizeof(i64));
    uint8_t *ens = calloc((size_t)(total_j ? total_j : 1), 1);
    Ring *seg = calloc((size_t)(total_j ? total_j : 1), sizeof(Ring));
    i64 *ck = malloc((size_t)P * (W + 1) * sizeof(i64));
    i64 *turn = calloc((size_t)(nports ? nports : 1), sizeof(i64));
    i64 *asking = malloc((size_t)(P ? P : 1) * sizeof(i64));
    i64 *asking_port = malloc((size_t)(P ? P : 1) * sizeof(i64));
    {
        i64 acc = 0;
        for (i64 i = 0; i < P; i++) {
            ready_base[i] = acc;
            acc += n[i];
            for (i64 j = 0; j < W + 1; j++) {
                ck[i * (W + 1) + j] = n[i] ? j * (n[i] - 1) / W : -1;
                marks[i * (W + 1) + j] = 0;
            }
            for (i64 j = 0; j < njoins[i]; j++) {
                i64 g = join_base[i] + j;
                at_join[g] = -1;
                seg[g].cap = joins[g] + 2;
                seg[g].k = malloc((size_t)seg[g].cap * sizeof(i64));
                seg[g].base = malloc((size_t)seg[g].cap * sizeof(i64));
            }
        }
    }
    m.nxt = nxt; m.ready = ready; m.ready_base = ready_base; m.qt = qt; m.before_last = before_last;
    m.at_join = at_join; m.shifts = shifts; m.ck = ck; m.marks = marks; m.seg = seg;
    i64 t = 0, result = -1;
    for (;;) {
        m.progress = 0;
        m.nfrees = 0;
        m.wake = -1;
        m.t = t;
        int pending = 0;
        i64 nasking = 0;
        for (i64 i = 0; i < P; i++) {
            i64 nj = njoins[i], jb = join_base[i];
            int has_q = qh[i] < qt[i];
            if (!has_q && done[i]) continue;
            int frozen = 0;
            i64 head_ready = has_q ? ready[ready_base[i] + qh[i]] : 0;
            if (has_q && head_ready <= t) { /* retire the oldest result: each channel it goes to needs room */
                i64 wrow = group_base[proc_wgroup[i]] + qh[i];
                i64 lo = offs[wrow], hi = offs[wrow + 1];
                for (i64 e = lo; e < hi; e++) {
                    i64 ci = w_ci[e];
                    int full = buffered[ci] ? m.occupied[slot_base[ci] + w_slot[e]] : (m.fill[ci] >= cap[ci]);
                    if (full) {
                        full_waits[ci]++;
                        frozen = 1;
                    }
                }
                if (!frozen) {
                    for (i64 e = lo; e < hi; e++) {
                        i64 ci = w_ci[e];
                        m.avail[val_base[ci] + w_v[e]] = t + 1 + delay[ci];
                        m.fill[ci]++;
                        if (buffered[ci]) m.occupied[slot_base[ci] + w_slot[e]] = 1;
                    }
                    qh[i]++;
                    m.progress = 1;
                    if (t + 1 > m.last) m.last = t + 1;
                }
            } else if (has_q) {
                if (m.wake < 0 || head_ready < m.wake) m.wake = head_ready;
            }
            int can_issue = !frozen;
            if (nj) {
                /* one cycle of the segments before the last late read (timing.simulate_timing's
                   step_segments) */
                if (before_last[i]) {
                    int en = !frozen;
                    for (i64 j = nj - 1; j >= 0; j--) {
                        i64 g = jb + j;
                        i64 k = at_join[g];
                        if (k >= 0) {
                            i64 row = group_base[proc_group[i] + 1 + j] + k;
                            i64 lo = offs[row], hi = offs[row + 1];
                            i64 missing = missing_of(&m, lo, hi);
                            if (missing >= 0) {
                                empty_waits[missing]++;
                                en = 0;
                            } else if (en) {
                                frees_of(&m, lo, hi);
                                at_join[g] = -1;
                                m.progress = 1;
                                if (j == nj - 1) {
                                    ready[ready_base[i] + qt[i]] = t + lat[i] - joins[g];
                                    qt[i]++;
                                    before_last[i]--;
                                } else { /* enter segment j + 1 at stage joins[j] + 1, its counter not moved yet */
                                    i64 stage = joins[g] + 1;
                                    if (stage == joins[g + 1]) at_join[g + 1] = k;
                                    else ring_push(&seg[g + 1], k, shifts[g + 1] + 1 - stage);
                                }
                            }
                        }
                        ens[g] = (uint8_t)en;
                    }
                    for (i64 j = nj - 1; j >= 0; j--) {
                        i64 g = jb + j;
                        if (!ens[g] || !seg[g].size) continue;
                        shifts[g]++;
                        m.progress = 1;
                        i64 k = seg[g].k[seg[g].head], base = seg[g].base[seg[g].head];
                        if (shifts[g] - base == joins[g]) {
                            ring_pop(&seg[g]);
                            at_join[g] = k;
                        }
                    }
                    can_issue = ens[jb];
                }
                if (before_last[i]) pending = 1;
            }
            i64 k = nxt[i];
            if (k >= n[i]) {
                if (before_last[i] == 0) done[i] = 1;
                if (qh[i] < qt[i]) pending = 1;
                continue;
            }
            pending = 1;
            if (!can_issue) continue;
            i64 row = group_base[proc_group[i]] + k;
            i64 missing = missing_of(&m, offs[row], offs[row + 1]);
            if (missing >= 0) {
                empty_waits[missing]++;
                continue;
            }
            if (line_port[i] >= 0 && line_flags[line_base[i] + k]) { /* its wide port: one unit a cycle */
                asking[nasking] = i;
                asking_port[nasking] = line_port[i];
                nasking++;
                continue;
            }
            issue(&m, i, k, row);
        }
        /* the wide ports: per port, the asking unit next in turn by rank */
        for (i64 g = 0; g < nports && nasking; g++) {
            i64 granted = -1;
            for (i64 a = 0; a < nasking; a++) {
                if (asking_port[a] != g) continue;
                i64 u = asking[a];
                if (granted < 0) { granted = u; continue; }
                int lu = line_rank[u] < turn[g], lg = line_rank[granted] < turn[g];
                if (lu < lg || (lu == lg && line_rank[u] < line_rank[granted])) granted = u;
            }
            if (granted < 0) continue;
            turn[g] = line_rank[granted] + 1;
            i64 k = nxt[granted];
            issue(&m, granted, k, group_base[proc_group[granted]] + k);
        }
        for (i64 f = 0; f < m.nfrees; f++) { /* a word read this cycle is free from the next one */
            i64 ci = m.frees[f].ci;
            m.fill[ci]--;
            if (buffered[ci]) m.occupied[slot_base[ci] + m.frees[f].slot] = 0;
        }
        if (!pending) {
            result = m.last;
            break;
        }
        if (m.progress || m.nfrees) t += 1;
        else if (m.wake >= 0 && m.wake > t) t = m.wake;
        else break;
        if (t > max_cycles) break;
    }
    for (i64 i = 0; i < P; i++) busy[i] = nxt[i];
    for (i64 g = 0; g < total_j; g++) { free(seg[g].k); free(seg[g].base); }
    free(m.avail); free(m.fill); free(m.occupied); free(m.frees);
    free(nxt); free(ready); free(ready_base); free(qh); free(qt); free(before_last); free(done);
    free(at_join); free(shifts); free(ens); free(seg); free(ck); free(turn); free(asking); free(asking_port);
    return result;
}
