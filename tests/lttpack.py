"""lttpack.py - hand-made LTT traces for the bats tests (imported by the
Python snippets in tests/apcconv.bats; independent of the C reader).

A trace borrows its eventdefs/core.xml from one lttgen wrote, so the core
ids are lttgen's: 5 irq_entry, 7 schedchange, 21 process_exit, ...
(builtins: 0 facility_load, 17 block_start, 18 block_end)."""

import os
import shutil
import struct

IRQ_ENTRY, SCHEDCHANGE, PROCESS_FORK, PROCESS_EXIT = 5, 7, 20, 21


class Block:
    """One little-endian block of bs bytes: block_start at cycle c0 and
    time t0 (seconds, microseconds), events, then block_end at c1/t1."""

    def __init__(self, bs=4096, t0=(1000, 0), c0=1000, t1=(1001, 0), c1=1000 + 10**9, bid=0):
        self.bs, self.t1, self.c1, self.bid = bs, t1, c1, bid
        self.data = bytearray()
        self.ev(17, c0, self._stamp(t0, c0))

    def _stamp(self, t, c):
        return struct.pack("<IIQI", t[0], t[1], c, self.bid)

    def ev(self, eid, cycles, payload=b""):
        """An event: u16 id, low 32 bits of the cycle counter, payload."""
        self.data += struct.pack("<HI", eid, cycles & 0xffffffff) + payload

    def finish(self):
        """The block's bytes, its trailer the distance from block_end to
        the end of the block (the pre-August-2004 meaning)."""
        end = len(self.data)
        self.ev(18, self.c1, self._stamp(self.t1, self.c1))
        assert len(self.data) + 4 <= self.bs
        b = bytearray(self.bs)
        b[:len(self.data)] = self.data
        struct.pack_into("<I", b, self.bs - 4, self.bs - end)
        return bytes(b)


def irq_blocks(cpus=(0, 1), n=10):
    """Per CPU one block of n irq_entry events, 1000 cycles apart from
    2000 (CPU c's 10 c later): the whole trace the damage tests start from."""
    blocks = {}
    for cpu in cpus:
        b = Block()
        for k in range(n):
            b.ev(IRQ_ENTRY, 2000 + k * 1000 + cpu * 10, b"\x01\x00")
        blocks[cpu] = [b.finish()]
    return blocks


def bash_block():
    """A block where pid 5 (bash, as processes() names it) is switched in
    at 2000, then an irq_entry at 3000."""
    b = Block()
    b.ev(SCHEDCHANGE, 2000, struct.pack("<III", 0, 5, 0))
    b.ev(IRQ_ENTRY, 3000, b"\x01\x00")
    return b.finish()


def processes(*entries):
    """A control/processes block naming each (name, pid) of entries at
    cycle 1500: process event 10, the name, then 12 u32 (the pid first)."""
    procs = Block()
    for name, pid in entries:
        procs.ev(10, 1500, name + b"\0" + struct.pack("<12I", pid, *[0] * 11))
    return procs.finish()


def write_trace(d, core_xml, cpus, bs=4096, facilities=b"", processes=b"", extra_defs=None,
                bookmarks=None):
    """Folder d as a trace: cpus maps a CPU number to its list of block
    bytes; core_xml is the text of a core.xml; extra_defs maps more
    eventdefs file names to their text; bookmarks is the text of
    info/bookmarks.xml."""
    if os.path.exists(d):
        shutil.rmtree(d)
    for sub in ("eventdefs", "info", "control", "cpu"):
        os.makedirs(os.path.join(d, sub))
    with open(os.path.join(d, "info/system.xml"), "w") as f:
        f.write('<system node_name="h" cpu="%d" arch_size="ILP32" endian="LITTLE_ENDIAN" '
                'kernel_release="2.5" ltt_block_size="%d">x</system>\n' % (len(cpus), bs))
    defs = {"core.xml": core_xml}
    defs.update(extra_defs or {})
    for name, text in defs.items():
        with open(os.path.join(d, "eventdefs", name), "w") as f:
            f.write(text)
    for cpu, blocks in cpus.items():
        with open(os.path.join(d, "cpu", str(cpu)), "wb") as f:
            f.write(b"".join(blocks))
    for name, data in (("facilities", facilities), ("interrupts", b""), ("processes", processes)):
        with open(os.path.join(d, "control", name), "wb") as f:
            f.write(data)
    if bookmarks is not None:
        with open(os.path.join(d, "info/bookmarks.xml"), "w") as f:
            f.write(bookmarks)
