/* Native loops of some reference kernels (issue 14's training steps): the
 * float32 GELU, its derivative, the softmax rows, max pooling, an embedding's
 * gradient (scatter_add of whole rows) and relu of strided views, one pass
 * where numpy makes many. Each function implements its op's
 * table entry in dialects/ (the same formula, the same constants, passed in by
 * the Python kernel) and is called only from there; the numpy kernel stays the
 * fallback (no build, PYFLAME_NO_NATIVE=1, or an operand these loops do not take).
 *
 * No numpy C API: operands arrive through the buffer protocol (C-contiguous
 * float32; the caller checks dtype and layout). The loops are written without
 * branches so that the compiler vectorizes them; they are compiled three times,
 * for AVX-512, AVX2 + FMA and the baseline, and the widest copy the CPU runs
 * is used.
 * The GIL is released while a loop runs.
 *
 * This module sits in dialects/ (the ground floor imports nothing of ours), so
 * it is an extension of its own rather than part of pyflame_mlir/_native.c.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <pthread.h>
#include <stdlib.h>

typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));

static inline v8f
v8_splat(float f)
{
    v8f v = {f, f, f, f, f, f, f, f};
    return v;
}

static inline v8f
v8_load(const float *p)
{
    v8f v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline float
bits_to_float(int32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

/* e^a in float32 (Cody-Waite reduction, Cephes' degree-6 polynomial: ~1 ulp)
 * for a not NaN (callers handle NaN: the clamps below are min/max
 * instructions, which drop it): below -104 it gives 0 or the smallest
 * subnormal, above 89 +inf; 2^n is applied as two normal factors so that a
 * subnormal result rounds once more at most. */
static inline float
exp_f32(float a)
{
    a = a < 89.0f ? a : 89.0f;
    a = a > -104.0f ? a : -104.0f;
    float nf = (a * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  /* rint */
    float r = a - nf * 0.693359375f;
    r = r - nf * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    int32_t n = (int32_t)nf;
    int32_t n1 = n >> 1;
    int32_t n2 = n - n1;
    return p * bits_to_float((n1 + 127) << 23) * bits_to_float((n2 + 127) << 23);
}

/* ---- gelu (float32, approximate='none'): dialects/elementwise.py's
 * _gelu_float32, element by element. h = Phi(-|x|) = w exp(R(w) - x^2/2),
 * w = 1/(C + |x|), R = P/Q (num: 4 coefficients, den: 5, ascending, monic);
 * r = x h; gelu = max(x - r, r) (the second on a tie: -0.0 at -0.0); +inf
 * where x is +inf. */
typedef struct {
    float c, num[4], den[5];
} gelu_consts;

static inline float
gelu_one(float x, gelu_consts k)
{
    float u = x * x;
    u = u * 0.5f;
    float w = 1.0f / (fabsf(x) + k.c);
    float o = w * k.num[3] + k.num[2];
    o = o * w + k.num[1];
    o = o * w + k.num[0];
    float d = w + k.den[3];
    d = d * w + k.den[2];
    d = d * w + k.den[1];
    d = d * w + k.den[0];
    o = o / d - u;
    float r = exp_f32(o) * w * x;
    float m = x - r;
    float g = m > r ? m : r;
    return x == INFINITY ? x : g;
}

/* ---- gelu_grad (float32): ct * (Phi(x) + x pdf(x)), Phi = z / x from the
 * forward's z = gelu(x), the series 1/2 + x/sqrt(2 pi) where x^2 < near2
 * (elementwise.py's _gelu_grad). */
static inline float
gelu_grad_one(float x, float z, float g, float near2, float c)
{
    float u = x * x;
    float e = exp_f32(u * -0.5f) * x * c;
    float phi = z / x;
    phi = u < near2 ? 0.5f + c * x : phi;
    return (phi + e) * g;
}

/* ---- softmax rows (float32, contiguous rows of n; dialects/nn.py's
 * _softmax and _log_softmax along the last axis): m = the row's max (NaN if
 * the row holds one, 0 if every element is -inf: nn.py's _shift), e =
 * exp(x - m), y = e / sum(e); log_softmax: y = (x - m) - log(sum(e)). */
#define DEFINE_LOOPS(SUFFIX, ATTR)                                                   \
    ATTR static void gelu_loop_##SUFFIX(const float *x, float *y, Py_ssize_t n,       \
                                        const gelu_consts *kp)                        \
    {                                                                                 \
        const gelu_consts k = *kp;                                                    \
        for (Py_ssize_t i = 0; i < n; i++)                                            \
            y[i] = gelu_one(x[i], k);                                                 \
    }                                                                                 \
    ATTR static void gelu_grad_loop_##SUFFIX(const float *x, const float *z,         \
                                             const float *g, float *y, Py_ssize_t n,  \
                                             float near2, float c)                    \
    {                                                                                 \
        for (Py_ssize_t i = 0; i < n; i++)                                            \
            y[i] = gelu_grad_one(x[i], z[i], g[i], near2, c);                         \
    }                                                                                 \
    ATTR static void softmax_rows_##SUFFIX(const float *x, float *y, Py_ssize_t rows, \
                                           Py_ssize_t n, int log)                    \
    {                                                                                 \
        for (Py_ssize_t r = 0; r < rows; r++) {                                       \
            const float *xr = x + r * n;                                              \
            float *yr = y + r * n;                                                    \
            v8f mx = v8_splat(-INFINITY), acc = v8_splat(0.0f);                       \
            v8i nanv = {0, 0, 0, 0, 0, 0, 0, 0};                                      \
            Py_ssize_t i = 0;                                                         \
            for (; i + 8 <= n; i += 8) {                                              \
                v8f v = v8_load(xr + i);                                              \
                v8i gt = v > mx;                                                      \
                mx = (v8f)(((v8i)v & gt) | ((v8i)mx & ~gt));                          \
                nanv |= v != v;                                                       \
            }                                                                         \
            float m = -INFINITY;                                                      \
            int nan = 0;                                                              \
            for (int j = 0; j < 8; j++) {                                             \
                m = mx[j] > m ? mx[j] : m;                                            \
                nan |= nanv[j] != 0;                                                  \
            }                                                                         \
            for (; i < n; i++) {                                                      \
                m = xr[i] > m ? xr[i] : m;                                            \
                nan |= xr[i] != xr[i];                                                \
            }                                                                         \
            if (nan) { /* numpy's max propagates NaN: x - max is NaN throughout */    \
                for (i = 0; i < n; i++)                                               \
                    yr[i] = NAN;                                                      \
                continue;                                                             \
            }                                                                         \
            m = m == -INFINITY ? 0.0f : m; /* nn.py's _shift */                       \
            for (i = 0; i < n; i++) { /* x - m is NaN only at +inf - +inf */          \
                float d = xr[i] - m;                                                  \
                yr[i] = d == d ? exp_f32(d) : d;                                      \
            }                                                                         \
            for (i = 0; i + 8 <= n; i += 8)                                           \
                acc += v8_load(yr + i);                                               \
            float s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) +                       \
                      ((acc[2] + acc[6]) + (acc[3] + acc[7]));                        \
            for (; i < n; i++)                                                        \
                s += yr[i];                                                           \
            if (log) {                                                                \
                float l = logf(s);                                                    \
                for (i = 0; i < n; i++)                                               \
                    yr[i] = (xr[i] - m) - l;                                          \
            } else {                                                                  \
                for (i = 0; i < n; i++)                                               \
                    yr[i] = yr[i] / s;                                                \
            }                                                                         \
        }                                                                             \
    }

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define HAVE_AVX2_CLONE 1
DEFINE_LOOPS(avx2, __attribute__((target("avx2,fma"))))
DEFINE_LOOPS(avx512, __attribute__((target("avx512f,avx512vl,avx512dq,avx2,fma,prefer-vector-width=512"))))
#endif
DEFINE_LOOPS(base, )

