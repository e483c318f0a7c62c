/*
 * fuzz_api's sdpa calls: one call's arguments (strides, key lengths,
 * mask), their status (oracle 2), the arrays behind them and the typed
 * attn_sdpa_* calls.
 */
#include "fuzz_sdpa.h"

/* heads, rows and head size of array i (SQ, SK, SV, SO) of shape s */
void sdpa_array_dims(sdpa_dims s, int i, size_t *H, size_t *T, size_t *w)
{
    *H = i == SQ || i == SO ? s.NH : s.NH_kv;
    *T = i == SQ || i == SO ? s.Tq : s.Tk;
    *w = i == SQ || i == SK ? s.hs : s.hs_v;
}

void sdpa_call_dims(sdpa_dims s, const sdpa_call *a, int i, size_t *H, size_t *T, size_t *w)
{
    sdpa_array_dims(s, i, H, T, w);
    if (i == SK || i == SV)
        *T = a->kv_rows;
}

/* element 0 of row t of head h of sequence b of array i (attn.h: b*sb +
 * h*sh + t*ld; the indices of a dimension of one entry are 0) */
size_t sdpa_at(const sdpa_call *a, int i, size_t b, size_t h, size_t t)
{
    return b * a->rs[i][0] + h * a->rs[i][1] + t * a->rs[i][2];
}

/* The mask strides, lengths and row strides of a call on plan shape s. */
sdpa_call take_sdpa_call(reader *r, sdpa_dims s, int n_null, int n_outputs, int n_args)
{
    sdpa_call a;
    memset(&a, 0, sizeof a);
    for (int i = 0; i < SDPA_ARRAYS; i++) {
        size_t H, T, w;
        sdpa_array_dims(s, i, &H, &T, &w);
        take_layout(r, H, T, w, a.st[i]);
    }
    const uint8_t mb = take(r);
    a.has_mask = mb >= 0x80;
    if (a.has_mask) {
        const size_t head = (s.Tq - 1) * s.Tk + s.Tk, seq = s.NH * head;
        a.mask_fill = (uint8_t)((mb >> 4) & 3);
        switch (mb & 7) {
        case 0: /* (B,NH,Tq,Tk) */
            a.mask_ld = s.Tk, a.mask_sh = head, a.mask_sb = seq;
            break;
        case 1: /* key padding */
            a.mask_ld = 0, a.mask_sh = 0, a.mask_sb = s.Tk;
            break;
        case 2: /* shared by the heads */
            a.mask_ld = s.Tk, a.mask_sh = 0, a.mask_sb = head;
            break;
        case 3: /* shared by the batch */
            a.mask_ld = s.Tk, a.mask_sh = head, a.mask_sb = 0;
            break;
        case 4: /* one row */
            a.mask_ld = a.mask_sh = a.mask_sb = 0;
            break;
        default: { /* each stride chosen */
            a.mask_ld = take_mask_stride(r, s.Tk);
            const size_t h = a.mask_ld ? sat_extent(s.Tq, a.mask_ld, s.Tk) : s.Tk;
            a.mask_sh = take_mask_stride(r, h);
            const size_t q = a.mask_sh ? sat_extent(s.NH, a.mask_sh, h) : h;
            a.mask_sb = take_mask_stride(r, q);
        }
        }
    }
    const uint8_t lb = take(r);
    a.has_lengths = lb >= 0x80 && s.B <= 8;
    a.nan_slots = (lb >> 6) & 1;
    for (size_t b = 0; a.has_lengths && b < s.B; b++) {
        const uint8_t v = take(r);
        a.lengths[b] = v >= 0xF0 ? s.Tk + 1 + (v & 3) : v >= 0xE8 ? SIZE_MAX : v % (s.Tk + 1);
    }
    a.null_at = take_null(r, n_null);
    a.al = take_alias(r, n_outputs, n_args);
    a.backward = n_outputs == 3;
    sdpa_call_resolve(&a, s);
    for (int i = 0; i < SDPA_ARRAYS; i++)
        TRACE("  %c: sb %zu sh %zu ld %zu\n", "QKVo"[i], a.st[i][0], a.st[i][1], a.st[i][2]);
    TRACE("  mask %d (ld %zu sh %zu sb %zu, -inf %d), lengths %d "
          "(NaN slots %d), null %d, alias %d\n",
          a.has_mask, a.mask_ld, a.mask_sh, a.mask_sb, a.mask_fill,
          a.has_lengths, a.nan_slots, a.null_at, a.al.output);
    return a;
}

