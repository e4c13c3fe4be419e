"""read: selected lines, pi's continuation notices, errors, images and path spellings (pi 1.6 texts)."""

from __future__ import annotations

import asyncio
import base64
import os
import struct
import unicodedata
import zlib

import pytest
from tool_helpers import call, error_of, text_of

from tau.llm.stream import AbortSignal
from tau.tools import builtin_tool


def write(ctx, name: str, data: str | bytes) -> None:
    path = os.path.join(ctx.cwd, name)
    with open(path, "wb") as handle:
        handle.write(data.encode() if isinstance(data, str) else data)


def numbered(n: int) -> str:
    return "".join(f"{i}\n" for i in range(1, n + 1))


def test_small_file_is_returned_whole_with_structured_content(ctx):
    write(ctx, "hello.txt", "hello world\nline2\n")
    result = call("read", {"path": "hello.txt"}, ctx)
    # b-parallel-tools golden: {"content":[text],"structuredContent":"hello world\nline2\n"}
    assert result.to_json() == {
        "content": [{"type": "text", "text": "hello world\nline2\n"}],
        "structuredContent": "hello world\nline2\n",
    }


def test_line_limit_at_2000_and_2001(ctx):
    write(ctx, "a.txt", "".join(f"{i}\n" for i in range(1, 2000)) + "2000")
    assert not text_of(call("read", {"path": "a.txt"}, ctx)).startswith("[")
    assert "[Showing" not in text_of(call("read", {"path": "a.txt"}, ctx))
    write(ctx, "b.txt", numbered(2001))
    result = call("read", {"path": "b.txt"}, ctx)
    assert text_of(result).endswith("\n2000\n\n[Showing lines 1-2000 of 2002. Use offset=2001 to continue.]")
    assert result.details["truncation"]["truncatedBy"] == "lines"


def test_a_trailing_newline_counts_as_a_line_for_the_total(ctx):
    write(ctx, "c.txt", numbered(2000))
    assert text_of(call("read", {"path": "c.txt"}, ctx)) == numbered(2000)


def test_byte_limit_notice(ctx):
    write(ctx, "bytes.txt", ("a" * 1023 + "\n") * 60)
    text = text_of(call("read", {"path": "bytes.txt"}, ctx))
    assert text.endswith("\n\n[Showing lines 1-50 of 61 (50.0KB limit). Use offset=51 to continue.]")
    write(ctx, "exact.txt", ("a" * 1023 + "\n") * 50)
    assert "[Showing" not in text_of(call("read", {"path": "exact.txt"}, ctx))


def test_first_line_over_the_byte_limit_points_to_bash(ctx):
    write(ctx, "long.txt", "a\nb\n" + "é" * 40000 + "\nc")
    result = call("read", {"path": "long.txt", "offset": 3}, ctx)
    assert (
        text_of(result)
        == "[Line 3 is 78.1KB, exceeds 50.0KB limit. Use bash: sed -n '3p' long.txt | head -c 51200]"
    )
    assert result.details["truncation"]["firstLineExceedsLimit"] is True


def test_user_limit_notice_and_offsets(ctx):
    write(ctx, "small.txt", "a\nb\nc\nd\ne\n")
    assert text_of(call("read", {"path": "small.txt", "offset": 2, "limit": 2}, ctx)) == (
        "b\nc\n\n[3 more lines in file. Use offset=4 to continue.]"
    )
    assert text_of(call("read", {"path": "small.txt", "limit": 5}, ctx)) == (
        "a\nb\nc\nd\ne\n\n[1 more lines in file. Use offset=6 to continue.]"
    )
    assert text_of(call("read", {"path": "small.txt", "limit": 6}, ctx)) == "a\nb\nc\nd\ne\n"
    assert text_of(call("read", {"path": "small.txt", "offset": 6}, ctx)) == ""


def test_offset_past_the_end_is_an_error(ctx):
    write(ctx, "small.txt", "a\nb\nc\nd\ne\n")
    assert (
        error_of("read", {"path": "small.txt", "offset": 7}, ctx)
        == "Offset 7 is beyond end of file (6 lines total)"
    )
    write(ctx, "empty.txt", "")
    assert (
        error_of("read", {"path": "empty.txt", "offset": 2}, ctx)
        == "Offset 2 is beyond end of file (1 lines total)"
    )


def test_missing_file_and_directory_errors_are_worded_like_node(ctx):
    missing = os.path.join(ctx.cwd, "nope.txt")
    assert (
        error_of("read", {"path": "nope.txt"}, ctx)
        == f"ENOENT: no such file or directory, access '{missing}'"
    )
    os.mkdir(os.path.join(ctx.cwd, "sub"))
    assert error_of("read", {"path": "sub"}, ctx) == "EISDIR: illegal operation on a directory, read"


