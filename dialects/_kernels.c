/* Native loops of some reference kernels (issue 14's training steps): the
 * float32 GELU, its derivative and the softmax rows, one pass per element in
 * place of numpy's many whole-array passes. Each function implements its op's
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
    Py_BEGIN_ALLOW_THREADS
    DISPATCH(gelu_loop, x.buf, y.buf, n, &k);
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
        Py_BEGIN_ALLOW_THREADS
        DISPATCH(gelu_grad_loop, b[0].buf, b[1].buf, b[2].buf, b[3].buf, n, near2, c);
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
    Py_BEGIN_ALLOW_THREADS
    DISPATCH(softmax_rows, x.buf, y.buf, rows, n, log);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&x);
    PyBuffer_Release(&y);
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

static PyMethodDef methods[] = {
    {"gelu_f32", gelu_f32, METH_VARARGS, "gelu_f32(x, out, c, num, den)"},
    {"gelu_grad_f32", gelu_grad_f32, METH_VARARGS, "gelu_grad_f32(x, z, ct, out, near2, c)"},
    {"softmax_rows_f32", softmax_rows_f32, METH_VARARGS, "softmax_rows_f32(x, out, n, log)"},
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
    if (PyModule_AddIntConstant(m, "API", 1) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
