"""Logging what clients do wrong, in a way no client can use to flood the log.

A client's protocol errors (bad messages, messages over the rate, a text frame that is not UTF-8) are
counted on its connection and logged in one line when the connection ends, with the client's address
and never with a traceback; and these lines, all clients together, are themselves rate-limited: past
``per_second`` (with a burst), lines are only counted, and the next line logged says how many were not.
"""

from __future__ import annotations

import logging
from typing import Any

from .limits import RateLimiter

__all__ = ["ClientLog", "client_log"]


class ClientLog:
    """Warnings about clients, at most ``per_second`` lines a second after a burst of ``burst``."""

    def __init__(self, logger: logging.Logger, per_second: float = 5.0, burst: int = 20) -> None:
        self.logger = logger
        self._rate = RateLimiter(per_second, burst, max_keys=1)
        self.dropped = 0

    def warn(self, message: str, *args: Any) -> bool:
        """Log one line (``message % args``) unless over the rate; True if it was logged."""
        if not self._rate.allow(""):
            self.dropped += 1
            return False
        if self.dropped:
            message += " (%d more such lines were not logged)"
            args = (*args, self.dropped)
            self.dropped = 0
        self.logger.warning(message, *args)
        return True


# One for the whole process: the server's connection guard and the app share the budget.
client_log = ClientLog(logging.getLogger("koikoi.web.clients"))