static int simd = 0; /* the loops' copy that runs: 0 baseline, 1 AVX2, 2 AVX-512 */

#ifdef HAVE_AVX2_CLONE
#define DISPATCH(fn, ...)                  \
    do {                                   \
        if (simd == 2)                     \
            fn##_avx512(__VA_ARGS__);      \
        else if (simd == 1)                \
            fn##_avx2(__VA_ARGS__);        \
        else                               \
            fn##_base(__VA_ARGS__);        \
    } while (0)
#else
#define DISPATCH(fn, ...) fn##_base(__VA_ARGS__)
#endif

/* ---- two threads for long loops (torch runs its elementwise kernels on its
 * intra-op threads): the caller runs the first half, one new thread the
 * second, joined (blocking: nothing spins while the other half waits for a
 * core). Off unless PYFLAME_KERNEL_THREADS (or set_threads) asks for more
 * than one: see default_threads. */
static int kernel_threads = 1;

typedef void (*range_fn)(void *ctx, Py_ssize_t lo, Py_ssize_t hi);

typedef struct {
    range_fn fn;
    void *ctx;
    Py_ssize_t lo, hi;
} range_job;

static void *
run_range(void *p)
{
    range_job *j = p;
    j->fn(j->ctx, j->lo, j->hi);
    return NULL;
}

/* fn over [0, n), in two halves on two threads when n >= 2 * grain */
static void
split_range(range_fn fn, void *ctx, Py_ssize_t n, Py_ssize_t grain)
{
    if (kernel_threads > 1 && n >= 2 * grain && n >= 2) {
        pthread_t th;
        range_job j = {fn, ctx, n / 2, n};
        if (pthread_create(&th, NULL, run_range, &j) == 0) {
            fn(ctx, 0, n / 2);
            pthread_join(th, NULL);
            return;
        }
    }
    fn(ctx, 0, n);
}

#define SPLIT_GRAIN (1 << 16)  /* elements: below, a thread costs more than it saves */

/* ---- argument handling ---- */

static int
get_f32(PyObject *o, Py_buffer *b, int writable, const char *what)
{
    if (PyObject_GetBuffer(o, b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT |
                                 (writable ? PyBUF_WRITABLE : 0)) < 0)
        return -1;
    if (b->itemsize != 4 || b->format == NULL || strcmp(b->format, "f") != 0) {
        PyErr_Format(PyExc_TypeError, "_kernels: %s must be C-contiguous float32", what);
        PyBuffer_Release(b);
        return -1;
    }
    return 0;
}

static int
floats_from(PyObject *seq, float *dst, Py_ssize_t n, const char *what)
{
    PyObject *fast = PySequence_Fast(seq, what);
    if (fast == NULL)
        return -1;
    if (PySequence_Fast_GET_SIZE(fast) != n) {
        PyErr_Format(PyExc_ValueError, "_kernels: %s needs %zd numbers", what, n);
        Py_DECREF(fast);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        double v = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fast, i));
        if (v == -1.0 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
        dst[i] = (float)v;
    }
    Py_DECREF(fast);
    return 0;
}

typedef struct {
    const float *x;
    float *y;
    const gelu_consts *k;
} gelu_job;

static void
gelu_range(void *p, Py_ssize_t lo, Py_ssize_t hi)
{
    gelu_job *j = p;
    DISPATCH(gelu_loop, j->x + lo, j->y + lo, hi - lo, j->k);
}

typedef struct {
    const float *x, *z, *g;
    float *y, near2, c;
} gelu_grad_job;

static void
gelu_grad_range(void *p, Py_ssize_t lo, Py_ssize_t hi)
{
    gelu_grad_job *j = p;
    DISPATCH(gelu_grad_loop, j->x + lo, j->z + lo, j->g + lo, j->y + lo, hi - lo, j->near2,
             j->c);
}

typedef struct {
    const float *x;
    float *y;
    Py_ssize_t n;
    int log;
} softmax_job;

static void
softmax_range(void *p, Py_ssize_t lo, Py_ssize_t hi)
{
    softmax_job *j = p;
    DISPATCH(softmax_rows, j->x + lo * j->n, j->y + lo * j->n, hi - lo, j->n, j->log);
}

/* gelu_f32(x, out, c, num, den): out = gelu(x), both n float32 */
static PyObject *
gelu_f32(PyObject *self, PyObject *args)
{
    PyObject *xo, *yo, *numo, *deno;
    float c;
    if (!PyArg_ParseTuple(args, "OOfOO", &xo, &yo, &c, &numo, &deno))
        return NULL;
    gelu_consts k;
    k.c = c;
    if (floats_from(numo, k.num, 4, "num") < 0 || floats_from(deno, k.den, 5, "den") < 0)
        return NULL;
    Py_buffer x, y;
    if (get_f32(xo, &x, 0, "x") < 0)
        return NULL;
    if (get_f32(yo, &y, 1, "out") < 0) {
        PyBuffer_Release(&x);
        return NULL;
    }
    if (x.len != y.len) {
        PyBuffer_Release(&x);
        PyBuffer_Release(&y);
        PyErr_SetString(PyExc_ValueError, "_kernels.gelu_f32: x and out differ in size");
        return NULL;
    }
    Py_ssize_t n = x.len / 4;
    gelu_job job = {x.buf, y.buf, &k};
    Py_BEGIN_ALLOW_THREADS
    split_range(gelu_range, &job, n, SPLIT_GRAIN);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&x);
    PyBuffer_Release(&y);
    Py_RETURN_NONE;
}

