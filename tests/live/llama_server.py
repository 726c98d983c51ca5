"""llama.cpp's OpenAI-compatible server for the live tier: ``python tests/live/llama_server.py
--model ... --port ... [--requantize OUT]`` (llama-cpp-python's own ``python -m
llama_cpp.server`` arguments, and one of ours).

Why not that module alone: llama.cpp offers a CPU reporting AMX an extra buffer type whose
matrix multiply (``ggml_backend_amx_mul_mat``) crashes the process with SIGSEGV on the first
reply. The model is loaded here with the extra buffer types turned off (``use_extra_bufts``),
before the server builds its ``Llama``; the plain CPU kernels answer the same, a little slower.
The caller runs it with one thread and ``OMP_WAIT_POLICY=PASSIVE``: on two shared cores a
second thread, or threads spinning while they wait, make each reply several times slower.

``--requantize OUT``: the model (SmolLM2's Q4_1 file) is first written to OUT as Q8_0, which
takes a second. llama.cpp's batched CPU kernels cover Q8_0 and not Q4_1, so the server reads
a prompt about twice as fast; a prompt's reading is most of a reply's time, since every
request differs from the one before within its system message (the fence's nonce).
"""

from __future__ import annotations

import importlib
import runpy
import sys
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


def _requantized(argv: list[str]) -> list[str]:
    """``argv`` with ``--requantize OUT`` taken out and ``--model`` pointing at OUT, the
    model written there as Q8_0."""
    if "--requantize" not in argv:
        return argv
    at = argv.index("--requantize")
    out = argv[at + 1]
    argv = argv[:at] + argv[at + 2:]
    model = argv.index("--model") + 1
    llama_cpp: Any = importlib.import_module("llama_cpp.llama_cpp")
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = llama_cpp.LLAMA_FTYPE_MOSTLY_Q8_0
    params.allow_requantize = True  # from Q4_1: its weights as they are, in Q8_0's blocks
    params.nthread = 1
    if llama_cpp.llama_model_quantize(argv[model].encode(), out.encode(), params) != 0:
        raise SystemExit(f"llama_server.py: cannot requantize {argv[model]} to {out}")
    argv[model] = out
    return argv


if __name__ == "__main__":
    _without_extra_buffer_types()
    sys.argv = _requantized(sys.argv)
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
