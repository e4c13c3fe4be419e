"""Image files for ``read``, ``@image`` arguments and prompt images: content sniffing (pi's
``utils/mime.ts``) and inline preparation (pi's ``utils/image-process.ts``).

Images over 2000x2000 pixels or 4.5 MB of base64 are resized as pi resizes them
(:mod:`tau.tools.image_resize`); one that cannot be decoded or made small enough is left out with
pi's message. Uncompressed BMP files are converted to PNG here (RLE-compressed ones get pi's
conversion message).
"""

from __future__ import annotations

import base64
import struct
import zlib
from dataclasses import field

from tau.common.dataclass import dataclass
from tau.tools.image_resize import MAX_INLINE_BASE64_BYTES, dimension_note, resize_image

__all__ = ["MAX_INLINE_BASE64_BYTES", "PreparedImage", "detect_image_mime_type", "prepare_image"]

SNIFF_BYTES = 4100
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
    """Make ``data`` an inline image block: converted to a supported format, resized when asked to."""
    converted_from = None
    if mime_type not in ("image/png", "image/jpeg", "image/gif", "image/webp"):
        converted = bmp_to_png(data) if mime_type == "image/bmp" else None
        if converted is None:
            return PreparedImage(mime_type, omitted=CONVERSION_FAILED)
        converted_from, data, mime_type = mime_type, converted, "image/png"
    if not auto_resize:
        return PreparedImage(
            mime_type,
            data=base64.b64encode(data).decode("ascii"),
            hints=_converted(converted_from, mime_type),
        )
    resized = resize_image(data, mime_type)
    if resized is None:
        return PreparedImage(mime_type, omitted=RESIZE_FAILED)
    hints = _converted(converted_from, resized.mime_type)
    note = dimension_note(resized)
    return PreparedImage(resized.mime_type, data=resized.data, hints=[*hints, *([note] if note else [])])


def _converted(source: str | None, target: str) -> list[str]:
    return [f"[Image converted from {source} to {target}.]"] if source and source != target else []


def bmp_to_png(data: bytes) -> bytes | None:
    """An uncompressed BMP (1/4/8-bit palette, 16/24/32-bit, bit fields) as an RGBA PNG, else ``None``."""
    try:
        width, height, rows = _decode_bmp(data)
    except (struct.error, IndexError, ValueError, ZeroDivisionError):
        return None
    return _encode_png(width, height, rows)


def _decode_bmp(data: bytes) -> tuple[int, int, list[bytes]]:
    pixel_offset, dib_size = struct.unpack_from("<II", data, 10)
    if dib_size == 12:
        width, height, _, bits = struct.unpack_from("<hhHH", data, 18)
        compression, colors_used, palette_entry = 0, 0, 3
    else:
        width, height, _, bits, compression = struct.unpack_from("<iiHHI", data, 18)
        colors_used = struct.unpack_from("<I", data, 46)[0]
        palette_entry = 4
    top_down = height < 0
    height = abs(height)
    if width <= 0 or height == 0 or width * height > 50_000_000 or compression not in (0, 3, 6):
        raise ValueError("unsupported BMP")
    masks = _bit_masks(data, dib_size, bits, compression)
    palette: list[bytes] = []
    if bits <= 8:
        count = colors_used or (1 << bits)
        start = 14 + dib_size
        palette = [
            bytes((data[i + 2], data[i + 1], data[i], 255))
            for i in range(start, start + count * palette_entry, palette_entry)
        ]
    stride = ((width * bits + 31) // 32) * 4
    rows = []
    for y in range(height):
        source = pixel_offset + (y if top_down else height - 1 - y) * stride
        row = data[source : source + stride]
        if len(row) < stride:
            raise ValueError("truncated BMP")
        rows.append(_bmp_row(row, width, bits, palette, masks))
    return width, height, rows


def _bit_masks(data: bytes, dib_size: int, bits: int, compression: int) -> tuple[int, int, int, int] | None:
    if bits == 16 and compression == 0:
        return (0x7C00, 0x03E0, 0x001F, 0)
    if bits == 32 and compression == 0:
        return (0x00FF0000, 0x0000FF00, 0x000000FF, 0)
    if compression in (3, 6):
        red, green, blue = struct.unpack_from("<III", data, 54)
        alpha = struct.unpack_from("<I", data, 66)[0] if dib_size >= 56 or compression == 6 else 0
        return (red, green, blue, alpha)
    return None


def _channel(value: int, mask: int) -> int:
    if not mask:
        return 255
    shift = (mask & -mask).bit_length() - 1
    top = mask >> shift
    return ((value & mask) >> shift) * 255 // top


def _bmp_row(
    row: bytes, width: int, bits: int, palette: list[bytes], masks: tuple[int, int, int, int] | None
) -> bytes:
    if bits == 24:
        return b"".join(bytes((row[i + 2], row[i + 1], row[i], 255)) for i in range(0, width * 3, 3))
    if bits <= 8:
        per_byte = 8 // bits
        out = []
        for x in range(width):
            byte = row[x // per_byte]
            index = (byte >> (8 - bits * (x % per_byte + 1))) & ((1 << bits) - 1)
            out.append(palette[index])
        return b"".join(out)
    if masks is None:
        raise ValueError("unsupported BMP")
    size = bits // 8
    red, green, blue, alpha = masks
    pixels = []
    for x in range(width):
        value = int.from_bytes(row[x * size : x * size + size], "little")
        pixels.append(
            bytes(
                (_channel(value, red), _channel(value, green), _channel(value, blue), _channel(value, alpha))
            )
        )
    return b"".join(pixels)


def _encode_png(width: int, height: int, rows: list[bytes]) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    pixels = zlib.compress(b"".join(b"\0" + row for row in rows), 6)
    return _PNG_SIGNATURE + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
