#!/usr/bin/env bash
# Regenerates the webhook tests' certificates (valid for 100 years): a test CA, two server
# certificates for localhost / 127.0.0.1 signed by it (a and b: the rotation test swaps them),
# a client certificate it signed, and a self-signed client certificate it did not sign.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
ec() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"; }
ec ca.key
openssl req -x509 -new -key ca.key -out ca.pem -days 36500 -subj "/CN=svclab test CA" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
sign() { # name subject extensions
  ec "$1.key"
  openssl req -new -key "$1.key" -subj "$2" -out "$1.csr"
  printf '%s\n' "$3" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -set_serial "0x$(openssl rand -hex 8)" \
    -days 36500 -extfile "$1.ext" -out "$1.pem"
  rm "$1.csr" "$1.ext"
}
server='basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=DNS:localhost,IP:127.0.0.1'
sign server-a "/CN=svclab-webhook-a" "$server"
sign server-b "/CN=svclab-webhook-b" "$server"
sign client "/CN=kube-apiserver" 'basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth'
ec stranger.key
openssl req -x509 -new -key stranger.key -out stranger.pem -days 36500 -subj "/CN=stranger" \
  -addext "basicConstraints=CA:FALSE" -addext "extendedKeyUsage=clientAuth"
rm ca.key
