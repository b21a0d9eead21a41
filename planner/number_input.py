"""Reading numbers with PostgreSQL's number templates: to_number.

PostgreSQL's NUM_processor in its reading direction, one string at a time: digits, the
sign and the decimal point are taken where the template's 9, 0, S, MI, PL, SG, PR and
D / '.' put them, group separators and other characters skipped as PostgreSQL skips them.
The result is numeric with the scale of the decimal digits read, checked against the
template's digits (22003) as numeric_in checks a typmod.
"""

from __future__ import annotations

import decimal
from decimal import Decimal

from planner import errors
from planner.number_format import parse_number_template


def parse_number(text: str, fmt: str) -> tuple[str, int]:
    """(the number to_number(text, fmt) reads, as numeric input text; its scale): PostgreSQL's
    NUM_processor reading digits, sign and decimal point where the template puts them."""
    nodes, desc = parse_number_template(fmt)
    fl = desc.flags
    if "EEEE" in fl:
        raise errors.FeatureNotSupported('"EEEE" not supported for input')
    if "RN" in fl:
        raise errors.FeatureNotSupported('"RN" not supported for input')
    st = _NumIn(text, desc)
    for n in nodes:
        if st.p >= len(text):
            break
        if n.key is None:
            st.p += 1
            continue
        k = n.key
        if k in ("9", "0", ".", "D"):
            st.numpart(k)
        elif k in (",", "G"):
            if "FM" in fl or text[st.p] != ",":
                continue
        elif k == "L":
            st.eat(1)
            continue
        elif k in ("TH", "th"):
            if "." in fl:
                continue
            st.eat(2)
            continue
        elif k in ("MI", "PL", "SG"):
            c = text[st.p]
            if (k in ("MI", "SG") and c == "-") or (k in ("PL", "SG") and c == "+"):
                st.sign = c
            else:
                st.eat(1)
                continue
        else:
            continue
        st.p += 1
    digits = "".join(st.digits)
    if digits.endswith("."):
        digits = digits[:-1]
    return st.sign + digits, st.read_post


class _NumIn:
    """NUM_processor's state while reading one number."""

    def __init__(self, text: str, desc):
        self.text, self.desc = text, desc
        self.p = 0
        self.sign = " "
        self.digits: list[str] = []
        self.read_pre = self.read_post = 0
        self.read_dec = False

    def eat(self, n: int) -> None:
        """Skip up to n characters that are not part of a number."""
        for _ in range(n):
            if self.p >= len(self.text) or self.text[self.p] in "0123456789.,+-":
                break
            self.p += 1

    def numpart(self, key: str) -> None:
        s, fl, desc = self.text, self.desc.flags, self.desc
        if self.p >= len(s):
            return
        if s[self.p] == " ":
            self.p += 1
        if self.p >= len(s):
            return
        if self.sign == " " and key in ("0", "9") and self.read_pre + self.read_post == 0:
            c = s[self.p]
            if "S" in fl and desc.lsign == "pre":
                if c in "+-":
                    self.sign = c
                    self.p += 1
            elif c == "-" or ("PR" in fl and c == "<"):
                self.sign = "-"
                self.p += 1
            elif c == "+":
                self.sign = "+"
                self.p += 1
        if self.p >= len(s):
            return
        read = False
        c = s[self.p]
        if "0" <= c <= "9":
            if self.read_dec and self.read_post == desc.post:
                return
            self.digits.append(c)
            if self.read_dec:
                self.read_post += 1
            else:
                self.read_pre += 1
            read = True
        elif "." in fl and not self.read_dec and c == ".":
            self.digits.append(".")
            self.read_dec = True
            read = True
        if self.p >= len(s):
            return
        if self.sign == " " and self.read_pre + self.read_post > 0:
            if "S" in fl and read and self.p + 1 < len(s) and not s[self.p + 1].isdigit():
                if s[self.p + 1] in "+-":
                    self.p += 1
                    self.sign = s[self.p]
            elif not read and "S" not in fl and fl & {"PL", "MI"} and c in "+-":
                self.sign = c


V_SCALE_DIGITS = 16  # the scale of PostgreSQL's power(10::numeric, -n), which V divides by
V_SCALE = Decimal(1).scaleb(-V_SCALE_DIGITS)


def to_number(text: str, fmt: str) -> tuple[Decimal, int]:
    """(to_number(text, fmt), its scale); 22P02 when no digits were read, 22003 when they
    do not fit the template's digits."""
    digits, scale = parse_number(text, fmt)
    _, desc = parse_number_template(fmt)
    body = digits.strip()
    if body in ("", "+", "-", ".", "+.", "-.") or not any(c.isdigit() for c in body):
        raise errors.InvalidTextRepresentation(
            f'invalid input syntax for type numeric: "{digits}"')
    value = Decimal(body.replace(" ", ""))
    precision = desc.pre + desc.multi + scale
    value = value.quantize(Decimal(1).scaleb(-scale))
    if value != 0 and value.adjusted() >= precision - scale:
        limit = precision - scale
        raise errors.NumericOutOfRange(
            "numeric field overflow",
            detail=f"A field with precision {precision}, scale {scale} must round to an "
            f"absolute value less than {'1' if limit <= 0 else '10^' + str(limit)}.")
    if "V" in desc.flags:  # times power(10, -n): numeric's 16 places, rounded
        factor = (Decimal(10) ** -desc.multi).quantize(V_SCALE, rounding=decimal.ROUND_HALF_UP)
        value, scale = (value * factor).quantize(V_SCALE), V_SCALE_DIGITS
    if value == 0:
        value = value.copy_abs()
    return value, scale
