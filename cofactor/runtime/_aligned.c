/* A NumPy data allocator (NEP 49) whose blocks start on 64-byte boundaries.
 *
 * XLA's CPU client reads an argument in place only when its data is 64-byte aligned; NumPy's own
 * allocator gives 16.  With this one installed, the arrays a program makes can be passed to a
 * compiled function without a copy (runtime/host.py).  Each block is a malloc'd base with the
 * aligned data inside it; the word just before the data holds the base, so free and realloc find
 * it.  calloc stays calloc (large zeroed arrays stay lazily zeroed pages).  Like NumPy's own
 * allocator, it keeps a few freed small blocks of each size for the next allocation of that size
 * (NumPy calls its allocator with the GIL held, and frees with the size it allocated). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NPY_NO_DEPRECATED_API NPY_1_22_API_VERSION
#define NPY_TARGET_VERSION NPY_1_22_API_VERSION
#include <numpy/arrayobject.h>

#define ALIGNMENT 64
#define SLACK (ALIGNMENT - 1 + sizeof(void *))

static char *aligned_in(void *base) {
    return (char *)(((uintptr_t)base + SLACK) & ~(uintptr_t)(ALIGNMENT - 1));
}

static void *place(void *base) {
    if (base == NULL) return NULL;
    char *data = aligned_in(base);
    ((void **)data)[-1] = base;
    return data;
}

static void *base_of(void *data) { return ((void **)data)[-1]; }

#define SMALL 1024  /* blocks of fewer bytes are kept when freed, CACHED of each size */
#define CACHED 7
static void *kept[SMALL][CACHED];
static int kept_count[SMALL];

static void *aligned_malloc(void *ctx, size_t size) {
    (void)ctx;
    if (size < SMALL && kept_count[size] > 0) return kept[size][--kept_count[size]];
    return size > SIZE_MAX - SLACK ? NULL : place(malloc(size + SLACK));
}

static void *aligned_calloc(void *ctx, size_t count, size_t each) {
    if (each != 0 && count > (SIZE_MAX - SLACK) / each) return NULL;
    size_t size = count * each;
    if (size < SMALL && kept_count[size] > 0) {
        void *data = aligned_malloc(ctx, size);
        return memset(data, 0, size);
    }
    return place(calloc(1, size + SLACK));
}

static void *aligned_realloc(void *ctx, void *data, size_t size) {
    if (data == NULL) return aligned_malloc(ctx, size);
    if (size > SIZE_MAX - SLACK) return NULL;
    void *base = base_of(data);
    size_t offset = (char *)data - (char *)base;
    void *moved = realloc(base, size + SLACK);
    if (moved == NULL) return NULL;
    char *placed = aligned_in(moved);  /* the base word is written after the data moved: it may lie in it */
    if ((size_t)(placed - (char *)moved) != offset)
        memmove(placed, (char *)moved + offset, size);  /* offset + size <= size + SLACK */
    ((void **)placed)[-1] = moved;
    return placed;
}

static void aligned_free(void *ctx, void *data, size_t size) {
    (void)ctx;
    if (data == NULL) return;
    if (size < SMALL && kept_count[size] < CACHED) {
        kept[size][kept_count[size]++] = data;
        return;
    }
    free(base_of(data));
}

static PyDataMem_Handler handler = {
    "cofactor_aligned_64", 1,
    {NULL, aligned_malloc, aligned_calloc, aligned_realloc, aligned_free},
};

static PyObject *install(PyObject *self, PyObject *unused) {
    PyObject *capsule = PyObject_GetAttrString(self, "HANDLER");
    if (capsule == NULL) return NULL;
    PyObject *old = PyDataMem_SetHandler(capsule);
    Py_DECREF(capsule);
    return old;
}

static PyMethodDef methods[] = {
    {"install", install, METH_NOARGS,
     "Make the aligned allocator NumPy's for the current context; returns the one it replaces."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_aligned", NULL, -1, methods};

PyMODINIT_FUNC PyInit__aligned(void) {
    import_array();
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    PyObject *capsule = PyCapsule_New(&handler, "mem_handler", NULL);
    if (capsule == NULL || PyModule_AddObject(m, "HANDLER", capsule) < 0
            || PyModule_AddIntConstant(m, "ALIGNMENT", ALIGNMENT) < 0) {
        Py_XDECREF(capsule);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
