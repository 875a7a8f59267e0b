/* The native hot paths of pyflame_mlir/core.py: semantics-free bookkeeping only.

   record(op, inputs, attrs): core.record's memo-hit path. It builds the
   memo key of the op's shape rule (the shapes and dtypes of the inputs, and
   ``op.memo_attrs(attrs)``), looks it up in ``op.memo`` and, on a hit, makes
   the OpNode and its promise Tensor exactly as core.record does (state cells,
   creation order, grad flags, counters). On anything else -- a memo miss,
   views, eager mode, anomaly detection, several results, a Tensor subclass
   overriding a slot, an unset slot -- it calls the pure-Python ``record``
   (the ``fallback`` given to ``configure``), which branches as it always did.
   The shape rules, dtype promotion and every op's semantics stay in Python.

   collect(tensors): core._collect_numbered's walk: the nodes a set of lazy
   tensors needs, in creation order, the realized leaves numbered by first
   use, and the wiring of the cache key; it returns the same ``Subgraph``.
   It numbers nodes in a hash table of its own (not in the ``_at`` slot), so
   it needs no lock. It returns None (the caller then runs the Python walk)
   where that walk would raise.

   Both read and write the objects' __slots__ directly at the offsets of
   their member descriptors (checked at ``configure``). No object is
   untracked from the cyclic GC and no GC setting is changed. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#define API_VERSION 2 /* core.py checks it: a stale build is not used */

/* ---- configuration (set once by core.py) ---- */

static PyTypeObject *Tensor_T, *OpNode_T, *Meta_T, *Frozen_T, *DType_T;
static PyObject *Subgraph_T;
static PyObject *core_globals;  /* core's module dict: _AUTOGRAD_USED is read there */
static PyObject *counters_dict, *graph_dict, *config_dict;
static PyObject *grad_off, *scopes, *mutations;  /* one-item lists */
static PyObject *local_state, *grad_mode;  /* threading.local objects */
static PyObject *seq_counter;  /* itertools.count: core._next_seq's */
static PyObject *fallback;  /* the pure-Python record */
static PyObject *frozen_mut;  /* core._FROZEN */
static PyObject *float_category;

static PyObject *one, *zero; /* the ints 1 and 0 */
static PyObject *s_infer_on;
static PyObject *s_eager, *s_anomaly, *s_ops_recorded, *s_memo, *s_memo_attrs, *s_enabled,
    *s_graph, *s_sig_id, *s_autograd_used;

/* slot offsets */
static Py_ssize_t t_shape, t_dtype, t_node, t_index, t_value, t_ag, t_hist, t_mut, t_view,
    t_cell;
static Py_ssize_t n_op, n_inputs, n_c0, n_c1, n_attrs, n_specs, n_seq, n_nograd, n_rg,
    n_freed, n_sig, n_sig_id, n_keep, n_at;
static Py_ssize_t m_requires_grad, m_detached, f_source, d_category;

#define SLOT(o, off) (*(PyObject **)((char *)(o) + (off)))

static inline void
init_slot(PyObject *o, Py_ssize_t off, PyObject *v)
{
    /* (a fresh object: the slot is NULL) */
    Py_INCREF(v);
    SLOT(o, off) = v;
}

static Py_ssize_t
slot_offset(PyTypeObject *tp, const char *name)
{
    PyObject *d = PyObject_GetAttrString((PyObject *)tp, name);
    if (d == NULL)
        return -1;
    if (!Py_IS_TYPE(d, &PyMemberDescr_Type)) {
        PyErr_Format(PyExc_TypeError, "_native.configure: %s.%s is not a __slots__ member",
                     tp->tp_name, name);
        Py_DECREF(d);
        return -1;
    }
    PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
    Py_ssize_t off = m->offset;
    int kind = m->type;
    Py_DECREF(d);
    if (kind != T_OBJECT_EX) {
        PyErr_Format(PyExc_TypeError, "_native.configure: %s.%s is not an object slot",
                     tp->tp_name, name);
        return -1;
    }
    return off;
}

/* Tensor subclasses (nn.Parameter...): the fast paths read the slots directly,
   which is what Python's attribute reads do unless the subclass overrides one
   of those names. Checked once per type (the type kept alive here). */
#define N_TENSOR_NAMES 10
static const char *tensor_names[N_TENSOR_NAMES] = {
    "shape", "dtype", "_node", "_index", "_value", "_ag", "_hist", "_mut", "_view", "_cell"};
static PyObject *tensor_descrs[N_TENSOR_NAMES];
#define TYPE_CACHE 16
static PyTypeObject *type_cache[TYPE_CACHE];
static char type_ok_cache[TYPE_CACHE];
static unsigned int type_tag_cache[TYPE_CACHE]; /* the answer holds while the type's
                                                    version tag does (a class attribute
                                                    set later invalidates the tag) */
static int n_type_cache;

static int
type_is_plain(PyTypeObject *tp)
{
    if (tp == Tensor_T)
        return 1;
    int slot = -1;
    for (int i = 0; i < n_type_cache; i++)
        if (type_cache[i] == tp) {
            if (PyType_HasFeature(tp, Py_TPFLAGS_VALID_VERSION_TAG) &&
                tp->tp_version_tag == type_tag_cache[i])
                return type_ok_cache[i];
            slot = i; /* (changed since: asked again) */
            break;
        }
    if (!PyType_IsSubtype(tp, Tensor_T))
        return 0;
    int ok = 1;
    for (int i = 0; i < N_TENSOR_NAMES && ok; i++) {
        PyObject *name = PyUnicode_InternFromString(tensor_names[i]);
        if (name == NULL) {
            PyErr_Clear();
            return 0;
        }
        PyObject *d = _PyType_Lookup(tp, name); /* borrowed */
        Py_DECREF(name);
        ok = d == tensor_descrs[i];
    }
    if (slot < 0 && n_type_cache < TYPE_CACHE) {
        Py_INCREF(tp);
        slot = n_type_cache++;
        type_cache[slot] = tp;
    }
    if (slot >= 0) {
        type_ok_cache[slot] = (char)ok;
        /* (_PyType_Lookup above gave the type a valid tag, unless it could not) */
        type_tag_cache[slot] = PyType_HasFeature(tp, Py_TPFLAGS_VALID_VERSION_TAG)
                                   ? tp->tp_version_tag : 0;
    }
    return ok;
}

static PyObject *
configure(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"Tensor", "OpNode", "AutogradMeta", "Frozen", "DType", "Subgraph",
                             "core_globals", "counters", "graph", "config", "grad_off",
                             "scopes", "mutations", "local", "grad_mode", "seq", "fallback",
                             "frozen_mut", "float_category", NULL};
    PyObject *tensor, *opnode, *meta, *frozen, *dtype, *subgraph, *globals, *counters, *graph,
        *config, *goff, *sc, *mut, *loc, *gm, *seq, *fb, *fm, *fc;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOOOOOOOOOOOOOOOO", kwlist, &tensor,
                                     &opnode, &meta, &frozen, &dtype, &subgraph, &globals,
                                     &counters, &graph, &config, &goff, &sc, &mut, &loc, &gm,
                                     &seq, &fb, &fm, &fc))
        return NULL;
    if (!PyType_Check(tensor) || !PyType_Check(opnode) || !PyType_Check(meta) ||
        !PyType_Check(frozen) || !PyType_Check(dtype)) {
        PyErr_SetString(PyExc_TypeError, "_native.configure: the classes must be types");
        return NULL;
    }
    if (!PyDict_Check(globals) || !PyList_Check(goff) || !PyList_Check(sc) ||
        !PyList_Check(mut) || PyList_GET_SIZE(goff) != 1 || PyList_GET_SIZE(sc) != 1 ||
        PyList_GET_SIZE(mut) != 1 || Py_TYPE(seq)->tp_iternext == NULL) {
        PyErr_SetString(PyExc_TypeError, "_native.configure: unexpected argument types");
        return NULL;
    }
    PyTypeObject *T = (PyTypeObject *)tensor, *N = (PyTypeObject *)opnode,
                 *M = (PyTypeObject *)meta, *F = (PyTypeObject *)frozen,
                 *D = (PyTypeObject *)dtype;
#define OFF(var, tp, name)                  \
    if ((var = slot_offset(tp, name)) < 0) \
        return NULL;
    OFF(t_shape, T, "shape") OFF(t_dtype, T, "dtype") OFF(t_node, T, "_node")
    OFF(t_index, T, "_index") OFF(t_value, T, "_value") OFF(t_ag, T, "_ag")
    OFF(t_hist, T, "_hist") OFF(t_mut, T, "_mut") OFF(t_view, T, "_view")
    OFF(t_cell, T, "_cell")
    OFF(n_op, N, "op") OFF(n_inputs, N, "inputs") OFF(n_c0, N, "_c0") OFF(n_c1, N, "_c1")
    OFF(n_attrs, N, "attrs") OFF(n_specs, N, "specs") OFF(n_seq, N, "seq")
    OFF(n_nograd, N, "nograd") OFF(n_rg, N, "rg") OFF(n_freed, N, "freed")
    OFF(n_sig, N, "_sig") OFF(n_sig_id, N, "_sig_id") OFF(n_keep, N, "keep")
    OFF(n_at, N, "_at")
    OFF(m_requires_grad, M, "requires_grad") OFF(m_detached, M, "detached")
    OFF(f_source, F, "source") OFF(d_category, D, "category")
