"""The one compiled part of cofactor: an aligned NumPy allocator (cofactor/runtime/_aligned.c).
Optional: without a C compiler cofactor installs without it and copies NumPy arguments instead."""
import numpy
from setuptools import Extension, setup

setup(ext_modules=[Extension("cofactor.runtime._aligned", ["cofactor/runtime/_aligned.c"],
                             include_dirs=[numpy.get_include()], optional=True)])
