#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write the hand-made seed corpora of the fuzz targets into tests/fuzz/corpus/<target>/.

Run it from anywhere; it rewrites the files it names and leaves others (inputs
added by hand, such as crashes found by tests/fuzz/run.sh) in place."""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
TOP = os.path.dirname(os.path.dirname(HERE))


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


def query(text, qtype=1, qclass=1, edns=None, do=False, nsid=False, flags=0x0100):
    """A query as a resolver sends it; edns is the payload size, None for no OPT."""
    if edns is None:
        return header(flags=flags) + question(text, qtype, qclass)
    options = option(3) if nsid else b""
    return header(ar=1, flags=flags) + question(text, qtype, qclass) + opt(udp=edns, do=do, options=options)


# Queries for fuzz_answer against example.com (tests/unit/zones/example.zone),
# its child sub.example.com and tcp.test: one per answering rule.
A, NS, CNAME, SOA, MX, TXT, AAAA, SRV, DS, DNAME, RRSIG, DNSKEY, IXFR, AXFR, ANY = (
    1, 2, 5, 6, 15, 16, 28, 33, 43, 39, 46, 48, 251, 252, 255)
ANSWER_SEEDS = {
    "exact_a": query("www.example.com"),
    "exact_aaaa_edns": query("www.example.com", AAAA, edns=1232),
    "apex_soa": query("example.com", SOA),
    "apex_ns_do": query("example.com", NS, edns=4096, do=True),
    "apex_any": query("example.com", ANY),
    "apex_mx_additional": query("example.com", MX),
    "apex_dnskey": query("example.com", DNSKEY),
    "axfr_udp": query("example.com", AXFR),
    "ixfr": query("example.com", IXFR),
    "nodata": query("www.example.com", MX),
    "nxdomain": query("nothere.example.com"),
    "ent": query("b.c.example.com"),
    "cname_chain": query("alias.example.com"),
    "cname_out": query("out.example.com"),
    "cname_dangling": query("dangling.example.com"),
    "cname_loop": query("loop1.example.com"),
    "cname_limit": query("ch1.example.com"),
    "cname_into_cut": query("tocut.example.com"),
    "cname_qtype": query("ftp.example.com", CNAME),
    "wildcard_a": query("foo.wild.example.com"),
    "wildcard_txt": query("a.b.wild.example.com", TXT),
    "wildcard_nodata": query("foo.wild.example.com", MX),
    "wildcard_blocked": query("x.sub.wild.example.com"),
    "wildcard_cname": query("x.cnamewild.example.com"),
    "wildcard_cname_loop": query("a.wcloop.example.com"),
    "wildcard_ns": query("x.wdeleg.example.com"),
    "wildcard_ent": query("z.c.example.com", TXT),
    "dname": query("www.old.example.com"),
    "dname_self": query("a.self.example.com"),
    "dname_too_long": query("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.long.example.com"),
    "dname_into_zone": query("www.intozone.example.com"),
    "dname_qtype": query("old.example.com", DNAME),
    "cname_to_dname": query("todname.example.com"),
    "child_zone": query("host.sub.example.com"),
    "child_apex_ds": query("sub.example.com", DS),
    "referral_ds": query("x.signed.example.com"),
    "ds_at_cut": query("signed.example.com", DS),
    "referral_big": query("www.bigdeleg.example.com", edns=512),
    "referral_glue_udp": query("www.bigdeleg.example.com"),
    "big_txt_udp": query("big.example.com", TXT),
    "big_txt_edns": query("big.example.com", TXT, edns=4096, nsid=True),
    "manymx": query("manymx.example.com", MX, edns=1232, do=True),
    "mx_to_cut": query("mxdeleg.example.com", MX),
    "srv_wild": query("srvwild.example.com", SRV),
    "srv": query("_sip._udp.example.com", SRV),
    "txt_escapes": query("txt.example.com", TXT),
    "private_type": query("private.example.com", 65280),
    "mx_alias": query("mxalias.example.com", MX),
    "rrsig_qtype": query("www.example.com", RRSIG),
    "tcp_big": query("big.tcp.test", TXT, edns=1232),
    "tcp_small": query("small.tcp.test", TXT),
    "refused": query("example.org"),
    "root": query(".", NS),
    "class_ch": query("version.bind", TXT, qclass=3),
    "class_ch_id": query("id.server", TXT, qclass=3, edns=512, nsid=True),
    "class_ch_hostname_long": query("hostname.bind", TXT, qclass=3),
    "class_any": query("www.example.com", A, qclass=255),
    # DNSSEC (tests/diff/dnssec): secure.test NSEC, secure3.test NSEC3 with opt-out
    "dnssec_positive": query("www.secure.test", A, edns=1232, do=True),
    "dnssec_nxdomain_nsec": query("a.b.nothere.secure.test", A, edns=1232, do=True),
    "dnssec_nxdomain_nsec3": query("a.b.nothere.secure3.test", A, edns=1232, do=True),
    "dnssec_nodata_ent": query("b.ent.secure3.test", TXT, edns=1232, do=True),
    "dnssec_wildcard": query("x.y.wild.secure3.test", A, edns=1232, do=True),
    "dnssec_wildcard_nodata": query("x.wild.secure.test", MX, edns=1232, do=True),
    "dnssec_wildcard_cname": query("x.wcname.secure3.test", A, edns=1232, do=True),
    "dnssec_referral_ds": query("www.signed.secure3.test", A, edns=1232, do=True),
    "dnssec_referral_optout": query("x.insecure.secure3.test", A, edns=1232, do=True),
    "dnssec_ds_nodata": query("insecure.secure.test", DS, edns=1232, do=True),
    "dnssec_rrsig": query("secure3.test", RRSIG, edns=1232, do=True),
    "dnssec_truncated": query("big.secure3.test", TXT, edns=512, do=True),
    "case_mixed": query("WwW.eXaMpLe.CoM", A, edns=1232, nsid=True),
    "edns_v1": header(ar=1) + question("www.example.com") + opt(version=1),
    "notify": query("example.com", SOA, flags=0x2400),
    "compressed_qname": header() + b"\x03www\xc0\x10" + b"\x07example\x03com\x00"
    + struct.pack("!HH", 1, 1),
    "formerr_two_q": header(qd=2) + question() + question(),
}

# fuzz_name: a first octet giving the offset of a name in the message that
# follows, or text (the target reads every input both ways).
HEADER_Q = header() + question("www.example.com")
NAME_SEEDS = {
    "wire_plain": b"\x0c" + HEADER_Q,
    "wire_root": b"\x00\x00",
    "wire_pointer": b"\x11" + header() + b"\x07example\x03com\x00\x03www\xc0\x0c",
    "wire_pointer_chain": b"\x1d" + header() + b"\x03com\x00\x07example\xc0\x0c\x03www\xc0\x11"
    + b"\x01a\xc0\x17",
    "wire_loop": b"\x0c" + header() + b"\xc0\x0c",
    "wire_forward": b"\x00\xc0\x02\x00",
    "wire_label_01": b"\x00\x41ab\x00",
    "wire_max_len": b"\x00" + (b"\x3f" + b"a" * 63) * 3 + b"\x3d" + b"b" * 61 + b"\x00",
    "wire_too_long": b"\x00" + (b"\x3f" + b"a" * 63) * 4 + b"\x00",
    "wire_max_labels": b"\x00" + b"\x01x" * 127 + b"\x00",
    "wire_upper_binary": b"\x00\x05A\x00Z.\xff\x03COM\x00",
    "wire_truncated": b"\x00\x07exam",
    "text_plain": b"www.example.com.",
    "text_relative": b"www",
    "text_origin": b"@",
    "text_root": b".",
    "text_escapes": b"a\\.b\\\\c\\000\\255\\@\\$.Ex\\097mple.",
    "text_bad_escape": b"a\\25",
    "text_bad_decimal": b"a\\256.",
    "text_empty_label": b"a..b",
    "text_long_label": b"a" * 64 + b".",
    "text_max": b"." .join([b"a" * 63] * 3) + b"." + b"b" * 61 + b".",
    "text_wildcard": b"*.wild.example.com",
    "text_space": b"a b\t.c",
}

# fuzz_zone: master files for fuzz.test.
ZONE_SEEDS = {
    "minimal": b"""$TTL 300
