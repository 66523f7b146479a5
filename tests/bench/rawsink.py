"""A minimal SMTP sink for the benchmarks: one thread per connection, no parsing beyond what the
protocol needs, so that its own cost stays far below the MTA's. It records the moment each
message's end of data arrived (time.perf_counter) and the message count; nothing else."""
import socket
import threading
import time


class RawSink:
    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.times = []
        self.connections = 0
        self.lock = threading.Lock()
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def count(self):
        return len(self.times)

    def _accept(self):
        while not self.stopped:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.connections += 1
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
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
        self.stopped = True
        # shutdown wakes the accept() thread; close alone leaves it blocked, and it would later
        # take a connection meant for the next sink that gets the same descriptor number
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