#undef OFF
    for (int i = 0; i < N_TENSOR_NAMES; i++) {
        PyObject *name = PyUnicode_InternFromString(tensor_names[i]);
        if (name == NULL)
            return NULL;
        PyObject *d = _PyType_Lookup(T, name);
        Py_DECREF(name);
        Py_XINCREF(d);
        Py_XSETREF(tensor_descrs[i], d);
    }
    PyObject *cd = PyObject_GenericGetDict(counters, NULL);
    PyObject *gd = cd ? PyObject_GenericGetDict(graph, NULL) : NULL;
    PyObject *fd = gd ? PyObject_GenericGetDict(config, NULL) : NULL;
    if (fd == NULL) {
        Py_XDECREF(cd);
        Py_XDECREF(gd);
        return NULL;
    }
    Py_XSETREF(counters_dict, cd);
    Py_XSETREF(graph_dict, gd);
    Py_XSETREF(config_dict, fd);
#define KEEP(var, v)        \
    Py_INCREF(v);           \
    Py_XSETREF(var, v);
    KEEP(Tensor_T, T) KEEP(OpNode_T, N) KEEP(Meta_T, M) KEEP(Frozen_T, F) KEEP(DType_T, D)
    KEEP(Subgraph_T, subgraph) KEEP(core_globals, globals) KEEP(grad_off, goff)
    KEEP(scopes, sc) KEEP(mutations, mut) KEEP(local_state, loc) KEEP(grad_mode, gm)
    KEEP(seq_counter, seq) KEEP(fallback, fb) KEEP(frozen_mut, fm)
    KEEP(float_category, fc)
#undef KEEP
    for (int i = 0; i < n_type_cache; i++)
        Py_DECREF(type_cache[i]);
    n_type_cache = 0;
    Py_RETURN_NONE;
}

static int
configured(void)
{
    if (fallback == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "pyflame_mlir._native: configure() was not called");
        return 0;
    }
    return 1;
}

/* ---- record ---- */

static PyObject *
call_fallback(PyObject *op, PyObject *inputs, PyObject *attrs)
{
    PyObject *args[3] = {op, inputs, attrs};
    return PyObject_Vectorcall(fallback, args, 3, NULL);
}

static inline int
is_zero_item(PyObject *list)
{
    /* list[0] == 0 for one of core's counts (a Python int) */
    PyObject *v = PyList_GET_ITEM(list, 0);
    if (!PyLong_CheckExact(v))
        return 0;
    int overflow;
    return PyLong_AsLongAndOverflow(v, &overflow) == 0 && !overflow;
}

/* 1 if t's slots can be read here (an exact Tensor or a subclass not
   overriding them), all set, and it is not a view; 0 otherwise. */
static inline int
plain_input(PyObject *t)
{
    if (!type_is_plain(Py_TYPE(t)))
        return 0;
    return SLOT(t, t_view) == Py_None && SLOT(t, t_shape) != NULL &&
           SLOT(t, t_dtype) != NULL && SLOT(t, t_node) != NULL && SLOT(t, t_ag) != NULL &&
           SLOT(t, t_hist) != NULL && SLOT(t, t_cell) != NULL;
}

/* core._inputs_require_grad: -1 on error (or an unset slot: the caller falls back) */
static int
inputs_require_grad(PyObject *inputs)
{
    Py_ssize_t n = PyTuple_GET_SIZE(inputs);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PyTuple_GET_ITEM(inputs, i);
        PyObject *ag = SLOT(t, t_ag);
        int detached = 0;
        if (ag != Py_None) {
            if (Py_TYPE(ag) != Meta_T)
                return -2;
            PyObject *rq = SLOT(ag, m_requires_grad), *dt = SLOT(ag, m_detached);
            if (rq == NULL || dt == NULL)
                return -2;
            detached = PyObject_IsTrue(dt);
            if (detached < 0)
                return -1;
            int r = PyObject_IsTrue(rq);
            if (r < 0)
                return -1;
            if (r)  /* (both branches of the Python code return True then) */
                return 1;
        }
        if (!detached) {
            PyObject *node = SLOT(t, t_node);
            if (node == Py_None)
                node = SLOT(t, t_hist);
            if (node != Py_None) {
                if (Py_TYPE(node) != OpNode_T)
                    return -2;
                PyObject *rg = SLOT(node, n_rg);
                if (rg == NULL)
                    return -2;
                int r = PyObject_IsTrue(rg);
                if (r < 0)
                    return -1;
                if (r) {
                    PyObject *dt = SLOT(t, t_dtype);
                    if (Py_TYPE(dt) != DType_T || SLOT(dt, d_category) == NULL)
                        return -2;
                    int f = PyObject_RichCompareBool(SLOT(dt, d_category), float_category,
                                                     Py_EQ);
                    if (f != 0)
                        return f;
                }
            }
        }
    }
    return 0;
}

static int
add_one(PyObject *dict, PyObject *name)
{
    PyObject *v = PyDict_GetItemWithError(dict, name); /* borrowed */
    if (v == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetObject(PyExc_AttributeError, name);
        return -1;
    }
    PyObject *w = PyNumber_Add(v, one);
    if (w == NULL)
        return -1;
    int r = PyDict_SetItem(dict, name, w);
    Py_DECREF(w);
    return r;
}

static int
add_one_attr(PyObject *obj, PyObject *name)
{
    PyObject *v = PyObject_GetAttr(obj, name);
    if (v == NULL)
        return -1;
    PyObject *w = PyNumber_Add(v, one);
    Py_DECREF(v);
    if (w == NULL)
        return -1;
    int r = PyObject_SetAttr(obj, name, w);
    Py_DECREF(w);
    return r;
}

static int
config_flag(PyObject *name)
{
    PyObject *v = PyDict_GetItemWithError(config_dict, name);
    if (v == NULL) {
        if (PyErr_Occurred())
            return -1;
        return 1; /* unknown: the Python path decides */
    }
    return PyObject_IsTrue(v);
}

/* Tensor._promise */
static PyObject *
promise(PyObject *node, PyObject *index, PyObject *shape, PyObject *dt)
{
    PyObject *out = Tensor_T->tp_alloc(Tensor_T, 0);
    if (out == NULL)
        return NULL;
    init_slot(out, t_shape, shape);
    init_slot(out, t_dtype, dt);
    init_slot(out, t_node, node);
    init_slot(out, t_index, index);
    init_slot(out, t_value, Py_None);
    init_slot(out, t_ag, Py_None);
    init_slot(out, t_hist, Py_None);
    init_slot(out, t_mut, Py_None);
    init_slot(out, t_view, Py_None);
    init_slot(out, t_cell, Py_None);
    return out;
}

