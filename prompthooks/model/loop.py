"""One background event loop for every model call of the process.

litellm caches its async HTTP clients; a client made on one event loop cannot be used on
another, so all prompt hooks (each running in its own engine thread) share this loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
SETTLE = 1.0  # seconds a caller waits past its deadline for a call on the loop to give up
_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()


def _get_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="prompthooks-model",
                             daemon=True).start()
        return _loop


def shared() -> asyncio.AbstractEventLoop:
    """The shared loop (started if it is not running)."""
    return _get_loop()


def run(coro: Coroutine[Any, Any, T], timeout: float) -> T:
    """Run ``coro`` on the shared loop and wait at most ``timeout`` seconds for it."""
    future = asyncio.run_coroutine_threadsafe(coro, _get_loop())
    try:
        return future.result(max(timeout, 0.0))
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise
