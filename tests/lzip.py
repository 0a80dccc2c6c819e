#!/usr/bin/env python3
"""lzip.py [-c] FILE: FILE compressed as one lzip member (format version
1) on standard output, as `lzip -c FILE` writes it, for tests on a
machine without lzip: the header ("LZIP", version 1, the dictionary size
coded in one byte), the LZMA data with its end marker (lc=3 lp=0 pb=2,
as the format fixes), then the CRC32 of the data, its size and the
member's size (little-endian, 4 + 8 + 8 bytes)."""
import lzma
import struct
import sys
import zlib

DICT_LOG = 20  # 1 MiB: the coded byte is the log alone (no fraction off)

data = open([a for a in sys.argv[1:] if a != "-c"][0], "rb").read()
body = lzma.compress(data, format=lzma.FORMAT_RAW, filters=[{
    "id": lzma.FILTER_LZMA1, "dict_size": 1 << DICT_LOG, "lc": 3, "lp": 0, "pb": 2}])
head = b"LZIP" + bytes([1, DICT_LOG])
size = len(head) + len(body) + 20
sys.stdout.buffer.write(head + body + struct.pack("<IQQ", zlib.crc32(data), len(data), size))
