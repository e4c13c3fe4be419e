"""A theme file's colour values, as terminal colours.

The forms pi 1.6 accepts: ``"#0af"`` / ``"#00aaff"``, a 256-colour index ``0``-``255``,
``"oklch(62% 0.1 200)"``, ``"okhsl(250 60% 55%)"`` and ``""`` (the terminal's own colour). OKLCH
colours outside sRGB are gamut-mapped along their chroma, which gives pi's hex for the same value;
OKHSL is in gamut by construction. ``coloraide`` does the colour science and is imported only when
a theme has such a colour.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

__all__ = ["ColorError", "to_terminal"]

_HEX = re.compile(r"#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})")
_FUNCTION = re.compile(r"(oklch|okhsl)\(\s*([^)]*?)\s*\)", re.IGNORECASE)


class ColorError(ValueError):
    """A value that is none of the colour forms."""


def to_terminal(value: Any) -> str:
    """``value`` as a ``rich`` colour: ``"#rrggbb"``, ``"color(N)"``, or ``"default"`` for ``""``."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ColorError(f"not a colour: {value!r}")
    if isinstance(value, int):
        if not 0 <= value <= 255:
            raise ColorError(f"a 256-colour index is 0-255, got {value}")
        return f"color({value})"
    text = value.strip()
    if text == "":
        return "default"
    if _HEX.fullmatch(text):
        digits = text[1:]
        if len(digits) == 3:
            digits = "".join(ch * 2 for ch in digits)
        return f"#{digits.lower()}"
    match = _FUNCTION.fullmatch(text)
    if match:
        return _perceptual(match.group(1).lower(), match.group(2))
    raise ColorError(f"not a colour: {value!r}")


def _number(part: str, percent_scale: float) -> float:
    try:
        return float(part[:-1]) * percent_scale / 100 if part.endswith("%") else float(part)
    except ValueError:
        raise ColorError(f"not a number: {part!r}") from None


@lru_cache(maxsize=512)
def _perceptual(space: str, arguments: str) -> str:
    parts = arguments.replace(",", " ").split()
    if len(parts) != 3:
        raise ColorError(f"{space}() takes three numbers, got {arguments!r}")
    color_class = _color_class()
    if space == "oklch":
        # CSS: lightness 0-1 or 0%-100%, chroma 0-0.4 (100% is 0.4), hue in degrees
        lightness, chroma, hue = _number(parts[0], 1), _number(parts[1], 0.4), _number(parts[2], 0)
        color = color_class("oklch", [lightness, chroma, hue % 360])
        mapped = color.convert("srgb").fit("srgb", method="raytrace", pspace="oklch")
    else:
        hue, saturation, lightness = _number(parts[0], 0), _number(parts[1], 1), _number(parts[2], 1)
        color = color_class("okhsl", [hue % 360, saturation, lightness])
        mapped = color.convert("srgb").fit("srgb")
    return str(mapped.to_string(hex=True))


@lru_cache(maxsize=1)
def _color_class() -> Any:
    from coloraide import Color
    from coloraide.spaces.okhsl import Okhsl

    class ThemeColor(Color):
        """``coloraide``'s colour with the OKHSL space registered (it is not by default)."""

    ThemeColor.register(Okhsl())
    return ThemeColor
