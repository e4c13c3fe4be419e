"""``Math.log`` as V8 (Node) computes it, for scores that must equal pi's to the last bit.

V8's ``Math.log`` is fdlibm's ``__ieee754_log`` (the FreeBSD msun routine); the C library's ``log``,
which :func:`math.log` calls, may differ in the last bit (about 1 input in 13 in tool_search's
range). This is the same algorithm in Python floats, which are the same IEEE doubles, so every
result is V8's (checked against Node 22 in ``tests/common/test_jsmath.py``).
"""

from __future__ import annotations

import struct

__all__ = ["js_log"]

_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_TWO54 = 1.80143985094819840000e16
_LG1, _LG2, _LG3 = 6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01
_LG4, _LG5 = 2.222219843214978396e-01, 1.818357216161805012e-01
_LG6, _LG7 = 1.531383769920937332e-01, 1.479819860511658591e-01


def _words(x: float) -> tuple[int, int]:
    """The high (signed) and low 32-bit words of a double."""
    bits = struct.unpack("<Q", struct.pack("<d", x))[0]
    high = bits >> 32
    return (high - (1 << 32) if high & 0x80000000 else high), bits & 0xFFFFFFFF


def js_log(x: float) -> float:
    """``Math.log(x)``: the natural logarithm, bit for bit as V8 gives it."""
    hx, lx = _words(x)
    k = 0
    if hx < 0x00100000:
        if ((hx & 0x7FFFFFFF) | lx) == 0:
            return float("-inf")
        if hx < 0:
            return float("nan")
        k -= 54
        x *= _TWO54  # a subnormal: scaled up
        hx, lx = _words(x)
    if hx >= 0x7FF00000:
        return x + x
    k += (hx >> 20) - 1023
    hx &= 0x000FFFFF
    i = (hx + 0x95F64) & 0x100000
    # x or x/2 normalized into [sqrt(2)/2, sqrt(2)), and f = x - 1
    x = struct.unpack("<d", struct.pack("<Q", ((hx | (i ^ 0x3FF00000)) << 32) | lx))[0]
    k += i >> 20
    f = x - 1.0
    if (0x000FFFFF & (2 + hx)) < 3:
        if f == 0.0:
            if k == 0:
                return 0.0
            dk = float(k)
            return dk * _LN2_HI + dk * _LN2_LO
        r = f * f * (0.5 - 0.33333333333333333 * f)
        if k == 0:
            return f - r
        dk = float(k)
        return dk * _LN2_HI - ((r - dk * _LN2_LO) - f)
    s = f / (2.0 + f)
    dk = float(k)
    z = s * s
    i = hx - 0x6147A
    w = z * z
    j = 0x6B851 - hx
    t1 = w * (_LG2 + w * (_LG4 + w * _LG6))
    t2 = z * (_LG1 + w * (_LG3 + w * (_LG5 + w * _LG7)))
    i |= j
    r = t2 + t1
    if i > 0:
        hfsq = 0.5 * f * f
        if k == 0:
            return f - (hfsq - s * (hfsq + r))
        return dk * _LN2_HI - ((hfsq - (s * (hfsq + r) + dk * _LN2_LO)) - f)
    if k == 0:
        return f - s * (f - r)
    return dk * _LN2_HI - ((s * (f - r) - dk * _LN2_LO) - f)
