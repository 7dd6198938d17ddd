"""The compiled parts of cofactor, both optional (without a C compiler cofactor installs without
them): an aligned NumPy allocator (cofactor/runtime/_aligned.c; without it NumPy arguments are
copied) and the BLAS call for XLA:CPU's large matrix products (cofactor/xla/_blas.c; without it
XLA's own dot runs them)."""
import numpy
from setuptools import Extension, setup

setup(ext_modules=[Extension("cofactor.runtime._aligned", ["cofactor/runtime/_aligned.c"],
                             include_dirs=[numpy.get_include()], optional=True),
                 Extension("cofactor.xla._blas", ["cofactor/xla/_blas.c"], optional=True)])
