"""The error type for user mistakes (unknown env or policy, bad flag, unreadable file).

Every ``edgegym`` subcommand prints such an error as one line on stderr and exits with status 2.
"""

from __future__ import annotations

__all__ = ["CLIError", "UserError"]


class UserError(Exception):
    """A user error: printed as one line, exit status 2 (never a traceback)."""


#: the name the CLI has always used
CLIError = UserError
