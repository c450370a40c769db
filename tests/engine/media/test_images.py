"""``load_image`` and ``Image``: the type by the bytes, the API's limits, refusals that name the file."""

from __future__ import annotations

import base64
import io
import os
import struct
import sys
import threading
import warnings
import zlib

import pytest
from PIL import Image as Pil

from engine import FlowerError, Image, ImageRefused, load_image
from engine.lang import speaking
from engine._media.fitting import LONG_EDGE, MAX_BASE64, MAX_PIXELS, sniff
from engine._media.image import prompt_content


def _save(path, picture, kind, **options):
    picture.save(path, kind, **options)
    return path


def _opened(image: Image) -> Pil.Image:
    return Pil.open(io.BytesIO(image.data))


@pytest.fixture
def inbox(tmp_path):
    folder = tmp_path / ".flower" / "inbox"
    folder.mkdir(parents=True)
    return folder


def test_a_small_png_keeps_its_bytes(inbox):
    path = _save(inbox / "1-shot.png", Pil.new("RGB", (40, 30), "teal"), "PNG")
    image = load_image(path, name=".flower/inbox/1-shot.png")
    assert image == Image("image/png", path.read_bytes(), ".flower/inbox/1-shot.png")
    assert "data" not in repr(image)  # megabytes of bytes never land in a log line


@pytest.mark.parametrize("kind, media, options", [
    ("JPEG", "image/jpeg", {}), ("GIF", "image/gif", {}), ("WEBP", "image/webp", {}), ("PNG", "image/png", {}),
])
def test_the_type_comes_from_the_bytes_not_the_name(inbox, kind, media, options):
    path = _save(inbox / "2-named-wrong.txt", Pil.new("RGB", (20, 20), "orange"), kind, **options)
    image = load_image(path, name="2-named-wrong.txt")
    assert image.media_type == media and image.data == path.read_bytes()
    assert sniff(path.read_bytes()) == media


def test_a_very_wide_png_is_resized_to_the_long_edge(inbox):
    path = _save(inbox / "3-wide.png", Pil.new("RGB", (9000, 100), "red"), "PNG")
    image = load_image(path, name=".flower/inbox/3-wide.png")
    picture = _opened(image)
    assert image.media_type == "image/png" and picture.format == "PNG"
    assert max(picture.size) <= LONG_EDGE and picture.size == (1568, 17)


def test_a_photo_over_5_mb_becomes_a_jpeg_within_the_limits(inbox):
    noise = Pil.frombytes("RGB", (2400, 2400), os.urandom(2400 * 2400 * 3))
    path = _save(inbox / "4-photo.jpg", noise, "JPEG", quality=98)
    assert len(base64.b64encode(path.read_bytes())) > MAX_BASE64  # over, as the API measures it
    image = load_image(path, name="4-photo.jpg")
    assert image.media_type == "image/jpeg" and max(_opened(image).size) == LONG_EDGE
    assert len(base64.b64encode(image.data)) <= MAX_BASE64


def test_a_png_too_big_as_png_after_resizing_is_sent_as_jpeg(inbox):
    noise = Pil.frombytes("RGB", (8200, 300), os.urandom(8200 * 300 * 3))  # over 8000 px: resized
    image = load_image(_save(inbox / "5-noise.png", noise, "PNG"), name="5-noise.png")
    assert image.media_type == "image/png" and _opened(image).size == (1568, 57)
    big = Pil.frombytes("RGB", (3000, 3000), os.urandom(3000 * 3000 * 3))  # 27 MB: no PNG of it fits
    image = load_image(_save(inbox / "6-noise.png", big, "PNG"), name="6-noise.png")
    assert image.media_type == "image/jpeg" and _opened(image).size == (1568, 1568)


def test_an_animated_gif_keeps_its_first_frame_when_resized(inbox):
    frames = [Pil.new("RGB", (8100, 50), color) for color in ("red", "blue", "green")]
    path = inbox / "7-anim.gif"
    frames[0].save(path, "GIF", save_all=True, append_images=frames[1:], duration=100, loop=0)
    image = load_image(path, name="7-anim.gif")
    picture = _opened(image)
    assert image.media_type == "image/png" and getattr(picture, "n_frames", 1) == 1
    assert picture.convert("RGB").getpixel((10, 5)) == (255, 0, 0)  # the first frame's red


def test_a_transparent_png_stays_transparent(inbox):
    picture = Pil.new("RGBA", (8001, 10), (0, 0, 0, 0))
    image = load_image(_save(inbox / "8-clear.png", picture, "PNG"), name="8-clear.png")
    assert _opened(image).mode == "RGBA" and _opened(image).getpixel((0, 0))[3] == 0


def test_what_is_no_image_is_refused_naming_the_file(inbox):
    (inbox / "9-notes.png").write_text("just some text")
    with pytest.raises(ImageRefused, match=r"\.flower/inbox/9-notes\.png is not a PNG, JPEG, GIF or WebP image") as got:
        load_image(inbox / "9-notes.png", name=".flower/inbox/9-notes.png")
    assert isinstance(got.value, FlowerError) and isinstance(got.value, ValueError)
    assert "Share the picture in one of those formats" in str(got.value)


def test_a_truncated_image_is_refused_before_it_reaches_the_api(inbox):
    whole = _save(inbox / "full.png", Pil.new("RGB", (300, 300), "white"), "PNG").read_bytes()
    (inbox / "10-cut.png").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(ImageRefused, match=r"10-cut\.png starts like a PNG image but cannot be decoded"):
        load_image(inbox / "10-cut.png", name="10-cut.png")