static PyObject *
record_impl(PyObject *op, PyObject *inputs, PyObject *attrs)
{
    if (!PyTuple_CheckExact(inputs))
        return call_fallback(op, inputs, attrs);
    Py_ssize_t n = PyTuple_GET_SIZE(inputs);
    for (Py_ssize_t i = 0; i < n; i++)
        if (!plain_input(PyTuple_GET_ITEM(inputs, i)))
            return call_fallback(op, inputs, attrs);
    int flag = config_flag(s_eager);
    if (flag != 0) /* eager mode realizes each op: the Python path does */
        return flag < 0 ? NULL : call_fallback(op, inputs, attrs);
    flag = config_flag(s_anomaly);
    if (flag != 0) /* anomaly detection takes the stack in OpNode.__init__ */
        return flag < 0 ? NULL : call_fallback(op, inputs, attrs);

    PyObject *memo_attrs = PyObject_GetAttr(op, s_memo_attrs);
    if (memo_attrs == NULL)
        return NULL;
    if (memo_attrs == Py_None) {
        Py_DECREF(memo_attrs);
        return call_fallback(op, inputs, attrs);
    }
    /* the key: as core.record builds it */
    PyObject *key;
    if (n == 2) {
        PyObject *a = PyTuple_GET_ITEM(inputs, 0), *b = PyTuple_GET_ITEM(inputs, 1);
        key = PyTuple_Pack(4, SLOT(a, t_shape), SLOT(b, t_shape), SLOT(a, t_dtype),
                           SLOT(b, t_dtype));
    } else if (n == 1) {
        PyObject *a = PyTuple_GET_ITEM(inputs, 0);
        key = PyTuple_Pack(2, SLOT(a, t_shape), SLOT(a, t_dtype));
    } else {
        key = PyTuple_New(2 * n);
        if (key != NULL)
            for (Py_ssize_t i = 0; i < n; i++) {
                PyObject *t = PyTuple_GET_ITEM(inputs, i);
                Py_INCREF(SLOT(t, t_shape));
                PyTuple_SET_ITEM(key, i, SLOT(t, t_shape));
                Py_INCREF(SLOT(t, t_dtype));
                PyTuple_SET_ITEM(key, n + i, SLOT(t, t_dtype));
            }
    }
    if (key == NULL) {
        Py_DECREF(memo_attrs);
        return NULL;
    }
    int has_attrs = PyDict_Check(attrs) ? PyDict_GET_SIZE(attrs) != 0 : PyObject_IsTrue(attrs);
    if (has_attrs < 0) {
        Py_DECREF(memo_attrs);
        Py_DECREF(key);
        return NULL;
    }
    if (has_attrs) {
        PyObject *ak = PyObject_CallOneArg(memo_attrs, attrs);
        if (ak == NULL) {
            Py_DECREF(memo_attrs);
            Py_DECREF(key);
            return NULL;
        }
        PyObject *k2 = PyTuple_Pack(2, key, ak);
        Py_DECREF(ak);
        Py_DECREF(key);
        key = k2;
        if (key == NULL) {
            Py_DECREF(memo_attrs);
            return NULL;
        }
    }
    Py_DECREF(memo_attrs);
    PyObject *memo = PyObject_GetAttr(op, s_memo);
    if (memo == NULL) {
        Py_DECREF(key);
        return NULL;
    }
    if (!PyDict_CheckExact(memo)) {
        Py_DECREF(memo);
        Py_DECREF(key);
        return call_fallback(op, inputs, attrs);
    }
    PyObject *hit = PyDict_GetItemWithError(memo, key); /* borrowed */
    Py_DECREF(key);
    if (hit == NULL) {
        Py_DECREF(memo);
        if (PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_TypeError))
                return NULL;
            PyErr_Clear(); /* an unhashable attribute value: the Python path (no memo) */
        }
        return call_fallback(op, inputs, attrs);
    }
    if (!PyTuple_CheckExact(hit) || PyTuple_GET_SIZE(hit) != 4 ||
        !PyTuple_CheckExact(PyTuple_GET_ITEM(hit, 0))) {
        Py_DECREF(memo);
        return call_fallback(op, inputs, attrs);
    }
    if (PyTuple_GET_ITEM(hit, 2) == Py_None) { /* several results: (shape, dtype) specs */
        PyObject *sp = PyTuple_GET_ITEM(hit, 0);
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(sp); i++) {
            PyObject *one_spec = PyTuple_GET_ITEM(sp, i);
            if (!PyTuple_CheckExact(one_spec) || PyTuple_GET_SIZE(one_spec) != 2) {
                Py_DECREF(memo);
                return call_fallback(op, inputs, attrs);
            }
        }
    }
    Py_INCREF(hit);
    Py_DECREF(memo);
    PyObject *specs = PyTuple_GET_ITEM(hit, 0), *sid = PyTuple_GET_ITEM(hit, 1),
             *shape = PyTuple_GET_ITEM(hit, 2), *dt = PyTuple_GET_ITEM(hit, 3);

    /* grad flags first: they read the inputs' nodes, and may fall back */
    int nograd = 0, rg = 0;
    if (!is_zero_item(grad_off)) {
        PyObject *en = PyObject_GetAttr(grad_mode, s_enabled);
        if (en == NULL) {
            Py_DECREF(hit);
            return NULL;
        }
        int e = PyObject_IsTrue(en);
        Py_DECREF(en);
        if (e < 0) {
            Py_DECREF(hit);
            return NULL;
        }
        nograd = !e;
    }
    if (nograd) {  /* inference_mode: the Python path marks its results (core._INFER_ON) */
        PyObject *inf = PyDict_GetItemWithError(core_globals, s_infer_on); /* borrowed */
        if (inf == NULL) {
            Py_DECREF(hit);
            if (PyErr_Occurred())
                return NULL;
            return call_fallback(op, inputs, attrs);
        }
        if (!is_zero_item(inf)) {
            Py_DECREF(hit);
            return call_fallback(op, inputs, attrs);
        }
    }
    if (!nograd) {
        PyObject *used = PyDict_GetItemWithError(core_globals, s_autograd_used);
        if (used == NULL) {
            Py_DECREF(hit);
            if (PyErr_Occurred())
                return NULL;
            return call_fallback(op, inputs, attrs);
        }
        int u = PyObject_IsTrue(used);
        if (u < 0) {
            Py_DECREF(hit);
            return NULL;
        }
        if (u) {
            rg = inputs_require_grad(inputs);
            if (rg == -2) {
                Py_DECREF(hit);
                return call_fallback(op, inputs, attrs);
            }
            if (rg < 0) {
                Py_DECREF(hit);
                return NULL;
            }
        }
    }
    /* the cells of the inputs' current states, made on first read */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PyTuple_GET_ITEM(inputs, i);
        if (SLOT(t, t_cell) == Py_None) {
            PyObject *c = PyDict_New();
            if (c == NULL) {
                Py_DECREF(hit);
                return NULL;
            }
            SLOT(t, t_cell) = c; /* (the slot held None: released) */
            Py_DECREF(Py_None);
        }
    }
    PyObject *seq;
    if (n) {
        seq = Py_TYPE(seq_counter)->tp_iternext(seq_counter);
        if (seq == NULL) {
            Py_DECREF(hit);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_RuntimeError, "the creation-order counter stopped");
            return NULL;
        }
    } else {
        seq = PyLong_FromLong(-1);
    }
    PyObject *node = OpNode_T->tp_alloc(OpNode_T, 0);
    if (node == NULL) {
        Py_DECREF(seq);
        Py_DECREF(hit);
        return NULL;
    }
    init_slot(node, n_op, op);
    init_slot(node, n_inputs, inputs);
    init_slot(node, n_attrs, attrs);
    init_slot(node, n_specs, specs);
    init_slot(node, n_sig_id, sid);
    if (n == 2 || n == 1) {
        init_slot(node, n_c0, SLOT(PyTuple_GET_ITEM(inputs, 0), t_cell));
        init_slot(node, n_c1, n == 2 ? SLOT(PyTuple_GET_ITEM(inputs, 1), t_cell) : Py_None);
    } else if (n == 0) {
        init_slot(node, n_c0, Py_None);
        init_slot(node, n_c1, Py_None);
    } else {
        PyObject *cells = PyTuple_New(n);
        if (cells == NULL) {
            Py_DECREF(node);
            Py_DECREF(seq);
            Py_DECREF(hit);
            return NULL;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *c = SLOT(PyTuple_GET_ITEM(inputs, i), t_cell);
            Py_INCREF(c);
            PyTuple_SET_ITEM(cells, i, c);
        }
        SLOT(node, n_c0) = cells;
        init_slot(node, n_c1, Py_None);
    }
    SLOT(node, n_seq) = seq;
    init_slot(node, n_sig, Py_None);
    init_slot(node, n_keep, Py_None);
    init_slot(node, n_at, Py_None);
    init_slot(node, n_freed, Py_False);
    init_slot(node, n_nograd, nograd ? Py_True : Py_False);
    init_slot(node, n_rg, rg ? Py_True : Py_False);

    PyObject *out;
    if (shape != Py_None) {
        out = promise(node, zero, shape, dt);
    } else { /* a list: one promise per result */
        Py_ssize_t k = PyTuple_GET_SIZE(specs);
        out = PyList_New(k);
        for (Py_ssize_t i = 0; out != NULL && i < k; i++) {
            PyObject *sp = PyTuple_GET_ITEM(specs, i), *index = PyLong_FromSsize_t(i);
            PyObject *t = index ? promise(node, index, PyTuple_GET_ITEM(sp, 0),
                                          PyTuple_GET_ITEM(sp, 1)) : NULL;
            Py_XDECREF(index);
            if (t == NULL)
                Py_CLEAR(out);
            else
                PyList_SET_ITEM(out, i, t);
        }
    }
    Py_DECREF(node); /* (the promises hold it) */
    Py_DECREF(hit);
    if (out == NULL)
        return NULL;

    if (add_one(counters_dict, s_ops_recorded) < 0)
        goto error;
    if (is_zero_item(scopes)) {
        if (add_one(graph_dict, s_ops_recorded) < 0)
            goto error;
    } else {
        PyObject *g = PyObject_GetAttr(local_state, s_graph);
        if (g == NULL)
            goto error;
        int r = add_one_attr(g, s_ops_recorded);
        Py_DECREF(g);
        if (r < 0)
            goto error;
    }
    return out;
error:
    Py_DECREF(out);
    return NULL;
}

static PyObject *
record(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "record(op, inputs, attrs) takes 3 arguments");
        return NULL;
    }
    if (!configured())
        return NULL;
    return record_impl(args[0], args[1], args[2]);
}

/* ---- Tensor methods of elementwise ops ----

   A method (``Tensor.__mul__``, ``Tensor.tanh``) standing for an op's Python
   wrapper ``fn``: when its operands are Tensors (the exact class) of one dtype
   whose category is in ``categories`` -- the case where ``fn`` records
   ``op`` on them as they are, with ``attrs`` -- it records the op here;
   otherwise (scalars, arrays, promotion, keyword arguments) it calls ``fn``.
   Which case that is stays written in ops.py, next to ``fn``. */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *fn, *op, *attrs, *dict;
    Py_ssize_t arity;
    unsigned categories; /* bit c: dtype category c takes the shortcut */
} Method;

static PyTypeObject Method_T;

static PyObject *
method_call(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Method *m = (Method *)self;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (n == m->arity && kwnames == NULL && fallback != NULL) {
        PyObject *dt = NULL;
        /* anomaly detection's stacks leave out a fixed number of recording
           frames, the wrapper's included; eager mode realizes in Python anyway */
        int fast = config_flag(s_anomaly) == 0 && config_flag(s_eager) == 0;
        if (PyErr_Occurred())
            return NULL;
        for (Py_ssize_t i = 0; i < n && fast; i++) {
            PyObject *t = args[i];
            if (Py_TYPE(t) != Tensor_T || SLOT(t, t_dtype) == NULL)
                fast = 0;
            else if (i == 0)
                dt = SLOT(t, t_dtype);
            else
                fast = SLOT(t, t_dtype) == dt;
        }
        if (fast && Py_TYPE(dt) == DType_T && SLOT(dt, d_category) != NULL &&
            PyLong_CheckExact(SLOT(dt, d_category))) {
            long c = PyLong_AsLong(SLOT(dt, d_category));
            if (c >= 0 && c < 32 && (m->categories >> c) & 1) {
                PyObject *inputs = PyTuple_New(n);
                if (inputs == NULL)
                    return NULL;
                for (Py_ssize_t i = 0; i < n; i++) {
                    Py_INCREF(args[i]);
                    PyTuple_SET_ITEM(inputs, i, args[i]);
                }
                PyObject *out = record_impl(m->op, inputs, m->attrs);
                Py_DECREF(inputs);
                return out;
            }
        }
    }
    return PyObject_Vectorcall(m->fn, args, nargsf, kwnames);
}

