"""What the benchmark's tools share underneath: the repository's root, the error meant for the person at the
terminal, the tools' log line and free loopback ports (stackctl, the throw-away PostgreSQL, the harness, the suites)."""
from __future__ import annotations

import random
import socket
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class ToolError(RuntimeError):
    """A failure with a message meant for the person at the terminal."""


def log(msg: str) -> None:
    print(f"[stackctl] {msg}", file=sys.stderr, flush=True)


# Ports free_port has handed out in this process: services started together each get their own.
_HANDED_OUT: set[int] = set()
_PORT_LOCK = threading.Lock()
LOWEST_PORT = 10000


def ephemeral_ports(path: str = "/proc/sys/net/ipv4/ip_local_port_range") -> tuple[int, int]:
    """The kernel's range for the local ports of outgoing connections (and of a bind to port 0)."""
    try:
        lo, hi = (int(x) for x in Path(path).read_text().split())
        return lo, hi
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default


def free_port(avoid: int | None = None) -> int:
    """A loopback port nothing listens on now, not handed out before by this process, and not `avoid` (a port
    already handed out for another purpose). Drawn below the kernel's ephemeral range where there is room: between
    this call and the service's bind, a port of that range can become the local end of any outgoing connection (the
    suites open thousands), and the service would not start ("Address already in use")."""
    lo = ephemeral_ports()[0]
    with _PORT_LOCK:
        if lo - LOWEST_PORT >= 1000:
            for _ in range(200):
                port = random.randrange(LOWEST_PORT, lo)
                if port == avoid or port in _HANDED_OUT:
                    continue
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                    try:
                        s.bind(("127.0.0.1", port))
                    except OSError:
                        continue
                _HANDED_OUT.add(port)
                return port
        while True:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            if port != avoid and port not in _HANDED_OUT:
                _HANDED_OUT.add(port)
                return port
