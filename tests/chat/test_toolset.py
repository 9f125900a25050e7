"""The chat's tool names: unique across the ticked servers, within the APIs' 64 characters, in
bounded work whatever names a server lists (one listing the same long name many times too)."""

from __future__ import annotations

from playground.chat.toolset import NAME_MAX, unique_tools


def test_a_long_name_listed_many_times_gets_a_unique_name_each():
    tool = {"name": "a" * 70, "inputSchema": {"type": "object"}}
    names = [t.name for t in unique_tools([("s", 1, [tool] * 50)])]
    assert len(set(names)) == 50 and all(len(n) <= NAME_MAX for n in names)


def test_a_name_two_servers_share_is_prefixed_and_a_clash_with_a_prefix_is_numbered():
    servers = [
        ("alpha", 1, [{"name": "echo"}, {"name": "beta_echo"}]),
        ("beta", 2, [{"name": "echo"}]),
    ]
    names = [t.name for t in unique_tools(servers)]
    assert names == ["alpha_echo", "beta_echo", "beta_echo_2"]
