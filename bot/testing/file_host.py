"""The fake's file host: Slack's `files.slack.com`, served from the fake's own origin.

A file's bytes come only with `Authorization: Bearer <bot token>`; anything else gets 403 and an
HTML sign-in page, as Slack answers a browser without a session (the answer apps mistake for the
file when the token or the `files:read` scope is missing). Every request is recorded, with whether
it carried an Authorization header at all, so a test can check the token went nowhere else.
"""

from __future__ import annotations

from aiohttp import web

from bot.testing.messages import MessageStore
from bot.testing.records import Download
from bot.testing.signal import Signal

SIGN_IN_PAGE = (
    "<!DOCTYPE html><html><head><title>Slack</title></head><body>"
    "<h1>Sign in to your workspace</h1><form action=\"/signin\"></form></body></html>"
)
CHUNK = 64 * 1024


class FileHost:
    """aiohttp routes serving the files of `store.uploads` at their `url_private(_download)`."""

    def __init__(self, store: MessageStore, signal: Signal, *, refused_tokens: dict[str, str]) -> None:
        self.store = store
        self.signal = signal
        self.refused_tokens = refused_tokens  # the Web API's: a revoked token downloads nothing either
        self.downloads: list[Download] = []

    def routes(self) -> list[web.RouteDef]:
        """`/files-pri/<team>-<id>/download/<name>` and `/files-pri/<team>-<id>/<name>`."""
        return [web.get("/files-pri/{ref}/{rest:.*}", self._serve)]

    def _record(self, request: web.Request, status: int, authorized: bool) -> None:
        self.downloads.append(Download(len(self.downloads), request.path, "Authorization" in request.headers,
                                       authorized, status))
        self.signal.notify()

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        auth = request.headers.get("Authorization", "")
        token = auth.removeprefix("Bearer ").strip() if auth.startswith("Bearer ") else ""
        authorized = token == self.store.workspace.bot_token and token not in self.refused_tokens
        team, _, file_id = request.match_info["ref"].partition("-")
        upload = self.store.uploads.get(file_id)
        if not authorized:
            self._record(request, 403, False)
            return web.Response(status=403, text=SIGN_IN_PAGE, content_type="text/html")
        if upload is None or upload.content is None or team != upload.team:
            self._record(request, 404, True)
            return web.Response(status=404, text="file_not_found")
        self._record(request, 200, True)
        if upload.declared_size is None or upload.declared_size == len(upload.content):
            return web.Response(body=upload.content, content_type=upload.mimetype.split(";")[0])
        # A file whose stated size is not its real one comes without Content-Length (chunked), so
        # only counting the stream finds out.
        response = web.StreamResponse(headers={"Content-Type": upload.mimetype.split(";")[0]})
        response.enable_chunked_encoding()
        await response.prepare(request)
        for start in range(0, len(upload.content), CHUNK):
            try:
                await response.write(upload.content[start:start + CHUNK])
            except (ConnectionResetError, RuntimeError):  # the client stopped reading: as it should
                return response
        await response.write_eof()
        return response
