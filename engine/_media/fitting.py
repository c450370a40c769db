"""``load_image``: read an image a person shared and fit it to the Messages API's limits.

The API refuses an image over 8000 px on a side or whose base64 is over 5 MB (it measures the
encoded string, not the file), and a refused image fails the whole request: kept in a session,
it would fail every resume after it too. So an image is checked here, before it is sent once:
one within the limits goes as it is (the same bytes), one over them is resized to at most 1568 px
on its long edge (the size the API scales images down to anyway) and re-encoded, and one that
cannot be read, decoded or brought under the limits is refused with ``ImageRefused``.

The file is read beneath ``anchor`` following no symlink (``engine._beneath``): the inbox is in a
folder the agent can write, and a link it planted there must not make the host read elsewhere.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine._beneath import read_bytes
from engine._media.image import Image, ImageRefused, MediaType

if TYPE_CHECKING:
    from PIL.Image import Image as Picture

__all__ = ["LONG_EDGE", "MAX_BASE64", "MAX_PIXELS", "MAX_SIDE", "READ_LIMIT", "load_image", "sniff"]

MAX_SIDE = 8000  # px, either side
MAX_PIXELS = 1024 * 1024 * 1024 // 4 // 3  # ~89 million: Pillow's own bomb threshold; one takes ~350 MB decoded
MAX_BASE64 = 5 * 1024 * 1024  # characters of base64, as the API measures an image
LONG_EDGE = 1568  # px: what an oversized image is resized to
READ_LIMIT = 64 * 1024 * 1024  # bytes: a bigger file is refused unread (a screenshot is far smaller)
_QUALITIES = (85, 70, 50)  # JPEG qualities tried in turn until the image fits

_MAGIC: tuple[tuple[bytes, int, MediaType], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "image/png"),
    (b"\xff\xd8\xff", 0, "image/jpeg"),
    (b"GIF87a", 0, "image/gif"),
    (b"GIF89a", 0, "image/gif"),
)


def sniff(data: bytes) -> MediaType | None:
    """The media type ``data`` starts like (PNG, JPEG, GIF, WebP), or None: the bytes decide,
    never the file's name (a screenshot saved as ``.jpg`` is often a PNG)."""
    for magic, at, media in _MAGIC:
        if data[at:at + len(magic)] == magic:
            return media
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _encoded(size: int) -> int:
    return 4 * ((size + 2) // 3)  # base64's length for ``size`` bytes


def _fits(width: int, height: int, size: int) -> bool:
    return max(width, height) <= MAX_SIDE and _encoded(size) <= MAX_BASE64


def load_image(path: str | Path, *, name: str, anchor: str | Path | None = None) -> Image:
    """The image in ``path``, named ``name`` (its path relative to the workspace), within the
    Messages API's limits.

    The type is recognised by the file's first bytes (PNG, JPEG, GIF, WebP). An image within
    8000 px a side and 5 MB of base64 keeps its bytes; a bigger one is resized to at most 1568 px
    on its long edge (turned upright by its EXIF orientation) and re-encoded: JPEG for a JPEG
    source (a photo), PNG otherwise, or JPEG when the PNG is still too big; an animated GIF keeps
    its first frame. ``anchor`` is a folder the host made that holds ``path`` (default: its folder):
    the file is read beneath it without following a symlink, and must be a regular file.
    Raises ``ImageRefused`` naming the file, what was wrong and what to do.
    """
    path = Path(path)
    try:
        data = read_bytes(anchor if anchor is not None else path.parent, path, limit=READ_LIMIT + 1)
    except OSError as exc:
        raise ImageRefused(f"The image {name} cannot be read ({exc}). Share it again as a plain file.") from exc
    if len(data) > READ_LIMIT:
        raise ImageRefused(f"The image {name} is over {READ_LIMIT // 2**20} MB, too big to read. "
                           "Share a smaller copy (a screenshot of the part that matters).")
    media = sniff(data)
    if media is None:
        raise ImageRefused(
            f"{name} is not a PNG, JPEG, GIF or WebP image (it starts with {data[:8].hex(' ') or 'nothing'}). "
            "Share the picture in one of those formats; any other file can stay in the inbox for the agent to read.")
    return _fitted(data, media, name)


def _fitted(data: bytes, media: MediaType, name: str) -> Image:
    from PIL import Image as Pil, ImageOps  # loaded on the first image, not with the engine

    # The pixel count is checked here, per call, from the header (Pillow's open reads no pixels):
    # a warnings filter or Image.MAX_IMAGE_PIXELS would be process-wide, and two images decoded
    # at once in threads would drop each other's guard.
    try:
        with Pil.open(io.BytesIO(data)) as picture:
            width, height = picture.size
            if width * height > MAX_PIXELS:
                raise _too_many(name, f"{width}x{height} px")
            picture.load()  # the whole first frame: a truncated file must fail here, not at the API
            if _fits(width, height, len(data)):
                return Image(media, data, name)
            frame = _shrunk(ImageOps.exif_transpose(picture))  # a phone's photo, upright
    except ImageRefused:
        raise
    except (Pil.DecompressionBombError, Pil.DecompressionBombWarning) as exc:  # Pillow's own check in open()
        raise _too_many(name, str(exc)) from exc
    except (OSError, ValueError, SyntaxError) as exc:  # Pillow's "cannot identify", "truncated"
        raise ImageRefused(
            f"{name} starts like a {media.split('/')[1].upper()} image but cannot be decoded ({exc}). "
            "Export or capture it again and share the new file.") from exc
    for kind, out in _encodings(frame, photo=media == "image/jpeg"):
        if _fits(*frame.size, len(out)):
            return Image(kind, out, name)
    raise ImageRefused(
        f"The image {name} is still over the Messages API's 5 MB limit after resizing it from "
        f"{width}x{height} to {frame.size[0]}x{frame.size[1]} px. Share a smaller or simpler image.")


def _too_many(name: str, why: str) -> ImageRefused:
    return ImageRefused(f"The image {name} has too many pixels to resize safely ({why}; at most {MAX_PIXELS:,}). "
                        f"Crop or shrink it to at most {MAX_SIDE} px on each side and share it again.")


def _shrunk(picture: Picture) -> Picture:
    """The current (first) frame scaled to at most ``LONG_EDGE`` on its long edge, in RGB or RGBA."""
    from PIL import Image as Pil

    alpha = picture.mode in ("RGBA", "LA", "PA") or "transparency" in picture.info
    frame = picture.convert("RGBA" if alpha else "RGB")
    scale = min(1.0, LONG_EDGE / max(frame.size))
    size = (max(1, round(frame.size[0] * scale)), max(1, round(frame.size[1] * scale)))
    return frame.resize(size, Pil.Resampling.LANCZOS) if size != frame.size else frame


def _encodings(frame: Picture, *, photo: bool) -> Iterator[tuple[MediaType, bytes]]:
    """(media type, bytes) to try in turn: PNG first for a drawing or screenshot (sharp text),
    JPEG first for a photo, and JPEG at falling qualities when PNG is still too big."""
    if not photo:
        yield "image/png", _save(frame, "PNG")
    flat = frame
    if frame.mode == "RGBA":  # JPEG has no alpha: transparent parts become white
        from PIL import Image as Pil

        flat = Pil.new("RGB", frame.size, "white")
        flat.paste(frame, mask=frame.getchannel("A"))
    for quality in _QUALITIES:
        yield "image/jpeg", _save(flat, "JPEG", quality=quality)


def _save(frame: Picture, kind: str, **options: Any) -> bytes:
    out = io.BytesIO()
    frame.save(out, kind, **options)
    return out.getvalue()
