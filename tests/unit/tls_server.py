#!/usr/bin/python3
"""A real TLS server for test_tls.c (Python's ssl, i.e. OpenSSL): serves one connection on
127.0.0.1, implicit TLS or after an SMTP-like STARTTLS exchange, then answers each line with
"echo: LINE" until QUIT. Writes its port to --port-file when listening, the SNI name the
client sent to --sni-file, and the outcome of the handshake to --log-file.

--inject sends extra plaintext right after the STARTTLS go-ahead (RFC 3207 section 6: the
client must discard it). --cert2/--key2 are served when the client's SNI is --sni-name.
--client-ca requires a client certificate signed by that CA."""
import argparse, os, socket, ssl, sys

ap = argparse.ArgumentParser()
ap.add_argument("--cert", required=True)
ap.add_argument("--key", required=True)
ap.add_argument("--port-file", required=True)
ap.add_argument("--starttls", action="store_true")
ap.add_argument("--inject", default="")
ap.add_argument("--sni-file")
ap.add_argument("--sni-name")
ap.add_argument("--cert2")
ap.add_argument("--key2")
ap.add_argument("--client-ca")
ap.add_argument("--log-file")
ap.add_argument("--big", type=int, default=0, help="reply to BIG with this many bytes in one line")
a = ap.parse_args()

def log(s):
    if a.log_file:
        with open(a.log_file, "a") as f:
            f.write(s + "\n")

ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.minimum_version = ssl.TLSVersion.TLSv1_2
ctx.load_cert_chain(a.cert, a.key)
if a.client_ca:
    ctx.verify_mode = ssl.CERT_REQUIRED
    ctx.load_verify_locations(a.client_ca)
ctx2 = None
if a.cert2:
    ctx2 = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx2.load_cert_chain(a.cert2, a.key2)

def on_sni(sock, name, c):
    if a.sni_file:
        with open(a.sni_file, "w") as f:
            f.write(name or "")
    if ctx2 and name == a.sni_name:
        sock.context = ctx2
ctx.sni_callback = on_sni

ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", 0))
ls.listen(1)
ls.settimeout(20)
with open(a.port_file + ".tmp", "w") as f:
    f.write(str(ls.getsockname()[1]))
os.rename(a.port_file + ".tmp", a.port_file)
try:
    conn, _ = ls.accept()
except socket.timeout:
    sys.exit(1)
conn.settimeout(20)
if a.starttls:
    conn.sendall(b"220 test ESMTP\r\n")
    line = b""
    while not line.endswith(b"\n"):
        c = conn.recv(1)
        if not c:
            sys.exit(1)
        line += c
    if line.strip().upper() != b"STARTTLS":
        conn.sendall(b"500 expected STARTTLS\r\n")
        sys.exit(1)
    # the go-ahead and the injection in one write, so they arrive in one segment
    conn.sendall(b"220 go ahead\r\n" + (a.inject.encode() + b"\r\n" if a.inject else b""))
try:
    tls = ctx.wrap_socket(conn, server_side=True)
except (ssl.SSLError, OSError) as e:
    log("handshake failed: %s" % e)
    sys.exit(0)
log("handshake ok %s %s" % (tls.version(), tls.cipher()[0]))
if a.client_ca:
    peer = tls.getpeercert()
    log("client cert %s" % dict(x[0] for x in peer["subject"])["commonName"])
f = tls.makefile("rb")
while True:
    try:
        line = f.readline()
    except (ssl.SSLError, OSError) as e:
        log("read failed: %s" % e)
        break
    if not line:
        log("eof")
        break
    s = line.rstrip(b"\r\n")
    log("got %d bytes" % len(line))
    if s == b"QUIT":
        tls.sendall(b"221 bye\r\n")
        break
    if s == b"BIG":
        tls.sendall(b"x" * a.big + b"\r\n")
        continue
    tls.sendall(b"echo: " + s + b"\r\n")
try:
    tls.unwrap()
except Exception:
    pass
tls.close()
