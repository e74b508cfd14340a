"""What the web app answers when a request cannot be done: a stable code and a message that says why."""

from __future__ import annotations

from typing import Any

__all__ = ["GameError"]


class GameError(Exception):
    """A request that cannot be done; ``code`` is stable (the page translates it), ``message`` says why,
    and ``params`` holds the numbers the message names, for the page to say them in its own language."""

    def __init__(self, code: str, message: str, status: int = 400, params: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.params = params

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "error", "code": self.code, "message": self.message}
        if self.params:
            out["params"] = self.params
        return out
