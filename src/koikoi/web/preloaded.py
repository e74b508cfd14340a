"""What the pages are made of, read once when the server starts: the templates and the static files.

A running server used to read them from the package's folder at each request (Jinja's file loader,
Starlette's StaticFiles). ``pip install`` in the same environment (``pip install -e .`` while
``koikoi serve`` runs, say) removes or moves those files, and every page then failed with a 500
(TemplateNotFound) until a restart (issue 33). Read at the start, they stay what the server started
with; a reinstall takes effect at the next start, as the Python code does.
"""

from __future__ import annotations

import hashlib
import mimetypes
from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import formatdate
from pathlib import Path

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse, Response
from starlette.types import Receive, Scope, Send

__all__ = ["StaticFile", "PreloadedStatic", "read_templates", "read_static"]

MAX_FILES = 500  # a package folder, not a data folder: far more than the pages have
MAX_BYTES = 16 << 20  # all the files together


def _files(folder: Path, pattern: str) -> list[Path]:
    found = sorted(p for p in folder.glob(pattern) if p.is_file())
    if len(found) > MAX_FILES:
        raise ValueError(f"{folder}: {len(found)} files, more than the {MAX_FILES} a server reads at its start")
    return found


def read_templates(folder: Path) -> dict[str, str]:
    """Every template of ``folder`` (its ``*.html``, by name), for a :class:`jinja2.DictLoader`."""
    return {p.name: p.read_text(encoding="utf-8") for p in _files(folder, "*.html")}


@dataclass(frozen=True, slots=True)
class StaticFile:
    body: bytes
    media_type: str
    etag: str
    last_modified: str


def read_static(folder: Path) -> dict[str, StaticFile]:
    """Every file of ``folder`` (not its subfolders), by name, with what its responses say of it."""
    out: dict[str, StaticFile] = {}
    total = 0
    for p in _files(folder, "*"):
        body = p.read_bytes()
        total += len(body)
        if total > MAX_BYTES:
            raise ValueError(f"{folder}: more than {MAX_BYTES >> 20} MiB of static files")
        media_type = mimetypes.guess_type(p.name)[0] or "application/octet-stream"
        etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
        out[p.name] = StaticFile(body, media_type, etag, formatdate(p.stat().st_mtime, usegmt=True))
    return out


def _route_path(scope: Scope) -> str:
    """The path under the mount: Starlette's Mount puts the mount's own path at the end of "root_path"
    and leaves the whole path in "path"."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path


class PreloadedStatic:
    """An ASGI app serving :func:`read_static`'s files from memory, as StaticFiles served them from the
    disk: GET and HEAD, an ETag and Last-Modified, 304 to a matching If-None-Match, 404 for anything
    else (a subfolder, ``..``, a name it does not have: the names are looked up, never joined to a path)."""

    def __init__(self, files: Mapping[str, StaticFile]) -> None:
        self.files = dict(files)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert scope["type"] == "http"
        if scope["method"] not in ("GET", "HEAD"):
            response: Response = PlainTextResponse(
                "Method Not Allowed", status_code=405, headers={"allow": "GET, HEAD"}
            )
            await response(scope, receive, send)
            return
        found = self.files.get(_route_path(scope).lstrip("/"))
        if found is None:
            # Starlette's HTTPException, so that the app's 404 handler answers it as it answers any other.
            from starlette.exceptions import HTTPException

            raise HTTPException(status_code=404)
        headers = {"etag": found.etag, "last-modified": found.last_modified}
        asked = Headers(scope=scope).get("if-none-match")
        if asked is not None and found.etag in (tag.strip() for tag in asked.split(",")):
            response = Response(status_code=304, headers=headers)
        else:
            response = Response(found.body, media_type=found.media_type, headers=headers)
        await response(scope, receive, send)
