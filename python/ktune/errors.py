"""The exceptions of ktune: every failure the library reports is a ktune.Error carrying its
message unchanged (the text `ktune` prints after "error: ") and its code."""

from __future__ import annotations

import re
from typing import Optional

__all__ = [
    "Error",
    "SpecError",
    "InvalidArgumentError",
    "NotFoundError",
    "UnavailableError",
    "NoValidChoiceError",
]


class Error(Exception):
    """A failure reported by ktune. `code` is the library's error code ("invalid_argument",
    "parse", "not_found", "unavailable", "no_valid_choice", ...), `message` its message."""

    def __init__(self, message: str, code: str = "internal"):
        super().__init__(message)
        self.message = message
        self.code = code


class InvalidArgumentError(Error, ValueError):
    """An argument or an input is wrong (an option out of range, sizes a kernel cannot take)."""


class NotFoundError(Error, LookupError):
    """A file, record or symbol is missing."""


class UnavailableError(Error):
    """What was asked for is not on this machine or not in this build (no GPU, no CUDA support)."""


class NoValidChoiceError(Error):
    """No candidate compiled, ran and verified."""


_POSITION = re.compile(r"^(?P<file>.+?):(?P<line>\d+)(?::(?P<col>\d+))?: ")


class SpecError(Error, ValueError):
    """A spec that does not read: `file`, `line` and `col` (1-based; None where the message
    gives no position) are those of the message's "file:line:col: " prefix."""

    def __init__(self, message: str, code: str = "invalid_argument"):
        super().__init__(message, code)
        match = _POSITION.match(message)
        self.file: Optional[str] = match.group("file") if match else None
        self.line: Optional[int] = int(match.group("line")) if match else None
        self.col: Optional[int] = (
            int(match.group("col")) if match and match.group("col") else None
        )


_BY_CODE = {
    "invalid_argument": InvalidArgumentError,
    "not_found": NotFoundError,
    "unavailable": UnavailableError,
    "no_valid_choice": NoValidChoiceError,
}


def _make(code: str, message: str, spec: bool = False) -> Error:
    """The exception for a library Error (called by the extension)."""
    if spec:
        return SpecError(message, code)
    return _BY_CODE.get(code, Error)(message, code)
