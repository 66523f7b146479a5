#!/bin/sh
# Makes the test PKI for test_tls*.c in directory $1 with openssl: a trusted CA and an untrusted
# one, and server certificates for each case (valid, expired, not yet valid, wrong name,
# wildcard, CN only, RSA, client). EC P-256 keys keep it fast; one RSA key covers ECDHE_RSA.
set -e
D=$1
cd "$D"
cat > ca.cnf <<'CNF'
[ca]
default_ca = test_ca
[test_ca]
dir = .
database = index.txt
serial = serial
new_certs_dir = .
default_md = sha256
policy = any
copy_extensions = none
unique_subject = no
[any]
commonName = supplied
CNF
: > index.txt
echo 01 > serial
ec() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
mkca() { # name cn
	ec "$1.key"
	openssl req -x509 -new -key "$1.key" -subj "/CN=$2" -days 3650 -sha256 \
		-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
		-out "$1.pem" 2>/dev/null
}
# leaf name ca cn san start end [keyfile-is-rsa]
leaf() {
	if [ "$7" = rsa ]; then openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$1.key" 2>/dev/null
	else ec "$1.key"; fi
	openssl req -new -key "$1.key" -subj "/CN=$3" -out "$1.csr" 2>/dev/null
	{ echo "basicConstraints=CA:FALSE"; [ -n "$4" ] && echo "subjectAltName=$4"; echo "extendedKeyUsage=serverAuth,clientAuth"; } > "$1.ext"
	openssl ca -batch -config ca.cnf -cert "$2.pem" -keyfile "$2.key" -in "$1.csr" -out "$1.pem" \
		-startdate "$5" -enddate "$6" -extfile "$1.ext" -notext 2>/dev/null
	rm -f "$1.csr" "$1.ext"
}
mkca ca "spoolbox test CA"
mkca other "untrusted test CA"
now=$(date -u +%Y%m%d%H%M%SZ)
later=20991231000000Z
leaf server    ca mail.test "DNS:mail.test,DNS:localhost,IP:127.0.0.1" "$now" $later
leaf rsa       ca rsa.test  "DNS:rsa.test" "$now" $later rsa
leaf expired   ca mail.test "DNS:mail.test" 20200101000000Z 20200201000000Z
leaf future    ca mail.test "DNS:mail.test" 20980101000000Z $later
leaf untrusted other mail.test "DNS:mail.test" "$now" $later
leaf wild      ca wild.test "DNS:*.wild.test" "$now" $later
leaf cnonly    ca cnonly.test "" "$now" $later
leaf cnsan     ca good.test "DNS:other.test" "$now" $later
leaf client    ca client.test "DNS:client.test" "$now" $later
leaf sni       ca sni.test "DNS:sni.test" "$now" $later
# a private relay's self-signed certificates: openssl's default (CA:TRUE) and a non-CA one
ec selfca.key
openssl req -x509 -new -key selfca.key -subj /CN=relay.test -addext subjectAltName=DNS:relay.test \
	-days 30 -out selfca.pem 2>/dev/null
ec selfee.key
openssl req -x509 -new -key selfee.key -subj /CN=relay.test -addext subjectAltName=DNS:relay.test \
	-addext basicConstraints=critical,CA:FALSE -days 30 -out selfee.pem 2>/dev/null
cat server.pem ca.pem > server-chain.pem
chmod 600 *.key