static PyObject *
method_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

static int
method_traverse(PyObject *self, visitproc visit, void *arg)
{
    Method *m = (Method *)self;
    Py_VISIT(m->fn);
    Py_VISIT(m->op);
    Py_VISIT(m->attrs);
    Py_VISIT(m->dict);
    return 0;
}

static int
method_clear(PyObject *self)
{
    Method *m = (Method *)self;
    Py_CLEAR(m->fn);
    Py_CLEAR(m->op);
    Py_CLEAR(m->attrs);
    Py_CLEAR(m->dict);
    return 0;
}

static void
method_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    method_clear(self);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *
method_repr(PyObject *self)
{
    return PyUnicode_FromFormat("<native method of %R>", ((Method *)self)->fn);
}

static PyTypeObject Method_T = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pyflame_mlir._native.Method",
    .tp_basicsize = sizeof(Method),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_vectorcall_offset = offsetof(Method, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_descr_get = method_descr_get,
    .tp_traverse = method_traverse,
    .tp_clear = method_clear,
    .tp_dealloc = method_dealloc,
    .tp_repr = method_repr,
    .tp_getattro = PyObject_GenericGetAttr,
    .tp_setattro = PyObject_GenericSetAttr,
    .tp_dictoffset = offsetof(Method, dict),
    .tp_doc = "A Tensor method recording an elementwise op directly in its common case.",
};

static PyObject *
make_method(PyObject *self, PyObject *args)
{
    PyObject *fn, *op, *attrs, *cats;
    Py_ssize_t arity;
    if (!PyArg_ParseTuple(args, "OOOnO", &fn, &op, &attrs, &arity, &cats))
        return NULL;
    if (!PyCallable_Check(fn) || (arity != 1 && arity != 2)) {
        PyErr_SetString(PyExc_TypeError, "method(fn, op, attrs, arity 1 or 2, categories)");
        return NULL;
    }
    unsigned mask = 0;
    PyObject *seq = PySequence_Fast(cats, "categories: a sequence of ints");
    if (seq == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
        long c = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
        if (c == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return NULL;
        }
        if (c < 0 || c >= 32) {
            Py_DECREF(seq);
            PyErr_SetString(PyExc_ValueError, "a dtype category is in 0..31");
            return NULL;
        }
        mask |= 1u << c;
    }
    Py_DECREF(seq);
    Method *m = PyObject_GC_New(Method, &Method_T);
    if (m == NULL)
        return NULL;
    m->vectorcall = method_call;
    Py_INCREF(fn);
    m->fn = fn;
    Py_INCREF(op);
    m->op = op;
    Py_INCREF(attrs);
    m->attrs = attrs;
    m->dict = NULL;
    m->arity = arity;
    m->categories = mask;
    PyObject_GC_Track((PyObject *)m);
    return (PyObject *)m;
}

/* ---- collect ---- */

/* An open-addressing map from object pointers to indices. */
typedef struct {
    void **keys;
    Py_ssize_t *vals;
    size_t mask, used;
} PtrMap;

static int
map_init(PtrMap *m, size_t hint)
{
    size_t cap = 64;
    while (cap < 2 * hint)
        cap <<= 1;
    m->keys = PyMem_Calloc(cap, sizeof(void *));
    m->vals = PyMem_Malloc(cap * sizeof(Py_ssize_t));
    m->mask = cap - 1;
    m->used = 0;
    if (m->keys == NULL || m->vals == NULL) {
        PyMem_Free(m->keys);
        PyMem_Free(m->vals);
        m->keys = NULL;
        m->vals = NULL;
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void
map_free(PtrMap *m)
{
    PyMem_Free(m->keys);
    PyMem_Free(m->vals);
}

static inline size_t
ptr_hash(void *p)
{
    size_t h = (size_t)p >> 4;
    return h ^ (h >> 17) ^ (h * 0x9E3779B97F4A7C15ULL >> 32);
}

/* the slot of key k (its own or the empty one where it would go) */
static inline size_t
map_slot(PtrMap *m, void *k)
{
    size_t i = ptr_hash(k) & m->mask;
    while (m->keys[i] != NULL && m->keys[i] != k)
        i = (i + 1) & m->mask;
    return i;
}

static int
map_put(PtrMap *m, void *k, Py_ssize_t v)
{
    if (2 * (m->used + 1) > m->mask + 1) {
        PtrMap bigger;
        if (map_init(&bigger, m->mask + 1) < 0)
            return -1;
        for (size_t i = 0; i <= m->mask; i++)
            if (m->keys[i] != NULL) {
                size_t j = map_slot(&bigger, m->keys[i]);
                bigger.keys[j] = m->keys[i];
                bigger.vals[j] = m->vals[i];
                bigger.used++;
            }
        map_free(m);
        *m = bigger;
    }
    size_t i = map_slot(m, k);
    if (m->keys[i] == NULL) {
        m->keys[i] = k;
        m->used++;
    }
    m->vals[i] = v;
    return 0;
}

/* the value of k, or -1 (values stored are never negative) */
static inline Py_ssize_t
map_get(PtrMap *m, void *k)
{
    size_t i = map_slot(m, k);
    return m->keys[i] == NULL ? -1 : m->vals[i];
}

/* a growable array of strong references */
typedef struct {
    PyObject **items;
    Py_ssize_t n, cap;
} Stack;

static int
stack_push(Stack *s, PyObject *o)
{
    if (s->n == s->cap) {
        Py_ssize_t cap = s->cap ? 2 * s->cap : 256;
        PyObject **items = PyMem_Realloc(s->items, cap * sizeof(PyObject *));
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        s->items = items;
        s->cap = cap;
    }
    Py_INCREF(o);
    s->items[s->n++] = o;
    return 0;
}

static void
stack_clear(Stack *s)
{
    for (Py_ssize_t i = 0; i < s->n; i++)
        Py_XDECREF(s->items[i]);
    PyMem_Free(s->items);
    s->items = NULL;
    s->n = s->cap = 0;
}

typedef struct {
    long long seq;
    Py_ssize_t found; /* discovery order: equal seqs (constants) keep it (a stable sort) */
    PyObject *node;
    PyObject *read; /* as_read's list for a node reading older states, or NULL */
} Seen;

static int by_seq(const void *x, const void *y);

/* Sort the nodes found by creation order, stably (the order found between equal
   seqs: the constants' -1). The walk mostly finds nodes newest first: when the
   nodes other than constants come in strictly decreasing (or increasing) seq,
   the order is the constants as found, then those reversed (or as found). */
static int
sort_seen(Seen *seen, Py_ssize_t n)
{
    Py_ssize_t nc = 0, nr = 0;
    int down = 1, up = 1;
    long long last = 0;
    for (Py_ssize_t i = 0; i < n && (down || up); i++) {
        long long q = seen[i].seq;
        if (q == -1) {
            nc++;
            continue;
        }
        if (q < 0) /* (no other negative seq is made: the general sort) */
            down = up = 0;
        if (nr++) {
            down = down && q < last;
            up = up && q > last;
        }
        last = q;
    }
    if (!down && !up) {
        qsort(seen, n, sizeof(Seen), by_seq);
        return 0;
    }
    Seen *tmp = PyMem_Malloc((n ? n : 1) * sizeof(Seen));
    if (tmp == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t c = 0, r = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (seen[i].seq == -1)
            tmp[c++] = seen[i];
        else
            tmp[nc + (down ? nr - 1 - r++ : r++)] = seen[i];
    }
    memcpy(seen, tmp, n * sizeof(Seen));
    PyMem_Free(tmp);
    return 0;
}

static int
by_seq(const void *x, const void *y)
{
    const Seen *a = x, *b = y;
    if (a->seq != b->seq)
        return a->seq < b->seq ? -1 : 1;
    return a->found < b->found ? -1 : (a->found > b->found);
}

typedef struct {
    PtrMap nodes;  /* node -> index in seen (then: its position) */
    PtrMap leaves; /* tensor -> leaf number k (the reference is -1 - k) */
    Seen *seen;
    Py_ssize_t n_seen, cap_seen;
    Stack todo, pending;
    PyObject *leaf_list;
} Walk;

/* 1: the walk can read t's slots; 0: not (the Python walk takes over) */
static inline int
walkable(PyObject *t)
{
    return type_is_plain(Py_TYPE(t)) && SLOT(t, t_node) != NULL &&
           SLOT(t, t_index) != NULL && SLOT(t, t_value) != NULL && SLOT(t, t_view) != NULL &&
           SLOT(t, t_mut) != NULL && SLOT(t, t_ag) != NULL;
}

static inline int
node_ok(PyObject *m)
{
    return Py_TYPE(m) == OpNode_T && SLOT(m, n_inputs) != NULL &&
           PyTuple_CheckExact(SLOT(m, n_inputs)) && SLOT(m, n_c0) != NULL &&
           SLOT(m, n_c1) != NULL && SLOT(m, n_seq) != NULL && SLOT(m, n_sig_id) != NULL &&
           SLOT(m, n_keep) != NULL;
}

static int
push_all(Walk *w, PyObject *seq)
{
    /* seq: a tuple or a list; pushed in order (popped last first, as list.pop) */
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < n; i++)
        if (stack_push(&w->todo, items[i]) < 0)
            return -1;
    return 0;
}

/* OpNode.reads_older_state, inlined: -1 error, -2 unexpected */
static int
reads_older_state(PyObject *m)
{
    PyObject *c0 = SLOT(m, n_c0), *c1 = SLOT(m, n_c1);
    if (PyDict_CheckExact(c0)) {
        if (PyDict_GET_SIZE(c0))
            return 1;
        if (c1 == Py_None)
            return 0;
        if (!PyDict_CheckExact(c1))
            return -2;
        return PyDict_GET_SIZE(c1) != 0;
    }
    if (c0 == Py_None)
        return 0;
    if (!PyTuple_CheckExact(c0))
        return -2;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(c0); i++) {
        int r = PyObject_IsTrue(PyTuple_GET_ITEM(c0, i));
        if (r != 0)
            return r;
    }
    return 0;
}