/* attn.h's rule: the dimensions of more than one entry, by increasing
 * stride, each step over the span of the row and the dimensions below.
 * Whether an array breaks it (BAD_STRIDE); once the span below overflows,
 * the array's extent does too (SIZE_OVERFLOW, checked after). */
static int strides_repeat(const size_t count[3], const size_t stride[3], size_t width)
{
    int order[3], n = 0;
    for (int d = 0; d < 3; d++)
        if (count[d] > 1)
            order[n++] = d;
    for (int i = 1; i < n; i++) /* by stride */
        for (int j = i; j > 0 && stride[order[j - 1]] > stride[order[j]]; j--) {
            const int t = order[j];
            order[j] = order[j - 1], order[j - 1] = t;
        }
    size_t below = width, step;
    for (int i = 0; i < n; i++) {
        if (stride[order[i]] < below)
            return 1;
        if (__builtin_mul_overflow(count[order[i]] - 1, stride[order[i]], &step) ||
            __builtin_add_overflow(below, step, &below))
            return 0;
    }
    return 0;
}

/* the rows of K and V a call judges (sdpa_call.kv_rows) */
static size_t kv_rows_of(const sdpa_call *a, sdpa_dims s)
{
    if (a->backward || !a->has_lengths)
        return s.Tk;
    size_t rows = 1;
    for (size_t b = 0; b < s.B; b++)
        rows = a->lengths[b] > rows ? a->lengths[b] : rows;
    return rows < s.Tk ? rows : s.Tk;
}

/* the strides with 0 resolved (attn.h: ld H*w, sh w, sb T*ld with T the
 * shape's, SIZE_MAX when that overflows), the rule, and the extents of a
 * call on shape s (valid), K and V judged as kv_rows rows */
void sdpa_call_resolve(sdpa_call *c, sdpa_dims s)
{
    sdpa_call a = *c;
    a.kv_rows = kv_rows_of(&a, s);
    size_t *extent[SDPA_ARRAYS] = {&a.nQ, &a.nK, &a.nV, &a.nO};
    for (int i = 0; i < SDPA_ARRAYS; i++) {
        size_t H, T, w, rows;
        sdpa_array_dims(s, i, &H, &T, &w);
        sdpa_call_dims(s, &a, i, &H, &rows, &w);
        size_t *r = a.rs[i];
        r[2] = a.st[i][2] ? a.st[i][2] : H * w;
        r[1] = a.st[i][1] ? a.st[i][1] : w;
        r[0] = a.st[i][0] ? a.st[i][0] : sat_mul(T, r[2]);
        const size_t count[3] = {s.B, H, rows};
        a.repeats[i] = strides_repeat(count, r, w);
        size_t e = w;
        for (int d = 0; d < 3; d++)
            if (count[d] > 1)
                e = sat_add(e, sat_mul(count[d] - 1, r[d]));
        *extent[i] = e;
    }
    a.nL = s.B * s.NH * s.Tq;
    a.nM = 0;
    if (a.has_mask) { /* its columns: the keys judged */
        const size_t h = a.mask_ld ? sat_extent(s.Tq, a.mask_ld, a.kv_rows) : a.kv_rows;
        const size_t q = a.mask_sh ? sat_extent(s.NH, a.mask_sh, h) : h;
        a.nM = a.mask_sb ? sat_extent(s.B, a.mask_sb, q) : q;
    }
    *c = a;
}

/* The documented checks of a call after its NULL pointers, PLAN_KIND and
 * DTYPE_MISMATCH (and INFERENCE_PLAN): BAD_STRIDE (Q, K, V or out placing
 * two elements at one place by attn.h's rule; a nonzero mask stride below
 * what it steps over, however large that is), SIZE_OVERFLOW (an extent, in
 * elements or bytes), BLAS_RANGE (a row stride above INT_MAX, whatever the
 * rows), BAD_LENGTH. */
