"""apcpack.py - APC packed integers, strings and capture folders for the
bats tests that write captures by hand (imported by the Python snippets
in tests/apcverify.bats and tests/apcdump.bats; kept independent of the
C code under test)."""

import struct


def p(v):
    """v as a packed (signed LEB128-style) integer."""
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        if (v == 0 and not b & 0x40) or (v == -1 and b & 0x40):
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


def s(t):
    """t (bytes) as a packed length and the bytes."""
    return p(len(t)) + t


CANARY = b"1\n2\r\n3\r4\n\r5"


def summary(canary=CANARY):
    """A protocol-680 Summary frame body: canary, three clocks, no attributes."""
    return p(1) + p(1) + s(canary) + p(1700000000000000000) + p(500) + p(100) + s(b"")


def block_counter(*kv, core=0, ts=20):
    """A Block Counter frame body on core: key 0 (the time ts), then each
    (key, value) of kv; by default key 0x11's value 5."""
    kv = kv or ((0x11, 5),)
    return p(5) + p(core) + p(0) + p(ts) + b"".join(p(k) + p(v) for k, v in kv)


def frames(bodies):
    """The frame bodies, each behind its little-endian int32 length word."""
    return b"".join(struct.pack("<i", len(b)) + b for b in bodies)


def write_cap(d, data):
    """Folder d as a capture: data as its data file, and a captured.xml
    declaring the one counter the tests use, key 0x11."""
    with open(d + "/0000000000", "wb") as f:
        f.write(data)
    with open(d + "/captured.xml", "w") as f:
        f.write('<?xml version="1.0"?>\n<captured version="1" protocol="680" type="Gator">'
                '<counters><counter key="0x11" type="T_cnt0"/></counters></captured>\n')
