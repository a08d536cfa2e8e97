"""Code for a script that a program runs inside a terminal to talk to that terminal's own holder (the socket is
reachable: same user): `python script.py <data>/holders <id>.sock`."""

CONNECT = r"""
import json, os, socket, sys

holders, name = sys.argv[1], sys.argv[2]
fd = os.open(holders, os.O_RDONLY | os.O_DIRECTORY)


def connect():
    '''A greeted connection to the holder, and what came after its greeting.'''
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(f"/proc/self/fd/{fd}/{name}")
    s.sendall(b'{"op":"hello","version":2}\n')
    data = b""
    while b"\n" not in data:
        chunk, fds, _, _ = socket.recv_fds(s, 65536, 1)
        for f in fds:
            os.close(f)
        data += chunk
    return s, data.partition(b"\n")[2]
"""
