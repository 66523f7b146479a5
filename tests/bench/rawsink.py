"""A minimal SMTP sink for the benchmarks: one thread per connection, no parsing beyond what the
protocol needs, so that its own cost stays far below the MTA's. It records the moment each
message's end of data arrived (time.perf_counter) and the message count; nothing else."""
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from listener import Listener  # noqa: E402


class RawSink:
    def __init__(self):
        self.times = []
        self.lock = threading.Lock()
        # the shared listener: its close() waits for the accept thread, which otherwise could
        # take a later sink's socket that got the same descriptor number
        self.listener = Listener(self._serve, reuse=True)
        self.port = self.listener.port

    @property
    def connections(self):
        return self.listener.accepted

    @property
    def count(self):
        return len(self.times)

    def _serve(self, c):
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        buf = b""
        data = False
        try:
            c.sendall(b"220 rawsink ESMTP\r\n")
            while True:
                chunk = c.recv(65536)
                if not chunk:
                    return
                buf += chunk
                out = []
                while True:
                    if data:
                        end = buf.find(b"\r\n.\r\n")
                        if end < 0:
                            buf = buf[-4:]
                            break
                        buf = buf[end + 5:]
                        data = False
                        self.times.append(time.perf_counter())
                        out.append(b"250 2.0.0 queued\r\n")
                        continue
                    nl = buf.find(b"\r\n")
                    if nl < 0:
                        break
                    line, buf = buf[:nl].upper(), buf[nl + 2:]
                    if line.startswith(b"EHLO"):
                        out.append(b"250-rawsink\r\n250-PIPELINING\r\n250-8BITMIME\r\n250 ENHANCEDSTATUSCODES\r\n")
                    elif line.startswith(b"DATA"):
                        out.append(b"354 go\r\n")
                        data = True
                        buf = b"\r\n" + buf  # the end marker may follow at once
                    elif line.startswith(b"QUIT"):
                        c.sendall(b"".join(out) + b"221 bye\r\n")
                        return
                    else:
                        out.append(b"250 2.0.0 ok\r\n")
                if out:
                    c.sendall(b"".join(out))
        except OSError:
            return
        finally:
            c.close()

    def stop(self):
        self.listener.close()