/* gelu_grad_f32(x, z, ct, out, near2, c): out = ct * gelu'(x), all n float32 */
static PyObject *
gelu_grad_f32(PyObject *self, PyObject *args)
{
    PyObject *o[4];
    float near2, c;
    if (!PyArg_ParseTuple(args, "OOOOff", &o[0], &o[1], &o[2], &o[3], &near2, &c))
        return NULL;
    static const char *names[4] = {"x", "z", "ct", "out"};
    Py_buffer b[4];
    int got = 0;
    for (; got < 4; got++)
        if (get_f32(o[got], &b[got], got == 3, names[got]) < 0)
            break;
    if (got == 4 && (b[1].len != b[0].len || b[2].len != b[0].len || b[3].len != b[0].len)) {
        PyErr_SetString(PyExc_ValueError, "_kernels.gelu_grad_f32: operands differ in size");
    } else if (got == 4) {
        Py_ssize_t n = b[0].len / 4;
        gelu_grad_job job = {b[0].buf, b[1].buf, b[2].buf, b[3].buf, near2, c};
        Py_BEGIN_ALLOW_THREADS
        split_range(gelu_grad_range, &job, n, SPLIT_GRAIN);
        Py_END_ALLOW_THREADS
    }
    for (int i = 0; i < got; i++)
        PyBuffer_Release(&b[i]);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

/* softmax_rows_f32(x, out, n, log): rows of n along the last axis */
static PyObject *
softmax_rows_f32(PyObject *self, PyObject *args)
{
    PyObject *xo, *yo;
    Py_ssize_t n;
    int log;
    if (!PyArg_ParseTuple(args, "OOnp", &xo, &yo, &n, &log))
        return NULL;
    Py_buffer x, y;
    if (get_f32(xo, &x, 0, "x") < 0)
        return NULL;
    if (get_f32(yo, &y, 1, "out") < 0) {
        PyBuffer_Release(&x);
        return NULL;
    }
    if (x.len != y.len || n <= 0 || (x.len / 4) % n != 0) {
        PyBuffer_Release(&x);
        PyBuffer_Release(&y);
        PyErr_SetString(PyExc_ValueError,
                        "_kernels.softmax_rows_f32: x and out must be equal whole rows");
        return NULL;
    }
    Py_ssize_t rows = x.len / 4 / n;
    softmax_job job = {x.buf, y.buf, n, log};
    Py_BEGIN_ALLOW_THREADS
    split_range(softmax_range, &job, rows, (SPLIT_GRAIN + n - 1) / n);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&x);
    PyBuffer_Release(&y);
    Py_RETURN_NONE;
}

/* ---- max pooling over the last two dims of a 4-d float32 view (dialects/
 * pooling.py's _max_pool and _max_pool_grad, any strides). The forward:
 * among each window's elements inside the input, in row-major kernel order,
 * the last NaN, else the first maximum (a window of -inf: its first element
 * inside); the result and its row-major offset in the window. The loops run
 * the output's axis of the smallest input stride innermost, over all windows
 * at once per kernel offset (a batch-innermost layout: contiguous loads). */
typedef struct {
    Py_ssize_t size;     /* output extent along the axis */
    Py_ssize_t xs, vs, is;  /* strides (elements) of x, the values, the offsets */
    int role;            /* 0 leading, 1 pooled H, 2 pooled W */
} pool_axis;

typedef struct {
    Py_ssize_t k[2], st[2], pad[2], dil[2], n[2];  /* kernel, stride, padding, dilation, input size */
} pool_geom;

#define POOL_CHUNK 256

/* the t in [0, L) for which t*st - pad + off lies in [0, n) */
static inline void
inside_range(Py_ssize_t L, Py_ssize_t st, Py_ssize_t pad, Py_ssize_t off, Py_ssize_t n,
             Py_ssize_t *lo, Py_ssize_t *hi)
{
    Py_ssize_t a = pad - off;  /* t*st >= a */
    Py_ssize_t b = n - 1 + pad - off;  /* t*st <= b */
    Py_ssize_t l = a <= 0 ? 0 : (a + st - 1) / st;
    Py_ssize_t h = b < 0 ? 0 : b / st + 1;
    *lo = l;
    *hi = h < L ? h : L;
}

