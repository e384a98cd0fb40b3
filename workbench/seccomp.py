"""A seccomp filter that refuses terminal injection: ioctl TIOCSTI and TIOCLINUX give EPERM.

TIOCSTI pushes characters into a terminal's input queue, as if typed; the kernel allows it on
one's own terminal unless `dev.tty.legacy_tiocsti` is 0. The sandbox does not use bwrap's
`--new-session` (it would cut the shells off from their pane), so this filter, handed to bwrap
with `--seccomp FD`, is the guard. A small classic-BPF program, assembled here: no dependency.

It checks the architecture the call came in with (a 64-bit process can make 32-bit calls), the
ioctl number of that ABI, and only the low 32 bits of the request (the kernel reads it as an
unsigned int; comparing all 64 bits lets a set high half through).
"""

from __future__ import annotations

import platform
import struct

TIOCSTI = 0x5412
TIOCLINUX = 0x541C
EPERM = 1

_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
# offsets in struct seccomp_data (little-endian): nr, arch, args[1]'s low half
_NR, _ARCH, _ARG1_LOW = 0, 4, 24

# machine -> [(audit arch, ioctl syscall numbers of that ABI)]
_ABIS: dict[str, list[tuple[int, tuple[int, ...]]]] = {
    # x86_64, x32 (514 | __X32_SYSCALL_BIT), i386
    "x86_64": [(0xC000003E, (16, 0x40000202)), (0x40000003, (54,))],
    # aarch64, arm (compat)
    "aarch64": [(0xC00000B7, (29,)), (0x40000028, (54,))],
}


def _assemble(code: list[tuple[str, int, str, str]]) -> bytes:
    """(op, k, label if true, label if false) with ("label", 0, NAME, "") markers -> sock_filter[]."""
    labels: dict[str, int] = {}
    body: list[tuple[str, int, str, str]] = []
    for item in code:
        if item[0] == "label":
            labels[item[2]] = len(body)
        else:
            body.append(item)
    out = b""
    for i, (op, k, yes, no) in enumerate(body):
        if op == "ld":
            out += struct.pack("<HBBI", _LD_W_ABS, 0, 0, k)
        elif op == "ret":
            out += struct.pack("<HBBI", _RET_K, 0, 0, k)
        else:  # jeq: relative jumps, forward only
            jt, jf = labels[yes] - i - 1, labels[no] - i - 1
            assert 0 <= jt < 256 and 0 <= jf < 256
            out += struct.pack("<HBBI", _JEQ_K, jt, jf, k)
    return out


def terminal_injection_filter(machine: str | None = None) -> bytes | None:
    """The BPF program for this machine; None where its syscall numbers are not known here."""
    abis = _ABIS.get(machine or platform.machine())
    if abis is None:
        return None
    code: list[tuple[str, int, str, str]] = [("ld", _ARCH, "", "")]
    for n, (arch, _) in enumerate(abis):
        code.append(("jeq", arch, f"abi{n}", f"arch{n + 1}" if n + 1 < len(abis) else "allow"))
        if n + 1 < len(abis):
            code.append(("label", 0, f"arch{n + 1}", ""))
    for n, (_, numbers) in enumerate(abis):
        code += [("label", 0, f"abi{n}", ""), ("ld", _NR, "", "")]
        for m, number in enumerate(numbers):
            last = m + 1 == len(numbers)
            code.append(("jeq", number, "request", "allow" if last else f"abi{n}.{m + 1}"))
            if not last:
                code.append(("label", 0, f"abi{n}.{m + 1}", ""))
    code += [
        ("label", 0, "request", ""),
        ("ld", _ARG1_LOW, "", ""),
        ("jeq", TIOCSTI, "deny", "linux"),
        ("label", 0, "linux", ""),
        ("jeq", TIOCLINUX, "deny", "allow"),
        ("label", 0, "allow", ""),
        ("ret", _RET_ALLOW, "", ""),
        ("label", 0, "deny", ""),
        ("ret", _RET_ERRNO | EPERM, "", ""),
    ]
    return _assemble(code)


def legacy_tiocsti() -> bool | None:
    """The kernel's own switch (`dev.tty.legacy_tiocsti`); None on kernels without it."""
    try:
        with open("/proc/sys/dev/tty/legacy_tiocsti") as fh:
            return fh.read().strip() == "1"
    except OSError:
        return None