attn_status model_sdpa_args(sdpa_dims s, const prec *p, const sdpa_call *a)
{
    if (a->repeats[SQ] || a->repeats[SK] || a->repeats[SV] || a->repeats[SO])
        return ATTN_ERR_BAD_STRIDE;
    if (a->has_mask) {
        /* an extent beyond size_t is above every stride; the columns are
         * the keys judged (kv_rows) */
        int over = 0;
        size_t head = a->kv_rows, seq, span;
        if (a->mask_ld && a->mask_ld < a->kv_rows)
            return ATTN_ERR_BAD_STRIDE;
        if (a->mask_ld)
            over |= __builtin_mul_overflow(s.Tq - 1, a->mask_ld, &span) ||
                    __builtin_add_overflow(span, a->kv_rows, &head);
        if (a->mask_sh && (over || a->mask_sh < head))
            return ATTN_ERR_BAD_STRIDE;
        seq = head;
        if (a->mask_sh)
            over |= __builtin_mul_overflow(s.NH - 1, a->mask_sh, &span) ||
                    __builtin_add_overflow(span, head, &seq);
        if (a->mask_sb && (over || a->mask_sb < seq))
            return ATTN_ERR_BAD_STRIDE;
    }
    /* bytes: p's elements, the mask's those of stat_prec (float in half calls) */
    const size_t extents[5] = {a->nQ, a->nK, a->nV, a->nO, a->nM};
    for (int i = 0; i < 5; i++) {
        size_t bytes;
        const size_t es = i < 4 ? p->es : stat_prec(p)->es;
        if (extents[i] == SIZE_MAX || __builtin_mul_overflow(extents[i], es, &bytes))
            return ATTN_ERR_SIZE_OVERFLOW;
    }
    const size_t lds[4] = {a->rs[SQ][2], a->rs[SK][2], a->rs[SV][2], a->rs[SO][2]};
    if (over_int(4, lds))
        return ATTN_ERR_BLAS_RANGE;
    for (size_t b = 0; a->has_lengths && b < s.B; b++)
        if (a->lengths[b] > s.Tk)
            return ATTN_ERR_BAD_LENGTH;
    return ATTN_OK;
}

/* a raw input argument of `bytes` (the key lengths) */
static void *add_raw(call *c, const void *src, size_t bytes, int present)
{
    ORACLE(c->n < MAX_ARGS, "harness: too many arguments");
    arg *a = &c->a[c->n++];
    memset(a, 0, sizeof *a);
    if (!present)
        return NULL;
    a->ptr = alloc(bytes);
    memcpy(a->ptr, src, bytes);
    a->alloc_bytes = a->bytes = bytes;
    return a->ptr;
}

/* NaN in the rows of K and V of keys j >= L_b that the arrays hold (never
 * read, attn.h) */
static void nan_fill_slots(const prec *p, sdpa_dims s, const sdpa_call *a, void *K, void *V)
{
    for (size_t b = 0; b < s.B; b++)
        for (size_t j = a->lengths[b]; j < a->kv_rows; j++)
            for (size_t g = 0; g < s.NH_kv; g++) {
                for (size_t i = 0; i < s.hs; i++)
                    set(p, K, sdpa_at(a, SK, b, g, j) + i, (double)NAN);
                for (size_t i = 0; i < s.hs_v; i++)
                    set(p, V, sdpa_at(a, SV, b, g, j) + i, (double)NAN);
            }
}

/* -inf in the mask: mode 1 every third entry, 2 every entry of the first
 * (sequence, head, query) row, 3 every entry */
static void mask_fill_inf(const prec *p, void *mask, size_t n, size_t Tk, uint8_t mode)
{
    for (size_t i = 0; i < n; i++)
        if ((mode == 1 && i % 3 == 0) || (mode == 2 && i < Tk) || mode == 3)
            set(p, mask, i, -(double)INFINITY);
}

