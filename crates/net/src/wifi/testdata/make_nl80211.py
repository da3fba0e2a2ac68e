#!/usr/bin/env python3
"""Writes the nl80211 reply datagrams the parser tests read (*.hex, one datagram per
file, little-endian as on x86-64 and arm64).

They are built, not captured: this machine has no radio. Each message follows the
kernel's layout (include/uapi/linux/netlink.h, genetlink.h, nl80211.h) and what
net/wireless/nl80211.c puts in a dump: nlmsghdr (len, type = family id, flags
NLM_F_MULTI, seq, port), genlmsghdr (cmd, version 1), attributes padded to 4 bytes,
nested ones flagged NLA_F_NESTED as nla_nest_start() does since Linux 5.2, and an
NLMSG_DONE to end each dump. The values are those of a 5 GHz 802.11ac client at
VHT-MCS 9, 2 streams, 80 MHz, short GI (866.7 Mbit/s, as `iw` prints
"866.7 MBit/s VHT-MCS 9 80MHz short GI VHT-NSS 2"), a 2.4 GHz 802.11n client at
MCS 7 short GI (72.2 Mbit/s) receiving a legacy 54 Mbit/s rate, and an 802.11ax
station at HE-MCS 11, 2 streams, 80 MHz, 0.8 us GI (1201.0 Mbit/s).

Run it from this directory: python3 make_nl80211.py
"""
import struct

FAMILY = 0x1C  # an nl80211 family id as the controller assigns it
SEQ = 7
NLM_F_MULTI = 2
NLA_F_NESTED = 0x8000


def nla(kind, payload, nested=False):
    n = struct.pack("=HH", 4 + len(payload), kind | (NLA_F_NESTED if nested else 0)) + payload
    return n + b"\0" * (-len(n) % 4)


def u8(k, v):
    return nla(k, struct.pack("=B", v & 0xFF))


def u16(k, v):
    return nla(k, struct.pack("=H", v))


def u32(k, v):
    return nla(k, struct.pack("=I", v))


def flag(k):
    return nla(k, b"")


def nest(k, *parts):
    return nla(k, b"".join(parts), nested=True)


def msg(kind, payload, flags=NLM_F_MULTI):
    return struct.pack("=IHHII", 16 + len(payload), kind, flags, SEQ, 4242) + payload


def genl(cmd, *attrs):
    return msg(FAMILY, struct.pack("=BBH", cmd, 1, 0) + b"".join(attrs))


def done():
    return msg(3, struct.pack("=i", 0))


def write(name, data):
    with open(name + ".hex", "w") as f:
        f.write(data.hex() + "\n")


AP = bytes.fromhex("02aabbccdd01")
OWN = bytes.fromhex("02112233440a")

# Controller: CTRL_CMD_NEWFAMILY (1) with the name and id, then the ACK (error 0).
write("ctrl_family", msg(0x10, struct.pack("=BBH", 1, 2, 0)
      + u16(1, FAMILY) + nla(2, b"nl80211\0") + u32(3, 1), flags=0)
      + msg(2, struct.pack("=i", 0) + struct.pack("=IHHII", 32, 0x10, 5, SEQ, 0), flags=0))
# Controller on a kernel without cfg80211: ENOENT.
write("ctrl_enoent", msg(2, struct.pack("=i", -2) + struct.pack("=IHHII", 32, 0x10, 5, SEQ, 0), flags=0))

# NL80211_CMD_NEW_INTERFACE (7): ifindex 3, "wlan0", station, MAC, 5180 MHz, 80 MHz.
write("iface_5ghz", genl(7, u32(3, 3), nla(4, b"wlan0\0"), u32(1, 0), u32(5, 2), nla(6, OWN),
                         u32(38, 5180), u32(159, 3), u32(160, 5210), u32(46, 12)) + done())
write("iface_24ghz", genl(7, u32(3, 4), nla(4, b"wlp2s0\0"), u32(5, 2), nla(6, OWN),
                          u32(38, 2437), u32(159, 1), u32(160, 2437)) + done())
# An access point interface without a channel (not started).
write("iface_ap_idle", genl(7, u32(3, 5), nla(4, b"wlan1\0"), u32(5, 3), nla(6, OWN)) + done())

# NL80211_CMD_NEW_STATION (19): STA_INFO with signal, tx and rx rate info.
def station(info):
    return genl(19, u32(3, 3), nla(6, AP), u32(46, 12), nest(21, *info)) + done()

write("station_vht", station([
    u32(1, 120), u8(7, -52), u8(13, -53),
    nest(8, u16(1, 8667), u32(5, 8667), u8(6, 9), u8(7, 2), flag(8), flag(4)),
    nest(14, u16(1, 7020), u32(5, 7020), u8(6, 8), u8(7, 2), flag(8)),
]))
write("station_ht", station([
    u8(7, -61),
    nest(8, u16(1, 722), u32(5, 722), u8(2, 7), flag(4)),
    nest(14, u16(1, 540), u32(5, 540)),
]))
write("station_he", station([
    u8(7, -44),
    nest(8, u32(5, 12010), u8(13, 11), u8(14, 2), u8(15, 0), flag(8)),
    nest(14, u32(5, 6005), u8(13, 11), u8(14, 1), u8(15, 1), flag(8)),
]))
write("station_none", done())

# NL80211_CMD_NEW_SURVEY_RESULTS (51): two channels, the first in use.
write("survey", genl(51, u32(3, 3), nest(84, u32(1, 5180), u8(2, -92), flag(3), nla(4, struct.pack("=Q", 1000))))
      + genl(51, u32(3, 3), nest(84, u32(1, 5200), u8(2, -95)))
      + done())

# NL80211_CMD_NEW_SCAN_RESULTS (34): BSS with IEs (SSID, RSN), capability, status.
def rsn(*akms):
    body = struct.pack("<H", 1) + bytes.fromhex("000fac04") + struct.pack("<H", 1) + bytes.fromhex("000fac04")
    body += struct.pack("<H", len(akms)) + b"".join(bytes.fromhex("000fac") + bytes([a]) for a in akms)
    body += struct.pack("<H", 0x00C0)
    return bytes([48, len(body)]) + body


def bss(bssid, freq, ies, status=None, cap=0x1011):
    parts = [nla(1, bssid), u32(2, freq), u16(5, cap), nla(6, ies), u32(7, (-5200) & 0xFFFFFFFF)]
    if status is not None:
        parts.append(u32(9, status))
    return genl(34, u32(3, 3), u32(46, 12), nest(47, *parts))

SSID = bytes([0, 3]) + b"lab"
write("scan_wpa3", bss(bytes.fromhex("02aabbccdd99"), 5240, SSID + rsn(2))
      + bss(AP, 5180, SSID + rsn(8), status=1) + done())
write("scan_wpa2", bss(AP, 2437, SSID + rsn(2), status=1) + done())
write("scan_transition", bss(AP, 5180, SSID + rsn(2, 8), status=1) + done())
write("scan_open", bss(AP, 2437, SSID, status=1, cap=0x0401) + done())
