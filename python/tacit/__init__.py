"""tacit: one ISA description -> a bit-faithful oracle, a compiler backend, a timing model
(docs/python.md).

The compiled extension (`tacit._tacit`) provides load_isa, Isa, Program, evaluate and Error;
`tacit.taidl_to` runs TAIDL-TO test kernels (the published artifact's Python kernels) unchanged.
"""
from ._tacit import *  # noqa: F401,F403  (load_isa, Isa, Program, evaluate, Error)
from ._tacit import __doc__ as _doc, __version__  # noqa: F401
from .taidl_to import kernel_api, run_kernel  # noqa: F401