@ IN SOA ns1 hostmaster 1 7200 3600 1209600 300
  IN NS ns1
ns1 IN A 192.0.2.53
""",
    "every_type": b"""$ORIGIN fuzz.test.
$TTL 1h
@ 3600 IN SOA ns1.fuzz.test. hostmaster.fuzz.test. ( 2026120301 ; serial
      7200 3600 1209600 300 )
 IN NS ns1
 IN MX 10 mail
ns1 IN A 192.0.2.53
 IN AAAA 2001:db8::53
mail IN A 192.0.2.25
www IN CNAME ns1
txt IN TXT "a \\"quoted\\" string" "semi\\;colon" \\065\\066
_sip._udp IN SRV 10 60 5060 ns1
* IN A 192.0.2.99
*.wild IN TXT "wild"
old IN DNAME example.net.
sub IN NS ns.sub
ns.sub IN A 192.0.2.1
signed IN NS ns.example.net.
signed IN DS 12345 8 2 49FD46E6C4B45C55D4AC69CBD3CD34AC1AFE51DE5E2DC18A2E1A0D44F3BBD1D4
private IN TYPE65280 \\# 4 0A000001
@ IN RRSIG SOA 8 2 300 20270101000000 20261201000000 12345 fuzz.test. AQID
a.b.c IN A 192.0.2.3
esc\\.aped IN A 192.0.2.4
""",
    "include": b"""$TTL 300
