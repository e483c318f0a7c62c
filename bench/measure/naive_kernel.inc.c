/*
 * The naive forward and backward of one precision, instantiated by naive.c
 * through precisions.inc.c (REAL float or double, SUFFIX f32 or f64).
 * Row-major throughout: A (M,N) element [i][j] is A[i*N + j].
 */
#define GLUE_(name, suffix) name##_##suffix
#define GLUE(name, suffix) GLUE_(name, suffix)
#define TYPED(name) GLUE(name, SUFFIX)

/* C (M,N) = A (M,K) B (K,N), or with transposed_a: A^T where A is (K,M);
 * with accumulate, C += instead of =. Loops in the textbook order. */
static void TYPED(matmul)(const REAL *A, int transposed_a, const REAL *Bm, int transposed_b,
                          REAL *Cm, size_t M, size_t K, size_t N, int accumulate)
{
    for (size_t i = 0; i < M; ++i)
        for (size_t j = 0; j < N; ++j) {
            REAL sum = accumulate ? Cm[i * N + j] : (REAL)0;
            for (size_t k = 0; k < K; ++k) {
                REAL a = transposed_a ? A[k * M + i] : A[i * K + k];
                REAL b = transposed_b ? Bm[j * K + k] : Bm[k * N + j];
                sum += a * b;
            }
            Cm[i * N + j] = sum;
        }
}

/* Row t of head h of batch b: P row (T, zero beyond the visible keys). */
static void TYPED(weights_row)(const bench_shape *s, const REAL *Q, const REAL *K, size_t b,
                               size_t h, size_t t, REAL *row)
{
    const size_t D = s->NH * s->hs, visible = s->causal ? t + 1 : s->T;
    const REAL scale = (REAL)(1.0 / sqrt((double)s->hs));
    const REAL *q = Q + (b * s->T + t) * D + h * s->hs;
    REAL max = -(REAL)INFINITY, sum = (REAL)0;
    for (size_t j = 0; j < visible; ++j) {
        const REAL *k = K + (b * s->T + j) * D + h * s->hs;
        REAL dot = (REAL)0;
        for (size_t i = 0; i < s->hs; ++i)
            dot += q[i] * k[i];
        row[j] = dot * scale;
        max = row[j] > max ? row[j] : max;
    }
    for (size_t j = 0; j < visible; ++j) {
        row[j] = (REAL)exp((double)(row[j] - max));
        sum += row[j];
    }
    for (size_t j = 0; j < s->T; ++j)
        row[j] = j < visible ? row[j] / sum : (REAL)0;
}

/* Q, K, V, Y, out (and weights) of the forward. */
static void TYPED(forward)(const bench_problem *p, const bench_naive_workspace *w)
{
    const bench_shape *s = &p->shape;
    const size_t rows = s->B * s->T, D = s->NH * s->hs;
    REAL *Q = w->Q, *K = w->K, *V = w->V, *Y = w->Y, *P = w->P;
    TYPED(matmul)(p->X, 0, p->Wq, 0, Q, rows, s->C, D, 0);
    TYPED(matmul)(p->X, 0, p->Wk, 0, K, rows, s->C, D, 0);
    TYPED(matmul)(p->X, 0, p->Wv, 0, V, rows, s->C, D, 0);
    for (size_t b = 0; b < s->B; ++b)
        for (size_t h = 0; h < s->NH; ++h)
            for (size_t t = 0; t < s->T; ++t) {
                REAL *row = P + t * s->T;
                TYPED(weights_row)(s, Q, K, b, h, t, row);
                if (p->weights) {
                    REAL *kept = (REAL *)p->weights + ((b * s->NH + h) * s->T + t) * s->T;
                    for (size_t j = 0; j < s->T; ++j)
                        kept[j] = row[j];
                }
                REAL *y = Y + (b * s->T + t) * D + h * s->hs;
                for (size_t i = 0; i < s->hs; ++i) {
                    REAL sum = (REAL)0;
                    for (size_t j = 0; j < s->T; ++j)
                        sum += row[j] * V[(b * s->T + j) * D + h * s->hs + i];
                    y[i] = sum;
                }
            }
    if (p->Wo)
        TYPED(matmul)(Y, 0, p->Wo, 0, p->out, rows, D, s->C, 0);
    else
        for (size_t i = 0; i < rows * D; ++i)
            ((REAL *)p->out)[i] = Y[i];
}

/* dV, dQ, dK of head h of batch b, from dY (after the forward). */
static void TYPED(head_backward)(const bench_problem *p, const bench_naive_workspace *w,
                                 size_t b, size_t h)
{
    const bench_shape *s = &p->shape;
    const size_t T = s->T, D = s->NH * s->hs, hs = s->hs;
    const REAL scale = (REAL)(1.0 / sqrt((double)hs));
    const REAL *Q = w->Q, *K = w->K, *V = w->V, *dY = w->dY;
    REAL *P = w->P, *dS = w->dS, *dQ = w->dQ, *dK = w->dK, *dV = w->dV;
    for (size_t t = 0; t < T; ++t) {
        TYPED(weights_row)(s, Q, K, b, h, t, P + t * T);
        REAL dot = (REAL)0;
        for (size_t j = 0; j < T; ++j) {
            REAL dP = (REAL)0;
            for (size_t i = 0; i < hs; ++i)
                dP += dY[(b * T + t) * D + h * hs + i] * V[(b * T + j) * D + h * hs + i];
            dS[t * T + j] = dP;
            dot += dP * P[t * T + j];
        }
        for (size_t j = 0; j < T; ++j)
            dS[t * T + j] = P[t * T + j] * (dS[t * T + j] - dot);
    }
    for (size_t j = 0; j < T; ++j)
        for (size_t i = 0; i < hs; ++i) {
            REAL v = (REAL)0, k = (REAL)0;
            for (size_t t = 0; t < T; ++t) {
                v += P[t * T + j] * dY[(b * T + t) * D + h * hs + i];
                k += dS[t * T + j] * Q[(b * T + t) * D + h * hs + i];
            }
            dV[(b * T + j) * D + h * hs + i] = v;
            dK[(b * T + j) * D + h * hs + i] = scale * k;
        }
    for (size_t t = 0; t < T; ++t)
        for (size_t i = 0; i < hs; ++i) {
            REAL q = (REAL)0;
            for (size_t j = 0; j < T; ++j)
                q += dS[t * T + j] * K[(b * T + j) * D + h * hs + i];
            dQ[(b * T + t) * D + h * hs + i] = scale * q;
        }
}

static void TYPED(backward)(const bench_problem *p, const bench_naive_workspace *w)
{
    const bench_shape *s = &p->shape;
    const size_t rows = s->B * s->T, D = s->NH * s->hs, C = s->C;
    if (p->Wo) {
        TYPED(matmul)(w->Y, 1, p->dout, 0, p->dWo, D, rows, C, 0);
        TYPED(matmul)(p->dout, 0, p->Wo, 1, w->dY, rows, C, D, 0);
    } else {
        for (size_t i = 0; i < rows * D; ++i)
            ((REAL *)w->dY)[i] = ((const REAL *)p->dout)[i];
    }
    for (size_t b = 0; b < s->B; ++b)
        for (size_t h = 0; h < s->NH; ++h)
            TYPED(head_backward)(p, w, b, h);
    TYPED(matmul)(p->X, 1, w->dQ, 0, p->dWq, C, rows, D, 0);
    TYPED(matmul)(p->X, 1, w->dK, 0, p->dWk, C, rows, D, 0);
    TYPED(matmul)(p->X, 1, w->dV, 0, p->dWv, C, rows, D, 0);
    TYPED(matmul)(w->dQ, 0, p->Wq, 1, p->dX, rows, D, C, 0);
    TYPED(matmul)(w->dK, 0, p->Wk, 1, p->dX, rows, D, C, 1);
    TYPED(matmul)(w->dV, 0, p->Wv, 1, p->dX, rows, D, C, 1);
}

static void TYPED(naive_run)(const bench_problem *p, const bench_naive_workspace *w)
{
    TYPED(forward)(p, w);
    if (p->shape.op == BENCH_OP_BACKWARD)
        TYPED(backward)(p, w);
}

#undef TYPED
#undef GLUE
#undef GLUE_