/* core.inputs_as_read for a node that reads an older state (reads_older_state
   held): its inputs, each replaced by the state its cell holds (key 0) when
   the cell is not empty. NULL: an error, or *bad (the Python walk runs). */
static PyObject *
as_read(PyObject *m, int *bad)
{
    PyObject *ins = SLOT(m, n_inputs), *c0 = SLOT(m, n_c0), *c1 = SLOT(m, n_c1);
    PyObject *pair[2] = {c0, c1}, **cells;
    Py_ssize_t nc;
    if (PyDict_CheckExact(c0)) {
        cells = pair;
        nc = c1 == Py_None ? 1 : 2;
    } else if (PyTuple_CheckExact(c0)) {
        cells = &PyTuple_GET_ITEM(c0, 0);
        nc = PyTuple_GET_SIZE(c0);
    } else {
        nc = 0;
        cells = NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(ins);
    if (nc < n) /* (zip: the shorter) */
        n = nc;
    PyObject *out = PyList_New(n);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *c = cells[i], *x;
        if (!PyDict_CheckExact(c)) {
            Py_DECREF(out);
            *bad = 1;
            return NULL;
        }
        if (PyDict_GET_SIZE(c)) {
            x = PyDict_GetItemWithError(c, zero);
            if (x == NULL) {
                Py_DECREF(out);
                if (!PyErr_Occurred())
                    *bad = 1; /* (the Python walk raises KeyError) */
                return NULL;
            }
        } else {
            x = PyTuple_GET_ITEM(ins, i);
        }
        Py_INCREF(x);
        PyList_SET_ITEM(out, i, x);
    }
    return out;
}

/* The leaf reference of realized t (numbered on first use). NULL on error;
   *bad set when the Python walk must take over. */
static PyObject *
leaf_ref(Walk *w, PyObject *t, int *bad)
{
    PyObject *fz = SLOT(t, t_view);
    if (Py_TYPE(fz) == Frozen_T && SLOT(t, t_value) != Py_None) {
        PyObject *src = SLOT(fz, f_source);
        if (src == NULL || !type_is_plain(Py_TYPE(src)) || SLOT(src, t_value) == NULL) {
            *bad = 1;
            return NULL;
        }
        if (SLOT(src, t_value) == SLOT(t, t_value))
            t = src; /* a snapshot of a value that has not changed since: one input */
    }
    Py_ssize_t k = map_get(&w->leaves, t);
    if (k < 0) {
        k = PyList_GET_SIZE(w->leaf_list);
        if (map_put(&w->leaves, t, k) < 0 || PyList_Append(w->leaf_list, t) < 0)
            return NULL;
    }
    return PyLong_FromSsize_t(-1 - k);
}

/* the reference of t read by a node (or requested): NULL with *bad on fallback */
static PyObject *
value_ref(Walk *w, PyObject *t, Py_ssize_t numbered, int *bad)
{
    if (!walkable(t)) {
        *bad = 1;
        return NULL;
    }
    PyObject *m = SLOT(t, t_node);
    if (m != Py_None) {
        Py_ssize_t p = map_get(&w->nodes, m);
        /* a producer numbered later (or never reached) is where the Python walk raises */
        if (p < 0 || p >= numbered || !PyLong_CheckExact(SLOT(t, t_index))) {
            *bad = 1;
            return NULL;
        }
        Py_ssize_t idx = PyLong_AsSsize_t(SLOT(t, t_index));
        if (idx == -1 && PyErr_Occurred())
            return NULL;
        return PyLong_FromSsize_t((p << 16) | idx);
    }
    return leaf_ref(w, t, bad);
}

static int
seen_add(Walk *w, PyObject *m)
{
    if (w->n_seen == w->cap_seen) {
        Py_ssize_t cap = w->cap_seen ? 2 * w->cap_seen : 256;
        Seen *s = PyMem_Realloc(w->seen, cap * sizeof(Seen));
        if (s == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        w->seen = s;
        w->cap_seen = cap;
    }
    if (map_put(&w->nodes, m, w->n_seen) < 0)
        return -1;
    Seen *s = &w->seen[w->n_seen++];
    Py_INCREF(m);
    s->node = m;
    s->read = NULL;
    s->found = w->n_seen - 1;
    s->seq = 0;
    return 0;
}

static PyObject *
collect(PyObject *self, PyObject *tensors_arg)
{
    if (!configured())
        return NULL;
    PyObject *tensors = PySequence_Fast(tensors_arg, "collect: expects a sequence of tensors");
    if (tensors == NULL)
        return NULL;
    Walk w = {0};
    PyObject *result = NULL, *nodes = NULL, *outputs = NULL, *wiring = NULL,
             *kept = NULL, *pending = NULL;
    int bad = 0;
    w.leaf_list = PyList_New(0);
    if (w.leaf_list == NULL || map_init(&w.nodes, 256) < 0)
        goto done;
    if (map_init(&w.leaves, 16) < 0)
        goto done;
    if (push_all(&w, tensors) < 0)
        goto done;
    int mutated = !is_zero_item(mutations);
    while (w.todo.n) {
        PyObject *t = w.todo.items[--w.todo.n]; /* (a strong reference, released below) */
        if (!walkable(t)) {
            Py_DECREF(t);
            bad = 1;
            goto done;
        }
        PyObject *m = SLOT(t, t_node);
        if (m == Py_None || map_get(&w.nodes, m) >= 0) {
            Py_DECREF(t);
            continue;
        }
        if (!node_ok(m)) {
            Py_DECREF(t);
            bad = 1;
            goto done;
        }
        if (mutated) {
            PyObject *mu = SLOT(t, t_mut);
            if (mu != Py_None && mu != frozen_mut && stack_push(&w.pending, t) < 0) {
                Py_DECREF(t);
                goto done;
            }
        }
        int added = seen_add(&w, m); /* (holds m from here on) */
        Py_DECREF(t);
        if (added < 0)
            goto done;
        PyObject *ins = SLOT(m, n_inputs);
        int old = 0;
        if (mutated) {
            old = reads_older_state(m);
            if (old == -2) {
                bad = 1;
                goto done;
            }
            if (old < 0)
                goto done;
        }
        if (old) {
            PyObject *read = as_read(m, &bad);
            if (read == NULL)
                goto done;
            w.seen[w.n_seen - 1].read = read;
            if (!PyList_CheckExact(read) && !PyTuple_CheckExact(read)) {
                bad = 1;
                goto done;
            }
            if (push_all(&w, read) < 0)
                goto done;
            /* a parameter updated in place whose older state is read: its lazy
               update is computed with this graph (core._collect_numbered) */
            Py_ssize_t k = PyTuple_GET_SIZE(ins);
            for (Py_ssize_t i = 0; i < k; i++) {
                PyObject *x = PyTuple_GET_ITEM(ins, i);
                if (!walkable(x)) {
                    bad = 1;
                    goto done;
                }
                PyObject *ag = SLOT(x, t_ag);
                if (SLOT(x, t_node) == Py_None || SLOT(x, t_mut) == Py_None || ag == Py_None)
                    continue;
                if (Py_TYPE(ag) != Meta_T || SLOT(ag, m_requires_grad) == NULL) {
                    bad = 1;
                    goto done;
                }
                int r = PyObject_IsTrue(SLOT(ag, m_requires_grad));
                if (r < 0)
                    goto done;
                if (r && stack_push(&w.todo, x) < 0)
                    goto done;
            }
        } else if (push_all(&w, ins) < 0) {
            goto done;
        }
    }
    /* creation order */
    for (Py_ssize_t i = 0; i < w.n_seen; i++) {
        PyObject *s = SLOT(w.seen[i].node, n_seq);
        if (!PyLong_CheckExact(s)) {
            bad = 1;
            goto done;
        }
        int overflow;
        w.seen[i].seq = PyLong_AsLongLongAndOverflow(s, &overflow);
        if (overflow) {
            bad = 1;
            goto done;
        }
    }
    if (sort_seen(w.seen, w.n_seen) < 0)
        goto done;
    for (Py_ssize_t i = 0; i < w.n_seen; i++)
        map_put(&w.nodes, w.seen[i].node, i); /* (an existing key: never grows) */
    /* the wiring, per node: its signature id, its input count, a reference per input
       read (a tuple of known size: the inputs as read never change length below) */
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < w.n_seen; i++) {
        PyObject *ins = w.seen[i].read ? w.seen[i].read : SLOT(w.seen[i].node, n_inputs);
        total += 2 + PySequence_Fast_GET_SIZE(ins);
    }
    nodes = PyList_New(w.n_seen);
    kept = PyList_New(0);
    wiring = PyTuple_New(total);
    if (nodes == NULL || kept == NULL || wiring == NULL)
        goto done;
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < w.n_seen; i++) {
        PyObject *n = w.seen[i].node;
        Py_INCREF(n);
        PyList_SET_ITEM(nodes, i, n);
        PyObject *sid = SLOT(n, n_sig_id);
        if (sid == Py_None)
            sid = PyObject_GetAttr(n, s_sig_id);
        else
            Py_INCREF(sid);
        if (sid == NULL)
            goto done;
        PyTuple_SET_ITEM(wiring, at++, sid);
        PyObject *count = PyLong_FromSsize_t(PyTuple_GET_SIZE(SLOT(n, n_inputs)));
        if (count == NULL)
            goto done;
        PyTuple_SET_ITEM(wiring, at++, count);
        if (SLOT(n, n_keep) != Py_None) {
            PyObject *pair = Py_BuildValue("(nO)", i << 16, n);
            if (pair == NULL)
                goto done;
            int r = PyList_Append(kept, pair);
            Py_DECREF(pair);
            if (r < 0)
                goto done;
        }
        PyObject *ins = w.seen[i].read ? w.seen[i].read : SLOT(n, n_inputs);
        Py_ssize_t k = PySequence_Fast_GET_SIZE(ins);
        PyObject **items = PySequence_Fast_ITEMS(ins);
        if (at + k > total) { /* (changed under us: the Python walk) */
            bad = 1;
            goto done;
        }
        for (Py_ssize_t j = 0; j < k; j++) {
            PyObject *ref = value_ref(&w, items[j], i, &bad);
            if (ref == NULL)
                goto done;
            PyTuple_SET_ITEM(wiring, at++, ref);
        }
    }
    if (at != total) {
        bad = 1;
        goto done;
    }
    outputs = PyList_New(0);
    if (outputs == NULL)
        goto done;
    for (int part = 0; part < 2; part++) {
        Py_ssize_t k = part ? w.pending.n : PySequence_Fast_GET_SIZE(tensors);
        PyObject **items = part ? w.pending.items : PySequence_Fast_ITEMS(tensors);
        for (Py_ssize_t j = 0; j < k; j++) {
            PyObject *ref = value_ref(&w, items[j], w.n_seen, &bad);
            if (ref == NULL)
                goto done;
            int r = PyList_Append(outputs, ref);
            Py_DECREF(ref);
            if (r < 0)
                goto done;
        }
    }
    pending = PyList_New(w.pending.n);
    if (pending == NULL)
        goto done;
    for (Py_ssize_t j = 0; j < w.pending.n; j++) {
        Py_INCREF(w.pending.items[j]);
        PyList_SET_ITEM(pending, j, w.pending.items[j]);
    }
    PyObject *cargs[6] = {nodes, w.leaf_list, outputs, wiring, pending, kept};
    result = PyObject_Vectorcall(Subgraph_T, cargs, 6, NULL);
