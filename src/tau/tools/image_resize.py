"""Resizing an image for the model as pi 1.6 does (``utils/image-resize-core.ts``), with Pillow.

The rules are pi's: an image within 2000x2000 pixels whose base64 form is under 4.5 MB is sent as it
is; otherwise it is scaled to fit 2000x2000 (Lanczos), encoded as PNG and as JPEG (quality 80), and
the smaller is taken if it fits; then JPEG at quality 85, 70, 55, 40; then 75% of the size each
round, down to 1x1. EXIF orientation is applied first. The pixels differ from pi's (Photon's
resampler and encoders are not Pillow's); the sizes, formats and the note to the model are the same.
Pillow is imported only when an image is looked at.
"""

from __future__ import annotations

import base64
import io
from decimal import ROUND_HALF_UP, Decimal

from tau.common.dataclass import dataclass

__all__ = ["MAX_INLINE_BASE64_BYTES", "Resized", "dimension_note", "resize_image"]

MAX_INLINE_BASE64_BYTES = int(4.5 * 1024 * 1024)  # headroom below Anthropic's 5 MB
MAX_WIDTH = MAX_HEIGHT = 2000
JPEG_QUALITY = 80


@dataclass(frozen=True)
class Resized:
    """An image as it goes to the model: base64 ``data`` and its size before and after."""

    data: str
    mime_type: str
    original_width: int
    original_height: int
    width: int
    height: int
    was_resized: bool


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def resize_image(
    data: bytes,
    mime_type: str,
    *,
    max_width: int = MAX_WIDTH,
    max_height: int = MAX_HEIGHT,
    max_bytes: int = MAX_INLINE_BASE64_BYTES,
    jpeg_quality: int = JPEG_QUALITY,
) -> Resized | None:
    """``data`` within the limits, or ``None`` when it cannot be decoded or made small enough."""
    try:
        from PIL import Image, ImageOps
    except ImportError:  # pragma: no cover - Pillow is a dependency; pi without Photon does the same
        return None
    try:
        with Image.open(io.BytesIO(data)) as opened:
            opened.load()
            image = ImageOps.exif_transpose(opened) or opened
            width, height = image.size
            encoded_size = (len(data) + 2) // 3 * 4
            if width <= max_width and height <= max_height and encoded_size < max_bytes:
                return Resized(_b64(data), mime_type, width, height, width, height, False)
            return _shrink(image, width, height, max_width, max_height, max_bytes, jpeg_quality)
    except Exception:  # any undecodable or hostile image "cannot be resized", as in pi
        return None


def _shrink(
    image: object, width: int, height: int, max_width: int, max_height: int, max_bytes: int, quality: int
) -> Resized | None:
    from PIL import Image

    assert isinstance(image, Image.Image)
    target_w, target_h = width, height
    if target_w > max_width:
        target_h = _js_round(target_h * max_width / target_w)
        target_w = max_width
    if target_h > max_height:
        target_w = _js_round(target_w * max_height / target_h)
        target_h = max_height
    qualities = list(dict.fromkeys([quality, 85, 70, 55, 40]))
    source = image if image.mode in ("RGB", "RGBA", "L", "LA") else image.convert("RGBA")
    while True:
        resized = source.resize((max(1, target_w), max(1, target_h)), Image.Resampling.LANCZOS)
        png = ("image/png", _encode(resized, "PNG"))
        jpegs = [("image/jpeg", _encode(resized, "JPEG", q)) for q in qualities]
        first, *lower = jpegs
        preferred = [first, png] if len(first[1]) < len(png[1]) else [png, first]
        for mime, encoded in [*preferred, *lower]:
            if len(encoded) < max_bytes:
                return Resized(encoded, mime, width, height, target_w, target_h, True)
        if target_w == 1 and target_h == 1:
            return None
        next_w = 1 if target_w == 1 else max(1, int(target_w * 0.75))
        next_h = 1 if target_h == 1 else max(1, int(target_h * 0.75))
        if (next_w, next_h) == (target_w, target_h):
            return None
        target_w, target_h = next_w, next_h


def _encode(image: object, kind: str, quality: int | None = None) -> str:
    from PIL import Image

    assert isinstance(image, Image.Image)
    buffer = io.BytesIO()
    if kind == "JPEG":
        image.convert("RGB").save(buffer, "JPEG", quality=quality)
    else:
        image.save(buffer, "PNG")
    return _b64(buffer.getvalue())


def _js_round(value: float) -> int:
    """``Math.round``: halves go up."""
    return int(Decimal(value).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def dimension_note(resized: Resized) -> str | None:
    """pi's note for a resized image, so the model can map coordinates back; ``None`` when not resized."""
    if not resized.was_resized:
        return None
    scale = Decimal(resized.original_width / resized.width).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return (
        f"[Image: original {resized.original_width}x{resized.original_height}, displayed at "
        f"{resized.width}x{resized.height}. Multiply coordinates by {scale} to map to original image.]"
    )
