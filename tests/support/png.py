"""A minimal PNG reader (stdlib only) for checking what `rsvg-convert` drew, pixel by pixel.

Reads 8-bit, non-interlaced greyscale/RGB/RGBA images (what rsvg-convert writes) into rows of
RGBA tuples; anything else raises, so a test never silently reads garbage.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

Pixel = tuple[int, int, int, int]
_CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def read_png(path: Path) -> list[list[Pixel]]:
    """Rows of RGBA pixels of the PNG at ``path``."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        chunk = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        elif kind == b"IEND":
            break
    assert header is not None, "no IHDR"
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or interlace != 0 or colour not in _CHANNELS:
        raise ValueError(f"unsupported PNG (depth {depth}, colour type {colour}, interlace {interlace})")
    bpp = _CHANNELS[colour]
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows: list[list[Pixel]] = []
    prev = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                line[i] = (line[i] + _paeth(a, b, c)) & 0xFF
        prev = line
        row: list[Pixel] = []
        for x in range(width):
            px = line[x * bpp : (x + 1) * bpp]
            if colour == 0:
                row.append((px[0], px[0], px[0], 255))
            elif colour == 4:
                row.append((px[0], px[0], px[0], px[1]))
            elif colour == 2:
                row.append((px[0], px[1], px[2], 255))
            else:
                row.append((px[0], px[1], px[2], px[3]))
        rows.append(row)
    return rows