def test_invalid_utf8_decodes_to_replacement_characters_and_bom_is_kept(ctx):
    write(ctx, "bad.txt", b"ok\xff\xfe\xc3(\n")
    assert text_of(call("read", {"path": "bad.txt"}, ctx)) == "ok\ufffd\ufffd\ufffd(\n"
    write(ctx, "bom.txt", "\ufeffbom\r\n")
    assert text_of(call("read", {"path": "bom.txt"}, ctx)) == "\ufeffbom\r\n"


def png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\0" + b"\xff\x00\x00\xff" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def test_image_is_sniffed_by_content_and_attached(ctx):
    data = png(3, 2)
    write(ctx, "picture.bin", data)
    result = call("read", {"path": "picture.bin"}, ctx)
    encoded = base64.b64encode(data).decode()
    assert result.content == [
        {"type": "text", "text": "Read image file [image/png]"},
        {"type": "image", "data": encoded, "mimeType": "image/png"},
    ]
    assert result.structured_content == {
        "type": "image",
        "data": encoded,
        "mimeType": "image/png",
        "note": "Read image file [image/png]",
    }


@pytest.mark.parametrize(
    ("head", "mime"),
    [
        (b"\xff\xd8\xff\xe0" + b"\0" * 20, "image/jpeg"),
        (b"GIF89a\x01\x00\x01\x00", "image/gif"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"\xff\xd8\xff\xf7", None),
        (b"plain text", None),
    ],
)
def test_image_sniffing(head, mime):
    from tau.tools.images import detect_image_mime_type

    assert detect_image_mime_type(head) == mime


