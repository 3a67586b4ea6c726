"""Output files written whole or not at all.

A report, a baseline or a policy fragment that a run writes with ``-o`` is written to a
temporary file in the same directory and moved over the target with :func:`os.replace` only
when the run finishes: a run stopped part-way (Ctrl-C, a closed pipe, a failure) leaves the
previous file, or none, never half of a new one.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import BinaryIO

from urlvet.errors import InputError

PART_SUFFIX = ".part"
"""The suffix of the temporary file beside the target while it is written."""


def _new_file_mode() -> int:
    # What open() would give a new file: 0o666 less the umask (read by setting it back).
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


@contextmanager
def atomic_output(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """A binary file that becomes ``path`` when the block ends without an exception.

    The bytes go to a temporary file beside ``path`` (so that :func:`os.replace` is atomic)
    that is moved over it at the end, keeping the mode of the file it replaces (that of a new
    file otherwise); on any exception, KeyboardInterrupt included, the temporary file is
    removed and ``path`` is left as it was. A target that exists and is not a regular file
    (``/dev/stdout``, a FIFO) is written in place: replacing it would replace the device.
    Raises :class:`~urlvet.errors.InputError` when the file cannot be created or moved.
    """
    target = os.fspath(path)
    try:
        st: os.stat_result | None = os.stat(target)
    except OSError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        try:
            direct = open(target, "wb")  # noqa: SIM115 (closed below, after the yield)
        except OSError as exc:
            raise InputError(f"{target}: cannot write: {exc.strerror or exc}") from None
        with direct:
            yield direct
        return
    folder = os.path.dirname(os.path.abspath(target))
    try:
        fd, temp = tempfile.mkstemp(
            prefix=f".{os.path.basename(target)}.", suffix=PART_SUFFIX, dir=folder
        )
    except OSError as exc:
        raise InputError(f"{target}: cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as out:
            yield out
    except BaseException:
        with suppress(OSError):
            os.unlink(temp)
        raise
    try:
        os.chmod(temp, stat.S_IMODE(st.st_mode) if st is not None else _new_file_mode())
        os.replace(temp, target)
    except OSError as exc:
        with suppress(OSError):
            os.unlink(temp)
        raise InputError(f"{target}: cannot write: {exc.strerror or exc}") from None


def write_atomically(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` as the whole content of ``path`` through :func:`atomic_output`."""
    with atomic_output(path) as out:
        out.write(data)