#define DEFINE_POOL(SUFFIX, ATTR)                                                     \
    ATTR static void pool_inner_##SUFFIX(const float *p, Py_ssize_t step, Py_ssize_t lo, \
                                         Py_ssize_t hi, float *m, int64_t *id,        \
                                         int64_t j)                                   \
    {                                                                                 \
        for (Py_ssize_t t = lo; t < hi; t++) {                                        \
            float v = p[t * step];                                                    \
            int upd = (v > m[t]) | (v != v) | (id[t] < 0);                            \
            m[t] = upd ? v : m[t];                                                    \
            id[t] = upd ? j : id[t];                                                  \
        }                                                                             \
    }                                                                                 \
    /* 2x2 windows, stride 2, inside the input, rows contiguous: one output row, \
     * 8 windows at a time (the pairs deinterleaved by shuffles) */               \
    ATTR static inline void pool2x2_row_##SUFFIX(const float *r0, const float *r1,   \
                                                 float *v, int64_t *id, Py_ssize_t L) \
    {                                                                                 \
        const v8i ev = {0, 2, 4, 6, 8, 10, 12, 14}, od = {1, 3, 5, 7, 9, 11, 13, 15};  \
        Py_ssize_t t = 0;                                                             \
        for (; t + 8 <= L; t += 8) {                                                  \
            v8f p0 = v8_load(r0 + 2 * t), p1 = v8_load(r0 + 2 * t + 8);               \
            v8f q0 = v8_load(r1 + 2 * t), q1 = v8_load(r1 + 2 * t + 8);               \
            v8f m = __builtin_shuffle(p0, p1, ev);                                    \
            v8i j = {0, 0, 0, 0, 0, 0, 0, 0};                                         \
            v8f e[3] = {__builtin_shuffle(p0, p1, od), __builtin_shuffle(q0, q1, ev),  \
                        __builtin_shuffle(q0, q1, od)};                               \
            for (int k = 0; k < 3; k++) {                                             \
                v8i u = (e[k] > m) | (e[k] != e[k]);                                  \
                m = (v8f)(((v8i)e[k] & u) | ((v8i)m & ~u));                           \
                j = (u & (k + 1)) | (j & ~u);                                         \
            }                                                                         \
            memcpy(v + t, &m, sizeof m);                                              \
            for (int k = 0; k < 8; k++)                                               \
                id[t + k] = j[k];                                                     \
        }                                                                             \
        for (; t < L; t++) {                                                          \
            float e[4] = {r0[2 * t], r0[2 * t + 1], r1[2 * t], r1[2 * t + 1]};         \
            int32_t mb, eb, j = 0;                                                    \
            memcpy(&mb, &e[0], 4);                                                    \
            for (int k = 1; k < 4; k++) { /* branch-free: random data mispredicts */  \
                float m;                                                              \
                memcpy(&m, &mb, 4);                                                   \
                memcpy(&eb, &e[k], 4);                                                \
                int32_t u = -(int32_t)((e[k] > m) | (e[k] != e[k]));                  \
                mb = (eb & u) | (mb & ~u);                                            \
                j = (k & u) | (j & ~u);                                               \
            }                                                                         \
            memcpy(v + t, &mb, 4);                                                    \
            id[t] = j;                                                                \
        }                                                                             \
    }                                                                                 \
    /* rows output rows of 2x2 windows (input rows xr apart, outputs vr and ir) */ \
    ATTR static void pool2x2_rows_##SUFFIX(const float *r0, Py_ssize_t xh, Py_ssize_t xr, \
                                           float *v, Py_ssize_t vr, int64_t *id,      \
                                           Py_ssize_t ir, Py_ssize_t rows, Py_ssize_t L) \
    {                                                                                 \
        for (Py_ssize_t r = 0; r < rows; r++)                                         \
            pool2x2_row_##SUFFIX(r0 + r * xr, r0 + r * xr + xh, v + r * vr, id + r * ir, L); \
    }                                                                                 \
    /* the backward of 2x2 tiles (stride 2, inside the input, every element in    \
     * one window): both input rows of one output row written, 0 + ct where      \
     * chosen (torch's accumulation into zeros: -0.0 -> +0.0), else +0.0 */       \
    ATTR static void unpool2x2_row_##SUFFIX(const float *c, const int64_t *id,       \
                                            float *g0, float *g1, Py_ssize_t L)       \
    {                                                                                 \
        for (Py_ssize_t t = 0; t < L; t++) { /* by bits: no branch to mispredict */ \
            float v = c[t] + 0.0f;                                                    \
            int32_t vb, j = (int32_t)id[t], o[4];                                     \
            memcpy(&vb, &v, 4);                                                       \
            for (int k = 0; k < 4; k++)                                               \
                o[k] = vb & -(int32_t)(j == k);                                       \
            memcpy(g0 + 2 * t, o, 8);                                                 \
            memcpy(g1 + 2 * t, o + 2, 8);                                             \
        }                                                                             \
    }

#ifdef HAVE_AVX2_CLONE
DEFINE_POOL(avx2, __attribute__((target("avx2,fma"))))
DEFINE_POOL(avx512, __attribute__((target("avx512f,avx512vl,avx512dq,avx2,fma,prefer-vector-width=512"))))
#endif
DEFINE_POOL(base, )

/* a pooled axis innermost: each window in turn (its elements in registers) */
static void
max_pool_direct(const float *x, float *vals, int64_t *idx, const pool_axis *ax,
                const pool_geom *g)
{
    const pool_axis *in = &ax[3];
    int din = in->role - 1;
    Py_ssize_t xstride[2];
    for (int a = 0; a < 4; a++)
        if (ax[a].role)
            xstride[ax[a].role - 1] = ax[a].xs;
    Py_ssize_t L = in->size;
    int tiles = din == 1 && g->k[0] == 2 && g->k[1] == 2 && g->st[0] == 2 && g->st[1] == 2 &&
                g->pad[0] == 0 && g->pad[1] == 0 && g->dil[0] == 1 && g->dil[1] == 1 &&
                xstride[1] == 1 && in->vs == 1 && in->is == 1 && 2 * L <= g->n[1];
    for (Py_ssize_t i0 = 0; i0 < ax[0].size; i0++)
    for (Py_ssize_t i1 = 0; i1 < ax[1].size; i1++)
    for (Py_ssize_t i2 = 0; i2 < ax[2].size; i2++) {
        Py_ssize_t pos[3] = {i0, i1, i2};
        Py_ssize_t xb = 0, vb = 0, ib = 0, org[2] = {0, 0};
        for (int a = 0; a < 3; a++) {
            vb += pos[a] * ax[a].vs;
            ib += pos[a] * ax[a].is;
            if (ax[a].role == 0)
                xb += pos[a] * ax[a].xs;
            else
                org[ax[a].role - 1] = pos[a] * g->st[ax[a].role - 1] - g->pad[ax[a].role - 1];
        }
        if (tiles && ax[2].role == 1 && i2 == 0 && g->n[0] >= 2) {
            /* H next: its rows of whole windows in one call (a last partial
             * window, ceil_mode's, below) */
            Py_ssize_t rows = 2 * ax[2].size <= g->n[0] ? ax[2].size : g->n[0] / 2;
            DISPATCH(pool2x2_rows, x + xb, xstride[0], 2 * xstride[0], vals + vb,
                     ax[2].vs, idx + ib, ax[2].is, rows, L);
            i2 = rows - 1;
            continue;
        }
        if (tiles && ax[2].role != 1 && org[0] + 1 < g->n[0]) {
            const float *r0 = x + xb + org[0] * xstride[0];
            DISPATCH(pool2x2_rows, r0, xstride[0], 0, vals + vb, 0, idx + ib, 0, 1, L);
            continue;
        }
        for (Py_ssize_t t = 0; t < L; t++) {
            org[din] = t * g->st[din] - g->pad[din];
            float m = -INFINITY;
            int64_t j = -1;
            for (Py_ssize_t ki = 0; ki < g->k[0]; ki++) {
                Py_ssize_t h = org[0] + ki * g->dil[0];
                if (h < 0 || h >= g->n[0])
                    continue;
                for (Py_ssize_t kj = 0; kj < g->k[1]; kj++) {
                    Py_ssize_t w = org[1] + kj * g->dil[1];
                    if (w < 0 || w >= g->n[1])
                        continue;
                    float v = x[xb + h * xstride[0] + w * xstride[1]];
                    if (v > m || v != v || j < 0) {
                        m = v;
                        j = ki * g->k[1] + kj;
                    }
                }
            }
            vals[vb + t * in->vs] = m;
            idx[ib + t * in->is] = j;
        }
    }
}

