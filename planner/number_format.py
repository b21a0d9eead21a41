"""Number templates (to_char of numbers): PostgreSQL's NUM_processor, one value at a time.

The digit template (9 0 . , D G S PL MI SG PR L RN TH V EEEE FM B) is parsed by
planner/formatting.py's template parser with these keywords, described (`NumDesc`, with
PostgreSQL's 42601 errors for the combinations it rejects) and applied to one value as
PostgreSQL does: the value printed by its type's rules first (numeric rounds half away
from zero, floats by printf with at most 15 / 6 significant digits, '#' when the digits do
not fit), then placed in the template. The C locale is PostgreSQL's: ',' groups, '.' is the
decimal point, the currency symbol is a blank. Segments apply it once per distinct value.
"""

from __future__ import annotations

import decimal
import functools
import math
from dataclasses import dataclass, field
from decimal import Decimal

from planner import errors
from planner.formatting import Node, keyword_index, ordinal, parse_nodes

NUM_KEYWORDS = (
    (",", ","), (".", "."), ("0", "0"), ("9", "9"), ("B", "B"), ("C", "C"), ("D", "D"),
    ("EEEE", "EEEE"), ("FM", "FM"), ("G", "G"), ("L", "L"), ("MI", "MI"), ("PL", "PL"),
    ("PR", "PR"), ("RN", "RN"), ("SG", "SG"), ("SP", "SP"), ("S", "S"), ("TH", "TH"),
    ("V", "V"), ("b", "B"), ("c", "C"), ("d", "D"), ("eeee", "EEEE"), ("fm", "FM"),
    ("g", "G"), ("l", "L"), ("mi", "MI"), ("pl", "PL"), ("pr", "PR"), ("rn", "rn"),
    ("sg", "SG"), ("sp", "SP"), ("s", "S"), ("th", "th"), ("v", "V"),
)
_NUM_INDEX = keyword_index(NUM_KEYWORDS)


@dataclass(slots=True)
class NumDesc:
    """What a number template asks for (PostgreSQL's NUMDesc)."""

    pre: int = 0            # digit positions before the decimal point
    post: int = 0           # and after it
    lsign: str = ""         # 'pre' / 'post': where S puts the sign
    flags: set = field(default_factory=set)
    pre_lsign_num: int = 0
    multi: int = 0          # V: digits multiplied in
    zero_start: int = 0
    zero_end: int = 0


def _syntax(msg: str, detail: str | None = None) -> errors.QueryError:
    return errors.QueryError(msg, "42601", detail=detail)


def _num_prepare(num: NumDesc, key: str) -> None:
    """PostgreSQL's NUMDesc_prepare: one keyword's effect on the description."""
    fl = num.flags
    if "EEEE" in fl and key != "EEEE":
        raise _syntax('"EEEE" must be the last pattern used')
    if key == "9":
        if "PR" in fl:
            raise _syntax('"9" must be ahead of "PR"')
        if "V" in fl:
            num.multi += 1
        elif "." in fl:
            num.post += 1
        else:
            num.pre += 1
    elif key == "0":
        if "PR" in fl:
            raise _syntax('"0" must be ahead of "PR"')
        if "0" not in fl and "." not in fl:
            fl.add("0")
            num.zero_start = num.pre + 1
        if "." not in fl:
            num.pre += 1
        else:
            num.post += 1
        num.zero_end = num.pre + num.post
    elif key == "B":
        if num.pre == 0 and num.post == 0 and "0" not in fl:
            fl.add("B")
    elif key in ("D", "."):
        if "." in fl:
            raise _syntax("multiple decimal points")
        if "V" in fl:
            raise _syntax('cannot use "V" and decimal point together')
        fl.add(".")
    elif key == "FM":
        fl.add("FM")
    elif key == "S":
        if "S" in fl:
            raise _syntax('cannot use "S" twice')
        if fl & {"PL", "MI", "PR"}:
            raise _syntax('cannot use "S" and "PL"/"MI"/"SG"/"PR" together')
        if "." not in fl:
            num.lsign, num.pre_lsign_num = "pre", num.pre
            fl.add("S")
        elif not num.lsign:
            num.lsign = "post"
            fl.add("S")
    elif key in ("MI", "PL", "SG"):
        if "S" in fl:
            raise _syntax(f'cannot use "S" and "{key}" together')
        if key in ("MI", "SG"):
            fl.add("MI")
        if key in ("PL", "SG"):
            fl.add("PL")
    elif key == "PR":
        if fl & {"S", "PL", "MI"}:
            raise _syntax('cannot use "PR" and "S"/"PL"/"MI"/"SG" together')
        fl.add("PR")
    elif key in ("RN", "rn"):
        fl.add("RN")
    elif key == "V":
        if "." in fl:
            raise _syntax('cannot use "V" and decimal point together')
        fl.add("V")
    elif key == "EEEE":
        if "EEEE" in fl:
            raise _syntax('cannot use "EEEE" twice')
        if fl & {"B", "FM", "S", "PR", "MI", "PL", "RN", "V"}:
            raise _syntax('"EEEE" is incompatible with other formats',
                          '"EEEE" may only be used together with digit and decimal point '
                          'patterns.')
        fl.add("EEEE")


