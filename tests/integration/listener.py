"""A TCP listener on 127.0.0.1 for scripted test servers: an accept thread hands each connection
to serve(conn) in a thread of its own. close() wakes the accept thread (shutdown), waits for it,
and only then releases the socket: an accept thread still running after its socket was closed
would take the next socket that gets the same descriptor number -- a later test's listener --
and answer its clients with this test's script (CI saw an agent of the mute-relay test greeted
with "250" by the malformed-greeting server of test_robust_smtp)."""
import socket
import threading


class Listener:
    def __init__(self, serve=None, port=0, backlog=64, reuse=False):
        self.sock = socket.socket()
        if reuse:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(backlog)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.conns = []
        self._serve_one = serve
        self._closed = False
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            if self._closed:
                c.close()
                return
            self.accepted += 1
            self.conns.append(c)
            if self._serve_one:
                threading.Thread(target=self._serve_one, args=(c,), daemon=True).start()

    def close(self):
        self._closed = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._thread.join(10)
        self.sock.close()
        for c in self.conns:
            try:
                c.close()
            except OSError:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
