# requires: openssl
# OpenSSL: digests, symmetric encryption with a fixed key, base64.
seq 1 100000 >data
openssl dgst -sha256 -r data
openssl dgst -sha512 -r data | cut -c1-32
openssl enc -aes-256-cbc -K 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f \
    -iv 0f0e0d0c0b0a09080706050403020100 -in data | openssl dgst -sha256 -r
openssl base64 -in data | openssl base64 -d | md5sum