done:
    if (bad && result == NULL && !PyErr_Occurred()) {
        result = Py_None; /* the Python walk takes over (it raises where it must) */
        Py_INCREF(result);
    }
    for (Py_ssize_t i = 0; i < w.n_seen; i++) {
        Py_DECREF(w.seen[i].node);
        Py_XDECREF(w.seen[i].read);
    }
    PyMem_Free(w.seen);
    stack_clear(&w.todo);
    stack_clear(&w.pending);
    map_free(&w.nodes);
    map_free(&w.leaves);
    Py_XDECREF(w.leaf_list);
    Py_XDECREF(nodes);
    Py_XDECREF(outputs);
    Py_XDECREF(wiring);
    Py_XDECREF(kept);
    Py_XDECREF(pending);
    Py_DECREF(tensors);
    return result;
}

/* core.collect with trace=True: the walk goes through the histories realized
   tensors kept; ``args`` are the first leaves; a tensor for which
   ``boundary`` holds is a leaf (the walk stops there). Returns None where the
   Python walk must run. */
static PyObject *
collect_traced(PyObject *self, PyObject *const *fargs, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "collect_traced(tensors, args, boundary)");
        return NULL;
    }
    if (!configured())
        return NULL;
    PyObject *boundary = fargs[2] == Py_None ? NULL : fargs[2];
    PyObject *tensors = PySequence_Fast(fargs[0], "collect: expects a sequence of tensors");
    if (tensors == NULL)
        return NULL;
    PyObject *args = PySequence_Fast(fargs[1], "collect: args must be a sequence of tensors");
    if (args == NULL) {
        Py_DECREF(tensors);
        return NULL;
    }
    Walk w = {0};
    PtrMap cut = {0};
    PyObject *result = NULL, *nodes = NULL, *outputs = NULL, *wiring = NULL, *wlist = NULL;
    int bad = 0;
    w.leaf_list = PyList_New(0);
    if (w.leaf_list == NULL || map_init(&w.nodes, 256) < 0 || map_init(&w.leaves, 16) < 0 ||
        map_init(&cut, 16) < 0)
        goto done;
    Py_ssize_t na = PySequence_Fast_GET_SIZE(args);
    for (Py_ssize_t i = 0; i < na; i++) {
        PyObject *a = PySequence_Fast_GET_ITEM(args, i);
        /* (a tensor passed twice: its last number, as the Python dict's) */
        if (map_put(&w.leaves, a, i) < 0)
            goto done;
        if (map_put(&cut, a, 0) < 0 || PyList_Append(w.leaf_list, a) < 0)
            goto done;
    }
    if (push_all(&w, tensors) < 0)
        goto done;
    int mutated = !is_zero_item(mutations);
    while (w.todo.n) {
        PyObject *t = w.todo.items[--w.todo.n];
        if (!walkable(t) || SLOT(t, t_hist) == NULL) {
            Py_DECREF(t);
            bad = 1;
            goto done;
        }
        PyObject *m = SLOT(t, t_node);
        if (m == Py_None) {
            m = SLOT(t, t_hist);
            if (m == Py_None) {
                Py_DECREF(t);
                continue;
            }
        }
        if (map_get(&cut, t) >= 0) {
            Py_DECREF(t);
            continue;
        }
        if (boundary != NULL) {  /* before `seen`: a detached alias shares its node */
            PyObject *r = PyObject_CallOneArg(boundary, t);
            int stop = r == NULL ? -1 : PyObject_IsTrue(r);
            Py_XDECREF(r);
            if (stop < 0) {
                Py_DECREF(t);
                goto done;
            }
            if (stop) {
                int e = map_put(&cut, t, 0);
                /* (cut holds ids: t stays alive as an input of a node reached, or requested) */
                Py_DECREF(t);
                if (e < 0)
                    goto done;
                continue;
            }
        }
        Py_DECREF(t);
        if (map_get(&w.nodes, m) >= 0)
            continue;
        if (!node_ok(m)) {
            bad = 1;
            goto done;
        }
        if (seen_add(&w, m) < 0)
            goto done;
        PyObject *ins = SLOT(m, n_inputs);
        if (mutated) {
            int old = reads_older_state(m);
            if (old == -2) {
                bad = 1;
                goto done;
            }
            if (old < 0)
                goto done;
            if (old) {
                PyObject *read = as_read(m, &bad);
                if (read == NULL)
                    goto done;
                w.seen[w.n_seen - 1].read = read;
                if (!PyList_CheckExact(read) && !PyTuple_CheckExact(read)) {
                    bad = 1;
                    goto done;
                }
                ins = read;
            }
        }
        if (push_all(&w, ins) < 0)
            goto done;
    }
    for (Py_ssize_t i = 0; i < w.n_seen; i++) {
        PyObject *s = SLOT(w.seen[i].node, n_seq);
        int overflow;
        if (!PyLong_CheckExact(s)) {
            bad = 1;
            goto done;
        }
        w.seen[i].seq = PyLong_AsLongLongAndOverflow(s, &overflow);
        if (overflow) {
            bad = 1;
            goto done;
        }
    }
    if (sort_seen(w.seen, w.n_seen) < 0)
        goto done;
    for (Py_ssize_t i = 0; i < w.n_seen; i++)
        map_put(&w.nodes, w.seen[i].node, i);
    nodes = PyList_New(w.n_seen);
    wlist = PyList_New(0);
    outputs = PyList_New(0);
    if (nodes == NULL || wlist == NULL || outputs == NULL)
        goto done;
    for (Py_ssize_t i = 0; i <= w.n_seen; i++) {
        PyObject *ins, *into;
        if (i < w.n_seen) {
            PyObject *n = w.seen[i].node;
            Py_INCREF(n);
            PyList_SET_ITEM(nodes, i, n);
            PyObject *sid = SLOT(n, n_sig_id);
            if (sid == Py_None)
                sid = PyObject_GetAttr(n, s_sig_id);
            else
                Py_INCREF(sid);
            if (sid == NULL)
                goto done;
            int r = PyList_Append(wlist, sid);
            Py_DECREF(sid);
            if (r < 0)
                goto done;
            PyObject *count = PyLong_FromSsize_t(PyTuple_GET_SIZE(SLOT(n, n_inputs)));
            if (count == NULL)
                goto done;
            r = PyList_Append(wlist, count);
            Py_DECREF(count);
            if (r < 0)
                goto done;
            ins = w.seen[i].read ? w.seen[i].read : SLOT(n, n_inputs);
            into = wlist;
        } else {
            ins = tensors;
            into = outputs;
        }
        Py_ssize_t k = PySequence_Fast_GET_SIZE(ins);
        PyObject **items = PySequence_Fast_ITEMS(ins);
        for (Py_ssize_t j = 0; j < k; j++) {
            PyObject *t = items[j], *ref;
            if (!walkable(t) || SLOT(t, t_hist) == NULL) {
                bad = 1;
                goto done;
            }
            PyObject *m = SLOT(t, t_node);
            if (m == Py_None)
                m = SLOT(t, t_hist);
            if (m != Py_None && map_get(&cut, t) < 0) {
                Py_ssize_t p = map_get(&w.nodes, m);
                if (p < 0 || !PyLong_CheckExact(SLOT(t, t_index))) {
                    bad = 1; /* (the Python walk raises) */
                    goto done;
                }
                Py_ssize_t idx = PyLong_AsSsize_t(SLOT(t, t_index));
                if (idx == -1 && PyErr_Occurred())
                    goto done;
                ref = PyLong_FromSsize_t((p << 16) | idx);
            } else {
                ref = leaf_ref(&w, t, &bad);
            }
            if (ref == NULL)
                goto done;
            int r = PyList_Append(into, ref);
            Py_DECREF(ref);
            if (r < 0)
                goto done;
        }
    }
    wiring = PyList_AsTuple(wlist);
    if (wiring == NULL)
        goto done;
    PyObject *cargs[4] = {nodes, w.leaf_list, outputs, wiring};
    result = PyObject_Vectorcall(Subgraph_T, cargs, 4, NULL);