@ IN SOA ns1 hm 1 2 3 4 5
 IN NS ns1
ns1 IN A 192.0.2.1
$INCLUDE inc.zone
$INCLUDE inc.zone other.fuzz.test.
""",
    "cname_and_data": b"""@ 300 IN SOA ns1 hm 1 2 3 4 5
@ 300 IN NS ns1
ns1 300 IN A 192.0.2.1
x 300 IN CNAME ns1
x 300 IN A 192.0.2.2
""",
    "no_soa": b"$TTL 60\n@ IN NS ns1\nns1 IN A 192.0.2.1\n",
    "two_soa": b"$TTL 60\n@ IN SOA a b 1 2 3 4 5\n@ IN SOA a b 2 2 3 4 5\n@ IN NS a\n",
    "outside": b"$TTL 60\n@ IN SOA a b 1 2 3 4 5\n@ IN NS a\nwww.example.org. IN A 192.0.2.1\n",
    "syntax": b"$TTL 60\n@ IN SOA a b 1 2 3 4\n( unbalanced\nwww IN A 999.1.1.1\n$ORIGIN\n$BOGUS x\n",
    "mixed_ttl": b"@ 60 IN SOA a b 1 2 3 4 5\n@ 60 IN NS a\na 60 IN A 192.0.2.1\na 90 IN A 192.0.2.2\n",
    "empty": b"",
}


def generic(rrtype, rdata):
    """A record's type and RDATA in RFC 3597's generic form."""
    return b"TYPE%d \\# %d %s" % (rrtype, len(rdata), rdata.hex().encode() or b"")


# names and types a secondary saves (zone_diff_write_back): owners with octets the
# scanner reads only escaped, types it knows only in the generic form
ZONE_SEEDS["write_back"] = b"\n".join([
    b"$ORIGIN fuzz.test.\n$TTL 300\n@ IN SOA ns1 hm 1 2 3 4 5\n@ IN NS ns1\nns1 IN A 192.0.2.1",
    b"a\\,b\\+c\\=d\\!\\#\\%\\&\\'\\:\\<\\>\\?\\[\\]\\^\\`\\{\\|\\}\\~ IN A 192.0.2.2",
    b"\\000\\255\\032\\@\\$.odd IN TXT \"\\000 \\\"q\\\" ;() \\255\"",
    b"null IN " + generic(10, b""),
    b"wks IN " + generic(11, bytes([192, 0, 2, 1, 6, 0, 0, 0, 0x40])),
    b"x25 IN " + generic(19, b"\x0c311061700956"),
    b"isdn IN " + generic(20, b"\x0f150862028003217\x03004"),
    b"nsap IN " + generic(22, bytes.fromhex("47000580005a0000000001e133ffffff00016100")),
    b"px IN " + generic(26, b"\x00\x0a\x03net\x02it\x00\x04PRMD\x03net\x02it\x00"),
    b"gpos IN " + generic(27, b"\x05-32.6\x0519.58\x0310."),
    b"hip IN " + generic(55, bytes([4, 2, 0, 3]) + b"HIT!" + b"KEY" + b"\x03rvs\x00"),
    b"svcb IN " + generic(64, b"\x00\x01\x00\x00\x01\x00\x02\x01,"),
    b"apl IN " + generic(42, bytes([0, 1, 32, 4, 10, 0, 0, 0])),
    b"nsec IN NSEC ns1.fuzz.test. A RRSIG NSEC TYPE65280",
    b"",
])
EXAMPLE_ZONE = os.path.join(TOP, "tests", "unit", "zones", "example.zone")

# fuzz_zone_answer: a master file for fuzz.test., a NUL octet, then queries,
# each a type (2 octets), a length octet and a name relative to fuzz.test.
GEN_HEAD = b"$ORIGIN fuzz.test.\n$TTL 300\n@ SOA ns1 hm 1 2 3 4 5\n@ NS ns1\nns1 A 192.0.2.1\n"


def asks(*pairs):
    """Queries for fuzz_zone_answer: (name, type) pairs."""
    return b"\0" + b"".join(struct.pack("!HB", t, len(n)) + n.encode() for n, t in pairs)


NSEC3, NSEC = 50, 47
ZONE_ANSWER_SEEDS = {
    # the faults zone data brought: refused at load now, answered safely if not
    "ns_no_name": GEN_HEAD + b"sub IN NS \\# 0\nx.sub IN TXT \"the record after it\"\n"
    + asks(("x.sub", A), ("sub", NS)),
    "dname_no_target": GEN_HEAD + b"d IN DNAME \\# 0\ne IN TXT \"neighbour\"\n"
    + asks(("www.d", A), ("d", DNAME)),
    "cname_no_target": GEN_HEAD + b"c IN CNAME \\# 0\n" + asks(("c", A)),
    "rrsig_empty": GEN_HEAD
    + b"ns1 IN RRSIG A 8 3 300 20270101000000 20261201000000 12345 fuzz.test. AQID\n"
    + b"ns1 IN RRSIG \\# 0\n" + asks(("ns1", RRSIG), ("ns1", A)),
    "a_generic_empty": GEN_HEAD + b"a IN A \\# 0\nb IN MX \\# 2 000a\n" + asks(("a", A)),
    "meta_type": GEN_HEAD + b"x IN TYPE255 \\# 0\n" + asks(("x", ANY)),
    "types_many": GEN_HEAD + b"".join(b"@ IN TYPE%d \\# 0\n" % t for t in range(65000, 65200))
    + asks(("", ANY)),
    "set_too_big": GEN_HEAD + b"".join(b"x IN A 10.0.%d.%d\n" % (i >> 8, i & 255)
                                       for i in range(4600)) + asks(("x", A)),
    "set_big": GEN_HEAD + b"".join(b"x IN A 10.0.%d.%d\n" % (i >> 8, i & 255)
                                   for i in range(3000)) + asks(("x", A), ("x", ANY)),
    # zones that load, with queries for every answering rule
    "dname_chain": GEN_HEAD + b"d IN DNAME e.fuzz.test.\ne IN DNAME f\n*.f IN CNAME ns1\n"
    + b"long IN DNAME " + b"a" * 60 + b"." + b"b" * 60 + b"." + b"c" * 60 + b".\n"
    + asks(("x.d", A), ("y.x.e", A), ("x.d", DNAME), ("a.b.long", A)),
    "cut_glue": GEN_HEAD + b"sub IN NS ns.sub\nsub IN NS ns.other.\nns.sub IN A 192.0.2.2\n"
    + b"sub IN DS 1 8 2 00\nmx IN MX 1 ns.sub\nsrv IN SRV 0 0 1 ns1\n"
    + asks(("a.sub", A), ("sub", DS), ("mx", MX), ("srv", SRV)),
}

# fuzz_conf: shoald configuration files.
CONF_SEEDS = {
    "minimal": b"listen: 127.0.0.1@5353\n",
    "every_option": b"""listen:
  - 127.0.0.1@5353
  - ::1@5353
  - 0.0.0.0
