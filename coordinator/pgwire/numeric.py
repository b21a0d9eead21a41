"""PostgreSQL's binary numeric format (NBASE = 10000 digits) to and from exact values.

The wire layout (numeric_send/numeric_recv): Int16 ndigits, Int16 weight, UInt16 sign,
Int16 dscale, then ndigits Int16 base-10000 digits, most significant first. The value is
sum(digit[i] * 10000 ** (weight - i)); dscale is the number of decimal digits after the
point to display. Values here are (unscaled integer, scale) pairs, the way raympp stores
numerics, so no float ever touches them.
"""

from __future__ import annotations

import decimal
import struct

from planner import errors

NBASE = 10000
DEC_DIGITS = 4            # decimal digits per NBASE digit
SIGN_POS = 0x0000
SIGN_NEG = 0x4000
SIGN_NAN = 0xC000
SIGN_PINF = 0xD000        # PostgreSQL 14+
SIGN_NINF = 0xF000
_HEADER = struct.Struct("!hhHh")


def encode(unscaled: int, scale: int) -> bytes:
    """The binary numeric for unscaled * 10**-scale, displayed with `scale` digits."""
    sign = SIGN_NEG if unscaled < 0 else SIGN_POS
    magnitude = abs(unscaled)
    if magnitude == 0:
        return _HEADER.pack(0, 0, SIGN_POS, scale)
    # Align the fraction to whole NBASE digits: pad it with zeros to a multiple of 4.
    frac_groups = -(-scale // DEC_DIGITS)
    magnitude *= 10 ** (frac_groups * DEC_DIGITS - scale)
    text = str(magnitude)
    text = "0" * (-len(text) % DEC_DIGITS) + text
    digits = [int(text[i:i + DEC_DIGITS]) for i in range(0, len(text), DEC_DIGITS)]
    weight = len(digits) - 1 - frac_groups
    while digits and digits[-1] == 0:  # PostgreSQL strips trailing zero digits
        digits.pop()
    return (_HEADER.pack(len(digits), weight, sign, scale)
            + struct.pack(f"!{len(digits)}h", *digits))


def encode_decimal(value: decimal.Decimal) -> bytes:
    """The binary numeric for a Decimal (NaN and infinities included)."""
    if value.is_nan():
        return _HEADER.pack(0, 0, SIGN_NAN, 0)
    if value.is_infinite():
        return _HEADER.pack(0, 0, SIGN_NINF if value < 0 else SIGN_PINF, 0)
    sign, digits, exponent = value.as_tuple()
    unscaled = int("".join(map(str, digits)) or "0")
    if exponent > 0:
        unscaled, scale = unscaled * 10 ** exponent, 0
    else:
        scale = -exponent
    return encode(-unscaled if sign else unscaled, scale)


def decode(data: bytes) -> decimal.Decimal:
    """A Decimal from a binary numeric; malformed input is a 08P01 protocol violation."""
    if len(data) < _HEADER.size:
        raise errors.ProtocolViolation("insufficient data left in message")
    ndigits, weight, sign, dscale = _HEADER.unpack_from(data)
    if ndigits < 0 or len(data) != _HEADER.size + 2 * ndigits:
        raise errors.ProtocolViolation("invalid length in external \"numeric\" value")
    if sign == SIGN_NAN:
        return decimal.Decimal("NaN")
    if sign in (SIGN_PINF, SIGN_NINF):
        return decimal.Decimal("-Infinity" if sign == SIGN_NINF else "Infinity")
    if sign not in (SIGN_POS, SIGN_NEG) or dscale < 0:
        raise errors.ProtocolViolation("invalid sign in external \"numeric\" value")
    digits = struct.unpack_from(f"!{ndigits}h", data, _HEADER.size)
    unscaled = 0
    for d in digits:
        if not 0 <= d < NBASE:
            raise errors.ProtocolViolation("invalid digit in external \"numeric\" value")
        unscaled = unscaled * NBASE + d
    # The digits end at NBASE exponent (weight - ndigits + 1); bring that to 10 ** -dscale.
    exponent10 = (weight - ndigits + 1) * DEC_DIGITS
    value = decimal.Decimal(unscaled).scaleb(exponent10, _EXACT)
    value = value.quantize(decimal.Decimal(1).scaleb(-dscale), context=_EXACT)
    return value.copy_negate() if sign == SIGN_NEG else value


# Enough precision that quantize never rounds a value PostgreSQL can send (1000 digits).
_EXACT = decimal.Context(prec=2000, Emin=-999999, Emax=999999)