done:
    if (bad && result == NULL && !PyErr_Occurred()) {
        result = Py_None;
        Py_INCREF(result);
    }
    for (Py_ssize_t i = 0; i < w.n_seen; i++) {
        Py_DECREF(w.seen[i].node);
        Py_XDECREF(w.seen[i].read);
    }
    PyMem_Free(w.seen);
    stack_clear(&w.todo);
    map_free(&w.nodes);
    map_free(&w.leaves);
    map_free(&cut);
    Py_XDECREF(w.leaf_list);
    Py_XDECREF(nodes);
    Py_XDECREF(outputs);
    Py_XDECREF(wiring);
    Py_XDECREF(wlist);
    Py_DECREF(tensors);
    Py_DECREF(args);
    return result;
}

/* count_ref(wiring, ref): wiring.count(ref) for a tuple of ints, comparing C values */
static PyObject *
count_ref(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyTuple_CheckExact(args[0]) || !PyLong_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "count_ref(wiring: tuple, ref: int)");
        return NULL;
    }
    int overflow;
    long long ref = PyLong_AsLongLongAndOverflow(args[1], &overflow);
    if (ref == -1 && PyErr_Occurred())
        return NULL;
    PyObject *w = args[0];
    Py_ssize_t count = 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(w); i++) {
        PyObject *v = PyTuple_GET_ITEM(w, i);
        if (v == args[1]) {
            count++;
            continue;
        }
        if (!PyLong_CheckExact(v) || overflow) { /* (never in a wiring): Python's count */
            int eq = PyObject_RichCompareBool(v, args[1], Py_EQ);
            if (eq < 0)
                return NULL;
            count += eq;
            continue;
        }
        int o2;
        long long x = PyLong_AsLongLongAndOverflow(v, &o2);
        if (x == -1 && PyErr_Occurred())
            return NULL;
        count += !o2 && x == ref;
    }
    return PyLong_FromSsize_t(count);
}


/* ---- pf.compile's replay: its results handed over (jit._hand_over) ----

   hand_over(outs, results, out_list, given): what jit._hand_over's Python loop
   does, when no observer listens and no thread is in inference mode (the
   caller checks): per output (kind, ref, count, dt, dt.np, size), kind 0 a
   result of f (a new leaf tensor into out_list[ref]), 1 an in-place update of
   the tensor ref() (core.snapshot, core.rebind, the version moved on by
   count; the snapshot deleted when its array is one of ``given``, the arrays
   the program got to write into), 2 a new gradient (a new leaf into the
   tensor's AutogradMeta.grad). Every precondition is checked before anything
   is changed: a result of another dtype object or shape, a tensor with a
   view, a subclass overriding a slot, a gradient's tensor without autograd
   meta -- then it returns False and changes nothing (the Python loop runs). */

static PyTypeObject *Mutation_T;
static PyObject *deleted_view; /* core.DELETED */
static PyObject *s_dtype, *s_shape, *s_trace_depth;
static Py_ssize_t u_seq, u_prev, u_ref, u_version, u_start, u_untracked, m_grad;

static PyObject *
configure_replay(PyObject *self, PyObject *args)
{
    PyObject *mt, *deleted;
    if (!PyArg_ParseTuple(args, "OO", &mt, &deleted))
        return NULL;
    if (!configured())
        return NULL;
    if (!PyType_Check(mt)) {
        PyErr_SetString(PyExc_TypeError, "_native.configure_replay: Mutation must be a type");
        return NULL;
    }
    PyTypeObject *U = (PyTypeObject *)mt;
#define OFF(var, tp, name)                  \
    if ((var = slot_offset(tp, name)) < 0) \
        return NULL;
    OFF(u_seq, U, "seq") OFF(u_prev, U, "prev") OFF(u_ref, U, "ref")
    OFF(u_version, U, "version") OFF(u_start, U, "start") OFF(u_untracked, U, "untracked")
    OFF(m_grad, Meta_T, "grad")
#undef OFF
    if (s_dtype == NULL) {
        if ((s_dtype = PyUnicode_InternFromString("dtype")) == NULL ||
            (s_shape = PyUnicode_InternFromString("shape")) == NULL ||
            (s_trace_depth = PyUnicode_InternFromString("trace_depth")) == NULL)
            return NULL;
    }
    Py_INCREF(mt);
    Py_XSETREF(Mutation_T, U);
    Py_INCREF(deleted);
    Py_XSETREF(deleted_view, deleted);
    Py_RETURN_NONE;
}

static inline void
set_slot(PyObject *o, Py_ssize_t off, PyObject *v)
{
    /* (an initialized slot: its old value released) */
    PyObject *old = SLOT(o, off);
    Py_INCREF(v);
    SLOT(o, off) = v;
    Py_XDECREF(old);
}

/* Tensor._leaf(value, dt) with its Size known */
static PyObject *
new_leaf(PyObject *value, PyObject *size, PyObject *dt)
{
    PyObject *out = Tensor_T->tp_alloc(Tensor_T, 0);
    if (out == NULL)
        return NULL;
    init_slot(out, t_shape, size);
    init_slot(out, t_dtype, dt);
    init_slot(out, t_node, Py_None);
    init_slot(out, t_index, zero);
    init_slot(out, t_value, value);
    init_slot(out, t_ag, Py_None);
    init_slot(out, t_hist, Py_None);
    init_slot(out, t_mut, Py_None);
    init_slot(out, t_view, Py_None);
    init_slot(out, t_cell, Py_None);
    return out;
}

static PyObject *
next_seq(void)
{
    PyObject *seq = Py_TYPE(seq_counter)->tp_iternext(seq_counter);
    if (seq == NULL && !PyErr_Occurred())
        PyErr_SetString(PyExc_RuntimeError, "the creation-order counter stopped");
    return seq;
}

/* 1: the output can be handed over here; 0: not (the Python loop runs); -1: error */
static int
hand_over_ok(PyObject *e, PyObject *value, PyObject *out_list)
{
    if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) != 6)
        return 0;
    long kind = PyLong_AsLong(PyTuple_GET_ITEM(e, 0));
    if (kind == -1 && PyErr_Occurred())
        return -1;
    PyObject *d = PyObject_GetAttr(value, s_dtype);
    if (d == NULL) {
        PyErr_Clear();
        return 0;
    }
    int same = d == PyTuple_GET_ITEM(e, 4);
    Py_DECREF(d);
    if (!same)
        return 0;
    PyObject *shape = PyObject_GetAttr(value, s_shape);
    if (shape == NULL) {
        PyErr_Clear();
        return 0;
    }
    int eq = PyObject_RichCompareBool(shape, PyTuple_GET_ITEM(e, 5), Py_EQ);
    Py_DECREF(shape);
    if (eq != 1) {
        PyErr_Clear();
        return 0;
    }
    PyObject *ref = PyTuple_GET_ITEM(e, 1);
    if (kind == 0) {
        if (!PyLong_Check(ref))
            return 0;
        Py_ssize_t k = PyLong_AsSsize_t(ref);
        return k >= 0 && k < PyList_GET_SIZE(out_list) ? 1 : (PyErr_Clear(), 0);
    }
    if (!PyWeakref_CheckRef(ref))
        return 0;
    PyObject *t = PyWeakref_GetObject(ref); /* borrowed */
    if (t == Py_None)
        return 1; /* gone: nothing to write */
    if (!type_is_plain(Py_TYPE(t)) || SLOT(t, t_shape) == NULL)
        return 0;
    if (kind == 2) {
        PyObject *ag = SLOT(t, t_ag);
        return ag != NULL && Py_TYPE(ag) == Meta_T && SLOT(ag, m_grad) != NULL;
    }
    if (kind != 1 || SLOT(t, t_view) != Py_None)
        return 0;
    PyObject *m = SLOT(t, t_mut), *cell = SLOT(t, t_cell), *ag = SLOT(t, t_ag);
    if (m != Py_None && (Py_TYPE(m) != Mutation_T || SLOT(m, u_version) == NULL ||
                         !PyLong_CheckExact(SLOT(m, u_version))))
        return 0;
    if (cell != Py_None && !PyDict_CheckExact(cell))
        return 0;
    if (ag != Py_None && (Py_TYPE(ag) != Meta_T || !PyBool_Check(SLOT(ag, m_requires_grad))))
        return 0;
    return PyLong_CheckExact(PyTuple_GET_ITEM(e, 2));
}

