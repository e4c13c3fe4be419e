"""Issue 32: ``@file`` and ``@image`` arguments go into the first message as pi 1.6 puts them there."""

from __future__ import annotations

import base64
import io
import json
import os

import pytest
from cli_run import faux, messages, session_files, tau
from pi32 import file_args_run, golden

from tau.tools.image_resize import dimension_note, resize_image


def test_files_and_images_make_the_first_message_as_pi_does(tmp_path):
    """Against the golden real pi 1.6 made (text files, a BOM, an empty file, a small and a wide image)."""
    assert file_args_run("tau", tmp_path) == golden("file-args")


@pytest.mark.skipif(not os.environ.get("PI_BIN"), reason="set PI_BIN to real pi 1.6 to compare live")
def test_files_and_images_against_real_pi(tmp_path):
    assert file_args_run("tau", tmp_path / "tau") == file_args_run(
        "pi", tmp_path / "pi", os.environ["PI_BIN"]
    )


def test_file_text_comes_between_piped_input_and_the_first_message(project, tmp_path, isolated_agent_dir):
    (project / "a.md").write_text("alpha")
    done = tau(
        ["-p", *faux(tmp_path, [{"text": "ok"}] * 2), "@a.md", "first", "second"], project, stdin="piped"
    )
    assert done.returncode == 0, done
    [path] = session_files(isolated_agent_dir)
    users = [m["content"][0]["text"] for m in messages(path) if m["role"] == "user"]
    assert users == [f'piped<file name="{project / "a.md"}">\nalpha\n</file>\nfirst', "second"]


def test_files_alone_are_a_prompt(project, tmp_path, isolated_agent_dir):
    (project / "task.md").write_text("do the thing")
    done = tau(["-p", *faux(tmp_path, [{"text": "ok"}]), "@task.md"], project)
    assert done.returncode == 0 and done.stdout == "ok\n", done


def test_a_missing_file_stops_before_any_request(project, tmp_path, isolated_agent_dir):
    done = tau(["-p", *faux(tmp_path, [{"text": "answered"}]), "@nope.txt", "hi"], project)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [f"Error: File not found: {project / 'nope.txt'}"]
    assert session_files(isolated_agent_dir) == []


def test_rpc_mode_rejects_file_arguments(project, tmp_path):
    (project / "a.md").write_text("alpha")
    done = tau(["--mode", "rpc", *faux(tmp_path, []), "@a.md"], project)
    assert done.returncode == 1
    assert done.stderr.splitlines() == ["Error: @file arguments are not supported in RPC mode"]
    assert done.stdout == ""


def _png(width: int, height: int) -> bytes:
    from PIL import Image

    image = Image.new("RGB", (width, height))
    image.putdata(
        [((x * 31) % 256, (y * 17) % 256, (x ^ y) % 256) for y in range(height) for x in range(width)]
    )
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def test_images_are_resized_within_pi_limits():
    small = _png(40, 30)
    kept = resize_image(small, "image/png")
    assert kept is not None and not kept.was_resized and base64.b64decode(kept.data) == small
    assert dimension_note(kept) is None

    resized = resize_image(_png(2250, 90), "image/png")
    assert resized is not None and resized.was_resized
    assert (resized.width, resized.height) == (2000, 80)
    # JS toFixed(2): 1.125 rounds up (Python's format would give 1.12)
    assert dimension_note(resized) == (
        "[Image: original 2250x90, displayed at 2000x80. Multiply coordinates by 1.13 to map to original image.]"
    )
    tall = resize_image(_png(30, 2600), "image/png", max_bytes=10_000)
    assert tall is not None and tall.height <= 2000 and len(tall.data) < 10_000


def test_an_image_that_cannot_be_decoded_is_left_out_with_pis_note(project, tmp_path, isolated_agent_dir):
    bogus = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"\x00" * 40  # a PNG signature, nothing decodable
    (project / "broken.png").write_bytes(bogus)
    done = tau(["-p", *faux(tmp_path, [{"text": "ok"}]), "@broken.png", "look"], project)
    assert done.returncode == 0, done
    [path] = session_files(isolated_agent_dir)
    user = next(m for m in messages(path) if m["role"] == "user")
    assert [block["type"] for block in user["content"]] == ["text"]
    assert user["content"][0]["text"].endswith(
        "look\n\n[Image omitted: could not be resized below the inline image size limit.]"
    )
    assert json.dumps(user).count("broken.png") == 1