static void
max_pool_loops(const float *x, float *vals, int64_t *idx, const pool_axis *ax,
               const pool_geom *g)
{
    if (ax[3].role) {
        max_pool_direct(x, vals, idx, ax, g);
        return;
    }
    /* ax[0..2]: the outer axes (any order), ax[3]: the innermost */
    float m[POOL_CHUNK];
    int64_t id[POOL_CHUNK];
    const pool_axis *in = &ax[3];
    for (Py_ssize_t i0 = 0; i0 < ax[0].size; i0++)
    for (Py_ssize_t i1 = 0; i1 < ax[1].size; i1++)
    for (Py_ssize_t i2 = 0; i2 < ax[2].size; i2++) {
        Py_ssize_t pos[3] = {i0, i1, i2};
        Py_ssize_t xb = 0, vb = 0, ib = 0, org[2] = {0, 0};  /* window origin (outer H/W) */
        for (int a = 0; a < 3; a++) {
            vb += pos[a] * ax[a].vs;
            ib += pos[a] * ax[a].is;
            if (ax[a].role == 0)
                xb += pos[a] * ax[a].xs;
            else
                org[ax[a].role - 1] = pos[a] * g->st[ax[a].role - 1] - g->pad[ax[a].role - 1];
        }
        Py_ssize_t xstride[2];  /* x's strides along H and W */
        for (int a = 0; a < 4; a++)
            if (ax[a].role)
                xstride[ax[a].role - 1] = ax[a].xs;
        for (Py_ssize_t c0 = 0; c0 < in->size; c0 += POOL_CHUNK) {
            Py_ssize_t L = in->size - c0 < POOL_CHUNK ? in->size - c0 : POOL_CHUNK;
            for (Py_ssize_t t = 0; t < L; t++) {
                m[t] = -INFINITY;
                id[t] = -1;
            }
            for (Py_ssize_t ki = 0; ki < g->k[0]; ki++)
            for (Py_ssize_t kj = 0; kj < g->k[1]; kj++) {
                Py_ssize_t off[2] = {ki * g->dil[0], kj * g->dil[1]};
                Py_ssize_t lo = 0, hi = L, step, xo = xb;
                int ok = 1;
                for (int d = 0; d < 2; d++) {
                    if (in->role == d + 1) {  /* the inner axis is this pooled dim */
                        inside_range(L, g->st[d], g->pad[d] - c0 * g->st[d], off[d], g->n[d],
                                     &lo, &hi);
                        xo += (c0 * g->st[d] - g->pad[d] + off[d]) * xstride[d];
                    } else {
                        Py_ssize_t at = org[d] + off[d];
                        ok &= at >= 0 && at < g->n[d];
                        xo += at * xstride[d];
                    }
                }
                if (!ok || lo >= hi)
                    continue;
                if (in->role == 0) {
                    xo += c0 * in->xs;
                    step = in->xs;
                } else {
                    step = g->st[in->role - 1] * in->xs;
                }
                DISPATCH(pool_inner, x + xo, step, lo, hi, m, id, ki * g->k[1] + kj);
            }
            for (Py_ssize_t t = 0; t < L; t++) {
                vals[vb + (c0 + t) * in->vs] = m[t];
                idx[ib + (c0 + t) * in->is] = id[t];
            }
        }
    }
}

/* the backward: g (zeroed, input-shaped) += ct at each window's chosen
 * element, windows in row-major output order per leading index (torch's
 * order of accumulation where windows overlap). Returns the first bad offset
 * index or -1. */
static Py_ssize_t
max_pool_grad_loops(const float *ct, const int64_t *idx, float *gr, const Py_ssize_t *cs,
                    const Py_ssize_t *is, const Py_ssize_t *gs, const Py_ssize_t *osz,
                    const pool_geom *g, int tiled, Py_ssize_t *dh, Py_ssize_t *dw)
{
    /* dh, dw: scratch of count entries, each offset's place in its window */
    int64_t count = (int64_t)(g->k[0] * g->k[1]);
    for (int64_t j = 0; j < count; j++) {
        dh[j] = (j / g->k[1]) * g->dil[0];
        dw[j] = (j % g->k[1]) * g->dil[1];
    }
    Py_ssize_t A = osz[0], B = osz[1], Ho = osz[2], Wo = osz[3];
    if (tiled && g->k[0] == 2 && g->k[1] == 2 && cs[3] == 1 && is[3] == 1 && gs[3] == 1) {
        /* 2x2 tiles, rows contiguous: each output row writes its two input rows */
        for (Py_ssize_t a = 0; a < A; a++)
        for (Py_ssize_t b = 0; b < B; b++)
        for (Py_ssize_t oh = 0; oh < Ho; oh++) {
            const int64_t *ir = idx + a * is[0] + b * is[1] + oh * is[2];
            for (Py_ssize_t t = 0; t < Wo; t++)
                if (ir[t] < 0 || ir[t] >= 4)
                    return ((a * B + b) * Ho + oh) * Wo + t;
            float *g0 = gr + a * gs[0] + b * gs[1] + 2 * oh * gs[2];
            DISPATCH(unpool2x2_row, ct + a * cs[0] + b * cs[1] + oh * cs[2], ir, g0,
                     g0 + gs[2], Wo);
        }
        return -1;
    }
    /* windows in C order per leading index (torch's order where they overlap);
     * tiled: g is not zeroed, each window writes all of its elements */
#define GRAD_BODY                                                                     \
    {                                                                                 \
        int64_t j = idx[a * is[0] + b * is[1] + oh * is[2] + ow * is[3]];             \
        if (j < 0 || j >= count)                                                      \
            return ((a * B + b) * Ho + oh) * Wo + ow;                                 \
        float v = ct[a * cs[0] + b * cs[1] + oh * cs[2] + ow * cs[3]];                \
        float *gb = gr + a * gs[0] + b * gs[1];                                       \
        if (tiled) {                                                                  \
            float v0 = v + 0.0f;                                                      \
            int32_t vb;                                                               \
            memcpy(&vb, &v0, 4);                                                      \
            for (int64_t k = 0; k < count; k++) { /* by bits, no branch */            \
                int32_t ob = vb & -(int32_t)(k == j);                                 \
                memcpy(gb + (oh * g->st[0] + dh[k]) * gs[2] +                         \
                       (ow * g->st[1] + dw[k]) * gs[3], &ob, 4);                      \
            }                                                                         \
        } else {                                                                      \
            Py_ssize_t h = oh * g->st[0] - g->pad[0] + dh[j];                         \
            Py_ssize_t w = ow * g->st[1] - g->pad[1] + dw[j];                         \
            /* an offset into the padding: dropped, as the numpy kernel's crop */     \
            if (h >= 0 && h < g->n[0] && w >= 0 && w < g->n[1])                       \
                gb[h * gs[2] + w * gs[3]] += v;                                       \
        }                                                                             \
    }
    Py_ssize_t s0 = is[0] < 0 ? -is[0] : is[0], s1 = is[1] < 0 ? -is[1] : is[1];
    Py_ssize_t s3 = is[3] < 0 ? -is[3] : is[3];
    int apart = g->st[0] >= g->dil[0] * (g->k[0] - 1) + 1 &&
                g->st[1] >= g->dil[1] * (g->k[1] - 1) + 1;
    if (apart && B > 1 && s1 < s3 && s1 <= s0) {
        /* windows apart (each input element gets one cotangent at most: any
         * order) and the offsets batch-innermost: loops in memory order */
        for (Py_ssize_t oh = 0; oh < Ho; oh++)
        for (Py_ssize_t ow = 0; ow < Wo; ow++)
        for (Py_ssize_t a = 0; a < A; a++)
        for (Py_ssize_t b = 0; b < B; b++)
            GRAD_BODY
    } else if (apart && A > 1 && s0 < s3 && s0 < s1) {
        for (Py_ssize_t oh = 0; oh < Ho; oh++)
        for (Py_ssize_t ow = 0; ow < Wo; ow++)
        for (Py_ssize_t b = 0; b < B; b++)
        for (Py_ssize_t a = 0; a < A; a++)
            GRAD_BODY
    } else {
        for (Py_ssize_t a = 0; a < A; a++)
        for (Py_ssize_t b = 0; b < B; b++)
        for (Py_ssize_t oh = 0; oh < Ho; oh++)
        for (Py_ssize_t ow = 0; ow < Wo; ow++)
            GRAD_BODY
    }
#undef GRAD_BODY
    return -1;
}