def bmp(
    width: int, height: int, bits: int, rows: list[bytes], palette: bytes = b"", compression: int = 0
) -> bytes:
    stride = ((width * bits + 31) // 32) * 4
    body = b"".join(row.ljust(stride, b"\0") for row in rows)
    offset = 14 + 40 + len(palette)
    header = struct.pack(
        "<IiiHHIIiiII", 40, width, height, 1, bits, compression, len(body), 2835, 2835, len(palette) // 4, 0
    )
    return b"BM" + struct.pack("<IHHI", offset + len(body), 0, 0, offset) + header + palette + body


def png_pixels(data: bytes) -> list[bytes]:
    """RGBA rows of a PNG written with filter 0 (what tau's encoder writes)."""
    width = struct.unpack(">I", data[16:20])[0]
    idat = data[data.index(b"IDAT") + 4 : data.index(b"IEND") - 8]
    raw = zlib.decompress(idat)
    size = 1 + width * 4
    return [raw[i + 1 : i + size] for i in range(0, len(raw), size)]


def test_bmp_is_converted_to_png(ctx):
    # stored bottom-up: red, green at the bottom; blue, white on top (pixels as pi's Photon decodes them)
    write(ctx, "pic.bmp", bmp(2, 2, 24, [b"\x00\x00\xff\x00\xff\x00", b"\xff\x00\x00\xff\xff\xff"]))
    result = call("read", {"path": "pic.bmp"}, ctx)
    assert text_of(result) == "Read image file [image/png]\n[Image converted from image/bmp to image/png.]"
    assert result.content[1]["mimeType"] == "image/png"
    assert png_pixels(base64.b64decode(result.content[1]["data"])) == [
        b"\x00\x00\xff\xff\xff\xff\xff\xff",
        b"\xff\x00\x00\xff\x00\xff\x00\xff",
    ]


def test_palette_bmp_and_unsupported_compression(ctx):
    write(
        ctx,
        "pal.bmp",
        bmp(3, 1, 8, [b"\x00\x01\x02"], palette=b"\x00\x00\xff\x00\x00\xff\x00\x00\xff\x00\x00\x00"),
    )
    result = call("read", {"path": "pal.bmp"}, ctx)
    assert png_pixels(base64.b64decode(result.content[1]["data"])) == [
        b"\xff\x00\x00\xff\x00\xff\x00\xff\x00\x00\xff\xff"
    ]
    write(ctx, "rle.bmp", bmp(1, 1, 8, [b"\x00"], palette=b"\x00\x00\x00\x00", compression=1))
    assert text_of(call("read", {"path": "rle.bmp"}, ctx)) == (
        "Read image file [image/bmp]\n[Image omitted: could not be converted to a supported inline image format.]"
    )


def test_image_for_a_model_without_image_input_is_flagged(ctx):
    write(ctx, "p.png", png(1, 1))
    ctx.model, ctx.model_input = "text-only", ("text",)
    assert call("read", {"path": "p.png"}, ctx).details == {"imageUnsupportedByModel": "text-only"}


def test_macos_spelling_variants(ctx):
    write(ctx, "Screenshot 2024 at 10.00.00\u202fAM.txt", "am\n")
    write(ctx, unicodedata.normalize("NFD", "café.txt"), "nfd\n")
    write(ctx, "Capture d\u2019écran.txt", "curly\n")
    assert text_of(call("read", {"path": "Screenshot 2024 at 10.00.00 AM.txt"}, ctx)) == "am\n"
    assert text_of(call("read", {"path": unicodedata.normalize("NFC", "café.txt")}, ctx)) == "nfd\n"
    assert text_of(call("read", {"path": "Capture d'écran.txt"}, ctx)) == "curly\n"


def test_path_forms(ctx, monkeypatch):
    write(ctx, "small.txt", "s\n")
    write(ctx, "a b.txt", "space\n")
    assert text_of(call("read", {"path": "@small.txt"}, ctx)) == "s\n"
    assert text_of(call("read", {"path": f"file://{ctx.cwd}/a%20b.txt"}, ctx)) == "space\n"
    assert text_of(call("read", {"path": "a\u00a0b.txt"}, ctx)) == "space\n"
    monkeypatch.setenv("HOME", ctx.cwd)
    assert text_of(call("read", {"path": "~/small.txt"}, ctx)) == "s\n"
    assert text_of(call("read", {"path": os.path.join(ctx.cwd, "small.txt")}, ctx)) == "s\n"


def test_aborted_signal_stops_before_reading(ctx):
    from tau.llm.stream import AbortSignal

    write(ctx, "small.txt", "s\n")
    signal = AbortSignal()
    signal.abort()
    with pytest.raises(Exception, match=r"^Operation aborted$"):
        call("read", {"path": "small.txt"}, ctx, signal=signal)


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (
            lambda directory: (os.mkfifo(directory / "pipe"), str(directory / "pipe"))[1],
            "a named pipe (FIFO)",
        ),
        (lambda directory: "/dev/zero", "a character device"),
        (lambda directory: "/dev/null", "a character device"),
    ],
    ids=["fifo", "dev-zero", "dev-null"],
)
def test_pipes_and_devices_are_refused_without_blocking_or_spinning(ctx, tmp_path, make, kind):
    """Issue 16: a FIFO with no writer would block ``open`` for good, ``/dev/zero`` never ends."""
    path = make(tmp_path)
    assert _refusal(path, ctx) == (
        f"Not a regular file: {path} is {kind}. read only reads regular files; "
        "use bash to read from pipes, devices and sockets."
    )


def _refusal(path: str, ctx) -> str:
    """The error of reading ``path``. A read that blocks or spins is aborted after a minute, so a
    regression fails the test (``Operation aborted``) instead of hanging it."""

    async def main() -> str:
        signal = AbortSignal()
        asyncio.get_running_loop().call_later(60, signal.abort)
        with pytest.raises(Exception) as info:
            await builtin_tool("read").execute("call_1", {"path": path}, signal, None, ctx)
        return str(info.value)

    return asyncio.run(main())


def test_a_socket_is_refused(ctx, tmp_path):
    import socket

    path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
        assert _refusal(str(path), ctx).startswith(f"Not a regular file: {path} is a socket.")
    finally:
        server.close()


def test_a_link_to_a_device_is_refused_under_the_name_given(ctx):
    os.symlink("/dev/zero", os.path.join(ctx.cwd, "zero"))
    message = _refusal("zero", ctx)
    assert message.startswith(f"Not a regular file: {os.path.join(ctx.cwd, 'zero')} is a character device.")


def test_a_thread_left_blocked_by_an_abort_ends_quietly_with_its_loop():
    """Issue 16: when the loop closes, the abandoned call is cancelled without an "Exception in callback"."""
    import threading

    from tau.tools._async import in_thread_until_aborted

    release = threading.Event()
    reported: list[dict] = []

    async def main() -> str:
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: reported.append(context))
        signal = AbortSignal()
        asyncio.get_running_loop().call_soon(signal.abort)
        with pytest.raises(Exception) as info:
            await in_thread_until_aborted(release.wait, signal)
        return str(info.value)

    try:
        assert asyncio.run(main()) == "Operation aborted"  # closing the loop cancels the abandoned call
    finally:
        release.set()
    assert reported == []
