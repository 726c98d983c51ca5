"""llama.cpp's OpenAI-compatible server for the live tier: ``python tests/live/llama_server.py
--model ... --port ...`` (llama-cpp-python's own ``python -m llama_cpp.server`` arguments).

Why not that module alone: llama.cpp offers a CPU reporting AMX an extra buffer type whose
matrix multiply (``ggml_backend_amx_mul_mat``) crashes the process with SIGSEGV on the first
reply. The model is loaded here with the extra buffer types turned off (``use_extra_bufts``),
before the server builds its ``Llama``; the plain CPU kernels answer the same, a little slower.
The caller runs it with one thread and ``OMP_WAIT_POLICY=PASSIVE``: on two shared cores a
second thread, or threads spinning while they wait, make each reply several times slower.
"""

from __future__ import annotations

import importlib
import runpy
from typing import Any


def _without_extra_buffer_types() -> None:
    # Imported by name: the live extra may be absent where the tree is type-checked.
    llama_module: Any = importlib.import_module("llama_cpp.llama")
    llama_cpp: Any = importlib.import_module("llama_cpp.llama_cpp")

    default = llama_cpp.llama_model_default_params

    def params() -> Any:
        p = default()
        p.use_extra_bufts = False
        return p

    # llama.py calls it through the module it imported: both names are replaced.
    llama_cpp.llama_model_default_params = params
    llama_module.llama_cpp.llama_model_default_params = params


if __name__ == "__main__":
    _without_extra_buffer_types()
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
