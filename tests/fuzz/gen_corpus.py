#!/usr/bin/env python3
"""Write the hand-made seed corpus for fuzz_query into tests/fuzz/corpus/query/."""
import os
import struct
import sys

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "query")


def header(qd=1, an=0, ns=0, ar=0, flags=0x0100, qid=0x1234):
    return struct.pack("!6H", qid, flags, qd, an, ns, ar)


def name(text):
    out = b""
    for label in text.strip(".").split("."):
        if label:
            out += bytes([len(label)]) + label.encode()
    return out + b"\x00"


def question(text="www.example.com", qtype=1, qclass=1):
    return name(text) + struct.pack("!HH", qtype, qclass)


def opt(udp=1232, ext=0, version=0, do=False, options=b"", owner=b"\x00"):
    ttl = (ext << 24) | (version << 16) | (0x8000 if do else 0)
    return owner + struct.pack("!HHIH", 41, udp, ttl, len(options)) + options


def option(code, data=b""):
    return struct.pack("!HH", code, len(data)) + data


SEEDS = {
    "plain_a": header() + question(),
    "plain_any_0x20": header() + question("WwW.ExAmPlE.cOm", 255),
    "root_soa": header() + question(".", 6),
    "edns_do": header(ar=1) + question() + opt(do=True),
    "edns_nsid": header(ar=1) + question() + opt(options=option(3)),
    "edns_cookie": header(ar=1) + question() + opt(options=option(10, b"\x01" * 8)),
    "edns_nsid_cookie": header(ar=1) + question()
    + opt(options=option(3) + option(10, bytes(range(24)))),
    "edns_version1": header(ar=1) + question() + opt(version=1),
    "edns_small_udp": header(ar=1) + question() + opt(udp=100),
    "edns_two_opts": header(ar=2) + question() + opt() + opt(),
    "edns_opt_in_answer": header(an=1) + question() + opt(),
    "edns_opt_not_root": header(ar=1) + question() + opt(owner=name("x")),
    "edns_bad_tlv": header(ar=1) + question() + opt(options=b"\x00\x03\x00\x05ab"),
    "qdcount0": header(qd=0),
    "qdcount2": header(qd=2) + question() + question(),
    "truncated_header": header()[:7],
    "truncated_question": (header() + question())[:20],
    "qr_set": header(flags=0x8100) + question(),
    "opcode_notify": header(flags=0x2000) + question(),
    "pointer_loop": header() + b"\xc0\x0c" + struct.pack("!HH", 1, 1),
    "forward_pointer": header() + b"\xc0\x20" + struct.pack("!HH", 1, 1) + b"\x00" * 20,
    "label_type_01": header() + b"\x41abc\x00" + struct.pack("!HH", 1, 1),
    "name_too_long": header() + (b"\x3f" + b"a" * 63) * 4 + b"\x00" + struct.pack("!HH", 1, 1),
    "trailing_bytes": header() + question() + b"\xde\xad\xbe\xef",
    "skip_answer_rr": header(an=1, ar=1) + question()
    + b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 60, 4) + b"\x7f\x00\x00\x01" + opt(),
    "bad_rdlength": header(an=1) + question()
    + b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 60, 400) + b"\x7f\x00",
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for label, data in SEEDS.items():
        with open(os.path.join(OUT, label), "wb") as f:
            f.write(data)
    print(f"wrote {len(SEEDS)} seeds to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
