"""An aiosmtpd SMTP server for tests. It records every transaction (envelope sender, recipients,
ESMTP parameters, exact bytes) and can be told to answer chosen commands with chosen replies,
to count connections, and to require AUTH. STARTTLS and TLS support hang off the same class."""
import asyncio
import threading

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP


class Received:
    def __init__(self, mail_from, rcpt_tos, data, mail_options, rcpt_options, peer):
        self.mail_from = mail_from
        self.rcpt_tos = rcpt_tos
        self.data = data
        self.mail_options = mail_options
        self.rcpt_options = rcpt_options
        self.peer = peer

    def __repr__(self):
        return f"<Received from={self.mail_from!r} to={self.rcpt_tos!r} {len(self.data)} bytes>"


class Handler:
    def __init__(self, sink):
        self.sink = sink

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        reply = self.sink.rcpt_replies.get(address)
        if reply:
            return reply
        envelope.rcpt_tos.append(address)
        envelope.rcpt_options.append(rcpt_options)
        return "250 OK"

    async def handle_MAIL(self, server, session, envelope, address, mail_options):
        if self.sink.mail_reply:
            return self.sink.mail_reply
        envelope.mail_from = address
        envelope.mail_options.extend(mail_options)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        if self.sink.data_replies:
            reply = self.sink.data_replies.pop(0)
            if reply:
                return reply
        self.sink.messages.append(Received(envelope.mail_from, list(envelope.rcpt_tos),
                                           envelope.original_content or envelope.content,
                                           list(envelope.mail_options), list(envelope.rcpt_options),
                                           session.peer))
        return "250 2.0.0 OK queued"


class CountingSMTP(SMTP):
    def connection_made(self, transport):
        self.sink_ref.connections += 1
        super().connection_made(transport)


class SmtpSink:
    def __init__(self, host="127.0.0.1", port=0, **smtp_kwargs):
        self.host = host
        self.port = port
        self.messages = []
        self.rcpt_replies = {}   # address -> "550 5.1.1 no such user"
        self.mail_reply = None   # e.g. "451 4.3.0 try later"
        self.data_replies = []   # consumed one per DATA; None means accept
        self.connections = 0
        self.smtp_kwargs = dict(smtp_kwargs)
        self.smtp_kwargs.setdefault("decode_data", False)
        self.controller = None

    def start(self):
        sink = self

        class _SMTP(CountingSMTP):
            sink_ref = sink

        class _Controller(Controller):
            def factory(self_inner):
                return _SMTP(self_inner.handler, **sink.smtp_kwargs)

        if self.port == 0:
            import socket
            s = socket.socket()
            s.bind((self.host, 0))
            self.port = s.getsockname()[1]
            s.close()
        self.controller = _Controller(Handler(self), hostname=self.host, port=self.port)
        self.controller.start()
        return self

    def stop(self):
        if self.controller:
            self.controller.stop()
            self.controller = None
