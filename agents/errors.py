"""The error type for user mistakes, and the one place that decides how an error reaches the user.

Every ``edgegym`` subcommand runs under :func:`report_errors` (called by :func:`edgegym.agents.cli.main`):

* an *expected* error prints as one line on stderr (``edgegym: error: ...``) and exits with status 2, never
  a traceback. Expected: :class:`UserError` (raised anywhere), and a ``ValueError`` (config and trace
  validation: the message names the file and the key or row), ``OSError`` (a file that cannot be read or
  written) or ``ImportError`` (a missing optional dependency) raised by edgegym's own code;
* anything else is a bug: the traceback is printed with a bug-report hint, exit status 1. The same
  exceptions raised deep inside a third-party library (numpy, pandas, gymnasium) count as bugs too: edgegym
  validates its inputs before calling them. ``EDGEGYM_DEBUG=1`` shows the traceback of every error;
* a closed stdout (``edgegym list --json | head``) ends quietly with status 141, as a shell tool does.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

import edgegym

__all__ = ["BUG_HINT", "CLIError", "UserError", "expected_message", "report_errors"]


class UserError(Exception):
    """A user error: printed as one line, exit status 2 (never a traceback)."""


#: the name the CLI has always used
CLIError = UserError

#: printed after the traceback of an unexpected error
BUG_HINT = (
    "edgegym: internal error: this looks like a bug in edgegym, not a mistake in the command. Please report it "
    "with the command line and the traceback above (EDGEGYM_DEBUG=1 shows tracebacks for every error)."
)

#: exceptions that are user errors when edgegym's own code raised them
_EXPECTED = (ValueError, OSError, ImportError)
#: the folders of edgegym's own code: the ``edgegym`` package and ``edgegym.agents`` (which lies outside it in a
#: source checkout, where it is the top-level ``agents/`` folder)
_OWN_DIRS = (Path(__file__).resolve().parent, Path(edgegym.__file__).resolve().parent)


def _raised_by_own_code(exc: BaseException) -> bool:
    """Whether the innermost Python frame of ``exc``'s traceback is a module of edgegym's own packages."""
    tb = exc.__traceback__
    if tb is None:
        return True
    while tb.tb_next is not None:
        tb = tb.tb_next
    frame_file = Path(tb.tb_frame.f_code.co_filename).resolve()
    return any(frame_file.is_relative_to(d) for d in _OWN_DIRS)


def expected_message(exc: BaseException) -> str | None:
    """The one-line message of an expected (user) error, or ``None`` when ``exc`` is a bug."""
    if isinstance(exc, UserError):
        msg = str(exc)
    elif isinstance(exc, _EXPECTED) and _raised_by_own_code(exc):
        if isinstance(exc, ImportError) and exc.name:
            msg = f"{exc} (an optional dependency is missing: pip install {exc.name})"
        elif isinstance(exc, OSError) and exc.filename is not None and str(exc.filename) not in str(exc):
            msg = f"{exc.filename}: {exc.strerror or exc}"
        else:
            msg = str(exc)
    else:
        return None
    return " ".join(msg.split()) or type(exc).__name__


def _stdout_closed() -> int:
    """The reader of stdout went away: silence the final flush and exit like a shell tool killed by SIGPIPE."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # pragma: no cover - stdout without a file descriptor
        pass
    return 141


def report_errors(func: Callable[[], int]) -> int:
    """Run ``func`` (a subcommand) and turn what it raises into an exit status (see the module docstring)."""
    try:
        return func()
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return _stdout_closed()
    except Exception as exc:  # the one place that decides: one line, or a traceback with a bug-report hint
        msg = expected_message(exc)
        debug = os.environ.get("EDGEGYM_DEBUG", "") not in ("", "0")
        if msg is not None and not debug:
            print(f"edgegym: error: {msg}", file=sys.stderr)
            return 2
        traceback.print_exception(exc, file=sys.stderr)
        if msg is None:
            print(BUG_HINT, file=sys.stderr)
            return 1
        return 2