@functools.lru_cache(maxsize=256)
def parse_number_template(fmt: str) -> tuple[tuple[Node, ...], NumDesc]:
    """The nodes and description of a number template (to_char, to_number); 42601 for the
    combinations PostgreSQL rejects."""
    nodes = parse_nodes(fmt, _NUM_INDEX, False)
    num = NumDesc()
    for n in nodes:
        if n.key is not None:
            _num_prepare(num, n.key)
    return tuple(nodes), num


def _copy(num: NumDesc) -> NumDesc:
    return NumDesc(num.pre, num.post, num.lsign, set(num.flags), num.pre_lsign_num, num.multi,
                   num.zero_start, num.zero_end)


_RM = (("", "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX"),
       ("", "X", "XX", "XXX", "XL", "L", "LX", "LXX", "LXXX", "XC"),
       ("", "C", "CC", "CCC", "CD", "D", "DC", "DCC", "DCCC", "CM"))


def int_to_roman(n: int) -> str:
    """Roman numerals of 1..3999; fifteen '#' otherwise, as PostgreSQL."""
    if not 1 <= n <= 3999:
        return "#" * 15
    out = "M" * (n // 1000)
    for power in (2, 1, 0):
        out += _RM[power][n // 10 ** power % 10]
    return out


_HALF_UP = decimal.Context(prec=1000, rounding=decimal.ROUND_HALF_UP)


def _round_numeric(x: Decimal, scale: int) -> Decimal:
    q = x.quantize(Decimal(1).scaleb(-scale), context=_HALF_UP)
    return q.copy_abs() if q == 0 else q  # numeric has no negative zero


def numeric_sci(x: Decimal, scale: int) -> str:
    """PostgreSQL's numeric_out_sci: the significand rounded (half away from zero) to
    `scale` places after the exponent of the unrounded leading digit, 'e', the signed
    exponent of at least two digits. A significand that rounds up to 10 stays so."""
    exponent = x.adjusted() if x != 0 else 0
    sig = _round_numeric(x.scaleb(-exponent), max(scale, 0))
    return f"{sig:f}e{exponent:+03d}"


def _fill(pre: int, post: int) -> str:
    """The '#' overflow string: pre + post + 1 marks, a '.' after the pre-digits."""
    s = ["#"] * (pre + post + 1)
    s[pre] = "."
    return "".join(s)


def _to_int4(v: int) -> int:
    if not -2**31 <= v < 2**31:
        raise errors.NumericOutOfRange("integer out of range")
    return v


def number_digits(value, kind: str, num: NumDesc) -> tuple[str, str, int, NumDesc]:
    """(digits string, sign '+'/'-', leading blanks, description adjusted) for one value
    of kind 'int4', 'int8', 'numeric', 'float4' or 'float8', as PostgreSQL's *_to_char
    functions prepare it for NUM_processor."""
    num = _copy(num)
    fl = num.flags
    if "RN" in fl:
        if kind in ("float4", "float8"):
            # C's (int) rint(x): a value out of int's range becomes INT_MIN, no numeral
            r = round(value) if math.isfinite(value) and abs(value) < 2**31 else 0
            return int_to_roman(r), "+", 0, num
        if kind == "numeric":
            r = int(_round_numeric(value, 0))
        else:
            r = value
        return int_to_roman(_to_int4(r)), "+", 0, num
    if "EEEE" in fl:
        if kind in ("float4", "float8") and (math.isnan(value) or math.isinf(value)):
            s = ["#"] * (num.pre + num.post + 6)
            s[0], s[num.pre + 1] = " ", "."
            return "".join(s), "+", 0, num
        if kind in ("int4", "float4", "float8"):
            s = "%+.*e" % (num.post, float(value))
            return (" " + s[1:] if s[0] == "+" else s), "+", 0, num
        s = numeric_sci(Decimal(value), num.post)
        return (s if s.startswith("-") else " " + s), "+", 0, num
    if kind in ("int4", "int8"):
        if "V" in fl:
            value = value * 10 ** num.multi
            if kind == "int4":  # C's int multiplication, wrapped
                value = (value + 2**31) % 2**32 - 2**31
            elif not -2**63 <= value < 2**63:
                raise errors.NumericOutOfRange("bigint out of range")
            num.pre += num.multi
        digits = str(abs(value))
        sign = "-" if value < 0 else "+"
        pre_len = len(digits)
        if num.post:
            digits += "." + "0" * num.post
    elif kind == "numeric":
        if "V" in fl:
            value = value * Decimal(10) ** num.multi
            num.pre += num.multi
        text = f"{_round_numeric(value, num.post):f}"
        sign, digits = ("-", text[1:]) if text.startswith("-") else ("+", text)
        pre_len = digits.find(".") if "." in digits else len(digits)
    else:
        dig = 6 if kind == "float4" else 15
        val = value
        if "V" in fl:
            val = _float4(value * _float4(10.0 ** num.multi)) if kind == "float4" \
                else value * 10.0 ** num.multi
            num.pre += num.multi
        # PostgreSQL measures NaN and infinity as 'NaN' and 'Infinity'
        pre_len = 3 if math.isnan(val) else 8 if math.isinf(val) else len("%.0f" % abs(val))
        if pre_len >= dig:
            num.post = 0
        elif pre_len + num.post > dig:
            num.post = dig - pre_len
        if math.isnan(val):
            text = "NaN"
        elif math.isinf(val):  # no digits fit: the '#' fill, signed
            return _fill(num.pre, num.post), "-" if val < 0 else "+", 0, num
        else:
            text = "%.*f" % (num.post, val)
        sign, digits = ("-", text[1:]) if text.startswith("-") else ("+", text)
        pre_len = digits.find(".") if "." in digits else len(digits)
    pre_spaces = 0
    if pre_len < num.pre:
        pre_spaces = num.pre - pre_len
    elif pre_len > num.pre:
        digits = _fill(num.pre, num.post)
    return digits, sign, pre_spaces, num


def _float4(v: float) -> float:
    import struct
    return struct.unpack("f", struct.pack("f", v))[0]


def format_number(value, kind: str, fmt: str) -> str:
    """to_char(value, fmt) of one number of kind int4/int8/numeric/float4/float8."""
    if not fmt:
        return ""
    nodes, num = parse_number_template(fmt)
    digits, sign, pre_spaces, num = number_digits(value, kind, num)
    return _num_to_char(nodes, num, digits, pre_spaces, sign)


def _last_relevant(number: str) -> int | None:
    """Index of the last non-zero digit after the point (the point itself when all are
    zero), None without a point."""
    p = number.find(".")
    if p < 0:
        return None
    last = p
    for i in range(p + 1, len(number)):
        if number[i] != "0":
            last = i
    return last


class _NumOut:
    """NUM_processor's state while writing one number."""

    def __init__(self, num: NumDesc, number: str, pre_spaces: int, sign: str):
        self.num, self.number, self.pre_spaces, self.sign = num, number, pre_spaces, sign
        self.out: list[str] = []
        self.p = 0               # position in number
        self.num_curr = 0
        self.num_in = False
        self.sign_wrote = False
        self.last_relevant: int | None = None
        self.num_count = 0

    def cur(self) -> str:
        return self.number[self.p] if self.p < len(self.number) else "\0"

    def relevant_is_point(self) -> bool:
        lr = self.last_relevant
        return lr is not None and lr < len(self.number) and self.number[lr] == "."

    def predec_space(self) -> bool:
        fl = self.num.flags
        return ("0" not in fl and self.p == 0 and self.number[:1] == "0"
                and self.num.post != 0)

    def numpart(self, key: str) -> None:
        num, fl = self.num, self.num.flags
        if "RN" in fl:
            return
        self.num_in = False
        if (not self.sign_wrote
                and (self.num_curr >= self.pre_spaces
                     or ("0" in fl and num.zero_start == self.num_curr))
                and (not self.predec_space() or self.relevant_is_point())):
            if "S" in fl:
                if num.lsign == "pre":
                    self.out.append("-" if self.sign == "-" else "+")
                    self.sign_wrote = True
            elif "PR" in fl:
                self.out.append(" " if self.sign == "+" else "<")
                self.sign_wrote = True
            elif self.sign == "+":
                if "FM" not in fl:
                    self.out.append(" ")
                self.sign_wrote = True
            elif self.sign == "-":
                self.out.append("-")
                self.sign_wrote = True
        if self.num_curr < self.pre_spaces and (num.zero_start > self.num_curr or "0" not in fl):
            if "FM" not in fl:
                self.out.append(" ")
        elif "0" in fl and self.num_curr < self.pre_spaces and num.zero_start <= self.num_curr:
            self.out.append("0")
            self.num_in = True
        else:
            c = self.cur()
            if c == ".":
                if not self.relevant_is_point() or "FM" in fl:
                    self.out.append(".")
            elif self.last_relevant is not None and self.p > self.last_relevant and key != "0":
                pass  # FM: a 9 past the last significant digit prints nothing
            elif self.predec_space():
                if "FM" not in fl:
                    self.out.append(" ")
                elif self.relevant_is_point():
                    self.out.append("0")
            else:
                self.out.append(c)
                self.num_in = True
            if self.p < len(self.number):
                self.p += 1
        end = self.num_count + (1 if self.pre_spaces else 0) + (1 if "." in fl else 0)
        if self.last_relevant is not None and self.last_relevant == self.p:
            end = self.num_curr
        if self.num_curr + 1 == end:
            if self.sign_wrote and "PR" in fl:
                self.out.append(" " if self.sign == "+" else ">")
            elif "S" in fl and num.lsign == "post":
                self.out.append("-" if self.sign == "-" else "+")
        self.num_curr += 1


def _num_to_char(nodes, num: NumDesc, number: str, pre_spaces: int, sign: str) -> str:
    """PostgreSQL's NUM_processor writing `number` (digits prepared by number_digits)."""
    fl = num.flags
    if num.zero_start:
        num.zero_start -= 1
    if "EEEE" in fl:
        return number
    if "RN" in fl:
        num.lsign, num.pre_lsign_num, num.post, num.pre = "", 0, 0, 0
        pre_spaces, sign = 0, ""
        num.flags = fl = {"RN"} | ({"FM"} & fl)
    st = _NumOut(num, number, pre_spaces, sign)
    if fl & {"PL", "MI"}:
        st.sign_wrote = not ("PL" in fl and "MI" not in fl)
    else:
        if sign != "-" and "FM" in fl:
            fl.discard("PR")
        st.sign_wrote = sign == "+" and "FM" in fl and "S" not in fl
        if num.lsign == "pre" and num.pre == num.pre_lsign_num:
            num.lsign = "post"
    st.num_count = num.post + num.pre - 1
    if "FM" in fl and "." in fl:
        st.last_relevant = _last_relevant(number)
        if st.last_relevant is not None and num.zero_end > pre_spaces:
            last_zero = min(len(number) - 1, num.zero_end - pre_spaces)
            st.last_relevant = max(st.last_relevant, last_zero)
    if not st.sign_wrote and pre_spaces == 0:
        st.num_count += 1
    out = st.out
    for n in nodes:
        if n.key is None:
            out.append(n.text)
            continue
        k = n.key
        if k in ("9", "0", ".", "D"):
            st.numpart(k)
        elif k in (",", "G"):
            if not st.num_in:
                if "FM" not in fl:
                    out.append(" ")
            else:
                out.append(",")
        elif k == "L":
            out.append(" ")  # the C locale has no currency symbol
        elif k in ("RN", "rn"):
            roman = number[st.p:]
            roman = roman.lower() if k == "rn" else roman
            out.append(roman if "FM" in fl else roman.rjust(15))
        elif k in ("TH", "th"):
            if "RN" in fl or number[:1] == "#" or sign == "-" or "." in fl:
                continue
            out.append(_get_th(number, k == "TH"))
        elif k == "MI":
            if sign == "-":
                out.append("-")
            elif "FM" not in fl:
                out.append(" ")
        elif k == "PL":
            if sign == "+":
                out.append("+")
            elif "FM" not in fl:
                out.append(" ")
        elif k == "SG":
            out.append(sign or "\0")
    return "".join(out).split("\0", 1)[0]


def _get_th(number: str, upper: bool) -> str:
    last = number[-1:]
    if not last.isdigit():
        raise errors.InvalidTextRepresentation(f'"{number}" is not a number')
    tens = 1 if len(number) > 1 and number[-2] == "1" else 0
    return ordinal(int(last) + 10 * tens, upper)
