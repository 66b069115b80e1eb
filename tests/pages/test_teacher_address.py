"""Where a teacher-key try comes from (labs.ui.teacher.try_address): behind a proxy on this host, the address
the proxy appended last to X-Forwarded-For; from anywhere else, the connection's own address."""

import pytest

from labs.ui.teacher import try_address


@pytest.mark.parametrize("address,forwarded,expected", [
    (None, "198.51.100.7, 203.0.113.7", "203.0.113.7"),   # this host's proxy: the address it appended
    ("127.0.0.1", "203.0.113.7", "203.0.113.7"),
    ("::1", None, "::1"),                                 # this host, no proxy
    (None, "", "127.0.0.1"),
    ("198.51.100.9", "203.0.113.7", "198.51.100.9"),      # a remote client cannot forge its address
    ("not an address", "203.0.113.7", "not an address"),
    (None, "203.0.113.7\x1b[2J" + "x" * 100, "203.0.113.7[2J" + "x" * 50),  # printable, at most 64 characters
    (object(), "203.0.113.7", "unknown"),
])
def test_a_try_comes_from_the_proxys_last_address_only_on_this_host(address, forwarded, expected):
    assert try_address(address, forwarded) == expected