def test_a_missing_file_or_a_link_the_run_planted_is_refused(inbox, tmp_path):
    with pytest.raises(ImageRefused, match=r"The image 11-gone\.png cannot be read"):
        load_image(inbox / "11-gone.png", name="11-gone.png")
    secret = _save(tmp_path / "secret.png", Pil.new("RGB", (5, 5), "black"), "PNG")
    (inbox / "12-link.png").symlink_to(secret)
    with pytest.raises(ImageRefused, match=r"12-link\.png cannot be read .*symlink"):
        load_image(inbox / "12-link.png", name="12-link.png", anchor=tmp_path)


def test_too_many_pixels_are_refused_not_decoded(inbox):
    path = _save(inbox / "13-huge.png", Pil.new("1", (20000, 20000)), "PNG")  # 400 megapixels, a small file
    with pytest.raises(ImageRefused, match=r"13-huge\.png has too many pixels"):
        load_image(path, name="13-huge.png")


def test_a_hand_made_image_with_a_wrong_type_is_refused():
    with pytest.raises(ImageRefused, match=r"media_type must be one of image/png"):
        Image("image/bmp", b"BM", "x.bmp")  # type: ignore[arg-type]


def test_the_prompt_content_names_each_image_before_it():
    shot = Image("image/png", b"\x89PNG fake", ".flower/inbox/1-shot.png")
    assert prompt_content("hello") == "hello"  # no images: the content is the prompt, as before
    with speaking("en"):
        content = prompt_content("look", [shot, shot])
    assert content[0] == {"type": "text", "text": "look"}
    assert content[1] == {"type": "text", "text": "Image: .flower/inbox/1-shot.png"}
    assert content[2] == {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                      "data": base64.b64encode(b"\x89PNG fake").decode()}}
    assert len(content) == 5
    with speaking("zh"):
        assert prompt_content("", [shot])[0] == {"type": "text", "text": "图片:.flower/inbox/1-shot.png"}


def _png_header(width: int, height: int) -> bytes:
    """A PNG that declares ``width`` x ``height`` gray pixels and holds almost none: decoding it
    would allocate the whole image first, then fail as truncated; its header alone says the size."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + chunk(b"IEND", b""))


def test_a_bomb_is_refused_from_its_header_before_any_pixel_is_decoded(inbox):
    # 100 million pixels: past Pillow's warning (89 M), short of its error (179 M), where the old
    # guard needed a warnings filter
    (inbox / "14-bomb.png").write_bytes(_png_header(10_000, 10_000))
    with pytest.raises(ImageRefused, match=r"14-bomb\.png has too many pixels to resize safely \(10000x10000 px"):
        load_image(inbox / "14-bomb.png", name="14-bomb.png")
    assert MAX_PIXELS < 10_000 * 10_000 and Pil.MAX_IMAGE_PIXELS == 1024 * 1024 * 1024 // 4 // 3  # untouched


def test_images_decoded_at_once_in_threads_keep_the_guard(inbox):
    """Issue 37, finding 8: the guard was a warnings filter, which is process-wide. Bombs refused in
    some threads while others decode ordinary images, many times over, with the interpreter switching
    threads as often as it can: every bomb is refused for its pixels, every picture loads, and the
    process's warning filters are never touched, not even for a moment (a thread watches them)."""
    (inbox / "bomb.png").write_bytes(_png_header(10_000, 10_000))
    picture = Pil.linear_gradient("L").resize((1200, 1200)).convert("RGB")
    _save(inbox / "fine.png", picture, "PNG")
    before, snapshot, pixels = warnings.filters, list(warnings.filters), Pil.MAX_IMAGE_PIXELS
    start, done = threading.Barrier(7), threading.Event()
    results: dict[str, list[str]] = {"bomb": [], "fine": []}
    touched: list[object] = []

    def load(kind: str, times: int) -> None:
        start.wait()
        for _ in range(times):
            try:
                image = load_image(inbox / f"{kind}.png", name=f"{kind}.png")
                results[kind].append(image.media_type)
            except ImageRefused as exc:
                results[kind].append(str(exc))

    def watch() -> None:
        start.wait()
        while not done.is_set():
            if warnings.filters is not before or warnings.filters != snapshot:
                touched.append(warnings.filters)
                return

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # hand the interpreter from thread to thread as often as it can
    try:
        workers = ([threading.Thread(target=load, args=("bomb", 150)) for _ in range(3)]
                   + [threading.Thread(target=load, args=("fine", 12)) for _ in range(3)])
        watcher = threading.Thread(target=watch)
        for thread in (*workers, watcher):
            thread.start()
        for thread in workers:
            thread.join(timeout=600)
        done.set()
        watcher.join(timeout=600)
    finally:
        sys.setswitchinterval(switch)
    assert not any(t.is_alive() for t in (*workers, watcher))
    assert len(results["bomb"]) == 450 and len(results["fine"]) == 36
    lost = [r for r in results["bomb"] if "has too many pixels" not in r]
    assert not lost, f"{len(lost)} bomb(s) got past the guard: {lost[0]}"
    assert set(results["fine"]) == {"image/png"}
    assert not touched, "the process's warning filters were changed while images were decoded"
    assert warnings.filters is before and warnings.filters == snapshot and Pil.MAX_IMAGE_PIXELS == pixels
