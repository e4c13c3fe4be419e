"""Image files for ``read``: content sniffing (pi's ``utils/mime.ts``) and inline preparation.

pi resizes images over 2000x2000 pixels or 4.5 MB of base64 with Photon (WASM). tau has no image
library, so it sends an image unchanged when its base64 form is under the 4.5 MB limit (whatever its
dimensions) and omits it with pi's own message otherwise, as pi does when Photon is unavailable.
BMP files need a conversion to PNG that tau cannot do either: they get pi's conversion message.
"""

from __future__ import annotations

import base64
import struct
from dataclasses import dataclass, field

__all__ = ["MAX_INLINE_BASE64_BYTES", "PreparedImage", "detect_image_mime_type", "prepare_image"]

SNIFF_BYTES = 4100
MAX_INLINE_BASE64_BYTES = int(4.5 * 1024 * 1024)
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

CONVERSION_FAILED = "[Image omitted: could not be converted to a supported inline image format.]"
RESIZE_FAILED = "[Image omitted: could not be resized below the inline image size limit.]"


def detect_image_mime_type(head: bytes) -> str | None:
    """The MIME type of a supported image from its first bytes, or ``None`` (animated PNG: ``None``)."""
    if head.startswith(b"\xff\xd8\xff"):
        return None if len(head) > 3 and head[3] == 0xF7 else "image/jpeg"
    if head.startswith(_PNG_SIGNATURE):
        return "image/png" if _is_png(head) and not _is_animated_png(head) else None
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(b"BM") and _is_bmp(head):
        return "image/bmp"
    return None


def _is_png(head: bytes) -> bool:
    return len(head) >= 16 and struct.unpack(">I", head[8:12])[0] == 13 and head[12:16] == b"IHDR"


def _is_animated_png(head: bytes) -> bool:
    offset = len(_PNG_SIGNATURE)
    while offset + 8 <= len(head):
        length = struct.unpack(">I", head[offset : offset + 4])[0]
        kind = head[offset + 4 : offset + 8]
        if kind == b"acTL":
            return True
        if kind == b"IDAT":
            return False
        following = offset + 8 + length + 4
        if following <= offset or following > len(head):
            return False
        offset = following
    return False


def _is_bmp(head: bytes) -> bool:
    if len(head) < 26:
        return False
    file_size, _, pixel_offset, dib_size = struct.unpack("<IIII", head[2:18])
    if file_size != 0 and file_size < 26:
        return False
    if pixel_offset < 14 + dib_size:
        return False
    if file_size != 0 and pixel_offset >= file_size:
        return False
    if dib_size == 12:
        planes, bits = struct.unpack("<HH", head[22:26])
    elif 40 <= dib_size <= 124:
        if len(head) < 30:
            return False
        planes, bits = struct.unpack("<HH", head[26:30])
    else:
        return False
    return planes == 1 and bits in (1, 4, 8, 16, 24, 32)


@dataclass
class PreparedImage:
    """An image ready to inline (``data`` is base64), or the reason it was left out (``omitted``)."""

    mime_type: str
    data: str = ""
    hints: list[str] = field(default_factory=list)
    omitted: str | None = None


def prepare_image(data: bytes, mime_type: str, *, auto_resize: bool = True) -> PreparedImage:
    """Make ``data`` an inline image block, as far as tau can without an image library."""
    if mime_type not in ("image/png", "image/jpeg", "image/gif", "image/webp"):
        return PreparedImage(mime_type, omitted=CONVERSION_FAILED)
    encoded = base64.b64encode(data).decode("ascii")
    if auto_resize and len(encoded) >= MAX_INLINE_BASE64_BYTES:
        return PreparedImage(mime_type, omitted=RESIZE_FAILED)
    return PreparedImage(mime_type, data=encoded)