static int
get_strided(PyObject *o, Py_buffer *b, int writable, const char *fmt, const char *what)
{
    if (PyObject_GetBuffer(o, b, PyBUF_RECORDS_RO | (writable ? PyBUF_WRITABLE : 0)) < 0)
        return -1;
    if (b->ndim != 4 || b->format == NULL || strcmp(b->format, fmt) != 0 ||
        b->itemsize != (fmt[0] == 'f' ? 4 : 8)) {
        PyErr_Format(PyExc_TypeError, "_kernels: %s must be a 4-d %s array", what,
                     fmt[0] == 'f' ? "float32" : "int64");
        PyBuffer_Release(b);
        return -1;
    }
    for (int d = 0; d < 4; d++)
        if (b->strides[d] % b->itemsize) {
            PyErr_Format(PyExc_TypeError, "_kernels: %s has unaligned strides", what);
            PyBuffer_Release(b);
            return -1;
        }
    return 0;
}

static int
parse_geom(PyObject *args_geom, pool_geom *g)
{
    /* (kh, kw, sh, sw, ph, pw, dh, dw, H, W) */
    Py_ssize_t v[10];
    if (!PyArg_ParseTuple(args_geom, "nnnnnnnnnn", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                          &v[6], &v[7], &v[8], &v[9]))
        return -1;
    for (int d = 0; d < 2; d++) {
        g->k[d] = v[d];
        g->st[d] = v[2 + d];
        g->pad[d] = v[4 + d];
        g->dil[d] = v[6 + d];
        g->n[d] = v[8 + d];
        if (g->k[d] <= 0 || g->st[d] <= 0 || g->dil[d] <= 0 || g->pad[d] < 0) {
            PyErr_SetString(PyExc_ValueError, "_kernels: bad pooling geometry");
            return -1;
        }
    }
    return 0;
}

typedef struct {
    const float *x;
    float *v;
    int64_t *ix;
    const pool_axis *ax;
    const pool_geom *g;
} pool_job;

static void
pool_range(void *p, Py_ssize_t lo, Py_ssize_t hi)
{
    pool_job *j = p;
    pool_axis ax[4] = {j->ax[0], j->ax[1], j->ax[2], j->ax[3]};
    ax[0].size = hi - lo;
    max_pool_loops(j->x + lo * ax[0].xs, j->v + lo * ax[0].vs, j->ix + lo * ax[0].is, ax, j->g);
}

/* max_pool2d_f32(x, vals, idx, geom): x (A, B, H, W) float32, vals float32 and
 * idx int64 (A, B, Ho, Wo), any strides; geom = (kh, kw, sh, sw, ph, pw, dh,
 * dw, H, W) */
static PyObject *
max_pool2d_f32(PyObject *self, PyObject *args)
{
    PyObject *xo, *vo, *io, *geo;
    if (!PyArg_ParseTuple(args, "OOOO!", &xo, &vo, &io, &PyTuple_Type, &geo))
        return NULL;
    pool_geom g;
    if (parse_geom(geo, &g) < 0)
        return NULL;
    Py_buffer x, v, ix;
    if (get_strided(xo, &x, 0, "f", "x") < 0)
        return NULL;
    if (get_strided(vo, &v, 1, "f", "values") < 0) {
        PyBuffer_Release(&x);
        return NULL;
    }
    if (get_strided(io, &ix, 1, "l", "offsets") < 0 && (PyErr_Clear(), 1) &&
        get_strided(io, &ix, 1, "q", "offsets") < 0) {
        PyBuffer_Release(&x);
        PyBuffer_Release(&v);
        return NULL;
    }
    int bad = x.shape[2] != g.n[0] || x.shape[3] != g.n[1];
    for (int d = 0; d < 4; d++)
        bad |= v.shape[d] != ix.shape[d] || (d < 2 && v.shape[d] != x.shape[d]);
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "_kernels.max_pool2d_f32: shapes disagree");
    } else if (v.shape[0] && v.shape[1] && v.shape[2] && v.shape[3]) {
        pool_axis ax[4];
        for (int d = 0; d < 4; d++) {
            ax[d].size = v.shape[d];
            ax[d].xs = x.strides[d] / 4;
            ax[d].vs = v.strides[d] / 4;
            ax[d].is = ix.strides[d] / 8;
            ax[d].role = d < 2 ? 0 : d - 1;
        }
        /* innermost: the axis whose step through x is smallest (a pooled axis
         * steps by its stride), others outer by decreasing step */
        Py_ssize_t key[4];
        for (int d = 0; d < 4; d++) {
            Py_ssize_t st = ax[d].xs < 0 ? -ax[d].xs : ax[d].xs;
            key[d] = ax[d].size == 1 ? PY_SSIZE_T_MAX : st * (d < 2 ? 1 : g.st[d - 2]);
        }
        pool_axis sorted[4];
        int used[4] = {0, 0, 0, 0};
        for (int r = 3; r >= 0; r--) {  /* r = 3: the smallest key */
            int best = -1;
            for (int d = 0; d < 4; d++)
                if (!used[d] && (best < 0 || key[d] < key[best]))
                    best = d;
            used[best] = 1;
            sorted[r] = ax[best];
        }
        pool_job job = {x.buf, v.buf, ix.buf, sorted, &g};
        Py_ssize_t per = sorted[1].size * sorted[2].size * sorted[3].size;
        Py_BEGIN_ALLOW_THREADS
        if (sorted[0].role == 0)  /* halves of a leading axis: disjoint outputs */
            split_range(pool_range, &job, sorted[0].size, (SPLIT_GRAIN / 4 + per - 1) / per);
        else
            max_pool_loops(x.buf, v.buf, ix.buf, sorted, &g);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&x);
    PyBuffer_Release(&v);
    PyBuffer_Release(&ix);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

