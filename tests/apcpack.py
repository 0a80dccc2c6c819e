"""apcpack.py - APC packed integers and strings for the bats tests that
write captures by hand (imported by the Python snippets in
tests/apcverify.bats; kept independent of the C code under test)."""


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