threads: 2
socket-mode: shared
user: nobody
group: nogroup
nsid: fuzz
nsid-thread: no
control: /run/shoald.ctl
log-level: debug
syslog: yes
edns-size: 1232
tcp-idle-timeout: 10000
tcp-max-connections: 256
tcp-message-timeout: 5000
tcp-max-output: 262144
reload-timeout: 300
max-zone-file-size: 1024
max-zone-includes: 256
zones:
  - name: example.com
    file: example.com.zone
  - { name: example.org., file: /nonexistent }
""",
    "bad_values": b"threads: 0\nedns-size: 99999\nsocket-mode: weird\nsyslog: maybe\nlisten: 1.2.3.4@70000\n",
    "twice": b"threads: 1\nthreads: 2\n",
    "unknown_key": b"bogus: 1\n",
    "not_a_mapping": b"- a\n- b\n",
    "zones_wrong": b"zones:\n  - name: x\n  - file: y\n  - [a, b]\n  - plain\n",
    "aliases": b"nsid: &n server\ncontrol: *n\nlisten: &l [127.0.0.1@53, ::1@53]\nzones: []\n",
    "yaml_error": b"listen: [\n  - : :\n\t",
    "empty": b"",
}


# fuzz_cookie: queries whose OPT carries COOKIE options of every length
# class (RFC 7873 4), several of them, beside other options; and bare
# option data (the target reads an input without a COOKIE as one).
CLIENT_COOKIE = bytes(range(1, 9))


def cookie_query(*cookies, extra=b""):
    return header(ar=1) + question() + opt(options=b"".join(option(10, c) for c in cookies) + extra)


COOKIE_SEEDS = {
    "client_only": cookie_query(CLIENT_COOKIE),
    "client_server": cookie_query(CLIENT_COOKIE + b"\x01\x00\x00\x00\x6b\x12\xff\x06" + b"\x5a" * 8),
    "server_max": cookie_query(CLIENT_COOKIE + b"\x01" * 32),
    "server_min": cookie_query(CLIENT_COOKIE + b"\x01" * 8),
    "too_short": cookie_query(b"\x01" * 7),
    "between": cookie_query(b"\x01" * 12),
    "too_long": cookie_query(b"\x01" * 41),
    "empty_cookie": cookie_query(b""),
    "two_cookies": cookie_query(CLIENT_COOKIE, b"\x02" * 7),
    "bad_then_good": cookie_query(b"\x02" * 7, CLIENT_COOKIE),
    "with_nsid": cookie_query(CLIENT_COOKIE, extra=option(3) + option(12, b"\x00" * 16)),
    "truncated_option": header(ar=1) + question() + opt(options=struct.pack("!HH", 10, 24) + CLIENT_COOKIE),
    "raw_client": CLIENT_COOKIE,
    "raw_full": CLIENT_COOKIE + b"\x01\x00\x00\x00\x6b\x12\xff\x06" + b"\x5a" * 8,
    "raw_v6": CLIENT_COOKIE + bytes(range(16)) + b"\x01",
}


def write(target, seeds):
    out = os.path.join(CORPUS, target)
    os.makedirs(out, exist_ok=True)
    for label, data in seeds.items():
        with open(os.path.join(out, label), "wb") as f:
            f.write(data)
    print(f"wrote {len(seeds)} seeds to {out}", file=sys.stderr)


def jfile_record(serial_from, serial_to, adds=(), dels=()):
    """One record of a zone's IXFR journal file (zone/jfile.h): each side's SOA first."""
    import hashlib

    def soa(serial):
        return (name("j.test"), struct.pack("!HHIH", 6, 1, 60, 22) + b"\x00\x00" +
                struct.pack("!5I", serial, 3600, 600, 86400, 60))

    def rr(owner, rrtype, rdata):
        return (name(owner), struct.pack("!HHIH", rrtype, 1, 300, len(rdata)) + rdata)

    side_del = [soa(serial_from)] + [rr(*r) for r in dels]
    side_add = [soa(serial_to)] + [rr(*r) for r in adds]
    body = struct.pack("!II", len(side_del), len(side_add))
    body += b"".join(o + r for o, r in side_del + side_add)
    head = b"SJR1" + struct.pack("!III", len(body), serial_from, serial_to)
    return head + hashlib.blake2b(head + body, digest_size=16).digest() + body


def jfile_seeds():
    www_a = ("www.j.test", 1, bytes([192, 0, 2, 1]))
    www_b = ("www.j.test", 1, bytes([192, 0, 2, 2]))
    mx = ("j.test", 15, b"\x00\x0a" + name("mail.j.test"))
    txt = ("t.j.test", 16, b"\x05hello")
    one = jfile_record(1, 2, adds=(www_a,))
    two = one + jfile_record(2, 3, adds=(www_b, mx), dels=(www_a,))
    return {
        "empty": b"",
        "one": one,
        "two": two,
        "three": two + jfile_record(3, 4, adds=(txt,), dels=(mx,)),
        "torn": two[:-7],
        "gap": one + jfile_record(5, 6, adds=(txt,)),
        "bad_rdata": jfile_record(1, 2, adds=(("x.j.test", 15, b"\x00"),)),
    }


# fuzz_update: UPDATE messages (RFC 2136 2) with every prerequisite and
# update kind, compressed names, and some broken ones.
def update_msg(prereqs=(), updates=(), zone="example.com", zcount=1):
    def rr(owner, rrtype, rclass, ttl, rdata=b""):
        return name(owner) + struct.pack("!HHIH", rrtype, rclass, ttl, len(rdata)) + rdata
    return (header(qd=zcount, an=len(prereqs), ns=len(updates), flags=0x2800) +
            question(zone, 6, 1) + b"".join(rr(*r) for r in prereqs) +
            b"".join(rr(*r) for r in updates))


def update_seeds():
    a = bytes([192, 0, 2, 1])
    www = "www.example.com"
    every = update_msg(
        prereqs=((www, 1, 255, 0), (www, 1, 1, 0, a), ("n.example.com", 1, 254, 0),
                 (www, 255, 255, 0), ("n.example.com", 255, 254, 0)),
        updates=(("n.example.com", 1, 1, 300, a), (www, 16, 255, 0), ("o.example.com", 255, 255, 0),
                 (www, 1, 254, 0, a)))
    mx = (header(qd=1, ns=1, flags=0x2800) + question("example.com", 6, 1) +
          b"\x03www\xc0\x0c" + struct.pack("!HHIH", 15, 1, 60, 9) + b"\x00\x0a\x04mail\xc0\x0c")
    return {
        "empty": update_msg(),
        "every_kind": every,
        "compressed": mx,
        "txt": update_msg(updates=(("_acme-challenge.example.com", 16, 1, 60, b"\x05token"),)),
        "notzone": update_msg(updates=(("www.example.org", 1, 1, 60, a),)),
        "bad_ttl": update_msg(prereqs=((www, 1, 255, 5),)),
        "two_zones": update_msg(zcount=2),
        "truncated": every[:-3],
    }


def main():
    write("update", update_seeds())
    write("jfile", jfile_seeds())
    write("query", SEEDS)
    write("answer", ANSWER_SEEDS)
    write("name", NAME_SEEDS)
    write("cookie", COOKIE_SEEDS)
    zones = dict(ZONE_SEEDS)
    with open(EXAMPLE_ZONE, "rb") as f:
        text = f.read().replace(b"example.com.", b"fuzz.test.")
    zones["example"] = b"\n".join(line for line in text.split(b"\n")
                                 if not line.upper().startswith(b"$INCLUDE"))
    write("zone", zones)
    answer_zones = dict(ZONE_ANSWER_SEEDS)
    answer_zones["example"] = zones["example"] + asks(
        ("www", A), ("alias", A), ("foo.wild", A), ("www.old", A), ("host.sub", A),
        ("big", TXT), ("", ANY), ("nothere", A), ("b.c", A), ("x.cnamewild", A))
    answer_zones["every_type"] = ZONE_SEEDS["every_type"] + asks(
        ("", MX), ("www", A), ("x.old", A), ("a.sub", A), ("signed", DS), ("private", 65280),
        ("txt", TXT), ("_sip._udp", SRV), ("x.y", A), ("", RRSIG))
    for label, src, queries in (
            ("signed_nsec", "secure.test", (("www", A), ("a.b.nothere", A), ("x.wild", MX))),
            ("signed_nsec3", "secure3.test", (("b.ent", TXT), ("x.y.wild", A),
                                             ("x.insecure", A), ("a.b.nothere", NSEC3)))):
        with open(os.path.join(TOP, "tests", "diff", "dnssec", src + ".zone"), "rb") as f:
            text = f.read().replace(src.encode() + b".", b"fuzz.test.")
        answer_zones[label] = text + asks(*queries, ("", NSEC))
    write("zone_answer", answer_zones)
    with open(os.path.join(TOP, "examples", "shoald.conf"), "rb") as f:
        conf = dict(CONF_SEEDS, example=f.read())
    write("conf", conf)


if __name__ == "__main__":
    main()
