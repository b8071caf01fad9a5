"""The exit statuses of the `postcompact` command, named once for it and its subcommands
(`cli`, `eval`: evaluation.commands, `transcript`: transcript.commands)."""

from __future__ import annotations

__all__ = ["EXIT_ALREADY_RUNNING", "EXIT_FAILURE", "EXIT_NOT_RUNNING", "EXIT_USAGE"]

EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_NOT_RUNNING = 3
EXIT_ALREADY_RUNNING = 4
