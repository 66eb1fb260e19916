"""One trace file -> Profile. Kept lean (trace + model only): the loading pool's processes import it."""

from __future__ import annotations

import logging
import traceback

from torch_tb_profiler.model import Profile
from torch_tb_profiler.model.build import build_profile
from torch_tb_profiler.trace.decode import TraceDecodeError, decode, read_bytes

log = logging.getLogger(__name__)


def load_profile(path: str, run: str = "", worker: str = "", span: str = "") -> Profile:
    """Parse one local trace file into a Profile (raises TraceDecodeError when unreadable)."""
    return build_profile(decode(read_bytes(path)), run=run, worker=worker, span=span, source=path)


def load_job(path: str) -> Profile | str:
    """Runs in a pool process: a Profile, or the reason the file could not be read."""
    try:
        return load_profile(path)
    except TraceDecodeError as e:
        return str(e)
    except MemoryError:
        return "out of memory while parsing this file"
    except Exception as e:  # a bug of ours must not take the server down; report it on the file
        log.debug("load failed: %s", traceback.format_exc())
        return f"{type(e).__name__}: {e}"


def warm_up() -> None:
    """Submitted to the pool at start: importing this module (numpy, pandas, msgspec) then
    overlaps TensorBoard's own start-up instead of delaying the first trace."""