/* max_pool2d_grad_f32(ct, idx, g, geom, tiled) -> -1, or the flat (C order)
 * index of the first offset out of range: g (A, B, H, W) float32, zeroed by
 * the caller unless ``tiled`` (stride = kernel, no dilation or padding, the
 * windows cover the input: every element is written) */
static PyObject *
max_pool2d_grad_f32(PyObject *self, PyObject *args)
{
    PyObject *co, *io, *go, *geo;
    int tiled;
    if (!PyArg_ParseTuple(args, "OOOO!p", &co, &io, &go, &PyTuple_Type, &geo, &tiled))
        return NULL;
    pool_geom g;
    if (parse_geom(geo, &g) < 0)
        return NULL;
    Py_buffer c, ix, gr;
    if (get_strided(co, &c, 0, "f", "ct") < 0)
        return NULL;
    if (get_strided(io, &ix, 0, "l", "offsets") < 0 && (PyErr_Clear(), 1) &&
        get_strided(io, &ix, 0, "q", "offsets") < 0) {
        PyBuffer_Release(&c);
        return NULL;
    }
    if (get_strided(go, &gr, 1, "f", "gradient") < 0) {
        PyBuffer_Release(&c);
        PyBuffer_Release(&ix);
        return NULL;
    }
    Py_ssize_t first_bad = -1;
    int bad = gr.shape[2] != g.n[0] || gr.shape[3] != g.n[1];
    for (int d = 0; d < 4; d++)
        bad |= c.shape[d] != ix.shape[d] || (d < 2 && c.shape[d] != gr.shape[d]);
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "_kernels.max_pool2d_grad_f32: shapes disagree");
    } else {
        Py_ssize_t cs[4], is[4], gs[4];
        for (int d = 0; d < 4; d++) {
            cs[d] = c.strides[d] / 4;
            is[d] = ix.strides[d] / 8;
            gs[d] = gr.strides[d] / 4;
        }
        Py_ssize_t *scratch = PyMem_Malloc(2 * sizeof(Py_ssize_t) * (size_t)(g.k[0] * g.k[1]));
        if (scratch == NULL) {
            PyErr_NoMemory();
        } else {
            Py_BEGIN_ALLOW_THREADS
            first_bad = max_pool_grad_loops(c.buf, ix.buf, gr.buf, cs, is, gs, c.shape, &g,
                                            tiled, scratch, scratch + g.k[0] * g.k[1]);
            Py_END_ALLOW_THREADS
            PyMem_Free(scratch);
        }
    }
    PyBuffer_Release(&c);
    PyBuffer_Release(&ix);
    PyBuffer_Release(&gr);
    if (PyErr_Occurred())
        return NULL;
    return PyLong_FromSsize_t(first_bad);
}

/* ---- scatter_add of whole rows (dialects/indexing.py's _scatter_add along
 * dim 0 with an index constant along the rows: an embedding's gradient):
 * out[rows[i], :] += src[i, :] for i in order, as np.add.at adds. */
#define DEFINE_ROWS(SUFFIX, ATTR)                                                     \
    ATTR static void add_rows_##SUFFIX(float *out, const int64_t *rows, const float *src, \
                                       Py_ssize_t R, Py_ssize_t D)                    \
    {                                                                                 \
        for (Py_ssize_t i = 0; i < R; i++) {                                          \
            float *o = out + rows[i] * D;                                             \
            const float *q = src + i * D;                                             \
            for (Py_ssize_t t = 0; t < D; t++)                                        \
                o[t] += q[t];                                                         \
        }                                                                             \
    }

#ifdef HAVE_AVX2_CLONE
DEFINE_ROWS(avx2, __attribute__((target("avx2,fma"))))
DEFINE_ROWS(avx512, __attribute__((target("avx512f,avx512vl,avx512dq,avx2,fma,prefer-vector-width=512"))))
#endif
DEFINE_ROWS(base, )

/* scatter_rows_f32(out, rows, src, D): out (V*D) float32, rows int64 (R), src
 * (R*D) float32, all C-contiguous; every row index must lie in [0, V) */
static PyObject *
scatter_rows_f32(PyObject *self, PyObject *args)
{
    PyObject *oo, *ro, *so;
    Py_ssize_t D;
    if (!PyArg_ParseTuple(args, "OOOn", &oo, &ro, &so, &D))
        return NULL;
    Py_buffer o, r, q;
    if (get_f32(oo, &o, 1, "out") < 0)
        return NULL;
    if (PyObject_GetBuffer(ro, &r, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&o);
        return NULL;
    }
    if (get_f32(so, &q, 0, "src") < 0) {
        PyBuffer_Release(&o);
        PyBuffer_Release(&r);
        return NULL;
    }
    Py_ssize_t R = r.len / 8, V = D > 0 ? o.len / 4 / D : 0;
    if (r.itemsize != 8 || r.format == NULL || (strcmp(r.format, "l") && strcmp(r.format, "q")))
        PyErr_SetString(PyExc_TypeError, "_kernels.scatter_rows_f32: rows must be int64");
    else if (D <= 0 || o.len / 4 != V * D || q.len / 4 != R * D)
        PyErr_SetString(PyExc_ValueError, "_kernels.scatter_rows_f32: sizes disagree");
    else {
        const int64_t *rows = r.buf;
        for (Py_ssize_t i = 0; i < R; i++)
            if (rows[i] < 0 || rows[i] >= V) {
                PyErr_Format(PyExc_IndexError, "_kernels.scatter_rows_f32: row %lld outside "
                             "[0, %zd)", (long long)rows[i], V);
                break;
            }
        if (!PyErr_Occurred()) {
            Py_BEGIN_ALLOW_THREADS
            DISPATCH(add_rows, o.buf, rows, q.buf, R, D);
            Py_END_ALLOW_THREADS
        }
    }
    PyBuffer_Release(&o);
    PyBuffer_Release(&r);
    PyBuffer_Release(&q);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
set_simd(PyObject *self, PyObject *arg)
{
    /* set_simd(level): run the loops' copy for AVX-512 (2), AVX2 + FMA (1) or
     * the baseline (0), the highest the CPU has up to ``level``; returns the
     * level that now runs (tests run every copy) */
    long want = PyLong_AsLong(arg);
    if (want == -1 && PyErr_Occurred())
        return NULL;
    simd = 0;
#ifdef HAVE_AVX2_CLONE
    __builtin_cpu_init();
    if (want >= 1 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        simd = 1;
    if (want >= 2 && simd == 1 && __builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
        simd = 2;
#endif
    return PyLong_FromLong(simd);
}

/* ---- relu (float32) of a strided view into a strided output, up to 4-d
 * (elementwise.py's _relu: maximum(x, 0): NaN stays, -0.0 gives +0.0): the
 * last two dims contiguous rows in both, or a transpose (x's rows stride 1,
 * the output's columns), in 16 x 16 tiles that stay in cache */
static inline float
relu_one(float v)
{
    return (v > 0.0f) | (v != v) ? v : 0.0f;
}

#define DEFINE_RELU(SUFFIX, ATTR)                                                     \
    ATTR static void relu_row_##SUFFIX(const float *x, float *o, Py_ssize_t n)        \
    {                                                                                 \
        for (Py_ssize_t t = 0; t < n; t++)                                            \
            o[t] = relu_one(x[t]);                                                    \
    }

#ifdef HAVE_AVX2_CLONE
DEFINE_RELU(avx2, __attribute__((target("avx2,fma"))))
DEFINE_RELU(avx512, __attribute__((target("avx512f,avx512vl,avx512dq,avx2,fma,prefer-vector-width=512"))))
#endif
DEFINE_RELU(base, )

static void
relu_2d(const float *x, float *o, Py_ssize_t R, Py_ssize_t C, Py_ssize_t xr, Py_ssize_t xc,
        Py_ssize_t orr, Py_ssize_t oc)
{
    if (xc == 1 && oc == 1) {
        for (Py_ssize_t r = 0; r < R; r++)
            DISPATCH(relu_row, x + r * xr, o + r * orr, C);
    } else if (xr == 1 && oc == 1) {  /* a transpose: 16 x 16 tiles */
        for (Py_ssize_t r0 = 0; r0 < R; r0 += 16)
            for (Py_ssize_t c0 = 0; c0 < C; c0 += 16) {
                Py_ssize_t r1 = r0 + 16 < R ? r0 + 16 : R, c1 = c0 + 16 < C ? c0 + 16 : C;
                for (Py_ssize_t c = c0; c < c1; c++)
                    for (Py_ssize_t r = r0; r < r1; r++)
                        o[r * orr + c] = relu_one(x[r + c * xc]);
            }
    } else {
        for (Py_ssize_t r = 0; r < R; r++)
            for (Py_ssize_t c = 0; c < C; c++)
                o[r * orr + c * oc] = relu_one(x[r * xr + c * xc]);
    }
}

/* relu4d_f32(x, out): both 4-d float32 of one shape, any strides */
static PyObject *
relu4d_f32(PyObject *self, PyObject *args)
{
    PyObject *xo, *oo;
    if (!PyArg_ParseTuple(args, "OO", &xo, &oo))
        return NULL;
    Py_buffer x, o;
    if (get_strided(xo, &x, 0, "f", "x") < 0)
        return NULL;
    if (get_strided(oo, &o, 1, "f", "out") < 0) {
        PyBuffer_Release(&x);
        return NULL;
    }
    int bad = 0;
    for (int d = 0; d < 4; d++)
        bad |= x.shape[d] != o.shape[d];
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "_kernels.relu4d_f32: shapes disagree");
    } else {
        Py_ssize_t xs[4], os[4];
        for (int d = 0; d < 4; d++) {
            xs[d] = x.strides[d] / 4;
            os[d] = o.strides[d] / 4;
        }
        const float *xb = x.buf;
        float *ob = o.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t a = 0; a < x.shape[0]; a++)
            for (Py_ssize_t b = 0; b < x.shape[1]; b++)
                relu_2d(xb + a * xs[0] + b * xs[1], ob + a * os[0] + b * os[1], x.shape[2],
                        x.shape[3], xs[2], xs[3], os[2], os[3]);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&x);
    PyBuffer_Release(&o);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
set_threads(PyObject *self, PyObject *arg)
{
    /* set_threads(n): the long loops split in two when n > 1; returns n */
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    kernel_threads = n < 1 ? 1 : (int)n;
    return PyLong_FromLong(kernel_threads);
}

static int
default_threads(void)
{
    /* PYFLAME_KERNEL_THREADS, else one: measured at the default (two), the
     * second half waited for a core that numpy's OpenBLAS workers spin on
     * after each GEMM, and the CNN step took 2x the CPU of one thread */
    const char *v = getenv("PYFLAME_KERNEL_THREADS");
    if (v != NULL && *v) {
        int n = atoi(v);
        return n < 1 ? 1 : n;
    }
    return 1;
}

static PyMethodDef methods[] = {
    {"gelu_f32", gelu_f32, METH_VARARGS, "gelu_f32(x, out, c, num, den)"},
    {"gelu_grad_f32", gelu_grad_f32, METH_VARARGS, "gelu_grad_f32(x, z, ct, out, near2, c)"},
    {"softmax_rows_f32", softmax_rows_f32, METH_VARARGS, "softmax_rows_f32(x, out, n, log)"},
    {"max_pool2d_f32", max_pool2d_f32, METH_VARARGS, "max_pool2d_f32(x, values, offsets, geom)"},
    {"max_pool2d_grad_f32", max_pool2d_grad_f32, METH_VARARGS,
     "max_pool2d_grad_f32(ct, offsets, grad, geom, tiled) -> -1 or the first bad offset's index"},
    {"scatter_rows_f32", scatter_rows_f32, METH_VARARGS, "scatter_rows_f32(out, rows, src, D)"},
    {"relu4d_f32", relu4d_f32, METH_VARARGS, "relu4d_f32(x, out)"},
    {"set_threads", set_threads, METH_O, "set_threads(n) -> n (long loops split in two above 1)"},
    {"set_simd", set_simd, METH_O, "set_simd(level) -> the level that runs (0 baseline, 1 AVX2, 2 AVX-512)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_kernels",
    "Native loops of reference kernels (dialects/_kernels.c)", -1, methods,
};

PyMODINIT_FUNC
PyInit__kernels(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    PyObject *two = PyLong_FromLong(2);
    PyObject *r = two == NULL ? NULL : set_simd(m, two);
    Py_XDECREF(two);
    if (r == NULL) {
        Py_DECREF(m);
        return NULL;
    }
    Py_DECREF(r);
    kernel_threads = default_threads();
    if (PyModule_AddIntConstant(m, "API", 1) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
