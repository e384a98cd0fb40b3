"""The sandbox's seccomp filter: no terminal injection, no signal that remakes tmux's socket.

ioctl TIOCSTI and TIOCLINUX give EPERM, and so does SIGUSR1 to the sandbox's tmux server.

TIOCSTI pushes characters into a terminal's input queue, as if typed; the kernel allows it on
one's own terminal unless `dev.tty.legacy_tiocsti` is 0. The sandbox does not use bwrap's
`--new-session` (it would cut the shells off from their pane), so this filter, handed to bwrap
with `--seccomp FD`, is the guard. A small classic-BPF program, assembled here: no dependency.

It checks the architecture the call came in with (a 64-bit process can make 32-bit calls), the
syscall numbers of that ABI, and only the low 32 bits of an argument (the kernel reads the
ioctl request as an unsigned int and a pid as an int; comparing 64 bits lets a set high half
through).
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
# offsets in struct seccomp_data: nr, arch
_NR, _ARCH = 0, 4

SIGUSR1 = 10
SERVER_PID = 2  # the tmux server in the sandbox's pid namespace (bwrap's init is 1)
_X32 = 0x40000000

# Per ABI: the audit arch and the syscall numbers of (ioctl, kill, tkill, tgkill, rt_sigqueueinfo,
# rt_tgsigqueueinfo, pidfd_send_signal). x32 shares x86_64's arch, with its numbers | _X32.
_CALLS = ("ioctl", "kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_send_signal")
_ABIS: dict[str, list[tuple[int, tuple[int, ...]]]] = {
    "x86_64": [
        (0xC000003E, (16, 62, 200, 234, 129, 297, 424)),
        (0xC000003E, tuple(n | _X32 for n in (514, 62, 200, 234, 524, 536, 424))),
        (0x40000003, (54, 37, 238, 270, 178, 335, 424)),  # i386
    ],
    "aarch64": [
        (0xC00000B7, (29, 129, 130, 131, 138, 240, 424)),
        (0x40000028, (54, 37, 238, 268, 178, 363, 424)),  # arm
    ],
}
# where each call's signal is (argument index), and whether its first argument names the target
_SIGNAL_ARG = {"kill": 1, "tkill": 1, "tgkill": 2, "rt_sigqueueinfo": 1, "rt_tgsigqueueinfo": 2, "pidfd_send_signal": 1}


def _arg_low(index: int) -> int:
    return 16 + 8 * index  # seccomp_data.args[index], low 32 bits (little-endian)


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
    """The BPF program for this machine; None where its syscall numbers are not known here.

    Refused with EPERM: ioctl TIOCSTI and TIOCLINUX (terminal injection), and SIGUSR1 to the
    tmux server (pid 2, or to all with -1, or its group -2) or through a pidfd: on SIGUSR1 tmux
    makes its socket anew, under a name sandboxed commands could reach.
    """
    abis = _ABIS.get(machine or platform.machine())
    if abis is None:
        return None
    code: list[tuple[str, int, str, str]] = []
    arches = list(dict.fromkeys(arch for arch, _ in abis))
    for n, arch in enumerate(arches):
        code += [("label", 0, f"arch{n}", "")] if n else [("ld", _ARCH, "", "")]
        code.append(("jeq", arch, f"nr{n}", f"arch{n + 1}" if n + 1 < len(arches) else "allow"))
    for n, arch in enumerate(arches):
        code += [("label", 0, f"nr{n}", ""), ("ld", _NR, "", "")]
        numbers = [(name, nr) for a, nrs in abis if a == arch for name, nr in zip(_CALLS, nrs, strict=True)]
        for m, (name, nr) in enumerate(numbers):
            target = (
                "request"
                if name == "ioctl"
                else f"sig{_SIGNAL_ARG[name]}" + ("any" if name == "pidfd_send_signal" else "")
            )
            code.append(("jeq", nr, target, f"nr{n}.{m + 1}" if m + 1 < len(numbers) else "allow"))
            if m + 1 < len(numbers):
                code.append(("label", 0, f"nr{n}.{m + 1}", ""))
    code += [
        ("label", 0, "request", ""),
        ("ld", _arg_low(1), "", ""),
        ("jeq", TIOCSTI, "deny", "linux"),
        ("label", 0, "linux", ""),
        ("jeq", TIOCLINUX, "deny", "allow"),
        ("label", 0, "sig1any", ""),
        ("ld", _arg_low(1), "", ""),
        ("jeq", SIGUSR1, "deny", "allow"),
        ("label", 0, "sig1", ""),
        ("ld", _arg_low(1), "", ""),
        ("jeq", SIGUSR1, "target", "allow"),
        ("label", 0, "sig2", ""),
        ("ld", _arg_low(2), "", ""),
        ("jeq", SIGUSR1, "target", "allow"),
        ("label", 0, "target", ""),
        ("ld", _arg_low(0), "", ""),
        ("jeq", SERVER_PID, "deny", "all"),
        ("label", 0, "all", ""),
        ("jeq", 0xFFFFFFFF, "deny", "group"),  # -1: every process it may signal
        ("label", 0, "group", ""),
        ("jeq", (-SERVER_PID) & 0xFFFFFFFF, "deny", "allow"),
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