sdpa_arrays add_sdpa_arrays(call *c, reader *r, sdpa_dims s, const sdpa_call *a,
                            int backward, int out_is_input, int with_lse)
{
    const int nu = a->null_at;
    sdpa_arrays x;
    memset(&x, 0, sizeof x);
    /* an aliasing choice with grow: the target's allocation holds the output too */
    size_t n[11] = {a->nQ, a->nK, a->nV, a->nM, 0, a->nO, a->nL, a->nO, a->nQ, a->nK, a->nV};
    if (a->al.output >= 0 && a->al.grow && !c->huge && a->al.target != 4) {
        const size_t outs[2][3] = {{a->nO, a->nL, 0}, {a->nQ, a->nK, a->nV}};
        const size_t need = sat_add(a->al.offset, outs[backward][a->al.output]);
        n[a->al.target] = need > n[a->al.target] ? need : n[a->al.target];
    }
    /* the mask and lse in their own element type (float in half calls) */
    const prec *ep = c->p, *sp = stat_prec(c->p);
    x.Q = add_array(c, r, n[0], 0, nu != 0);
    x.K = add_array(c, r, n[1], 0, nu != 1);
    x.V = add_array(c, r, n[2], 0, nu != 2);
    c->p = sp;
    x.mask = add_array(c, r, n[3], 0, a->has_mask);
    if (x.mask != NULL && !c->huge)
        mask_fill_inf(sp, x.mask, a->nM, s.Tk, a->mask_fill);
    c->p = ep;
    x.lengths = add_raw(c, a->lengths, s.B * sizeof(size_t), a->has_lengths);
    if (a->has_lengths && a->nan_slots && !c->huge && x.K != NULL && x.V != NULL &&
        model_sdpa_args(s, ep, a) == ATTN_OK)
        nan_fill_slots(ep, s, a, x.K, x.V);
    x.out = add_array(c, r, n[5], !out_is_input, nu != 3);
    c->p = sp;
    x.lse = add_array(c, r, n[6], !out_is_input, backward ? nu != 4 : with_lse);
    c->p = ep;
    if (backward) {
        x.dout = add_array(c, r, n[7], 0, nu != 5);
        x.dQ = add_array(c, r, n[8], 1, nu != 6);
        x.dK = add_array(c, r, n[9], 1, nu != 7);
        x.dV = add_array(c, r, n[10], 1, nu != 8);
    }
    return x;
}

static attn_sdpa_args_f32 sdpa_args32(const sdpa_call *a, const sdpa_io *x)
{
    const attn_sdpa_args_f32 g = SDPA_ARGS(a, x);
    return g;
}

static attn_sdpa_args_f64 sdpa_args64(const sdpa_call *a, const sdpa_io *x)
{
    const attn_sdpa_args_f64 g = SDPA_ARGS(a, x);
    return g;
}

/* kind 0 forward, 1 backward, 2 one-shot (shape, scale, flags, window), in
 * p's precision (the 16-bit types: call_sdpa_half) */
attn_status call_sdpa(const prec *p, int kind, attn_plan *plan, int null_args,
                      const sdpa_call *a, const sdpa_io *x, const attn_sdpa_shape *shape,
                      double scale, unsigned flags, size_t window)
{
    if (p->half)
        return call_sdpa_half(p, kind, plan, null_args, a, x, shape, scale, flags, window);
    if (p->f64) {
        const attn_sdpa_args_f64 g = sdpa_args64(a, x);
        const attn_sdpa_args_f64 *gp = null_args ? NULL : &g;
        return kind == 0   ? attn_sdpa_forward_f64(plan, gp)
               : kind == 1 ? attn_sdpa_backward_f64(plan, gp, x->dout, x->dQ, x->dK, x->dV)
                           : attn_sdpa_f64(shape, scale, flags, window, gp);
    }
    const attn_sdpa_args_f32 g = sdpa_args32(a, x);
    const attn_sdpa_args_f32 *gp = null_args ? NULL : &g;
    return kind == 0   ? attn_sdpa_forward_f32(plan, gp)
           : kind == 1 ? attn_sdpa_backward_f32(plan, gp, x->dout, x->dQ, x->dK, x->dV)
                       : attn_sdpa_f32(shape, scale, flags, window, gp);
}

sdpa_io io_from(const call *c, const sdpa_arrays *x, int backward)
{
    sdpa_io io = {x->Q, x->K, x->V, x->mask, NULL, x->lengths, c->a[5].ptr, c->a[6].ptr,
                  NULL, NULL, NULL};
    if (backward) {
        io.dout = x->dout;
        io.dQ = c->a[8].ptr;
        io.dK = c->a[9].ptr;
        io.dV = c->a[10].ptr;
    }
    return io;
}
