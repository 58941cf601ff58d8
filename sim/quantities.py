"""``resource.Quantity`` as kube-apiserver reads and writes it back: ``parse`` refuses what
``resource.ParseQuantity`` refuses (with its error text) and answers the canonical form a stored quantity
is written in (``0.5`` → ``500m``, ``1000m`` → ``1``, ``2048Mi`` → ``2Gi``, ``1e3`` stays ``1e3``).

The value keeps its format (binary ``Ki``..``Ei``, decimal ``n``..``E``, or an ``e`` exponent), is rounded
up to nano units, and is written with the largest suffix that keeps an integer mantissa; a binary value
below 1024 in magnitude or not whole is written in decimal.
"""

from __future__ import annotations

from decimal import ROUND_UP, Decimal, InvalidOperation

FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
SUFFIX_ERROR = "unable to parse quantity's suffix"
NUMERIC_ERROR = "unable to parse numeric part of quantity"

_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {v: k for k, v in _DECIMAL.items()}
_BINARY_SUFFIX = {v: k for k, v in _BINARY.items()}
_NANO = Decimal("1e-9")


class QuantityError(ValueError):
    """A quantity ``resource.ParseQuantity`` refuses; ``str()`` is its error."""


def _digits(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isascii() and text[pos].isdigit():
        pos += 1
    return pos


def _split(text: str) -> tuple[str, str]:
    """(number, suffix) as ``parseQuantityString`` splits them."""
    pos = 1 if text[:1] in ("+", "-") else 0
    pos = _digits(text, pos)
    if pos < len(text) and text[pos] == ".":
        pos = _digits(text, pos + 1)
    number_end = pos
    while pos < len(text) and text[pos] in "eEinumkKMGTP":
        pos += 1
    if pos < len(text) and text[pos] in "+-":
        pos += 1
    if _digits(text, pos) < len(text):
        raise QuantityError(FORMAT_ERROR)
    return text[:number_end], text[number_end:]


def parse(text: str) -> str:
    """The canonical text of a quantity; ``QuantityError`` with kube's message when it does not parse."""
    text = text.strip()
    if not text:
        raise QuantityError(FORMAT_ERROR)
    number, suffix = _split(text)
    if suffix in _BINARY:
        fmt, scale = "binary", Decimal(1024) ** _BINARY[suffix]
    elif suffix in _DECIMAL:
        fmt, scale = "decimal", Decimal(10) ** _DECIMAL[suffix]
    elif len(suffix) > 1 and suffix[0] in "eE" and suffix[1:].lstrip("+-").isdigit():
        fmt, scale = "exponent", Decimal(10) ** int(suffix[1:])
    else:
        raise QuantityError(SUFFIX_ERROR)
    digits = number.lstrip("+-")
    if not digits.replace(".", "", 1):
        mantissa = Decimal(0)  # Go reads a sign or dot alone as zero
    else:
        try:
            mantissa = Decimal(number)
        except InvalidOperation:
            raise QuantityError(NUMERIC_ERROR) from None
    return _canonical((mantissa * scale).quantize(_NANO, rounding=ROUND_UP), fmt)


def _canonical(value: Decimal, fmt: str) -> str:
    if value == 0:
        return "0"
    if fmt == "binary" and abs(value) >= 1024 and value == value.to_integral_value():
        whole, power = int(value), 0
        while power < 6 and whole % 1024 == 0:
            whole //= 1024
            power += 1
        return f"{whole}{_BINARY_SUFFIX.get(power, '')}"
    nanos, exponent = int(value / _NANO), -9
    while nanos % 1000 == 0 and exponent < 18:
        nanos //= 1000
        exponent += 3
    if fmt == "exponent":
        return f"{nanos}e{exponent}" if exponent else str(nanos)
    return f"{nanos}{_DECIMAL_SUFFIX[exponent]}"