/* core.snapshot(t), core.rebind(t, old, start, <value>), t's version = its
   version before + count; the snapshot deleted when its array was given */
static int
write_back(PyObject *t, PyObject *value, PyObject *count, PyObject *given, int tracing)
{
    PyObject *old = Tensor_T->tp_alloc(Tensor_T, 0);
    if (old == NULL)
        return -1;
    PyObject *m = SLOT(t, t_mut), *ag = SLOT(t, t_ag);
    init_slot(old, t_shape, SLOT(t, t_shape));
    init_slot(old, t_dtype, SLOT(t, t_dtype));
    init_slot(old, t_node, SLOT(t, t_node));
    init_slot(old, t_index, SLOT(t, t_index));
    init_slot(old, t_value, SLOT(t, t_value));
    init_slot(old, t_hist, SLOT(t, t_hist));
    init_slot(old, t_mut, m);
    init_slot(old, t_ag, ag != Py_None && SLOT(ag, m_requires_grad) == Py_True ? ag : Py_None);
    init_slot(old, t_view, Py_None);
    init_slot(old, t_cell, Py_None);
    PyObject *start = next_seq();
    if (start == NULL) {
        Py_DECREF(old);
        return -1;
    }
    PyObject *v = SLOT(old, t_value);
    for (Py_ssize_t i = 0; v != Py_None && i < PyTuple_GET_SIZE(given); i++)
        if (PyTuple_GET_ITEM(given, i) == v) { /* core.delete(old) */
            set_slot(old, t_node, Py_None);
            set_slot(old, t_value, Py_None);
            set_slot(old, t_hist, Py_None);
            set_slot(old, t_view, deleted_view);
            break;
        }
    PyObject *version = PyNumber_Add(m == Py_None ? zero : SLOT(m, u_version), count);
    if (version == NULL) {
        Py_DECREF(start);
        Py_DECREF(old);
        return -1;
    }
    /* rebind: older states kept weakly (their ``prev`` dropped), unless tracing */
    if (m != Py_None && !tracing) {
        PyObject *cur = m;
        Py_INCREF(cur);
        while (cur != Py_None && SLOT(cur, u_prev) != NULL && SLOT(cur, u_prev) != Py_None) {
            PyObject *prev = SLOT(cur, u_prev); /* owned: moved out of the slot */
            Py_INCREF(Py_None);
            SLOT(cur, u_prev) = Py_None;
            PyObject *next = SLOT(prev, t_mut) != NULL ? SLOT(prev, t_mut) : Py_None;
            Py_INCREF(next);
            Py_DECREF(prev);
            Py_DECREF(cur);
            cur = next;
        }
        Py_DECREF(cur);
    }
    PyObject *seq = next_seq();
    PyObject *ref = seq ? PyWeakref_NewRef(old, NULL) : NULL;
    PyObject *mut = ref ? Mutation_T->tp_alloc(Mutation_T, 0) : NULL;
    if (mut == NULL) {
        Py_XDECREF(ref);
        Py_XDECREF(seq);
        Py_DECREF(version);
        Py_DECREF(start);
        Py_DECREF(old);
        return -1;
    }
    init_slot(mut, u_untracked, Py_False);
    SLOT(mut, u_seq) = seq; /* (references handed over) */
    init_slot(mut, u_prev, old);
    SLOT(mut, u_ref) = ref;
    SLOT(mut, u_version) = version;
    SLOT(mut, u_start) = start;
    set_slot(t, t_mut, mut);
    Py_DECREF(mut);
    PyObject *cell = SLOT(t, t_cell);
    if (cell != Py_None) { /* the ops recorded since the last update read ``old`` now */
        if (PyDict_SetItem(cell, zero, old) < 0) {
            Py_DECREF(old);
            return -1;
        }
        set_slot(t, t_cell, Py_None);
    }
    Py_DECREF(old);
    set_slot(t, t_node, Py_None);
    set_slot(t, t_index, zero);
    set_slot(t, t_value, value);
    set_slot(t, t_hist, Py_None);
    PyObject *n = PyNumber_Add(PyList_GET_ITEM(mutations, 0), one);
    if (n == NULL)
        return -1;
    PyList_SetItem(mutations, 0, n);
    return 0;
}

static PyObject *
hand_over(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "hand_over(outs, results, out_list, given)");
        return NULL;
    }
    PyObject *outs = args[0], *results = args[1], *out_list = args[2], *given = args[3];
    if (Mutation_T == NULL || !PyTuple_Check(outs) || !PyList_Check(results) ||
        !PyList_Check(out_list) || !PyTuple_Check(given) ||
        PyList_GET_SIZE(results) != PyTuple_GET_SIZE(outs))
        Py_RETURN_FALSE;
    Py_ssize_t n = PyTuple_GET_SIZE(outs);
    for (Py_ssize_t i = 0; i < n; i++) {
        int ok = hand_over_ok(PyTuple_GET_ITEM(outs, i), PyList_GET_ITEM(results, i), out_list);
        if (ok < 0)
            return NULL;
        if (!ok)
            Py_RETURN_FALSE;
    }
    PyObject *depth = PyObject_GetAttr(grad_mode, s_trace_depth);
    if (depth == NULL)
        return NULL;
    int tracing = PyObject_IsTrue(depth);
    Py_DECREF(depth);
    if (tracing < 0)
        return NULL;
    Py_INCREF(results); /* (the values stay alive while the tensors take them) */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *e = PyTuple_GET_ITEM(outs, i), *value = PyList_GET_ITEM(results, i);
        long kind = PyLong_AsLong(PyTuple_GET_ITEM(e, 0));
        PyObject *ref = PyTuple_GET_ITEM(e, 1);
        if (kind == 0) {
            PyObject *r = new_leaf(value, PyTuple_GET_ITEM(e, 5), PyTuple_GET_ITEM(e, 3));
            if (r == NULL)
                goto fail;
            PyList_SetItem(out_list, PyLong_AsSsize_t(ref), r);
            continue;
        }
        PyObject *t = PyWeakref_GetObject(ref);
        if (t == Py_None)
            continue;
        Py_INCREF(t);
        int err;
        if (kind == 2) {
            PyObject *r = new_leaf(value, PyTuple_GET_ITEM(e, 5), PyTuple_GET_ITEM(e, 3));
            err = r == NULL ? -1 : 0;
            if (r != NULL) {
                set_slot(SLOT(t, t_ag), m_grad, r);
                Py_DECREF(r);
            }
        } else {
            err = write_back(t, value, PyTuple_GET_ITEM(e, 2), given, tracing);
        }
        Py_DECREF(t);
        if (err < 0)
            goto fail;
    }
    Py_DECREF(results);
    Py_RETURN_TRUE;
fail:
    Py_DECREF(results);
    return NULL;
}

static PyMethodDef methods[] = {
    {"configure", (PyCFunction)(void (*)(void))configure, METH_VARARGS | METH_KEYWORDS,
     "Give the module core.py's classes, singletons and fallbacks (once, at its import)."},
    {"record", (PyCFunction)(void (*)(void))record, METH_FASTCALL,
     "record(op, inputs, attrs): core.record (its memo-hit path here, the rest in Python)."},
    {"method", (PyCFunction)make_method, METH_VARARGS,
     "method(fn, op, attrs, arity, categories): a Tensor method for the elementwise "
     "wrapper fn (see _native.c)."},
    {"count_ref", (PyCFunction)(void (*)(void))count_ref, METH_FASTCALL,
     "count_ref(wiring, ref): wiring.count(ref) (a tuple of ints)."},
    {"collect", (PyCFunction)collect, METH_O,
     "collect(tensors): core._collect_numbered's Subgraph, or None where the Python "
     "walk must run."},
    {"configure_replay", (PyCFunction)configure_replay, METH_VARARGS,
     "configure_replay(Mutation, DELETED): what hand_over needs of core (jit.py calls it)."},
    {"hand_over", (PyCFunction)(void (*)(void))hand_over, METH_FASTCALL,
     "hand_over(outs, results, out_list, given): jit._hand_over's loop, or False where "
     "the Python loop must run (nothing changed then)."},
    {"collect_traced", (PyCFunction)(void (*)(void))collect_traced, METH_FASTCALL,
     "collect_traced(tensors, args, boundary): core.collect's traced walk, or None where "
     "the Python walk must run."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_native",
                                    "Native hot paths of pyflame_mlir.core (see _native.c).",
                                    -1, methods};

PyMODINIT_FUNC
PyInit__native(void)
{
#define INTERN(var, text)                                \
    if ((var = PyUnicode_InternFromString(text)) == NULL) \
        return NULL;
    INTERN(s_infer_on, "_INFER_ON") INTERN(s_eager, "eager") INTERN(s_anomaly, "anomaly")
    INTERN(s_ops_recorded, "ops_recorded") INTERN(s_memo, "memo")
    INTERN(s_memo_attrs, "memo_attrs") INTERN(s_enabled, "enabled") INTERN(s_graph, "graph")
    INTERN(s_sig_id, "sig_id") INTERN(s_autograd_used, "_AUTOGRAD_USED")
#undef INTERN
    if ((one = PyLong_FromLong(1)) == NULL || (zero = PyLong_FromLong(0)) == NULL)
        return NULL;
    if (PyType_Ready(&Method_T) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddIntConstant(m, "API", API_VERSION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
