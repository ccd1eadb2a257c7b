"""Decodes QR code SVGs (one unit square per dark module, as Sesame draws them) with zxing-cpp, a decoder written
independently of Sesame's encoder. Prints a JSON list: for each file given, the texts found in it.
"""
import json
import re
import sys

import zxingcpp
from PIL import Image


def raster(svg, scale=4):
    """The SVG's unit squares painted on a white image, `scale` pixels a module."""
    side = int(re.search(r'viewBox="0 0 (\d+) \d+"', svg).group(1))
    image = Image.new("L", (side * scale, side * scale), 255)
    pixels = image.load()
    for x, y in re.findall(r"M(\d+),(\d+)h1v1h-1z", svg):
        for dx in range(scale):
            for dy in range(scale):
                pixels[int(x) * scale + dx, int(y) * scale + dy] = 0
    return image


def decode(image):
    return [{"text": result.text, "format": str(result.format)} for result in zxingcpp.read_barcodes(image)]


if __name__ == "__main__":
    out = []
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as file:
            out.append(decode(raster(file.read())))
    print(json.dumps(out))
